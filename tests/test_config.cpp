// test_config.cpp: unit tests of the input reader (src/run/input.hpp) and the parameter declaration
// (src/run/parameters.hpp).
// One property per test: the example inputs parse to the right values, defaults are filled, and every input rule
// of docs/conventions.md section 12 rejects a bad value with one InputError whose message starts with the key path.
// Convention: inputs are built from a minimal valid input (Input below) with one part replaced.
// Who may call: ctest (emprism_tests).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/errors.hpp"
#include "src/run/input.hpp"
#include "src/run/parameters.hpp"

#ifndef EMPRISM_SOURCE_DIR
#define EMPRISM_SOURCE_DIR "/work/main"
#endif

namespace emprism::run {
namespace {

// A minimal valid input; each test replaces one part. extra holds whole tables placed before the solves.
struct Input {
  std::string lattice = "extents = [4, 4, 4, 8]\n";
  std::string dirac = "kappa = 0.125\n";
  std::string output = "file = \"out.h5\"\n";
  std::string extra;
  std::string solves = "[[solve]]\ntype = \"point\"\n";

  std::string text() const {
    return "[lattice]\n" + lattice + "[dirac]\n" + dirac + "[output]\n" + output + extra + "\n" + solves;
  }
};

Config parse(const std::string& text) { return parse_config(text, "test.toml"); }

// The InputError message of parsing text, or a marker when it parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

testing::AssertionResult starts_with(const std::string& message, const std::string& prefix) {
  if (message.rfind(prefix, 0) == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "message '" << message << "' does not start with '" << prefix << "'";
}

Input with_extra(const std::string& extra) {
  Input in;
  in.extra = extra;
  return in;
}

Input with_output(const std::string& output) {
  Input in;
  in.output = output;
  return in;
}

Input with_solves(const std::string& solves) {
  Input in;
  in.solves = solves;
  return in;
}

// "spinor = [first, [0, 0], ... ]" with 12 entries in all.
std::string spinor_line(const std::string& first) {
  std::string line = "spinor = [" + first;
  for (int k = 1; k < 12; ++k) line += ", [0, 0]";
  return line + "]\n";
}

const std::string kExamples = std::string(EMPRISM_SOURCE_DIR) + "/jobs/examples/";

TEST(Config, QuickstartExampleParses) {
  const Config c = load_config(kExamples + "quickstart.toml");
  EXPECT_EQ(c.lattice.extents, (std::array<int, 4>{8, 8, 8, 16}));
  EXPECT_EQ(c.gauge.source, GaugeSource::Heatbath);
  EXPECT_DOUBLE_EQ(c.gauge.beta, 6.0);
  EXPECT_DOUBLE_EQ(c.dirac.kappa, 0.125);
  EXPECT_DOUBLE_EQ(c.dirac.csw, 1.0);
  EXPECT_EQ(c.output.file, "quickstart.h5");
  ASSERT_EQ(c.solves.size(), 3u);
  EXPECT_EQ(c.solves[0].name, "point_origin");
  EXPECT_EQ(c.solves[0].kind, SolveKind::Point);
  EXPECT_EQ(c.solves[1].kind, SolveKind::Random);
  EXPECT_EQ(c.solves[1].noise, NoiseKind::Z2);
  EXPECT_EQ(c.solves[2].kind, SolveKind::Propagator);
  EXPECT_EQ(c.solves[2].smearing.kind, QuarkSmearingKind::Wuppertal);
}

TEST(Config, FullReferenceExampleSetsEverySectionKey) {
  const Config c = load_config(kExamples + "full_reference.toml");
  EXPECT_EQ(c.lattice.extents, (std::array<int, 4>{8, 8, 8, 16}));
  EXPECT_FALSE(c.lattice.procs.has_value());  // documented but commented out, so the example runs on any rank count
  EXPECT_EQ(c.comm.force_halo, (std::array<bool, 4>{false, false, false, true}));
  EXPECT_EQ(c.comm.transport, CommConfig::Transport::Auto);
  EXPECT_EQ(c.comm.transport_key, "comm.transport");
  EXPECT_EQ(c.gauge.source, GaugeSource::Random);
  EXPECT_DOUBLE_EQ(c.gauge.width, 0.5);
  EXPECT_EQ(c.gauge.seed, 1234u);
  EXPECT_DOUBLE_EQ(c.dirac.kappa, 0.125);
  EXPECT_DOUBLE_EQ(c.dirac.csw, 1.0);
  EXPECT_EQ(c.dirac.theta_over_pi, (std::array<double, 4>{0, 0, 0, 1}));
  EXPECT_EQ(c.solver.precision, Precision::Double);
  EXPECT_DOUBLE_EQ(c.solver.tol, 1e-8);
  EXPECT_EQ(c.solver.max_iter, 5000);
  EXPECT_EQ(c.output.file, "full_reference.h5");
  EXPECT_TRUE(c.output.overwrite);
  EXPECT_TRUE(c.output.write_gauge);
  EXPECT_EQ(c.output.io, OutputIo::Gather);
  EXPECT_TRUE(c.output.resume);
  EXPECT_EQ(c.log.level, "debug");
  EXPECT_EQ(c.log.progress_every, 100);
  EXPECT_TRUE(c.log.per_rank);
  EXPECT_FALSE(c.metrics.peak);
}

TEST(Config, FullReferenceExampleSetsEverySolveKey) {
  const Config c = load_config(kExamples + "full_reference.toml");
  ASSERT_EQ(c.solves.size(), 4u);
  const SolveConfig& point = c.solves[0];
  EXPECT_EQ(point.name, "point_origin");
  EXPECT_EQ(point.kind, SolveKind::Point);
  EXPECT_EQ(point.tol, std::optional<double>(1e-10));
  EXPECT_EQ(point.max_iter, std::optional<int>(8000));
  EXPECT_EQ(point.site, (std::array<int, 4>{1, 2, 3, 4}));
  EXPECT_EQ(point.spin, 2);
  EXPECT_EQ(point.colour, 1);
  const SolveConfig& noise = c.solves[1];
  EXPECT_EQ(noise.name, "noise.z2");
  EXPECT_EQ(noise.kind, SolveKind::Random);
  EXPECT_EQ(noise.seed, 42u);
  EXPECT_EQ(noise.noise, NoiseKind::Z2);
  const SolveConfig& wave = c.solves[2];
  EXPECT_EQ(wave.name, "plane-wave");
  EXPECT_EQ(wave.kind, SolveKind::PlaneWave);
  EXPECT_EQ(wave.momentum, (std::array<int, 4>{1, 0, 0, -1}));
  EXPECT_EQ(wave.spinor[0], std::complex<double>(1.0, 0.0));
  EXPECT_EQ(wave.spinor[3 * 1 + 1], std::complex<double>(0.0, 0.5));
  EXPECT_EQ(wave.spinor[3 * 2 + 2], std::complex<double>(-1.0, 0.0));
  EXPECT_EQ(wave.spinor[11], std::complex<double>(0.25, 0.25));
  const SolveConfig& prop = c.solves[3];
  EXPECT_EQ(prop.name, "pion.smeared");
  EXPECT_EQ(prop.kind, SolveKind::Propagator);
  EXPECT_EQ(prop.site, (std::array<int, 4>{1, 2, 3, 4}));
  EXPECT_EQ(prop.channels, (std::vector<std::string>{"pion", "axial", "rho", "a0"}));
  EXPECT_EQ(prop.momenta, (std::vector<std::array<int, 3>>{{0, 0, 0}, {1, 0, 0}, {0, 1, 1}}));
  EXPECT_EQ(prop.smearing.kind, QuarkSmearingKind::Wuppertal);
  EXPECT_EQ(prop.smearing.steps, 30);
  EXPECT_DOUBLE_EQ(prop.smearing.weight, 0.25);
  EXPECT_EQ(prop.smearing.link_kind, LinkSmearingKind::Ape);
  EXPECT_EQ(prop.smearing.link_steps, 10);
  EXPECT_DOUBLE_EQ(prop.smearing.link_weight, 0.5);
}

TEST(Config, MinimalInputTakesDefaults) {
  const Config c = parse(Input{}.text());
  EXPECT_FALSE(c.lattice.procs.has_value());
  EXPECT_EQ(c.comm.force_halo, (std::array<bool, 4>{false, false, false, false}));
  EXPECT_EQ(c.gauge.source, GaugeSource::Unit);
  EXPECT_DOUBLE_EQ(c.gauge.width, 1.0);
  EXPECT_EQ(c.gauge.seed, 1u);
  EXPECT_DOUBLE_EQ(c.dirac.csw, 0.0);
  EXPECT_EQ(c.dirac.theta_over_pi, (std::array<double, 4>{0, 0, 0, 1}));
  EXPECT_EQ(c.solver.precision, Precision::Single);
  EXPECT_DOUBLE_EQ(c.solver.tol, 1e-6);
  EXPECT_EQ(c.solver.max_iter, 10000);
  EXPECT_FALSE(c.output.overwrite);
  EXPECT_FALSE(c.output.write_gauge);
  EXPECT_EQ(c.output.io, OutputIo::Auto);
  EXPECT_FALSE(c.output.resume);
  EXPECT_EQ(c.log.level, "info");
  EXPECT_EQ(c.log.progress_every, 50);
  EXPECT_FALSE(c.log.per_rank);
  EXPECT_TRUE(c.metrics.peak);
}

TEST(Config, SolveDefaultsPerType) {
  const Config c = parse(with_solves("[[solve]]\ntype = \"point\"\n[[solve]]\ntype = \"random\"\n"
                                     "[[solve]]\ntype = \"plane_wave\"\n" +
                                     spinor_line("[1, 0]"))
                             .text());
  ASSERT_EQ(c.solves.size(), 3u);
  EXPECT_EQ(c.solves[0].site, (std::array<int, 4>{0, 0, 0, 0}));
  EXPECT_EQ(c.solves[0].spin, 0);
  EXPECT_EQ(c.solves[0].colour, 0);
  EXPECT_FALSE(c.solves[0].tol.has_value());
  EXPECT_FALSE(c.solves[0].max_iter.has_value());
  EXPECT_EQ(c.solves[1].seed, 1u);
  EXPECT_EQ(c.solves[1].noise, NoiseKind::Gaussian);
  EXPECT_EQ(c.solves[2].momentum, (std::array<int, 4>{0, 0, 0, 0}));
}

TEST(Config, DefaultSolveNamesUseZeroBasedIndex) {
  const Config c = parse(with_solves("[[solve]]\ntype = \"point\"\n[[solve]]\nname = \"x\"\ntype = \"point\"\n"
                                     "[[solve]]\ntype = \"random\"\n")
                             .text());
  ASSERT_EQ(c.solves.size(), 3u);
  EXPECT_EQ(c.solves[0].name, "solve0");
  EXPECT_EQ(c.solves[1].name, "x");
  EXPECT_EQ(c.solves[2].name, "solve2");
}

TEST(Config, InputTextAndPathAreKept) {
  const std::string text = Input{}.text();
  const Config c = parse_config(text, "some/dir/run.toml");
  EXPECT_EQ(c.input_text, text);
  EXPECT_EQ(c.input_path, "some/dir/run.toml");
}

TEST(Config, IntegerAcceptedForFloatKey) {
  Input in;
  in.dirac = "kappa = 1\ncsw = 2\n";
  const Config c = parse(in.text());
  EXPECT_DOUBLE_EQ(c.dirac.kappa, 1.0);
  EXPECT_DOUBLE_EQ(c.dirac.csw, 2.0);
}

TEST(Config, ReconstructTakesEighteenTwelveOrEight) {
  EXPECT_EQ(parse(Input{}.text()).dirac.reconstruct, 18);
  for (int rc : {12, 8}) {
    Input in;
    in.dirac = "kappa = 0.1\nreconstruct = " + std::to_string(rc) + "\n";
    EXPECT_EQ(parse(in.text()).dirac.reconstruct, rc);
  }
  for (const char* bad : {"10", "9", "24", "\"12\""}) {
    Input in;
    in.dirac = std::string("kappa = 0.1\nreconstruct = ") + bad + "\n";
    EXPECT_THROW(parse(in.text()), InputError) << bad;
    EXPECT_TRUE(starts_with(error_of(in.text()), "dirac.reconstruct: ")) << error_of(in.text());
  }
}

// solver.sloppy: "single" by default, "half" with mixed precision; half with another precision or with links of 8
// reals is an input error naming the key.
TEST(Config, SloppyHalfOnlyWithMixedPrecision) {
  EXPECT_EQ(parse(Input{}.text()).solver.sloppy, Sloppy::Single);
  EXPECT_EQ(parse(with_extra("[solver]\nprecision = \"mixed\"\nsloppy = \"half\"\n").text()).solver.sloppy,
            Sloppy::Half);
  for (const char* bad : {"[solver]\nprecision = \"single\"\nsloppy = \"half\"\n",
                          "[solver]\nprecision = \"double\"\nsloppy = \"half\"\n", "[solver]\nsloppy = \"half\"\n",
                          "[solver]\nprecision = \"mixed\"\nsloppy = \"quarter\"\n"}) {
    EXPECT_THROW(parse(with_extra(bad).text()), InputError) << bad;
    EXPECT_TRUE(starts_with(error_of(with_extra(bad).text()), "solver.sloppy: ")) << error_of(with_extra(bad).text());
  }
  Input rc8 = with_extra("[solver]\nprecision = \"mixed\"\nsloppy = \"half\"\n");
  rc8.dirac = "kappa = 0.1\nreconstruct = 8\n";
  EXPECT_TRUE(starts_with(error_of(rc8.text()), "solver.sloppy: ")) << error_of(rc8.text());
}

// solver.sloppy = "single_fp64" (fp32 fields, fp64 arithmetic): read with mixed precision; with another precision or
// with links of 8 reals an input error naming the key, like "half".
TEST(Config, SloppySingleFp64OnlyWithMixedPrecision) {
  EXPECT_EQ(parse(with_extra("[solver]\nprecision = \"mixed\"\nsloppy = \"single_fp64\"\n").text()).solver.sloppy,
            Sloppy::SingleFp64);
  for (const char* bad : {"[solver]\nprecision = \"single\"\nsloppy = \"single_fp64\"\n",
                          "[solver]\nprecision = \"double\"\nsloppy = \"single_fp64\"\n",
                          "[solver]\nprecision = \"mixed\"\nsloppy = \"single-fp64\"\n",
                          "[solver]\nprecision = \"mixed\"\nsloppy = \"double\"\n"}) {
    EXPECT_THROW(parse(with_extra(bad).text()), InputError) << bad;
    EXPECT_TRUE(starts_with(error_of(with_extra(bad).text()), "solver.sloppy: ")) << error_of(with_extra(bad).text());
  }
  Input rc8 = with_extra("[solver]\nprecision = \"mixed\"\nsloppy = \"single_fp64\"\n");
  rc8.dirac = "kappa = 0.1\nreconstruct = 8\n";
  EXPECT_TRUE(starts_with(error_of(rc8.text()), "solver.sloppy: ")) << error_of(rc8.text());
}

// solver.stop: "full" by default, "normal" read; any other word is an input error naming the key.
TEST(Config, StopIsFullByDefaultOrNormal) {
  EXPECT_EQ(parse(Input{}.text()).solver.stop, Stop::Full);
  EXPECT_EQ(parse(with_extra("[solver]\nstop = \"normal\"\n").text()).solver.stop, Stop::Normal);
  for (const char* bad : {"[solver]\nstop = \"relative\"\n", "[solver]\nstop = 1\n", "[solver]\nstop = \"\"\n"}) {
    EXPECT_THROW(parse(with_extra(bad).text()), InputError) << bad;
    EXPECT_TRUE(starts_with(error_of(with_extra(bad).text()), "solver.stop: ")) << error_of(with_extra(bad).text());
  }
}

TEST(Config, FloatRejectedForIntegerKey) {
  const std::string text = with_extra("[solver]\nmax_iter = 100.0\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solver.max_iter: expected an integer, got float");
}

TEST(Config, SyntaxErrorNamesFileLineAndColumn) {
  const std::string text = "[lattice]\nextents = [4, 4, 4, 8]\n[dirac]\nkappa = = 0.1\n";
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "test.toml:4:9: TOML syntax error: "));
}

TEST(Config, MissingExtentsRejected) {
  Input in;
  in.lattice = "";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.extents: required key is missing");
}

TEST(Config, MissingKappaRejected) {
  Input in;
  in.dirac = "csw = 1.0\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "dirac.kappa: required key is missing");
}

TEST(Config, MissingOutputFileRejected) {
  Input in;
  in.output = "overwrite = true\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "output.file: required key is missing");
}

TEST(Config, MissingSolveRejected) {
  const std::string text = with_solves("").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve: required key is missing"));
}

TEST(Config, EmptySolveArrayRejected) {
  const std::string text = "solve = []\n" + with_solves("").text();  // a top-level key must precede the tables
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve: at least one [[solve]] table is required");
}

TEST(Config, SolveAsPlainTableRejected) {
  const std::string text = with_solves("[solve]\ntype = \"point\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve: expected an array of tables ([[solve]]), got table");
}

TEST(Config, OddExtentRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 7, 8]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.extents: Lz = 7 is odd; every extent must be even");
}

