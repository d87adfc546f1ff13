// test_propagator_device.cpp: the propagator task's device pipeline against the host code it replaced
// (tests/propagator_device_checks.hpp): the point source, the quark smearing, the meson contractions and the solve
// of device fields. On the CPU backend the device path runs the host's per-site code in the host's order, so the
// results must be bitwise equal; in a GPU build (these tests run there too) contracted multiply-adds give rounding
// differences, bounded by a few hundred ulps of double. The solve of device fields uses the same kernels and the same
// roundings to the solver's precision as the host-vector solve: equal bits on every backend.
#include <gtest/gtest.h>

#include <limits>

#include "propagator_device_checks.hpp"
#include "src/physics/gauge_device.hpp"
#include "src/run/solver.hpp"

namespace emprism::test {
namespace {

double allowed() { return backend::device_is_host() ? 0.0 : 256 * std::numeric_limits<double>::epsilon(); }

SmearingParams smearing(QuarkSmearingKind kind, int steps, double w, LinkSmearingKind link, int link_steps, double lw) {
  SmearingParams p;
  p.kind = kind;
  p.steps = steps;
  p.weight = w;
  p.link_kind = link;
  p.link_steps = link_steps;
  p.link_weight = lw;
  return p;
}

TEST(PropagatorDevice, ContractionsMatchHostOnOneRank) {
  const Geometry g = Geometry::single_rank({4, 6, 4, 8});
  EXPECT_LE(contraction_difference(g, {1, 2, 3, 5}, 300), allowed());
  EXPECT_LE(contraction_difference(g, {0, 0, 0, 0}, 320), allowed());
}

TEST(PropagatorDevice, ContractionsMatchHostOnABlockOfALargerLattice) {
  // A rank's block (origin not 0): the momentum phases and the timeslices use the global coordinates.
  const Geometry g({4, 6, 8, 8}, {4, 6, 4, 4}, {0, 0, 4, 4});
  EXPECT_LE(contraction_difference(g, {3, 1, 2, 6}, 340), allowed());
}

TEST(PropagatorDevice, PointSourceMatchesMakeSource) {
  const Geometry g = Geometry::single_rank({4, 4, 6, 8});
  EXPECT_TRUE(point_source_matches(g, {0, 0, 0, 0}, 0, 0));
  EXPECT_TRUE(point_source_matches(g, {3, 1, 5, 7}, 2, 1));
  EXPECT_TRUE(point_source_matches(g, {2, 3, 4, 3}, 3, 2));
  const Geometry block({4, 4, 6, 8}, {4, 4, 6, 4}, {0, 0, 0, 4});
  EXPECT_TRUE(point_source_matches(block, {1, 2, 3, 2}, 1, 1));  // not on this block: all zero
  EXPECT_TRUE(point_source_matches(block, {1, 2, 3, 6}, 1, 1));
}

// The solve task's sources (kernels/source_fill.hpp): the same draws and operations as make_source, so on the CPU
// backend the same bits, on a whole lattice and on a block of a larger one (global coordinates, no decomposition).
TEST(PropagatorDevice, NoiseSourcesMatchMakeSource) {
  const Geometry block({4, 4, 6, 8}, {4, 4, 6, 4}, {0, 0, 0, 4});
  for (const Geometry& g : {Geometry::single_rank({4, 4, 6, 8}), block}) {
    EXPECT_EQ(source_difference(g, noise_source_params(NoiseKind::Gaussian, 7), {0, 0, 0, 0}), 0.0);
    EXPECT_EQ(source_difference(g, noise_source_params(NoiseKind::Z2, 1ull << 40), {0, 0, 0, 0}), 0.0);
  }
}

TEST(PropagatorDevice, PlaneWaveSourceMatchesMakeSource) {
  const Geometry block({4, 4, 6, 8}, {4, 4, 6, 4}, {0, 0, 0, 4});
  const std::array<double, 4> theta{0.3, 0, -0.2, 3.14159265358979323846};
  for (const Geometry& g : {Geometry::single_rank({4, 4, 6, 8}), block})
    EXPECT_EQ(source_difference(g, plane_wave_params({1, -2, 0, 3}), theta), 0.0);
}

TEST(PropagatorDevice, SmearingMatchesHost) {
  const Geometry g = Geometry::single_rank({6, 4, 4, 6});
  HostGauge u = make_random_gauge(g, 17, 0.5);
  u.fill_halo();
  using Q = QuarkSmearingKind;
  using L = LinkSmearingKind;
  // with smeared links, on a GPU the links' rounding (tests/gpu/test_gpu_propagator.cpp) bounds the difference
  const double linked = backend::device_is_host() ? 0.0 : 1e-12;
  EXPECT_LE(smearing_difference(u, 2, smearing(Q::Wuppertal, 5, 0.25, L::Ape, 2, 0.5), 400), linked);
  EXPECT_LE(smearing_difference(u, 0, smearing(Q::Jacobi, 4, 0.1, L::Stout, 2, 0.1), 401), linked);
  EXPECT_LE(smearing_difference(u, 5, smearing(Q::Wuppertal, 3, 0.4, L::None, 0, 0), 402), allowed());
  EXPECT_EQ(smearing_difference(u, 1, smearing(Q::None, 0, 0, L::None, 0, 0), 403), 0.0);
}

// Link smearing of a field generated and kept on the device (the run's random field: the slice read there) vs the
// host path on its download: bits on the CPU backend, 1e-12 on a GPU (tests/gpu/test_gpu_propagator.cpp).
TEST(PropagatorDevice, LinkSmearingOfDeviceFieldMatchesHost) {
  const Geometry g = Geometry::single_rank({6, 4, 4, 4});
  MetricsRegistry metrics;
  const DeviceGauge dev = make_random_gauge_device(metrics, g, 47, 0.6);
  const HostGauge u = download_gauge(metrics, dev);
  SmearingParams p;
  p.link_kind = LinkSmearingKind::Stout;
  p.link_steps = 2;
  p.link_weight = 0.12;
  const LinkSmearingDifference d = link_smearing_difference(u, 1, p, &dev);
  const double tol = backend::device_is_host() ? 0.0 : 1e-12;
  EXPECT_LE(d.links, tol);
  EXPECT_LE(d.plaquette, tol);
}

// The links smeared by the device kernels (kernels/link_smearing.hpp) and their plaquette: the host's bits on the CPU
// backend; in a GPU build tests/gpu/test_gpu_propagator.cpp derives the rounding bound (1e-12).
TEST(PropagatorDevice, LinkSmearingMatchesHost) {
  const Geometry g = Geometry::single_rank({4, 6, 4, 6});
  HostGauge u = make_random_gauge(g, 23, 0.6);
  u.fill_halo();
  using Q = QuarkSmearingKind;
  using L = LinkSmearingKind;
  const double tol = backend::device_is_host() ? 0.0 : 1e-12;
  for (const SmearingParams& p : {smearing(Q::None, 0, 0, L::Ape, 3, 0.5), smearing(Q::None, 0, 0, L::Stout, 3, 0.15),
                                  smearing(Q::Wuppertal, 1, 0.2, L::None, 0, 0)}) {
    const LinkSmearingDifference d = link_smearing_difference(u, 3, p);
    EXPECT_LE(d.links, tol) << "link kind " << static_cast<int>(p.link_kind);
    EXPECT_LE(d.plaquette, tol) << "link kind " << static_cast<int>(p.link_kind);
  }
}

void check_solve_device(Precision precision, double tol) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 6});
  HostGauge u = make_random_gauge(g, 23, 0.4);
  u.fill_halo();
  MetricsRegistry metrics;
  Communicator comm;
  ProcessGrid grid;
  grid.cart = MPI_COMM_WORLD;
  Context ctx{metrics, comm, grid};
  DiracParams params;
  params.kappa = 0.12;
  params.csw = 1.0;
  params.theta = {0, 0, 0, 3.14159265358979323846};
  const auto solver = run::make_solver(precision, Sloppy::Single, ctx, g, u, params);
  const std::vector<Cd> b = ref::random_spinor(g.local(), 500);
  CgParams cp;
  cp.tol = tol;
  std::vector<Cd> x_host;
  const CgResult r_host = solver->solve(b, cp, &x_host);
  SpinorField<double> bf(g), xf(g);
  spinor_from_natural(g, b, bf);
  const CgResult r_dev = solver->solve_device(bf, cp, xf);
  ASSERT_TRUE(r_host.converged);
  EXPECT_EQ(r_dev.iterations, r_host.iterations);
  EXPECT_EQ(r_dev.true_residual, r_host.true_residual);
  EXPECT_EQ(spinor_to_natural(g, xf), x_host);
}

TEST(PropagatorDevice, SolveOfDeviceFieldsMatchesSolveDouble) { check_solve_device(Precision::Double, 1e-10); }
TEST(PropagatorDevice, SolveOfDeviceFieldsMatchesSolveMixed) { check_solve_device(Precision::Mixed, 1e-10); }
TEST(PropagatorDevice, SolveOfDeviceFieldsMatchesSolveSingle) { check_solve_device(Precision::Single, 1e-5); }

}  // namespace
}  // namespace emprism::test
