// sources_device.hpp: the sources of sources.hpp (point, random, plane wave) built by device kernels straight into a
// spinor field (kernels/source_fill.hpp; the point source is smearing_device.hpp's), so no host field is made. The
// values are make_source's: on the CPU backend bit for bit, on a GPU to the rounding of its log, sin and cos.
// Metrics rows: "point_source", "noise_source", "plane_wave_source" (bytes written; no flops counted).
// Who may call: anyone on the rank (no communication).
#pragma once

#include <array>

#include "kernels/metrics.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/geometry.hpp"
#include "src/physics/sources.hpp"

namespace emprism {

// f = this rank's block of the source; theta: the boundary phases (radians) of the plane wave's momenta.
void make_source_device(MetricsRegistry& metrics, const Geometry& g, const SourceParams& source,
                        const std::array<double, 4>& theta, SpinorField<double>& f);

}  // namespace emprism