TEST(Config, ExtentBelowTwoRejected) {
  Input in;
  in.lattice = "extents = [4, 0, 4, 8]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_TRUE(starts_with(error_of(in.text()), "lattice.extents: Ly = 0 is too small"));
}

TEST(Config, ExtentsOfWrongLengthRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.extents: expected an array of 4 integers, got 3 elements");
}

TEST(Config, ExtentElementOfWrongTypeRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4.0, 8]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.extents[2]: expected an integer, got float");
}

TEST(Config, ProcsParsed) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 2, 1, 4]\n";
  const Config c = parse(in.text());
  EXPECT_EQ(c.lattice.procs, (std::optional<std::array<int, 4>>{{1, 2, 1, 4}}));
}

// Divisibility and the rank count are comm/process_grid.cpp's checks (they need the number of ranks).
TEST(Config, ProcsNotCheckedAgainstExtentsHere) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [3, 1, 1, 16]\n";
  const Config c = parse(in.text());
  EXPECT_EQ(c.lattice.procs, (std::optional<std::array<int, 4>>{{3, 1, 1, 16}}));
}

TEST(Config, ProcsOfWrongLengthRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 1, 2]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.procs: expected an array of 4 integers, got 3 elements");
}

TEST(Config, ProcsThatIsNotAnArrayRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = 4\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.procs: expected an array of 4 integers, got integer");
}

TEST(Config, ProcsElementBelowOneRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 1, 0, 2]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.procs[2]: must be > 0, got 0");
}

TEST(Config, NegativeProcsElementRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [-2, 1, 1, 1]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.procs[0]: must be > 0, got -2");
}

TEST(Config, ProcsElementOfWrongTypeRejected) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 2.0, 1, 1]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.procs[1]: expected an integer, got float");
}

TEST(Config, ExtentsCheckedBeforeProcs) {
  Input in;
  in.lattice = "procs = [0, 1, 1, 1]\nextents = [4, 4, 5, 8]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.extents: Lz = 5 is odd; every extent must be even");
}

TEST(Config, UnknownLatticeKeySuggestsProcs) {
  Input in;
  in.lattice = "extents = [4, 4, 4, 8]\nproc = [1, 1, 1, 1]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "lattice.proc: unknown key (did you mean 'procs'?)");
}

TEST(Config, CommForceHaloParsed) {
  const Config c = parse(with_extra("[comm]\nforce_halo = [true, false, false, true]\n").text());
  EXPECT_EQ(c.comm.force_halo, (std::array<bool, 4>{true, false, false, true}));
}

TEST(Config, EmptyCommTableTakesDefaults) {
  const Config c = parse(with_extra("[comm]\n").text());
  EXPECT_EQ(c.comm.force_halo, (std::array<bool, 4>{false, false, false, false}));
}

