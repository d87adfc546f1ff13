// test_gpu_half.cpp: the half storage of the sloppy CG (solver.sloppy = "half") on the device (ctest label "gpu"):
// the round trip of a spinor through the device conversions within the fixed point's step, the device's half kernels
// against its fp32 ones within the rounding of their outputs, and mixed precision with half sloppy fields reaching
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

TEST(GpuHalf, HotKernelsEqualFp32WithinTheRoundingOfHalf) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  for (const int rc : {18, 12}) {
    OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 1903), 0.12, 1.0, {0.3, 0, -0.5, 3.14159}, {}, rc);
    const half::KernelDiffs d = half::kernel_diffs(s, 1904);
    const double bound = half::kFieldBound + half::kArithmetic;
    EXPECT_LE(d.eo, bound) << "reconstruct " << rc;
    EXPECT_LE(d.eo_dag, bound) << "reconstruct " << rc;
    EXPECT_LE(d.oe, bound) << "reconstruct " << rc;
    EXPECT_LE(d.oe_out2, bound) << "reconstruct " << rc;
    EXPECT_LE(d.oe_dag, bound) << "reconstruct " << rc;
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
