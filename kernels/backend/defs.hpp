// defs.hpp: the one place that knows which compiler sees the code. EMPRISM_HD marks functions that run
// on host and device (empty on the CPU backend, __host__ __device__ under hipcc/nvcc); EMPRISM_UNROLL asks
// the compiler at hand to unroll the next loop; EMPRISM_AMDGPU is 1 in code compiled for an AMD GPU (the views'
// addressing, kernels/views.hpp), else 0. memory_barrier() stops the compiler, not the hardware: no memory access
// moves across it and no value stored before it is forwarded to a load after it (the load reads memory, as another
// kernel would), so a value that crosses it through memory is opaque: no multiply before it is fused with an add
// after it. It emits no instruction.
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

EMPRISM_HD inline void memory_barrier() { asm volatile("" ::: "memory"); }

}  // namespace emprism
