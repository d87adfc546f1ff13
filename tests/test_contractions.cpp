// test_contractions.cpp: meson two-point functions, effective and PCAC masses (src/physics/contractions.hpp).
// The correlators are checked against an independent slow evaluation written here straight from the formula
//   C(p, t) = sum_x exp(-i p.(x - x0)) tr[Gsnk S(x) Gsrc g5 S(x)^dag g5]
// with dense 12x12 matrices built from the reference's 4x4 gamma matrices (tests/reference), against the
// reference's analytic free pion correlator, on solved propagators (free field end to end, gauge invariance on a
// random gauge field), and for the symmetries every channel must have. Single rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "operator_fixture.hpp"
#include "src/physics/cg.hpp"
#include "src/physics/contractions.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const std::array<double, 4> kAnti{0, 0, 0, kPi};
const double kKappa = 0.12;
const Extents kLat{4, 4, 4, 8};
const std::array<int, 4> kSource{1, 2, 3, 5};

// ---- dense reference evaluation ----

using Mat12 = std::array<Cd, 144>;  // spin-colour matrix, element (3 spin + colour) * 12 + 3 spin' + colour'

Mat12 spin_colour(const ref::Mat4& g) {  // g x 1_colour
  Mat12 m{};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c) m[(3 * a + c) * 12 + 3 * b + c] = g[a * 4 + b];
  return m;
}

Mat12 mul(const Mat12& a, const Mat12& b) {
  Mat12 m{};
  for (int i = 0; i < 12; ++i)
    for (int k = 0; k < 12; ++k)
      for (int j = 0; j < 12; ++j) m[i * 12 + j] += a[i * 12 + k] * b[k * 12 + j];
  return m;
}

Mat12 adjoint(const Mat12& a) {
  Mat12 m{};
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) m[i * 12 + j] = std::conj(a[j * 12 + i]);
  return m;
}

struct RefChannel {
  std::string name;
  std::vector<std::pair<ref::Mat4, ref::Mat4>> pairs;  // (Gsnk, Gsrc), averaged
  int parity;
};

// The channel table of the task, built from the reference's dense gamma matrices.
std::vector<RefChannel> reference_channels() {
  const auto g = ref::gamma();
  const ref::Mat4 g5 = ref::gamma5(), one = ref::mat4_identity(), g4g5 = ref::mat4_mul(g[3], g5);
  std::vector<RefChannel> t;
  t.push_back({"pion", {{g5, g5}}, +1});
  t.push_back({"axial", {{g4g5, g5}}, -1});
  t.push_back({"axial_axial", {{g4g5, g4g5}}, +1});
  RefChannel rho{"rho", {}, +1}, rho_t{"rho_t", {}, +1}, a1{"a1", {}, +1};
  for (int i = 0; i < 3; ++i) {
    rho.pairs.emplace_back(g[i], g[i]);
    rho_t.pairs.emplace_back(ref::mat4_mul(g[i], g[3]), ref::mat4_mul(g[i], g[3]));
    a1.pairs.emplace_back(ref::mat4_mul(g[i], g5), ref::mat4_mul(g[i], g5));
  }
  t.push_back(rho);
  t.push_back(rho_t);
  t.push_back({"a0", {{one, one}}, +1});
  t.push_back(a1);
  return t;
}

