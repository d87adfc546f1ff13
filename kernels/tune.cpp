// tune.cpp: the kernel autotuner and its cache text (see tune.hpp). Timing: device events on the compute stream
// around each repetition (host timestamps on the CPU backend), best of kTuneRepetitions after one untimed run.
// Who may call: see tune.hpp.
#include "kernels/tune.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "kernels/backend/runtime.hpp"

namespace emprism {

namespace {

constexpr const char* kMagic = "emprism-tunecache";
constexpr const char* kFormat = "1";

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = line.find(sep, start);
    out.push_back(line.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// A whole decimal integer in [lo, hi], or false.
bool parse_int(const std::string& s, long lo, long hi, long& v) {
  if (s.empty() || s.size() > 12) return false;
  char* end = nullptr;
  v = std::strtol(s.c_str(), &end, 10);
  return end == s.c_str() + s.size() && v >= lo && v <= hi;
}

bool parse_seconds(const std::string& s, double& us) {
  if (s.empty()) return false;
  char* end = nullptr;
  us = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && us >= 0 && us < 1e12;
}

TuneCacheText corrupt(const std::string& reason) {
  TuneCacheText t;
  t.status = TuneCacheText::Status::Corrupt;
  t.reason = reason;
  return t;
}

// One body line into entries, or the reason it is not one.
std::string parse_entry(const std::string& line, const std::vector<LaunchVariant>& candidates, TuneEntries& entries) {
  const std::vector<std::string> f = split(line, '\t');
  long block = 0, bound = 0;
  double us = 0;
  if (f.size() != 4 || f[0].empty() || !parse_int(f[1], 1, 4096, block) || !parse_int(f[2], 0, 64, bound) ||
      !parse_seconds(f[3], us))
    return "a line is not <key> <block> <bound> <microseconds>";
  const LaunchVariant v{static_cast<int>(block), static_cast<int>(bound)};
  bool known = false;
  for (const LaunchVariant& c : candidates) known = known || c == v;
  if (!known) return "variant " + v.describe() + " is not a candidate of this build";
  if (!entries.emplace(f[0], TuneChoice{v, us * 1e-6}).second) return "key " + f[0] + " appears twice";
  return "";
}

}  // namespace

std::string LaunchVariant::describe() const {
  if (block == 0) return "host";
  return "b" + std::to_string(block) + (min_occupancy > 0 ? "/o" + std::to_string(min_occupancy) : "");
}

std::string tune_key(const std::string& kernel, const std::string& precision, int links_format, long long sites) {
  return kernel + "|" + precision + "|r" + std::to_string(links_format) + "|" + std::to_string(sites);
}

std::string tune_version(const std::string& git_hash, const std::string& backend,
                         const std::vector<LaunchVariant>& candidates) {
  std::string v = git_hash + " " + backend + " candidates";
  for (const LaunchVariant& c : candidates) v += " " + c.describe();
  return v;
}

std::string format_tune_cache(const TuneIdentity& id, const TuneEntries& entries) {
  std::string body;
  for (const auto& [key, c] : entries) {
    char us[32];
    std::snprintf(us, sizeof us, "%.3f", c.seconds * 1e6);
    body += key + "\t" + std::to_string(c.variant.block) + "\t" + std::to_string(c.variant.min_occupancy) + "\t" + us +
            "\n";
  }
  return std::string(kMagic) + "\t" + kFormat + "\t" + id.version + "\t" + id.device + "\n" + "checksum\t" +
         hex16(fnv1a(body)) + "\n" + body;
}

TuneCacheText parse_tune_cache(const std::string& text, const TuneIdentity& id,
                               const std::vector<LaunchVariant>& candidates) {
  const std::size_t h1 = text.find('\n');
  const std::size_t h2 = h1 == std::string::npos ? h1 : text.find('\n', h1 + 1);
  if (h2 == std::string::npos) return corrupt("no header (empty or truncated file)");
  const std::vector<std::string> head = split(text.substr(0, h1), '\t');
  if (head.size() != 4 || head[0] != kMagic || head[1] != kFormat) return corrupt("not an EmPRiSM-MPI tune cache");
  const std::vector<std::string> sum = split(text.substr(h1 + 1, h2 - h1 - 1), '\t');
  if (sum.size() != 2 || sum[0] != "checksum" || sum[1].size() != 16) return corrupt("no checksum line");
  if (head[2] != id.version || head[3] != id.device) {
    TuneCacheText t;
    t.status = TuneCacheText::Status::Foreign;
    t.reason = head[2] != id.version ? "written by another build (" + head[2] + "; this is " + id.version + ")"
                                     : "written for another device (" + head[3] + "; this is " + id.device + ")";
    return t;
  }
  const std::string body = text.substr(h2 + 1);
  if (hex16(fnv1a(body)) != sum[1]) return corrupt("wrong checksum (edited or truncated)");
  if (!body.empty() && body.back() != '\n') return corrupt("truncated last line");
  TuneCacheText t;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t end = body.find('\n', start);
    const std::string why = parse_entry(body.substr(start, end - start), candidates, t.entries);
    if (!why.empty()) return corrupt(why);
    start = end + 1;
  }
  return t;
}

Tuner::Tuner(TuneIdentity id, std::vector<LaunchVariant> candidates, int default_index, bool enabled)
    : id_(std::move(id)), candidates_(std::move(candidates)), default_(default_index), enabled_(enabled) {
  if (candidates_.empty() || default_ < 0 || default_ >= static_cast<int>(candidates_.size()))
    throw std::invalid_argument("Tuner: the default variant must be one of the candidates");
}

void Tuner::load(const TuneEntries& entries) {
  for (const auto& [key, c] : entries)
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      if (candidates_[i] == c.variant && entries_.emplace(key, c).second) {
        index_[key] = static_cast<int>(i);
        ++stats_.loaded;
      }
}

int Tuner::tune(const std::string& key, const std::function<void(int)>& run,
                const std::function<bool(int)>& available) {
  const auto t0 = std::chrono::steady_clock::now();
  const int n = static_cast<int>(candidates_.size());
  const backend::Stream s = backend::compute_stream();
  const backend::Event start = backend::create_event(backend::EventKind::Timing);
  const backend::Event stop = backend::create_event(backend::EventKind::Timing);
  std::vector<double> seconds(static_cast<std::size_t>(n), std::numeric_limits<double>::max());
  int timed = 0;
  for (int i = 0; i < n; ++i) {
    if (i != default_ && available && !available(i)) continue;
    ++timed;
    run(i);  // first use: untimed
    for (int r = 0; r < kTuneRepetitions; ++r) {
      backend::record(start, s);
      run(i);
      backend::record(stop, s);
      backend::wait_event(stop);
      seconds[static_cast<std::size_t>(i)] =
          std::min(seconds[static_cast<std::size_t>(i)], backend::elapsed_seconds(start, stop));
    }
  }
  backend::destroy_event(start);
  backend::destroy_event(stop);
  const std::vector<double> agreed = agree_ ? agree_(seconds) : seconds;
  int best = default_;
  for (int i = 0; i < n; ++i)
    if (agreed[static_cast<std::size_t>(i)] < agreed[static_cast<std::size_t>(best)]) best = i;
  entries_[key] = TuneChoice{candidates_[static_cast<std::size_t>(best)], agreed[static_cast<std::size_t>(best)]};
  index_[key] = best;
  const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.tuned;
  stats_.candidates_timed += timed;
  stats_.seconds += spent;
  if (report_) {
    std::ostringstream line;
    line << "tune " << key << ": " << timed << " candidates timed (us, slowest rank:";
    for (int i = 0; i < n; ++i) {
      if (seconds[static_cast<std::size_t>(i)] == std::numeric_limits<double>::max()) continue;  // not available
      char us[32];
      std::snprintf(us, sizeof us, " %s %.1f", candidates_[static_cast<std::size_t>(i)].describe().c_str(),
                    agreed[static_cast<std::size_t>(i)] * 1e6);
      line << us;
    }
    char tail[96];
    std::snprintf(tail, sizeof tail, "), chosen %s, tuning took %.3f s",
                  candidates_[static_cast<std::size_t>(best)].describe().c_str(), spent);
    line << tail;
    report_(line.str());
  }
  return best;
}

}  // namespace emprism
