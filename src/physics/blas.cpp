// blas.cpp: launchers of the BLAS-1 kernels (see blas.hpp), with their flops and minimum bytes.
#include "src/physics/blas.hpp"

#include <stdexcept>
#include <string>

#include "kernels/blas.hpp"
#include "kernels/launch.hpp"
#include "src/physics/costs.hpp"

namespace emprism::blas {

// The call's cost: a per-site cost (src/physics/costs.hpp) times n sites, under row.
inline LaunchCost cost_of(const char* row, SiteCost c, double n) { return {row, c.flops * n, c.bytes * n}; }

template <typename R>
void zero(Context& ctx, ParitySpinor<R>& y) {
  launch(ctx.metrics, {"blas_zero", 0.0, y.sites() * kS<R>}, y.sites(), ZeroFunctor<R>{y.view()});
}

template <typename Rout, typename Rin>
void convert(Context& ctx, ParitySpinor<Rout>& y, const ParitySpinor<Rin>& x) {
  launch(ctx.metrics, {"blas_copy", 0.0, x.sites() * (kS<Rout> + kS<Rin>)}, x.sites(),
         ConvertFunctor<Rout, Rin>{y.view(), x.view()});
}

// y = a x + b y
template <typename R>
void axpby(Context& ctx, double a, const ParitySpinor<R>& x, double b, ParitySpinor<R>& y) {
  const std::string row = std::string("blas_axpby") + PrecisionTraits<R>::row_suffix;
  launch(ctx.metrics, cost_of(row.c_str(), kAxpbyCost<R>, x.sites()), x.sites(),
         AxpbyFunctor<R>{x.view(), y.view(), real_t<R>(a), real_t<R>(b)});
}

// y = a x + b y, a complex
template <typename R>
void caxpby(Context& ctx, std::complex<double> a, const ParitySpinor<R>& x, double b, ParitySpinor<R>& y) {
  launch(
      ctx.metrics, {"blas_caxpby", 120.0 * x.sites(), 3 * x.sites() * kS<R>}, x.sites(),
      CaxpbyFunctor<R>{x.view(), y.view(), Complex<real_t<R>>{real_t<R>(a.real()), real_t<R>(a.imag())}, real_t<R>(b)});
}

// y += a x (x may be of another precision), recorded under row.
template <typename R, typename Rx>
void axpy_row(Context& ctx, const char* row, double a, const ParitySpinor<Rx>& x, ParitySpinor<R>& y) {
  launch(ctx.metrics, cost_of(row, kAxpyCost<R, Rx>, x.sites()), x.sites(),
         AxpyFunctor<R, Rx>{x.view(), y.view(), real_t<R>(a)});
}

template <typename R, typename Rx>
void axpy(Context& ctx, double a, const ParitySpinor<Rx>& x, ParitySpinor<R>& y) {
  axpy_row(ctx, "blas_axpy", a, x, y);
}

template <typename R>
double norm2(Context& ctx, const ParitySpinor<R>& x) {
  Sums<1> s = launch_reduce<1>(ctx.metrics, {"blas_norm2", 48.0 * x.sites(), x.sites() * kS<R>}, x.sites(),
                               Norm2Functor<R>{x.view()});
  ctx.comm.sum(s.v, 1);
  return s.v[0];
}

template <typename R>
std::complex<double> dot(Context& ctx, const ParitySpinor<R>& x, const ParitySpinor<R>& y) {
  Sums<2> s = launch_reduce<2>(ctx.metrics, {"blas_dot", 96.0 * x.sites(), 2 * x.sites() * kS<R>}, x.sites(),
                               DotFunctor<R>{x.view(), y.view()});
  ctx.comm.sum(s.v, 2);
  return {s.v[0], s.v[1]};
}

// Sum of the two local parity norms, one reduction.
template <typename R>
double norm2(Context& ctx, const SpinorField<R>& x) {
  const LaunchCost c{"blas_norm2", 48.0 * x.even.sites(), x.even.sites() * kS<R>};
  Sums<1> s = launch_reduce<1>(ctx.metrics, c, x.even.sites(), Norm2Functor<R>{x.even.view()});
  const Sums<1> t = launch_reduce<1>(ctx.metrics, c, x.odd.sites(), Norm2Functor<R>{x.odd.view()});
  s.v[0] += t.v[0];
  ctx.comm.sum(s.v, 1);
  return s.v[0];
}

// r = b - r for both parities; returns |r|^2 (one reduction).
template <typename R>
double residual(Context& ctx, const SpinorField<R>& b, SpinorField<R>& r) {
  double s[1] = {0};
  for (int p = 0; p < 2; ++p) {
    const int n = r.parity(p).sites();
    s[0] += launch_reduce<1>(ctx.metrics, {"blas_residual", 72.0 * n, 3 * n * kS<R>}, n,
                             ResidualFunctor<R>{b.parity(p).view(), r.parity(p).view()})
                .v[0];
  }
  ctx.comm.sum(s, 1);
  return s[0];
}

double global_sum(Context& ctx, backend::PendingSums& local) {
  ctx.metrics.reductions().wait_s += backend::wait_sums(local);
  double s = local.values[0];
  ctx.comm.sum(&s, 1);
  return s;
}

// r -= alpha w and its norm's reduction (row blas_cg_update with the precision's suffix), not waited for.
template <typename R>
backend::PendingSums residual_update(Context& ctx, double alpha, const ParitySpinor<R>& w, ParitySpinor<R>& r) {
  const int n = r.sites();
  const std::string row = std::string("blas_cg_update") + PrecisionTraits<R>::row_suffix;
  return launch_reduce_async<1>(ctx.metrics, cost_of(row.c_str(), kResidualUpdateCost<R>, n), n,
                                CgUpdateFunctor<R>{r.view(), w.view(), real_t<R>(alpha)});
}

// r -= alpha w with its norm, then x += alpha p, then the wait for the norm: the device updates x while the host waits
// and sums over ranks, so the direction update the caller launches next finds the device still busy (no idle gap
// before it). Rows blas_cg_update (r and |r|^2) and blas_cg_solution (x), each with the precision's suffix.
// (cg_update_direction below: the same on one rank, with the direction's update in x's pass.)
template <typename R>
double cg_update(Context& ctx, double alpha, const ParitySpinor<R>& p, const ParitySpinor<R>& w,
                 ParitySpinor<solution_t<R>>& x, ParitySpinor<R>& r) {
  backend::PendingSums pending = residual_update(ctx, alpha, w, r);
  return cg_solution_after(ctx, alpha, p, x, pending);
}

template <typename R>
double cg_solution_after(Context& ctx, double alpha, const ParitySpinor<R>& p, ParitySpinor<solution_t<R>>& x,
                         backend::PendingSums& r_norm2) {
  const std::string xrow = std::string("blas_cg_solution") + PrecisionTraits<R>::row_suffix;
  axpy_row(ctx, xrow.c_str(), alpha, p, x);
  return global_sum(ctx, r_norm2);
}

// As cg_update, x's update fused with the direction's (row blas_cg_direction with the suffix): the kernel reads |r|^2
// where the device finished it (on the CPU, where the launcher left it: the loop runs before launch returns).
template <typename R>
double cg_update_direction(Context& ctx, double alpha, double rr_old, const ParitySpinor<R>& p,
                           const ParitySpinor<R>& w, ParitySpinor<solution_t<R>>& x, ParitySpinor<R>& r,
                           ParitySpinor<R>& p_next) {
  if (ctx.comm.size() != 1) throw std::logic_error("cg_update_direction: one rank only (its sum is the global one)");
  backend::PendingSums pending = residual_update(ctx, alpha, w, r);
  return cg_direction_after(ctx, alpha, rr_old, p, x, r, p_next, pending);
}

template <typename R>
double cg_direction_after(Context& ctx, double alpha, double rr_old, const ParitySpinor<R>& p,
                          ParitySpinor<solution_t<R>>& x, const ParitySpinor<R>& r, ParitySpinor<R>& p_next,
                          backend::PendingSums& r_norm2) {
  if (ctx.comm.size() != 1) throw std::logic_error("cg_direction_after: one rank only (its sum is the global one)");
  const int n = x.sites();
  const std::string row = std::string("blas_cg_direction") + PrecisionTraits<R>::row_suffix;
  const double* rr = r_norm2.device ? r_norm2.device : r_norm2.values;
  launch(ctx.metrics, cost_of(row.c_str(), kDirectionCost<R>, n), n,
         CgDirectionFunctor<R>{p.view(), r.view(), p_next.view(), x.view(), real_t<solution_t<R>>(alpha), real_t<R>(1),
                               rr_old, rr});
  return global_sum(ctx, r_norm2);
}

}  // namespace emprism::blas

