// tune_setup.hpp: the run's kernel tuner (kernels/tune.hpp) and its tune-cache file (io/tune_cache.hpp).
// The file: [tune] cache when given, else the environment variable EMPRISM_TUNE_CACHE (rank 0's), else none (the
// choices are timed anew in every run and kept in memory only: like QUDA without QUDA_RESOURCE_PATH, nothing is
// written where the user did not ask). Rank 0 reads the file once at start-up and broadcasts its text, so every rank
// holds the same entries and tunes the same keys; a tuned key's candidate times are the slowest rank's (reduce_max),
// so every rank keeps the same variant. At the end rank 0 merges this run's entries into the file (locked, atomic).
// A corrupt or foreign file is ignored with one warning naming it (rank 0) and rewritten at the end; a file that
// cannot be read or written is a warning too, never a failure of the run.
// Who may call: execute.cpp, on every rank (the constructor is collective).
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "kernels/metrics.hpp"
#include "kernels/tune.hpp"
#include "src/run/config.hpp"

namespace emprism::run {

// The cache file of cfg on this process ("" = none).
std::string tune_cache_path(const Config& cfg);

class RunTuner {
 public:
  RunTuner(const Config& cfg, Communicator& comm);
  Tuner* get() { return tuner_.get(); }
  // GPU backends: the row "tune" of /metrics/kernels (total_s: the seconds spent timing candidates, 0 when every
  // choice came from the cache) and one log line. Nothing on the CPU backend (one variant).
  void account(MetricsRegistry& metrics) const;
  // Rank 0 merges this run's choices into the cache file (nothing without a file, or when nothing was tuned and the
  // file read was valid).
  void save() const;

 private:
  Communicator& comm_;
  std::string path_;
  bool file_valid_ = false;  // the file read at start-up was a valid cache of this build and device
  std::unique_ptr<Tuner> tuner_;
};

}  // namespace emprism::run
