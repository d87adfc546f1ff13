// test_smearing.cpp: source smearing (src/physics/smearing.hpp) on one rank: the stout exponential against independent
// evaluations, the APE projection (SU(3), stationary, maximal, covariant), the smeared links (SU(3), covariant,
// trivial limits, smoothing), and the quark smearing (free-field momentum-space results computed here by a direct
// discrete Fourier sum, gauge covariance for every link/quark combination, hermiticity, norm, locality in time).
// Conventions: src/physics/smearing.hpp above SmearingParams; fields in local natural order (lex * 12 + spin * 3 +
// colour), which on one rank is the layout of tests/reference. Tolerances: a few hundred ulps of double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "operator_fixture.hpp"
#include "src/physics/smearing.hpp"

namespace emprism::test {
namespace {

using M3 = SU3<double>;

const Extents kLat{6, 4, 8, 4};  // distinct spatial extents catch mixed-up axes
constexpr int kT0 = 2;
constexpr double kTol = 1e-12;
constexpr double kPi = 3.14159265358979323846;

SmearingParams make_cfg(QuarkSmearingKind kind, int steps, double weight, LinkSmearingKind link_kind = {},
                        int link_steps = 0, double link_weight = 0) {
  SmearingParams c;
  c.kind = kind;
  c.steps = steps;
  c.weight = weight;
  c.link_kind = link_kind;
  c.link_steps = link_steps;
  c.link_weight = link_weight;
  return c;
}

const char* link_name(LinkSmearingKind k) {
  return k == LinkSmearingKind::None ? "none" : k == LinkSmearingKind::Ape ? "ape" : "stout";
}
const char* quark_name(QuarkSmearingKind k) {
  return k == QuarkSmearingKind::None ? "none" : k == QuarkSmearingKind::Wuppertal ? "wuppertal" : "jacobi";
}

// The six quark x link combinations used by the covariance and MPI tests (2 APE steps, 3 stout steps).
std::vector<SmearingParams> all_combinations() {
  std::vector<SmearingParams> out;
  for (QuarkSmearingKind q : {QuarkSmearingKind::Wuppertal, QuarkSmearingKind::Jacobi})
    for (LinkSmearingKind l : {LinkSmearingKind::None, LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
      const double w = q == QuarkSmearingKind::Wuppertal ? 0.4 : 0.13;
      const int ls = l == LinkSmearingKind::Ape ? 2 : l == LinkSmearingKind::Stout ? 3 : 0;
      const double lw = l == LinkSmearingKind::Ape ? 0.6 : 0.1;
      out.push_back(make_cfg(q, 5, w, l, ls, lw));
    }
  return out;
}

std::string describe(const SmearingParams& c) {
  return std::string(quark_name(c.kind)) + " x " + std::to_string(c.steps) + " with " + link_name(c.link_kind) + " x " +
         std::to_string(c.link_steps);
}

M3 matrix_at(const std::vector<Cd>& a, std::size_t offset) {
  M3 m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Cd z = a[offset + static_cast<std::size_t>(3 * i + j)];
      m.e[i][j] = {z.real(), z.imag()};
    }
  return m;
}
double max_abs_diff(const M3& a, const M3& b) {
  double d = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d = std::fmax(d, std::sqrt(norm2(a.e[i][j] - b.e[i][j])));
  return d;
}
M3 scaled(std::complex<double> s, const M3& a) {
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.e[i][j] = Complex<double>{s.real(), s.imag()} * a.e[i][j];
  return r;
}
double re_trace_wdag_x(const M3& w, const M3& x) { return trace(dagger(w) * x).re; }

// A traceless hermitian matrix with Frobenius norm `norm`, from gaussians.
M3 random_traceless_hermitian(std::mt19937_64& rng, double norm) {
  std::normal_distribution<double> gauss;
  M3 g;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) g.e[i][j] = {gauss(rng), gauss(rng)};
  M3 h = scaled(0.5, g + dagger(g));
  const double t = trace(h).re / 3.0;
  for (int i = 0; i < 3; ++i) h.e[i][i].re -= t;
  double n = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) n += norm2(h.e[i][j]);
  return scaled(norm / std::sqrt(n), h);
}
M3 random_su3(unsigned seed) { return matrix_at(ref::random_su3_matrices(1, seed), 0); }

