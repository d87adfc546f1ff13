// test_tune.cpp: the kernel autotuner (kernels/tune.hpp) and its cache file (io/tune_cache.hpp) on the CPU backend.
// The Tuner is backend-independent: these tests give it three stand-in candidates whose "launches" are host calls
// (the CPU backend's events time the host), count the candidate runs, and read back what it keeps. The CPU backend's
// own launcher: tests/cpu/test_tune_launch.cpp. Each TEST checks one property.
// Who may call: the test runner.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "io/tune_cache.hpp"
#include "kernels/blas.hpp"
#include "kernels/half.hpp"
#include "kernels/metrics.hpp"
#include "kernels/tune.hpp"

namespace emprism::test {
namespace {

namespace fs = std::filesystem;

const std::vector<LaunchVariant> kCandidates = {{64, 0}, {128, 0}, {256, 0}};
const TuneIdentity kId{"abc123 CPU candidates b64 b128 b256", "test device sm_00"};

// A fresh file path in a fresh directory under /tmp (removed at the end).
struct TempCache {
  TempCache() {
    char tmpl[] = "/tmp/emprism_tune_XXXXXX";
    dir = ::mkdtemp(tmpl);
    path = dir + "/tunecache.tsv";
  }
  ~TempCache() { fs::remove_all(dir); }
  std::string dir, path;
};

// A tuner whose candidate runs are counted (runs[i]: how often candidate i ran).
struct CountingTuner {
  Tuner tuner{kId, kCandidates, 2};
  std::vector<int> runs = std::vector<int>(kCandidates.size(), 0);
  int variant(const std::string& key) {
    const int v = tuner.find(key);
    return v >= 0 ? v : tuner.tune(key, [&](int i) { ++runs[static_cast<std::size_t>(i)]; });
  }
  int total_runs() const { return runs[0] + runs[1] + runs[2]; }
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TuneEntries some_entries() {
  TuneEntries e;
  e["eo_clover|fp32|r18|65536"] = TuneChoice{{128, 0}, 431.5e-6};
  e["oe_clover|fp64|r12|65536"] = TuneChoice{{64, 0}, 812.25e-6};
  return e;
}

// The key names the precision (the four of kernels/half.hpp apart: Half and Fp32Fp64 are empty tags, whose size
// once gave both "fp8").
TEST(Tune, KeysOfTheFourPrecisionsDiffer) {
  const std::vector<std::string> keys = {
      tune_key("k", PrecisionTraits<float>::name, 12, 16), tune_key("k", PrecisionTraits<double>::name, 12, 16),
      tune_key("k", PrecisionTraits<Half>::name, 12, 16), tune_key("k", PrecisionTraits<Fp32Fp64>::name, 12, 16)};
  EXPECT_EQ(keys[0], "k|fp32|r12|16");
  EXPECT_EQ(keys[3], "k|fp32/fp64|r12|16");
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t j = i + 1; j < keys.size(); ++j) EXPECT_NE(keys[i], keys[j]);
}

TEST(Tune, TimesEveryCandidateOnceUntimedAndRepetitionsTimes) {
  CountingTuner t;
  t.variant("k|fp32|r18|16");
  for (int r : t.runs) EXPECT_EQ(r, 1 + Tuner::kTuneRepetitions);
  EXPECT_EQ(t.tuner.stats().tuned, 1);
  EXPECT_EQ(t.tuner.stats().candidates_timed, 3);
}

TEST(Tune, KeepsTheCandidateTheRanksAgreeIsFastest) {
  CountingTuner t;
  t.tuner.set_agree([](const std::vector<double>&) { return std::vector<double>{3e-6, 1e-6, 2e-6}; });
  EXPECT_EQ(t.variant("k|fp32|r18|16"), 1);
  EXPECT_EQ(t.tuner.entries().at("k|fp32|r18|16").variant, (LaunchVariant{128, 0}));
  EXPECT_DOUBLE_EQ(t.tuner.entries().at("k|fp32|r18|16").seconds, 1e-6);
}

TEST(Tune, CandidateThatDoesNotExistForTheKernelIsNeitherRunNorChosen) {
  CountingTuner t;
  // Candidate 1 the fastest by the ranks' agreement, but not compiled for this kernel.
  t.tuner.set_agree([](const std::vector<double>& s) {
    return std::vector<double>{3e-6, s[1] < 1.0 ? 1e-6 : s[1], 2e-6};
  });
  const int v = t.tuner.tune(
      "k|fp32|r18|16", [&](int i) { ++t.runs[static_cast<std::size_t>(i)]; }, [](int i) { return i != 1; });
  EXPECT_EQ(v, 2);
  EXPECT_EQ(t.runs[1], 0);
  EXPECT_EQ(t.tuner.stats().candidates_timed, 2);
}

TEST(Tune, TiesKeepTheDefaultVariant) {
  CountingTuner t;
  t.tuner.set_agree([](const std::vector<double>&) { return std::vector<double>{1e-6, 1e-6, 1e-6}; });
  EXPECT_EQ(t.variant("k|fp32|r18|16"), 2);
}

TEST(Tune, SecondLaunchOfAKeyTimesNothing) {
  CountingTuner t;
  const int first = t.variant("k|fp32|r18|16");
  const int runs = t.total_runs();
  EXPECT_EQ(t.variant("k|fp32|r18|16"), first);
  EXPECT_EQ(t.total_runs(), runs);
}

TEST(Tune, DisabledTunerGivesTheDefaultAndTimesNothing) {
  Tuner tuner(kId, kCandidates, 2, false);
  EXPECT_EQ(tuner.find("k|fp32|r18|16"), 2);
  EXPECT_EQ(tuner.stats().candidates_timed, 0);
}

TEST(Tune, CacheTextRoundTripKeepsEveryChoice) {
  const TuneCacheText back = parse_tune_cache(format_tune_cache(kId, some_entries()), kId, kCandidates);
  ASSERT_EQ(back.status, TuneCacheText::Status::Ok) << back.reason;
  ASSERT_EQ(back.entries.size(), 2u);
  for (const auto& [key, c] : some_entries()) {
    EXPECT_EQ(back.entries.at(key).variant, c.variant) << key;
    EXPECT_NEAR(back.entries.at(key).seconds, c.seconds, 1e-9) << key;  // microseconds with 3 decimals
  }
}

TEST(Tune, SecondRunWithTheCacheFileTimesNothing) {
  TempCache cache;
  CountingTuner first;
  for (const char* k : {"a|fp32|r18|16", "b|fp64|r12|16"}) first.variant(k);
  io::save_tune_cache(cache.path, kId, kCandidates, first.tuner.entries());

  CountingTuner second;
  const auto text = io::read_tune_cache(cache.path);
  ASSERT_TRUE(text.has_value());
  const TuneCacheText parsed = parse_tune_cache(*text, kId, kCandidates);
  ASSERT_EQ(parsed.status, TuneCacheText::Status::Ok) << parsed.reason;
  second.tuner.load(parsed.entries);
  for (const char* k : {"a|fp32|r18|16", "b|fp64|r12|16"}) EXPECT_EQ(second.variant(k), first.variant(k)) << k;
  EXPECT_EQ(second.total_runs(), 0);
  EXPECT_EQ(second.tuner.stats().candidates_timed, 0);
  EXPECT_EQ(second.tuner.stats().loaded, 2);
}

TEST(Tune, MissingFileReadsAsNone) {
  TempCache cache;
  EXPECT_FALSE(io::read_tune_cache(cache.path).has_value());
}

// Each broken form of a valid text is Corrupt, with a reason.
TEST(Tune, CorruptTextsAreRejected) {
  const std::string good = format_tune_cache(kId, some_entries());
  const std::size_t body = good.find('\n', good.find('\n') + 1) + 1;
  std::string wrong_sum = good;
  wrong_sum[good.find("checksum\t") + 9] = wrong_sum[good.find("checksum\t") + 9] == '0' ? '1' : '0';
  std::string edited = good;
  edited[good.find("\t128\t")] = ' ';
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"empty", ""},
      {"bad header", "not-a-cache\t1\tx\ty\n" + good.substr(good.find('\n') + 1)},
      {"truncated", good.substr(0, good.size() - 5)},
      {"wrong checksum", wrong_sum},
      {"edited line", edited},
      {"header only, cut", good.substr(0, body - 3)},
  };
  for (const auto& [what, text] : broken) {
    const TuneCacheText t = parse_tune_cache(text, kId, kCandidates);
    EXPECT_EQ(t.status, TuneCacheText::Status::Corrupt) << what;
    EXPECT_FALSE(t.reason.empty()) << what;
    EXPECT_TRUE(t.entries.empty()) << what;
  }
}