TEST(Config, CommForceHaloOfWrongLengthRejected) {
  const std::string text = with_extra("[comm]\nforce_halo = [true, true]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "comm.force_halo: expected an array of 4 booleans, got 2 elements");
}

TEST(Config, CommForceHaloThatIsNotAnArrayRejected) {
  const std::string text = with_extra("[comm]\nforce_halo = true\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "comm.force_halo: expected an array of 4 booleans, got boolean");
}

TEST(Config, CommForceHaloElementMustBeBoolean) {
  const std::string text = with_extra("[comm]\nforce_halo = [false, 1, false, false]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "comm.force_halo[1]: expected a boolean, got integer");
}

TEST(Config, UnknownCommKeySuggestsClosestKey) {
  const std::string text = with_extra("[comm]\nforce_halos = [false, false, false, true]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "comm.force_halos: unknown key (did you mean 'force_halo'?)");
}

TEST(Config, CommThatIsNotATableRejected) {
  const std::string text = "comm = true\n" + Input{}.text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "comm: expected a table, got boolean");
}

TEST(Config, CommCheckedAfterLatticeAndBeforeGauge) {
  Input in;
  in.extra = "[gauge]\nwidth = 2.0\n[comm]\nforce_halo = [1, 0, 0, 0]\n";
  EXPECT_TRUE(starts_with(error_of(in.text()), "comm.force_halo[0]: "));
  in.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 1, 1]\n";
  EXPECT_TRUE(starts_with(error_of(in.text()), "lattice.procs: "));
}

TEST(Config, NonPositiveKappaRejected) {
  Input in;
  in.dirac = "kappa = -0.1\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "dirac.kappa: must be > 0, got -0.1");
}

TEST(Config, NegativeCswRejected) {
  Input in;
  in.dirac = "kappa = 0.1\ncsw = -1\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "dirac.csw: must be >= 0, got -1");
}

TEST(Config, ThetaOfWrongLengthRejected) {
  Input in;
  in.dirac = "kappa = 0.1\ntheta_over_pi = [0, 0, 1]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_TRUE(starts_with(error_of(in.text()), "dirac.theta_over_pi: expected an array of 4 floats"));
}

TEST(Config, NanRejectedForFloatKey) {
  Input in;
  in.dirac = "kappa = nan\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "dirac.kappa: must be finite, got nan");
}

TEST(Config, InfinityRejectedForFloatKey) {
  Input in;
  in.dirac = "kappa = 0.1\ntheta_over_pi = [0, 0, 0, inf]\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "dirac.theta_over_pi[3]: must be finite, got inf");
}

TEST(Config, UnknownKeySuggestsClosestKey) {
  const std::string text = with_extra("[solver]\ntolerance = 1e-8\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solver.tolerance: unknown key (did you mean 'tol'?)");
}

TEST(Config, UnknownKeyFarFromAnyKeyHasNoSuggestion) {
  const std::string text = with_extra("[metrics]\nbandwidth = true\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "metrics.bandwidth: unknown key");
}

TEST(Config, UnknownTopLevelTableRejected) {
  const std::string text = with_extra("[solvr]\ntol = 1e-8\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solvr: unknown key (did you mean 'solver'?)");
}

TEST(Config, UnknownKeyInsideSolveSuggestsWithinType) {
  const std::string text = with_solves("[[solve]]\ntype = \"point\"\ncolor = 1\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].color: unknown key (did you mean 'colour'?)");
}

TEST(Config, KeyOfAnotherSolveTypeRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"point\"\n[[solve]]\ntype = \"random\"\nspin = 1\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve[1].spin: not allowed for type 'random'"));
}

TEST(Config, WrongTypeNamesExpectedAndActual) {
  const std::string text =
      with_solves("[[solve]]\ntype = \"point\"\n[[solve]]\ntype = \"point\"\nspin = \"up\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[1].spin: expected an integer, got string");
}

TEST(Config, FirstErrorInDocumentOrderIsReported) {
  Input in;
  in.lattice = "extents = [3, 4, 4, 8]\n";
  in.dirac = "kappa = -1\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_TRUE(starts_with(error_of(in.text()), "lattice.extents: Lx = 3 is odd"));
}

TEST(Config, GaugeSourceChoiceChecked) {
  const std::string text = with_extra("[gauge]\nsource = \"randm\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text),
            "gauge.source: must be one of 'unit', 'random', 'file', 'heatbath', 'ensemble', got 'randm' (did you mean "
            "'random'?)");
}

TEST(Config, GaugeWidthOutsideUnitIntervalRejected) {
  const std::string text = with_extra("[gauge]\nsource = \"random\"\nwidth = 1.5\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "gauge.width: must be in [0, 1], got 1.5");
}

TEST(Config, NegativeGaugeSeedRejected) {
  const std::string text = with_extra("[gauge]\nseed = -3\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "gauge.seed: must be >= 0, got -3");
}

TEST(Config, SolverPrecisionChoiceChecked) {
  const std::string text = with_extra("[solver]\nprecision = \"half\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solver.precision: must be one of 'single', 'double', 'mixed', got 'half'"));
}

TEST(Config, SolverTolOfOneOrMoreRejected) {
  const std::string text = with_extra("[solver]\ntol = 1\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solver.tol: must be > 0 and < 1, got 1");
}

TEST(Config, SolverTolOfZeroRejected) {
  const std::string text = with_extra("[solver]\ntol = 0.0\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solver.tol: must be > 0 and < 1, got 0");
}

TEST(Config, NonPositiveMaxIterRejected) {
  const std::string text = with_extra("[solver]\nmax_iter = 0\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solver.max_iter: must be > 0, got 0");
}

TEST(Config, EmptyOutputFileRejected) {
  Input in;
  in.output = "file = \"\"\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "output.file: must not be empty");
}

TEST(Config, OverwriteMustBeBoolean) {
  Input in;
  in.output = "file = \"out.h5\"\noverwrite = \"yes\"\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "output.overwrite: expected a boolean, got string");
}

TEST(Config, OutputIoParsed) {
  const std::vector<std::pair<std::string, OutputIo>> cases = {
      {"auto", OutputIo::Auto}, {"collective", OutputIo::Collective}, {"gather", OutputIo::Gather}};
  for (const auto& [name, expected] : cases) {
    Input in;
    in.output = "file = \"out.h5\"\nio = \"" + name + "\"\n";
    EXPECT_EQ(parse(in.text()).output.io, expected) << name;
  }
}

TEST(Config, OutputIoChoiceChecked) {
  Input in;
  in.output = "file = \"out.h5\"\nio = \"colective\"\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()),
            "output.io: must be one of 'auto', 'collective', 'gather', got 'colective' (did you mean 'collective'?)");
}

TEST(Config, OutputIoMustBeString) {
  Input in;
  in.output = "file = \"out.h5\"\nio = true\n";
  EXPECT_THROW(parse(in.text()), InputError);
  EXPECT_EQ(error_of(in.text()), "output.io: expected a string, got boolean");
}

TEST(Config, LogLevelChoiceChecked) {
  const std::string text = with_extra("[log]\nlevel = \"warning\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(
      error_of(text),
      "log.level: must be one of 'trace', 'debug', 'info', 'warn', 'error', got 'warning' (did you mean 'warn'?)");
}

TEST(Config, NonPositiveProgressEveryRejected) {
  const std::string text = with_extra("[log]\nprogress_every = -5\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "log.progress_every: must be > 0, got -5");
}

TEST(Config, LogPerRankParsed) {
  EXPECT_TRUE(parse(with_extra("[log]\nper_rank = true\n").text()).log.per_rank);
  EXPECT_FALSE(parse(with_extra("[log]\nper_rank = false\n").text()).log.per_rank);
}

TEST(Config, LogPerRankMustBeBoolean) {
  const std::string text = with_extra("[log]\nper_rank = \"yes\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "log.per_rank: expected a boolean, got string");
}

TEST(Config, UnknownLogKeySuggestsPerRank) {
  const std::string text = with_extra("[log]\nper-rank = true\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "log.per-rank: unknown key (did you mean 'per_rank'?)");
}

TEST(Config, MetricsPeakMustBeBoolean) {
  const std::string text = with_extra("[metrics]\npeak = 1\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "metrics.peak: expected a boolean, got integer");
}

TEST(Config, SectionThatIsNotATableRejected) {
  const std::string text = "gauge = 3\n" + Input{}.text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "gauge: expected a table, got integer");
}

TEST(Config, SolveTypeRequired) {
  const std::string text = with_solves("[[solve]]\nname = \"a\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].type: required key is missing");
}

TEST(Config, SolveTypeChoiceChecked) {
  const std::string text = with_solves("[[solve]]\ntype = \"wall\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text),
                          "solve[0].type: must be one of 'point', 'random', 'plane_wave', 'propagator', got 'wall'"));
}

TEST(Config, DuplicateSolveNameRejected) {
  const std::string text = with_solves(
                               "[[solve]]\nname = \"a\"\ntype = \"point\"\n[[solve]]\nname = \"b\"\ntype = \"point\"\n"
                               "[[solve]]\nname = \"a\"\ntype = \"random\"\n")
                               .text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[2].name: 'a' is used by solve[0]");
}

TEST(Config, NameClashingWithDefaultNameRejected) {
  const std::string text =
      with_solves("[[solve]]\ntype = \"point\"\n[[solve]]\nname = \"solve0\"\ntype = \"point\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve[1].name: 'solve0' is used by solve[0]"));
}

TEST(Config, SolveNameWithInvalidCharacterRejected) {
  const std::string text = with_solves("[[solve]]\nname = \"a/b\"\ntype = \"point\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve[0].name: 'a/b' is not a valid name"));
}

TEST(Config, PointSiteOutsideLatticeRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"point\"\nsite = [0, 0, 4, 0]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].site: z = 4 is outside the lattice (0 <= z < Lz = 4)");
}