// exp(i Q) in long double: Taylor series of exp(i Q / 2^s) (|Q / 2^s| < 1/8, 30 terms), squared s times.
M3 exp_i_long_double(const M3& q) {
  using L = std::complex<long double>;
  struct LM {
    L e[3][3];
  };
  auto mul = [](const LM& a, const LM& b) {
    LM r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        r.e[i][j] = 0;
        for (int k = 0; k < 3; ++k) r.e[i][j] += a.e[i][k] * b.e[k][j];
      }
    return r;
  };
  long double n = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) n += std::norm(L(q.e[i][j].re, q.e[i][j].im));
  n = std::sqrt(n);
  int s = 0;
  while (n / std::ldexp(1.0L, s) > 0.125L) ++s;
  LM a, sum, term;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      a.e[i][j] = L(0, 1) * L(q.e[i][j].re, q.e[i][j].im) / std::ldexp(1.0L, s);
      sum.e[i][j] = term.e[i][j] = L(i == j, 0);
    }
  for (int k = 1; k <= 30; ++k) {
    term = mul(term, a);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        term.e[i][j] /= static_cast<long double>(k);
        sum.e[i][j] += term.e[i][j];
      }
  }
  for (int k = 0; k < s; ++k) sum = mul(sum, sum);
  M3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.e[i][j] = {static_cast<double>(sum.e[i][j].real()), static_cast<double>(sum.e[i][j].imag())};
  return r;
}

std::vector<Cd> point_source(const Extents& l, const ref::Coords& x0, int spin, int colour) {
  std::vector<Cd> psi(static_cast<std::size_t>(ref::volume(l)) * 12);
  psi[static_cast<std::size_t>(ref::site_index(l, x0)) * 12 + static_cast<std::size_t>(3 * spin + colour)] = 1.0;
  return psi;
}
// Gaussian noise on timeslice t0, zero elsewhere.
std::vector<Cd> slice_noise(const Extents& l, int t0, unsigned seed) {
  std::vector<Cd> psi = ref::random_spinor(l, seed);
  for (int s = 0; s < ref::volume(l); ++s)
    if (ref::site_coords(l, s)[3] != t0)
      for (int k = 0; k < 12; ++k) psi[static_cast<std::size_t>(s) * 12 + static_cast<std::size_t>(k)] = 0.0;
  return psi;
}
std::vector<Cd> smear(const HostGauge& u, const SmearingParams& cfg, std::vector<Cd> psi) {
  SourceSmearer s(u, kT0, cfg, nullptr, nullptr);
  s.apply(psi);
  return psi;
}
HostGauge transformed(const Geometry& g, const HostGauge& u, const std::vector<Cd>& w) {
  HostGauge v(g);
  gauge_from_natural(ref::gauge_transform_links(g.global(), gauge_to_natural(u), w), v);
  return v;
}

// The free-field result by a direct discrete Fourier sum over the spatial momenta k_i = 2 pi n_i / L_i:
//   psi(x) = (1/V_s) sum_k exp(i k.(x - x0)) F(k)  on timeslice x0[3], component (spin, colour).
template <typename F>
std::vector<Cd> free_smeared_point(const Extents& l, const ref::Coords& x0, int spin, int colour, F&& factor) {
  std::vector<Cd> psi(static_cast<std::size_t>(ref::volume(l)) * 12);
  const double vs = double(l[0]) * l[1] * l[2];
  for (int z = 0; z < l[2]; ++z)
    for (int y = 0; y < l[1]; ++y)
      for (int x = 0; x < l[0]; ++x) {
        const int d[3] = {x - x0[0], y - x0[1], z - x0[2]};
        Cd sum = 0;
        for (int n2 = 0; n2 < l[2]; ++n2)
          for (int n1 = 0; n1 < l[1]; ++n1)
            for (int n0 = 0; n0 < l[0]; ++n0) {
              const double k[3] = {2 * kPi * n0 / l[0], 2 * kPi * n1 / l[1], 2 * kPi * n2 / l[2]};
              const double phase = k[0] * d[0] + k[1] * d[1] + k[2] * d[2];
              sum += std::polar(1.0, phase) * factor(std::cos(k[0]) + std::cos(k[1]) + std::cos(k[2]));
            }
        const int s = ref::site_index(l, {x, y, z, x0[3]});
        psi[static_cast<std::size_t>(s) * 12 + static_cast<std::size_t>(3 * spin + colour)] = sum / vs;
      }
  return psi;
}