TEST(Tune, LineWithAValidChecksumButNoCandidateVariantIsRejected) {
  TuneEntries bad = some_entries();
  bad["eo_clover|fp32|r18|16"] = TuneChoice{{96, 0}, 1e-6};  // 96 threads is no candidate
  const TuneCacheText t = parse_tune_cache(format_tune_cache(kId, bad), kId, kCandidates);
  EXPECT_EQ(t.status, TuneCacheText::Status::Corrupt);
  EXPECT_NE(t.reason.find("b96"), std::string::npos) << t.reason;
  EXPECT_TRUE(t.entries.empty());
}

TEST(Tune, CacheOfAnotherBuildIsForeign) {
  const TuneIdentity other{"def456 CPU candidates b64 b128 b256", kId.device};
  const TuneCacheText t = parse_tune_cache(format_tune_cache(other, some_entries()), kId, kCandidates);
  EXPECT_EQ(t.status, TuneCacheText::Status::Foreign);
  EXPECT_NE(t.reason.find("another build"), std::string::npos) << t.reason;
  EXPECT_TRUE(t.entries.empty());
}

TEST(Tune, CacheOfAnotherDeviceIsForeign) {
  const TuneIdentity other{kId.version, "another device sm_99"};
  const TuneCacheText t = parse_tune_cache(format_tune_cache(other, some_entries()), kId, kCandidates);
  EXPECT_EQ(t.status, TuneCacheText::Status::Foreign);
  EXPECT_NE(t.reason.find("another device"), std::string::npos) << t.reason;
}

