// tune.hpp: the kernel autotuner. A tuned launch (launch_tuned, kernels/launch.hpp) asks the Tuner for the launch
// variant of its key; on a miss the Tuner times every candidate (one untimed run, then kTuneRepetitions runs, each
// between a pair of timing events on the compute stream; best of), agrees with the other ranks (agree hook: the
// slowest rank's time per candidate, set by the run), keeps the fastest and reports it (report hook: one log line).
// Key: kernel name | precision | links format | sites of the launch; the device (name and architecture) and the code
// version (git hash, backend and the candidate list) are the cache's identity (TuneIdentity), held once in the file's
// header like QUDA's tunecache.tsv: a file of another identity is foreign and ignored as a whole.
// Candidates only differ in the launch configuration (block size, occupancy bound), never in the per-site code, so
// every candidate computes the same bits; a tuned kernel must be safe to run again with the same arguments (its
// outputs do not alias its inputs, as the Dirac kernels' contract says), since the timing runs it several times.
// Cache text (format_tune_cache / parse_tune_cache; the file itself: io/tune_cache.hpp):
//   line 1  emprism-tunecache <TAB> 1 <TAB> <version> <TAB> <device>
//   line 2  checksum <TAB> <16 hex digits: FNV-1a 64 of every byte after this line>
//   then    <key> <TAB> <block> <TAB> <occupancy bound> <TAB> <microseconds of the chosen variant>, one per line
// On the CPU backend there is one variant: the launcher never asks the Tuner (nothing timed, nothing stored).
// Who may call: the launchers (find, tune), the run (hooks, load, entries); not thread-safe (launches are serial).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace emprism {

// A launch configuration of the generic kernel: threads per block and __launch_bounds__'s second argument (0: none);
// the CPU backend's one variant (its OpenMP loop) has block 0.
struct LaunchVariant {
  int block = 0;
  int min_occupancy = 0;
  std::string describe() const;  // "b128", "b256/o4" or "host"
  bool operator==(const LaunchVariant& o) const { return block == o.block && min_occupancy == o.min_occupancy; }
};

struct TuneIdentity {
  std::string version;  // the code: git hash, backend, candidate list
  std::string device;   // the device: name and architecture
};

struct TuneChoice {
  LaunchVariant variant;
  double seconds = 0;  // of the chosen variant, one launch
};

using TuneEntries = std::map<std::string, TuneChoice>;

// What parsing a cache text found; entries only when status is Ok.
struct TuneCacheText {
  enum class Status { Ok, Corrupt, Foreign } status = Status::Ok;
  std::string reason;  // for Corrupt and Foreign: what was wrong, for the one warning
  TuneEntries entries;
};

std::string format_tune_cache(const TuneIdentity& id, const TuneEntries& entries);
// Checks the header, the identity, the checksum and every line; variants must be among the candidates.
TuneCacheText parse_tune_cache(const std::string& text, const TuneIdentity& id,
                               const std::vector<LaunchVariant>& candidates);
// "eo_clover|fp32|r18|65536": the key of a launch (no tabs or newlines in the kernel name), with the name of its
// precision (kernels/half.hpp's PrecisionTraits<R>::name: "fp32", "fp64", "half", "fp32/fp64").
std::string tune_key(const std::string& kernel, const std::string& precision, int links_format, long long sites);
// The identity's version text for a git hash, a backend name and the candidates (so another list is foreign).
std::string tune_version(const std::string& git_hash, const std::string& backend,
                         const std::vector<LaunchVariant>& candidates);

struct TuneStats {
  int tuned = 0;             // keys timed in this run
  int loaded = 0;            // keys of the cache loaded at start-up
  int candidates_timed = 0;  // candidate timings (each of kTuneRepetitions launches)
  double seconds = 0;        // wall time spent tuning (device work included)
};

class Tuner {
 public:
  static constexpr int kTuneRepetitions = 3;
  // candidates: every variant a tuned launch may use, candidates[default_index] the untuned default; enabled =
  // false: every key gets the default, nothing is timed.
  Tuner(TuneIdentity id, std::vector<LaunchVariant> candidates, int default_index, bool enabled = true);

  // The candidate index of key, or -1 when it has none yet (call tune).
  int find(const std::string& key) const {
    if (!enabled_) return default_;
    const auto it = index_.find(key);
    return it == index_.end() ? -1 : it->second;
  }
  // Times run(i) for every candidate i (run enqueues candidate i on the compute stream), agrees, keeps the fastest.
  // available(i) false: candidate i does not exist for this kernel (a launch-bounds variant compiled only for some
  // kernels, kernels/backend/variants.hpp): not run, not timed, never chosen (the default always exists).
  // Collective when an agree hook is set: every rank must tune the same keys in the same order.
  int tune(const std::string& key, const std::function<void(int)>& run,
           const std::function<bool(int)>& available = nullptr);

  // Per-candidate seconds (this rank's) -> the same per-candidate seconds on every rank (e.g. the maximum).
  void set_agree(std::function<std::vector<double>(const std::vector<double>&)> agree) { agree_ = std::move(agree); }
  void set_report(std::function<void(const std::string&)> report) { report_ = std::move(report); }

  // Adds the entries of a cache read at start-up (stats().loaded counts them).
  void load(const TuneEntries& entries);
  const TuneEntries& entries() const { return entries_; }
  const TuneIdentity& identity() const { return id_; }
  const std::vector<LaunchVariant>& candidates() const { return candidates_; }
  const LaunchVariant& variant(int index) const { return candidates_[static_cast<std::size_t>(index)]; }
  bool enabled() const { return enabled_; }
  const TuneStats& stats() const { return stats_; }

 private:
  TuneIdentity id_;
  std::vector<LaunchVariant> candidates_;
  int default_;
  bool enabled_;
  TuneEntries entries_;
  std::map<std::string, int> index_;  // key -> candidate index
  TuneStats stats_;
  std::function<std::vector<double>(const std::vector<double>&)> agree_;
  std::function<void(const std::string&)> report_;
};

}  // namespace emprism
