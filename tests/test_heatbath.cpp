// test_heatbath.cpp: the quenched heatbath (src/heatbath.hpp) on one rank (grid nullptr): the SU(2) sampler's
// moments, the staple against the plaquette, links staying in SU(3), reproducibility from the seed (and
// independence of the thread count), overrelaxation keeping the action, the weak- and strong-coupling limits,
// and the plaquette at beta = 6.0 and 5.7 on 8^4 against the published values (the two statistical tests take
// ~5 s each in a Release build, ~11 s for the whole suite). The decomposition independence is
// tests/mpi/test_heatbath_mpi.cpp. Convention: Wilson action, plaquette = average of Re tr P / 3 (conventions s. 7).
// Single rank.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "comm/communicator.hpp"
#include "src/gauge.hpp"
#include "src/heatbath.hpp"

namespace emprism {
namespace {

bool bitwise_equal(const HostGauge& a, const HostGauge& b) {
  const Geometry& g = a.geometry();
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu)
      if (std::memcmp(&a.at(x, mu), &b.at(x, mu), sizeof(SU3<double>)) != 0) return false;
  }
  return true;
}

double max_unitarity_deviation(const HostGauge& u) {
  const Geometry& g = u.geometry();
  double dev = 0;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu) dev = std::fmax(dev, unitarity_deviation(u.at(x, mu)));
  }
  return dev;
}

// <x0> and <x0^2> of the density sqrt(1 - x0^2) exp(alpha x0) on [-1, 1] (x0 = cos t: sin^2 t exp(alpha cos t)).
void su2_moments(double alpha, double& m1, double& m2) {
  const int n = 20000;
  const double pi = 3.14159265358979323846, h = pi / n;
  double z = 0, s1 = 0, s2 = 0;
  for (int k = 1; k < n; ++k) {  // trapezoid; the integrand vanishes at both ends
    const double t = k * h, c = std::cos(t), w = std::sin(t) * std::sin(t) * std::exp(alpha * (c - 1.0));
    z += w;
    s1 += w * c;
    s2 += w * c * c;
  }
  m1 = s1 / z;
  m2 = s2 / z;
}

struct Stats {
  double mean = 0, sigma = 0;
};

// Mean and its error from bins of `bin` consecutive measurements.
Stats binned(const std::vector<double>& v, int bin) {
  const int nb = static_cast<int>(v.size()) / bin;
  std::vector<double> b(nb, 0.0);
  for (int i = 0; i < nb * bin; ++i) b[i / bin] += v[i] / bin;
  Stats s;
  for (double x : b) s.mean += x / nb;
  double var = 0;
  for (double x : b) var += (x - s.mean) * (x - s.mean);
  s.sigma = std::sqrt(var / (nb - 1) / nb);
  return s;
}

// Thermalises 8^4 from cold at beta, then measures the plaquette after each of `meas` sweeps.
Stats plaquette_8x4(double beta, int therm, int meas, int bin, std::uint64_t seed) {
  const Geometry g = Geometry::single_rank({8, 8, 8, 8});
  HostGauge u = make_unit_gauge(g);
  Communicator comm(MPI_COMM_WORLD);
  HeatbathParams p;
  p.beta = beta;
  p.or_per_sweep = 4;
  p.seed = seed;
  thermalise(u, p, therm, nullptr, comm, 0);
  const std::vector<double> plaq = thermalise(u, p, meas, nullptr, comm, static_cast<std::uint64_t>(therm));
  return binned(plaq, bin);
}

