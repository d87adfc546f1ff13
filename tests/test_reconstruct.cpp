// test_reconstruct.cpp: links stored in 12 and 8 reals (dirac.reconstruct, kernels/link_format.hpp).
//   - the formats: unpack(pack(U)) = U for SU(3) links (Haar-random, unit, diagonal phases, phases at and next to
//     +-pi) to the rounding of the precision, in double and in float (packed in double, rounded); the fp32 8-real
//     link kept bit for bit by the hops' wait for the neighbour (link_after_neighbour);
//   - the operator of every precision x format against the operator with 18 reals built the same way (eo_clover and
//     its dagger, oe_clover with its second output, oe_clover_dag, the full M), on a Haar-random field, a smooth field
//     (random, width 0.2) and the unit field, with the default antiperiodic t and a twisted x (complex phase): equal
//     within tolerance<R>() (a few hundred ulps: only the rounding of the links differs; on a GPU 8-real links are
//     unpacked with the hardware's approximate reciprocal and square root, bounded in
//     tests/gpu/test_gpu_reconstruct.cpp), and the full M against the independent reference (tests/reference);
//   - the halo code (every direction forced through the exchange on one rank) with packed links;
//   - CG with 12 and 8 (double, mixed, single): the solution's true residual under the 18-real operator within twice
//     the tolerance (|b - M18 x| <= |b - Mrc x| + |M18 - Mrc| |x|, the second term at the rounding of the links);
//   - the SU(3) check of the links before packing (check_link_format) and the metrics' minimum bytes of each format.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "kernels/wilson_clover.hpp"
#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/clover_device.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const Extents kLat{4, 6, 4, 8};
const double kKappa = 0.12, kCsw = 1.1;
const std::array<double, 4> kAntiperiodicT{0, 0, 0, kPi};
const std::array<double, 4> kTwistedX{0.7 * kPi, 0, 0, kPi};

SU3<double> su3_of(const std::vector<Cd>& m, int k) {
  SU3<double> u;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) u.e[a][b] = {m[9 * k + 3 * a + b].real(), m[9 * k + 3 * a + b].imag()};
  return u;
}

template <typename R>
double max_diff(const SU3<R>& a, const SU3<double>& b) {
  double d = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      d = std::max(d, std::hypot(double(a.e[i][j].re) - b.e[i][j].re, double(a.e[i][j].im) - b.e[i][j].im));
  return d;
}

// Haar-random links, the unit link and a diagonal SU(3) link (phases a, b, -a-b).
std::vector<SU3<double>> test_links() {
  std::vector<SU3<double>> out;
  const auto m = ref::random_su3_matrices(200, 71);
  for (int k = 0; k < 200; ++k) out.push_back(su3_of(m, k));
  out.push_back(identity_su3<double>());
  SU3<double> d{};
  const double a = 0.4, b = -1.3;
  d.e[0][0] = {std::cos(a), std::sin(a)};
  d.e[1][1] = {std::cos(b), std::sin(b)};
  d.e[2][2] = {std::cos(a + b), -std::sin(a + b)};
  out.push_back(d);
  return out;
}

// The unpacked link differs from u by the rounding of the precision (8: amplified by 1 / (1 - |U10|^2), the divisor of
// its cofactors) plus u's own distance from SU(3), which the formats assume.
template <int Rc>
void expect_round_trip(const SU3<double>& u, const std::string& what) {
  const double amplify = Rc == 12 ? 1.0 : 1.0 / (1.0 - norm2(u.e[1][0])), su3 = 2 * unitarity_deviation(u);
  EXPECT_LT(max_diff(unpack_link(pack_link<Rc>(u)), u), 32 * DBL_EPSILON * amplify + su3) << "double, " << what;
  // float: packed in double, rounded, unpacked in float (the operator's path)
  EXPECT_LT(max_diff(unpack_link(round_link<float>(pack_link<Rc>(u))), u), 32 * FLT_EPSILON * amplify + su3)
      << "float, " << what;
}
template <int Rc>
void check_round_trip() {
  for (const SU3<double>& u : test_links()) expect_round_trip<Rc>(u, std::to_string(Rc));
}

