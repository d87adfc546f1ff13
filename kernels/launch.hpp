// launch.hpp: the launchers every kernel goes through. Each launch is timed and recorded in the metrics
// registry under its name with the flops and minimum bytes of that call (DESIGN.md section 4).
// The backend (CPU OpenMP loop, or later one generic __global__) is chosen by the build, here only.
// Who may call: host code on the rank that owns the fields.
#pragma once

#include <chrono>
#include <cstdint>

#include "kernels/backend/cpu.hpp"
#include "src/metrics.hpp"

namespace emprism {

struct LaunchCost {
  const char* name;
  double flops;  // for the whole call
  double bytes;  // minimum bytes for the whole call
};

// Runs without recording (parts of a composite operation that its caller times as a whole).
template <typename F>
void run_kernel(std::int64_t n, const F& f) {
  backend::parallel_for(n, f);
  backend::synchronize();
}

template <typename F>
void launch(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  const auto t0 = std::chrono::steady_clock::now();
  backend::parallel_for(n, f);
  backend::synchronize();
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  metrics.record(cost.name, dt.count(), cost.flops, cost.bytes);
}

template <int N, typename F>
Sums<N> launch_reduce(MetricsRegistry& metrics, const LaunchCost& cost, std::int64_t n, const F& f) {
  const auto t0 = std::chrono::steady_clock::now();
  const Sums<N> s = backend::parallel_reduce<N>(n, f);
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  metrics.record(cost.name, dt.count(), cost.flops, cost.bytes);
  return s;
}

}  // namespace emprism
