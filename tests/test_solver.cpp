// test_solver.cpp: the even-odd CG solver. The solution is checked with the independent reference operator
// (never with the solver's own residual), against the analytic free propagator, and through the free pion
// correlator, in double, single and mixed precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "operator_fixture.hpp"
#include "src/physics/blas.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/costs.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const std::array<double, 4> kAnti{0, 0, 0, kPi};

// |b - M x| / |b| with the reference operator.
double reference_residual(const Extents& lat, const std::vector<Cd>& links, double kappa, double csw,
                          const std::array<double, 4>& theta, const std::vector<Cd>& x, const std::vector<Cd>& b) {
  return rel_diff(ref::apply_wilson_clover(lat, links, kappa, csw, theta, x), b);
}

template <typename Ro, typename Ri>
CgResult solve(OperatorSetup<Ro>& s, WilsonClover<Ri>& inner, const std::vector<Cd>& b_nat, std::vector<Cd>& x_nat,
               double tol, int max_iter = 5000) {
  SpinorField<Ro> b = s.field(b_nat), x(s.geom);
  CgParams p;
  p.tol = tol;
  p.max_iter = max_iter;
  const CgResult r = solve_eo_cg(*s.op, inner, b, x, p);
  x_nat = s.natural(x);
  return r;
}

TEST(Solver, EvenOddSolveSolvesFullSystemDouble) {
  const Extents lat{4, 6, 8, 10};
  const auto links = ref::random_su3_links(lat, 101);
  OperatorSetup<double> s(lat, links, 0.115, 1.2, kAnti);
  const auto b = ref::random_spinor(lat, 102);
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, b, x, 1e-11);
  ASSERT_TRUE(r.converged);
  EXPECT_LE(r.true_residual, 1e-11);
  EXPECT_LT(reference_residual(lat, links, 0.115, 1.2, kAnti, x, b), 1.01e-11);
  EXPECT_EQ(static_cast<int>(r.history.size()), r.iterations);
}

TEST(Solver, SinglePrecisionMeetsItsTolerance) {
  const Extents lat{6, 4, 4, 8};
  const auto links = ref::random_su3_links(lat, 111);
  OperatorSetup<float> s(lat, links, 0.115, 1.0, kAnti);
  const auto b = ref::random_spinor(lat, 112);
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, b, x, 1e-5);
  ASSERT_TRUE(r.converged);
  EXPECT_LE(r.true_residual, 1e-5);
  // The fp32 solution checked in double by the reference: within tol plus fp32 rounding of the operator.
  EXPECT_LT(reference_residual(lat, links, 0.115, 1.0, kAnti, x, b), 1e-5 + 1e-6);
}

TEST(Solver, MixedPrecisionReachesDoubleTolerance) {
  const Extents lat{6, 4, 4, 8};
  const auto links = ref::random_su3_links(lat, 121);
  OperatorSetup<double> s(lat, links, 0.115, 1.0, kAnti);
  OperatorSetup<float> sloppy(lat, links, 0.115, 1.0, kAnti);
  const auto b = ref::random_spinor(lat, 122);
  std::vector<Cd> x;
  const CgResult r = solve(s, *sloppy.op, b, x, 1e-11);
  ASSERT_TRUE(r.converged);
  EXPECT_GE(r.reliable_updates, 2);  // fp32 CG alone cannot reach 1e-11: reliable updates did
  EXPECT_LT(reference_residual(lat, links, 0.115, 1.0, kAnti, x, b), 1.01e-11);
}

TEST(Solver, ZeroSourceGivesZeroSolution) {
  const Extents lat{4, 4, 4, 4};
  OperatorSetup<double> s(lat, ref::random_su3_links(lat, 131), 0.12, 1.0, kAnti);
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, std::vector<Cd>(lat[0] * lat[1] * lat[2] * lat[3] * 12), x, 1e-10);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(ref::norm2(x), 0.0);
}

TEST(Solver, IterationLimitReportsNotConverged) {
  const Extents lat{4, 4, 4, 8};
  const auto links = ref::random_su3_links(lat, 141);
  OperatorSetup<double> s(lat, links, 0.124, 1.0, kAnti);
  const auto b = ref::random_spinor(lat, 142);
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, b, x, 1e-12, 5);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 5);
  // The reported true residual is the real one of the returned solution.
  EXPECT_NEAR(r.true_residual, reference_residual(lat, links, 0.124, 1.0, kAnti, x, b), 1e-12);
  EXPECT_GT(r.true_residual, 1e-12);
}

