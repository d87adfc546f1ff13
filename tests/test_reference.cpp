// Self-checks of the test-only reference operator (tests/reference/reference.hpp) against facts that any
// correct implementation of docs/conventions.md ss. 1-9 satisfies: gamma algebra, free-field plane waves, gamma5-
// hermiticity, gauge covariance, clover-term symmetries, plaquette, and the analytic free propagator.
// Conventions: those of reference.hpp (natural site order, spinor (s*4 + spin)*3 + colour). One identity per
// TEST, each asserted with a tolerance. The whole file runs in a few seconds at -O2 on one core.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include "reference/reference.hpp"

namespace emprism::ref {
namespace {

constexpr double kTol = 1e-12;
constexpr double kPi = 3.14159265358979323846;
const Cd kI{0.0, 1.0};

double max_abs_diff(const Mat4& a, const Mat4& b) {
  double d = 0;
  for (int i = 0; i < 16; ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// ||a - b|| / ||b||
double rel_diff(const std::vector<Cd>& a, const std::vector<Cd>& b) {
  EXPECT_EQ(a.size(), b.size());
  double num = 0;
  for (std::size_t i = 0; i < a.size(); ++i) num += std::norm(a[i] - b[i]);
  return std::sqrt(num / norm2(b));
}

Mat4 scaled(const Mat4& a, Cd s) {
  Mat4 c{};
  for (int i = 0; i < 16; ++i) c[i] = s * a[i];
  return c;
}

Mat4 plus(const Mat4& a, const Mat4& b) {
  Mat4 c{};
  for (int i = 0; i < 16; ++i) c[i] = a[i] + b[i];
  return c;
}

// psi(x) = exp(i p.x) eta for x in [0, L), eta a fixed spin-colour vector.
std::vector<Cd> plane_wave(const Extents& L, const std::array<double, 4>& p, const std::array<Cd, 12>& eta) {
  const int V = volume(L);
  std::vector<Cd> psi(static_cast<std::size_t>(V) * 12);
  for (int s = 0; s < V; ++s) {
    const Coords x = site_coords(L, s);
    double px = 0;
    for (int mu = 0; mu < 4; ++mu) px += p[mu] * x[mu];
    for (int i = 0; i < 12; ++i) psi[static_cast<std::size_t>(s) * 12 + i] = std::exp(kI * px) * eta[i];
  }
  return psi;
}

// Applies the free-field eigen-relation for several momenta and random eta; returns the worst relative error.
double plane_wave_error(const Extents& L, const std::array<double, 4>& theta, double kappa, double csw) {
  const std::vector<Cd> links = unit_links(L);
  const std::vector<Coords> modes = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 2, 1, 3}, {3, 5, 2, 7}, {1, 4, 3, 1}};
  std::vector<Cd> etas = random_spinor({1, 1, 1, 1}, 7);
  double worst = 0;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    std::array<double, 4> p{};
    for (int mu = 0; mu < 4; ++mu) p[mu] = (2 * kPi * modes[m][mu] + theta[mu]) / L[mu];
    std::array<Cd, 12> eta{};
    for (int i = 0; i < 12; ++i) eta[i] = etas[i] * Cd(1.0 + m, -0.5 * m);
    const std::vector<Cd> psi = plane_wave(L, p, eta);
    const std::vector<Cd> got = apply_wilson_clover(L, links, kappa, csw, theta, psi);
    // expected: (M(p) (x) 1_colour) eta at every site, times the plane wave
    const Mat4 mp = free_dirac_momentum(p, kappa);
    std::array<Cd, 12> meta{};
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int c = 0; c < 3; ++c) meta[a * 3 + c] += mp[a * 4 + b] * eta[b * 3 + c];
    worst = std::max(worst, rel_diff(got, plane_wave(L, p, meta)));
  }
  return worst;
}

TEST(Reference, GammaMatricesAreHermitian) {
  const auto g = gamma();
  for (int mu = 0; mu < 4; ++mu) EXPECT_LT(max_abs_diff(g[mu], mat4_adjoint(g[mu])), kTol) << "mu=" << mu;
  EXPECT_LT(max_abs_diff(gamma5(), mat4_adjoint(gamma5())), kTol);
}

