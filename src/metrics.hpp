// metrics.hpp: the per-kernel performance registry (docs/conventions.md section 11).
// Every launcher records name, elapsed seconds, flops and *minimum* bytes of one call; the
// registry aggregates by name. The empirical peak bandwidth (copy / triad / read) lives here too.
// Who may call: any code on the rank that owns the registry; not thread-safe (launches are serial).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace emprism {

// Resource facts of a kernel as the runtime reports them (GPU backends); -1 where not applicable.
struct KernelResources {
  int registers = -1;
  int spill_bytes = -1;
  int shared_bytes = -1;
  int block = -1;
  double occupancy = -1.0;  // theoretical, fraction 0..1
};

// One row of /metrics/kernels.
struct KernelMetric {
  std::string name;
  std::int64_t calls = 0;
  double total_s = 0, mean_s = 0, min_s = 0;
  double flops = 0;  // total over all calls
  double bytes = 0;  // total minimum bytes over all calls
  double gbs = 0;    // bytes / total_s / 1e9
  double percent_of_peak = 0;
  KernelResources res;
};

// Empirical peak memory bandwidth in GB/s (0 where not measured).
struct PeakBandwidth {
  double copy_gbs = 0, triad_gbs = 0, read_gbs = 0;
  double peak_gbs = 0;  // the maximum of the three, used for percent_of_peak
  bool measured = false;
};

class MetricsRegistry {
 public:
  void record(const std::string& name, double seconds, double flops, double bytes);
  void set_resources(const std::string& name, const KernelResources& res);
  // True once set_resources was called for the name (launchers query the runtime only once per kernel).
  bool has_resources(const std::string& name) const {
    const auto it = entries_.find(name);
    return it != entries_.end() && it->second.res_set;
  }
  void set_peak(const PeakBandwidth& peak) { peak_ = peak; }
  const PeakBandwidth& peak() const { return peak_; }
  // Rows sorted by total time, descending, with gbs and percent_of_peak filled in.
  std::vector<KernelMetric> table() const;
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    std::int64_t calls = 0;
    double total_s = 0, min_s = 0, flops = 0, bytes = 0;
    KernelResources res;
    bool res_set = false;
  };
  std::map<std::string, Entry> entries_;
  PeakBandwidth peak_;
};

}  // namespace emprism
