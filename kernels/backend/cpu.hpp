// cpu.hpp: the CPU (OpenMP) backend: run a functor over n sites, synchronously (the stream argument of the
// launchers is ignored: the host thread is the only queue). Reductions are summed in fixed chunks in a fixed
// order, so a result does not depend on the number of threads (bitwise reproducible).
// Who may call: kernels/launch.hpp only.
#pragma once

#include <omp.h>

#include <cstdint>
#include <vector>

#include "kernels/backend/runtime.hpp"
#include "kernels/backend/variants.hpp"
#include "kernels/blas.hpp"
#include "kernels/metrics.hpp"

namespace emprism::backend {

inline int max_threads() { return omp_get_max_threads(); }

// MinOccupancy (a GPU launch variant, kernels/backend/gpu.hpp) means nothing on the CPU.
template <int MinOccupancy = 0, typename F>
void parallel_for(std::int64_t n, const F& f, Stream = Stream{}) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f(static_cast<int>(i));
}

// Tuned launches (kernels/tune.hpp): the OpenMP loop is the one variant (variants.hpp), so nothing is ever timed.
template <typename F>
void parallel_for_variant(std::int64_t n, const F& f, int, Stream s = Stream{}) {
  parallel_for(n, f, s);
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

// The sums are final at once (wait_sums has nothing to wait for); between() is called after the loop (the GPU
// backends call it between their two kernels).
template <int N, typename F, typename Between>
PendingSums reduce_async(std::int64_t n, const F& f, Stream, const Between& between) {
  static_assert(N <= 4, "a pending reduction holds up to four sums");
  const Sums<N> s = parallel_reduce<N>(n, f);
  between();
  PendingSums p;
  p.n = N;
  for (int k = 0; k < N; ++k) p.values[k] = s.v[k];
  return p;
}

// Kernel resources (registers, spills, occupancy) exist only on GPUs.
template <typename F, int MinOccupancy = 0>
KernelResources resources() {
  return KernelResources{};
}
template <typename F>
KernelResources variant_resources(int) {
  return KernelResources{};
}
template <int N, typename F>
KernelResources reduce_resources() {
  return KernelResources{};
}
template <int N>
KernelResources finish_resources() {
  return KernelResources{};
}

}  // namespace emprism::backend
