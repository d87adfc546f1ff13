// test_gpu_f32d.cpp: the fp32/fp64 sloppy operator (solver.sloppy = "single_fp64") on the device (ctest label "gpu"):
// its hot kernels against the fp64 operator on the same fp32 fields (links of 18 reals; of 12 reals exact in fp32 with
// their row 2, f32d_checks.hpp), within fp64 rounding
// of the fp64 outputs rounded to fp32, far closer than the device's fp32 kernels; and mixed precision with it within 5%
// of the double CG's iterations on the untwisted unit gauge field, converged to 1e-10 by the CPU reference operator.
// The same checks as the CPU tests (f32d_checks.hpp, test_f32d.cpp). Without a GPU every test is skipped with a
// message.
#include <gtest/gtest.h>

#include "f32d_checks.hpp"
#include "gpu_support.hpp"

namespace emprism::test {
namespace {

const std::array<double, 4> kAnti{0, 0, 0, 3.14159265358979323846};
const Extents kLat{8, 8, 8, 16};

TEST(GpuF32d, HotKernelsEqualFp64OnFp32FieldsToFp64Rounding) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  for (const int rc : {18, 12}) {
    // links of 12 reals: exact in fp32 with their row 2 (f32d::dyadic_su3_links, f32d_checks.hpp)
    const auto links = rc == 12 ? f32d::dyadic_su3_links(kLat, 2201) : ref::random_su3_links(kLat, 2201);
    OperatorSetup<double> s(kLat, links, 0.12, 1.0, {0.3, 0, -0.5, 3.14159}, {}, rc);
    const f32d::KernelDiffs d = f32d::kernel_diffs<Fp32Fp64>(s, 2202);
    const f32d::KernelDiffs f = f32d::kernel_diffs<float>(s, 2202);
    EXPECT_LE(d.worst(), f32d::kFp64Level) << "reconstruct " << rc;
    EXPECT_GT(std::min({f.eo, f.eo_dag, f.oe, f.oe_out2, f.oe_dag}), 8 * f32d::kFp64Level) << "reconstruct " << rc;
  }
}

TEST(GpuF32d, UnitGaugeMixedIterationsWithin5PercentOfDouble) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  const f32d::Counts c = f32d::solve_double_and_f32d(kLat, ref::unit_links(kLat), 0.124, 1.0, kAnti, 1e-10, 2103);
  EXPECT_TRUE(c.d.converged);
  EXPECT_TRUE(c.m.converged);
  EXPECT_LE(c.reference_residual, 1.01e-10);
  EXPECT_LE(c.m.iterations, 1.05 * c.d.iterations) << "fp32/fp64 " << c.m.iterations << ", double " << c.d.iterations;
}

}  // namespace
}  // namespace emprism::test
