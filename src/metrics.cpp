// metrics.cpp: the per-kernel performance registry (docs/conventions.md section 11).
// Aggregates calls, total / min seconds, flops and minimum bytes by kernel name; table() derives mean,
// GB/s (bytes / total_s / 1e9) and percent of the measured peak, sorted by total time, descending.
// Who may call: any code on the rank that owns the registry; not thread-safe (launches are serial).
#include "src/metrics.hpp"

#include <algorithm>

namespace emprism {

void MetricsRegistry::record(const std::string& name, double seconds, double flops, double bytes) {
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

std::vector<KernelMetric> MetricsRegistry::table() const {
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
    rows.push_back(std::move(m));
  }
  // Stable: equal totals keep the map's name order, so the table is deterministic.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelMetric& a, const KernelMetric& b) { return a.total_s > b.total_s; });
  return rows;
}

}  // namespace emprism
