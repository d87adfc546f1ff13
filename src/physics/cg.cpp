// cg.cpp: even-odd CG with reliable updates, in one precision or mixed (see cg.hpp for the algorithm and its
// guarantees). Collective: every rank runs the same sequence of reductions.
#include "src/physics/cg.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "src/physics/blas.hpp"

namespace emprism {

namespace {

// One solve: the fields in both precisions and the state of the recursion and of the reliable updates.
template <typename Ro, typename Ri>
class ReliableCg {
 public:
  ReliableCg(WilsonClover<Ro>& outer, WilsonClover<Ri>& inner, const SpinorField<Ro>& b, SpinorField<Ro>& x,
             const CgParams& params, CgResult& res)
      : outer_(outer),
        inner_(inner),
        octx_(outer.context()),
        ictx_(inner.context()),
        b_(b),
        x_(x),
        params_(params),
        res_(res),
        c_(outer.geometry()),
        r_(outer.geometry()),
        t_(outer.geometry()),
        full_(outer.geometry()),
        xs_(outer.geometry()),
        p_store_(outer.geometry()),
        w_(outer.geometry()),
        v_(outer.geometry()),
        delta_(std::is_same_v<Ro, Ri> ? 0.0 : params.reliable_delta),
        floor_(50 * PrecisionTraits<Ri>::epsilon) {
    if constexpr (!std::is_same_v<Ro, Ri>) rs_own_ = std::make_unique<ParitySpinor<Ri>>(outer.geometry());
    if (ictx_.comm.size() == 1) {
      p_other_ = std::make_unique<ParitySpinor<Ri>>(outer.geometry());
      p_next_ = p_other_.get();
    }
  }

  // x = 0, then CG until one of the stops of cg.hpp; fills res (all but seconds).
  template <typename Elapsed>
  void run(double b2, Elapsed&& elapsed);

 private:
  ParitySpinor<Ri>& rs() {
    if constexpr (std::is_same_v<Ro, Ri>) {
      return r_;
    } else {
      return *rs_own_;
    }
  }
  bool start();              // c, r = c, rs = r, p = rs; false when not finite
  bool step(double& rr);     // one CG iteration on rs, p, xs (rr: |rs|^2 before, then after); false: stop
  double reliable_update();  // x_o += xs, xs = 0, r = c - A x_o, returns |r|^2
  double full_residual();    // x_e reconstructed, |b - M x| / |b|
  void rebuild_direction(double r2, double rr_old, double rr_iter);  // rs = r, p = rs + beta p (p orthogonal to rs)
  bool stop_on(double value);  // records a value that is not finite; true when the solve must stop

