// cg.cpp: even-odd CG with true-residual restarts / mixed-precision defect correction (see cg.hpp).
#include "src/physics/cg.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "src/physics/blas.hpp"

namespace emprism {

namespace {

// Fields of the inner solve, allocated once per solve.
template <typename Ri>
struct InnerWork {
  explicit InnerWork(const Geometry& g) : ri(g), e(g), bhat(g), rhs(g), cr(g), p(g), w(g), v(g) {}
  SpinorField<Ri> ri, e;
  ParitySpinor<Ri> bhat, rhs, cr, p, w, v;
};

// CG on Mhat^dag Mhat e_o = rhs (|rhs|^2 = rhs2) from e_o = 0 until |r|^2 <= target or max_iter iterations in all;
// appends to res (iterations, history relative to rhs0, nonfinite at the first sum that is NaN or Inf).
template <typename Ri, typename Elapsed>
void inner_cg(WilsonClover<Ri>& inner, InnerWork<Ri>& k, double rhs2, double rhs0, double target,
              const CgParams& params, CgResult& res, Elapsed&& elapsed) {
  Context& ictx = inner.context();
  blas::zero(ictx, k.e.odd);
  blas::convert(ictx, k.cr, k.rhs);
  blas::convert(ictx, k.p, k.rhs);
  double rr = rhs2;
  const std::int64_t sums_before = ictx.comm.sum_calls(), iterations_before = res.iterations;
  while (res.iterations < params.max_iter && rr > target) {
    // Two global sums per iteration: |Mhat p|^2, summed on the device while Mhat^dag runs (its wait is short and
    // its MPI time overlaps the device), and |r|^2 from the fused update.
    backend::PendingSums pap_local;
    inner.apply_mdagm(k.w, k.v, k.p, &pap_local);
    const double pap = blas::global_sum(ictx, pap_local);
    if (!std::isfinite(pap)) {
      res.nonfinite = true;
      break;
    }
    if (!(pap > 0)) break;
    const double alpha = rr / pap;
    const double rr_new = blas::cg_update(ictx, alpha, k.p, k.w, k.e.odd, k.cr);
    ++res.iterations;
    if (!std::isfinite(rr_new)) {
      res.nonfinite = true;
      break;
    }
    res.history.push_back(std::sqrt(rr_new / rhs0));
    if (params.progress && params.progress_every > 0 && res.iterations % params.progress_every == 0)
      params.progress(res.iterations, res.history.back(), elapsed());
    if (rr_new <= target) break;
    blas::axpby(ictx, 1.0, k.cr, rr_new / rr, k.p);  // p = r + beta p
    rr = rr_new;
  }
  ictx.metrics.reductions().cg_iterations += res.iterations - iterations_before;
  ictx.metrics.reductions().cg_reductions += ictx.comm.sum_calls() - sums_before;
}

}  // namespace

template <typename Ro, typename Ri>
CgResult solve_eo_cg(WilsonClover<Ro>& outer, WilsonClover<Ri>& inner, const SpinorField<Ro>& b, SpinorField<Ro>& x,
                     const CgParams& params) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Context& octx = outer.context();
  Context& ictx = inner.context();
  const Geometry& g = outer.geometry();
  CgResult res;

  blas::zero(octx, x.even);
  blas::zero(octx, x.odd);
  const double b2 = blas::norm2(octx, b);
  res.nonfinite = !std::isfinite(b2);
  if (res.nonfinite || b2 == 0.0) {
    res.converged = !res.nonfinite;
    res.true_residual = res.nonfinite ? b2 : 0.0;
    res.seconds = elapsed();
    return res;
  }

  // Below this relative residual the inner CG's own recursion is no longer trustworthy.
  const double inner_floor = std::numeric_limits<Ri>::epsilon() * 50;
  SpinorField<Ro> r(g);
  InnerWork<Ri> k(g);
  double rhs0 = -1, prev_rel = std::numeric_limits<double>::infinity();

  for (int cycle = 0;; ++cycle) {
    outer.apply_m(r, x);
    const double rel = std::sqrt(blas::residual(octx, b, r) / b2);  // r = b - M x
    res.true_residual = rel;
    if (!std::isfinite(rel)) {
      res.nonfinite = true;
      break;
    }
    if (rel <= params.tol) {
      res.converged = true;
      break;
    }
    if (res.iterations >= params.max_iter) break;
    if (cycle > 0 && rel > 0.5 * prev_rel) {
      res.stagnated = true;
      break;
    }
    prev_rel = rel;
    res.restarts = cycle;

    blas::convert(ictx, k.ri.even, r.even);
    blas::convert(ictx, k.ri.odd, r.odd);
    inner.prepare_source(k.bhat, k.ri);
    inner.apply_mhat_dag(k.rhs, k.bhat);
    const double rhs2 = blas::norm2(ictx, k.rhs);
    if (!std::isfinite(rhs2)) {  // e.g. beyond the inner precision's range (mixed precision)
      res.nonfinite = true;
      break;
    }
    if (rhs0 < 0) rhs0 = rhs2;
    const double inner_tol = std::max(0.5 * params.tol / rel, inner_floor);
    inner_cg(inner, k, rhs2, rhs0, inner_tol * inner_tol * rhs2, params, res, elapsed);
    if (res.nonfinite) break;
    inner.reconstruct(k.e, k.ri);
    blas::axpy(octx, 1.0, k.e.even, x.even);
    blas::axpy(octx, 1.0, k.e.odd, x.odd);
  }
  res.seconds = elapsed();
  return res;
}

template CgResult solve_eo_cg<double, double>(WilsonClover<double>&, WilsonClover<double>&, const SpinorField<double>&,
                                              SpinorField<double>&, const CgParams&);
template CgResult solve_eo_cg<float, float>(WilsonClover<float>&, WilsonClover<float>&, const SpinorField<float>&,
                                            SpinorField<float>&, const CgParams&);
template CgResult solve_eo_cg<double, float>(WilsonClover<double>&, WilsonClover<float>&, const SpinorField<double>&,
                                             SpinorField<double>&, const CgParams&);

}  // namespace emprism