// Point source on the unit gauge field: the solution is a column of the analytic propagator.
TEST(Solver, FreePointSourceMatchesMomentumSpacePropagator) {
  const Extents lat{4, 6, 4, 8};
  const std::array<double, 4> theta{0.2, 0, 0, kPi};
  OperatorSetup<double> s(lat, ref::unit_links(lat), 0.12, 1.0, theta);
  SourceParams sc;
  sc.kind = SourceKind::Point;
  sc.site = {1, 2, 3, 5};
  sc.spin = 2;
  sc.colour = 1;
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, make_source(s.geom, sc, theta), x, 1e-12);
  ASSERT_TRUE(r.converged);
  const auto expect = ref::free_point_propagator(lat, 0.12, theta, {1, 2, 3, 5}, 2, 1);
  EXPECT_LT(rel_diff(x, expect), 1e-10);
}

// C(t) = sum over space, spins and colours of |S(x,t)|^2 from the 12 point-source solves on 4^3x8 at
// kappa = 0.12 equals the value from the analytic propagator.
TEST(Solver, FreePionCorrelatorMatchesAnalytic) {
  const Extents lat{4, 4, 4, 8};
  OperatorSetup<double> s(lat, ref::unit_links(lat), 0.12, 1.0, kAnti);
  std::vector<double> corr(8, 0.0);
  for (int spin = 0; spin < 4; ++spin)
    for (int colour = 0; colour < 3; ++colour) {
      SourceParams sc;
      sc.kind = SourceKind::Point;
      sc.spin = spin;
      sc.colour = colour;
      std::vector<Cd> x;
      ASSERT_TRUE(solve(s, *s.op, make_source(s.geom, sc, kAnti), x, 1e-12).converged);
      for (std::size_t i = 0; i < x.size(); ++i) corr[i / 12 / 64] += std::norm(x[i]);
    }
  const auto expect = ref::free_pion_correlator(lat, 0.12, kAnti, {0, 0, 0, 0});
  for (int t = 0; t < 8; ++t) EXPECT_NEAR(corr[t] / expect[t], 1.0, 1e-9) << "t = " << t;
}

// On one rank the CG computes the next direction in the pass that updates x (blas::cg_update_direction): a row
// blas_cg_direction with one call per iteration, and no separate x update.
TEST(Solver, OneRankComputesTheDirectionWithTheSolutionUpdate) {
  const Extents lat{4, 4, 4, 8};
  const auto links = ref::random_su3_links(lat, 141);
  OperatorSetup<double> s(lat, links, 0.12, 1.0, kAnti);
  ASSERT_EQ(s.comm.size(), 1);
  std::vector<Cd> x;
  const CgResult r = solve(s, *s.op, ref::random_spinor(lat, 142), x, 1e-10);
  ASSERT_TRUE(r.converged);
  std::int64_t direction_calls = -1;
  for (const KernelMetric& row : s.metrics.table()) {
    EXPECT_NE(row.name, "blas_cg_solution");
    if (row.name == "blas_cg_direction") direction_calls = row.calls;
  }
  EXPECT_EQ(direction_calls, r.iterations);
}

// ParitySpinor<R> a - b relative to a, in double.
template <typename R>
double rel_diff_field(Context& ctx, const Geometry& g, const ParitySpinor<R>& a, const ParitySpinor<R>& b) {
  ParitySpinor<double> da(g), db(g);
  blas::convert(ctx, da, a);
  blas::convert(ctx, db, b);
  blas::axpby(ctx, 1.0, da, -1.0, db);
  return std::sqrt(blas::norm2(ctx, db) / blas::norm2(ctx, da));
}

// The fused update (r -= alpha w; x += alpha p; p_next = r + |r|^2 / rr_old p, beta read on the device) equals
// cg_update followed by axpby: the same |r|^2 and r (the same kernel), x and the direction within a few roundings of
// the precision (the fused kernel may round its sums otherwise), and p left as it was.
template <typename R>
void check_direction_update_equals_split() {
  const Extents lat{4, 4, 4, 8};
  OperatorSetup<double> s(lat, ref::random_su3_links(lat, 151), 0.12, 1.0, kAnti);
  auto odd = [&](std::uint64_t seed) { return s.field(ref::random_spinor(lat, seed)); };
  const SpinorField<double> fp = odd(152), fw = odd(153), fr = odd(154), fx = odd(155);
  ParitySpinor<R> p1(s.geom), p2(s.geom), w(s.geom), r1(s.geom), r2(s.geom), pn(s.geom), p0(s.geom);
  ParitySpinor<solution_t<R>> x1(s.geom), x2(s.geom);
  for (ParitySpinor<R>* f : {&p1, &p2, &p0}) blas::convert(s.ctx, *f, fp.odd);
  for (ParitySpinor<R>* f : {&r1, &r2}) blas::convert(s.ctx, *f, fr.odd);
  for (ParitySpinor<solution_t<R>>* f : {&x1, &x2}) blas::convert(s.ctx, *f, fx.odd);
  blas::convert(s.ctx, w, fw.odd);
  const double alpha = 0.37, rr_old = 1.7 * blas::norm2(s.ctx, r1);
  const double rr1 = blas::cg_update(s.ctx, alpha, p1, w, x1, r1);
  blas::axpby(s.ctx, 1.0, r1, rr1 / rr_old, p1);
  const double rr2 = blas::cg_update_direction(s.ctx, alpha, rr_old, p2, w, x2, r2, pn);
  const double tol = 4 * PrecisionTraits<R>::epsilon;
  EXPECT_EQ(rr1, rr2);
  EXPECT_EQ(rel_diff_field(s.ctx, s.geom, r1, r2), 0.0);
  EXPECT_LE(rel_diff_field(s.ctx, s.geom, x1, x2), tol);
  EXPECT_LE(rel_diff_field(s.ctx, s.geom, p1, pn), tol);
  EXPECT_EQ(rel_diff_field(s.ctx, s.geom, p0, p2), 0.0);
}