// C(p, t) of one channel for every momentum, by dense matrix products at every site (one rank, global = local).
std::vector<std::vector<Cd>> slow_correlators(const Extents& lat, const Propagator& s, const std::array<int, 4>& x0,
                                              const RefChannel& ch, const std::vector<std::array<int, 3>>& momenta) {
  const Mat12 g5 = spin_colour(ref::gamma5());
  std::vector<std::vector<Cd>> c(momenta.size(), std::vector<Cd>(lat[3], Cd(0)));
  for (int site = 0; site < ref::volume(lat); ++site) {
    const ref::Coords x = ref::site_coords(lat, site);
    Mat12 sm{};
    for (int a = 0; a < 12; ++a)
      for (int b = 0; b < 12; ++b) sm[a * 12 + b] = s.columns[b][static_cast<std::size_t>(site) * 12 + a];
    const Mat12 back = mul(mul(g5, adjoint(sm)), g5);
    Cd tr = 0;
    for (const auto& [snk, src] : ch.pairs) {
      const Mat12 prod = mul(mul(mul(spin_colour(snk), sm), spin_colour(src)), back);
      for (int i = 0; i < 12; ++i) tr += prod[i * 12 + i];
    }
    tr /= double(ch.pairs.size());
    const int t = ((x[3] - x0[3]) % lat[3] + lat[3]) % lat[3];
    for (std::size_t m = 0; m < momenta.size(); ++m) {
      double px = 0;
      for (int d = 0; d < 3; ++d) px += 2 * kPi * momenta[m][d] / lat[d] * (x[d] - x0[d]);
      c[m][t] += std::exp(Cd(0, -px)) * tr;
    }
  }
  return c;
}

double max_abs(const std::vector<Cd>& v) {
  double m = 0;
  for (const Cd& z : v) m = std::max(m, std::abs(z));
  return m;
}

// max_t |a(t) - b(t)| / max_t |b(t)|
double max_rel_diff(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  double d = 0;
  for (std::size_t t = 0; t < a.size(); ++t) d = std::max(d, std::abs(a[t] - b[t]));
  return d / max_abs(b);
}

std::vector<double> real_parts(const std::vector<Cd>& v) {
  std::vector<double> r;
  for (const Cd& z : v) r.push_back(z.real());
  return r;
}

// ---- propagators ----

// The analytic free propagator (tests/reference, momentum space). Colour is diagonal in the free field, so one
// colour per source spin is computed and copied to the other two.
Propagator free_propagator(const Extents& lat, double kappa, const std::array<double, 4>& theta,
                           const std::array<int, 4>& x0) {
  Propagator p;
  const std::size_t vol = static_cast<std::size_t>(ref::volume(lat));
  for (int spin = 0; spin < 4; ++spin) {
    const auto psi = ref::free_point_propagator(lat, kappa, theta, x0, spin, 0);
    for (int colour = 0; colour < 3; ++colour) {
      auto& col = p.columns[3 * spin + colour];
      col.assign(vol * 12, Cd(0));
      for (std::size_t site = 0; site < vol; ++site)
        for (int sp = 0; sp < 4; ++sp) col[site * 12 + 3 * sp + colour] = psi[site * 12 + 3 * sp];
    }
  }
  return p;
}

// The 12 point-source solves with the production operator and solver, to a relative residual of 1e-12.
Propagator solved_propagator(OperatorSetup<double>& op, const std::array<double, 4>& theta,
                             const std::array<int, 4>& x0) {
  Propagator p;
  for (int spin = 0; spin < 4; ++spin)
    for (int colour = 0; colour < 3; ++colour) {
      SourceParams sc;
      sc.kind = SourceKind::Point;
      sc.site = x0;
      sc.spin = spin;
      sc.colour = colour;
      SpinorField<double> b = op.field(make_source(op.geom, sc, theta)), x(op.geom);
      CgParams prm;
      prm.tol = 1e-12;
      prm.max_iter = 5000;
      const CgResult r = solve_eo_cg(*op.op, *op.op, b, x, prm);
      EXPECT_TRUE(r.converged) << "spin " << spin << " colour " << colour;
      p.columns[3 * spin + colour] = op.natural(x);
    }
  return p;
}

Propagator random_propagator(const Extents& lat, unsigned seed) {
  Propagator p;
  for (int k = 0; k < 12; ++k) p.columns[k] = ref::random_spinor(lat, seed + k);
  return p;
}

const std::vector<std::string> kAllChannels{"pion", "axial", "axial_axial", "rho", "rho_t", "a0", "a1"};

