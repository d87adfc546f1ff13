// metrics.cpp: the per-kernel performance registry (docs/conventions.md section 11).
// Aggregates calls, total / min seconds, flops and minimum bytes by kernel name; table() derives mean,
// GB/s (bytes / total_s / 1e9) and percent of the measured peak, sorted by total time, descending.
// Timings started with start_timing wait in pending_ (in launch order) until their stop event is done.
// Who may call: any code on the rank that owns the registry; not thread-safe (launches are serial).
#include "kernels/metrics.hpp"

#include <algorithm>

namespace emprism {

namespace {
constexpr std::size_t kResolveAt = 256;  // pending timings before the done ones are read
constexpr std::size_t kWaitAt = 4096;    // pending timings before the oldest is waited for
}  // namespace

MetricsRegistry::~MetricsRegistry() {
  for (const auto& [start, stop] : pairs_) {
    backend::destroy_event(start);
    backend::destroy_event(stop);
  }
}

int MetricsRegistry::start_timing(backend::Stream s) {
  int k;
  if (free_pairs_.empty()) {
    k = static_cast<int>(pairs_.size());
    pairs_.emplace_back(backend::create_event(backend::EventKind::Timing),
                        backend::create_event(backend::EventKind::Timing));
  } else {
    k = free_pairs_.back();
    free_pairs_.pop_back();
  }
  backend::record(pairs_[static_cast<std::size_t>(k)].first, s);
  return k;
}

void MetricsRegistry::stop_timing(int token, backend::Stream s, const std::string& name, double flops, double bytes) {
  backend::record(pairs_[static_cast<std::size_t>(token)].second, s);
  pending_.push_back(Pending{token, name, flops, bytes});
  if (pending_.size() >= kResolveAt) resolve(false);
  while (pending_.size() >= kWaitAt) {  // the oldest is long done in practice
    backend::wait_event(pairs_[static_cast<std::size_t>(pending_.front().pair)].second);
    resolve(false);
  }
}

void MetricsRegistry::resolve(bool wait) const {
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    const auto& [start, stop] = pairs_[static_cast<std::size_t>(p.pair)];
    if (wait)
      backend::wait_event(stop);
    else if (!backend::done(stop))
      return;
    add(p.name, backend::elapsed_seconds(start, stop), p.flops, p.bytes);
    free_pairs_.push_back(p.pair);
    pending_.pop_front();
  }
}

void MetricsRegistry::clear() {
  resolve(true);
  entries_.clear();
}

void MetricsRegistry::record(const std::string& name, double seconds, double flops, double bytes) {
  add(name, seconds, flops, bytes);
}

void MetricsRegistry::add(const std::string& name, double seconds, double flops, double bytes) const {
  Entry& e = entries_[name];
  e.min_s = e.calls == 0 ? seconds : std::min(e.min_s, seconds);
  ++e.calls;
  e.total_s += seconds;
  e.flops += flops;
  e.bytes += bytes;
}

void MetricsRegistry::set_resources(const std::string& name, const KernelResources& res) {
  entries_[name].res = res;
  entries_[name].res_set = true;
}

void MetricsRegistry::add_variant(const std::string& name, const std::string& variant) {
  std::vector<std::string>& seen = entries_[name].variants;
  if (std::find(seen.begin(), seen.end(), variant) == seen.end()) seen.push_back(variant);
}

std::vector<KernelMetric> MetricsRegistry::table() const {
  resolve(true);
  const bool have_peak = peak_.measured && peak_.peak_gbs > 0;
  std::vector<KernelMetric> rows;
  rows.reserve(entries_.size());
  for (const auto& [name, e] : entries_) {
    KernelMetric m;
    m.name = name;
    m.calls = e.calls;
    m.total_s = e.total_s;
    m.mean_s = e.calls > 0 ? e.total_s / static_cast<double>(e.calls) : 0.0;
    m.min_s = e.min_s;
    m.flops = e.flops;
    m.bytes = e.bytes;
    m.gbs = e.total_s > 0 ? e.bytes / e.total_s / 1e9 : 0.0;
    m.percent_of_peak = have_peak ? 100.0 * m.gbs / peak_.peak_gbs : 0.0;
    m.res = e.res;
    for (const std::string& v : e.variants) m.variant += (m.variant.empty() ? "" : ",") + v;
    rows.push_back(std::move(m));
  }
  // Stable: equal totals keep the map's name order, so the table is deterministic.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelMetric& a, const KernelMetric& b) { return a.total_s > b.total_s; });
  return rows;
}

}  // namespace emprism