// ---- the stout exponential ----

// Q = R diag(a, b, -a-b) R^dag: exp(iQ) = R diag(e^{ia}, e^{ib}, e^{-i(a+b)}) R^dag, for small, large, degenerate
// (both signs of det Q) and zero spectra.
TEST(Smearing, ExpMatchesDiagonalisation) {
  const double spectra[][2] = {{0.3, -0.1}, {1.2, 0.7},   {2.5, -1.9},  {1e-5, 3e-6}, {0.4, 0.4},  {-0.4, -0.4},
                               {0.0, 0.0},  {1e-9, 2e-9}, {0.05, 0.02}, {0.06, 0.03}, {1.0, -0.5}, {-2.0, 0.9}};
  unsigned seed = 100;
  for (const auto& ab : spectra) {
    const M3 r = random_su3(seed++);
    const double lam[3] = {ab[0], ab[1], -ab[0] - ab[1]};
    M3 d, e;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        d.e[i][j] = {i == j ? lam[i] : 0.0, 0.0};
        e.e[i][j] = {i == j ? std::cos(lam[i]) : 0.0, i == j ? std::sin(lam[i]) : 0.0};
      }
    const M3 q = r * d * dagger(r);
    EXPECT_LT(max_abs_diff(exp_i_su3(q), r * e * dagger(r)), 1e-14) << "eigenvalues " << ab[0] << ", " << ab[1];
  }
}

// Random traceless hermitian Q over the Taylor (|Q| < 0.14) and Cayley-Hamilton ranges, against long double.
TEST(Smearing, ExpMatchesLongDoubleTaylorSeries) {
  std::mt19937_64 rng(7);
  for (double norm : {1e-8, 1e-4, 0.01, 0.1, 0.14, 0.15, 0.3, 0.8, 1.5, 2.5, 4.0})
    for (int rep = 0; rep < 5; ++rep) {
      const M3 q = random_traceless_hermitian(rng, norm);
      EXPECT_LT(max_abs_diff(exp_i_su3(q), exp_i_long_double(q)), 1e-14) << "|Q| = " << norm;
    }
}

TEST(Smearing, ExpIsSU3) {
  std::mt19937_64 rng(8);
  for (double norm : {1e-6, 0.05, 0.14, 0.15, 0.7, 2.0, 5.0})
    for (int rep = 0; rep < 5; ++rep)
      EXPECT_LT(unitarity_deviation(exp_i_su3(random_traceless_hermitian(rng, norm))), 1e-14) << "|Q| = " << norm;
}

// ---- the APE projection ----

// A matrix like an APE argument: (1 - alpha) V + (alpha / 4) (sum of 4 random SU(3) staples).
M3 ape_like(unsigned seed, double alpha) {
  M3 st = scaled(0.0, random_su3(seed));
  for (unsigned k = 1; k <= 4; ++k) st = st + random_su3(seed + k);
  return scaled(1.0 - alpha, random_su3(seed + 10)) + scaled(alpha / 4.0, st);
}

TEST(Smearing, ProjectionOfScaledSU3IsItself) {
  for (unsigned seed = 1; seed <= 10; ++seed)
    for (double c : {0.3, 1.0, 2.7}) {
      const M3 u = random_su3(seed);
      EXPECT_LT(max_abs_diff(project_su3_maxtrace(scaled(c, u)), u), 1e-14) << "seed " << seed << " c " << c;
    }
}

// The result is in SU(3) and the functional Re tr(W^dag X) is stationary there: the traceless anti-hermitian part
// of X W^dag (its gradient along X -> exp(i eps T) X) vanishes.
TEST(Smearing, ProjectionIsSU3AndStationary) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> gauss;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    M3 w = ape_like(20 * seed, seed <= 20 ? 0.5 : 1.0);
    if (seed > 30)  // general complex matrices too
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) w.e[i][j] = {gauss(rng), gauss(rng)};
    const M3 x = project_su3_maxtrace(w);
    EXPECT_LT(unitarity_deviation(x), 1e-13) << "seed " << seed;
    const M3 m = x * dagger(w);
    M3 a = scaled(0.5, m - dagger(m));
    const Complex<double> t = trace(a);
    double grad = 0, wn = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const Complex<double> g = a.e[i][j] - (i == j ? Complex<double>{t.re / 3, t.im / 3} : Complex<double>{0, 0});
        grad += norm2(g);
        wn += norm2(w.e[i][j]);
      }
    EXPECT_LT(std::sqrt(grad), 1e-13 * std::sqrt(wn)) << "seed " << seed;
  }
}