TEST(Reference, GammaMatricesAnticommute) {
  const auto g = gamma();
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = 0; nu < 4; ++nu) {
      const Mat4 anti = plus(mat4_mul(g[mu], g[nu]), mat4_mul(g[nu], g[mu]));
      const Mat4 expect = scaled(mat4_identity(), mu == nu ? 2.0 : 0.0);
      EXPECT_LT(max_abs_diff(anti, expect), kTol) << "mu=" << mu << " nu=" << nu;
    }
}

TEST(Reference, Gamma5IsProductAndDiagonal) {
  const auto g = gamma();
  const Mat4 product = mat4_mul(mat4_mul(mat4_mul(g[0], g[1]), g[2]), g[3]);
  Mat4 diag{};
  diag[0] = 1;
  diag[5] = 1;
  diag[10] = -1;
  diag[15] = -1;
  EXPECT_LT(max_abs_diff(gamma5(), product), kTol);
  EXPECT_LT(max_abs_diff(gamma5(), diag), kTol);
  for (int mu = 0; mu < 4; ++mu)
    EXPECT_LT(max_abs_diff(plus(mat4_mul(gamma5(), g[mu]), mat4_mul(g[mu], gamma5())), Mat4{}), kTol);
}

TEST(Reference, SigmaIsHermitianAndEqualsIGammaGamma) {
  const auto g = gamma();
  for (int mu = 0; mu < 4; ++mu)
    for (int nu = 0; nu < 4; ++nu) {
      const Mat4 s = sigma(mu, nu);
      EXPECT_LT(max_abs_diff(s, mat4_adjoint(s)), kTol);
      EXPECT_LT(max_abs_diff(s, scaled(sigma(nu, mu), -1.0)), kTol);
      if (mu != nu) {
        EXPECT_LT(max_abs_diff(s, scaled(mat4_mul(g[mu], g[nu]), kI)), kTol);
      }
    }
}

TEST(Reference, Mat4InverseOfFreeDiracMomentum) {
  // M(p) = a + i b.gamma with real a, b, so M(p) M(p)^dag = (a^2 + b^2) 1.
  const std::array<double, 4> p{0.3, -1.2, 2.5, kPi / 8};
  const double kappa = 0.13;
  const Mat4 m = free_dirac_momentum(p, kappa);
  double a = 1, b2 = 0;
  for (int mu = 0; mu < 4; ++mu) {
    a -= 2 * kappa * std::cos(p[mu]);
    b2 += 4 * kappa * kappa * std::sin(p[mu]) * std::sin(p[mu]);
  }
  EXPECT_LT(max_abs_diff(mat4_mul(m, mat4_adjoint(m)), scaled(mat4_identity(), a * a + b2)), kTol);
  EXPECT_LT(max_abs_diff(mat4_mul(m, mat4_inverse(m)), mat4_identity()), kTol);
  EXPECT_LT(max_abs_diff(mat4_mul(mat4_inverse(m), m), mat4_identity()), kTol);
}

TEST(Reference, RandomLinksAreSpecialUnitary) {
  const std::vector<Cd> u = random_su3_matrices(200, 11);
  for (int m = 0; m < 200; ++m) {
    const Cd* a = &u[static_cast<std::size_t>(m) * 9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        Cd uud = 0;
        for (int k = 0; k < 3; ++k) uud += a[i * 3 + k] * std::conj(a[j * 3 + k]);
        EXPECT_LT(std::abs(uud - Cd(i == j ? 1.0 : 0.0)), kTol);
      }
    const Cd det =
        a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
    EXPECT_LT(std::abs(det - 1.0), kTol);
  }
}

TEST(Reference, FreePlaneWaveAntiperiodicTime) {
  EXPECT_LT(plane_wave_error({4, 6, 4, 8}, {0, 0, 0, kPi}, 0.124, 1.2), kTol);
}

TEST(Reference, FreePlaneWaveTwistedBoundary) {
  EXPECT_LT(plane_wave_error({4, 6, 4, 8}, {0.3, -1.1, 0.7, kPi + 0.2}, 0.11, 0.0), kTol);
}

