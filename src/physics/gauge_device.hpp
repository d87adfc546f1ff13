// gauge_device.hpp: gauge fields generated on the device (kernels/gauge_generate.hpp) with their halo, kept there
// (DeviceGauge, src/lattice/fields.hpp) or copied to the host field (src/lattice/gauge.hpp) in its storage layout: no
// host generation, no halo exchange (each halo link is generated from its global site, as the neighbouring rank
// generates it). Who may call: anyone on the rank (collective over comm only with obs and a communicator).
#pragma once

#include <cstdint>

#include "comm/communicator.hpp"
#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

// The plaquette and the link trace of a field (src/lattice/gauge.hpp's plaquette() and link_trace()).
struct GaugeObservables {
  double plaquette = 0, link_trace = 0;
};

// make_random_gauge's field with its halo filled: on the CPU backend its bits, on a GPU equal to rounding (the
// device's log, sin and cos). Downloaded through a pinned staging buffer in chunks (the host vector is pageable).
// With obs: its plaquette and link trace computed on the device before the download (kernels/gauge_observables.hpp,
// the host's summation order: plaquette()'s and link_trace()'s bits on the CPU backend), summed over comm
// (collective; nullptr: this block only). Metrics rows "setup_random_gauge" (the kernel), "setup_gauge_observables"
// (the per-site terms and their block sums) and "setup_gauge_download".
// The sum of n per-site terms on the device in src/lattice/ordered_sum.hpp's order (kernels/gauge_observables.hpp's
// block sums into `blocks`, of (n + kOrderedSumBlock - 1) / kOrderedSumBlock elements, added in order on the host):
// ordered_sum's bits on the CPU backend.
double ordered_device_sum(const Buffer<double>& terms, Buffer<double>& blocks, std::int64_t n);

// make_random_gauge_on_device's field kept on the device (no download; rows "setup_random_gauge" and, with obs,
// "setup_gauge_observables").
DeviceGauge make_random_gauge_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width,
                                     Communicator* comm = nullptr, GaugeObservables* obs = nullptr);
// The host copy of a device field (every link, halo included) through a pinned staging buffer in chunks; row
// "setup_gauge_download".
HostGauge download_gauge(MetricsRegistry& metrics, const DeviceGauge& dev);

HostGauge make_random_gauge_on_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width,
                                      Communicator* comm = nullptr, GaugeObservables* obs = nullptr);

// The plaquette and link trace of the links `ext` on the device (the extended layout, halo filled), computed as
// above; timed as metrics row `row`. Collective over comm (nullptr: this block only).
GaugeObservables device_gauge_observables(MetricsRegistry& metrics, const Geometry& g, const SU3<double>* ext,
                                          Communicator* comm, const char* row);

// device_gauge_observables with its buffers (per-site terms and block sums) kept between calls, for callers that
// measure every sweep (the device heatbath). g must outlive it.
class DeviceGaugeObservables {
 public:
  explicit DeviceGaugeObservables(const Geometry& g);
  GaugeObservables operator()(MetricsRegistry& metrics, const SU3<double>* ext, Communicator* comm, const char* row);

 private:
  const Geometry& g_;
  Buffer<double> plaq_, trace_, blocks_;
};

// The unit field with its halo, made on the device (row "setup_unit_gauge"); make_unit_gauge's bits.
DeviceGauge make_unit_gauge_device(MetricsRegistry& metrics, const Geometry& g);

// The first link of the local block (local lexicographic order, then mu) that is not in SU(3) to tol
// (kernels/gauge_observables.hpp's link_deviation: unitarity_deviation's arithmetic), checked on the device (row
// `row`); lex = -1 if every link is. Rank-local.
struct NonSu3Link {
  std::int64_t lex = -1;
  int mu = 0;
  double deviation = 0;
};
NonSu3Link first_non_su3_link(MetricsRegistry& metrics, const Geometry& g, const SU3<double>* ext, double tol,
                              const char* row);

// dev (device) to host (pageable, dev.size() links) through a pinned staging buffer of at most 64 MiB, each chunk
// copied on by the OpenMP threads.
void download_links_pinned(const Buffer<SU3<double>>& dev, SU3<double>* host);

}  // namespace emprism
