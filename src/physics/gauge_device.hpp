// gauge_device.hpp: gauge fields generated on the device (kernels/gauge_generate.hpp) with their halo, copied to the
// host field (src/lattice/gauge.hpp) in its storage layout: no host generation, no halo exchange (each halo link is
// generated from its global site, as the neighbouring rank generates it).
// Who may call: anyone on the rank (no collective).
#pragma once

#include <cstdint>

#include "kernels/metrics.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

// make_random_gauge's field with its halo filled: on the CPU backend its bits, on a GPU equal to rounding (the
// device's log, sin and cos). Metrics rows "setup_random_gauge" (the kernel) and "setup_gauge_download".
HostGauge make_random_gauge_on_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width);

}  // namespace emprism
