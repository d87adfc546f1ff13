// cpu.hpp: the CPU (OpenMP) backend: run a functor over n sites. Reductions are summed in fixed chunks in a
// fixed order, so a result does not depend on the number of threads (bitwise reproducible).
// Who may call: kernels/launch.hpp only.
#pragma once

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "kernels/blas.hpp"
#include "src/metrics.hpp"

namespace emprism::backend {

inline int max_threads() { return omp_get_max_threads(); }

// MinOccupancy (a GPU launch variant, kernels/backend/gpu.hpp) means nothing on the CPU.
template <int MinOccupancy = 0, typename F>
void parallel_for(std::int64_t n, const F& f) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f(static_cast<int>(i));
}

template <int N, typename F>
Sums<N> parallel_reduce(std::int64_t n, const F& f) {
  constexpr std::int64_t kChunk = 1024;
  const std::int64_t nchunks = (n + kChunk - 1) / kChunk;
  std::vector<Sums<N>> partial(static_cast<size_t>(nchunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < nchunks; ++c) {
    Sums<N> s{};
    const std::int64_t end = (c + 1) * kChunk < n ? (c + 1) * kChunk : n;
    for (std::int64_t i = c * kChunk; i < end; ++i) {
      const Sums<N> v = f(static_cast<int>(i));
      for (int k = 0; k < N; ++k) s.v[k] += v.v[k];
    }
    partial[static_cast<size_t>(c)] = s;
  }
  Sums<N> total{};
  for (const auto& s : partial)
    for (int k = 0; k < N; ++k) total.v[k] += s.v[k];
  return total;
}

// Runs f over n sites and returns the elapsed seconds.
template <int MinOccupancy = 0, typename F>
double timed_for(std::int64_t n, const F& f) {
  const auto t0 = std::chrono::steady_clock::now();
  parallel_for(n, f);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <int N, typename F>
Sums<N> timed_reduce(std::int64_t n, const F& f, double& seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  const Sums<N> s = parallel_reduce<N>(n, f);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

// Kernel resources (registers, spills, occupancy) exist only on GPUs.
template <typename F, int MinOccupancy = 0>
KernelResources resources() {
  return KernelResources{};
}
template <int N, typename F>
KernelResources reduce_resources() {
  return KernelResources{};
}

}  // namespace emprism::backend