TEST(Config, SpinOutOfRangeRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"point\"\nspin = 4\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].spin: must be in 0..3, got 4");
}

TEST(Config, ColourOutOfRangeRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"point\"\ncolour = 3\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].colour: must be in 0..2, got 3");
}

TEST(Config, RandomDistributionChoiceChecked) {
  const std::string text = with_solves("[[solve]]\ntype = \"random\"\ndistribution = \"uniform\"\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve[0].distribution: must be one of 'gaussian', 'z2'"));
}

TEST(Config, PlaneWaveSpinorRequired) {
  const std::string text = with_solves("[[solve]]\ntype = \"plane_wave\"\nmomentum = [1, 0, 0, 0]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].spinor: required key is missing");
}

TEST(Config, PlaneWaveSpinorOfWrongLengthRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"plane_wave\"\nspinor = [[1, 0], [0, 1]]\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].spinor: expected an array of 12 [re, im] pairs, got 2 elements");
}

TEST(Config, PlaneWaveSpinorEntryMustBePair) {
  const std::string text = with_solves(
                               "[[solve]]\ntype = \"plane_wave\"\nspinor = [[1, 0], [0, 0], [0, 0], [0, 0], [0, 0], "
                               "[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0, 0]]\n")
                               .text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_TRUE(starts_with(error_of(text), "solve[0].spinor[11]: expected an array of 2 floats"));
}

TEST(Config, PlaneWaveSpinorAllZeroRejected) {
  const std::string text = with_solves("[[solve]]\ntype = \"plane_wave\"\n" + spinor_line("[0.0, 0]")).text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].spinor: must not be all zero");
}

TEST(Config, PerSolveOverrideChecked) {
  const std::string text = with_solves("[[solve]]\ntype = \"random\"\ntol = 2.5\n").text();
  EXPECT_THROW(parse(text), InputError);
  EXPECT_EQ(error_of(text), "solve[0].tol: must be > 0 and < 1, got 2.5");
}

TEST(Config, LoadConfigKeepsTextAndPath) {
  const std::string path = kExamples + "quickstart.toml";
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const Config c = load_config(path);
  EXPECT_EQ(c.input_path, path);
  EXPECT_EQ(c.input_text, text);
}

TEST(Config, LoadConfigReportsMissingFile) {
  const std::string path = "/nonexistent/emprism/input.toml";
  std::string message;
  EXPECT_THROW(load_config(path), InputError);
  try {
    load_config(path);
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, path + ": cannot read input file: No such file or directory");
}

TEST(Config, CommTransportDefaultsToAuto) {
  const Config c = parse(with_extra("").text());
  EXPECT_EQ(c.comm.transport, CommConfig::Transport::Auto);
  EXPECT_TRUE(c.comm.gpu_aware_in_auto);
  EXPECT_EQ(c.comm.transport_key, "comm.transport");
}

TEST(Config, CommTransportAcceptsItsFourValues) {
  EXPECT_EQ(parse(with_extra("[comm]\ntransport = \"auto\"\n").text()).comm.transport, CommConfig::Transport::Auto);
  EXPECT_EQ(parse(with_extra("[comm]\ntransport = \"staged\"\n").text()).comm.transport, CommConfig::Transport::Staged);
  EXPECT_EQ(parse(with_extra("[comm]\ntransport = \"gpu_aware\"\n").text()).comm.transport,
            CommConfig::Transport::GpuAware);
  EXPECT_EQ(parse(with_extra("[comm]\ntransport = \"peer\"\n").text()).comm.transport, CommConfig::Transport::Peer);
}