// The stationary point is a maximum, at least as good as the Gram-Schmidt projection (strictly better in general).
TEST(Smearing, ProjectionMaximisesReTrace) {
  std::mt19937_64 rng(5);
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const M3 w = ape_like(30 * seed, 0.7);
    const M3 x = project_su3_maxtrace(w);
    const double best = re_trace_wdag_x(w, x);
    EXPECT_GE(best, re_trace_wdag_x(w, project_su3(w)) - 1e-14) << "seed " << seed;
    for (int k = 0; k < 20; ++k) {
      const M3 near = exp_i_su3(random_traceless_hermitian(rng, 1e-3)) * x;
      EXPECT_GT(best, re_trace_wdag_x(w, near)) << "seed " << seed;
    }
  }
}

// Proj(A W B) = A Proj(W) B for A, B in SU(3): the APE step is gauge covariant.
TEST(Smearing, ProjectionIsCovariant) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const M3 w = ape_like(40 * seed, 0.8), a = random_su3(40 * seed + 20), b = random_su3(40 * seed + 21);
    EXPECT_LT(max_abs_diff(project_su3_maxtrace(a * w * b), a * project_su3_maxtrace(w) * b), 1e-13) << "seed " << seed;
  }
}

// ---- smeared links ----

TEST(Smearing, SmearedLinksAreSU3) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 21, 1.0);
  for (const SmearingParams& cfg : {make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Ape, 4, 0.5),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Ape, 2, 1.0),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Stout, 4, 0.1),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Stout, 2, 0.25)}) {
    const SourceSmearer s(u, kT0, cfg, nullptr, nullptr);
    double dev = 0;
    int x[3];
    for (x[2] = -1; x[2] <= kLat[2]; ++x[2])  // the halo too
      for (x[1] = -1; x[1] <= kLat[1]; ++x[1])
        for (x[0] = -1; x[0] <= kLat[0]; ++x[0])
          for (int i = 0; i < 3; ++i) dev = std::fmax(dev, unitarity_deviation(s.link(x, i)));
    EXPECT_LT(dev, 1e-12) << link_name(cfg.link_kind) << " x " << cfg.link_steps;
  }
}

// Two link steps against the same steps done here on the natural-order links of timeslice t0: staples by their
// definition, APE as Proj[(1 - alpha) V + (alpha / 4) staples], stout with Q built here from Omega and exponentiated
// in long double; every link of a step from the previous step's links.
TEST(Smearing, LinkStepsMatchTheirDefinition) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 20, 0.8);
  const std::vector<Cd> nat = gauge_to_natural(u);
  const int vs = kLat[0] * kLat[1] * kLat[2];
  auto idx = [&](ref::Coords x) { return static_cast<std::size_t>(ref::site_index(kLat, x)); };  // t = kT0 slice
  for (LinkSmearingKind kind : {LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
    const double w = kind == LinkSmearingKind::Ape ? 0.45 : 0.15;
    std::vector<M3> v(static_cast<std::size_t>(ref::volume(kLat)) * 3);
    for (int s = 0; s < ref::volume(kLat); ++s)
      for (int i = 0; i < 3; ++i)
        v[static_cast<std::size_t>(s) * 3 + static_cast<std::size_t>(i)] =
            matrix_at(nat, (static_cast<std::size_t>(s) * 4 + static_cast<std::size_t>(i)) * 9);
    for (int step = 0; step < 2; ++step) {
      std::vector<M3> next = v;
      for (int s = 0; s < ref::volume(kLat); ++s) {
        const ref::Coords x = ref::site_coords(kLat, s);
        if (x[3] != kT0) continue;
        for (int i = 0; i < 3; ++i) {
          auto at = [&](ref::Coords y, int mu) { return v[idx(y) * 3 + static_cast<std::size_t>(mu)]; };
          auto shift = [](ref::Coords y, int mu, int d) {
            y[static_cast<std::size_t>(mu)] += d;
            return y;
          };
          M3 st = scaled(0.0, at(x, i));
          for (int j = 0; j < 3; ++j) {
            if (j == i) continue;
            st = st + at(x, j) * at(shift(x, j, 1), i) * dagger(at(shift(x, i, 1), j));
            st = st + dagger(at(shift(x, j, -1), j)) * at(shift(x, j, -1), i) * at(shift(shift(x, j, -1), i, 1), j);
          }
          const M3 old = at(x, i);
          M3 updated;
          if (kind == LinkSmearingKind::Ape) {
            updated = project_su3_maxtrace(scaled(1.0 - w, old) + scaled(w / 4.0, st));
          } else {
            const M3 omega = scaled(w, st) * dagger(old);
            const M3 a = dagger(omega) - omega;
            M3 q = scaled({0.0, 0.5}, a);
            const Complex<double> t = trace(a);
            for (int k = 0; k < 3; ++k) q.e[k][k] = q.e[k][k] - Complex<double>{-t.im / 6.0, t.re / 6.0};
            updated = exp_i_long_double(q) * old;
          }
          next[static_cast<std::size_t>(s) * 3 + static_cast<std::size_t>(i)] = updated;
        }
      }
      v = next;
    }
    const SourceSmearer sm(u, kT0, make_cfg(QuarkSmearingKind::None, 0, 0, kind, 2, w), nullptr, nullptr);
    double diff = 0;
    for (int s = 0; s < ref::volume(kLat); ++s) {
      const ref::Coords x = ref::site_coords(kLat, s);
      if (x[3] != kT0) continue;
      const int xs[3] = {x[0], x[1], x[2]};
      for (int i = 0; i < 3; ++i)
        diff = std::fmax(
            diff, max_abs_diff(sm.link(xs, i), v[static_cast<std::size_t>(s) * 3 + static_cast<std::size_t>(i)]));
    }
    EXPECT_LT(diff, kTol) << link_name(kind) << " on " << vs << " sites";
  }
}