TEST(Reference, Gamma5Hermiticity) {
  const Extents L{4, 6, 4, 8};
  const std::array<double, 4> theta{0.3, 0, -0.5, kPi};
  const std::vector<Cd> links = random_su3_links(L, 1);
  const std::vector<Cd> chi = random_spinor(L, 2), psi = random_spinor(L, 3);
  const double kappa = 0.125, csw = 1.2;
  const Cd lhs = inner_product(chi, apply_wilson_clover(L, links, kappa, csw, theta, psi));
  const Cd rhs = inner_product(apply_gamma5(apply_wilson_clover(L, links, kappa, csw, theta, apply_gamma5(chi))), psi);
  EXPECT_LT(std::abs(lhs - rhs), kTol * std::sqrt(norm2(chi) * norm2(psi)));
  EXPECT_GT(std::abs(lhs), 1.0);  // not trivially zero
}

TEST(Reference, DenseMatrixGamma5TimesMIsHermitian) {
  // On a tiny lattice (extent 2 makes forward and backward neighbours coincide): g5 M is a hermitian matrix,
  // and the dense matrix times a vector equals apply_wilson_clover.
  const Extents L{2, 2, 2, 4};
  const std::array<double, 4> theta{0.4, 0.0, 1.0, kPi};
  const std::vector<Cd> links = random_su3_links(L, 5);
  const double kappa = 0.13, csw = 1.2;
  const std::vector<Cd> m = dense_wilson_clover(L, links, kappa, csw, theta);
  const std::size_t n = static_cast<std::size_t>(volume(L)) * 12;
  ASSERT_EQ(m.size(), n * n);
  auto g5 = [](std::size_t i) { return (i / 3) % 4 < 2 ? 1.0 : -1.0; };
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      worst = std::max(worst, std::abs(g5(i) * m[i * n + j] - std::conj(g5(j) * m[j * n + i])));
  EXPECT_LT(worst, kTol);
  const std::vector<Cd> psi = random_spinor(L, 6);
  std::vector<Cd> mpsi(n, Cd(0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) mpsi[i] += m[i * n + j] * psi[j];
  EXPECT_LT(rel_diff(mpsi, apply_wilson_clover(L, links, kappa, csw, theta, psi)), kTol);
}

TEST(Reference, GaugeCovarianceWithClover) {
  const Extents L{4, 6, 4, 8};
  const std::array<double, 4> theta{0.3, 0, -0.5, kPi};
  const std::vector<Cd> links = random_su3_links(L, 21);
  const std::vector<Cd> W = random_gauge_transform(L, 22);
  const std::vector<Cd> psi = random_spinor(L, 23);
  const double kappa = 0.125, csw = 1.2;
  const std::vector<Cd> lhs =
      apply_wilson_clover(L, gauge_transform_links(L, links, W), kappa, csw, theta, gauge_transform_spinor(L, psi, W));
  const std::vector<Cd> rhs = gauge_transform_spinor(L, apply_wilson_clover(L, links, kappa, csw, theta, psi), W);
  EXPECT_LT(rel_diff(lhs, rhs), kTol);
}

TEST(Reference, PlaquetteIsOneOnUnitLinks) {
  EXPECT_LT(std::abs(plaquette({4, 6, 4, 8}, unit_links({4, 6, 4, 8})) - 1.0), kTol);
}

TEST(Reference, PlaquetteIsGaugeInvariant) {
  const Extents L{4, 6, 4, 8};
  const std::vector<Cd> links = random_su3_links(L, 31);
  const double p = plaquette(L, links);
  EXPECT_LT(std::abs(p), 0.1);  // random links: Re tr P / 3 averages to ~0
  EXPECT_LT(std::abs(plaquette(L, gauge_transform_links(L, links, random_gauge_transform(L, 32))) - p), kTol);
  // A pure gauge field (the transform of U = 1) has plaquette 1.
  EXPECT_LT(std::abs(plaquette(L, gauge_transform_links(L, unit_links(L), random_gauge_transform(L, 33))) - 1.0), kTol);
}

TEST(Reference, FieldStrengthOfOneExcitedLink) {
  // U = 1 except U_d(x) = G. The link lies on the plaquettes {x, x+d, x+d+o, x+o} (seen as G from every corner,
  // counter-clockwise in the (d, o) plane) and {x-o, x-o+d, x+d, x} (seen as G^dag). F_{d o} = (Q - Q^dag)/8 is
  // then +(G - G^dag)/8 at x+o and x+d+o, -(G - G^dag)/8 at x-o and x+d-o, and 0 at x and x+d (where both
  // plaquettes meet and cancel) and everywhere else; F_{o d} = -F_{d o}; planes without d vanish.
  const Extents L{4, 4, 4, 4};
  const Coords x{1, 2, 1, 2};
  const std::vector<Cd> G = random_su3_matrices(1, 41);
  for (int d = 0; d < 4; ++d) {
    std::vector<Cd> links = unit_links(L);
    for (int i = 0; i < 9; ++i) links[(static_cast<std::size_t>(site_index(L, x)) * 4 + d) * 9 + i] = G[i];
    const std::vector<Cd> f = field_strength(L, links);
    double worst = 0;
    for (int mu = 0; mu < 4; ++mu)
      for (int nu = mu + 1; nu < 4; ++nu) {
        std::vector<double> weight(volume(L), 0.0);
        if (mu == d || nu == d) {
          const int o = (mu == d) ? nu : mu;
          const double orient = (mu == d) ? 1.0 : -1.0;
          auto at = [&](int step_d, int step_o) {
            Coords y = x;
            y[d] += step_d;
            y[o] += step_o;
            return site_index(L, y);
          };
          weight[at(0, 1)] = weight[at(1, 1)] = orient;
          weight[at(0, -1)] = weight[at(1, -1)] = -orient;
        }
        for (int s = 0; s < volume(L); ++s)
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
              const Cd expect = weight[s] * (G[r * 3 + c] - std::conj(G[c * 3 + r])) / 8.0;
              const Cd got = f[((static_cast<std::size_t>(s) * 6 + plane_index(mu, nu)) * 3 + r) * 3 + c];
              worst = std::max(worst, std::abs(got - expect));
            }
      }
    EXPECT_LT(worst, kTol) << "excited direction d=" << d;
  }
}

