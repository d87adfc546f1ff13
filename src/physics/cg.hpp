// cg.hpp: the even-odd preconditioned CG solver for M x = b (docs/conventions.md section 6).
// Outer loop (precision Ro): r = b - M x, the true residual of the full system, recomputed; stop when
// |r| / |b| <= tol. Inner solve (precision Ri) of M e = r: bhat = prepared source, CG on
// Mhat^dag Mhat e_o = Mhat^dag bhat, e_e reconstructed, x += e. With Ro = Ri this is CG with restarts on the
// true residual; with Ro = double, Ri = float it is mixed-precision defect correction (reliable updates).
// Stops when converged, after max_iter CG iterations in all (max_iter always holds), when the true residual
// stagnates, or at the first residual or CG coefficient that is not finite (CgResult::nonfinite; checked every
// iteration). The residual history holds, per CG iteration, |Mhat^dag (bhat - Mhat e_o)| relative to the first cycle's
// |Mhat^dag bhat|. Collective (reductions) on all ranks.
// Global sums: two per CG iteration, one double each: |Mhat p|^2 (oe_clover's epilogue writes it per site; it is
// reduced on the device and summed over ranks while the device applies Mhat^dag) and |r|^2 (fused into the
// update x += alpha p, r -= alpha w). Both are deterministic (fixed order on the device and in rank order across
// ranks). The inner iterations and their global sums are counted in the context's metrics (ReductionStats).
#pragma once

#include <functional>
#include <vector>

#include "src/physics/dirac.hpp"

namespace emprism {

struct CgParams {
  double tol = 1e-6;
  int max_iter = 10000;
  int progress_every = 50;
  // Called every progress_every iterations with (iteration, relative CG residual, seconds since start).
  std::function<void(int, double, double)> progress;
};

struct CgResult {
  int iterations = 0;
  int restarts = 0;  // outer cycles after the first
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