const Correlator& find(const std::vector<Correlator>& cs, const std::string& name, const std::array<int, 3>& n) {
  for (const Correlator& c : cs)
    if (c.channel == name && c.momentum == n) return c;
  throw std::runtime_error("no correlator " + name);
}

// ---- gamma matrices and the channel table ----

TEST(Contractions, SparseGammasEqualReferenceMatrices) {
  const auto g = ref::gamma();
  auto expect_equal = [](const Gamma& sparse, const ref::Mat4& dense, const char* what) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(sparse.element(r, c), dense[r * 4 + c]) << what << " row " << r << " col " << c;
  };
  for (int mu = 0; mu < 4; ++mu) expect_equal(gamma_mu(mu), g[mu], "gamma_mu");
  expect_equal(gamma_5(), ref::gamma5(), "gamma_5");
  expect_equal(gamma_unit(), ref::mat4_identity(), "unit");
  for (int mu = 0; mu < 4; ++mu) {
    expect_equal(gamma_mu(mu) * gamma_5(), ref::mat4_mul(g[mu], ref::gamma5()), "g_mu g5");
    for (int nu = 0; nu < 4; ++nu) expect_equal(gamma_mu(mu) * gamma_mu(nu), ref::mat4_mul(g[mu], g[nu]), "g_mu g_nu");
  }
  EXPECT_THROW(gamma_mu(4), std::invalid_argument);
}

TEST(Contractions, ChannelTableOrderParitiesAndPairs) {
  const auto& table = meson_channels();
  const auto refs = reference_channels();
  ASSERT_EQ(table.size(), refs.size());
  for (std::size_t k = 0; k < refs.size(); ++k) {
    EXPECT_EQ(table[k].name, refs[k].name);
    EXPECT_EQ(table[k].time_parity, refs[k].parity) << refs[k].name;
    ASSERT_EQ(table[k].pairs.size(), refs[k].pairs.size()) << refs[k].name;
    for (std::size_t p = 0; p < refs[k].pairs.size(); ++p)
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
          EXPECT_EQ(table[k].pairs[p].first.element(r, c), refs[k].pairs[p].first[r * 4 + c]) << refs[k].name;
          EXPECT_EQ(table[k].pairs[p].second.element(r, c), refs[k].pairs[p].second[r * 4 + c]) << refs[k].name;
        }
    EXPECT_EQ(find_meson_channel(refs[k].name), &table[k]);
  }
  EXPECT_EQ(table[1].gamma_sink, "g4g5");
  EXPECT_EQ(table[1].gamma_source, "g5");
}

TEST(Contractions, UnknownChannelNameGivesNullptr) {
  for (const char* name : {"", "Pion", "pi", "rho ", "vector", "axial-axial"})
    EXPECT_EQ(find_meson_channel(name), nullptr) << "'" << name << "'";
  const Geometry geom = Geometry::single_rank(kLat);
  EXPECT_THROW(meson_correlators(geom, random_propagator(kLat, 5), kSource, {"pion", "nope"}, {{0, 0, 0}}, nullptr),
               std::invalid_argument);
}

// ---- free field, analytic propagator ----

TEST(Contractions, FreePionEqualsAnalyticCorrelator) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = free_propagator(kLat, kKappa, kAnti, kSource);
  const auto c = meson_correlators(geom, s, kSource, {"pion"}, {{0, 0, 0}}, nullptr);
  ASSERT_EQ(c.size(), 1u);
  const auto expect = ref::free_pion_correlator(kLat, kKappa, kAnti, {1, 2, 3, 5});
  ASSERT_EQ(c[0].values.size(), expect.size());
  for (int t = 0; t < kLat[3]; ++t) {
    EXPECT_NEAR(c[0].values[t].real() / expect[t], 1.0, 1e-12) << "t = " << t;
    EXPECT_LE(std::abs(c[0].values[t].imag()), 1e-14 * expect[t]) << "t = " << t;
  }
}

