// defs.hpp: the one place that knows which compiler sees the code. EMPRISM_HD marks functions that run
// on host and device (empty on the CPU backend, __host__ __device__ under hipcc/nvcc); EMPRISM_UNROLL asks
// the compiler at hand to unroll the next loop; EMPRISM_AMDGPU is 1 in code compiled for an AMD GPU (the views'
// addressing, kernels/views.hpp), else 0. load_streaming(p) reads *p marked as read once (see below).
// Who may include: every kernels/ header. No kernel body tests these macros.
#pragma once

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

// *p for data a kernel reads once (links, clover): on NVIDIA GPUs ld.global.cs (evict first), so the stream of links
// and clover does not push out of L2 the neighbour spinors that eight sites read at different times (without it the
// hopping kernels read their input spinor about twice from memory at 32^3x64 on an H100: jobs/device/profile.sh).
// Elsewhere a plain load (AMD: not measured yet). B is a block of 4, 8 or 16 bytes (kernels/views.hpp).
template <typename B>
EMPRISM_HD inline B load_streaming(const B* p) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(B) == 16 || sizeof(B) == 8 || sizeof(B) == 4, "a block of 4, 8 or 16 bytes");
  B b;
  if constexpr (sizeof(B) == 16) {
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
    __builtin_memcpy(&b, &v, 16);
  } else if constexpr (sizeof(B) == 8) {
    const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
    __builtin_memcpy(&b, &v, 8);
  } else {
    const unsigned int v = __ldcs(reinterpret_cast<const unsigned int*>(p));
    __builtin_memcpy(&b, &v, 4);
  }
  return b;
#else
  return *p;
#endif
}

// *p = b for data no kernel reads back soon (the hot kernels' outputs): st.global.cs on NVIDIA GPUs (evict first, so
// the written lines leave L2 before the spinors the kernel still reads), a plain store elsewhere.
template <typename B>
EMPRISM_HD inline void store_streaming(B* p, const B& b) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(B) == 16 || sizeof(B) == 8 || sizeof(B) == 4, "a block of 4, 8 or 16 bytes");
  if constexpr (sizeof(B) == 16) {
    uint4 v;
    __builtin_memcpy(&v, &b, 16);
    __stcs(reinterpret_cast<uint4*>(p), v);
  } else if constexpr (sizeof(B) == 8) {
    uint2 v;
    __builtin_memcpy(&v, &b, 8);
    __stcs(reinterpret_cast<uint2*>(p), v);
  } else {
    unsigned int v;
    __builtin_memcpy(&v, &b, 4);
    __stcs(reinterpret_cast<unsigned int*>(p), v);
  }
#else
  *p = b;
#endif
}

}  // namespace emprism