// V'_i(x) = W(x) V_i(x) W(x+i)^dag for links smeared from U'_mu(x) = W(x) U_mu(x) W(x+mu)^dag.
TEST(Smearing, SmearedLinksTransformCovariantly) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 22, 0.8);
  const std::vector<Cd> w = ref::random_gauge_transform(kLat, 23);
  const HostGauge uw = transformed(g, u, w);
  for (const SmearingParams& cfg : {make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Ape, 3, 0.6),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Stout, 3, 0.12)}) {
    const SourceSmearer s(u, kT0, cfg, nullptr, nullptr), sw(uw, kT0, cfg, nullptr, nullptr);
    double diff = 0;
    for (int z = 0; z < kLat[2]; ++z)
      for (int y = 0; y < kLat[1]; ++y)
        for (int x = 0; x < kLat[0]; ++x)
          for (int i = 0; i < 3; ++i) {
            const int xs[3] = {x, y, z};
            ref::Coords xi{x, y, z, kT0};
            ++xi[static_cast<std::size_t>(i)];
            const M3 wx = matrix_at(w, static_cast<std::size_t>(ref::site_index(kLat, {x, y, z, kT0})) * 9);
            const M3 wxi = matrix_at(w, static_cast<std::size_t>(ref::site_index(kLat, xi)) * 9);
            diff = std::fmax(diff, max_abs_diff(sw.link(xs, i), wx * s.link(xs, i) * dagger(wxi)));
          }
    EXPECT_LT(diff, kTol) << link_name(cfg.link_kind);
  }
}

// APE with alpha -> 0 moves each link by at most alpha |staples / 4 - V| <= 2 sqrt(3) alpha; alpha = 0 is exact.
TEST(Smearing, ApeWithVanishingAlphaKeepsTheLinks) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 24, 0.9);
  for (double alpha : {1e-9, 0.0}) {
    const SourceSmearer s(u, kT0, make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Ape, 1, alpha), nullptr,
                          nullptr);
    double diff = 0;
    for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
      int x[4];
      g.local_coords(lex, x);
      if (x[3] != kT0) continue;
      for (int i = 0; i < 3; ++i) diff = std::fmax(diff, max_abs_diff(s.link(x, i), u.at(x, i)));
    }
    EXPECT_LT(diff, 4 * alpha + 1e-14) << "alpha " << alpha;
  }
}

