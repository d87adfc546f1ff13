// blas.hpp: BLAS-1 on parity spinor fields through the launchers (each call is timed and counted).
// Reductions are local sums in double followed by one Communicator::sum (one MPI_Allreduce) per call;
// fused operations (cg_update) reduce once. The host's wait for the device's partial sums is counted in
// ctx.metrics.reductions(). Collective: every rank must call the reductions.
// Instantiated for float and double (and the mixed conversions) in blas.cpp, the only file that launches them; for
// Half and Fp32Fp64 (kernels/half.hpp) what the sloppy CG needs. Minimum bytes count each field in its own format.
// Who may call: solvers and operators.
#pragma once

#include <complex>

#include "src/lattice/context.hpp"
#include "src/lattice/fields.hpp"

namespace emprism::blas {

template <typename R>
void zero(Context& ctx, ParitySpinor<R>& y);
// y = x, converting precision
template <typename Rout, typename Rin>
void convert(Context& ctx, ParitySpinor<Rout>& y, const ParitySpinor<Rin>& x);
// y = a x + b y
template <typename R>
void axpby(Context& ctx, double a, const ParitySpinor<R>& x, double b, ParitySpinor<R>& y);
// y = a x + b y, a complex
template <typename R>
void caxpby(Context& ctx, std::complex<double> a, const ParitySpinor<R>& x, double b, ParitySpinor<R>& y);
// y += a x (x may be of another precision)
template <typename R, typename Rx>
void axpy(Context& ctx, double a, const ParitySpinor<Rx>& x, ParitySpinor<R>& y);
template <typename R>
double norm2(Context& ctx, const ParitySpinor<R>& x);
template <typename R>
std::complex<double> dot(Context& ctx, const ParitySpinor<R>& x, const ParitySpinor<R>& y);
// Sum of the two local parity norms, one reduction.
template <typename R>
double norm2(Context& ctx, const SpinorField<R>& x);
// r = b - r for both parities; returns |r|^2 (one reduction).
template <typename R>
double residual(Context& ctx, const SpinorField<R>& b, SpinorField<R>& r);
// The global sum of a reduction launched earlier (e.g. WilsonClover::apply_mdagm's |Mhat p|^2): waits for its
// local value, then one Communicator::sum. local.n must be 1.
double global_sum(Context& ctx, backend::PendingSums& local);
// r -= alpha w, x += alpha p; returns |r|^2 (one reduction, waited for after x's update is launched). x is in
// solution_t<R> (fp32 for Half).
template <typename R>
double cg_update(Context& ctx, double alpha, const ParitySpinor<R>& p, const ParitySpinor<R>& w,
                 ParitySpinor<solution_t<R>>& x, ParitySpinor<R>& r);
// On one rank (ctx.comm.size() == 1, where the device's sum is the global one): cg_update, and in the same pass as x's
// update the next direction p_next = r + beta p with beta = |r|^2 / rr_old, computed on the device from its sum (QUDA's
// axpyZpbx): no launch after the wait, one pass over p less. Returns |r|^2. p_next is a field apart from p (the caller
// keeps p for a reliable update, which rebuilds the direction from it instead).
template <typename R>
double cg_update_direction(Context& ctx, double alpha, double rr_old, const ParitySpinor<R>& p,
                           const ParitySpinor<R>& w, ParitySpinor<solution_t<R>>& x, ParitySpinor<R>& r,
                           ParitySpinor<R>& p_next);
// The same after a residual update done elsewhere (WilsonClover::apply_mdagm_update, on one rank), whose |r|^2 is
// pending on the device: x's and the direction's update as cg_update_direction's, then the wait. Returns |r|^2.
template <typename R>
double cg_direction_after(Context& ctx, double alpha, double rr_old, const ParitySpinor<R>& p,
                          ParitySpinor<solution_t<R>>& x, const ParitySpinor<R>& r, ParitySpinor<R>& p_next,
                          backend::PendingSums& r_norm2);
// On any number of ranks, after a residual update done elsewhere whose |r|^2 (this rank's) is pending on the device:
// x += alpha p, launched before the wait and the sum over ranks. Returns the global |r|^2.
template <typename R>
double cg_solution_after(Context& ctx, double alpha, const ParitySpinor<R>& p, ParitySpinor<solution_t<R>>& x,
                         backend::PendingSums& r_norm2);

}  // namespace emprism::blas
