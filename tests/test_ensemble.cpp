// test_ensemble.cpp: unit tests of the ensemble input (src/run/ensemble.hpp; README: Ensembles): natural order,
// globs, ids, name patterns, and the input errors of gauge.source = "ensemble" (one InputError naming the key, before
// any work). The files are empty: the reader only checks that they exist and are readable.
// Who may call: ctest (emprism_tests).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/errors.hpp"
#include "src/run/ensemble.hpp"
#include "src/run/input.hpp"

namespace emprism::run {
namespace {

namespace fs = std::filesystem;

// A fresh directory with empty files of the given names, removed afterwards.
class Ensemble : public testing::Test {
 protected:
  void SetUp() override {
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("emprism_ensemble_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string touch(const std::string& name) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "";
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // An input whose [gauge] table holds `gauge` (after source = "ensemble").
  static std::string input(const std::string& gauge) {
    return "[lattice]\nextents = [4, 4, 4, 8]\n[gauge]\nsource = \"ensemble\"\n" + gauge +
           "\n[dirac]\nkappa = 0.125\n[output]\nfile = \"out.h5\"\n[[solve]]\ntype = \"point\"\n";
  }
  static std::string error_of(const std::string& text) {
    try {
      parse_config(text, "test.toml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "<no error>";
  }
  fs::path dir_;
};

std::vector<std::string> ids_of(const std::vector<EnsembleMember>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(m.id);
  return out;
}

TEST(EnsembleOrder, NaturalOrderComparesDigitRunsAsNumbers) {
  std::vector<std::string> names = {"conf.10.lime", "conf.9.lime", "conf.100.lime", "conf.2.lime"};
  std::sort(names.begin(), names.end(), natural_less);
  EXPECT_EQ(names, (std::vector<std::string>{"conf.2.lime", "conf.9.lime", "conf.10.lime", "conf.100.lime"}));
}

TEST(EnsembleOrder, NaturalOrderIsStrictOnEqualNumbers) {
  EXPECT_FALSE(natural_less("a7", "a7"));
  EXPECT_TRUE(natural_less("a7", "a007"));  // equal values: fewer leading zeros first, still a strict order
  EXPECT_FALSE(natural_less("a007", "a7"));
  EXPECT_TRUE(natural_less("a", "a1"));
}

TEST(EnsembleIds, OneNumberPerNameGivesIntegerIds) {
  EXPECT_EQ(ensemble_ids({"dir9/cfg_000010.ildg", "dir9/cfg_000020.ildg"}), (std::vector<std::string>{"10", "20"}));
}

TEST(EnsembleIds, AmbiguousNamesGiveStems) {
  // "b6.0" holds more numbers than one: every id is then the name without its extension.
  EXPECT_EQ(ensemble_ids({"b6.0_conf.10.lime", "conf.20.lime"}), (std::vector<std::string>{"b6.0_conf.10", "conf.20"}));
}

TEST(EnsemblePattern, PlaceholdersExpand) {
  EXPECT_EQ(pattern_path("cfg_%06d.ildg", 30), "cfg_000030.ildg");
  EXPECT_EQ(pattern_path("run1n%d", 7), "run1n7");
  EXPECT_EQ(pattern_path("100%%_%d", 7), "100%_7");
}

TEST(EnsemblePattern, MalformedPatternsAreRefused) {
  std::string why;
  EXPECT_EQ(pattern_path("cfg.lime", 1, &why), "");
  EXPECT_NE(why.find("exactly one"), std::string::npos) << why;
  EXPECT_EQ(pattern_path("cfg_%d_%d", 1), "");
  EXPECT_EQ(pattern_path("cfg_%s", 1), "");
  EXPECT_EQ(pattern_path("cfg_%0d", 1), "");
}

TEST_F(Ensemble, GlobIsSortedNaturallyWithSweepIds) {
  for (const char* n : {"cfg_000100.ildg", "cfg_000020.ildg", "cfg_000090.ildg", "other.txt"}) touch(n);
  const Config c = parse_config(input("files = \"" + path("cfg_*.ildg") + "\""), "test.toml");
  EXPECT_EQ(ids_of(c.gauge.members), (std::vector<std::string>{"20", "90", "100"}));
  EXPECT_EQ(c.gauge.members.back().file, path("cfg_000100.ildg"));
}

TEST_F(Ensemble, ListKeepsItsOrder) {
  const std::string a = touch("conf.9.lime"), b = touch("conf.10.lime");
  const Config c = parse_config(input("files = [\"" + b + "\", \"" + a + "\"]"), "test.toml");
  EXPECT_EQ(ids_of(c.gauge.members), (std::vector<std::string>{"10", "9"}));
}

TEST_F(Ensemble, PatternGivesFirstLastStep) {
  for (const char* n : {"cfg_000010.ildg", "cfg_000020.ildg", "cfg_000030.ildg"}) touch(n);
  const Config c = parse_config(
      input("pattern = \"" + path("cfg_%06d.ildg") + "\"\nfirst = 10\nlast = 35\nstep = 10\nformat = \"ildg\""),
      "test.toml");
  EXPECT_EQ(ids_of(c.gauge.members), (std::vector<std::string>{"10", "20", "30"}));
  EXPECT_EQ(c.gauge.members[1].file, path("cfg_000020.ildg"));
}

TEST_F(Ensemble, MissingFileOfPatternNamesKeyAndFile) {
  touch("cfg_000010.ildg");
  const std::string e =
      error_of(input("pattern = \"" + path("cfg_%06d.ildg") + "\"\nfirst = 10\nlast = 20\nstep = 10"));
  EXPECT_EQ(e.rfind("gauge.pattern: ", 0), 0u) << e;
  EXPECT_NE(e.find("cfg_000020.ildg' does not exist"), std::string::npos) << e;
}

TEST_F(Ensemble, MissingFileOfListNamesKey) {
  const std::string e = error_of(input("files = [\"" + path("nothing.lime") + "\"]"));
  EXPECT_EQ(e.rfind("gauge.files: ", 0), 0u) << e;
}

TEST_F(Ensemble, GlobMatchingNothingIsRefused) {
  const std::string e = error_of(input("files = \"" + path("*.lime") + "\""));
  EXPECT_EQ(e.rfind("gauge.files: ", 0), 0u) << e;
  EXPECT_NE(e.find("matches no file"), std::string::npos) << e;
}

TEST_F(Ensemble, DuplicateIdsAreRefused) {
  const std::string a = touch("conf.10.lime"), b = touch("conf.010.lime");
  const std::string e = error_of(input("files = [\"" + a + "\", \"" + b + "\"]"));
  EXPECT_EQ(e.rfind("gauge.files: ", 0), 0u) << e;
  EXPECT_NE(e.find("id '10'"), std::string::npos) << e;
}

TEST_F(Ensemble, FilesAndPatternTogetherAreRefused) {
  const std::string a = touch("conf.1.lime");
  const std::string e = error_of(input("files = [\"" + a + "\"]\npattern = \"conf.%d.lime\"\nfirst = 1\nlast = 1"));
  EXPECT_EQ(e.rfind("gauge.", 0), 0u) << e;
}

TEST_F(Ensemble, NeitherFilesNorPatternIsRefused) {
  EXPECT_EQ(error_of(input("")).rfind("gauge.files: required", 0), 0u) << error_of(input(""));
}

TEST_F(Ensemble, PatternWithoutLastIsRefused) {
  EXPECT_EQ(error_of(input("pattern = \"c%d\"\nfirst = 1")).rfind("gauge.last: ", 0), 0u);
}

TEST_F(Ensemble, LastBeforeFirstIsRefused) {
  EXPECT_EQ(error_of(input("pattern = \"c%d\"\nfirst = 5\nlast = 1")).rfind("gauge.last: ", 0), 0u);
}

TEST_F(Ensemble, FirstWithFilesIsRefused) {
  const std::string a = touch("conf.1.lime");
  EXPECT_EQ(error_of(input("files = [\"" + a + "\"]\nfirst = 1")).rfind("gauge.first: ", 0), 0u);
}

TEST_F(Ensemble, EnsembleKeysNeedEnsembleSource) {
  const std::string text =
      "[lattice]\nextents = [4, 4, 4, 8]\n[gauge]\nfiles = \"x\"\n[dirac]\nkappa = 0.125\n"
      "[output]\nfile = \"out.h5\"\n[[solve]]\ntype = \"point\"\n";
  EXPECT_EQ(error_of(text).rfind("gauge.files: only for gauge.source = \"ensemble\"", 0), 0u) << error_of(text);
}

TEST_F(Ensemble, TheListIsAPhysicsInput) {
  for (const char* n : {"cfg_000010.ildg", "cfg_000020.ildg"}) touch(n);
  const std::string pattern = "pattern = \"" + path("cfg_%06d.ildg") + "\"\nfirst = 10\nstep = 10\nlast = ";
  const std::string one = physics_inputs(parse_config(input(pattern + "10"), "t.toml"));
  const std::string two = physics_inputs(parse_config(input(pattern + "20"), "t.toml"));
  EXPECT_NE(one, two);
  EXPECT_NE(two.find("gauge.files = [\"10=" + path("cfg_000010.ildg") + "\", \"20="), std::string::npos) << two;
}

}  // namespace
}  // namespace emprism::run