// Stout with rho = 0 (exp(0) = 1) and link_steps = 0 (APE or stout) give back the original links.
TEST(Smearing, StoutWithZeroRhoOrNoStepsKeepsTheLinks) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 25, 0.9);
  for (const SmearingParams& cfg : {make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Stout, 3, 0.0),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Stout, 0, 0.2),
                                    make_cfg(QuarkSmearingKind::None, 0, 0, LinkSmearingKind::Ape, 0, 0.5)}) {
    const SourceSmearer s(u, kT0, cfg, nullptr, nullptr);
    double diff = 0;
    for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
      int x[4];
      g.local_coords(lex, x);
      if (x[3] != kT0) continue;
      for (int i = 0; i < 3; ++i) diff = std::fmax(diff, max_abs_diff(s.link(x, i), u.at(x, i)));
    }
    EXPECT_LT(diff, 1e-15) << link_name(cfg.link_kind) << " x " << cfg.link_steps << " weight " << cfg.link_weight;
  }
}

// Spatial plaquette of the unsmeared links against a direct sum over timeslice t0 of the natural-order links, and 1
// on the unit field.
TEST(Smearing, SpatialPlaquetteOfUnsmearedLinks) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 26, 0.5);
  const std::vector<Cd> nat = gauge_to_natural(u);
  auto link = [&](ref::Coords x, int mu) {
    return matrix_at(nat, (static_cast<std::size_t>(ref::site_index(kLat, x)) * 4 + static_cast<std::size_t>(mu)) * 9);
  };
  double sum = 0;
  for (int z = 0; z < kLat[2]; ++z)
    for (int y = 0; y < kLat[1]; ++y)
      for (int x = 0; x < kLat[0]; ++x)
        for (int i = 0; i < 3; ++i)
          for (int j = i + 1; j < 3; ++j) {
            const ref::Coords s{x, y, z, kT0};
            ref::Coords si = s, sj = s;
            ++si[static_cast<std::size_t>(i)];
            ++sj[static_cast<std::size_t>(j)];
            sum += trace(link(s, i) * link(si, j) * dagger(link(sj, i)) * dagger(link(s, j))).re / 3.0;
          }
  const double expected = sum / (3.0 * kLat[0] * kLat[1] * kLat[2]);
  Communicator comm;
  const SmearingParams none = make_cfg(QuarkSmearingKind::Wuppertal, 1, 0.3);
  EXPECT_NEAR(SourceSmearer(u, kT0, none, nullptr, &comm).spatial_plaquette(), expected, kTol);
  EXPECT_NEAR(SourceSmearer(make_unit_gauge(g), kT0, none, nullptr, &comm).spatial_plaquette(), 1.0, 1e-15);
}

// On a rough (Haar-random) field every APE and every stout step raises the spatial plaquette.
TEST(Smearing, PlaquetteRisesWithEveryStep) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 27, 1.0);
  Communicator comm;
  for (LinkSmearingKind kind : {LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
    double last = -1;
    for (int steps = 0; steps <= 5; ++steps) {
      const double w = kind == LinkSmearingKind::Ape ? 0.5 : 0.1;
      const double p = SourceSmearer(u, kT0, make_cfg(QuarkSmearingKind::None, 0, 0, kind, steps, w), nullptr, &comm)
                           .spatial_plaquette();
      EXPECT_GT(p, last + 1e-3) << link_name(kind) << " step " << steps;
      last = p;
    }
    EXPECT_GT(last, 0.5) << link_name(kind);
  }
}

// ---- quark smearing ----

// Unit field: per step the Fourier mode k is multiplied by (1 + 2 alpha sum_i cos k_i) / (1 + 6 alpha). Unit links
// are a fixed point of APE and stout, so the result holds with link smearing too.
TEST(Smearing, WuppertalOnUnitFieldMatchesMomentumSpace) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_unit_gauge(g);
  const ref::Coords x0{1, 3, 6, kT0};
  const double alpha = 0.35;
  const int steps = 7;
  const std::vector<Cd> expected = free_smeared_point(
      kLat, x0, 2, 1, [&](double c) { return std::pow((1 + 2 * alpha * c) / (1 + 6 * alpha), steps); });
  for (LinkSmearingKind lk : {LinkSmearingKind::None, LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
    const SmearingParams cfg = make_cfg(QuarkSmearingKind::Wuppertal, steps, alpha, lk, 2, 0.5);
    EXPECT_LT(rel_diff(smear(u, cfg, point_source(kLat, x0, 2, 1)), expected), kTol) << link_name(lk);
  }
}

