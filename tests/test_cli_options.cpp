// test_cli_options.cpp: the pieces behind the command line's --set and --dry-run and the progress lines, tested
// without running the program (tests/python/test_cli_usability.py runs it): assignments over the input text
// (src/run/overrides.hpp), the words of the progress lines (src/run/progress.hpp) and the dry run's listing
// (src/run/plan.hpp). Each TEST checks one property.
// Who may call: the test runner.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/errors.hpp"
#include "src/physics/costs.hpp"
#include "src/run/input.hpp"
#include "src/run/overrides.hpp"
#include "src/run/plan.hpp"
#include "src/run/progress.hpp"

namespace {

using namespace emprism;
using namespace emprism::run;

const char kInput[] =
    "# a comment\n[lattice]\nextents = [4, 4, 4, 8]\n[dirac]\nkappa = 0.1234567890123456\ncsw = 1.0\n"
    "[output]\nfile = \"out.h5\"\n[[solve]]\nname = \"a\"\ntype = \"point\"\n[[solve]]\nname = \"b\"\n"
    "type = \"propagator\"\ntol = 1e-8\n";

// The input above in a file of its own (removed afterwards).
class InputFile {
 public:
  explicit InputFile(const std::string& text) {
    char name[] = "/tmp/emprism_set_XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~InputFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The InputError message of load_config(path, settings), or "" when it succeeds.
std::string error_of(const std::vector<std::string>& settings) {
  const InputFile f(kInput);
  try {
    load_config(f.path(), settings);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SetOption, ReplacesTheValueOfTheFile) {
  const InputFile f(kInput);
  EXPECT_EQ(load_config(f.path(), {"dirac.kappa=0.125"}).dirac.kappa, 0.125);
}

TEST(SetOption, AddsAKeyAndATableTheFileLacks) {
  const InputFile f(kInput);
  const Config c = load_config(f.path(), {"solver.precision=double", "log.progress_every=7"});
  EXPECT_EQ(c.solver.precision, Precision::Double);
  EXPECT_EQ(c.log.progress_every, 7);
}

TEST(SetOption, SetsAKeyOfOneSolveByIndex) {
  const InputFile f(kInput);
  const Config c = load_config(f.path(), {"solve[1].tol=1e-11"});
  EXPECT_EQ(c.solves[1].tol.value_or(0), 1e-11);
  EXPECT_FALSE(c.solves[0].tol.has_value());
}

TEST(SetOption, TakesTheBareWordOfAStringKeyAndAVectorWithoutBrackets) {
  const InputFile f(kInput);
  const Config c = load_config(f.path(), {"gauge.source=random", "comm.force_halo=true,false,false,true"});
  EXPECT_EQ(c.gauge.source, GaugeSource::Random);
  EXPECT_EQ(c.comm.force_halo, (std::array<bool, 4>{true, false, false, true}));
}

TEST(SetOption, TakesAListOfStringsWithoutBracketsOrQuotes) {
  const InputFile f(kInput);
  const Config c = load_config(f.path(), {"solve[1].channels=pion,rho"});
  EXPECT_EQ(c.solves[1].channels, (std::vector<std::string>{"pion", "rho"}));
}

TEST(SetOption, TheLastOfTwoSettingsOfOneKeyWins) {
  const InputFile f(kInput);
  EXPECT_EQ(load_config(f.path(), {"dirac.kappa=0.11", "dirac.kappa=0.12"}).dirac.kappa, 0.12);
}

// The effective input is reread exactly: a setting of a key that is not physics leaves the physics inputs of the file
// as they were (the text is rewritten; numbers must round-trip).
TEST(SetOption, LeavesThePhysicsInputsOfOtherKeysAsInTheFile) {
  const InputFile f(kInput);
  EXPECT_EQ(physics_inputs(load_config(f.path(), {"log.level=warn"})), physics_inputs(load_config(f.path())));
}

TEST(SetOption, InputTextIsTheEffectiveInputHeadedByTheSettings) {
  const InputFile f(kInput);
  const Config c = load_config(f.path(), {"dirac.kappa=0.125"});
  EXPECT_EQ(c.input_text.rfind("# " + f.path() + " with --set dirac.kappa=0.125", 0), 0u) << c.input_text;
  EXPECT_EQ(physics_inputs(parse_config(c.input_text, "reread")), physics_inputs(c));
}

TEST(SetOption, WithoutSettingsTheInputTextIsTheFileAsItIs) {
  const InputFile f(kInput);
  EXPECT_EQ(load_config(f.path(), {}).input_text, kInput);
}

TEST(SetOption, UnknownKeyNamesTheKeyAndTheOption) {
  const std::string e = error_of({"dirac.kapa=0.1"});
  EXPECT_EQ(e.rfind("--set dirac.kapa: unknown key", 0), 0u) << e;
  EXPECT_NE(e.find("dirac.kappa"), std::string::npos) << e;
}

TEST(SetOption, ValueOfTheWrongTypeNamesTheKeyAndTheOption) {
  const std::string e = error_of({"solver.max_iter=many"});
  EXPECT_EQ(e.rfind("--set solver.max_iter: expected integer", 0), 0u) << e;
}

TEST(SetOption, ValueBreakingTheRuleNamesTheKeyAndTheOption) {
  const std::string e = error_of({"dirac.kappa=-0.1"});
  EXPECT_EQ(e.rfind("--set dirac.kappa: must be > 0", 0), 0u) << e;
}

TEST(SetOption, SolveIndexBeyondTheSolvesIsAnError) {
  const std::string e = error_of({"solve[2].tol=1e-9"});
  EXPECT_EQ(e.rfind("--set solve[2]: no such table", 0), 0u) << e;
}

TEST(SetOption, SolveKeyWithoutIndexIsAnError) {
  const std::string e = error_of({"solve.tol=1e-9"});
  EXPECT_EQ(e.rfind("--set solve.tol:", 0), 0u) << e;
}

TEST(SetOption, MissingEqualsSignIsAnError) {
  const std::string e = error_of({"dirac.kappa"});
  EXPECT_EQ(e.rfind("--set dirac.kappa: expected table.key=value", 0), 0u) << e;
}

// ---- progress words

TEST(Progress, EtaIsTheRestAtTheRateSoFar) { EXPECT_EQ(eta_text(2.0, 1, 3), "ETA 4.00 s"); }

TEST(Progress, EtaBeforeAnyWorkIsUnknown) { EXPECT_EQ(eta_text(0.0, 0, 3), "ETA unknown"); }

TEST(Progress, DurationsAboveAMinuteAreInMinutesAndHours) {
  EXPECT_EQ(duration_text(125.2), "2 min 05 s");
  EXPECT_EQ(duration_text(4020), "1 h 07 min");
}

// Residual 1e-2 after 10 iterations in 1 s: a factor 10 per 5 iterations; tol 1e-4 is 10 iterations (1 s) away.
TEST(Progress, CgEtaExtrapolatesTheGeometricFallOfTheResidual) {
  EXPECT_EQ(cg_progress_text(10, 1e-2, 1.0, 1e-4), "(10.0 it/s, ETA 1.00 s to tol 1.0e-04)");
}

TEST(Progress, CgEtaIsUnknownWhileTheResidualHasNotFallen) {
  EXPECT_EQ(cg_progress_text(10, 1.5, 1.0, 1e-4), "(10.0 it/s, ETA unknown)");
}

// ---- the dry run's listing

TEST(DryRunPlan, ListsTheSolvesInOrderWithTypePrecisionAndTolerance) {
  const Config c = parse_config(kInput, "plan");
  ProcessGrid grid;
  grid.dims = {1, 1, 1, 1};
  const std::string plan = solve_plan(c, grid, {10, "assumed"}, {});
  const auto a = plan.find("1. 'a': point, precision single, tol 1.0e-06");
  const auto b = plan.find("2. 'b': propagator, precision single, tol 1.0e-08");
  ASSERT_NE(a, std::string::npos) << plan;
  ASSERT_NE(b, std::string::npos) << plan;
  EXPECT_LT(a, b);
  EXPECT_NE(plan.find("12 columns", b), std::string::npos) << plan;
}

// The time per iteration is the operator's bytes per even site times the even sites over the bandwidth.
TEST(DryRunPlan, TimePerIterationIsBytesOverBandwidth) {
  const Config c = parse_config(kInput, "plan");
  ProcessGrid grid;
  grid.dims = {1, 1, 1, 1};
  const std::string plan = solve_plan(c, grid, {10, "assumed"}, {});
  const double expected_ms = 1e3 * cg_iteration_cost<float>().bytes * (4 * 4 * 4 * 8 / 2) / 10e9;  // the default fp32
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g ms per iteration", expected_ms);
  EXPECT_NE(plan.find(buf), std::string::npos) << buf << "\n" << plan;
}

TEST(DryRunPlan, SolvesCompleteInAPartialFileAreMarkedNotSolvedAgain) {
  const Config c = parse_config(kInput, "plan");
  ProcessGrid grid;
  grid.dims = {1, 1, 1, 1};
  const std::string plan = solve_plan(c, grid, {10, "assumed"}, {"a"});
  EXPECT_NE(plan.find("'a': point"), std::string::npos);
  EXPECT_NE(plan.find("not solved again"), std::string::npos) << plan;
}

// On one rank the CG's x and p updates are one pass (blas::cg_update_direction): one vector (24 reals) less per
// iteration than on several ranks, where the p update is a launch of its own; the same flops.
TEST(DryRunPlan, OneRankIterationMovesOneVectorPassLess) {
  EXPECT_DOUBLE_EQ(cg_iteration_cost<float>(18, 2).bytes - cg_iteration_cost<float>(18, 1).bytes, 24 * 4.0);
  EXPECT_EQ(cg_iteration_cost<float>(18, 2).flops, cg_iteration_cost<float>(18, 1).flops);
}

// The residual update in oe_clover_dag's kernel (on any number of ranks) moves two vectors less (w written and read)
// and two doubles per site more (|r|^2 written per site and read by its sum); the same flops but the sum's one per
// site.
TEST(DryRunPlan, FusedResidualUpdateMovesTwoVectorsLess) {
  for (int ranks : {1, 2}) {
    EXPECT_DOUBLE_EQ(cg_iteration_cost<float>(18, ranks, false).bytes - cg_iteration_cost<float>(18, ranks).bytes,
                     2 * 24 * 4.0 - 16);
    EXPECT_EQ(cg_iteration_cost<float>(18, ranks).flops, cg_iteration_cost<float>(18, ranks, false).flops + 1);
  }
}

// A double-precision iteration moves twice the reals of a single-precision one (plus the same four doubles per site:
// |v|^2 written by oe_clover and read by its sum, |r|^2 written by oe_clover_dag_update and read by its sum).
TEST(DryRunPlan, IterationBytesScaleWithThePrecision) {
  // Twice the bytes in fp64 but for the clover term, which fp32 reads compressed where kCloverDynamic (56 instead of
  // 72 reals, kernels/clover_dynamic.hpp) in three of the four hopping kernels.
  const double clover_saved = kCloverDynamic<float> ? 3 * (72 - 56) * 4.0 : 0;
  EXPECT_DOUBLE_EQ(cg_iteration_cost<double>().bytes - 32, 2 * (cg_iteration_cost<float>().bytes - 32 + clover_saved));
  EXPECT_EQ(cg_iteration_cost<double>().flops, cg_iteration_cost<float>().flops);
}

// A mixed solve's estimate is its sloppy CG's iteration, with the run's links format, and says so.
TEST(DryRunPlan, MixedSolveIsEstimatedWithItsSloppyIteration) {
  ProcessGrid grid;
  grid.dims = {1, 1, 1, 1};
  const auto plan_of = [&](const std::string& solver) {
    const InputFile f(std::string(kInput) + "[solver]\nprecision = \"mixed\"\n" + solver);
    return solve_plan(load_config(f.path(), {"dirac.reconstruct=12"}), grid, {10, "assumed"}, {});
  };
  const auto bytes = [](double b) { return fmt::format("moves {:.0f} bytes per even site", b); };
  const std::string half = plan_of("sloppy = \"half\"\n"), f32d = plan_of("sloppy = \"single_fp64\"\n");
  const std::string single = plan_of("");
  EXPECT_NE(half.find("(half sloppy, links of 12 reals) " + bytes(cg_iteration_cost<Half>(12).bytes)),
            std::string::npos)
      << half;
  EXPECT_NE(f32d.find("(fp32/fp64 sloppy, links of 12 reals) " + bytes(cg_iteration_cost<Fp32Fp64>(12).bytes)),
            std::string::npos)
      << f32d;
  EXPECT_NE(single.find("(fp32 sloppy, links of 12 reals) " + bytes(cg_iteration_cost<float>(12).bytes)),
            std::string::npos)
      << single;
  // 16-bit spinors and clover: fewer bytes than fp32's, whose bytes the fp32/fp64 sloppy CG moves but for its
  // uncompressed clover term and fp32/fp64 partial solution (the same size).
  EXPECT_LT(cg_iteration_cost<Half>(12).bytes, cg_iteration_cost<float>(12).bytes);
  EXPECT_GE(cg_iteration_cost<Fp32Fp64>(12).bytes, cg_iteration_cost<float>(12).bytes);
}

}  // namespace
