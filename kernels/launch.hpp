// launch.hpp: the launchers every kernel goes through. Each launch is timed and recorded in the metrics
// registry under its name with the flops and minimum bytes of that call (docs/conventions.md section 11): the registry
// records device events around the launch on the compute stream and reads them later (MetricsRegistry), so a
// launch returns without waiting for the device. Reductions return their sums (waiting for them) or a
// PendingSums to be waited for later (launch_reduce_async), which lets the host overlap the global sum with
// device work. The backend (CPU OpenMP loop, or one generic __global__) is chosen by the build, here only.
// Tuned launches (launch_tuned, run_tuned: the hot kernels) take their launch variant from a Tuner (kernels/tune.hpp),
// which times the candidates on the first launch of a key (before the launch's own timing starts); without a Tuner,
// or on the CPU backend (one variant), they are plain launches of the default variant.
// Who may call: host code on the rank that owns the fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/backend/backend.hpp"
#include "kernels/metrics.hpp"
#include "kernels/tune.hpp"

namespace emprism {

struct LaunchCost {
  const char* name;
  double flops;  // for the whole call
  double bytes;  // minimum bytes for the whole call
};

// MinOccupancy picks a launch-bounds variant of the GPU kernel (kernels/backend/gpu.hpp); 0, the default, is none.
// Runs without recording (parts of a composite operation that its caller times as a whole), on stream s.
template <int MinOccupancy = 0, typename F>
void run_kernel(std::int64_t n, const F& f, backend::Stream s = backend::compute_stream()) {
  backend::parallel_for<MinOccupancy>(n, f, s);
}

// The launchers' kinds of launch: each runs its own kernel of a functor F (a reduction's per-site kernel is not the
// kernel of a plain launch of the same F), and a reduction's finishing kernel is keyed by ReduceFinish<N>.
enum class LaunchKind { Plain, Tuned, Reduce, Finish };
template <int N>
struct ReduceFinish {};

// True on the first call for (F, Kind, Tag, variant) in the process (one host thread per rank launches). The launchers
// use it to load a kernel before its first timed launch: CUDA and HIP load kernels lazily, on first use (with CUDA 13
// on an H200, 2026-11-29, fp32 eo_clover's first launch took 20-30 ms longer than the others: its row showed 66% of
// the peak instead of 87% in a run whose tuning came from the cache). Asking the runtime for the kernel's resources
// loads it; the load then counts in the solve's seconds, not in a kernel's row. Tag: the launch bound (Plain), the
// reduction's width (Reduce).
template <typename F, LaunchKind Kind, int Tag = 0>
bool first_launch_of(int variant) {
  static std::vector<bool> seen;
  const auto i = static_cast<std::size_t>(variant + 1);  // variant -1: the untuned launch
  if (i < seen.size() && seen[i]) return false;
  if (i >= seen.size()) seen.resize(i + 1, false);
  seen[i] = true;
  return true;
}

// A kernel's resources, asked for before its first timed launch (which loads it: first_launch_of), recorded under name
// unless the row has them; the launchers record them after the launch only for a name still without (a registry that
// was not there at the kernel's first launch), so the runtime is asked once per kernel and registry.
template <typename Query>
void load_kernel(MetricsRegistry& metrics, const char* name, const Query& query) {
  const KernelResources r = query();
  if (!metrics.has_resources(name)) metrics.set_resources(name, r);
}

template <int MinOccupancy = 0, typename F>
void launch(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  const backend::Stream s = backend::compute_stream();
  if (first_launch_of<F, LaunchKind::Plain, MinOccupancy>(-1))
    load_kernel(metrics, cost.name, [] { return backend::resources<F, MinOccupancy>(); });
  const int t = metrics.start_timing(s);
  backend::parallel_for<MinOccupancy>(n, f, s);
  metrics.stop_timing(t, s, cost.name, cost.flops, cost.bytes);
  if (!metrics.has_resources(cost.name)) metrics.set_resources(cost.name, backend::resources<F, MinOccupancy>());
}

// Whether a tuned launch of key times candidates now: a tuner with more than one candidate and no choice for key yet.
inline bool tunes_now(Tuner* tuner, const std::string& key) {
  return tuner != nullptr && tuner->candidates().size() > 1 && tuner->find(key) < 0;
}

// The variant of key for f over n sites (tuning it on a miss; f must be safe to run again, tune.hpp), among the
// candidates that exist for F (backend::variant_available; a cached choice that does not gives the default).
template <typename F>
int tuned_variant(Tuner* tuner, const std::string& key, std::int64_t n, const F& f, backend::Stream s) {
  const int v = tuner != nullptr ? tuner->find(key) : -1;  // one lookup on the launches that find their choice
  if (v < 0 && tunes_now(tuner, key))
    return tuner->tune(
        key, [&](int i) { backend::parallel_for_variant(n, f, i, s); },
        [](int i) { return backend::variant_available<F>(i); });
  return v >= 0 && backend::variant_available<F>(v) ? v : backend::default_variant();
}

// run_kernel with the variant the tuner chose for key (no recording).
template <typename F>
void run_tuned(Tuner* tuner, const std::string& key, std::int64_t n, const F& f,
               backend::Stream s = backend::compute_stream()) {
  backend::parallel_for_variant(n, f, tuned_variant(tuner, key, n, f, s), s);
}

// launch with the variant the tuner chose for key; the metrics row shows the variant (KernelMetric::variant).
template <typename F>
void launch_tuned(MetricsRegistry& metrics, Tuner* tuner, const std::string& key, const LaunchCost& cost,
                  std::int64_t n, const F& f) {
  const backend::Stream s = backend::compute_stream();
  const int v = tuned_variant(tuner, key, n, f, s);
  if (first_launch_of<F, LaunchKind::Tuned>(v))
    load_kernel(metrics, cost.name, [v] { return backend::variant_resources<F>(v); });
  const int t = metrics.start_timing(s);
  backend::parallel_for_variant(n, f, v, s);
  metrics.stop_timing(t, s, cost.name, cost.flops, cost.bytes);
  if (!metrics.has_resources(cost.name)) metrics.set_resources(cost.name, backend::variant_resources<F>(v));
  if (tuner != nullptr) metrics.add_variant(cost.name, tuner->variant(v).describe());
}

// launch_tuned for a kernel that updates its output in place (not safe to run again): on a miss the tuner times trial
// instead, the same kernel writing elsewhere, after prepare() (which fills trial's output, e.g. with a copy).
template <typename F, typename Prepare>
void launch_tuned(MetricsRegistry& metrics, Tuner* tuner, const std::string& key, const LaunchCost& cost,
                  std::int64_t n, const F& f, const F& trial, const Prepare& prepare) {
  if (tunes_now(tuner, key)) {
    prepare();
    tuned_variant(tuner, key, n, trial, backend::compute_stream());
  }
  launch_tuned(metrics, tuner, key, cost, n, f);
}

// The per-site kernel is recorded under cost.name; the finishing kernel that adds its blocks' partial sums and the
// copy of the result to the host under "reduce_finish" (no flops or minimum bytes: a few microseconds per call).
template <int N, typename F>
backend::PendingSums launch_reduce_async(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  const backend::Stream s = backend::compute_stream();
  if (first_launch_of<F, LaunchKind::Reduce, N>(-1))
    load_kernel(metrics, cost.name, [] { return backend::reduce_resources<N, F>(); });
  if (first_launch_of<ReduceFinish<N>, LaunchKind::Finish>(-1)) backend::finish_resources<N>();  // loads it
  const int t = metrics.start_timing(s);
  int finish = -1;
  backend::PendingSums p = backend::reduce_async<N>(n, f, s, [&] {
    metrics.stop_timing(t, s, cost.name, cost.flops, cost.bytes);
    finish = metrics.start_timing(s);
  });
  metrics.stop_timing(finish, s, "reduce_finish", 0, 0);
  if (!metrics.has_resources(cost.name)) metrics.set_resources(cost.name, backend::reduce_resources<N, F>());
  return p;
}

// The sums of this rank, after waiting for them (the wait counts as reduction wait in the registry).
template <int N, typename F>
Sums<N> launch_reduce(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  backend::PendingSums p = launch_reduce_async<N>(metrics, cost, n, f);
  metrics.reductions().wait_s += backend::wait_sums(p);
  Sums<N> s;
  for (int k = 0; k < N; ++k) s.v[k] = p.values[k];
  return s;
}

}  // namespace emprism