// The SU(2) draw of both methods (Haar rejection below alpha = 1.5, Kennedy-Pendleton above) has the moments of
// sqrt(1 - x0^2) exp(alpha x0): mean and second moment within 5 standard errors over 20000 draws.
TEST(Heatbath, SU2SamplerMoments) {
  const int n = 20000;
  for (double alpha : {0.0, 0.7, 1.49, 1.51, 4.0, 12.0, 60.0}) {
    double s1 = 0, s2 = 0, s4 = 0;
    for (int i = 0; i < n; ++i) {
      const double x0 = su2_heatbath_x0(alpha, 11, static_cast<std::uint64_t>(i));
      ASSERT_TRUE(x0 >= -1.0 && x0 <= 1.0) << "alpha " << alpha << " draw " << i << ": " << x0;
      s1 += x0;
      s2 += x0 * x0;
      s4 += x0 * x0 * x0 * x0;
    }
    const double m1 = s1 / n, m2 = s2 / n, var1 = m2 - m1 * m1, var2 = s4 / n - m2 * m2;
    double e1, e2;
    su2_moments(alpha, e1, e2);
    EXPECT_NEAR(m1, e1, 5 * std::sqrt(var1 / n) + 1e-12) << "alpha " << alpha;
    EXPECT_NEAR(m2, e2, 5 * std::sqrt(var2 / n) + 1e-12) << "alpha " << alpha;
  }
}

// Every plaquette contains 4 links and appears once in each of their staples:
// sum_{x, mu} Re tr(U_mu(x) A_mu(x)) = 4 * 6 V * 3 <P>.
TEST(Heatbath, StapleSumMatchesPlaquette) {
  const Geometry g = Geometry::single_rank({4, 6, 4, 8});
  const HostGauge u = make_random_gauge(g, 5, 0.4);
  double sum = 0;
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu) sum += trace(u.at(x, mu) * wilson_staple(u, x, mu)).re;
  }
  EXPECT_NEAR(sum / (72.0 * g.local_volume()), plaquette(u), 1e-13);
}

// refresh_link_halo(u, mu) gives the halo copies of U_mu (edges and corners included) that fill_halo gives,
// and leaves the other directions alone.
TEST(Heatbath, LinkHaloRefreshMatchesFillHalo) {
  const Geometry g = Geometry::single_rank({4, 6, 2, 8});
  for (int mu = 0; mu < 4; ++mu) {
    HostGauge u = make_random_gauge(g, 21, 1.0);
    const HostGauge before = u;
    const HostGauge other = make_random_gauge(g, 22, 1.0);
    for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
      int x[4];
      g.local_coords(lex, x);
      u.at(x, mu) = other.at(x, mu);
    }
    HostGauge full = u;
    full.fill_halo(nullptr);
    refresh_link_halo(u, mu, nullptr);
    int x[4];
    std::int64_t bad = 0, stale = 0;
    for (x[3] = -1; x[3] <= g.local()[3]; ++x[3])
      for (x[2] = -1; x[2] <= g.local()[2]; ++x[2])
        for (x[1] = -1; x[1] <= g.local()[1]; ++x[1])
          for (x[0] = -1; x[0] <= g.local()[0]; ++x[0])
            for (int nu = 0; nu < 4; ++nu) {
              const SU3<double>& want = nu == mu ? full.at(x, nu) : before.at(x, nu);
              if (std::memcmp(&u.at(x, nu), &want, sizeof(SU3<double>)) != 0) ++bad;
              if (nu == mu && std::memcmp(&u.at(x, nu), &before.at(x, nu), sizeof(SU3<double>)) == 0) ++stale;
            }
    EXPECT_EQ(bad, 0) << "mu " << mu;
    EXPECT_EQ(stale, 0) << "mu " << mu;
  }
}

TEST(Heatbath, LinksStaySU3) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 8});
  HostGauge u = make_random_gauge(g, 3, 1.0);
  HeatbathParams p;
  p.beta = 5.7;
  for (std::uint64_t s = 0; s < 3; ++s) {
    heatbath_sweep(u, p, s, nullptr);
    EXPECT_LT(max_unitarity_deviation(u), 1e-13) << "after sweep " << s;
  }
  overrelax_sweep(u, nullptr);
  EXPECT_LT(max_unitarity_deviation(u), 1e-12) << "after an overrelaxation sweep (not reunitarised)";
}