TEST(Config, CommTransportRejectsOtherValuesNamingTheKey) {
  EXPECT_TRUE(starts_with(error_of(with_extra("[comm]\ntransport = \"nvlink\"\n").text()),
                          "comm.transport: must be one of 'auto', 'staged', 'gpu_aware', 'peer', got 'nvlink'"));
  EXPECT_EQ(error_of(with_extra("[comm]\ntransport = true\n").text()),
            "comm.transport: expected a string, got boolean");
}

// The older key keeps working: true forces "gpu_aware", "auto" is "auto", false is "auto" without device memory
// handed to MPI; errors then name comm.gpu_aware.
TEST(Config, CommGpuAwareMapsOntoTheTransport) {
  const Config on = parse(with_extra("[comm]\ngpu_aware = true\n").text());
  EXPECT_EQ(on.comm.transport, CommConfig::Transport::GpuAware);
  EXPECT_EQ(on.comm.transport_key, "comm.gpu_aware");
  const Config off = parse(with_extra("[comm]\ngpu_aware = false\n").text());
  EXPECT_EQ(off.comm.transport, CommConfig::Transport::Auto);
  EXPECT_FALSE(off.comm.gpu_aware_in_auto);
  const Config any = parse(with_extra("[comm]\ngpu_aware = \"auto\"\n").text());
  EXPECT_EQ(any.comm.transport, CommConfig::Transport::Auto);
  EXPECT_TRUE(any.comm.gpu_aware_in_auto);
}

TEST(Config, CommGpuAwareRejectsOtherValues) {
  EXPECT_TRUE(starts_with(error_of(with_extra("[comm]\ngpu_aware = \"yes\"\n").text()),
                          "comm.gpu_aware: expected true, false or \"auto\", got 'yes'"));
  EXPECT_TRUE(starts_with(error_of(with_extra("[comm]\ngpu_aware = 1\n").text()),
                          "comm.gpu_aware: expected true, false or \"auto\", got integer"));
}

TEST(Config, CommTransportAndGpuAwareTogetherAreAnError) {
  EXPECT_EQ(error_of(with_extra("[comm]\ntransport = \"peer\"\ngpu_aware = true\n").text()),
            "comm.gpu_aware: give comm.transport or the older comm.gpu_aware, not both");
}

TEST(Config, OutputFieldsDefaultsToTrueAndIsChecked) {
  EXPECT_TRUE(parse(Input{}.text()).output.fields);
  Input in;
  in.output += "fields = false\n";
  EXPECT_FALSE(parse(in.text()).output.fields);
  in.output = "file = \"out.h5\"\nfields = 0\n";
  EXPECT_TRUE(starts_with(error_of(in.text()), "output.fields: expected a boolean, got integer"));
}

TEST(Config, GaugeFileNeedsAReadableFile) {
  EXPECT_TRUE(
      starts_with(error_of(with_extra("[gauge]\nsource = \"file\"\n").text()), "gauge.file: required key is missing"));
  EXPECT_TRUE(starts_with(error_of(with_extra("[gauge]\nsource = \"file\"\nfile = \"/no/such.cfg\"\n").text()),
                          "gauge.file: cannot read '/no/such.cfg'"));
  const Config c =
      parse(with_extra("[gauge]\nsource = \"file\"\nfile = \"" + kExamples + "quickstart.toml\"\nformat = \"nersc\"\n")
                .text());
  EXPECT_EQ(c.gauge.source, GaugeSource::File);
  EXPECT_EQ(c.gauge.format, GaugeFormat::Nersc);
}

TEST(Config, GaugeKeysOfAnotherSourceAreErrors) {
  EXPECT_TRUE(starts_with(error_of(with_extra("[gauge]\nsource = \"random\"\nbeta = 6.0\n").text()),
                          "gauge.beta: only for gauge.source = \"heatbath\""));
  EXPECT_TRUE(starts_with(error_of(with_extra("[gauge]\nformat = \"ildg\"\n").text()),
                          "gauge.format: only for gauge.source = \"file\""));
}

TEST(Config, HeatbathKeysChecked) {
  const Config c =
      parse(with_extra("[gauge]\nsource = \"heatbath\"\nbeta = 5.7\nsweeps = 20\nor_per_sweep = 2\n").text());
  EXPECT_DOUBLE_EQ(c.gauge.beta, 5.7);
  EXPECT_EQ(c.gauge.sweeps, 20);
  EXPECT_EQ(c.gauge.or_per_sweep, 2);
  EXPECT_TRUE(starts_with(error_of(with_extra("[gauge]\nsource = \"heatbath\"\nbeta = 0\n").text()),
                          "gauge.beta: must be > 0"));
}

TEST(Config, GenerateNeedsHeatbathAndMakesSolvesOptional) {
  Input in;
  in.extra = "[gauge]\nsource = \"heatbath\"\n[generate]\ncount = 3\nevery = 5\nformat = \"nersc\"\n";
  in.solves = "";
  const Config c = parse(in.text());
  EXPECT_TRUE(c.generate.enabled);
  EXPECT_EQ(c.generate.count, 3);
  EXPECT_EQ(c.generate.every, 5);
  EXPECT_EQ(c.generate.format, GaugeFormat::Nersc);
  EXPECT_TRUE(c.solves.empty());
  in.extra = "[generate]\ncount = 3\n";
  EXPECT_TRUE(starts_with(error_of(in.text()), "generate: needs gauge.source = \"heatbath\""));
  in.extra = "";
  EXPECT_TRUE(starts_with(error_of(in.text()), "solve: required key is missing"));
}

// ---- propagator solves ----

TEST(Config, PropagatorDefaultsToAllChannelsZeroMomentumAndNoSmearing) {
  const Config c = parse(with_solves("[[solve]]\ntype = \"propagator\"\nsite = [1, 2, 3, 4]\n").text());
  ASSERT_EQ(c.solves.size(), 1u);
  const SolveConfig& s = c.solves[0];
  EXPECT_EQ(s.kind, SolveKind::Propagator);
  EXPECT_EQ(s.site, (std::array<int, 4>{1, 2, 3, 4}));
  EXPECT_EQ(s.channels, (std::vector<std::string>{"pion", "axial", "axial_axial", "rho", "rho_t", "a0", "a1"}));
  EXPECT_EQ(s.momenta, (std::vector<std::array<int, 3>>{{0, 0, 0}}));
  EXPECT_EQ(s.smearing.kind, QuarkSmearingKind::None);
  EXPECT_EQ(s.smearing.link_kind, LinkSmearingKind::None);
}

TEST(Config, PropagatorZeroMomentumIsNotRepeated) {
  const Config c = parse(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[0, 0, 0], [-1, 0, 2]]\n").text());
  EXPECT_EQ(c.solves[0].momenta, (std::vector<std::array<int, 3>>{{0, 0, 0}, {-1, 0, 2}}));
}

