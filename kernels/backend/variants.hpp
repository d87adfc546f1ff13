// variants.hpp: the launch variants a tuned launch may choose among (kernels/tune.hpp), in plain C++ so that host
// code (the run's Tuner) and the backends see the same list. GPU backends: kTuneBlocks[i] threads per block, no
// occupancy bound; kBlock (EMPRISM_GPU_BLOCK, the untuned launches' block) is the default and must be in the list.
// CPU backend: its OpenMP loop is the one variant ("host").
// Who may include: kernels/backend/{cpu,gpu}.hpp and the code that builds the run's Tuner.
#pragma once

#include <vector>

#include "kernels/tune.hpp"

namespace emprism::backend {

#if defined(EMPRISM_BACKEND_HIP) || defined(EMPRISM_BACKEND_CUDA)
#ifndef EMPRISM_GPU_BLOCK
#define EMPRISM_GPU_BLOCK 256
#endif
constexpr int kBlock = EMPRISM_GPU_BLOCK;
constexpr int kTuneBlocks[] = {64, 128, 256, 512};
constexpr int kTuneVariants = 4;
constexpr int default_variant() {
  for (int i = 0; i < kTuneVariants; ++i)
    if (kTuneBlocks[i] == kBlock) return i;
  return -1;
}
static_assert(default_variant() >= 0, "EMPRISM_GPU_BLOCK must be one of the tuned block sizes 64, 128, 256, 512");

inline std::vector<LaunchVariant> launch_variants() {
  std::vector<LaunchVariant> v;
  for (int b : kTuneBlocks) v.push_back(LaunchVariant{b, 0});
  return v;
}
#else
constexpr int default_variant() { return 0; }
inline std::vector<LaunchVariant> launch_variants() { return {LaunchVariant{0, 0}}; }
#endif

}  // namespace emprism::backend