TEST(Tune, SaveReplacesACorruptFileWithAValidOne) {
  TempCache cache;
  write_text(cache.path, "garbage\n");
  io::save_tune_cache(cache.path, kId, kCandidates, some_entries());
  const TuneCacheText t = parse_tune_cache(read_text(cache.path), kId, kCandidates);
  ASSERT_EQ(t.status, TuneCacheText::Status::Ok) << t.reason;
  EXPECT_EQ(t.entries.size(), 2u);
}

TEST(Tune, SaveMergesWithTheEntriesAlreadyInTheFile) {
  TempCache cache;
  TuneEntries a, b;
  a["a|fp32|r18|16"] = TuneChoice{{64, 0}, 1e-6};
  b["b|fp32|r18|16"] = TuneChoice{{128, 0}, 2e-6};
  io::save_tune_cache(cache.path, kId, kCandidates, a);
  EXPECT_EQ(io::save_tune_cache(cache.path, kId, kCandidates, b), 2u);
  const TuneCacheText t = parse_tune_cache(read_text(cache.path), kId, kCandidates);
  ASSERT_EQ(t.status, TuneCacheText::Status::Ok) << t.reason;
  EXPECT_EQ(t.entries.size(), 2u);
}

TEST(Tune, ConcurrentWritersLoseNoEntry) {
  TempCache cache;
  constexpr int kWriters = 8, kRounds = 5;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        TuneEntries mine;
        mine["k" + std::to_string(w) + "_" + std::to_string(r) + "|fp32|r18|16"] = TuneChoice{{64, 0}, 1e-6};
        try {
          io::save_tune_cache(cache.path, kId, kCandidates, mine);
        } catch (...) {
          ++failures;
        }
      }
    });
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  const TuneCacheText t = parse_tune_cache(read_text(cache.path), kId, kCandidates);
  ASSERT_EQ(t.status, TuneCacheText::Status::Ok) << t.reason;
  EXPECT_EQ(t.entries.size(), static_cast<std::size_t>(kWriters * kRounds));
  for (const auto& entry : fs::directory_iterator(cache.dir))  // no temporary file left behind
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace emprism::test
