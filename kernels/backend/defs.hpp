// defs.hpp: the one place that knows which compiler sees the code. EMPRISM_HD marks functions that run
// on host and device (empty on the CPU backend, __host__ __device__ under hipcc/nvcc).
// Who may include: every kernels/ header. No kernel body tests these macros.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EMPRISM_HD __host__ __device__
#else
#define EMPRISM_HD
#endif