TEST(Config, PropagatorUnknownChannelRejectedWithSuggestion) {
  EXPECT_TRUE(
      starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nchannels = [\"pion\", \"rh0\"]\n").text()),
                  "solve[0].channels[1]: unknown channel 'rh0' (did you mean 'rho'?); known: 'pion'"));
}

TEST(Config, PropagatorDuplicateOrEmptyChannelsRejected) {
  EXPECT_TRUE(
      starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nchannels = [\"a0\", \"a0\"]\n").text()),
                  "solve[0].channels[1]: channel 'a0' is listed twice"));
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nchannels = []\n").text()),
                          "solve[0].channels: must name at least one channel"));
}

TEST(Config, PropagatorMomentaMustBeDistinctIntegerTriples) {
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[1, 0]]\n").text()),
                          "solve[0].momenta[0]: expected an array of 3 integers [nx, ny, nz], got 2 elements"));
  EXPECT_TRUE(
      starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[1, 0, 0], [1, 0, 0]]\n").text()),
                  "solve[0].momenta[1]: momentum [1, 0, 0] is listed twice"));
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [1, 0, 0]\n").text()),
                          "solve[0].momenta[0]: expected an array of 3 integers"));
}

TEST(Config, PropagatorMomentaEqualModuloTheExtentsRejected) {
  // with_solves' lattice is 4^3 x 8: [1, 0, 0] and [5, 0, 0] (or [-3, 0, 0]) are one momentum, [0, 4, 0] is zero.
  EXPECT_TRUE(starts_with(
      error_of(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[1, 0, 0], [-3, 0, 0]]\n").text()),
      "solve[0].momenta[1]: momentum [-3, 0, 0] is the momentum [1, 0, 0] on this lattice (n = n' mod (Lx, Ly, Lz) = "
      "[4, 4, 4])"));
  EXPECT_TRUE(
      starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[0, 4, 0]]\n").text()),
                  "solve[0].momenta[0]: momentum [0, 4, 0] is the momentum [0, 0, 0] on this lattice (n = n' mod (Lx, "
                  "Ly, Lz) = [4, 4, 4]), which is always computed"));
  const Config c =
      parse(with_solves("[[solve]]\ntype = \"propagator\"\nmomenta = [[1, 0, 0], [2, 0, 0], [3, 0, 0]]\n").text());
  EXPECT_EQ(c.solves[0].momenta.size(), 4U);  // 1, 2 and 3 differ modulo 4 (3 is -1: a distinct momentum)
}

TEST(Config, PropagatorSmearingNeedsStepsAndWeight) {
  const std::string head = "[[solve]]\ntype = \"propagator\"\nsmearing = \"jacobi\"\n";
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "smearing_weight = 0.1\n").text()),
                          "solve[0].smearing_steps: required key is missing"));
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "smearing_steps = 0\nsmearing_weight = 0.1\n").text()),
                          "solve[0].smearing_steps: must be in 1..100000, got 0"));
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "smearing_steps = 5\nsmearing_weight = -0.1\n").text()),
                          "solve[0].smearing_weight: must be > 0, got -0.1"));
  const Config c = parse(with_solves(head + "smearing_steps = 5\nsmearing_weight = 0.1\n").text());
  EXPECT_EQ(c.solves[0].smearing.kind, QuarkSmearingKind::Jacobi);
  EXPECT_EQ(c.solves[0].smearing.steps, 5);
  EXPECT_DOUBLE_EQ(c.solves[0].smearing.weight, 0.1);
}

TEST(Config, PropagatorSmearingKeysWithoutSmearingRejected) {
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nsmearing_steps = 3\n").text()),
                          "solve[0].smearing_steps: only with smearing = \"wuppertal\" or \"jacobi\""));
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nlink_smearing = \"ape\"\n"
                                               "link_smearing_steps = 2\nlink_smearing_weight = 0.5\n")
                                       .text()),
                          "solve[0].link_smearing: smeared links are used by the source smearing only"));
}

TEST(Config, PropagatorLinkSmearingWeightsChecked) {
  const std::string head =
      "[[solve]]\ntype = \"propagator\"\nsmearing = \"wuppertal\"\nsmearing_steps = 5\nsmearing_weight = 0.3\n"
      "link_smearing_steps = 2\n";
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "link_smearing = \"ape\"\nlink_smearing_weight = 1.5\n").text()),
                          "solve[0].link_smearing_weight: APE alpha must be in (0, 1], got 1.5"));
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "link_smearing = \"stout\"\nlink_smearing_weight = 0\n").text()),
                          "solve[0].link_smearing_weight: stout rho must be > 0, got 0"));
  EXPECT_TRUE(starts_with(error_of(with_solves(head + "link_smearing = \"hyp\"\nlink_smearing_weight = 0.1\n").text()),
                          "solve[0].link_smearing: must be one of 'none', 'ape', 'stout', got 'hyp'"));
  const Config c = parse(with_solves(head + "link_smearing = \"stout\"\nlink_smearing_weight = 0.1\n").text());
  EXPECT_EQ(c.solves[0].smearing.link_kind, LinkSmearingKind::Stout);
  EXPECT_EQ(c.solves[0].smearing.link_steps, 2);
  EXPECT_DOUBLE_EQ(c.solves[0].smearing.link_weight, 0.1);
}

TEST(Config, PropagatorKeysOnOtherTypesNameTheirType) {
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"point\"\nchannels = [\"pion\"]\n").text()),
                          "solve[0].channels: not allowed for type 'point' (it belongs to type 'propagator')"));
  EXPECT_TRUE(starts_with(error_of(with_solves("[[solve]]\ntype = \"propagator\"\nspin = 1\n").text()),
                          "solve[0].spin: not allowed for type 'propagator' (it belongs to type 'point')"));
}

TEST(Config, OutputResumeIsABoolean) {
  EXPECT_TRUE(parse(with_output("file = \"o.h5\"\nresume = true\n").text()).output.resume);
  EXPECT_TRUE(starts_with(error_of(with_output("file = \"o.h5\"\nresume = 1\n").text()),
                          "output.resume: expected a boolean, got integer"));
}

// ---- the physics inputs of a run (what a resumed run must match) ----

TEST(Config, PhysicsInputsIgnoreFormattingAndRunSettings) {
  Input a;
  a.dirac = "kappa = 0.125 # comment\ncsw = 1\n";
  Input b;
  b.dirac = "csw = 1.0\nkappa = 1.25e-1\n";
  b.lattice = "extents = [4, 4, 4, 8]\nprocs = [1, 1, 1, 2]\n";
  b.output = "file = \"elsewhere.h5\"\noverwrite = true\nresume = true\nio = \"gather\"\n";
  b.extra = "[log]\nlevel = \"debug\"\n[metrics]\npeak = false\n[comm]\nforce_halo = [true, false, false, false]\n";
  EXPECT_EQ(physics_inputs(parse(a.text())), physics_inputs(parse(b.text())));
}

