// clover_device.hpp: the operator's fields built on the device from the host gauge field: the links in the
// operator's precision and the clover term A with its inverse on both parities (kernels/clover_build.hpp), from
// one raw copy of the double links with their halo (no host reorder, no host clover). The same per-site code runs
// on the CPU backend and gives make_clover's bits (src/physics/clover.hpp, the reference).
// Metrics rows: "setup_gauge_copy" (the copy to the device), "setup_gauge_links" (links to R), "setup_clover"
// (A and A^-1, both parities), "setup_convert" (the fields of another precision rounded, mixed precision).
// Who may call: anyone on the rank (the halo of the host field must be filled).
#pragma once

#include "src/lattice/context.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

// Fills gauge, a[p] and a_inv[p] (p = 0 even, 1 odd). Throws RuntimeFailure naming the site (make_clover's message)
// when a block of A is singular.
template <typename R>
void build_operator_fields(Context& ctx, const HostGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]);

// The fields of another precision rounded to R (gauge_out, a_out[p], a_inv_out[p]), row "setup_convert".
template <typename R, typename Ro>
void convert_operator_fields(Context& ctx, const Geometry& g, const GaugeField<Ro>& gauge, const CloverField<Ro> a[2],
                             const CloverField<Ro> a_inv[2], GaugeField<R>& gauge_out, CloverField<R> a_out[2],
                             CloverField<R> a_inv_out[2]);

}  // namespace emprism