TEST(LinkFormat, TwelveRealsRoundTripSu3Links) { check_round_trip<12>(); }
TEST(LinkFormat, EightRealsRoundTripSu3Links) { check_round_trip<8>(); }

// Links of 8 store the phases of V00 = U10 and V20 = -U20 as tan(arg / 2): at arg = +-pi (phi = +-0: Im U10 = +-0,
// the tangent clamped to +-2^60; phi = 1e-19: clamped too) and next to it the round trip holds as elsewhere. U is an
// SU(2) rotation of rows and columns 0 and 1 (a = 0.8, b = 0.6 e^{i phi}: U10 = -conj(b), arg = pi - phi), and
// U20 = 0 (-U20 = -0: arg 0).
TEST(LinkFormat, EightRealsKeepPhasesAtPi) {
  for (double phi : {0.0, -0.0, 1e-19, -1e-19, 1e-9, -1e-9, 0.5}) {
    SU3<double> u{};
    u.e[0][0] = {0.8, 0};
    u.e[0][1] = {0.6 * std::cos(phi), 0.6 * std::sin(phi)};
    u.e[1][0] = {-0.6 * std::cos(phi), 0.6 * std::sin(phi)};
    u.e[1][1] = {0.8, 0};
    u.e[2][2] = {1, 0};
    std::ostringstream what;
    what << "phi " << phi;
    expect_round_trip<8>(u, what.str());
  }
}

TEST(LinkFormat, EightRealsGiveTheUnitLinkExactly) {
  const SU3<double> one = identity_su3<double>();
  EXPECT_EQ(max_diff(unpack_link(pack_link<8>(one)), one), 0.0);
  EXPECT_EQ(max_diff(unpack_link(round_link<float>(pack_link<8>(one))), one), 0.0);
}

// link_after_neighbour (kernels/wilson_clover.hpp) makes an fp32 8-real link wait for the neighbour's loads without
// changing it: the same bits for every link and a finite neighbour (an infinite last real too), v[0] NaN where the
// neighbour's last real is NaN.
TEST(LinkFormat, EightRealsAfterTheNeighbourKeepTheirBits) {
  Spinor<float> psi{};
  int k = 0;
  for (ColorVec<float>& s : psi.s)
    for (Complex<float>& c : s.c) {
      ++k;
      c = {0.25f * static_cast<float>(k) - 3.0f, -0.5f * static_cast<float>(k)};
    }
  for (const float last : {-1.5f, 0.0f, std::numeric_limits<float>::infinity()}) {
    psi.s[3].c[2].im = last;
    for (const SU3<double>& u : test_links()) {
      const PackedLink<float, 8> p = round_link<float>(pack_link<8>(u));
      const PackedLink<float, 8> q = link_after_neighbour(p, psi);
      EXPECT_EQ(std::memcmp(&p, &q, sizeof p), 0) << "last real " << last;
    }
  }
  psi.s[3].c[2].im = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(link_after_neighbour(round_link<float>(pack_link<8>(identity_su3<double>())), psi).v[0]));
}

