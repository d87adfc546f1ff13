// test_dirac.cpp: the production even-odd Wilson-clover operator against the independent reference
// (tests/reference) and the operator identities of docs/conventions.md s. 10, on non-cubic lattices with random
// SU(3) fields, in double (to ~1e-12) and single (~1e-5) precision. One property per test.
#include <gtest/gtest.h>

#include "operator_fixture.hpp"
#include "src/physics/blas.hpp"

namespace emprism::test {
namespace {

const double kPi = 3.14159265358979323846;
const Extents kLatA{4, 6, 8, 10};
const Extents kLatB{6, 4, 4, 8};
const std::array<double, 4> kTheta{0.3, 0.0, -0.5, kPi};

template <typename R>
void check_matches_reference(const Extents& lat, double csw) {
  const auto links = ref::random_su3_links(lat, 11);
  OperatorSetup<R> s(lat, links, 0.11, csw, kTheta);
  const auto psi = ref::random_spinor(lat, 12);
  EXPECT_LT(rel_diff(s.apply_m(psi), ref::apply_wilson_clover(lat, links, 0.11, csw, kTheta, psi)), tolerance<R>());
}

TEST(Dirac, MatchesReferenceDoubleLatticeA) { check_matches_reference<double>(kLatA, 1.3); }
TEST(Dirac, MatchesReferenceDoubleLatticeB) { check_matches_reference<double>(kLatB, 1.3); }
TEST(Dirac, MatchesReferenceSingleLatticeA) { check_matches_reference<float>(kLatA, 1.3); }
TEST(Dirac, MatchesReferenceSingleLatticeB) { check_matches_reference<float>(kLatB, 1.3); }

// csw = 0 is plain Wilson: M psi = psi - kappa H psi.
TEST(Dirac, CswZeroIsPlainWilson) {
  const auto links = ref::random_su3_links(kLatB, 21);
  OperatorSetup<double> s(kLatB, links, 0.13, 0.0, kTheta);
  const auto psi = ref::random_spinor(kLatB, 22);
  auto expect = ref::apply_hopping(kLatB, links, kTheta, psi);
  for (std::size_t i = 0; i < expect.size(); ++i) expect[i] = psi[i] - 0.13 * expect[i];
  EXPECT_LT(rel_diff(s.apply_m(psi), expect), 1e-13);
}

// Free field: M exp(i p.x) eta = [(1 - 2 kappa sum cos p) + 2 i kappa sum gamma sin p] exp(i p.x) eta.
template <typename R>
void check_plane_wave(const std::array<int, 4>& n, const std::array<double, 4>& theta) {
  const Extents lat{4, 6, 8, 10};
  OperatorSetup<R> s(lat, ref::unit_links(lat), 0.12, 1.0, theta);
  SourceParams sc;
  sc.kind = SourceKind::PlaneWave;
  sc.momentum = n;
  for (int k = 0; k < 12; ++k) sc.spinor[k] = Cd(0.1 * k - 0.3, 0.05 * k * k - 0.2);
  const auto psi = make_source(s.geom, sc, theta);
  std::array<double, 4> p;
  for (int mu = 0; mu < 4; ++mu) p[mu] = (2 * kPi * n[mu] + theta[mu]) / lat[mu];
  const ref::Mat4 mp = ref::free_dirac_momentum(p, 0.12);
  std::vector<Cd> expect(psi.size());
  for (std::size_t site = 0; site < psi.size() / 12; ++site)
    for (int a = 0; a < 4; ++a)
      for (int c = 0; c < 3; ++c) {
        Cd v = 0;
        for (int b = 0; b < 4; ++b) v += mp[a * 4 + b] * psi[site * 12 + b * 3 + c];
        expect[site * 12 + a * 3 + c] = v;
      }
  EXPECT_LT(rel_diff(s.apply_m(psi), expect), tolerance<R>());
}

TEST(Dirac, FreePlaneWaveAntiperiodicDouble) { check_plane_wave<double>({1, -2, 3, 0}, {0, 0, 0, kPi}); }
TEST(Dirac, FreePlaneWaveTwistedDouble) { check_plane_wave<double>({0, 1, -1, 2}, {0.4, -1.2, 2.0, kPi + 0.3}); }
TEST(Dirac, FreePlaneWaveSingle) { check_plane_wave<float>({2, 1, 0, -1}, {0, 0, 0, kPi}); }

TEST(Dirac, Gamma5Hermiticity) {
  const auto links = ref::random_su3_links(kLatA, 31);
  OperatorSetup<double> s(kLatA, links, 0.12, 1.1, kTheta);
  const auto chi = ref::random_spinor(kLatA, 32), psi = ref::random_spinor(kLatA, 33);
  const Cd lhs = ref::inner_product(chi, s.apply_m(psi));
  const Cd rhs = ref::inner_product(ref::apply_gamma5(s.apply_m(ref::apply_gamma5(chi))), psi);
  EXPECT_LT(std::abs(lhs - rhs) / std::abs(lhs), 1e-13);
}

// <chi, Mhat psi> = <Mhat^dag chi, psi> on odd fields.
template <typename R>
void check_mhat_adjoint() {
  const auto links = ref::random_su3_links(kLatB, 41);
  OperatorSetup<R> s(kLatB, links, 0.12, 1.4, kTheta);
  const SpinorField<R> chi = s.field(ref::random_spinor(kLatB, 42)), psi = s.field(ref::random_spinor(kLatB, 43));
  ParitySpinor<R> m_psi(s.geom), mdag_chi(s.geom);
  s.op->apply_mhat(m_psi, psi.odd);
  s.op->apply_mhat_dag(mdag_chi, chi.odd);
  const Cd lhs = blas::dot(s.ctx, chi.odd, m_psi), rhs = blas::dot(s.ctx, mdag_chi, psi.odd);
  EXPECT_LT(std::abs(lhs - rhs) / std::abs(lhs), 10 * tolerance<R>());
}
TEST(Dirac, MhatDagIsAdjointOfMhatDouble) { check_mhat_adjoint<double>(); }
TEST(Dirac, MhatDagIsAdjointOfMhatSingle) { check_mhat_adjoint<float>(); }

// The fused CG operator equals Mhat^dag applied after Mhat.
TEST(Dirac, MdagMEqualsMhatDagOfMhat) {
  const auto links = ref::random_su3_links(kLatB, 45);
  OperatorSetup<double> s(kLatB, links, 0.12, 1.4, kTheta);
  const SpinorField<double> psi = s.field(ref::random_spinor(kLatB, 46));
  ParitySpinor<double> v(s.geom), fused(s.geom), t(s.geom), two_step(s.geom);
  s.op->apply_mdagm(fused, v, psi.odd);
  s.op->apply_mhat(t, psi.odd);
  s.op->apply_mhat_dag(two_step, t);
  SpinorField<double> a(s.geom), b(s.geom);
  blas::convert(s.ctx, a.odd, fused);
  blas::convert(s.ctx, b.odd, two_step);
  std::vector<Cd> na = s.natural(a), nb = s.natural(b);
  EXPECT_LT(rel_diff(na, nb), 1e-14);
}

// |Mhat psi|^2 as the CG operator returns it (per site from oe_clover's epilogue, reduced over those) is the norm of
// v = Mhat psi computed from the field: bitwise (the same per-site values summed in the same order), with halos
// forced through the halo code or not.
template <typename R>
void check_fused_norm(const std::array<bool, 4>& force) {
  const auto links = ref::random_su3_links(kLatA, 47);
  OperatorSetup<R> s(kLatA, links, 0.12, 1.4, kTheta, force);
  const SpinorField<R> psi = s.field(ref::random_spinor(kLatA, 48));
  ParitySpinor<R> v(s.geom), out(s.geom);
  backend::PendingSums pending;
  s.op->apply_mdagm(out, v, psi.odd, &pending);
  EXPECT_EQ(blas::global_sum(s.ctx, pending), blas::norm2(s.ctx, v));
}
TEST(Dirac, FusedNormOfMhatIsNorm2OfMhatDouble) { check_fused_norm<double>({false, false, false, false}); }
TEST(Dirac, FusedNormOfMhatIsNorm2OfMhatSingleWithHalos) { check_fused_norm<float>({true, true, true, true}); }

// U'_mu(x) = W(x) U_mu(x) W(x+mu)^dag, psi' = W psi  =>  M' psi' = W M psi.
TEST(Dirac, GaugeCovariance) {
  const auto links = ref::random_su3_links(kLatA, 51);
  const auto w = ref::random_gauge_transform(kLatA, 52);
  const auto psi = ref::random_spinor(kLatA, 53);
  OperatorSetup<double> s(kLatA, links, 0.12, 1.2, kTheta);
  OperatorSetup<double> t(kLatA, ref::gauge_transform_links(kLatA, links, w), 0.12, 1.2, kTheta);
  const auto lhs = t.apply_m(ref::gauge_transform_spinor(kLatA, psi, w));
  const auto rhs = ref::gauge_transform_spinor(kLatA, s.apply_m(psi), w);
  EXPECT_LT(rel_diff(lhs, rhs), 1e-13);
}

TEST(Dirac, CloverMatchesReferenceCloverTerm) {
  const auto links = ref::random_su3_links(kLatB, 61);
  OperatorSetup<double> s(kLatB, links, 0.125, 1.7, kTheta);
  const auto psi = ref::random_spinor(kLatB, 62);
  SpinorField<double> in = s.field(psi), out(s.geom);
  s.op->apply_clover(out.even, in.even, 0, false);
  s.op->apply_clover(out.odd, in.odd, 1, false);
  EXPECT_LT(rel_diff(s.natural(out), ref::apply_clover_term(kLatB, links, 0.125, 1.7, psi)), 1e-13);
}

template <typename R>
void check_clover_inverse() {
  const auto links = ref::random_su3_links(kLatA, 71);
  OperatorSetup<R> s(kLatA, links, 0.125, 1.9, kTheta);
  const auto psi = ref::random_spinor(kLatA, 72);
  SpinorField<R> in = s.field(psi), t(s.geom), out(s.geom);
  for (int p = 0; p < 2; ++p) {
    s.op->apply_clover(t.parity(p), in.parity(p), p, true);
    s.op->apply_clover(out.parity(p), t.parity(p), p, false);
  }
  EXPECT_LT(rel_diff(s.natural(out), psi), tolerance<R>());
}
TEST(Dirac, CloverTimesInverseIsIdentityDouble) { check_clover_inverse<double>(); }
TEST(Dirac, CloverTimesInverseIsIdentitySingle) { check_clover_inverse<float>(); }

// The even-odd pieces reassemble M: with x_e = A_ee^-1 kappa H_eo x_o (reconstruct from b = 0),
// (M x)_e = 0 and (M x)_o = A_oo Mhat x_o.
TEST(Dirac, EvenOddPiecesReassembleM) {
  const auto links = ref::random_su3_links(kLatA, 81);
  OperatorSetup<double> s(kLatA, links, 0.12, 1.3, kTheta);
  SpinorField<double> x = s.field(ref::random_spinor(kLatA, 82)), zero(s.geom), expect(s.geom);
  s.op->reconstruct(x, zero);  // x_e from x_o, b = 0
  const auto mx = ref::apply_wilson_clover(kLatA, links, 0.12, 1.3, kTheta, s.natural(x));
  ParitySpinor<double> mhat(s.geom);
  s.op->apply_mhat(mhat, x.odd);
  s.op->apply_clover(expect.odd, mhat, 1, false);
  const auto e = s.natural(expect);
  EXPECT_LT(rel_diff(mx, e), 1e-13);
}

// bhat_o = A_oo^-1 (b_o + kappa H_oe A_ee^-1 b_e) makes Mhat x_o = bhat_o equivalent to M x = b.
TEST(Dirac, PreparedSourceIsSchurComplementSource) {
  const auto links = ref::random_su3_links(kLatB, 91);
  OperatorSetup<double> s(kLatB, links, 0.12, 1.3, kTheta);
  const auto x_nat = ref::random_spinor(kLatB, 92);
  const auto b_nat = ref::apply_wilson_clover(kLatB, links, 0.12, 1.3, kTheta, x_nat);
  SpinorField<double> x = s.field(x_nat), b = s.field(b_nat);
  ParitySpinor<double> bhat(s.geom), mhat_x(s.geom);
  s.op->prepare_source(bhat, b);
  s.op->apply_mhat(mhat_x, x.odd);
  SpinorField<double> l(s.geom), r(s.geom);
  blas::convert(s.ctx, l.odd, bhat);
  blas::convert(s.ctx, r.odd, mhat_x);
  EXPECT_LT(rel_diff(s.natural(l), s.natural(r)), 1e-13);
  SpinorField<double> rec(s.geom);
  blas::convert(s.ctx, rec.odd, x.odd);
  s.op->reconstruct(rec, b);
  EXPECT_LT(rel_diff(s.natural(rec), x_nat), 1e-13);
}

// Every hot kernel reports the minimum bytes of docs/conventions.md s. 11: eo_clover 992 B per site in fp32 with the
// compressed clover term (kernels/clover_dynamic.hpp), 1056 B where A^-1 is stored (AMD GPUs).
TEST(Dirac, HotKernelsReportMinimumBytesAndFlops) {
  OperatorSetup<float> s(kLatB, ref::random_su3_links(kLatB, 95), 0.12, 1.0, kTheta);
  const SpinorField<float> psi = s.field(ref::random_spinor(kLatB, 96));
  ParitySpinor<float> out(s.geom), v(s.geom);
  s.op->apply_mdagm(out, v, psi.odd);
  const double vh = s.geom.half_volume();
  int seen = 0;
  for (const auto& k : s.metrics.table()) {
    if (k.name == "eo_clover" || k.name == "eo_clover_dag") {
      EXPECT_DOUBLE_EQ(k.bytes / k.calls, (kCloverDynamic<float> ? 992.0 : 1056.0) * vh) << k.name;
      EXPECT_DOUBLE_EQ(k.flops / k.calls, (1320.0 + 552.0) * vh) << k.name;
      ++seen;
    }
    if (k.name == "oe_clover" || k.name == "oe_clover_dag") {
      EXPECT_GT(k.bytes, 0.0);
      EXPECT_GT(k.flops, 0.0);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 4);
}

}  // namespace
}  // namespace emprism::test