TEST(Heatbath, ReproducibleFromSeed) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  Communicator comm(MPI_COMM_WORLD);
  HeatbathParams p;
  p.beta = 6.0;
  p.or_per_sweep = 2;
  p.seed = 42;
  HostGauge a = make_unit_gauge(g), b = make_unit_gauge(g), c = make_unit_gauge(g), d = make_unit_gauge(g);
  const std::vector<double> pa = thermalise(a, p, 3, nullptr, comm);
  const std::vector<double> pb = thermalise(b, p, 3, nullptr, comm);
  EXPECT_TRUE(bitwise_equal(a, b));
  EXPECT_EQ(pa, pb);
  // Three sweeps at once = one, then two more starting at sweep index 1.
  thermalise(d, p, 1, nullptr, comm, 0);
  thermalise(d, p, 2, nullptr, comm, 1);
  EXPECT_TRUE(bitwise_equal(a, d));
  HeatbathParams q = p;
  q.seed = 43;
  thermalise(c, q, 3, nullptr, comm);
  EXPECT_FALSE(bitwise_equal(a, c));
  // A different sweep index gives a different field too.
  HostGauge e = make_unit_gauge(g);
  thermalise(e, p, 3, nullptr, comm, 7);
  EXPECT_FALSE(bitwise_equal(a, e));
}

#ifdef _OPENMP
// 8^3 x 16: blocks of 4096 sites, the smallest that run on several threads.
TEST(Heatbath, IndependentOfThreadCount) {
  const Geometry g = Geometry::single_rank({8, 8, 8, 16});
  HeatbathParams p;
  p.beta = 5.9;
  p.or_per_sweep = 1;
  const int saved = omp_get_max_threads();
  HostGauge a = make_random_gauge(g, 9, 1.0), b = make_random_gauge(g, 9, 1.0);
  omp_set_num_threads(1);
  heatbath_sweep(a, p, 0, nullptr);
  omp_set_num_threads(3);
  heatbath_sweep(b, p, 0, nullptr);
  omp_set_num_threads(saved);
  EXPECT_TRUE(bitwise_equal(a, b));
}
#endif

// Overrelaxation is microcanonical: the action (plaquette) is unchanged to rounding, the links change.
TEST(Heatbath, OverrelaxationKeepsAction) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  HostGauge u = make_unit_gauge(g);
  HeatbathParams p;
  p.or_per_sweep = 0;
  for (std::uint64_t s = 0; s < 3; ++s) heatbath_sweep(u, p, s, nullptr);
  const double before = plaquette(u);
  const std::vector<std::complex<double>> nat = gauge_to_natural(u);
  overrelax_sweep(u, nullptr);
  EXPECT_NEAR(plaquette(u), before, 1e-12);
  EXPECT_NE(gauge_to_natural(u), nat);
}

// Weak coupling: from cold the plaquette stays near 1 and settles at the perturbative value
// 1 - 2/beta - 1.22/beta^2 (SU(3), g^2 = 6/beta: <P> = 1 - g^2/3 - 0.0339 g^4; finite volume O(1/V)).
// (At beta = 50 the equilibrium plaquette is ~0.959, so the "> 0.97" check uses beta = 100.)
TEST(Heatbath, LargeBetaStaysOrdered) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  HostGauge u = make_unit_gauge(g);
  Communicator comm(MPI_COMM_WORLD);
  HeatbathParams p;
  p.beta = 100.0;
  p.or_per_sweep = 2;
  const std::vector<double> plaq = thermalise(u, p, 20, nullptr, comm);
  double mean = 0;
  for (std::size_t i = 0; i < plaq.size(); ++i) {
    EXPECT_GT(plaq[i], 0.97) << "sweep " << i;
    if (i >= 5) mean += plaq[i] / (plaq.size() - 5);
  }
  const double pt = 1.0 - 2.0 / p.beta - 1.22 / (p.beta * p.beta);
  EXPECT_NEAR(mean, pt, 1e-3);
}

