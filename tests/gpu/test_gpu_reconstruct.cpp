// test_gpu_reconstruct.cpp: GPU tests (ctest label "gpu") of the operator with links of 12 and 8 reals
// (dirac.reconstruct): for every precision x format, the device's full M, eo_clover (and its dagger) and the halo code
// (every direction forced through the exchange on one rank: packing with links, exterior kernels) against the
// independent CPU reference (tests/reference) on a Haar-random field with a twisted x and antiperiodic t, within
// tolerance<R>() (the bar of the 18-real tests); and a mixed-precision solve with packed links whose true residual
// under the reference operator reaches the tolerance. Skipped with a message without a GPU.
// Links of 8 reals on the GPU are unpacked with the hardware's approximate functions (kernels/backend/defs.hpp): in
// fp32 the magnitudes |V00|, |V20|, the divisor 1/n and the phases' 1 / (1 + t^2) (kernels/link_format.hpp) come
// from the approximate reciprocal square root and reciprocal (fast_sqrt, fast_rcp: 2 ulp each on NVIDIA GPUs against
// IEEE's 0.5), errors of the order of fp32's own rounding (a few ulps per entry, amplified like that rounding by 1/n),
// which tolerance<float>() covers as it covers the CPU's; in fp64 the fp64 approximations refined by Newton steps
// (refined_sqrt, refined_rcp: within 2^-53 relative, about 1 ulp), fp64 rounding, far inside tolerance<double>() =
// 1e-12.
#include <gtest/gtest.h>

#include "gpu_support.hpp"
#include "kernels/backend/runtime.hpp"
#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const std::array<double, 4> kTheta{0.7 * kPi, 0.0, -0.5, kPi};
const Extents kLat{8, 6, 4, 10};
const double kKappa = 0.12, kCsw = 1.3;

template <typename R>
void check_format(int rc, const std::array<bool, 4>& force) {
  const auto links = ref::random_su3_links(kLat, 501);
  OperatorSetup<R> s(kLat, links, kKappa, kCsw, kTheta, force, rc);
  ASSERT_EQ(s.op->links().reconstruct(), rc);
  const auto psi = ref::random_spinor(kLat, 502);
  EXPECT_LT(rel_diff(s.apply_m(psi), ref::apply_wilson_clover(kLat, links, kKappa, kCsw, kTheta, psi)), tolerance<R>())
      << "M";
  // eo_clover: A_ee out_e = (H psi_o)_e (H^dag = g5 H g5 for the dagger)
  const auto psi_o = on_parity(kLat, psi, 1);
  const SpinorField<R> in = s.field(psi_o);
  for (bool dag : {false, true}) {
    SpinorField<R> out(s.geom);
    s.op->eo_clover(out.even, in.odd, dag);
    const auto a_out = ref::apply_clover_term(kLat, links, kKappa, kCsw, s.natural(out));
    const auto h = dag ? ref::apply_gamma5(ref::apply_hopping(kLat, links, kTheta, ref::apply_gamma5(psi_o)))
                       : ref::apply_hopping(kLat, links, kTheta, psi_o);
    EXPECT_LT(rel_diff(a_out, on_parity(kLat, h, 0)), tolerance<R>()) << "eo_clover dag " << dag;
  }
}

TEST(GpuReconstruct, TwelveRealsMatchCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_format<float>(12, {});
  check_format<double>(12, {});
}

TEST(GpuReconstruct, EightRealsMatchCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  check_format<float>(8, {});
  check_format<double>(8, {});
}

TEST(GpuReconstruct, ForcedHaloWithPackedLinksMatchesCpuReference) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  for (int rc : {12, 8}) {
    SCOPED_TRACE(rc);
    check_format<float>(rc, {true, true, true, true});
    check_format<double>(rc, {true, true, true, true});
  }
}

TEST(GpuReconstruct, MixedSolveWithPackedLinksReachesTolerance) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: this build uses the " << backend::name() << " backend or sees no device";
  const auto links = ref::random_su3_links(kLat, 503);
  const auto b = ref::random_spinor(kLat, 504);
  for (int rc : {12, 8}) {
    OperatorSetup<double> outer(kLat, links, kKappa, kCsw, kTheta, {}, rc);
    WilsonClover<float> inner(outer.ctx, *outer.op);
    SpinorField<double> bf = outer.field(b), x(outer.geom);
    CgParams p;
    p.tol = 1e-10;
    EXPECT_TRUE(solve_eo_cg(*outer.op, inner, bf, x, p).converged) << rc;
    EXPECT_LT(rel_diff(ref::apply_wilson_clover(kLat, links, kKappa, kCsw, kTheta, outer.natural(x)), b), 2e-10) << rc;
  }
}

}  // namespace
}  // namespace emprism::test