// Every channel at p = 0 and two non-zero momenta equals the dense evaluation of the formula.
TEST(Contractions, FreeFieldEveryChannelEqualsSlowEvaluation) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = free_propagator(kLat, kKappa, kAnti, kSource);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, 0, 0}, {1, -1, 2}};
  const auto c = meson_correlators(geom, s, kSource, kAllChannels, momenta, nullptr);
  for (const RefChannel& ch : reference_channels()) {
    const auto expect = slow_correlators(kLat, s, kSource, ch, momenta);
    for (std::size_t m = 0; m < momenta.size(); ++m)
      EXPECT_LT(max_rel_diff(find(c, ch.name, momenta[m]).values, expect[m]), 1e-13) << ch.name << " p" << m;
  }
}

// Same on an arbitrary (random) 12x12 field per site: the contraction does not rely on free-field structure.
TEST(Contractions, RandomPropagatorEveryChannelEqualsSlowEvaluation) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = random_propagator(kLat, 31);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {0, 1, 0}, {-1, 2, 1}};
  const auto c = meson_correlators(geom, s, kSource, kAllChannels, momenta, nullptr);
  for (const RefChannel& ch : reference_channels()) {
    const auto expect = slow_correlators(kLat, s, kSource, ch, momenta);
    for (std::size_t m = 0; m < momenta.size(); ++m)
      EXPECT_LT(max_rel_diff(find(c, ch.name, momenta[m]).values, expect[m]), 1e-13) << ch.name << " p" << m;
  }
}

// Result order (channels as given, momenta inner), empty channel list = all channels, comm == nullptr and a
// one-rank Communicator agree bit for bit.
TEST(Contractions, ResultOrderAndCommunicator) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = random_propagator(kLat, 41);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {0, 0, 1}};
  const auto c = meson_correlators(geom, s, kSource, {"a1", "pion"}, momenta, nullptr);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].channel, "a1");
  EXPECT_EQ(c[1].channel, "a1");
  EXPECT_EQ(c[2].channel, "pion");
  EXPECT_EQ(c[1].momentum, momenta[1]);
  EXPECT_EQ(c[2].momentum, momenta[0]);
  Communicator comm;
  const auto all = meson_correlators(geom, s, kSource, {}, momenta, &comm);
  ASSERT_EQ(all.size(), 2 * kAllChannels.size());
  for (std::size_t k = 0; k < kAllChannels.size(); ++k) EXPECT_EQ(all[2 * k].channel, kAllChannels[k]);
  EXPECT_EQ(all[13].values, c[1].values);  // a1, second momentum
  EXPECT_EQ(all[0].values, c[2].values);   // pion, p = 0
}

// Summing the results of the sub-blocks of a decomposition (each with its own origin) gives the whole-lattice
// result: global coordinates enter the phases and the timeslices, as on many ranks.
TEST(Contractions, SubdomainsAddUpToWholeLattice) {
  const Geometry whole = Geometry::single_rank(kLat);
  const Propagator s = random_propagator(kLat, 51);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, 0, -1}};
  const auto expect = meson_correlators(whole, s, kSource, kAllChannels, momenta, nullptr);
  const Extents local{2, 4, 2, 4};
  std::vector<Correlator> total;
  for (int bx = 0; bx < 2; ++bx)
    for (int bz = 0; bz < 2; ++bz)
      for (int bt = 0; bt < 2; ++bt) {
        const Geometry g(kLat, local, {2 * bx, 0, 2 * bz, 4 * bt});
        Propagator sub;
        for (auto& col : sub.columns) col.resize(static_cast<std::size_t>(g.local_volume()) * 12);
        for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
          int x[4];
          g.local_coords(lex, x);
          const std::int64_t glex = g.global_lex(x);
          for (int k = 0; k < 12; ++k)
            for (int a = 0; a < 12; ++a) sub.columns[k][static_cast<std::size_t>(lex * 12 + a)] = s.at(glex, a, k);
        }
        const auto part = meson_correlators(g, sub, kSource, kAllChannels, momenta, nullptr);
        if (total.empty()) {
          total = part;
        } else {
          for (std::size_t i = 0; i < part.size(); ++i)
            for (int t = 0; t < kLat[3]; ++t) total[i].values[t] += part[i].values[t];
        }
      }
  ASSERT_EQ(total.size(), expect.size());
  for (std::size_t i = 0; i < expect.size(); ++i)
    EXPECT_LT(max_rel_diff(total[i].values, expect[i].values), 1e-14) << expect[i].channel;
}

