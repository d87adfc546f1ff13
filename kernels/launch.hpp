// launch.hpp: the launchers every kernel goes through. Each launch is timed and recorded in the metrics
// registry under its name with the flops and minimum bytes of that call (DESIGN.md section 4).
// The backend (CPU OpenMP loop, or later one generic __global__) is chosen by the build, here only.
// Who may call: host code on the rank that owns the fields.
#pragma once

#include <cstdint>

#include "kernels/backend/backend.hpp"
#include "src/metrics.hpp"

namespace emprism {

struct LaunchCost {
  const char* name;
  double flops;  // for the whole call
  double bytes;  // minimum bytes for the whole call
};

// Runs without recording (parts of a composite operation that its caller times as a whole).
template <int MinOccupancy = 0, typename F>
void run_kernel(std::int64_t n, const F& f) {
  backend::parallel_for<MinOccupancy>(n, f);
}

// MinOccupancy picks a launch-bounds variant of the GPU kernel (kernels/backend/gpu.hpp); 1, the default, is none.
template <int MinOccupancy = 0, typename F>
void launch(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  const double seconds = backend::timed_for<MinOccupancy>(n, f);
  metrics.record(cost.name, seconds, cost.flops, cost.bytes);
  if (!metrics.has_resources(cost.name)) metrics.set_resources(cost.name, backend::resources<F, MinOccupancy>());
}

template <int N, typename F>
Sums<N> launch_reduce(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  double seconds = 0;
  const Sums<N> s = backend::timed_reduce<N>(n, f, seconds);
  metrics.record(cost.name, seconds, cost.flops, cost.bytes);
  if (!metrics.has_resources(cost.name)) metrics.set_resources(cost.name, backend::reduce_resources<N, F>());
  return s;
}

}  // namespace emprism
