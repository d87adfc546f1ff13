// gauge_device.cpp: the random gauge field generated on the device (see gauge_device.hpp).
// Flops per link: 5 Philox draws (10 rounds) and 10 Box-Muller pairs, Gram-Schmidt (~ 600 in all, counted as 600);
// minimum bytes: the links written once (double). The unit field: no flops, the links written once. Observables per
// site: 6 plaquettes of 3 SU(3) products (198 flops each) and their traces, 4 link traces; bytes: the 4 links of the
// site read (the neighbours' come from cache) and the two per-site terms written and read back by the block sums. The
// SU(3) check: ~250 flops per link (U U^dag, det), the 4 links of a site read and its flag and deviation written.
#include "src/physics/gauge_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kernels/gauge_generate.hpp"
#include "kernels/gauge_observables.hpp"
#include "kernels/launch.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/ordered_sum.hpp"

namespace emprism {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

DeviceGaugeObservables::DeviceGaugeObservables(const Geometry& g)
    : g_(g),
      plaq_(static_cast<std::size_t>(g.local_volume())),
      trace_(static_cast<std::size_t>(g.local_volume())),
      blocks_(static_cast<std::size_t>((g.local_volume() + kOrderedSumBlock - 1) / kOrderedSumBlock)) {}

GaugeObservables DeviceGaugeObservables::operator()(MetricsRegistry& metrics, const SU3<double>* ext,
                                                    Communicator* comm, const char* row) {
  const std::int64_t vol = g_.local_volume();
  GaugeObservableSites f{};
  for (int k = 0; k < 4; ++k) {
    f.l[k] = g_.local()[k];
    f.u.e[k] = g_.local()[k] + 2;
  }
  f.u.u = ext;
  f.plaq = plaq_.data();
  f.link_tr = trace_.data();
  const double n = static_cast<double>(vol);
  const int t = metrics.start_timing(backend::compute_stream());
  run_kernel(vol, f);
  double p[2] = {ordered_device_sum(plaq_, blocks_, vol), n};
  double l[2] = {ordered_device_sum(trace_, blocks_, vol), n};
  metrics.stop_timing(t, backend::compute_stream(), row, n * (6 * (3 * 198 + 2) + 4 * 2),
                      n * (4 * sizeof(SU3<double>) + 4 * sizeof(double)));
  if (comm) {
    comm->sum(p, 2);
    comm->sum(l, 2);
  }
  return {p[0] / (6.0 * p[1]), l[0] / (4.0 * l[1])};
}

GaugeObservables device_gauge_observables(MetricsRegistry& metrics, const Geometry& g, const SU3<double>* ext,
                                          Communicator* comm, const char* row) {
  return DeviceGaugeObservables(g)(metrics, ext, comm, row);
}

DeviceGauge make_unit_gauge_device(MetricsRegistry& metrics, const Geometry& g) {
  DeviceGauge dev(g);  // every link, halo included
  const double links = static_cast<double>(dev.size());
  launch(metrics, {"setup_unit_gauge", 0, links * sizeof(SU3<double>)}, static_cast<std::int64_t>(dev.size() / 4),
         UnitGaugeExt{dev.data()});
  return dev;
}

NonSu3Link first_non_su3_link(MetricsRegistry& metrics, const Geometry& g, const SU3<double>* ext, double tol,
                              const char* row) {
  const std::int64_t vol = g.local_volume();
  Buffer<int> bad(static_cast<std::size_t>(vol));
  Buffer<double> dev(static_cast<std::size_t>(vol));
  Buffer<std::int64_t> blocks(static_cast<std::size_t>((vol + kOrderedSumBlock - 1) / kOrderedSumBlock));
  LinkUnitarity f{};
  for (int k = 0; k < 4; ++k) {
    f.l[k] = g.local()[k];
    f.u.e[k] = g.local()[k] + 2;
  }
  f.u.u = ext;
  f.tol = tol;
  f.bad = bad.data();
  f.dev = dev.data();
  const double n = static_cast<double>(vol);
  const int t = metrics.start_timing(backend::compute_stream());
  run_kernel(vol, f);
  run_kernel(static_cast<std::int64_t>(blocks.size()),
             FirstFlagged{bad.data(), blocks.data(), vol, static_cast<int>(kOrderedSumBlock)});
  std::vector<std::int64_t> first(blocks.size());
  if (!first.empty()) blocks.copy_to_host(first.data());
  NonSu3Link out;
  for (std::int64_t b : first)
    if (b >= 0) {
      out.lex = b;
      break;
    }
  if (out.lex >= 0) {
    backend::copy_to_host(&out.mu, bad.data() + out.lex, sizeof(int));
    backend::copy_to_host(&out.deviation, dev.data() + out.lex, sizeof(double));
  }
  metrics.stop_timing(t, backend::compute_stream(), row, n * 4 * 250, n * (4 * sizeof(SU3<double>) + 12));
  return out;
}

void download_links_pinned(const Buffer<SU3<double>>& dev, SU3<double>* host) {
  const std::size_t total = dev.bytes(), chunk = std::min<std::size_t>(total, std::size_t{64} << 20);
  if (total == 0) return;
  void* stage = backend::host_alloc_pinned(chunk);
  const char* src = reinterpret_cast<const char*>(dev.data());
  char* dst = reinterpret_cast<char*>(host);
  for (std::size_t off = 0; off < total; off += chunk) {
    const std::size_t n = std::min(chunk, total - off);
    backend::copy_to_host(stage, src + off, n);
    const std::int64_t pieces = static_cast<std::int64_t>((n + 4095) / 4096);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < pieces; ++k) {
      const std::size_t a = static_cast<std::size_t>(k) * 4096, b = std::min(n, a + 4096);
      std::memcpy(dst + off + a, static_cast<const char*>(stage) + a, b - a);
    }
  }
  backend::host_free_pinned(stage);
}