// C(Lt - t) = s C(t), t = 1..Lt-1, in the free field at p = 0 and p != 0, with s from the table.
TEST(Contractions, FreeFieldTimeParities) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = free_propagator(kLat, kKappa, kAnti, kSource);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, 0, 0}, {1, 1, 1}};
  const auto c = meson_correlators(geom, s, kSource, kAllChannels, momenta, nullptr);
  for (const Correlator& corr : c) {
    const int parity = find_meson_channel(corr.channel)->time_parity;
    const double scale = max_abs(corr.values);
    ASSERT_GT(scale, 1e-8) << corr.channel;
    const int lt = kLat[3];
    for (int t = 1; t < lt; ++t)
      EXPECT_LE(std::abs(corr.values[lt - t] - double(parity) * corr.values[t]), 1e-13 * scale)
          << corr.channel << " n = (" << corr.momentum[0] << "," << corr.momentum[1] << "," << corr.momentum[2]
          << ") t = " << t;
    if (parity == -1) {
      EXPECT_LE(std::abs(corr.values[0]), 1e-13 * scale) << corr.channel;  // C(0) = -C(0)
    }
  }
}

// The pion is tr[S S^dag] > 0 on every gauge field; checked on the free and on an arbitrary field.
TEST(Contractions, PionPositive) {
  const Geometry geom = Geometry::single_rank(kLat);
  for (const Propagator& s : {free_propagator(kLat, kKappa, kAnti, kSource), random_propagator(kLat, 61)}) {
    const auto c = meson_correlators(geom, s, kSource, {"pion"}, {{0, 0, 0}}, nullptr);
    for (int t = 0; t < kLat[3]; ++t) {
      EXPECT_GT(c[0].values[t].real(), 0.0) << "t = " << t;
      EXPECT_LE(std::abs(c[0].values[t].imag()), 1e-14 * c[0].values[t].real()) << "t = " << t;
    }
  }
}

// Every channel is real at p = 0 site by site on any field (g5 G^dag g5 = eps G with the same eps for sink and
// source), so up to rounding also on an arbitrary propagator; and C(-p) = C(p)^* for every p.
TEST(Contractions, EveryChannelRealAtZeroMomentumAndConjugateUnderMinusP) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = random_propagator(kLat, 71);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, -1, 2}, {-1, 1, -2}};
  const auto c = meson_correlators(geom, s, kSource, kAllChannels, momenta, nullptr);
  for (std::size_t k = 0; k < kAllChannels.size(); ++k) {
    const auto& zero = c[3 * k].values;
    const auto& plus = c[3 * k + 1].values;
    const auto& minus = c[3 * k + 2].values;
    const double scale = max_abs(zero), scale_p = max_abs(plus);
    for (int t = 0; t < kLat[3]; ++t) {
      EXPECT_LE(std::abs(zero[t].imag()), 1e-14 * scale) << kAllChannels[k] << " t = " << t;
      EXPECT_LE(std::abs(minus[t] - std::conj(plus[t])), 1e-14 * scale_p) << kAllChannels[k] << " t = " << t;
    }
  }
}

// ---- solved propagators ----

