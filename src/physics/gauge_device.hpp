// gauge_device.hpp: gauge fields generated on the device (kernels/gauge_generate.hpp) with their halo, copied to the
// host field (src/lattice/gauge.hpp) in its storage layout: no host generation, no halo exchange (each halo link is
// generated from its global site, as the neighbouring rank generates it).
// Who may call: anyone on the rank (collective over comm only with obs and a communicator).
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
HostGauge make_random_gauge_on_device(MetricsRegistry& metrics, const Geometry& g, std::uint64_t seed, double width,
                                      Communicator* comm = nullptr, GaugeObservables* obs = nullptr);

// The plaquette and link trace of the links `ext` on the device (the extended layout, halo filled), computed as
// above; timed as metrics row `row`. Collective over comm (nullptr: this block only).
GaugeObservables device_gauge_observables(MetricsRegistry& metrics, const Geometry& g, const SU3<double>* ext,
                                          Communicator* comm, const char* row);

// dev (device) to host (pageable, dev.size() links) through a pinned staging buffer of at most 64 MiB, each chunk
// copied on by the OpenMP threads.
void download_links_pinned(const Buffer<SU3<double>>& dev, SU3<double>* host);

}  // namespace emprism