TEST(Config, PhysicsInputsChangeWithThePhysics) {
  const std::string base = physics_inputs(parse(Input{}.text()));
  Input kappa;
  kappa.dirac = "kappa = 0.124\n";
  EXPECT_NE(physics_inputs(parse(kappa.text())), base);
  EXPECT_NE(physics_inputs(parse(with_solves("[[solve]]\ntype = \"point\"\nspin = 1\n").text())), base);
  EXPECT_NE(physics_inputs(parse(with_output("file = \"out.h5\"\nfields = false\n").text())), base);
  EXPECT_NE(physics_inputs(parse(with_extra("[solver]\ntol = 1e-7\n").text())), base);
  EXPECT_NE(physics_inputs(parse(with_extra("[gauge]\nsource = \"random\"\nseed = 2\n").text())),
            physics_inputs(parse(with_extra("[gauge]\nsource = \"random\"\nseed = 3\n").text())));
}

TEST(Config, PhysicsInputsAreKeyValueLines) {
  const std::string text = physics_inputs(parse(Input{}.text()));
  EXPECT_NE(text.find("lattice.extents = [4, 4, 4, 8]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dirac.kappa = 0.125\n"), std::string::npos) << text;
  EXPECT_NE(text.find("solve[0].type = \"point\"\n"), std::string::npos) << text;
}

TEST(Config, TextHashIsFnv1a64) {
  // Published FNV-1a 64-bit test vectors (Fowler, Noll, Vo).
  EXPECT_EQ(text_hash(""), "cbf29ce484222325");
  EXPECT_EQ(text_hash("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(text_hash("foobar"), "85944171f73967e8");
}

// ---- the declaration and jobs/examples/full_reference.toml ----

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    out.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// The reference documents every key the parser knows, each in its table: a line "key = ..." or "# key = ..." after
// the table's header ("[table]", "# [table]", or the first "[[solve]]") and before the next table's.
TEST(Config, FullReferenceHasEveryKeyTheParserKnows) {
  const std::vector<std::string> lines = lines_of(file_text(kExamples + "full_reference.toml"));
  ASSERT_FALSE(lines.empty());
  for (const Param& p : parameters()) {
    const std::string header = p.table == "solve" ? "[[solve]]" : "[" + p.table + "]";
    bool inside = false, found = false;
    for (const std::string& line : lines) {
      const std::string bare = line.rfind("# ", 0) == 0 ? line.substr(2) : line;
      if (!bare.empty() && bare[0] == '[') inside = bare == header || (inside && bare == "[[solve]]");
      if (inside && bare.rfind(p.key + " = ", 0) == 0) found = true;
    }
    EXPECT_TRUE(found) << p.table << "." << p.key << " is not documented in jobs/examples/full_reference.toml";
  }
}

// The reference is what the declaration renders (its documentation derives from the declaration, nowhere else). On a
// difference the rendered text is left in full_reference.toml.rendered in the test's working directory.
TEST(Config, FullReferenceIsRenderedFromTheDeclaration) {
  const std::string rendered = reference_toml();
  const std::string text = file_text(kExamples + "full_reference.toml");
  if (text == rendered) return;
  std::ofstream("full_reference.toml.rendered") << rendered;
  const std::vector<std::string> a = lines_of(text), b = lines_of(rendered);
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  ADD_FAILURE()
      << "jobs/examples/full_reference.toml differs from the declaration's rendering at line " << i + 1
      << ":\n  file:     " << (i < a.size() ? a[i] : "<end>") << "\n  rendered: " << (i < b.size() ? b[i] : "<end>")
      << "\nThe rendering is in full_reference.toml.rendered (the test's working directory); copy it over the "
         "file after editing src/run/parameters*.cpp.";
}

// The input's words come from the declaration: every choice of a choice key reads back to its own name.
TEST(Config, ChoiceNamesAreTheInputWords) {
  EXPECT_EQ(choice_name(Precision::Mixed), "mixed");
  EXPECT_EQ(choice_name(SolveKind::PlaneWave), "plane_wave");
  EXPECT_EQ(choice_name(GaugeFormat::OpenQcd), "openqcd");
  EXPECT_EQ(choice_name(LinkSmearingKind::Stout), "stout");
  EXPECT_EQ(
      parse(with_extra("[solver]\nprecision = \"" + choice_name(Precision::Double) + "\"\n").text()).solver.precision,
      Precision::Double);
}

// The /solves attributes of the input come from the declaration: kappa, csw, reconstruct, reliable_delta and the
// effective tol for every solve, the source and smearing for a propagator.
TEST(Config, SolveAttributesFollowTheDeclaration) {
  const Config c = parse(with_solves("[[solve]]\ntype = \"point\"\ntol = 1e-9\n[[solve]]\ntype = \"propagator\"\n"
                                     "site = [1, 2, 3, 4]\n")
                             .text());
  std::vector<std::string> point, prop;
  for (const InputAttribute& a : solve_attributes(c, c.solves[0])) point.push_back(a.name);
  for (const InputAttribute& a : solve_attributes(c, c.solves[1])) prop.push_back(a.name);
  EXPECT_EQ(point,
            (std::vector<std::string>{"kappa", "csw", "reconstruct", "reliable_delta", "sloppy", "stop", "tol"}));
  EXPECT_EQ(prop, (std::vector<std::string>{"kappa", "csw", "reconstruct", "reliable_delta", "sloppy", "stop", "tol",
                                            "source_site", "smearing", "smearing_steps", "smearing_weight",
                                            "link_smearing", "link_smearing_steps", "link_smearing_weight"}));
  EXPECT_EQ(std::get<int>(solve_attributes(c, c.solves[0])[2].value), 18);      // dirac.reconstruct's default
  EXPECT_EQ(std::get<double>(solve_attributes(c, c.solves[0])[3].value), 0.1);  // solver.reliable_delta's default
  EXPECT_EQ(std::get<std::string>(solve_attributes(c, c.solves[0])[4].value), "single");  // solver.sloppy's default
  EXPECT_EQ(std::get<std::string>(solve_attributes(c, c.solves[0])[5].value), "full");    // solver.stop's default
  EXPECT_EQ(std::get<double>(solve_attributes(c, c.solves[0])[6].value), 1e-9);           // the solve's tol
  EXPECT_EQ(std::get<double>(solve_attributes(c, c.solves[1])[6].value), 1e-6);           // solver.tol
}

}  // namespace
}  // namespace emprism::run