// End to end: the production operator and solver on the unit gauge field, 12 solves to 1e-12; the pion equals the
// analytic correlator, the axial (and every other channel) the slow evaluation on the analytic propagator.
TEST(Contractions, SolvedFreePropagatorMatchesAnalytic) {
  OperatorSetup<double> op(kLat, ref::unit_links(kLat), kKappa, 1.0, kAnti);
  const Propagator s = solved_propagator(op, kAnti, kSource);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {0, 1, 0}};
  const auto c = meson_correlators(op.geom, s, kSource, kAllChannels, momenta, nullptr);
  const auto pion = ref::free_pion_correlator(kLat, kKappa, kAnti, {1, 2, 3, 5});
  for (int t = 0; t < kLat[3]; ++t)
    EXPECT_NEAR(find(c, "pion", {0, 0, 0}).values[t].real() / pion[t], 1.0, 1e-10) << "t = " << t;
  const Propagator analytic = free_propagator(kLat, kKappa, kAnti, kSource);
  for (const RefChannel& ch : reference_channels()) {
    const auto expect = slow_correlators(kLat, analytic, kSource, ch, momenta);
    for (std::size_t m = 0; m < momenta.size(); ++m)
      EXPECT_LT(max_rel_diff(find(c, ch.name, momenta[m]).values, expect[m]), 1e-10) << ch.name << " p" << m;
  }
}

// Gauge invariance: 12 solves on a random gauge field (csw = 1), and 12 on its random gauge transform. The
// propagator becomes W(x) S(x, x0) W(x0)^dag; with all source colours the correlators are unchanged.
TEST(Contractions, CorrelatorsAreGaugeInvariant) {
  const auto links = ref::random_su3_links(kLat, 81);
  const auto w = ref::random_gauge_transform(kLat, 82);
  const auto links_w = ref::gauge_transform_links(kLat, links, w);
  OperatorSetup<double> op(kLat, links, kKappa, 1.0, kAnti);
  OperatorSetup<double> op_w(kLat, links_w, kKappa, 1.0, kAnti);
  const std::vector<std::array<int, 3>> momenta{{0, 0, 0}, {1, 0, 0}};
  const Propagator s = solved_propagator(op, kAnti, kSource);
  const Propagator s_w = solved_propagator(op_w, kAnti, kSource);
  const auto c = meson_correlators(op.geom, s, kSource, kAllChannels, momenta, nullptr);
  const auto c_w = meson_correlators(op_w.geom, s_w, kSource, kAllChannels, momenta, nullptr);
  EXPECT_GT(rel_diff(s_w.columns[0], s.columns[0]), 0.1);  // the propagator itself changes: the check is not trivial
  ASSERT_EQ(c.size(), c_w.size());
  for (std::size_t i = 0; i < c.size(); ++i)
    EXPECT_LT(max_rel_diff(c_w[i].values, c[i].values), 1e-10)
        << c[i].channel << " n = (" << c[i].momentum[0] << "," << c[i].momentum[1] << "," << c[i].momentum[2] << ")";
}

// ---- effective mass ----

std::vector<double> synthetic(int lt, double amplitude, double m, int parity) {
  std::vector<double> c(lt);
  for (int t = 0; t < lt; ++t) c[t] = amplitude * (std::exp(-m * t) + parity * std::exp(-m * (lt - t)));
  return c;
}

TEST(Contractions, EffectiveMassRecoversCoshMass) {
  for (int lt : {8, 16, 32})
    for (double m : {0.05, 0.37, 1.5}) {
      const auto meff = effective_mass(synthetic(lt, 2.5, m, +1), +1);
      ASSERT_EQ(static_cast<int>(meff.size()), lt);
      for (int t = 0; t + 1 < lt; ++t) EXPECT_NEAR(meff[t], m, 1e-12 * std::max(1.0, m)) << "Lt " << lt << " t " << t;
      EXPECT_TRUE(std::isnan(meff[lt - 1]));
    }
}