// Strong coupling beta = 0: the heatbath is a Haar draw in each subgroup, so the Haar measure (hot start) stays
// invariant and a cold start loses its order at once; <Re tr P / 3> = 0 with 1/sqrt(18) per plaquette.
TEST(Heatbath, ZeroBetaIsHaar) {
  const Geometry g = Geometry::single_rank({4, 4, 4, 4});
  Communicator comm(MPI_COMM_WORLD);
  HeatbathParams p;
  p.beta = 0.0;
  p.or_per_sweep = 0;
  const double sigma_one = 1.0 / std::sqrt(18.0 * 6.0 * g.local_volume());
  HostGauge hot = make_random_gauge(g, 17, 1.0);
  const std::vector<double> plaq = thermalise(hot, p, 5, nullptr, comm);
  double mean = 0;
  for (double x : plaq) mean += x / plaq.size();
  EXPECT_LT(std::fabs(mean), 5 * sigma_one / std::sqrt(5.0));
  EXPECT_LT(std::fabs(link_trace(hot)), 5.0 / std::sqrt(18.0 * 4.0 * g.local_volume()));
  HostGauge cold = make_unit_gauge(g);
  const std::vector<double> pc = thermalise(cold, p, 3, nullptr, comm);
  EXPECT_LT(std::fabs(pc.back()), 5 * sigma_one);
}

// The plaquette on 8^4 against the published values (Re tr P / 3, Wilson action), asserting
// |<P> - P_ref| < 3 sigma + delta with sigma the binned error (required < 0.002) and delta the known systematics:
//   beta = 6.0: P_ref = 0.593683(16), Boyd et al., Nucl. Phys. B 469 (1996) 419 [hep-lat/9602007] (large volume).
//     8^4 at beta = 6.0 (L = 0.75 fm, next to the Nt = 8 deconfinement coupling 6.06) lies above it: with this code
//     8^4 gives 0.59425(12) and 12^4 gives 0.59371(7) (1600 and 2 x 260 measurements), so delta = 0.0008.
//   beta = 5.7: P_ref = 0.549, as quoted to three digits in the literature (e.g. the tadpole factor
//     u0 = <P>^(1/4) = 0.861 of Lepage and Mackenzie, Phys. Rev. D 48 (1993) 2250); delta = 0.0005 for the
//     rounding. With this code 8^4 gives 0.54934(17) and 10^4 0.54936(20): no visible finite-volume shift.
// Thermalisation from cold (30 sweeps at 6.0, 40 at the slower 5.7), then one measurement after each compound
// sweep (heatbath + 4 overrelaxation), binned against the autocorrelation (tau_int ~1.4 at 6.0, ~2.5 at 5.7).
// Deterministic (seeded): the outcome is reproducible.
TEST(Heatbath, PlaquetteBeta6On8x4) {
  const auto t0 = std::chrono::steady_clock::now();
  const Stats s = plaquette_8x4(6.0, 30, 40, 4, 2024);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("beta 6.0, 8^4: <P> = %.5f +- %.5f (%.1f s)\n", s.mean, s.sigma, secs);
  EXPECT_LT(s.sigma, 0.002);
  EXPECT_GT(s.sigma, 0.0);
  EXPECT_LT(std::fabs(s.mean - 0.593683), 3 * s.sigma + 0.0008);
}

TEST(Heatbath, PlaquetteBeta57On8x4) {
  const auto t0 = std::chrono::steady_clock::now();
  const Stats s = plaquette_8x4(5.7, 40, 48, 6, 2025);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("beta 5.7, 8^4: <P> = %.5f +- %.5f (%.1f s)\n", s.mean, s.sigma, secs);
  EXPECT_LT(s.sigma, 0.002);
  EXPECT_GT(s.sigma, 0.0);
  EXPECT_LT(std::fabs(s.mean - 0.549), 3 * s.sigma + 0.0005);
}

}  // namespace
}  // namespace emprism
