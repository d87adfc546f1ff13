// cg.hpp: the even-odd preconditioned CG solver for M x = b (docs/conventions.md section 6).
// CG on the normal system of the odd sites, A x_o = c with A = Mhat^dag Mhat, c = Mhat^dag bhat (bhat = the prepared
// source), both in the precise precision Ro; x_e is reconstructed. The recursion (residual rs, direction p, partial
// solution xs) runs in the sloppy precision Ri. Reliable updates (in the style of QUDA's CG): when the iterated
// residual has fallen by the factor reliable_delta below the largest iterated residual since the last update (only
// with Ri != Ro), and whenever it meets the target, the solution is accumulated in Ro (x_o += xs, xs = 0), the true
// residual r = c - A x_o is recomputed in Ro and replaces rs, and the direction p is kept (made orthogonal to the
// new residual again, then p = r + beta p). The same happens when the iterated residual has fallen by 50 epsilon of
// Ri below the true one of the last update (the floor of the sloppy recursion). When the true normal residual meets its
// target, the true residual of the full system |b - M x| / |b| (x_e reconstructed) is computed: converged when it is <=
// tol; otherwise the normal target is tightened by 0.5 tol / |b - M x| / |b| and the same recursion goes on (no
// restart). With CgParams::stop = Normal (QUDA's criterion) the normal target is tol itself and meeting it is
// convergence: the full residual is computed and reported all the same. Stops when converged, after max_iter CG
// iterations (max_iter always holds), on stagnation (the true residual of the full system failed to halve between
// two checks, or the true normal residual rose at two reliable updates in a row, or at ten in all: the precision's
// floor), at the first residual or CG coefficient that is not
// finite (CgResult::nonfinite; checked every iteration), or when p^dag A p is no longer positive. The returned x and
// true_residual are always those of the solution reached (the full system's true residual recomputed at the end).
// With Ro = Ri it is plain CG whose residual is replaced by the true one only when it meets the target or its floor.
// Iterations of mixed against double (CPU, GCC, 2026-11-24, tol 1e-10, kappa 0.124, csw 1, unit gauge, theta = 0,
// one Gaussian source, stop = Full; double / fp32 sloppy / half sloppy): 36 / 41 / 46 at 8^3x16, 52 / 60 / 67 at
// 12^3x24, 70 / 79 at 16^3x32. Where the loss comes from (issue 17: parts of the sloppy A p replaced, fp32 sloppy):
// the recursion (r, p, x) in fp64 with only A p in fp32 keeps 41 and 60; the fp64 operator with p, A_ee^-1 H_eo p,
// v = Mhat p and w all rounded to fp32 between its kernels gives 36, 52 and 70: the double counts. So storing every
// vector in fp32 costs nothing; the fp32 arithmetic inside the stencil does (its rounding is relative to |p|, not to
// the small |Mhat p| of the low modes, and acts as noise that lifts the free spectrum's degeneracy, which the fp64 CG
// exploits: twists theta = (0.01, 0.02, 0.03) pi cost the fp64 CG itself 36 -> 43 at 8^3x16). Only the xpay
// epilogues in fp64: 44. No effect (8^3x16, 12^3x24): QUDA's Polak-Ribiere beta (<r_new, r_new - r_old> / |r_old|^2),
// pAp = Re<p, A p> instead of |Mhat p|^2, kappa exact in fp32, reliable_delta (0.5 ... 1e-4), a precise finish in
// Ro, x accumulated in fp64 every iteration. The cure, built: Ri = Fp32Fp64 (solver.sloppy = "single_fp64",
// kernels/half.hpp), every sloppy field (rs, p, w, v, xs, the operator's temporaries, links, clover) stored in fp32 and
// every arithmetic of the sloppy operator and of the vector updates in fp64: the fp32 bytes, fp64 flops and
// registers. Its partial solution xs is Fp32Fp64 too (the fp32 bytes; its updates summed in fp64). Measured (CPU, GCC,
// 2026-11-24, the same problem, source seed 2103; double / fp32 sloppy / fp32-fp64 sloppy / half sloppy):
//   8^3x16    36 / 44 / 36 / 46      (with halo exchange in z and t: 36 / 41 / 36 / 46)
//   12^3x24   52 / 64 / 52 / 67
//   16^3x32   70 / 79 / 70 / 88
// With stop = Normal: 35 against 35 at 8^3x16 built by GCC (40 against 35 by clang with ASan) and 59 against 51 at
// 12^3x24. On random fields (kappa 0.2: 445 / 446 at 8^3x16) or with twisted phases the counts are equal; on a
// heatbath field at 16^3x32 (beta 6, csw 1, kappa 0.135 / 0.143) double and fp32 sloppy need 112 / 112 and 506 / 507.
// The unit gauge's loss is made while the fp32 CG resolves the low modes, not in the tail (16^3x32, 70 / 86,
// 2026-11-28): going on in fp64 with the fp64 operator (x, r, p kept) from the normal residual 1e-3 on gives 70,
// from 1e-4 (or any later point down to 1e-9) 86. At 32^3x64 (150 / 132, the same day) the loss shows in the last
// decade: the histories agree to 3-4 digits up to iteration 117, and the iterated residual equals the true one to 4
// digits at every reliable update, so it is the fp32 operator's rounding on the lowest modes, not drift; it is made
// earlier too: the fp64 operator from iteration 82 (normal residual 5e-6) on still takes 150 (BENCHMARKS.md).
// The residual history holds, per CG iteration, |r| / |c| of the normal system: the iterated residual, or the true
// one where a reliable update replaced it. Collective (reductions) on all ranks.
// Global sums: two per CG iteration, one double each: |Mhat p|^2 (oe_clover's epilogue writes it per site; it is
// reduced on the device and summed over ranks while the device applies Mhat^dag) and |r|^2 (fused into the
// update r -= alpha w; the device runs x += alpha p while the host waits for it and sums it over ranks, then the host
// launches p = r + beta p). On one rank, where the device's sum is the global one, x's update also computes the next
// direction with beta from that sum on the device (blas::cg_update_direction: one pass over p and one launch less per
// iteration) into a second direction field; a reliable update discards it and rebuilds the direction from p. On any
// number of ranks (unless CgParams::fuse_update is false: tests, comparisons) the residual update is done by the
// operator's last kernel (apply_mdagm_update: oe_clover_dag_update, with the halo exchange where directions are
// partitioned): the host waits for |Mhat p|^2 while the device runs eo_clover_dag, then enqueues r -= alpha Mhat^dag v
// with its |r|^2, so w = A p is never stored (two spinor transfers fewer per iteration; in fp64 and fp32 the same bits
// as the unfused kernels, the sloppy half and fp32/fp64 operators update with w unrounded); on several ranks x's
// update follows it while the host waits for |r|^2 and sums it over ranks. Measured on an H200 (BENCHMARKS.md,
// 2026-11-28), one rank, unit gauge 32^3x64: mixed/single links 12 0.207 -> 0.199 s, double 0.304 -> 0.290 s,
// mixed/half 0.182 -> 0.171 s (164 -> 160 iterations), mixed/single_fp64 0.198 -> 0.192 s. A reliable update adds
// three global sums (|r|^2, <r, p>, and the full residual where the target is met). All are deterministic (fixed order
// on the device and in rank order across ranks). The CG iterations and their own global sums (not those of the
// updates) are counted in the context's metrics (ReductionStats).
#pragma once

