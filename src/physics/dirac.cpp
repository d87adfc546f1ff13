// dirac.cpp: WilsonClover<double> (src/physics/dirac_impl.hpp holds the definitions; the other precisions are
// instantiated in dirac_float.cpp, dirac_half.cpp and dirac_f32d.cpp, so that they compile in parallel) and
// cg_iteration_cost.
#include "src/physics/dirac_impl.hpp"

namespace emprism {

template class WilsonClover<double>;
// The fp64 operator on the links and clover of an fp32 one (exact): the tests' reference for the fp32/fp64 operator.
template WilsonClover<double>::WilsonClover(Context&, const WilsonClover<float>&);

IterationCost cg_iteration_cost(int real_bytes, int link_reals, int ranks) {
  const double links = 8.0 * link_reals;
  // fp32: A compressed where the kernels read it so (kernels/clover_dynamic.hpp)
  const double clover = real_bytes == 4 && kCloverDynamic<float> ? sizeof(CloverSiteC) / 4.0 : 72;
  const double eo = links + 24 + clover + 24, oe = eo + 24 + 24, oe_dag = links + 24 + 24 + 24;  // reals per site
  // r -= alpha w, x += alpha p; p = r + beta p (one rank: x and p in one pass, p read once)
  const double cg_update = 3 * 24 + 3 * 24, axpby = ranks == 1 ? 2 * 24 : 3 * 24;
  IterationCost c;
  c.flops = 2 * (kHopFlops + kCloverFlops) + (kHopFlops + 2 * kCloverFlops + kXpayFlops + kNormFlops) +
            (kHopFlops + kXpayFlops) + 144 + 72;
  c.bytes = (2 * eo + oe + oe_dag + cg_update + axpby) * real_bytes + 8;  // + the double |v|^2 per site
  return c;
}

}  // namespace emprism
