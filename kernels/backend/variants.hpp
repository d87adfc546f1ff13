// variants.hpp: the launch variants a tuned launch may choose among (kernels/tune.hpp), in plain C++ so that host
// code (the run's Tuner) and the backends see the same list. GPU backends: kTuneBlocks[i] threads per block, no
// occupancy bound; kBlock (EMPRISM_GPU_BLOCK, the untuned launches' block) is the default and must be in the list.
// The list is the CMake cache variable EMPRISM_TUNE_BLOCKS (default 64;128;256;512; passed as the macro
// EMPRISM_TUNE_BLOCKS_MASK, the sum of the sizes): each block size besides kBlock compiles the hot kernels once more
// (compile time), and the list 256 alone turns tuning off.
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
#ifndef EMPRISM_TUNE_BLOCKS_MASK
#define EMPRISM_TUNE_BLOCKS_MASK (64 | 128 | 256 | 512)
#endif
constexpr int kBlock = EMPRISM_GPU_BLOCK;
struct BlockList {
  int n = 0;
  int block[6] = {};
};
constexpr BlockList tune_blocks(int mask) {
  BlockList l;
  for (int b = 32; b <= 1024; b *= 2)
    if ((mask & b) != 0) l.block[l.n++] = b;
  return l;
}
constexpr BlockList kTuneBlockList = tune_blocks(EMPRISM_TUNE_BLOCKS_MASK);
constexpr const int* kTuneBlocks = kTuneBlockList.block;
constexpr int kTuneVariants = kTuneBlockList.n;
constexpr int default_variant() {
  for (int i = 0; i < kTuneVariants; ++i)
    if (kTuneBlocks[i] == kBlock) return i;
  return -1;
}
static_assert(default_variant() >= 0, "EMPRISM_GPU_BLOCK must be one of EMPRISM_TUNE_BLOCKS");

inline std::vector<LaunchVariant> launch_variants() {
  std::vector<LaunchVariant> v;
  for (int i = 0; i < kTuneVariants; ++i) v.push_back(LaunchVariant{kTuneBlocks[i], 0});
  return v;
}
#else
constexpr int default_variant() { return 0; }
inline std::vector<LaunchVariant> launch_variants() { return {LaunchVariant{0, 0}}; }
#endif

}  // namespace emprism::backend
