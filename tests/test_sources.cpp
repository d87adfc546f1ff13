// test_sources.cpp: the [[solve]] sources: point, random (gaussian, Z2; reproducible and independent of the
// decomposition) and plane wave, against their definitions in src/physics/sources.hpp.
#include <gtest/gtest.h>

#include "operator_fixture.hpp"

namespace emprism::test {
namespace {

const Extents kLat{4, 6, 4, 8};
const double kPi = 3.14159265358979323846;

TEST(Sources, PointSourceIsOneNonZeroAtTheSite) {
  const Geometry g = Geometry::single_rank(kLat);
  SourceParams sc;
  sc.kind = SourceKind::Point;
  sc.site = {3, 5, 1, 7};
  sc.spin = 3;
  sc.colour = 2;
  const auto src = make_source(g, sc, {0, 0, 0, kPi});
  const std::size_t at = static_cast<std::size_t>(((3 + 4 * (5 + 6 * (1 + 4 * 7))) * 4 + 3) * 3 + 2);
  EXPECT_EQ(src[at], Cd(1.0, 0.0));
  EXPECT_EQ(ref::norm2(src), 1.0);
}

TEST(Sources, GaussianNoiseHasUnitVarianceAndZeroMean) {
  const Geometry g = Geometry::single_rank({8, 8, 8, 8});
  SourceParams sc;
  sc.kind = SourceKind::Random;
  sc.noise = NoiseKind::Gaussian;
  sc.seed = 5;
  const auto src = make_source(g, sc, {0, 0, 0, kPi});
  Cd mean = 0;
  double var = 0;
  for (const auto& z : src) {
    mean += z;
    var += std::norm(z);
  }
  const double n = static_cast<double>(src.size());
  EXPECT_NEAR(var / n, 1.0, 5 / std::sqrt(n));  // E|z|^2 = 1, Var|z|^2 = 1
  EXPECT_LT(std::abs(mean / n), 5 / std::sqrt(n));
}

TEST(Sources, Z2NoiseIsPlusOrMinusOne) {
  const Geometry g = Geometry::single_rank(kLat);
  SourceParams sc;
  sc.kind = SourceKind::Random;
  sc.noise = NoiseKind::Z2;
  const auto src = make_source(g, sc, {0, 0, 0, kPi});
  int plus = 0;
  for (const auto& z : src) {
    ASSERT_TRUE(z == Cd(1, 0) || z == Cd(-1, 0));
    plus += z.real() > 0;
  }
  const double n = static_cast<double>(src.size());
  EXPECT_LT(std::abs(plus - n / 2), 5 * std::sqrt(n) / 2);
}

TEST(Sources, RandomSourceIsReproducibleAndSeeded) {
  const Geometry g = Geometry::single_rank(kLat);
  SourceParams sc;
  sc.kind = SourceKind::Random;
  sc.seed = 9;
  const auto a = make_source(g, sc, {0, 0, 0, kPi}), b = make_source(g, sc, {0, 0, 0, kPi});
  sc.seed = 10;
  const auto c = make_source(g, sc, {0, 0, 0, kPi});
  EXPECT_EQ(a, b);
  EXPECT_GT(rel_diff(a, c), 0.5);
}

TEST(Sources, RandomSourceDoesNotDependOnDecomposition) {
  const Extents local{2, 6, 4, 4}, origin{2, 0, 0, 4};
  const Geometry whole = Geometry::single_rank(kLat), part(kLat, local, origin);
  SourceParams sc;
  sc.kind = SourceKind::Random;
  sc.seed = 21;
  const auto w = make_source(whole, sc, {0, 0, 0, kPi}), p = make_source(part, sc, {0, 0, 0, kPi});
  for (std::int64_t lex = 0; lex < part.local_volume(); ++lex) {
    int x[4];
    part.local_coords(lex, x);
    const std::int64_t glex = part.global_lex(x);
    for (int k = 0; k < 12; ++k) ASSERT_EQ(p[lex * 12 + k], w[glex * 12 + k]);
  }
}

TEST(Sources, PlaneWaveHasTheDocumentedMomentum) {
  const Geometry g = Geometry::single_rank(kLat);
  const std::array<double, 4> theta{0.5, 0, 0, kPi};
  SourceParams sc;
  sc.kind = SourceKind::PlaneWave;
  sc.momentum = {1, 0, -1, 2};
  sc.spinor[4] = Cd(0.5, -2.0);
  const auto src = make_source(g, sc, theta);
  for (std::int64_t lex = 0; lex < g.local_volume(); ++lex) {
    int x[4];
    g.local_coords(lex, x);
    double ph = 0;
    for (int mu = 0; mu < 4; ++mu) ph += (2 * kPi * sc.momentum[mu] + theta[mu]) / kLat[mu] * x[mu];
    ASSERT_LT(std::abs(src[lex * 12 + 4] - std::polar(1.0, ph) * Cd(0.5, -2.0)), 1e-14);
    ASSERT_EQ(src[lex * 12 + 5], Cd(0, 0));
  }
}

}  // namespace
}  // namespace emprism::test
