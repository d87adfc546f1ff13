// test_gpu_half.cpp: the half storage of the sloppy CG (solver.sloppy = "half") on the device (ctest label "gpu"):
// the round trip of a spinor through the device conversions within the fixed point's step, the half operator's A^-1
// packed to 16 bits on the device within half a step of each block's norm, the device's half kernels against its fp32
// ones within the rounding of their outputs and the derived error of the 16-bit A^-1 (half_checks.hpp), and mixed
// precision with half sloppy fields reaching
// 1e-10 on the untwisted unit gauge field and on a random one (checked by the CPU reference operator) within 20% of
// the iterations with fp32 sloppy fields. The same checks as the CPU tests (half_checks.hpp, test_half.cpp).
// Without a GPU every test is skipped with a message.
#include <gtest/gtest.h>

#include "gpu_support.hpp"
#include "half_checks.hpp"

namespace emprism::test {
namespace {

const std::array<double, 4> kAnti{0, 0, 0, 3.14159265358979323846};
const Extents kSmall{4, 4, 4, 8};
const Extents kLat{8, 8, 8, 16};

TEST(GpuHalf, RoundTripWithinTheFixedPointStepOfTheSiteNorm) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 1901), 0.12, 1.0, kAnti, {}, 18);
  EXPECT_LE(half::worst_round_trip(s, 1902), half::kComponentBound);
}

TEST(GpuHalf, CloverEntriesWithinHalfAStepOfTheBlockNorm) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 1906), 0.12, 1.0, kAnti, {}, 18);
  int a_kept = -1;
  const double worst = half::worst_clover_entry(s, a_kept);
  EXPECT_LE(worst, half::kComponentBound);
  EXPECT_GT(worst, 1.0 / (1 << 20)) << "the entries are rounded to 16 bits";
  EXPECT_EQ(a_kept, 0) << "the half operator keeps no A";
}

TEST(GpuHalf, HotKernelsEqualFp32WithinTheRoundingOfHalfAndTheClover) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  for (const int rc : {18, 12}) {
    OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 1903), 0.12, 1.0, {0.3, 0, -0.5, 3.14159}, {}, rc);
    const half::CloverBounds c = half::clover_bounds(s.clover);
    ASSERT_LT(c.eps, 1e-3) << "the bound says something";
    const half::KernelDiffs d = half::kernel_diffs(s, 1904), b = half::kernel_bounds(c, d.x_over_v);
    EXPECT_LE(d.eo, b.eo) << "reconstruct " << rc;
    EXPECT_LE(d.eo_dag, b.eo_dag) << "reconstruct " << rc;
    EXPECT_LE(d.oe, b.oe) << "reconstruct " << rc;
    EXPECT_LE(d.oe_out2, b.oe_out2) << "reconstruct " << rc;
    EXPECT_LE(d.oe_dag, b.oe_dag) << "reconstruct " << rc;
  }
}

void expect_converged(const half::HalfSolve& r) {
  EXPECT_TRUE(r.s.converged);
  EXPECT_TRUE(r.h.converged);
  EXPECT_LE(r.h.true_residual, 1e-10);
  EXPECT_LE(r.reference_residual, 1.01e-10);
  EXPECT_LE(r.h.iterations, 1.2 * r.s.iterations) << "half " << r.h.iterations << ", single " << r.s.iterations;
}

TEST(GpuHalf, UnitGaugeReaches1e10) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  expect_converged(half::solve_single_and_half(kLat, ref::unit_links(kLat), 0.124, 1.0, kAnti, 1e-10, 1905));
}

TEST(GpuHalf, RandomGaugeReaches1e10) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  expect_converged(
      half::solve_single_and_half(kSmall, ref::random_su3_links(kSmall, 1806), 0.2, 1.0, kAnti, 1e-10, 1807));
}

}  // namespace
}  // namespace emprism::test
