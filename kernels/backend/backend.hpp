// backend.hpp: selects the launch backend chosen by the build (EMPRISM_BACKEND in CMake): the OpenMP loop
// (cpu.hpp) or the generic GPU kernel (gpu.hpp, HIP or CUDA). Both provide parallel_for, parallel_reduce,
// timed_for, timed_reduce and resources<F>() over the same functors. Who may include: kernels/launch.hpp and
// the few translation units that launch kernels.
#pragma once

#if defined(EMPRISM_BACKEND_HIP) || defined(EMPRISM_BACKEND_CUDA)
#include "kernels/backend/gpu.hpp"
#else
#include "kernels/backend/cpu.hpp"
#endif
