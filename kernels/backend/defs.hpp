// defs.hpp: the one place that knows which compiler sees the code. EMPRISM_HD marks functions that run
// on host and device (empty on the CPU backend, __host__ __device__ under hipcc/nvcc); EMPRISM_UNROLL asks
// the compiler at hand to unroll the next loop; EMPRISM_AMDGPU is 1 in code compiled for an AMD GPU (the views'
// addressing, kernels/views.hpp), else 0. value_barrier(v) is an empty instruction that the device compiler must
// assume reads and rewrites v: v is rounded and held in a register there, and no multiply before it is fused with an
// add after it (what a store and a reload in another kernel do), at no cost in instructions; a no-op on the host.
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

// Device code: an empty inline asm with v as operand in and out ("f"/"d": NVIDIA registers of 32/64 bits, "v": an
// AMD vector register or pair).
#if defined(__CUDA_ARCH__)
#define EMPRISM_VALUE_BARRIER(constraint, v) asm("" : "+" constraint(v))
#elif defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN__)
#define EMPRISM_VALUE_BARRIER(constraint, v) asm("" : "+v"(v))
#else
#define EMPRISM_VALUE_BARRIER(constraint, v) (void)(v)
#endif

namespace emprism {

EMPRISM_HD inline void value_barrier(float& v) { EMPRISM_VALUE_BARRIER("f", v); }
EMPRISM_HD inline void value_barrier(double& v) { EMPRISM_VALUE_BARRIER("d", v); }

}  // namespace emprism
