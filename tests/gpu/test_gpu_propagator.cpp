// test_gpu_propagator.cpp: GPU tests (ctest label "gpu") of the propagator task's device kernels against the host code
// (tests/propagator_device_checks.hpp): the meson contractions (kernels/meson_contract.hpp), the Wuppertal/Jacobi
// smearing (kernels/quark_smearing.hpp), the APE/stout link smearing (kernels/link_smearing.hpp) and the sources,
// on lattices of a few thousand sites. The GPU contracts multiply-adds, so the bound is rounding: 256 ulps of double
// relative to the largest host value (1e-12 where links are smeared: derived at LinkSmearingMatchesHost). Skipped with
// a message without a GPU. Run by ctest -L gpu.
#include <gtest/gtest.h>

#include <limits>

#include "gpu_support.hpp"
#include "kernels/backend/runtime.hpp"
#include "propagator_device_checks.hpp"

namespace emprism::test {
namespace {

const double kTol = 256 * std::numeric_limits<double>::epsilon();
// With link smearing on the device: the links' bound (LinkSmearingMatchesHost below) carried through the quark
// smearing's linear steps (each entry of H psi sums 6 hops of unit-norm links: the relative error stays of the links').
const double kLinkTol = 1e-12;

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
  EXPECT_LE(smearing_difference(u, 3, p, 640), kLinkTol);
  p.kind = QuarkSmearingKind::Jacobi;
  p.weight = 0.1;
  EXPECT_LE(smearing_difference(u, 0, p, 641), kLinkTol);
  p.link_kind = LinkSmearingKind::None;
  EXPECT_LE(smearing_difference(u, 2, p, 642), kTol);
}

// APE and stout smearing of the slice links (kernels/link_smearing.hpp) vs the host's double path, every link entry
// (O(1)) and the spatial plaquette. Bound: one step forms the staples (2 SU(3) products each, |entries| <= 1: a few
// ulps each, 4 staples and the weighted sum: ~20 ulps) and projects (APE: Newton iteration and Cabibbo-Marinari sweeps
// stopped at 1e-14 |W|, stout: exp(iQ) from sin, cos, acos and pow, whose device versions differ by a few ulps; the
// stopping rule itself allows ~1e-14 between host and device iterates). The step map is Lipschitz with a constant
// L <= (1 - alpha) + (alpha / 4) 12 = 2 (APE, alpha = 0.5; stout rho = 0.1: 1 + 12 rho ~ 2), so after N steps the
// difference is below (2^N - 1) x ~2e-14: 6e-13 for N = 5, hence 1e-12.
TEST(GpuPropagator, LinkSmearingMatchesHost) {
  if (no_gpu())
    GTEST_SKIP() << "no GPU: the link smearing kernels are checked on the CPU backend by PropagatorDevice.*";
  const Geometry g = Geometry::single_rank({8, 8, 6, 4});
  HostGauge u = make_random_gauge(g, 31, 0.5);
  u.fill_halo();
  SmearingParams p;
  p.link_kind = LinkSmearingKind::Ape;
  p.link_steps = 5;
  p.link_weight = 0.5;
  LinkSmearingDifference d = link_smearing_difference(u, 2, p);
  EXPECT_LE(d.links, kLinkTol);
  EXPECT_LE(d.plaquette, kLinkTol);
  p.link_kind = LinkSmearingKind::Stout;
  p.link_weight = 0.1;
  d = link_smearing_difference(u, 1, p);
  EXPECT_LE(d.links, kLinkTol);
  EXPECT_LE(d.plaquette, kLinkTol);
}

// Box-Muller's log, sqrt, sin and cos and the plane wave's phase: a few ulps each on the GPU, inside kTol.
TEST(GpuPropagator, NoiseAndPlaneWaveSourcesMatchHost) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  const Geometry g({8, 6, 4, 20}, {8, 6, 4, 10}, {0, 0, 0, 10});
  EXPECT_LE(source_difference(g, noise_source_params(NoiseKind::Gaussian, 3), {0, 0, 0, 0}), kTol);
  EXPECT_EQ(source_difference(g, noise_source_params(NoiseKind::Z2, 5), {0, 0, 0, 0}), 0.0);  // no arithmetic
  EXPECT_LE(source_difference(g, plane_wave_params({1, 0, -1, 2}), {0.2, 0, 0, 3.14159265358979323846}), kTol);
}

TEST(GpuPropagator, PointSourceMatchesHost) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  EXPECT_TRUE(point_source_matches(Geometry::single_rank({8, 6, 4, 10}), {5, 3, 2, 9}, 3, 1));
}

}  // namespace
}  // namespace emprism::test
