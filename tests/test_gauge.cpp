// test_gauge.cpp: gauge-field generation (unit, random with width), SU(3) projection, plaquette and link
// trace against the reference, independence of the random field from the decomposition; host sums that do not
// depend on the number of OpenMP threads.
#include <gtest/gtest.h>

#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "operator_fixture.hpp"
#include "src/lattice/ordered_sum.hpp"

namespace emprism::test {
namespace {

const Extents kLat{4, 6, 4, 8};

TEST(Gauge, RandomLinksAreSU3) {
  const Geometry g = Geometry::single_rank(kLat);
  for (double width : {1.0, 0.3}) {
    const HostGauge u = make_random_gauge(g, 7, width);
    double dev = 0;
    for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
      int x[4];
      g.local_coords(lex, x);
      for (int mu = 0; mu < 4; ++mu) dev = std::max(dev, unitarity_deviation(u.at(x, mu)));
    }
    EXPECT_LT(dev, 1e-13) << "width " << width;
  }
}

TEST(Gauge, WidthZeroIsUnitField) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 7, 0.0);
  EXPECT_DOUBLE_EQ(plaquette(u), 1.0);
  EXPECT_DOUBLE_EQ(link_trace(u), 1.0);
}

TEST(Gauge, UnitFieldHasPlaquetteAndTraceOne) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_unit_gauge(g);
  EXPECT_EQ(plaquette(u), 1.0);
  EXPECT_EQ(link_trace(u), 1.0);
}

TEST(Gauge, WidthMovesPlaquetteMonotonicallyFromOne) {
  const Geometry g = Geometry::single_rank(kLat);
  double last = 1.0;
  for (double w : {0.1, 0.3, 0.6, 1.0}) {
    const double p = plaquette(make_random_gauge(g, 3, w));
    EXPECT_LT(p, last) << "width " << w;
    last = p;
  }
}

// Haar-random links: E[Re tr P / 3] = 0, the standard deviation of one sample is 1/sqrt(18).
TEST(Gauge, HaarRandomPlaquetteAveragesToZero) {
  const Extents lat{8, 8, 8, 8};
  const Geometry g = Geometry::single_rank(lat);
  const double p = plaquette(make_random_gauge(g, 5, 1.0));
  const double sigma = 1.0 / std::sqrt(18.0 * 6.0 * g.local_volume());
  EXPECT_LT(std::abs(p), 5 * sigma);
}

TEST(Gauge, PlaquetteMatchesReference) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 9, 0.4);
  EXPECT_NEAR(plaquette(u), ref::plaquette(kLat, gauge_to_natural(u)), 1e-14);
}

// ordered_sum adds in blocks of kOrderedSumBlock terms, then the blocks in order: checked against that sum written
// out serially, on terms whose sum depends on the order of the additions.
TEST(Gauge, OrderedSumAddsBlocksInOrder) {
  const std::int64_t n = 3 * kOrderedSumBlock + 17;
  auto term = [](std::int64_t i) { return (i % 3 == 0 ? 1e16 : 1.0) * (i % 2 ? -1.0 : 1.0) + 0.1 * i; };
  double expect = 0;
  for (std::int64_t b = 0; b * kOrderedSumBlock < n; ++b) {
    double s = 0;
    for (std::int64_t i = b * kOrderedSumBlock; i < std::min(n, (b + 1) * kOrderedSumBlock); ++i) s += term(i);
    expect += s;
  }
  const double got = ordered_sum(n, term);
  EXPECT_EQ(std::memcmp(&got, &expect, sizeof(double)), 0) << got << " vs " << expect;
}

#ifdef _OPENMP
// The plaquette (written to every output file and compared on resume) has the same bits on 1 and 3 threads.
TEST(Gauge, PlaquetteIsIndependentOfThreadCount) {
  const Geometry g = Geometry::single_rank({8, 8, 8, 16});
  const HostGauge u = make_random_gauge(g, 21, 0.7);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = plaquette(u);
  omp_set_num_threads(3);
  const double three = plaquette(u);
  omp_set_num_threads(saved);
  EXPECT_EQ(std::memcmp(&one, &three, sizeof(double)), 0) << one << " vs " << three;
}
#endif

// U'_mu(x) = W(x) U_mu(x) W(x+mu)^dag with random W leaves the production plaquette unchanged.
TEST(Gauge, PlaquetteIsUnchangedByARandomGaugeTransformation) {
  const Geometry g = Geometry::single_rank(kLat);
  const HostGauge u = make_random_gauge(g, 31, 0.6);
  HostGauge v(g);
  gauge_from_natural(ref::gauge_transform_links(kLat, gauge_to_natural(u), ref::random_gauge_transform(kLat, 32)), v);
  EXPECT_GT(rel_diff(gauge_to_natural(v), gauge_to_natural(u)), 0.1);  // the links did change
  EXPECT_NEAR(plaquette(v), plaquette(u), 1e-14);
}

TEST(Gauge, RandomFieldIsReproducibleFromSeed) {
  const Geometry g = Geometry::single_rank(kLat);
  const auto a = gauge_to_natural(make_random_gauge(g, 42, 0.7));
  const auto b = gauge_to_natural(make_random_gauge(g, 42, 0.7));
  const auto c = gauge_to_natural(make_random_gauge(g, 43, 0.7));
  EXPECT_EQ(a, b);
  EXPECT_GT(rel_diff(a, c), 0.1);
}

// The links of a sub-block drawn on a rank-like geometry (local extents and origin) equal the same links
// of the whole lattice: the field does not depend on the decomposition.
TEST(Gauge, RandomFieldDoesNotDependOnDecomposition) {
  const Extents global{4, 6, 4, 8}, local{2, 6, 2, 4}, origin{2, 0, 2, 4};
  const Geometry whole = Geometry::single_rank(global);
  const Geometry part(global, local, origin);
  const HostGauge uw = make_random_gauge(whole, 77, 0.8), up = make_random_gauge(part, 77, 0.8);
  for (std::int64_t lex = 0; lex < part.local_volume(); ++lex) {
    int x[4], y[4];
    part.local_coords(lex, x);
    for (int mu = 0; mu < 4; ++mu) y[mu] = x[mu] + origin[mu];
    for (int mu = 0; mu < 4; ++mu)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          ASSERT_EQ(up.at(x, mu).e[a][b].re, uw.at(y, mu).e[a][b].re);
          ASSERT_EQ(up.at(x, mu).e[a][b].im, uw.at(y, mu).e[a][b].im);
        }
  }
}

TEST(Gauge, NaturalOrderRoundTrip) {
  const Geometry g = Geometry::single_rank(kLat);
  const auto links = ref::random_su3_links(kLat, 3);
  HostGauge u(g);
  gauge_from_natural(links, u);
  EXPECT_EQ(gauge_to_natural(u), links);
}

TEST(Gauge, OddExtentIsAnInputError) { EXPECT_THROW(Geometry::single_rank({4, 5, 4, 4}), InputError); }

}  // namespace
}  // namespace emprism::test
