// costs.hpp: flops and minimum bytes per site of the launches of the Wilson-clover operator and of the CG's vector
// updates, declared once: their launchers record them (src/physics/dirac_impl.hpp, src/physics/blas.cpp) and
// cg_iteration_cost adds up those of one CG iteration (--dry-run, src/run/plan.cpp).
// Per output site, with S the bytes of one stored spinor of the precision R (24 R; half: 56, 24 int16 and a float norm
// per chiral half), C those of the clover block pair a kernel reads (72 R; half: 152, A^-1 in 16 bits with 2 norms;
// fp32: 224, A compressed, kernels/clover_dynamic.hpp) and R = sizeof(store_t) (fp32 for the links of the half
// operator and for links and clover of the fp32/fp64 operator, whose spinors are 96 bytes too):
//   hopping 1320 flops, 8 G + S, G = 18, 12 or 8 R (a link in its format; each input spinor counted once, reused by
//   neighbours; the launcher adds the links, since the format is chosen at run time); unpacking a link of 12 or 8
//   reals is not counted (the flops of a call are those of the operator, whatever the format)
//   clover mat-vec 552 flops, C;  xpay 48 flops, S;  |v|^2 of a site (oe_clover for CG) 48 flops, 8 bytes
// Who may include: the physics launchers and whoever estimates their cost (host code; nothing here launches).
#pragma once

#include "kernels/wilson_clover.hpp"

namespace emprism {

struct SiteCost {
  double flops = 0, bytes = 0;
};
constexpr SiteCost operator+(SiteCost a, SiteCost b) { return {a.flops + b.flops, a.bytes + b.bytes}; }
constexpr SiteCost operator*(double k, SiteCost a) { return {k * a.flops, k * a.bytes}; }

inline constexpr double kHopFlops = 1320, kCloverFlops = 552, kXpayFlops = 48, kNormFlops = 48;

// Bytes of one stored spinor (S) and clover block pair (C) of the precision R.
template <typename R>
inline constexpr double kS = PrecisionTraits<R>::spinor_bytes;
template <typename R>
inline constexpr double kC = kCloverDynamic<R> ? double(sizeof(CloverSiteC)) : 72.0 * sizeof(store_t<R>);
template <>
inline constexpr double kC<Half> = 2 * (sizeof(CloverBlock16) + sizeof(float));

// The eight links of a site in the format of `link_reals` reals, stored in R's link precision.
template <typename R>
constexpr double link_bytes(int link_reals) {
  return 8.0 * link_reals * sizeof(store_t<R>);
}

// The hot kernels of Mhat^dag Mhat (dirac.hpp), the links not included.
template <typename R>
inline constexpr SiteCost kEoCloverCost{kHopFlops + kCloverFlops, 2 * kS<R> + kC<R>};  // eo_clover and eo_clover_dag
template <typename R>
inline constexpr SiteCost kOeCloverCost{kHopFlops + 2 * kCloverFlops + kXpayFlops, 4 * kS<R> + kC<R>};  // two outputs
inline constexpr SiteCost kSiteNormCost{kNormFlops, 8};  // oe_clover's |v|^2 per site, one double written
inline constexpr SiteCost kSiteSumCost{1, 8};            // oe_clover_norm: the sum of those doubles
template <typename R>
inline constexpr SiteCost kOeCloverDagCost{kHopFlops + kXpayFlops, 3 * kS<R>};
// oe_clover_dag with the CG's residual update (r -= alpha w, |r|^2 per site): r read and written instead of w written.
template <typename R>
inline constexpr SiteCost kOeCloverDagUpdateCost = kOeCloverDagCost<R> + SiteCost{48, kS<R>} + kSiteNormCost;

// The CG's vector updates (blas.hpp); solution_t<R> is the precision of the sloppy CG's partial solution.
template <typename R>
inline constexpr SiteCost kResidualUpdateCost{96, 3 * kS<R>};  // r -= alpha w with |r|^2
template <typename R, typename Rx>
inline constexpr SiteCost kAxpyCost{48, 2 * kS<R> + kS<Rx>};  // y += a x
template <typename R>
inline constexpr SiteCost kAxpbyCost{72, 3 * kS<R>};  // y = a x + b y
template <typename R>
inline constexpr SiteCost kDirectionCost{120, 3 * kS<R> + 2 * kS<solution_t<R>>};  // x += alpha p, p_next = r + beta p

// One CG iteration on Mhat^dag Mhat in the precision R (a mixed solve's sloppy one; its reliable updates not counted)
// with links of `link_reals` reals, per even site: the four hot kernels apply_mdagm launches (oe_clover with the
// fused |Mhat p|^2 and its sum), the residual update, and x's and p's updates. The residual update is oe_clover_dag's
// (oe_clover_dag_update and the sum of its |r|^2, physics/cg.hpp), or with fused false (CgParams::fuse_update) a
// kernel of its own after oe_clover_dag; on one rank x's and p's updates are one pass (blas::cg_update_direction,
// cg_direction_after), on several two launches (blas::cg_solution_after's axpy, blas::axpby).
template <typename R>
constexpr SiteCost cg_iteration_cost(int link_reals = 18, int ranks = 1, bool fused = true) {
  const SiteCost links{0, link_bytes<R>(link_reals)};
  const SiteCost head = 2 * kEoCloverCost<R> + kOeCloverCost<R> + kSiteNormCost + kSiteSumCost + 4 * links;
  const SiteCost update =
      fused ? kOeCloverDagUpdateCost<R> + kSiteSumCost : kOeCloverDagCost<R> + kResidualUpdateCost<R>;
  const SiteCost x_and_p = ranks == 1 ? kDirectionCost<R> : kAxpyCost<solution_t<R>, R> + kAxpbyCost<R>;
  return head + update + x_and_p;
}

}  // namespace emprism
