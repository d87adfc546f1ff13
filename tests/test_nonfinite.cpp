// test_nonfinite.cpp: values that are not finite never hang the solver nor pass a check (issue 15, defects 3 and 4):
// the CG stops at the first residual that is NaN or Inf (CgResult::nonfinite) within max_iter, in double, single and
// mixed precision; the SU(3) check rejects a link holding NaN or Inf; the input reader rejects values that overflow
// in the chosen precision, naming the key.
// Who may call: ctest (emprism_tests).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kernels/errors.hpp"
#include "operator_fixture.hpp"
#include "src/lattice/gauge.hpp"
#include "src/physics/cg.hpp"
#include "src/run/input.hpp"

namespace emprism::test {
namespace {

const std::array<double, 4> kAnti{0, 0, 0, 3.14159265358979323846};
const Extents kLat{4, 4, 4, 4};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename Ro, typename Ri>
CgResult solve(OperatorSetup<Ro>& s, WilsonClover<Ri>& inner, const std::vector<Cd>& b_nat, int max_iter = 200) {
  SpinorField<Ro> b = s.field(b_nat), x(s.geom);
  CgParams p;
  p.tol = 1e-10;
  p.max_iter = max_iter;
  return solve_eo_cg(*s.op, inner, b, x, p);
}

std::vector<Cd> source_with(double value, std::uint64_t seed) {
  std::vector<Cd> b = ref::random_spinor(kLat, seed);
  b[37] = Cd(value, 0.0);
  return b;
}

TEST(NonFinite, NanInTheSourceStopsTheDoubleSolve) {
  OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 1), 0.12, 1.0, kAnti);
  const CgResult r = solve(s, *s.op, source_with(kNaN, 2));
  EXPECT_TRUE(r.nonfinite);
  EXPECT_FALSE(r.converged);
  EXPECT_LE(r.iterations, 200);
}

TEST(NonFinite, NanLinkStopsTheSolveWithinMaxIter) {
  auto links = ref::random_su3_links(kLat, 3);
  links[100] = Cd(kNaN, 0.0);
  OperatorSetup<double> s(kLat, links, 0.12, 0.0, kAnti);
  const CgResult r = solve(s, *s.op, ref::random_spinor(kLat, 4), 50);
  EXPECT_TRUE(r.nonfinite);
  EXPECT_LE(r.iterations, 50);
}

TEST(NonFinite, OverflowInSinglePrecisionStopsTheSolve) {
  OperatorSetup<float> s(kLat, ref::random_su3_links(kLat, 5), 0.12, 1.0, kAnti);
  const CgResult r = solve(s, *s.op, source_with(3e38, 6));
  EXPECT_TRUE(r.nonfinite);
  EXPECT_LE(r.iterations, 200);
}

TEST(NonFinite, OverflowOfTheInnerPrecisionStopsTheMixedSolve) {
  const auto links = ref::random_su3_links(kLat, 7);
  OperatorSetup<double> s(kLat, links, 0.12, 1.0, kAnti);
  OperatorSetup<float> sloppy(kLat, links, 0.12, 1.0, kAnti);
  const CgResult r = solve(s, *sloppy.op, source_with(1e60, 8), 100);  // finite in double, Inf in float
  EXPECT_TRUE(r.nonfinite);
  EXPECT_LE(r.iterations, 100);
}

TEST(NonFinite, FiniteSolveIsNotFlagged) {
  OperatorSetup<double> s(kLat, ref::random_su3_links(kLat, 9), 0.12, 1.0, kAnti);
  const CgResult r = solve(s, *s.op, ref::random_spinor(kLat, 10));
  EXPECT_FALSE(r.nonfinite);
  EXPECT_TRUE(r.converged);
}

TEST(NonFinite, Su3CheckRejectsNanAndInf) {
  SU3<double> u{};  // value-initialised: the off-diagonal entries are read
  for (int i = 0; i < 3; ++i) u.e[i][i] = {1.0, 0.0};
  EXPECT_LT(unitarity_deviation(u), 1e-15);
  SU3<double> nan_link = u;
  nan_link.e[1][2] = {kNaN, 0.0};
  EXPECT_FALSE(unitarity_deviation(nan_link) <= 1.0);
  SU3<double> all_nan;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) all_nan.e[i][j] = {kNaN, kNaN};
  EXPECT_FALSE(unitarity_deviation(all_nan) <= 1.0);
  SU3<double> inf_link = u;
  inf_link.e[0][0] = {std::numeric_limits<double>::infinity(), 0.0};
  EXPECT_FALSE(unitarity_deviation(inf_link) <= 1.0);
}

// ---- the input reader

std::string input(const std::string& precision, const std::string& dirac, const std::string& solve) {
  return "[lattice]\nextents = [4, 4, 4, 8]\n[dirac]\n" + dirac + "[solver]\nprecision = \"" + precision +
         "\"\n[output]\nfile = \"out.h5\"\n\n" + solve;
}

std::string error_of(const std::string& text) {
  try {
    run::parse_config(text, "test.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

const char kPoint[] = "[[solve]]\ntype = \"point\"\n";

TEST(NonFinite, KappaBeyondSinglePrecisionIsRefusedNamingTheKey) {
  EXPECT_EQ(error_of(input("single", "kappa = 1e39\n", kPoint)).rfind("dirac.kappa: 1e+39 overflows in single", 0), 0u);
  EXPECT_EQ(error_of(input("mixed", "kappa = 1e10\n", kPoint)).rfind("dirac.kappa:", 0), 0u);
  EXPECT_EQ(error_of(input("double", "kappa = 0.125\n", kPoint)), "<no error>");
}

TEST(NonFinite, HugeThetaIsRefused) {
  EXPECT_EQ(error_of(input("double", "kappa = 0.12\ntheta_over_pi = [0, 0, 0, 1e300]\n", kPoint))
                .rfind("dirac.theta_over_pi:", 0),
            0u);
}

TEST(NonFinite, PlaneWaveEntriesThatOverflowAreRefused) {
  std::string spinor = "spinor = [[1e300, 0]";
  for (int k = 1; k < 12; ++k) spinor += ", [0, 0]";
  const std::string wave = "[[solve]]\ntype = \"plane_wave\"\nmomentum = [0, 0, 0, 0]\n" + spinor + "]\n";
  EXPECT_EQ(error_of(input("double", "kappa = 0.12\n", wave)).rfind("solve[0].spinor: entry 1e+300 overflows", 0), 0u);
}

TEST(NonFinite, SmearingWeightThatOverflowsIsRefused) {
  const std::string prop = "[[solve]]\ntype = \"propagator\"\nsmearing = \"jacobi\"\nsmearing_steps = 10\n";
  EXPECT_EQ(error_of(input("double", "kappa = 0.12\n", prop + "smearing_weight = 1e300\n"))
                .rfind("solve[0].smearing_weight:", 0),
            0u);
  EXPECT_EQ(error_of(input("double", "kappa = 0.12\n", prop + "smearing_weight = 0.25\n")), "<no error>");
}

}  // namespace
}  // namespace emprism::test
