// gpu_aware.cpp: the GPU-aware MPI query (see gpu_aware.hpp).
#include "comm/gpu_aware.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <cstdlib>
#include <cstring>

namespace emprism {

bool mpi_is_gpu_aware() {
  const char* cray = std::getenv("MPICH_GPU_SUPPORT_ENABLED");
  if (cray != nullptr && std::strcmp(cray, "1") == 0) return true;
#if (defined(EMPRISM_BACKEND_CUDA) || defined(EMPRISM_HIP_NVIDIA)) && defined(MPIX_CUDA_AWARE_SUPPORT) && \
    MPIX_CUDA_AWARE_SUPPORT  // HIP on NVIDIA GPUs: device pointers are CUDA's
  return MPIX_Query_cuda_support() == 1;
#elif defined(EMPRISM_BACKEND_HIP) && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  return MPIX_Query_rocm_support() == 1;
#else
  return false;
#endif
}

}  // namespace emprism