// Each kernel of the operator with rc-real links equals the 18-real one; the full M also the reference.
template <typename R>
void check_operator(int rc, const std::vector<Cd>& links, const std::array<double, 4>& theta,
                    const std::array<bool, 4>& force = {}) {
  OperatorSetup<R> full(kLat, links, kKappa, kCsw, theta, force, 18),
      packed(kLat, links, kKappa, kCsw, theta, force, rc);
  ASSERT_EQ(packed.op->links().reconstruct(), rc);
  const double tol = tolerance<R>();
  const auto psi = ref::random_spinor(kLat, 41), chi = ref::random_spinor(kLat, 42);
  const auto m = packed.apply_m(psi);
  EXPECT_LT(rel_diff(m, full.apply_m(psi)), tol) << "M";
  EXPECT_LT(rel_diff(m, ref::apply_wilson_clover(kLat, links, kKappa, kCsw, theta, psi)), tol) << "M vs reference";
  const SpinorField<R> f1 = full.field(psi), f2 = full.field(chi);
  ParitySpinor<R> a(full.geom), b(full.geom), a2(full.geom), b2(full.geom);
  for (bool dag : {false, true}) {
    full.op->eo_clover(a, f1.odd, dag);
    packed.op->eo_clover(b, f1.odd, dag);
    EXPECT_LT(rel_diff(b, a), tol) << "eo_clover dag " << dag;
  }
  full.op->oe_clover(a, a2, f1.even, f2.odd);
  packed.op->oe_clover(b, b2, f1.even, f2.odd);
  EXPECT_LT(rel_diff(b, a), tol) << "oe_clover";
  EXPECT_LT(rel_diff(b2, a2), tol) << "oe_clover out2";
  full.op->oe_clover_dag(a, f1.even, f2.odd);
  packed.op->oe_clover_dag(b, f1.even, f2.odd);
  EXPECT_LT(rel_diff(b, a), tol) << "oe_clover_dag";
}

std::vector<Cd> smooth_links() { return gauge_to_natural(make_random_gauge(Geometry::single_rank(kLat), 17, 0.2)); }

template <typename R>
void check_fields(int rc) {
  const auto random = ref::random_su3_links(kLat, 40), smooth = smooth_links(), unit = ref::unit_links(kLat);
  for (const auto& theta : {kAntiperiodicT, kTwistedX}) {
    SCOPED_TRACE("theta_x " + std::to_string(theta[0]));
    {
      SCOPED_TRACE("Haar-random field");
      check_operator<R>(rc, random, theta);
    }
    {
      SCOPED_TRACE("smooth field");
      check_operator<R>(rc, smooth, theta);
    }
    {
      SCOPED_TRACE("unit field");
      check_operator<R>(rc, unit, theta);
    }
  }
}

TEST(Reconstruct, TwelveRealsDoubleOperatorEqualsEighteen) { check_fields<double>(12); }
TEST(Reconstruct, TwelveRealsSingleOperatorEqualsEighteen) { check_fields<float>(12); }
TEST(Reconstruct, EightRealsDoubleOperatorEqualsEighteen) { check_fields<double>(8); }
TEST(Reconstruct, EightRealsSingleOperatorEqualsEighteen) { check_fields<float>(8); }

// The halo code (packing with links, exterior kernels) on one rank with every direction forced.
TEST(Reconstruct, ForcedHaloOperatorEqualsEighteen) {
  const auto links = ref::random_su3_links(kLat, 43);
  for (int rc : {12, 8}) {
    SCOPED_TRACE(rc);
    check_operator<double>(rc, links, kTwistedX, {true, true, true, true});
    check_operator<float>(rc, links, kTwistedX, {true, true, true, true});
  }
}

// x solved with rc-real links; its true residual under the 18-real double operator.
template <typename Ro, typename Ri>
double residual_under_18(int rc, double tol) {
  const Extents lat{4, 4, 4, 4};
  const double kappa = 0.11;
  const auto links = ref::random_su3_links(lat, 44);
  OperatorSetup<Ro> outer(lat, links, kappa, kCsw, kAntiperiodicT, {}, rc);
  const auto b = ref::random_spinor(lat, 45);
  SpinorField<Ro> bf = outer.field(b), x(outer.geom);
  CgParams p;
  p.tol = tol;
  CgResult r;
  if constexpr (std::is_same_v<Ro, Ri>) {
    r = solve_eo_cg(*outer.op, *outer.op, bf, x, p);
  } else {
    WilsonClover<Ri> inner(outer.ctx, *outer.op);
    EXPECT_EQ(inner.links().reconstruct(), rc);
    r = solve_eo_cg(*outer.op, inner, bf, x, p);
  }
  EXPECT_TRUE(r.converged);
  return rel_diff(ref::apply_wilson_clover(lat, links, kappa, kCsw, kAntiperiodicT, outer.natural(x)), b);
}

