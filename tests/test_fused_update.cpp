// test_fused_update.cpp: the CG's residual update fused into the operator's last kernel on one rank
// (WilsonClover::apply_mdagm_update, kernel oe_clover_dag_update; physics/cg.hpp). In fp64 and fp32 the fused kernel
// computes r - alpha w from the w the unfused oe_clover_dag stores (the same rounding), so a solve has the unfused
// solve's bits: every residual of its history and every real of its solution. The half and fp32/fp64 sloppy operators
// apply the update to w before it is rounded to their storage, so their solves differ in the last bits: they must meet
// tol within 5% of the unfused iterations. With directions through the halo exchange (this rank with itself, as on
// several ranks) the same holds under every halo policy: the interior kernel leaves the boundary sites' partial sums
// apart from r, and the exterior kernels (one, or one per direction) or the whole kernel update r.
// Who may call: ctest (emprism_tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test {
namespace {

const Extents kLat{8, 8, 8, 16};
const std::array<double, 4> kTwisted{1.1, 1.9, 2.6, 3.14159265358979323846};
constexpr double kKappa = 0.124, kCsw = 1.0, kTol = 1e-10;

struct Solved {
  CgResult r;
  std::vector<Cd> x;
  std::vector<std::string> rows;  // the metrics rows the solve recorded
};

template <typename Ri>
Solved solve(OperatorSetup<double>& s, WilsonClover<Ri>& inner, bool fuse) {
  const SpinorField<double> b = s.field(ref::random_spinor(kLat, 1703));
  SpinorField<double> x(s.geom);
  CgParams p;
  p.tol = kTol;
  p.max_iter = 5000;
  p.fuse_update = fuse;
  s.ctx.metrics.clear();
  Solved out{solve_eo_cg(*s.op, inner, b, x, p), s.natural(x), {}};
  for (const KernelMetric& m : s.ctx.metrics.table()) out.rows.push_back(m.name);
  return out;
}

bool has_row(const Solved& s, const std::string& name) {
  return std::find(s.rows.begin(), s.rows.end(), name) != s.rows.end();
}

// Fused and unfused solves of one source with the sloppy operator Ri (the outer one itself for double).
template <typename Ri>
std::pair<Solved, Solved> fused_and_unfused() {
  OperatorSetup<double> s(kLat, ref::unit_links(kLat), kKappa, kCsw, kTwisted, {}, 18);
  if constexpr (std::is_same_v<Ri, double>) {
    return {solve(s, *s.op, true), solve(s, *s.op, false)};
  } else {
    WilsonClover<Ri> inner(s.ctx, *s.op);
    return {solve(s, inner, true), solve(s, inner, false)};
  }
}

void expect_same_bits(const Solved& f, const Solved& u) {
  ASSERT_TRUE(u.r.converged);
  EXPECT_EQ(f.r.iterations, u.r.iterations);
  EXPECT_EQ(f.r.history, u.r.history);
  EXPECT_EQ(f.r.true_residual, u.r.true_residual);
  ASSERT_EQ(f.x.size(), u.x.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < f.x.size(); ++i) differ += f.x[i] != u.x[i];
  EXPECT_EQ(differ, 0u) << "of " << f.x.size() << " components";
}

template <typename Ri>
void expect_same_bits() {
  const auto [f, u] = fused_and_unfused<Ri>();
  expect_same_bits(f, u);
}

// Directions `force` through the halo exchange with transport t: under each candidate policy of the sloppy operator
// (fp64: the one operator), the fused solve has the unfused one's bits and records the fused kernel.
template <typename Ri>
void expect_same_bits_with_halos(const std::array<bool, 4>& force, TransportRequest::Choice t) {
  TransportRequest request;
  request.choice = t;
  OperatorSetup<double> s(kLat, ref::unit_links(kLat), kKappa, kCsw, kTwisted, force, 18, request);
  std::unique_ptr<WilsonClover<Ri>> own;
  if constexpr (!std::is_same_v<Ri, double>) own = std::make_unique<WilsonClover<Ri>>(s.ctx, *s.op);
  WilsonClover<Ri>& inner = [&]() -> WilsonClover<Ri>& {
    if constexpr (std::is_same_v<Ri, double>)
      return *s.op;
    else
      return *own;
  }();
  for (const HaloPolicy& p : inner.halo_candidates()) {
    SCOPED_TRACE(p.describe(force));
    inner.use_halo_policy(p);
    const Solved f = solve(s, inner, true), u = solve(s, inner, false);
    expect_same_bits(f, u);
    EXPECT_TRUE(has_row(f, "oe_clover_dag_update"));
    EXPECT_FALSE(has_row(f, "blas_cg_update"));
  }
}

template <typename Ri>
void expect_tol_within_5_percent() {
  const auto [f, u] = fused_and_unfused<Ri>();
  ASSERT_TRUE(u.r.converged);
  EXPECT_TRUE(f.r.converged);
  EXPECT_LE(f.r.true_residual, kTol);
  EXPECT_LE(std::abs(f.r.iterations - u.r.iterations), 0.05 * u.r.iterations)
      << "fused " << f.r.iterations << " iterations, unfused " << u.r.iterations;
}

TEST(FusedUpdate, DoubleSolveHasTheUnfusedBits) { expect_same_bits<double>(); }
TEST(FusedUpdate, MixedSingleSolveHasTheUnfusedBits) { expect_same_bits<float>(); }
TEST(FusedUpdate, MixedHalfMeetsTolWithin5PercentOfTheUnfusedIterations) { expect_tol_within_5_percent<Half>(); }
TEST(FusedUpdate, MixedSingleFp64MeetsTolWithin5PercentOfTheUnfusedIterations) {
  expect_tol_within_5_percent<Fp32Fp64>();
}

// The fused solve runs oe_clover_dag_update and no residual-update kernel; the unfused one the reverse.
TEST(FusedUpdate, FusedSolveRecordsTheFusedKernelInsteadOfTheUpdate) {
  const auto [f, u] = fused_and_unfused<float>();
  EXPECT_TRUE(has_row(f, "oe_clover_dag_update"));
  EXPECT_FALSE(has_row(f, "blas_cg_update"));
  EXPECT_FALSE(has_row(u, "oe_clover_dag_update"));
  EXPECT_TRUE(has_row(u, "blas_cg_update"));
}

// With halos the in-place kernel needs the halo policy that apply_mdagm_head's kernels choose: called first, it is
// refused (timing the policies would update r several times), r untouched.
TEST(FusedUpdate, UpdateBeforeTheHaloPolicyIsChosenIsRefused) {
  OperatorSetup<double> s(kLat, ref::unit_links(kLat), kKappa, kCsw, kTwisted, {false, false, false, true}, 18);
  const std::vector<Cd> r0 = ref::random_spinor(kLat, 1704);
  SpinorField<double> r = s.field(r0), v(s.geom), scratch(s.geom);
  backend::PendingSums rr;
  EXPECT_THROW(s.op->apply_mdagm_update(r.odd, v.odd, 0.5, scratch.odd, &rr), std::logic_error);
  EXPECT_EQ(s.natural(r), r0);
}

// Overlapped policies (staged: the exterior fused and, with several directions, split per direction).
TEST(FusedUpdate, WithTHaloDoubleSolveHasTheUnfusedBits) {
  expect_same_bits_with_halos<double>({false, false, false, true}, TransportRequest::Choice::Staged);
}
TEST(FusedUpdate, WithHalosInEveryDirectionMixedSingleSolveHasTheUnfusedBits) {
  expect_same_bits_with_halos<float>({true, true, true, true}, TransportRequest::Choice::Staged);
}
// The whole policy (auto with this rank itself as the peer): every site once the faces are in place.
TEST(FusedUpdate, WithHalosUnderTheWholePolicyMixedSingleSolveHasTheUnfusedBits) {
  expect_same_bits_with_halos<float>({true, false, true, true}, TransportRequest::Choice::Auto);
}

}  // namespace
}  // namespace emprism::test
