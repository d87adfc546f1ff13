// metrics.hpp: the per-kernel performance registry (docs/conventions.md section 11).
// Every launcher records name, elapsed seconds, flops and *minimum* bytes of one call; the
// registry aggregates by name. The empirical peak bandwidth (copy / triad / read) lives here too.
// Device time without waiting: start_timing/stop_timing record a pair of timing events around work enqueued on
// a stream; the pair is read later (when it is done, when many are pending, and always before table()), so the
// row keeps its meaning (device time per call) while launches queue back to back. On the CPU backend the
// events are host timestamps and the time is the host's.
// Also the reduction counters of /metrics/ranks (ReductionStats).
// Who may call: any code on the rank that owns the registry; not thread-safe (launches are serial).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "kernels/backend/runtime.hpp"

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
  std::string variant;  // tuned kernels (kernels/tune.hpp): the launch variants used, "b128" or "b128,b256"; else ""
};

// Empirical peak memory bandwidth in GB/s (0 where not measured).
struct PeakBandwidth {
  double copy_gbs = 0, triad_gbs = 0, read_gbs = 0;
  double peak_gbs = 0;  // the maximum of the three, used for percent_of_peak
  bool measured = false;
};

// Global sums of the CG solver: its inner iterations and the global sums made inside them, and the host time
// spent waiting for the device's partial sums before a global sum (the device-to-host waits).
struct ReductionStats {
  std::int64_t cg_iterations = 0, cg_reductions = 0;
  double wait_s = 0;
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  void record(const std::string& name, double seconds, double flops, double bytes);
  void set_resources(const std::string& name, const KernelResources& res);
  // A tuned launch of name used variant (each distinct variant is listed once, in order of first use).
  void add_variant(const std::string& name, const std::string& variant);
  // True once set_resources was called for the name (launchers query the runtime only once per kernel).
  bool has_resources(const std::string& name) const {
    const auto it = entries_.find(name);
    return it != entries_.end() && it->second.res_set;
  }
  // Device time of the work enqueued on s between the two calls, recorded under name when it is known.
  int start_timing(backend::Stream s);
  void stop_timing(int token, backend::Stream s, const std::string& name, double flops, double bytes);
  void set_peak(const PeakBandwidth& peak) { peak_ = peak; }
  const PeakBandwidth& peak() const { return peak_; }
  // Rows sorted by total time, descending, with gbs and percent_of_peak filled in (waits for pending timings).
  std::vector<KernelMetric> table() const;
  void clear();
  ReductionStats& reductions() { return reductions_; }
  const ReductionStats& reductions() const { return reductions_; }

 private:
  struct Entry {
    std::int64_t calls = 0;
    double total_s = 0, min_s = 0, flops = 0, bytes = 0;
    KernelResources res;
    bool res_set = false;
    std::vector<std::string> variants;
  };
  struct Pending {
    int pair;
    std::string name;
    double flops, bytes;
  };
  // Reads the pending timings in order: those already done, or all of them (waiting) when wait is set.
  void resolve(bool wait) const;
  void add(const std::string& name, double seconds, double flops, double bytes) const;

  mutable std::map<std::string, Entry> entries_;
  mutable std::deque<Pending> pending_;
  mutable std::vector<std::pair<backend::Event, backend::Event>> pairs_;  // timing event pairs, reused
  mutable std::vector<int> free_pairs_;
  PeakBandwidth peak_;
  ReductionStats reductions_;
};

}  // namespace emprism
