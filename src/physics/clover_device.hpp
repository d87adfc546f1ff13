// clover_device.hpp: the operator's fields built on the device from the host gauge field or its device copy: the links
// in the operator's precision and format (18, 12 or 8 reals per link, kernels/link_format.hpp) and the clover term A
// with its inverse on both parities (kernels/clover_build.hpp), from one raw copy of the double links with their halo
// (no host reorder, no host clover). The same per-site code runs on the CPU backend and gives make_clover's bits
// (src/physics/clover.hpp, the reference).
// Metrics rows: "setup_gauge_copy" (the copy to the device), "setup_gauge_links" (links to R, packed), "setup_clover"
// (A and A^-1, both parities), "setup_convert" (the fields of another precision rounded, mixed precision),
// "setup_clover_compress" (the fp32 operator's compressed A, kernels/clover_dynamic.hpp).
// Who may call: anyone on the rank (the halo of the host field must be filled).
#pragma once

#include "src/lattice/context.hpp"
#include "src/lattice/fields.hpp"
#include "src/lattice/gauge.hpp"

namespace emprism {

// Fills gauge (in its format: gauge.reconstruct(); check_link_format first for 12 or 8), a[p] and a_inv[p] (p = 0
// even, 1 odd). Throws RuntimeFailure naming the site (make_clover's message)
// when a block of A is singular.
template <typename R>
void build_operator_fields(Context& ctx, const HostGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]);
// The same from a field already on the device (its halo filled; no copy, no row "setup_gauge_copy"): the same kernels
// on the same double links, so the same bits as from the host copy of it.
template <typename R>
void build_operator_fields(Context& ctx, const DeviceGauge& u, double kappa, double csw, GaugeField<R>& gauge,
                           CloverField<R> a[2], CloverField<R> a_inv[2]);

// Before links of 12 or 8 reals are built (local; a caller on several ranks agrees the outcome): throws InputError
// naming the first link of the local block (local lexicographic order, x fastest, then mu) whose
// link_format_deviation exceeds tol (in global coordinates). Does nothing for 18.
void check_link_format(const HostGauge& u, int reconstruct, double tol);
// max of unitarity_deviation(u) (|U U^dag - 1|, |det U - 1|) and the largest entry of unpack(pack(u)) - u in the
// format reconstruct (12 or 8), in double; +infinity or NaN (both fail `dev <= tol`) for a link with a value that is
// not finite or one the format cannot hold (8 reals at |U10| = 1).
double link_format_deviation(const SU3<double>& u, int reconstruct);

// The fields of another precision rounded to R (gauge_out, a_out[p], a_inv_out[p]), row "setup_convert".
template <typename R, typename Ro>
void convert_operator_fields(Context& ctx, const Geometry& g, const GaugeField<Ro>& gauge, const CloverField<Ro> a[2],
                             const CloverField<Ro> a_inv[2], GaugeField<R>& gauge_out, CloverField<R> a_out[2],
                             CloverField<R> a_inv_out[2]);

// The half operator's fields from the double operator's (row "setup_convert"): the links rounded to fp32 in their
// format (18 or 12 reals; 8 throws std::logic_error), A^-1 in 16-bit fixed point (kernels/clover_half.hpp); A is not
// converted (no kernel of the half operator reads it).
void convert_half_operator_fields(Context& ctx, const Geometry& g, const GaugeField<double>& gauge,
                                  const CloverField<double> a_inv[2], GaugeField<float>& gauge_out,
                                  CloverField<Half> a_inv_out[2]);

// The fp32 operator's clover term in its compressed form (kernels/clover_dynamic.hpp) from its A, row
// "setup_clover_compress".
void compress_clover(Context& ctx, const CloverField<float>& a, CloverField<CloverDynamic>& out);

}  // namespace emprism
