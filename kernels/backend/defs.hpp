// defs.hpp: the one place that knows which compiler sees the code. EMPRISM_HD marks functions that run
// on host and device (empty on the CPU backend, __host__ __device__ under hipcc/nvcc); EMPRISM_UNROLL asks
// the compiler at hand to unroll the next loop; EMPRISM_AMDGPU is 1 in code compiled for an AMD GPU (the views'
// addressing, kernels/views.hpp), else 0. load_streaming and store_streaming read and write data a kernel touches
// once, where EMPRISM_STREAMING is 1 (below). EMPRISM_CLOVER_DYNAMIC chooses the fp32 operator's clover format.
// EMPRISM_TILED_LAYOUT chooses the fields' layout (below).
// fast_sqrt and fast_rcp are the fp32 functions of the GPUs' special function units (below), refined_sqrt and
// refined_rcp fp64's square root and reciprocal from the hardware's fp64 approximations. copy_async and its companions
// stage data in a block's shared memory (below).
// kChainedProducts chooses how kernels/su3.hpp sums the products of a link and a colour vector (below).
// Who may include: every kernels/ header. No kernel body tests these macros.
#pragma once

#include <math.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EMPRISM_HD __host__ __device__
#else
#define EMPRISM_HD
#endif
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__clang__)
#define EMPRISM_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define EMPRISM_UNROLL  // nvcc's host pass: the host code of kernels is not hot
#else
#define EMPRISM_UNROLL _Pragma("GCC unroll 64")
#endif
#if defined(__AMDGCN__)
#define EMPRISM_AMDGPU 1
#else
#define EMPRISM_AMDGPU 0
#endif