namespace emprism::blas {

template void zero<float>(Context&, ParitySpinor<float>&);
template void axpby<float>(Context&, double, const ParitySpinor<float>&, double, ParitySpinor<float>&);
template void caxpby<float>(Context&, std::complex<double>, const ParitySpinor<float>&, double, ParitySpinor<float>&);
template double norm2<float>(Context&, const ParitySpinor<float>&);
template std::complex<double> dot<float>(Context&, const ParitySpinor<float>&, const ParitySpinor<float>&);
template double norm2<float>(Context&, const SpinorField<float>&);
template double residual<float>(Context&, const SpinorField<float>&, SpinorField<float>&);
template double cg_update<float>(Context&, double, const ParitySpinor<float>&, const ParitySpinor<float>&,
                                 ParitySpinor<float>&, ParitySpinor<float>&);
template double cg_update_direction<float>(Context&, double, double, const ParitySpinor<float>&,
                                           const ParitySpinor<float>&, ParitySpinor<float>&, ParitySpinor<float>&,
                                           ParitySpinor<float>&);
template double cg_direction_after<float>(Context&, double, double, const ParitySpinor<float>&,
                                          ParitySpinor<solution_t<float>>&, const ParitySpinor<float>&,
                                          ParitySpinor<float>&, backend::PendingSums&);
template double cg_solution_after<float>(Context&, double, const ParitySpinor<float>&, ParitySpinor<solution_t<float>>&,
                                         backend::PendingSums&);
template void zero<double>(Context&, ParitySpinor<double>&);
template void axpby<double>(Context&, double, const ParitySpinor<double>&, double, ParitySpinor<double>&);
template void caxpby<double>(Context&, std::complex<double>, const ParitySpinor<double>&, double,
                             ParitySpinor<double>&);
template double norm2<double>(Context&, const ParitySpinor<double>&);
template std::complex<double> dot<double>(Context&, const ParitySpinor<double>&, const ParitySpinor<double>&);
template double norm2<double>(Context&, const SpinorField<double>&);
template double residual<double>(Context&, const SpinorField<double>&, SpinorField<double>&);
template double cg_update<double>(Context&, double, const ParitySpinor<double>&, const ParitySpinor<double>&,
                                  ParitySpinor<double>&, ParitySpinor<double>&);
template double cg_update_direction<double>(Context&, double, double, const ParitySpinor<double>&,
                                            const ParitySpinor<double>&, ParitySpinor<double>&, ParitySpinor<double>&,
                                            ParitySpinor<double>&);
template double cg_direction_after<double>(Context&, double, double, const ParitySpinor<double>&,
                                           ParitySpinor<solution_t<double>>&, const ParitySpinor<double>&,
                                           ParitySpinor<double>&, backend::PendingSums&);
template double cg_solution_after<double>(Context&, double, const ParitySpinor<double>&,
                                          ParitySpinor<solution_t<double>>&, backend::PendingSums&);
template void convert<float, float>(Context&, ParitySpinor<float>&, const ParitySpinor<float>&);
template void convert<double, double>(Context&, ParitySpinor<double>&, const ParitySpinor<double>&);
template void convert<float, double>(Context&, ParitySpinor<float>&, const ParitySpinor<double>&);
template void convert<double, float>(Context&, ParitySpinor<double>&, const ParitySpinor<float>&);
template void axpy<float, float>(Context&, double, const ParitySpinor<float>&, ParitySpinor<float>&);
template void axpy<double, double>(Context&, double, const ParitySpinor<double>&, ParitySpinor<double>&);
template void axpy<double, float>(Context&, double, const ParitySpinor<float>&, ParitySpinor<double>&);

// Half (solver.sloppy = "half"): what the sloppy CG runs, and the conversions from and to the other precisions.
template void zero<Half>(Context&, ParitySpinor<Half>&);
template void axpby<Half>(Context&, double, const ParitySpinor<Half>&, double, ParitySpinor<Half>&);
template void caxpby<Half>(Context&, std::complex<double>, const ParitySpinor<Half>&, double, ParitySpinor<Half>&);
template double norm2<Half>(Context&, const ParitySpinor<Half>&);
template std::complex<double> dot<Half>(Context&, const ParitySpinor<Half>&, const ParitySpinor<Half>&);
template double cg_update<Half>(Context&, double, const ParitySpinor<Half>&, const ParitySpinor<Half>&,
                                ParitySpinor<float>&, ParitySpinor<Half>&);
template double cg_update_direction<Half>(Context&, double, double, const ParitySpinor<Half>&,
                                          const ParitySpinor<Half>&, ParitySpinor<float>&, ParitySpinor<Half>&,
                                          ParitySpinor<Half>&);
template double cg_direction_after<Half>(Context&, double, double, const ParitySpinor<Half>&,
                                         ParitySpinor<solution_t<Half>>&, const ParitySpinor<Half>&,
                                         ParitySpinor<Half>&, backend::PendingSums&);
template double cg_solution_after<Half>(Context&, double, const ParitySpinor<Half>&, ParitySpinor<solution_t<Half>>&,
                                        backend::PendingSums&);
template void convert<Half, Half>(Context&, ParitySpinor<Half>&, const ParitySpinor<Half>&);
template void convert<Half, double>(Context&, ParitySpinor<Half>&, const ParitySpinor<double>&);
template void convert<Half, float>(Context&, ParitySpinor<Half>&, const ParitySpinor<float>&);
template void convert<float, Half>(Context&, ParitySpinor<float>&, const ParitySpinor<Half>&);
template void convert<double, Half>(Context&, ParitySpinor<double>&, const ParitySpinor<Half>&);

// Fp32Fp64 (solver.sloppy = "single_fp64"): what the sloppy CG runs (its partial solution is Fp32Fp64 too), and the
// conversions from and to fp64 and fp32.
using F32d = Fp32Fp64;
template void zero<F32d>(Context&, ParitySpinor<F32d>&);
template void axpby<F32d>(Context&, double, const ParitySpinor<F32d>&, double, ParitySpinor<F32d>&);
template void caxpby<F32d>(Context&, std::complex<double>, const ParitySpinor<F32d>&, double, ParitySpinor<F32d>&);
template double norm2<F32d>(Context&, const ParitySpinor<F32d>&);
template std::complex<double> dot<F32d>(Context&, const ParitySpinor<F32d>&, const ParitySpinor<F32d>&);
template double cg_update<F32d>(Context&, double, const ParitySpinor<F32d>&, const ParitySpinor<F32d>&,
                                ParitySpinor<F32d>&, ParitySpinor<F32d>&);
template double cg_update_direction<F32d>(Context&, double, double, const ParitySpinor<F32d>&,
                                          const ParitySpinor<F32d>&, ParitySpinor<F32d>&, ParitySpinor<F32d>&,
                                          ParitySpinor<F32d>&);
template double cg_direction_after<F32d>(Context&, double, double, const ParitySpinor<F32d>&,
                                         ParitySpinor<solution_t<F32d>>&, const ParitySpinor<F32d>&,
                                         ParitySpinor<F32d>&, backend::PendingSums&);
template double cg_solution_after<F32d>(Context&, double, const ParitySpinor<F32d>&, ParitySpinor<solution_t<F32d>>&,
                                        backend::PendingSums&);
template void convert<F32d, F32d>(Context&, ParitySpinor<F32d>&, const ParitySpinor<F32d>&);
template void convert<F32d, double>(Context&, ParitySpinor<F32d>&, const ParitySpinor<double>&);
template void convert<F32d, float>(Context&, ParitySpinor<F32d>&, const ParitySpinor<float>&);
template void convert<float, F32d>(Context&, ParitySpinor<float>&, const ParitySpinor<F32d>&);
template void convert<double, F32d>(Context&, ParitySpinor<double>&, const ParitySpinor<F32d>&);
template void axpy<double, F32d>(Context&, double, const ParitySpinor<F32d>&, ParitySpinor<double>&);

}  // namespace emprism::blas