// sinh form, also with a negative amplitude (the axial correlator is negative on the first half). The ratio has
// no root at t = Lt/2 - 1 and t = Lt/2 (c(Lt/2) = 0).
TEST(Contractions, EffectiveMassRecoversSinhMass) {
  for (int lt : {8, 16, 32})
    for (double m : {0.05, 0.37, 1.5})
      for (double amplitude : {1.7, -0.6}) {
        const auto meff = effective_mass(synthetic(lt, amplitude, m, -1), -1);
        ASSERT_EQ(static_cast<int>(meff.size()), lt);
        for (int t = 0; t + 1 < lt; ++t) {
          if (t == lt / 2 - 1 || t == lt / 2)
            EXPECT_TRUE(std::isnan(meff[t])) << "Lt " << lt << " t " << t;
          else
            EXPECT_NEAR(meff[t], m, 1e-12 * std::max(1.0, m)) << "Lt " << lt << " m " << m << " t " << t;
        }
        EXPECT_TRUE(std::isnan(meff[lt - 1]));
      }
}

TEST(Contractions, EffectiveMassNaNWhereUndefined) {
  const int lt = 16;
  auto c = synthetic(lt, 1.0, 0.4, +1);
  c[3] = -c[3];         // sign change between 2, 3 and 3, 4
  c[6] = c[7] * 0.9;    // cosh, first half: ratio < 1
  c[12] = c[13] * 1.1;  // cosh, second half: c(12)/c(13) > 1, a root needs < 1
  c[9] = 0;             // zero
  c[14] = std::numeric_limits<double>::infinity();
  const auto meff = effective_mass(c, +1);
  for (int t : {2, 3, 6, 8, 9, 12, 13, 14, 15}) EXPECT_TRUE(std::isnan(meff[t])) << "t = " << t;
  for (int t : {0, 1, 4}) EXPECT_NEAR(meff[t], 0.4, 1e-12) << "t = " << t;
  // sinh, first half: the ratio must exceed a/b = (Lt/2 - t) / (Lt/2 - t - 1), its m -> 0 limit.
  auto s = synthetic(lt, 1.0, 0.4, -1);
  s[2] = s[3] * 6.0 / 5.0 * 0.999;    // t = 2: a/b = 6/5
  s[12] = s[13] * 4.0 / 5.0 * 1.001;  // t = 12: a = -4, b = -5, ratio must be < 4/5
  const auto meff_s = effective_mass(s, -1);
  EXPECT_TRUE(std::isnan(meff_s[2]));
  EXPECT_TRUE(std::isnan(meff_s[12]));
  EXPECT_NEAR(meff_s[0], 0.4, 1e-12);
  EXPECT_THROW(effective_mass(c, 0), std::invalid_argument);
  EXPECT_TRUE(std::isnan(effective_mass({1.0}, +1)[0]));
}

// ---- PCAC mass ----

TEST(Contractions, PcacMassIsItsFormula) {
  const std::vector<double> axial{0.1, -2, -1.5, 0.5, 3, 2.5};
  const std::vector<double> pion{1, 2, 3, 4, 5, 0};
  const auto m = pcac_mass(axial, pion);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_DOUBLE_EQ(m[0], (-2 - 2.5) / 4.0);
  EXPECT_DOUBLE_EQ(m[2], (0.5 + 2) / 12.0);
  EXPECT_DOUBLE_EQ(m[4], (2.5 - 0.5) / 20.0);
  EXPECT_TRUE(std::isnan(m[5]));
  EXPECT_THROW(pcac_mass({1, 2}, {1}), std::invalid_argument);
}