namespace emprism {

// How U v sums its three products per entry (kernels/su3.hpp): true, one chain of multiply-adds, which nvcc fuses
// (sm_90: 190-250 fewer instructions per hopping kernel, the interior kernels' registers unchanged, the fp64 whole
// kernel with links of 18 at 146 against 140, the halo hop kept out by mul<false>); false on AMD GPUs, the sum of the
// three products, which hipcc contracts as well and schedules in fewer VGPRs (gfx90a: the fp32/fp64 operator's interior
// kernels at 124-128 VGPRs, 4 waves per SIMD, against 130-136 and 3 waves as chains).
constexpr bool kChainedProducts = !EMPRISM_AMDGPU;

// EMPRISM_STREAMING is 1 where load_streaming and store_streaming differ from plain accesses (NVIDIA GPUs), else 0:
// the views call them only then (on gfx90a even an inlined plain copy through them raised the fp64 hopping kernels
// from 148 to 179-195 VGPRs).
#if defined(__CUDA_ARCH__)
#define EMPRISM_STREAMING 1
#else
#define EMPRISM_STREAMING 0
#endif

// EMPRISM_CLOVER_DYNAMIC is 1 where the fp32 operator keeps its clover term compressed and solves for A^-1 in the
// kernel (kernels/clover_dynamic.hpp): the CPU backend and NVIDIA GPUs. 0 with HIP on AMD GPUs: there the solve took
// the fp32 hot kernels past their budget on gfx90a (hipcc, 2026-11-24: eo_clover 108, oe_clover 136 VGPRs against 96,
// 4 and 3 waves per SIMD instead of 5) and nothing is measured on an AMD GPU yet; those keep A^-1 stored. The same
// value in the host and the device pass (it follows the backend's definitions, not the compiler's).
#if defined(EMPRISM_BACKEND_HIP) && !defined(EMPRISM_HIP_NVIDIA)
#define EMPRISM_CLOVER_DYNAMIC 0
#else
#define EMPRISM_CLOVER_DYNAMIC 1
#endif

// EMPRISM_TILED_LAYOUT is 1 where the fields' blocked layout groups the sites in tiles (kernels/views.hpp): the CPU
// backend and NVIDIA GPUs. 0 with HIP on AMD GPUs, which keep the untiled rows: there the tiles took the fp64 and
// fp32/fp64 oe_clover kernels past their budgets (hipcc, gfx90a, 2026-11-29: DslashExterior<EpiCloverXpay<double>>
// 132-134 -> 184 VGPRs, the fp32 one 77-81 -> 89-96) and nothing is measured on an AMD GPU yet. The same value in the
// host and the device pass, as EMPRISM_CLOVER_DYNAMIC.
#if defined(EMPRISM_BACKEND_HIP) && !defined(EMPRISM_HIP_NVIDIA)
#define EMPRISM_TILED_LAYOUT 0
#else
#define EMPRISM_TILED_LAYOUT 1
#endif

#if defined(__CUDA_ARCH__)
// The CUDA vector type of a block of 4, 8 or 16 bytes (another size does not compile), for __ldcs and __stcs.
template <int Bytes>
struct CudaWord;
template <>
struct CudaWord<16> {
  using type = uint4;
};
template <>
struct CudaWord<8> {
  using type = uint2;
};
template <>
struct CudaWord<4> {
  using type = unsigned int;
};
#endif

// *p for data a kernel reads once (links, clover): on NVIDIA GPUs ld.global.cs (evict first), so the stream of links
// and clover does not push out of L2 the neighbour spinors that eight sites read at different times (without it the
// hopping kernels read their input spinor about twice from memory at 32^3x64 on an H100: jobs/device/profile.sh).
// Without an L1 line (ld.global{.nc}.L1::no_allocate with an L2 evict-first policy; H200, 2026-12-02, BENCHMARKS.md):
// within the noise, not kept. Elsewhere a plain load (AMD: not measured yet). B is a block of 4, 8 or 16 bytes
// (kernels/views.hpp).
template <typename B>
EMPRISM_HD inline B load_streaming(const B* p) {
#if defined(__CUDA_ARCH__)
  using W = typename CudaWord<sizeof(B)>::type;
  const W v = __ldcs(reinterpret_cast<const W*>(p));
  B b;
  __builtin_memcpy(&b, &v, sizeof(B));
  return b;
#else
  return *p;
#endif
}

// A hint that *p will be read soon: on NVIDIA GPUs prefetch.global.L2 (its line into L2, no register written), nothing
// elsewhere (a kernel's result never depends on it).
EMPRISM_HD inline void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

// *p = b for data no kernel reads back soon (the hot kernels' outputs): st.global.cs on NVIDIA GPUs (evict first, so
// the written lines leave L2 before the spinors the kernel still reads), a plain store elsewhere.
template <typename B>
EMPRISM_HD inline void store_streaming(B* p, const B& b) {
#if defined(__CUDA_ARCH__)
  using W = typename CudaWord<sizeof(B)>::type;
  W v;
  __builtin_memcpy(&v, &b, sizeof(B));
  __stcs(reinterpret_cast<W*>(p), v);
#else
  *p = b;
#endif
}

// The staged hops (kernels/hopping.hpp: apply_staged_hops): copy_async copies a block of 16 bytes from global
// memory into the block's staging buffer in the background, on NVIDIA GPUs by PTX cp.async (keep_in_l1: .ca, the line
// kept in L1 too, for data other threads of the block read; else .cg, L2 only), copy_async_commit closes the thread's
// group of copies and copy_async_wait waits for all of its groups (each thread waits for its own copies: no barrier);
// elsewhere a plain copy, and commit and wait do nothing. stage_lane and stage_width: the thread's index in its block
// and the block's size (elsewhere 0 and 1). stage_buffer<B, N>: the block's buffer of N blocks B, static shared memory
// on NVIDIA GPUs (N B per block of every kernel that calls it), elsewhere a buffer of the calling thread. Elsewhere is
// the CPU, whose kernels run the staged hops as blocks of one thread; AMD GPUs do not stage (not measured).
template <typename B>
EMPRISM_HD inline void copy_async(B* dst, const B* src, bool keep_in_l1) {
  static_assert(sizeof(B) == 16, "copy_async moves blocks of 16 bytes");
#if defined(__CUDA_ARCH__)
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if (keep_in_l1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
#else
  (void)keep_in_l1;
  *dst = *src;
#endif
}
EMPRISM_HD inline void copy_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
EMPRISM_HD inline void copy_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}
EMPRISM_HD inline int stage_lane() {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(threadIdx.x);
#else
  return 0;
#endif
}
EMPRISM_HD inline int stage_width() {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(blockDim.x);
#else
  return 1;
#endif
}
#if defined(__CUDA_ARCH__)
template <typename B, int N>
__device__ inline B* stage_buffer() {
  __shared__ B buf[N];
  return buf;
}
#else
template <typename B, int N>
inline B* stage_buffer() {
  static thread_local B buf[N];
  return buf;
}
#endif

// sqrt(x) (0 for x <= 1e-36) and 1 / x in fp32, fast where compiled for a GPU: on NVIDIA GPUs x y with y from PTX
// rsqrt.approx.ftz.f32, and rcp.approx.ftz.f32 (the special function units' approximations: relative error 2^-22.9
// and 1 ulp at most by PTX's specification; flushing subnormal arguments and results to 0 spares the instructions
// that rsqrtf and __fdividef spend on them: H200, 2026-11-28, fp32 links of 8 +0.5 to +2 points of the peak), on AMD
// GPUs x rsqrtf(x) and __fdividef(1, x), on the host sqrtf and 1.0f / x. The cut at 1e-36 keeps subnormal x away
// from the flushed reciprocal square root (0 x inf); it costs an absolute error below 1e-18.
// Who may call: code whose result tolerates a relative error of a few ulps (unpacking links of 8 reals:
// kernels/link_format.hpp; the fp32 clover's LDL factors: kernels/clover_dynamic.hpp), with 2^-126 <= x <= 2^126 for
// fast_rcp (a normal result).
EMPRISM_HD inline float fast_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return x > 1e-36f ? x * y : 0.0f;
#elif defined(__HIP_DEVICE_COMPILE__)
  return x > 1e-36f ? x * rsqrtf(x) : 0.0f;
#else
  return x > 1e-36f ? sqrtf(x) : 0.0f;
#endif
}
EMPRISM_HD inline float fast_rcp(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#elif defined(__HIP_DEVICE_COMPILE__)
  return __fdividef(1.0f, x);
#else
  return 1.0f / x;
#endif
}