#include <functional>
#include <vector>

#include "src/physics/dirac.hpp"

namespace emprism {

// When the solve has converged: Full, the full system's true residual |b - M x| / |b| <= tol; Normal, the true
// residual of the normal system |c - A x_o| / |c| <= tol (QUDA's criterion for its even-odd CG), the full one then
// computed and reported (CgResult::true_residual) but not required.
enum class CgStop { Full, Normal };

struct CgParams {
  double tol = 1e-6;
  int max_iter = 10000;
  // Reliable updates in mixed precision (Ri != Ro): the true residual replaces the iterated one when the latter has
  // fallen below reliable_delta times the largest iterated residual since the last update (QUDA's reliable_delta).
  double reliable_delta = 0.1;
  CgStop stop = CgStop::Full;
  // The residual update r -= alpha A p done by the operator's last kernel (WilsonClover::apply_mdagm_update) instead
  // of A p stored and a kernel of its own. false: the unfused kernels (tests, comparisons).
  bool fuse_update = true;
  int progress_every = 50;
  // Called every progress_every iterations with (iteration, relative CG residual, seconds since start).
  std::function<void(int, double, double)> progress;
};

struct CgResult {
  int iterations = 0;
  int reliable_updates = 0;  // times the true residual replaced the iterated one (the final one included)
  double true_residual = 0;
  bool converged = false;
  bool stagnated = false;  // the true residual stopped improving (precision floor)
  // A residual or a CG coefficient was NaN or infinite (values out of the precision's range): the solve stopped at
  // once. Every rank sees the same global sums, so every rank stops alike.
  bool nonfinite = false;
  double seconds = 0;
  std::vector<double> history;
};

// x is overwritten. outer and inner may be the same object when Ro == Ri.
template <typename Ro, typename Ri>
CgResult solve_eo_cg(WilsonClover<Ro>& outer, WilsonClover<Ri>& inner, const SpinorField<Ro>& b, SpinorField<Ro>& x,
                     const CgParams& params);

}  // namespace emprism