// Free field, kappa = 0.12 (m0 = 1/(2 kappa) - 4 = 1/6): the PCAC mass from the correlators equals the formula on
// the slow evaluation and is positive for t = 2..Lt-2 (0.160 at t = Lt/2 on 4^3x8). t = 0, 1, Lt-1 use C_axial(0)
// on the source timeslice, zero in the free field by time reversal, while |C_axial| peaks at t = 1: contact terms,
// negative there (-0.065 at t = 1).
TEST(Contractions, FreePcacMassPositive) {
  const Geometry geom = Geometry::single_rank(kLat);
  const Propagator s = free_propagator(kLat, kKappa, kAnti, kSource);
  const auto c = meson_correlators(geom, s, kSource, {"axial", "pion"}, {{0, 0, 0}}, nullptr);
  const auto m = pcac_mass(real_parts(c[0].values), real_parts(c[1].values));
  const auto refs = reference_channels();
  const auto axial = real_parts(slow_correlators(kLat, s, kSource, refs[1], {{0, 0, 0}})[0]);
  const auto pion = real_parts(slow_correlators(kLat, s, kSource, refs[0], {{0, 0, 0}})[0]);
  const int lt = kLat[3];
  for (int t = 0; t < lt; ++t) {
    const double expect = (axial[(t + 1) % lt] - axial[(t + lt - 1) % lt]) / (4 * pion[t]);
    EXPECT_NEAR(m[t], expect, 1e-12 * std::abs(expect)) << "t = " << t;
    if (t >= 2 && t <= lt - 2) {
      EXPECT_GT(m[t], 0.0) << "t = " << t;
    }
    if (t > 0 && t < lt / 2) {
      EXPECT_LT(axial[t], 0.0) << "t = " << t;  // forward quarks: C_axial = -tr[g4 S S^dag]
    }
  }
}

// Tree level on a long lattice: only the p = 0 quark mode survives at large t, with e^E = 1 + m0. For it
// S(t) = P+ a(t) + P- b(t) exactly (P+- = (1 +- g4)/2), so the pion is cosh-like in 2E, the axial sinh-like, and
// the PCAC mass is t-independent: (e^{2E} - e^{-2E}) / 4 = ((1 + m0)^2 - (1 + m0)^-2) / 4 = m0 - m0^2/2 + ...
TEST(Contractions, FreePcacAndPionMassReachTreeLevel) {
  const Extents lat{4, 4, 4, 32};
  const std::array<int, 4> x0{0, 1, 2, 3};
  const Geometry geom = Geometry::single_rank(lat);
  const auto c =
      meson_correlators(geom, free_propagator(lat, kKappa, kAnti, x0), x0, {"axial", "pion"}, {{0, 0, 0}}, nullptr);
  const double m0 = 1 / (2 * kKappa) - 4, e = std::log1p(m0);
  const double tree_pcac = (std::pow(1 + m0, 2) - std::pow(1 + m0, -2)) / 4;
  const auto m = pcac_mass(real_parts(c[0].values), real_parts(c[1].values));
  const auto m_pion = effective_mass(real_parts(c[1].values), +1);
  const auto m_axial = effective_mass(real_parts(c[0].values), -1);
  // k != 0 quark modes (|k| >= pi/2 on L = 4, E_k - E_0 = 0.85) are suppressed by exp(-2 (E_k - E_0) t), below
  // 1e-7 from t = 10 (and symmetrically: m_pcac(t) = m_pcac(Lt - t), m_eff(t) = m_eff(Lt - 1 - t)).
  for (int t = 10; t <= lat[3] - 10; ++t) EXPECT_NEAR(m[t], tree_pcac, 1e-7) << "t = " << t;
  for (int t = 10; t <= lat[3] - 11; ++t) {
    EXPECT_NEAR(m_pion[t], 2 * e, 1e-7) << "t = " << t;
    if (t != lat[3] / 2 - 1 && t != lat[3] / 2) {
      EXPECT_NEAR(m_axial[t], 2 * e, 1e-7) << "t = " << t;
    }
  }
  EXPECT_NEAR(m[lat[3] / 2], tree_pcac, 1e-10);
  EXPECT_NEAR(tree_pcac, m0, 0.2 * m0);
}

}  // namespace
}  // namespace emprism::test