TEST(Reference, CloverTermOfOneExcitedLink) {
  // U = 1 except U_0(x) = G: at y = x + e_1 only F_{01} is nonzero, so A(y) = 1 + i csw kappa sigma_{01} (x)
  // (G - G^dag)/8 (pins the sign of i and the spin-colour assembly); at x itself A = 1.
  const Extents L{4, 4, 4, 4};
  const Coords x{1, 2, 1, 2};
  const Coords y{1, 3, 1, 2};
  const std::vector<Cd> G = random_su3_matrices(1, 42);
  std::vector<Cd> links = unit_links(L);
  for (int i = 0; i < 9; ++i) links[(static_cast<std::size_t>(site_index(L, x)) * 4 + 0) * 9 + i] = G[i];
  const double kappa = 0.13, csw = 1.7;
  const std::vector<Cd> psi = random_spinor(L, 43);
  const std::vector<Cd> apsi = apply_clover_term(L, links, kappa, csw, psi);
  const Mat4 s01 = sigma(0, 1);
  const std::size_t sy = static_cast<std::size_t>(site_index(L, y)) * 12;
  const std::size_t sx = static_cast<std::size_t>(site_index(L, x)) * 12;
  for (int a = 0; a < 4; ++a)
    for (int ca = 0; ca < 3; ++ca) {
      Cd expect = psi[sy + a * 3 + ca];
      for (int b = 0; b < 4; ++b)
        for (int cb = 0; cb < 3; ++cb)
          expect += kI * csw * kappa * s01[a * 4 + b] * (G[ca * 3 + cb] - std::conj(G[cb * 3 + ca])) / 8.0 *
                    psi[sy + b * 3 + cb];
      EXPECT_LT(std::abs(apsi[sy + a * 3 + ca] - expect), kTol);
      EXPECT_LT(std::abs(apsi[sx + a * 3 + ca] - psi[sx + a * 3 + ca]), kTol);
    }
}

TEST(Reference, CloverTermIsHermitian) {
  const Extents L{4, 6, 4, 8};
  const std::vector<Cd> links = random_su3_links(L, 51);
  const std::vector<Cd> chi = random_spinor(L, 52), psi = random_spinor(L, 53);
  const double kappa = 0.125, csw = 1.2;
  const std::vector<Cd> apsi = apply_clover_term(L, links, kappa, csw, psi);
  const Cd lhs = inner_product(chi, apsi);
  const Cd rhs = inner_product(apply_clover_term(L, links, kappa, csw, chi), psi);
  EXPECT_LT(std::abs(lhs - rhs), kTol * std::sqrt(norm2(chi) * norm2(psi)));
  EXPECT_GT(rel_diff(apsi, psi), 1e-2);  // A is not the identity on random links
}

