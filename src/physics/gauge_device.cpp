// gauge_device.cpp: the random gauge field generated on the device (see gauge_device.hpp).
// Flops per link: 5 Philox draws (10 rounds) and 10 Box-Muller pairs, Gram-Schmidt (~ 600 in all, counted as 600);
// minimum bytes: the links written once (double).
#include "src/physics/gauge_device.hpp"

#include <chrono>

#include "kernels/gauge_generate.hpp"
#include "kernels/launch.hpp"

namespace emprism {

HostGauge make_random_gauge_on_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width) {
  HostGauge u(g, HostGauge::Uninitialised{});  // every link, halo included, is copied from the device
  HostGauge::Storage& host = u.storage();
  Buffer<SU3<double>> dev(host.size());
  RandomGaugeExt f;
  f.u = dev.data();
  for (int k = 0; k < 4; ++k) {
    f.l[k] = g.local()[k];
    f.g[k] = g.global()[k];
    f.origin[k] = g.origin()[k];
  }
  f.seed = seed;
  f.width = width;
  const double links = static_cast<double>(host.size());
  launch(metrics, {"setup_random_gauge", 600 * links, links * sizeof(SU3<double>)},
         static_cast<std::int64_t>(host.size() / 4), f);
  const auto t0 = std::chrono::steady_clock::now();
  dev.copy_to_host(host.data());
  metrics.record("setup_gauge_download", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 0, links * sizeof(SU3<double>));
  return u;
}

}  // namespace emprism
