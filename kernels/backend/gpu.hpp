// gpu.hpp: the GPU launch backend (HIP and CUDA from one source): one generic __global__ runs any functor
// over n sites, one thread per site; reductions run per-block tree sums in shared memory (double) and a
// second one-block kernel that adds the block partials in a fixed order (deterministic), so only the final
// Sums<N> crosses to the host, by an asynchronous copy into a pinned slot (PendingSums, read by wait_sums).
// Every launch goes to a stream (the compute stream unless told otherwise) and returns at once; timing is the
// launchers' business (events, kernels/launch.hpp). resources<F>() asks the runtime for registers, local
// (spill) memory, static shared memory and the theoretical occupancy of the kernel of F.
// Tuned launches (kernels/tune.hpp) pick a block size at run time among kTuneBlocks (variants.hpp): the default kBlock
// is for_kernel<F> itself, the others for_kernel_sized<F, Block> (instantiated only for the functors launched through
// parallel_for_variant: the hot kernels, to keep compile times down), and the launch-bounds variant
// for_kernel_sized_bounded (only for the functors that ask for it). The reductions' tree sums take the block size
// as a template argument too (block_sum<N, Block>, reduce_body), instantiated for kBlock only.
// Who may include: kernels/backend/backend.hpp only.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/backend/gpu_api.hpp"
#include "kernels/backend/runtime.hpp"
#include "kernels/backend/variants.hpp"
#include "kernels/blas.hpp"
#include "kernels/metrics.hpp"