TEST(Solver, FusedDirectionUpdateEqualsTheSplitOneDouble) { check_direction_update_equals_split<double>(); }
TEST(Solver, FusedDirectionUpdateEqualsTheSplitOneSingle) { check_direction_update_equals_split<float>(); }
TEST(Solver, FusedDirectionUpdateEqualsTheSplitOneHalf) { check_direction_update_equals_split<Half>(); }
TEST(Solver, FusedDirectionUpdateEqualsTheSplitOneFp32Fp64) { check_direction_update_equals_split<Fp32Fp64>(); }

// The dry run's iteration cost (src/physics/costs.hpp cg_iteration_cost<Ri>) is what the CG's launches record: a mixed
// solve on one rank whose sloppy operator records into a registry of its own, where each row of the iteration (the
// four hot kernels, the last with the residual update, the |Mhat p|^2 and |r|^2 sums, x's and the direction's update)
// runs once per iteration and their flops and bytes per call add up to cg_iteration_cost<Ri> times the even sites.
template <typename Ri>
void check_iteration_cost(int reconstruct) {
  const Extents lat{4, 4, 4, 8};
  const auto links = ref::random_su3_links(lat, 161);
  OperatorSetup<double> s(lat, links, 0.12, 1.0, kAnti, {}, reconstruct);
  MetricsRegistry own;  // Half and Fp32Fp64: the sloppy operator rounded from the double one, in a context of its own
  Context ictx{own, s.comm, s.ctx.grid};
  std::unique_ptr<OperatorSetup<Ri>> apart;  // double and float: an operator of their own, with its own registry
  std::unique_ptr<WilsonClover<Ri>> rounded;
  if constexpr (std::is_same_v<Ri, double> || std::is_same_v<Ri, float>)
    apart = std::make_unique<OperatorSetup<Ri>>(lat, links, 0.12, 1.0, kAnti, std::array<bool, 4>{}, reconstruct);
  else
    rounded = std::make_unique<WilsonClover<Ri>>(ictx, *s.op);
  std::vector<Cd> x;
  const CgResult r = solve(s, apart ? *apart->op : *rounded, ref::random_spinor(lat, 162), x, 1e-10);
  ASSERT_TRUE(r.converged);
  const std::string suffix = PrecisionTraits<Ri>::row_suffix;
  const std::vector<KernelMetric> table = (apart ? apart->metrics : own).table();
  SiteCost per_iteration;
  for (const char* name : {"eo_clover", "oe_clover", "eo_clover_dag", "oe_clover_dag_update", "oe_clover_norm",
                           "oe_clover_dag_update_norm", "blas_cg_direction"}) {
    const std::string row = name + suffix;
    const auto it = std::find_if(table.begin(), table.end(), [&](const KernelMetric& m) { return m.name == row; });
    ASSERT_NE(it, table.end()) << row;
    EXPECT_EQ(it->calls, r.iterations) << row;
    per_iteration = per_iteration + SiteCost{it->flops / it->calls, it->bytes / it->calls};
  }
  const SiteCost expected = cg_iteration_cost<Ri>(reconstruct, 1);
  const double n = s.geom.half_volume();
  EXPECT_DOUBLE_EQ(per_iteration.bytes / n, expected.bytes);
  EXPECT_DOUBLE_EQ(per_iteration.flops / n, expected.flops);
}

TEST(IterationCost, IsWhatTheLaunchesRecordDouble) {
  check_iteration_cost<double>(18);
  check_iteration_cost<double>(12);
}
TEST(IterationCost, IsWhatTheLaunchesRecordSingle) {
  check_iteration_cost<float>(18);
  check_iteration_cost<float>(12);
  check_iteration_cost<float>(8);
}
TEST(IterationCost, IsWhatTheLaunchesRecordHalf) {
  check_iteration_cost<Half>(18);
  check_iteration_cost<Half>(12);
}
TEST(IterationCost, IsWhatTheLaunchesRecordFp32Fp64) {
  check_iteration_cost<Fp32Fp64>(18);
  check_iteration_cost<Fp32Fp64>(12);
}

}  // namespace
}  // namespace emprism::test