TEST(Reference, CloverTermCommutesWithGamma5) {
  const Extents L{4, 6, 4, 8};
  const std::vector<Cd> links = random_su3_links(L, 61);
  const std::vector<Cd> psi = random_spinor(L, 62);
  const double kappa = 0.125, csw = 1.2;
  const std::vector<Cd> a_g5 = apply_clover_term(L, links, kappa, csw, apply_gamma5(psi));
  const std::vector<Cd> g5_a = apply_gamma5(apply_clover_term(L, links, kappa, csw, psi));
  EXPECT_LT(rel_diff(a_g5, g5_a), kTol);
}

TEST(Reference, CswZeroIsPlainWilson) {
  const Extents L{4, 6, 4, 8};
  const std::array<double, 4> theta{0, 0, 0, kPi};
  const std::vector<Cd> links = random_su3_links(L, 71);
  const std::vector<Cd> psi = random_spinor(L, 72);
  const double kappa = 0.125;
  EXPECT_LT(rel_diff(apply_clover_term(L, links, kappa, 0.0, psi), psi), kTol);
  const std::vector<Cd> h = apply_hopping(L, links, theta, psi);
  std::vector<Cd> wilson(psi.size());
  for (std::size_t i = 0; i < psi.size(); ++i) wilson[i] = psi[i] - kappa * h[i];
  EXPECT_LT(rel_diff(apply_wilson_clover(L, links, kappa, 0.0, theta, psi), wilson), kTol);
}

TEST(Reference, FreePointPropagatorInvertsOperator) {
  // M applied to the momentum-space propagator column gives the point source back.
  const Extents L{4, 4, 4, 6};
  const double kappa = 0.12, csw = 1.0;
  const std::vector<Cd> links = unit_links(L);
  const Coords x0{1, 2, 3, 4};
  for (const auto& theta : {std::array<double, 4>{0, 0, 0, kPi}, std::array<double, 4>{0.5, -0.3, 0, kPi + 0.4}}) {
    for (const auto& [spin, colour] : {std::pair{0, 0}, std::pair{2, 1}, std::pair{3, 2}}) {
      const std::vector<Cd> prop = free_point_propagator(L, kappa, theta, x0, spin, colour);
      std::vector<Cd> source(prop.size(), Cd(0));
      source[(static_cast<std::size_t>(site_index(L, x0)) * 4 + spin) * 3 + colour] = 1;
      const std::vector<Cd> back = apply_wilson_clover(L, links, kappa, csw, theta, prop);
      EXPECT_LT(rel_diff(back, source), 1e-10) << "spin=" << spin << " colour=" << colour;
    }
  }
}

TEST(Reference, FreePionCorrelatorMatchesPropagatorAndIsTimeSymmetric) {
  const Extents L{4, 4, 4, 6};
  const double kappa = 0.12;
  const std::array<double, 4> theta{0, 0, 0, kPi};
  const Coords x0{0, 1, 2, 3};
  const std::vector<double> c = free_pion_correlator(L, kappa, theta, x0);
  ASSERT_EQ(c.size(), 6u);
  std::vector<double> direct(L[3], 0.0);
  for (int spin = 0; spin < 4; ++spin)
    for (int colour = 0; colour < 3; ++colour) {
      const std::vector<Cd> prop = free_point_propagator(L, kappa, theta, x0, spin, colour);
      for (int s = 0; s < volume(L); ++s) {
        const int dt = (site_coords(L, s)[3] - x0[3] + L[3]) % L[3];
        for (int i = 0; i < 12; ++i) direct[dt] += std::norm(prop[static_cast<std::size_t>(s) * 12 + i]);
      }
    }
  for (int dt = 0; dt < L[3]; ++dt) {
    EXPECT_GT(c[dt], 0.0);
    EXPECT_LT(std::abs(c[dt] - direct[dt]), kTol * c[0]) << "dt=" << dt;
    EXPECT_LT(std::abs(c[dt] - c[(L[3] - dt) % L[3]]), kTol * c[0]) << "dt=" << dt;  // time reflection
  }
  EXPECT_GT(c[0], c[L[3] / 2]);
}

}  // namespace
}  // namespace emprism::ref