double ordered_device_sum(const Buffer<double>& terms, Buffer<double>& blocks, std::int64_t n) {
  run_kernel(static_cast<std::int64_t>(blocks.size()),
             OrderedBlockSums{terms.data(), blocks.data(), n, static_cast<int>(kOrderedSumBlock)});
  std::vector<double> host(blocks.size());
  if (!host.empty()) blocks.copy_to_host(host.data());
  double sum = 0;
  for (double b : host) sum += b;
  return sum;
}

DeviceGauge make_random_gauge_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width,
                                     Communicator* comm, GaugeObservables* obs) {
  DeviceGauge dev(g);  // every link, halo included, is generated
  RandomGaugeExt f;
  f.u = dev.data();
  for (int k = 0; k < 4; ++k) {
    f.l[k] = g.local()[k];
    f.g[k] = g.global()[k];
    f.origin[k] = g.origin()[k];
  }
  f.seed = seed;
  f.width = width;
  const double links = static_cast<double>(dev.size());
  launch(metrics, {"setup_random_gauge", 600 * links, links * sizeof(SU3<double>)},
         static_cast<std::int64_t>(dev.size() / 4), f);
  if (obs) *obs = device_gauge_observables(metrics, g, dev.data(), comm, "setup_gauge_observables");
  return dev;
}

HostGauge download_gauge(MetricsRegistry& metrics, const DeviceGauge& dev) {
  HostGauge u(dev.geometry(), HostGauge::Uninitialised{});  // every link, halo included, is copied from the device
  HostGauge::Storage& host = u.storage();
  const auto t0 = std::chrono::steady_clock::now();
  if (backend::device_is_host()) {
    dev.buffer().copy_to_host(host.data());
  } else {
    download_links_pinned(dev.buffer(), host.data());
  }
  metrics.record("setup_gauge_download", seconds_since(t0), 0, static_cast<double>(dev.bytes()));
  return u;
}

HostGauge make_random_gauge_on_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width,
                                      Communicator* comm, GaugeObservables* obs) {
  return download_gauge(metrics, make_random_gauge_device(metrics, g, seed, width, comm, obs));
}

}  // namespace emprism
