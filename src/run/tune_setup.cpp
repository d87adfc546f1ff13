// tune_setup.cpp: the run's kernel tuner and its cache file (see tune_setup.hpp).
#include "src/run/tune_setup.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <exception>

#include "comm/collectives.hpp"
#include "emprism_version.hpp"
#include "io/tune_cache.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/backend/variants.hpp"

namespace emprism::run {

namespace {

TuneIdentity identity() {
  return TuneIdentity{tune_version(EMPRISM_GIT_HASH, backend::name(), backend::launch_variants()),
                      backend::device_model()};
}

// Rank 0's cache text ("" when there is none or it cannot be read), on every rank.
std::string read_on_rank0(Communicator& comm, const std::string& path) {
  std::string text;
  if (comm.rank() == 0) try {
      if (const auto t = io::read_tune_cache(path)) text = *t;
    } catch (const std::exception& e) {
      spdlog::warn("{}; tuning anew, the file is rewritten at the end", e.what());
    }
  broadcast(comm, text);
  return text;
}

}  // namespace

std::string tune_cache_path(const Config& cfg) {
  if (!cfg.tune.cache.empty()) return cfg.tune.cache;
  const char* env = std::getenv("EMPRISM_TUNE_CACHE");
  return env != nullptr ? env : "";
}

RunTuner::RunTuner(const Config& cfg, Communicator& comm) : comm_(comm) {
  if (cfg.tune.enabled) {
    path_ = comm.rank() == 0 ? tune_cache_path(cfg) : std::string();
    broadcast(comm, path_);
  }
  tuner_ =
      std::make_unique<Tuner>(identity(), backend::launch_variants(), backend::default_variant(), cfg.tune.enabled);
  tuner_->set_agree([&comm](const std::vector<double>& seconds) {
    std::vector<double> slowest = seconds;
    reduce_max(comm, slowest.data(), static_cast<int>(slowest.size()));
    return slowest;
  });
  tuner_->set_report([](const std::string& line) { spdlog::info("{}", line); });
  if (path_.empty()) return;
  const std::string text = read_on_rank0(comm, path_);
  if (text.empty()) {
    spdlog::info("tune cache {}: none yet, written at the end", path_);
    return;
  }
  const TuneCacheText parsed = parse_tune_cache(text, tuner_->identity(), tuner_->candidates());
  if (parsed.status != TuneCacheText::Status::Ok) {
    spdlog::warn("tune cache '{}' ignored: {}; tuning anew, the file is rewritten at the end", path_, parsed.reason);
    return;
  }
  file_valid_ = true;
  tuner_->load(parsed.entries);
  spdlog::info("tune cache {}: {} entries read", path_, parsed.entries.size());
}

void RunTuner::account(MetricsRegistry& metrics) const {
  const TuneStats& s = tuner_->stats();
  if (tuner_->candidates().size() < 2) return;  // the CPU backend: one variant, nothing to tune or report
  metrics.record("tune", s.seconds, 0, 0);
  if (!tuner_->enabled()) {
    spdlog::info("tune: off ([tune] enabled = false): every kernel ran its default launch");
    return;
  }
  spdlog::info("tune: {} kernel launch(es) tuned in {:.3f} s ({} candidate timings), {} entries from the cache{}",
               s.tuned, s.seconds, s.candidates_timed, s.loaded,
               path_.empty() ? " (no cache file: [tune] cache or EMPRISM_TUNE_CACHE)" : " " + path_);
}

void RunTuner::save() const {
  if (path_.empty() || comm_.rank() != 0 || (file_valid_ && tuner_->stats().tuned == 0)) return;
  try {
    const std::size_t n = io::save_tune_cache(path_, tuner_->identity(), tuner_->candidates(), tuner_->entries());
    spdlog::info("tune cache {}: {} entries written", path_, n);
  } catch (const std::exception& e) {
    spdlog::warn("{}; this run's choices are not kept", e.what());
  }
}

}  // namespace emprism::run