// Unit field: Jacobi gives the Fourier mode the geometric sum sum_{n=0}^{steps} (2 kappa_s sum_i cos k_i)^n.
TEST(Smearing, JacobiOnUnitFieldMatchesMomentumSpace) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_unit_gauge(g);
  const ref::Coords x0{5, 0, 7, kT0};
  const double kappa = 0.11;
  const int steps = 9;
  const std::vector<Cd> expected = free_smeared_point(kLat, x0, 0, 2, [&](double c) {
    double sum = 0, term = 1;
    for (int n = 0; n <= steps; ++n, term *= 2 * kappa * c) sum += term;
    return sum;
  });
  for (LinkSmearingKind lk : {LinkSmearingKind::None, LinkSmearingKind::Ape, LinkSmearingKind::Stout}) {
    const SmearingParams cfg = make_cfg(QuarkSmearingKind::Jacobi, steps, kappa, lk, 2, 0.1);
    EXPECT_LT(rel_diff(smear(u, cfg, point_source(kLat, x0, 0, 2)), expected), kTol) << link_name(lk);
  }
}

// smear(U^W, W psi) = W smear(U, psi) for Wuppertal and Jacobi with unsmeared, APE and stout links.
TEST(Smearing, QuarkSmearingIsGaugeCovariant) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 28, 0.7);
  const std::vector<Cd> w = ref::random_gauge_transform(kLat, 29);
  const HostGauge uw = transformed(g, u, w);
  const std::vector<Cd> psi = slice_noise(kLat, kT0, 30);
  for (const SmearingParams& cfg : all_combinations()) {
    const std::vector<Cd> s = smear(u, cfg, psi);
    EXPECT_GT(rel_diff(s, psi), 0.1) << describe(cfg);  // it did smear
    EXPECT_LT(
        rel_diff(smear(uw, cfg, ref::gauge_transform_spinor(kLat, psi, w)), ref::gauge_transform_spinor(kLat, s, w)),
        kTol)
        << describe(cfg);
  }
}

// Both smearings are polynomials in the hermitian H: <chi, S psi> = <S chi, psi>.
TEST(Smearing, SmearingOperatorIsHermitian) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 31, 0.7);
  const std::vector<Cd> psi = slice_noise(kLat, kT0, 32), chi = slice_noise(kLat, kT0, 33);
  for (const SmearingParams& cfg : all_combinations()) {
    const Cd a = ref::inner_product(chi, smear(u, cfg, psi)), b = ref::inner_product(smear(u, cfg, chi), psi);
    EXPECT_LT(std::abs(a - b), kTol * std::abs(a)) << describe(cfg);
  }
}

// |H| <= 6, so each Wuppertal step (1 + alpha H) / (1 + 6 alpha) has norm <= 1; on the unit field the zero mode
// (the sum of the field) is kept exactly.
TEST(Smearing, WuppertalDoesNotIncreaseTheNormAndKeepsTheZeroMode) {
  const Geometry g = Geometry::single_rank(kLat);
  const std::vector<Cd> psi = slice_noise(kLat, kT0, 34);
  const SmearingParams cfg = make_cfg(QuarkSmearingKind::Wuppertal, 10, 0.5, LinkSmearingKind::Stout, 2, 0.1);
  const std::vector<Cd> s = smear(make_random_gauge(g, 35, 0.8), cfg, psi);
  EXPECT_LT(ref::norm2(s), ref::norm2(psi));
  const std::vector<Cd> f = smear(make_unit_gauge(g), cfg, psi);
  for (int k = 0; k < 12; ++k) {
    Cd before = 0, after = 0;
    for (int site = 0; site < ref::volume(kLat); ++site) {
      before += psi[static_cast<std::size_t>(site) * 12 + static_cast<std::size_t>(k)];
      after += f[static_cast<std::size_t>(site) * 12 + static_cast<std::size_t>(k)];
    }
    EXPECT_LT(std::abs(after - before), kTol * std::sqrt(ref::norm2(psi))) << "component " << k;
  }
}

