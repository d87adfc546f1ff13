// gpu_aware.hpp: whether the MPI library accepts device pointers (GPU-aware MPI). comm.gpu_aware = "auto"
// asks: Open MPI through MPIX_Query_cuda_support / MPIX_Query_rocm_support where mpi-ext.h has them, Cray MPICH
// through MPICH_GPU_SUPPORT_ENABLED=1 in the environment; anything else counts as not GPU-aware (staging
// through pinned host memory, always correct). Who may call: anyone after MPI_Init.
#pragma once

namespace emprism {

bool mpi_is_gpu_aware();

}  // namespace emprism
