// test_gpu_propagator.cpp: GPU tests (ctest label "gpu") of the propagator task's device kernels against the host code
// (tests/propagator_device_checks.hpp): the meson contractions (kernels/meson_contract.hpp), the Wuppertal/Jacobi
// smearing (kernels/quark_smearing.hpp) and the point source, on lattices of a few thousand sites. The GPU contracts
// multiply-adds, so the bound is rounding: 256 ulps of double relative to the largest host value.
// Skipped with a message without a GPU. Run by ctest -L gpu.
#include <gtest/gtest.h>

#include <limits>

#include "gpu_support.hpp"
#include "kernels/backend/runtime.hpp"
#include "propagator_device_checks.hpp"

namespace emprism::test {
namespace {

const double kTol = 256 * std::numeric_limits<double>::epsilon();

TEST(GpuPropagator, ContractionsMatchHost) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: the contraction kernels are checked on the CPU backend by PropagatorDevice.*";
  EXPECT_LE(contraction_difference(Geometry::single_rank({8, 6, 4, 10}), {3, 2, 1, 7}, 600), kTol);
  EXPECT_LE(contraction_difference(Geometry({8, 6, 8, 10}, {8, 6, 4, 10}, {0, 0, 4, 0}), {5, 1, 6, 2}, 620), kTol);
}

TEST(GpuPropagator, SmearingMatchesHost) {
  if (no_gpu()) GTEST_SKIP() << "no GPU: the smearing kernels are checked on the CPU backend by PropagatorDevice.*";
  const Geometry g = Geometry::single_rank({8, 6, 4, 6});
  HostGauge u = make_random_gauge(g, 29, 0.5);
  u.fill_halo();
  SmearingParams p;
  p.kind = QuarkSmearingKind::Wuppertal;
  p.steps = 10;
  p.weight = 0.25;
  p.link_kind = LinkSmearingKind::Ape;
  p.link_steps = 3;
  p.link_weight = 0.5;
  EXPECT_LE(smearing_difference(u, 3, p, 640), kTol);
  p.kind = QuarkSmearingKind::Jacobi;
  p.weight = 0.1;
  EXPECT_LE(smearing_difference(u, 0, p, 641), kTol);
}

TEST(GpuPropagator, PointSourceMatchesHost) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  EXPECT_TRUE(point_source_matches(Geometry::single_rank({8, 6, 4, 10}), {5, 3, 2, 9}, 3, 1));
}

}  // namespace
}  // namespace emprism::test