TEST(Reconstruct, SolutionsSatisfyTheEighteenRealOperator) {
  for (int rc : {12, 8}) {
    SCOPED_TRACE(rc);
    EXPECT_LT((residual_under_18<double, double>(rc, 1e-10)), 2e-10);
    EXPECT_LT((residual_under_18<double, float>(rc, 1e-10)), 2e-10);
    EXPECT_LT((residual_under_18<float, float>(rc, 1e-5)), 2e-5);
  }
}

TEST(Reconstruct, MetricsCountTheBytesOfTheFormat) {
  const auto links = ref::random_su3_links(kLat, 46);
  const auto psi = ref::random_spinor(kLat, 47);
  double bytes[3];
  int k = 0;
  for (int rc : {18, 12, 8}) {
    OperatorSetup<float> s(kLat, links, kKappa, kCsw, kAntiperiodicT, {}, rc);
    const SpinorField<float> in = s.field(psi);
    ParitySpinor<float> out(s.geom);
    s.op->eo_clover(out, in.odd, false);
    for (const auto& row : s.metrics.table())
      if (row.name == "eo_clover") bytes[k] = row.bytes / row.calls;
    ++k;
  }
  const double vh = ref::volume(kLat) / 2.0;
  EXPECT_DOUBLE_EQ(bytes[0] - bytes[1], vh * 8 * 6 * sizeof(float));  // 6 reals fewer per link, 8 links per site
  EXPECT_DOUBLE_EQ(bytes[1] - bytes[2], vh * 8 * 4 * sizeof(float));  // 4 more
  const double clover_reals = kCloverDynamic<float> ? 56 : 72;  // A compressed (kernels/clover_dynamic.hpp) or A^-1
  EXPECT_DOUBLE_EQ(bytes[0], vh * (8 * 18 + 24 + clover_reals + 24) * sizeof(float));
}

TEST(Reconstruct, LinksOutsideSu3AreRefusedNamingTheLink) {
  const Geometry g = Geometry::single_rank(kLat);
  HostGauge u = make_random_gauge(g, 5, 1.0);
  EXPECT_NO_THROW(check_link_format(u, 12, 1e-10));
  EXPECT_NO_THROW(check_link_format(u, 8, 1e-10));
  const int x[4] = {1, 2, 3, 4};
  for (int a = 0; a < 3; ++a) u.at(x, 2).e[1][a] = 1.001 * u.at(x, 2).e[1][a];  // |row 1| != 1
  EXPECT_NO_THROW(check_link_format(u, 18, 1e-10));
  for (int rc : {12, 8}) {
    try {
      check_link_format(u, rc, 1e-10);
      ADD_FAILURE() << rc << ": no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("U_z at site (x, y, z, t) = (1, 2, 3, 4)"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(link_format_deviation(u.at(x, 2), 8), 1e-3);
}

// A link at the singular point of the 8-real form (|U10| = 1: a permutation) is no SU(3) problem but cannot be
// packed in 8: the check reports it, 12 takes it.
TEST(Reconstruct, EightRealsRefuseTheirSingularLink) {
  SU3<double> p{};  // rows (0 1 0), (1 0 0), (0 0 -1): det 1
  p.e[0][1] = {1, 0};
  p.e[1][0] = {1, 0};
  p.e[2][2] = {-1, 0};
  EXPECT_LT(link_format_deviation(p, 12), 1e-15);
  EXPECT_FALSE(link_format_deviation(p, 8) <= 1e-10);
}

}  // namespace
}  // namespace emprism::test