namespace emprism::backend {

constexpr int kMaxReduceBlocks = 1024;

// Whether F's per-site call takes the launch's block size: a static constexpr bool kTakesBlock = true and a
// `template <int Block> operator()(int)` (kernels/wilson_clover.hpp: DslashInterior, which compiles its staged hops
// only for blocks that fit its buffer). The CPU backend calls f(i) (the call's default, blocks of one).
template <typename F, typename = void>
struct TakesBlock : std::false_type {};
template <typename F>
struct TakesBlock<F, std::void_t<decltype(F::kTakesBlock)>> : std::bool_constant<F::kTakesBlock> {};

template <int Block, typename F>
__device__ inline void for_site(const F& f, int n) {
  const int i = static_cast<int>(blockIdx.x) * Block + static_cast<int>(threadIdx.x);
  if (i >= n) return;
  if constexpr (TakesBlock<F>::value)
    f.template operator()<Block>(i);
  else
    f(i);
}

template <typename F>
__global__ void __launch_bounds__(kBlock) for_kernel(F f, int n) {
  for_site<kBlock>(f, n);
}

// A tuned launch's other block sizes (Block != kBlock).
template <typename F, int Block>
__global__ void __launch_bounds__(Block) for_kernel_sized(F f, int n) {
  for_site<Block>(f, n);
}

// Launch variants: MinOccupancy > 0 is __launch_bounds__'s second argument, in the platform's own unit (README,
// "Registers on AMD GPUs"): HIP on AMD GPUs, waves per SIMD (amdgpu_waves_per_eu; 5 caps gfx90a at 96 VGPRs); CUDA
// and HIP on NVIDIA GPUs, blocks of kBlock threads per SM (ptxas caps registers at 65536 / (MinOccupancy kBlock)).
// 0, the default, is for_kernel without a second argument (nvcc treats an explicit 1 differently). An autotuner
// may compile several variants of a kernel and pick one per device.
template <typename F, int MinOccupancy>
__global__ void __launch_bounds__(kBlock, MinOccupancy) for_kernel_bounded(F f, int n) {
  for_site<kBlock>(f, n);
}

// The tuner's launch-bounds variants (variants.hpp: launch_bound_of<F>, the block and occupancy of F's group).
template <typename F, int Block, int MinOccupancy>
__global__ void __launch_bounds__(Block, MinOccupancy) for_kernel_sized_bounded(F f, int n) {
  for_site<Block>(f, n);
}

template <typename F, int MinOccupancy>
constexpr auto for_kernel_of() {
  static_assert(MinOccupancy >= 0, "MinOccupancy: 0 (no bound) or the minimum occupancy");
  if constexpr (MinOccupancy == 0)
    return &for_kernel<F>;
  else
    return &for_kernel_bounded<F, MinOccupancy>;
}

// Tree sum of one Sums<N> per thread in shared memory (blocks of Block threads); thread 0 gets the block's total.
template <int N, int Block>
__device__ inline Sums<N> block_sum(Sums<N> s) {
  __shared__ double sh[N][Block];
  for (int k = 0; k < N; ++k) sh[k][threadIdx.x] = s.v[k];
  __syncthreads();
  for (int w = Block / 2; w > 0; w /= 2) {
    if (static_cast<int>(threadIdx.x) < w)
      for (int k = 0; k < N; ++k) sh[k][threadIdx.x] += sh[k][threadIdx.x + w];
    __syncthreads();
  }
  Sums<N> out;
  for (int k = 0; k < N; ++k) out.v[k] = sh[k][0];
  return out;
}

// One block's partial sum of a grid-stride reduction over n sites, blocks of Block threads.
template <int N, int Block, typename F>
__device__ inline void reduce_body(const F& f, int n, Sums<N>* partial) {
  Sums<N> s;
  for (int k = 0; k < N; ++k) s.v[k] = 0;
  for (int i = static_cast<int>(blockIdx.x) * Block + static_cast<int>(threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x) * Block) {
    const Sums<N> v = f(i);
    for (int k = 0; k < N; ++k) s.v[k] += v.v[k];
  }
  const Sums<N> b = block_sum<N, Block>(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = b;
}

template <int N, typename F>
__global__ void __launch_bounds__(kBlock) reduce_kernel(F f, int n, Sums<N>* partial) {
  reduce_body<N, kBlock>(f, n, partial);
}

template <int N>
__global__ void __launch_bounds__(kBlock) finish_kernel(const Sums<N>* partial, int nblocks, Sums<N>* out) {
  Sums<N> s;
  for (int k = 0; k < N; ++k) s.v[k] = 0;
  for (int b = static_cast<int>(threadIdx.x); b < nblocks; b += kBlock)
    for (int k = 0; k < N; ++k) s.v[k] += partial[b].v[k];
  const Sums<N> t = block_sum<N, kBlock>(s);
  if (threadIdx.x == 0) *out = t;
}

// Device scratch for reductions (kMaxReduceBlocks + 1 Sums<4>), allocated once per process.
void* reduction_scratch();
// Copies the finished sums at `device_sums` into a free pinned slot on stream s and records the slot's event.
int post_sums(const void* device_sums, std::size_t bytes, Stream s);
void check_launch(const char* what);
KernelResources query_resources(const void* kernel, int block);

inline gpu::stream_t native(Stream s) { return static_cast<gpu::stream_t>(s.h); }

template <int MinOccupancy = 0, typename F>
void parallel_for(std::int64_t n, const F& f, Stream s = compute_stream()) {
  if (n <= 0) return;
  const int blocks = static_cast<int>((n + kBlock - 1) / kBlock);
  for_kernel_of<F, MinOccupancy>()<<<blocks, kBlock, 0, native(s)>>>(f, static_cast<int>(n));
  check_launch("kernel launch");
}

// Variant V (kTuneBlocks[V] threads per block) of the launch of f over n sites, on stream s.
template <int V, typename F>
void launch_variant(std::int64_t n, const F& f, Stream s) {
  constexpr int block = kTuneBlocks[V];
  const int blocks = static_cast<int>((n + block - 1) / block);
  if constexpr (block == kBlock)
    for_kernel<F><<<blocks, block, 0, native(s)>>>(f, static_cast<int>(n));
  else
    for_kernel_sized<F, block><<<blocks, block, 0, native(s)>>>(f, static_cast<int>(n));
}

template <typename F, std::size_t... V>
void launch_variant_of(std::int64_t n, const F& f, int variant, Stream s, std::index_sequence<V...>) {
  ((variant == static_cast<int>(V) ? launch_variant<static_cast<int>(V)>(n, f, s) : void()), ...);
}

template <typename F>
void parallel_for_variant(std::int64_t n, const F& f, int variant, Stream s = compute_stream()) {
  if (n <= 0) return;
  if constexpr (has_bounded_variant<F>) {
    if (variant == bounded_variant_of<F>) {
      constexpr LaunchBound b = launch_bound_of<F>;
      const int blocks = static_cast<int>((n + b.block - 1) / b.block);
      for_kernel_sized_bounded<F, b.block, b.occupancy><<<blocks, b.block, 0, native(s)>>>(f, static_cast<int>(n));
      check_launch("kernel launch");
      return;
    }
  }
  if (!variant_available<F>(variant)) variant = default_variant();
  launch_variant_of(n, f, variant, s, std::make_index_sequence<kTuneVariants>{});
  check_launch("kernel launch");
}

template <int V, typename F>
const void* variant_kernel() {
  if constexpr (kTuneBlocks[V] == kBlock)
    return reinterpret_cast<const void*>(&for_kernel<F>);
  else
    return reinterpret_cast<const void*>(&for_kernel_sized<F, kTuneBlocks[V]>);
}

template <typename F, std::size_t... V>
const void* variant_kernel_of(int variant, std::index_sequence<V...>) {
  const void* k = nullptr;
  ((variant == static_cast<int>(V) ? (k = variant_kernel<static_cast<int>(V), F>()) : nullptr), ...);
  return k;
}

// The runtime's resources of variant v of the launch of F.
template <typename F>
KernelResources variant_resources(int variant) {
  if constexpr (has_bounded_variant<F>) {
    constexpr LaunchBound b = launch_bound_of<F>;
    if (variant == bounded_variant_of<F>)
      return query_resources(reinterpret_cast<const void*>(&for_kernel_sized_bounded<F, b.block, b.occupancy>),
                             b.block);
  }
  const int v = variant >= 0 && variant < kTuneVariants ? variant : default_variant();
  return query_resources(variant_kernel_of<F>(v, std::make_index_sequence<kTuneVariants>{}), kTuneBlocks[v]);
}

// between() is called once the per-site kernel is launched, before the finishing kernel and the copy (the launcher
// times the two apart).
template <int N, typename F, typename Between>
PendingSums reduce_async(std::int64_t n, const F& f, Stream s, const Between& between) {
  static_assert(N <= 4, "reduction scratch holds Sums<4>");
  PendingSums p;
  p.n = N;
  if (n <= 0) {
    between();
    return p;
  }
  auto* partial = static_cast<Sums<N>*>(reduction_scratch());
  auto* out = partial + kMaxReduceBlocks;
  const std::int64_t want = (n + kBlock - 1) / kBlock;
  const int blocks = static_cast<int>(want < kMaxReduceBlocks ? want : kMaxReduceBlocks);
  reduce_kernel<N, F><<<blocks, kBlock, 0, native(s)>>>(f, static_cast<int>(n), partial);
  check_launch("reduction launch");
  between();
  finish_kernel<N><<<1, kBlock, 0, native(s)>>>(partial, blocks, out);
  check_launch("reduction launch");
  p.slot = post_sums(out, sizeof(Sums<N>), s);
  p.device = out->v;
  return p;
}

template <typename F, int MinOccupancy = 0>
KernelResources resources() {
  return query_resources(reinterpret_cast<const void*>(for_kernel_of<F, MinOccupancy>()), kBlock);
}

template <int N, typename F>
KernelResources reduce_resources() {
  return query_resources(reinterpret_cast<const void*>(&reduce_kernel<N, F>), kBlock);
}
template <int N>
KernelResources finish_resources() {
  return query_resources(reinterpret_cast<const void*>(&finish_kernel<N>), kBlock);
}

}  // namespace emprism::backend