  WilsonClover<Ro>& outer_;
  WilsonClover<Ri>& inner_;
  Context &octx_, &ictx_;
  const SpinorField<Ro>& b_;
  SpinorField<Ro>& x_;
  const CgParams& params_;
  CgResult& res_;
  ParitySpinor<Ro> c_, r_, t_;       // c = Mhat^dag bhat, r = c - A x_o (true), t: work
  SpinorField<Ro> full_;             // b - M x
  ParitySpinor<solution_t<Ri>> xs_;  // (fp32 when Ri is Half: kernels/half.hpp)
  ParitySpinor<Ri> p_store_, w_, v_;
  // One rank: the next direction is computed with x's update into p_next_ (blas::cg_update_direction), which then
  // becomes p_ unless a reliable update rebuilds the direction from p_; the two swap between p_store_ and p_other_.
  std::unique_ptr<ParitySpinor<Ri>> p_other_;
  ParitySpinor<Ri>* p_ = &p_store_;  // the direction
  ParitySpinor<Ri>* p_next_ = nullptr;
  std::unique_ptr<ParitySpinor<Ri>> rs_own_;  // mixed precision; else rs is r
  const double delta_, floor_;
  double b2_ = 0, c2_ = 0;
  std::int64_t iteration_sums_ = 0;
};

template <typename Ro, typename Ri>
bool ReliableCg<Ro, Ri>::stop_on(double value) {
  if (std::isfinite(value)) return false;
  res_.nonfinite = true;
  res_.true_residual = value;
  return true;
}

template <typename Ro, typename Ri>
bool ReliableCg<Ro, Ri>::start() {
  blas::zero(octx_, x_.even);
  blas::zero(octx_, x_.odd);
  outer_.prepare_source(t_, b_);
  outer_.apply_mhat_dag(c_, t_);
  c2_ = blas::norm2(octx_, c_);
  if (stop_on(c2_)) return false;
  blas::convert(octx_, r_, c_);
  if constexpr (!std::is_same_v<Ro, Ri>) blas::convert(ictx_, rs(), r_);
  blas::zero(ictx_, xs_);
  blas::convert(ictx_, *p_, rs());
  return !stop_on(blas::norm2(ictx_, rs()));  // the sloppy precision's range (e.g. fp32 overflow)
}

// w = A p, alpha = rr / p^dag A p, rs -= alpha w, xs += alpha p (blas::cg_update): exactly two global sums. Fused:
// alpha from |Mhat p|^2 before the operator's last kernel, which does rs -= alpha A p itself (w not stored).
template <typename Ro, typename Ri>
bool ReliableCg<Ro, Ri>::step(double& rr) {
  const std::int64_t sums_before = ictx_.comm.sum_calls();
  // |Mhat p|^2 is summed on the device while Mhat^dag runs (its wait is short and its MPI time overlaps the device).
  backend::PendingSums pap_local;
  if (params_.fuse_update)
    inner_.apply_mdagm_head(v_, *p_, &pap_local);  // w = A p is not stored: the last kernel comes with alpha
  else
    inner_.apply_mdagm(w_, v_, *p_, &pap_local);
  const double pap = blas::global_sum(ictx_, pap_local);
  bool go_on = !stop_on(pap) && pap > 0;
  if (go_on) {
    const double alpha = rr / pap;
    if (params_.fuse_update) {
      backend::PendingSums rr_local;
      inner_.apply_mdagm_update(rs(), v_, alpha, w_, &rr_local);  // w_: the tuner's scratch
      rr = p_next_ ? blas::cg_direction_after(ictx_, alpha, rr, *p_, xs_, rs(), *p_next_, rr_local)
                   : blas::cg_solution_after(ictx_, alpha, *p_, xs_, rr_local);
    } else {
      rr = p_next_ ? blas::cg_update_direction(ictx_, alpha, rr, *p_, w_, xs_, rs(), *p_next_)
                   : blas::cg_update(ictx_, alpha, *p_, w_, xs_, rs());
    }
    ++res_.iterations;
    go_on = !stop_on(rr);
  }
  iteration_sums_ += ictx_.comm.sum_calls() - sums_before;
  return go_on;
}

template <typename Ro, typename Ri>
double ReliableCg<Ro, Ri>::reliable_update() {
  blas::axpy(octx_, 1.0, xs_, x_.odd);
  blas::zero(ictx_, xs_);
  outer_.apply_mdagm(r_, t_, x_.odd);
  blas::axpby(octx_, 1.0, c_, -1.0, r_);
  ++res_.reliable_updates;
  return blas::norm2(octx_, r_);
}

template <typename Ro, typename Ri>
double ReliableCg<Ro, Ri>::full_residual() {
  outer_.reconstruct(x_, b_);
  outer_.apply_m(full_, x_);
  return std::sqrt(blas::residual(octx_, b_, full_) / b2_);
}

// After a reliable update p keeps the directions searched so far: the component along the new residual that the
// sloppy recursion left in it is removed, then p = r + beta p with beta = |r|^2 / |r_old|^2. Where the true residual
// is more than 10 times the iterated one (rr_iter), the recursion had left the true one behind (the precision's
// floor): p = r, a fresh start.
template <typename Ro, typename Ri>
void ReliableCg<Ro, Ri>::rebuild_direction(double r2, double rr_old, double rr_iter) {
  if constexpr (!std::is_same_v<Ro, Ri>) blas::convert(ictx_, rs(), r_);
  if (r2 > 100 * rr_iter) {
    blas::convert(ictx_, *p_, rs());
    return;
  }
  const std::complex<double> rp = blas::dot(ictx_, rs(), *p_) / r2;
  const double beta = r2 / rr_old;
  blas::caxpby(ictx_, 1.0 - beta * rp, rs(), beta, *p_);  // p = rs + beta (p - rp rs)
}

template <typename Ro, typename Ri>
template <typename Elapsed>
void ReliableCg<Ro, Ri>::run(double b2, Elapsed&& elapsed) {
  b2_ = b2;
  if (!start()) return;
  const bool normal = params_.stop == CgStop::Normal;                        // QUDA's criterion: no full-system check
  double target2 = (normal ? 1.0 : 0.25) * params_.tol * params_.tol * c2_;  // on |r|^2 of the normal system
  double rr = c2_, r0 = std::sqrt(c2_), max_r = r0, prev_rel = 0;
  int rises = 0, rises_total = 0, checks = 0;
  bool finished = false;  // converged or stagnated with the full residual of x known
  while (!finished && res_.iterations < params_.max_iter) {
    const double rr_old = rr;
    if (!step(rr)) break;
    double rn = std::sqrt(rr);
    if (rn > max_r) max_r = rn;
    // The update's triggers: the target; the fall by delta (mixed precision); the floor of the sloppy recursion,
    // below which its residual no longer follows the true one (also in one precision, where it may stall there).
    const bool reached = rr <= target2, update = (rn < delta_ * max_r && r0 <= max_r) || rn < floor_ * r0;
    if (reached || update) {
      const double rr_iter = rr;
      rr = reliable_update();
      if (stop_on(rr)) return;
      rn = std::sqrt(rr);
      if (rr <= target2) {  // the normal system meets its target: check the full one
        const double rel = full_residual();
        if (stop_on(rel)) return;
        res_.true_residual = rel;
        res_.converged = normal || rel <= params_.tol;
        res_.stagnated = !res_.converged && checks++ > 0 && rel > 0.5 * prev_rel;
        finished = res_.converged || res_.stagnated;
        prev_rel = rel;
        target2 *= std::pow(std::min(1.0, 0.5 * params_.tol / rel), 2);
      }
      rises = rn > r0 ? rises + 1 : 0;  // the true residual rose since the last update: the precision's floor
      rises_total += rn > r0;
      if (!finished && (rises > 1 || rises_total > 10)) res_.stagnated = true;
      if (!finished && !res_.stagnated) rebuild_direction(rr, rr_old, rr_iter);
      r0 = max_r = rn;
    } else if (p_next_) {
      std::swap(p_, p_next_);  // p = rs + beta p, computed with x's update
    } else {
      blas::axpby(ictx_, 1.0, rs(), rr / rr_old, *p_);  // p = rs + beta p
    }
    res_.history.push_back(rn / std::sqrt(c2_));
    if (params_.progress && params_.progress_every > 0 && res_.iterations % params_.progress_every == 0)
      params_.progress(res_.iterations, res_.history.back(), elapsed());
    if (res_.stagnated) break;
  }
  ictx_.metrics.reductions().cg_iterations += res_.iterations;
  ictx_.metrics.reductions().cg_reductions += iteration_sums_;
  if (finished || res_.nonfinite) return;
  // Stopped by max_iter, stagnation or breakdown: the solution so far and its true residual.
  blas::axpy(octx_, 1.0, xs_, x_.odd);
  const double rel = full_residual();
  if (stop_on(rel)) return;
  res_.true_residual = rel;
  res_.converged = rel <= params_.tol;
  res_.stagnated = res_.stagnated && !res_.converged;
}

}  // namespace

template <typename Ro, typename Ri>
CgResult solve_eo_cg(WilsonClover<Ro>& outer, WilsonClover<Ri>& inner, const SpinorField<Ro>& b, SpinorField<Ro>& x,
                     const CgParams& params) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  CgResult res;
  blas::zero(outer.context(), x.even);
  blas::zero(outer.context(), x.odd);
  const double b2 = blas::norm2(outer.context(), b);
  res.nonfinite = !std::isfinite(b2);
  if (res.nonfinite || b2 == 0.0) {
    res.converged = !res.nonfinite;
    res.true_residual = res.nonfinite ? b2 : 0.0;
  } else {
    ReliableCg<Ro, Ri>(outer, inner, b, x, params, res).run(b2, elapsed);
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
template CgResult solve_eo_cg<double, Half>(WilsonClover<double>&, WilsonClover<Half>&, const SpinorField<double>&,
                                            SpinorField<double>&, const CgParams&);
template CgResult solve_eo_cg<double, Fp32Fp64>(WilsonClover<double>&, WilsonClover<Fp32Fp64>&,
                                                const SpinorField<double>&, SpinorField<double>&, const CgParams&);

}  // namespace emprism