// A point source spreads over timeslice t0 and stays exactly zero on every other timeslice.
TEST(Smearing, PointSourceStaysOnItsTimeslice) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 36, 0.6);
  for (const SmearingParams& cfg : all_combinations()) {
    const std::vector<Cd> s = smear(u, cfg, point_source(kLat, {0, 0, 0, kT0}, 1, 1));
    int on = 0, off = 0;
    for (int site = 0; site < ref::volume(kLat); ++site)
      for (int k = 0; k < 12; ++k)
        if (s[static_cast<std::size_t>(site) * 12 + static_cast<std::size_t>(k)] != Cd(0.0)) {
          if (ref::site_coords(kLat, site)[3] == kT0)
            ++on;
          else
            ++off;
        }
    EXPECT_EQ(off, 0) << describe(cfg);
    EXPECT_GT(on, 3 * 100) << describe(cfg);  // 5 steps reach more than 100 of the 192 sites, in 3 colours
  }
}

// Sites off t0 are neither read nor written: noise there is returned bitwise and does not change t0's result.
TEST(Smearing, OtherTimeslicesAreNeitherReadNorWritten) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 37, 0.6);
  const std::vector<Cd> everywhere = ref::random_spinor(kLat, 38);
  const std::vector<Cd> on_t0 = slice_noise(kLat, kT0, 38);
  for (const SmearingParams& cfg : all_combinations()) {
    const std::vector<Cd> a = smear(u, cfg, everywhere), b = smear(u, cfg, on_t0);
    std::size_t bad = 0;
    for (int site = 0; site < ref::volume(kLat); ++site) {
      const bool t0 = ref::site_coords(kLat, site)[3] == kT0;
      for (int k = 0; k < 12; ++k) {
        const std::size_t i = static_cast<std::size_t>(site) * 12 + static_cast<std::size_t>(k);
        if (a[i] != (t0 ? b[i] : everywhere[i])) ++bad;
      }
    }
    EXPECT_EQ(bad, 0u) << describe(cfg);
  }
}

// The smearing acts on each spin alike: noise in spin 0 moved to spin 3 gives the same colour vectors in spin 3.
TEST(Smearing, ActsOnEachSpinAlike) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 39, 0.6);
  std::vector<Cd> spin0 = slice_noise(kLat, kT0, 40), spin3(spin0.size());
  for (std::size_t site = 0; site < spin0.size() / 12; ++site)
    for (int k = 3; k < 12; ++k) spin0[site * 12 + static_cast<std::size_t>(k)] = 0.0;
  for (std::size_t site = 0; site < spin0.size() / 12; ++site)
    for (int c = 0; c < 3; ++c) spin3[site * 12 + 9 + static_cast<std::size_t>(c)] = spin0[site * 12 + c];
  for (const SmearingParams& cfg : all_combinations()) {
    const std::vector<Cd> a = smear(u, cfg, spin0), b = smear(u, cfg, spin3);
    std::vector<Cd> moved(a.size());
    for (std::size_t site = 0; site < a.size() / 12; ++site)
      for (int c = 0; c < 3; ++c) moved[site * 12 + 9 + static_cast<std::size_t>(c)] = a[site * 12 + c];
    EXPECT_EQ(b, moved) << describe(cfg);
  }
}

// kind = none and steps = 0 leave the field bitwise unchanged.
TEST(Smearing, NoneAndZeroStepsAreTheIdentity) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 41, 0.6);
  const std::vector<Cd> psi = slice_noise(kLat, kT0, 42);
  EXPECT_EQ(smear(u, make_cfg(QuarkSmearingKind::None, 5, 0.3, LinkSmearingKind::Ape, 2, 0.5), psi), psi);
  EXPECT_EQ(smear(u, make_cfg(QuarkSmearingKind::Wuppertal, 0, 0.3), psi), psi);
  EXPECT_EQ(smear(u, make_cfg(QuarkSmearingKind::Jacobi, 0, 0.3), psi), psi);
}

TEST(Smearing, RejectsATimesliceOutsideTheLatticeAndAFieldOfTheWrongSize) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_unit_gauge(g);
  const SmearingParams cfg = make_cfg(QuarkSmearingKind::Wuppertal, 2, 0.3);
  EXPECT_THROW(SourceSmearer(u, kLat[3], cfg, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(SourceSmearer(u, -1, cfg, nullptr, nullptr), std::invalid_argument);
  std::vector<Cd> small(12);
  EXPECT_THROW(SourceSmearer(u, 0, cfg, nullptr, nullptr).apply(small), std::invalid_argument);
}

}  // namespace
}  // namespace emprism::test