// x rounded to the nearest integer, ties to even (|x| < 2^31): on NVIDIA GPUs __float2int_rn (one F2I on sm_90),
// elsewhere rintf in the default rounding mode (to nearest; AMD GPUs: v_rndne_f32 and the conversion): the same values
// everywhere. Who may call: the half format's quantiser (kernels/half.hpp).
EMPRISM_HD inline int round_to_int(float x) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(x);
#else
  return static_cast<int>(rintf(x));
#endif
}

// sqrt(x) (0 for x <= 1e-36) and 1 / x in fp64, where compiled for an NVIDIA GPU from the hardware's approximate
// reciprocal square root and reciprocal (PTX rsqrt.approx.ftz.f64 and rcp.approx.ftz.f64: relative error 2^-20.0 and
// 2^-19.9 at most over 2.7e8 arguments on an H200, 2026-11-28) refined by Newton steps in fp64: for y ~ 1 / sqrt(x)
// one step (~2^-39), s = x y and one Heron step s + y (x - s^2) / 2; for y ~ 1 / x one third-order step
// y (1 + e + e^2), e = 1 - x y (~2^-59). Both within 2^-53 relative, about 1 ulp against IEEE's half (host emulation
// with the approximations off by up to 2^-19, 2e7 arguments: 1.00 and 1.06 x 2^-53; refined_rcp on the H200 above:
// at most 2 x 2^-53 from the IEEE quotient; refined_sqrt there only through the operator's tests against the CPU
// reference, tests/gpu/test_gpu_reconstruct.cpp), without the slow paths of IEEE sqrt and division (sm_90: the fp64
// hopping kernels of links of 8 reals 10-13% fewer instructions; H200: 6 points of the peak more, BENCHMARKS.md; the
// PTX approximations instead of fp32's rsqrtf and __fdividef with their conversions: 5% fewer again, +0.5 points).
// Elsewhere sqrt and division (AMD GPUs: not measured yet).
// Who may call: code whose x is a normal double for refined_rcp (measured over 1e-12 <= x <= 2^121), and x <= 1 for
// refined_sqrt (below 1e-36 it gives 0, an absolute error below 1e-18): the unpacking of fp64 links of 8 reals
// (kernels/link_format.hpp: its divisor N stays away from 0, as the set-up's round-trip check refuses links near
// the format's singular point, and its phases' 1 + t^2 below 2^121).
EMPRISM_HD inline double refined_sqrt(double x) {
#if defined(__CUDA_ARCH__)
  if (!(x > 1e-36)) return 0.0;
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  y = fma(y, fma(-0.5 * x, y * y, 0.5), y);
  const double s = x * y;
  return fma(0.5 * y, fma(-s, s, x), s);
#else
  return x > 0.0 ? sqrt(x) : 0.0;
#endif
}
EMPRISM_HD inline double refined_rcp(double x) {
#if defined(__CUDA_ARCH__)
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(-x, y, 1.0);
  return fma(y, fma(e, e, e), y);
#else
  return 1.0 / x;
#endif
}

}  // namespace emprism
