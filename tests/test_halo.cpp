// test_halo.cpp: the halo-exchange path of the hopping kernels (pack, MPI exchange, interior and exterior
// parts) on one rank, with directions forced through MPI to the rank itself: results equal the reference
// and the local-wrap path. Multi-rank runs are in tests/mpi/.
#include <gtest/gtest.h>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const std::array<double, 4> kTheta{0.3, 0.0, -0.5, kPi};
const Extents kLat{4, 6, 8, 10};

template <typename R>
void check_forced_halo_operator(const std::array<bool, 4>& mask) {
  const auto links = ref::random_su3_links(kLat, 201);
  OperatorSetup<R> s(kLat, links, 0.12, 1.3, kTheta, mask);
  const auto psi = ref::random_spinor(kLat, 202);
  EXPECT_LT(rel_diff(s.apply_m(psi), ref::apply_wilson_clover(kLat, links, 0.12, 1.3, kTheta, psi)), tolerance<R>());
}

TEST(Halo, ForcedInTimeMatchesReference) { check_forced_halo_operator<double>({false, false, false, true}); }
TEST(Halo, ForcedInXMatchesReference) { check_forced_halo_operator<double>({true, false, false, false}); }
TEST(Halo, ForcedInAllDirectionsMatchesReference) { check_forced_halo_operator<double>({true, true, true, true}); }
TEST(Halo, ForcedInAllDirectionsSingleMatchesReference) { check_forced_halo_operator<float>({true, true, true, true}); }

// The CG operator (all four hot kernels, dag ones included) through the halo path equals the local wrap.
TEST(Halo, ForcedHaloMdagMEqualsLocalWrap) {
  const auto links = ref::random_su3_links(kLat, 211);
  OperatorSetup<double> local(kLat, links, 0.12, 1.3, kTheta);
  OperatorSetup<double> halo(kLat, links, 0.12, 1.3, kTheta, {true, true, false, true});
  const auto psi = ref::random_spinor(kLat, 212);
  SpinorField<double> in_l = local.field(psi), in_h = halo.field(psi), out_l(local.geom), out_h(halo.geom);
  ParitySpinor<double> v_l(local.geom), v_h(halo.geom);
  local.op->apply_mdagm(out_l.odd, v_l, in_l.odd);
  halo.op->apply_mdagm(out_h.odd, v_h, in_h.odd);
  EXPECT_LT(rel_diff(halo.natural(out_h), local.natural(out_l)), 1e-14);
}

// A whole solve through the halo path gives the same iterations and (to rounding) the same solution.
TEST(Halo, ForcedHaloSolveEqualsLocalWrap) {
  const auto links = ref::random_su3_links(kLat, 221);
  OperatorSetup<double> local(kLat, links, 0.12, 1.3, kTheta);
  OperatorSetup<double> halo(kLat, links, 0.12, 1.3, kTheta, {true, true, true, true});
  const auto b = ref::random_spinor(kLat, 222);
  CgParams p;
  p.tol = 1e-10;
  SpinorField<double> bl = local.field(b), bh = halo.field(b), xl(local.geom), xh(halo.geom);
  const CgResult rl = solve_eo_cg(*local.op, *local.op, bl, xl, p);
  const CgResult rh = solve_eo_cg(*halo.op, *halo.op, bh, xh, p);
  ASSERT_TRUE(rh.converged);
  EXPECT_EQ(rl.iterations, rh.iterations);
  EXPECT_LT(rel_diff(halo.natural(xh), local.natural(xl)), 1e-12);
}

TEST(Halo, BoundarySitesAreThoseWithAHopLeavingTheRank) {
  const Geometry g(kLat, kLat, {0, 0, 0, 0}, {false, true, false, false});
  for (int p = 0; p < 2; ++p) {
    const auto sites = g.boundary_sites(p);
    EXPECT_EQ(static_cast<int>(sites.size()), 2 * g.half_volume() / kLat[1]);
    for (int cb : sites) {
      int x[4];
      g.arg().coords(cb, p, x);
      EXPECT_TRUE(x[1] == 0 || x[1] == kLat[1] - 1);
    }
  }
}

// Face index and face coordinates are inverse to each other on every face of both parities.
TEST(Halo, FaceIndexInvertsFaceCoords) {
  const Geometry g(kLat, kLat, {0, 0, 0, 0});
  const LatticeArg& a = g.arg();
  for (int mu = 0; mu < 4; ++mu)
    for (int p = 0; p < 2; ++p)
      for (int side = 0; side < 2; ++side)
        for (int f = 0; f < a.face_volume(mu); ++f) {
          int x[4];
          a.face_coords(f, mu, side ? kLat[mu] - 1 : 0, p, x);
          ASSERT_EQ(g.parity(x), p);
          ASSERT_EQ(a.face_index(x, mu), f);
        }
}

// The kernels' site coordinates (LatticeArg::coords, by FastDiv and by division: the two forms agree) invert the
// checkerboard index, with the site's parity, for every site of both parities, on the first and on a later rank of a
// grid, with extents whose halves and products are and are not powers of two.
TEST(Halo, CoordsInvertCheckerboardIndex) {
  struct Case {
    Extents global, local, origin;
  };
  for (const Case& c :
       {Case{{8, 6, 8, 10}, {4, 6, 8, 10}, {0, 0, 0, 0}}, Case{{8, 6, 8, 10}, {4, 6, 8, 10}, {4, 0, 0, 0}},
        Case{{24, 20, 6, 14}, {12, 10, 6, 14}, {12, 10, 0, 0}}}) {
    const Geometry g(c.global, c.local, c.origin);
    const LatticeArg& a = g.arg();
    for (int p = 0; p < 2; ++p)
      for (int cb = 0; cb < a.vh; ++cb) {
        int x[4], by_division[4];
        a.coords(cb, p, x);
        a.coords<false>(cb, p, by_division);  // the fp64 kernels' form
        for (int mu = 0; mu < 4; ++mu) {
          ASSERT_TRUE(x[mu] >= 0 && x[mu] < a.l[mu]) << "cb " << cb << " mu " << mu;
          ASSERT_EQ(by_division[mu], x[mu]) << "cb " << cb << " mu " << mu;
        }
        ASSERT_EQ(a.cb_index(x), cb);
        ASSERT_EQ(g.parity(x), p);
      }
  }
}

// FastDiv (the divisions of LatticeArg::coords) gives the integer quotient: every divisor up to 1024 and five large
// ones, each with every dividend below 2^14, dividends up to 2^31 - 1 in steps of a prime, and the edges.
TEST(Halo, FastDivEqualsIntegerDivision) {
  std::vector<int> divisors;
  for (int d = 1; d <= 1024; ++d) divisors.push_back(d);
  for (const int d : {4095, 65537, 1 << 26, (1 << 30) + 1, 0x7fffffff}) divisors.push_back(d);
  for (const int d : divisors) {
    const FastDiv f = FastDiv::of(d);
    long wrong = 0;
    for (int n = 0; n < (1 << 14); ++n) wrong += f.div(n) != n / d;
    for (std::int64_t n = 0; n <= 0x7fffffff; n += 999983) wrong += f.div(int(n)) != int(n) / d;
    for (const int n : {d - 1, d, 0x7ffffffe, 0x7fffffff}) wrong += f.div(n) != n / d;
    ASSERT_EQ(wrong, 0) << "divisor " << d;
  }
}

}  // namespace
}  // namespace emprism::test
