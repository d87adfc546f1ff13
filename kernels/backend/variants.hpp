// variants.hpp: the launch variants a tuned launch may choose among (kernels/tune.hpp), in plain C++ so that host
// code (the run's Tuner) and the backends see the same list. GPU backends: kTuneBlocks[i] threads per block, no
// occupancy bound; kBlock (EMPRISM_GPU_BLOCK, the untuned launches' block) is the default and must be in the list.
// The list is the CMake cache variable EMPRISM_TUNE_BLOCKS (default 64;128;256;512; passed as the macro
// EMPRISM_TUNE_BLOCKS_MASK, the sum of the sizes): each block size besides kBlock compiles the hot kernels once more
// (compile time), and the list 256 alone turns tuning off.
// One launch-bounds variant may follow the block sizes (the CMake cache variable EMPRISM_TUNE_BOUNDED,
// "block/occupancy", passed as EMPRISM_TUNE_BOUNDED_BLOCK and EMPRISM_TUNE_BOUNDED_OCCUPANCY; empty, block 0: none):
// __launch_bounds__(block, occupancy) in the platform's unit (gpu.hpp), a register cap. It is compiled only for the
// functors that ask for it (a static member kBoundedVariant = true: the fp32 hopping kernels,
// kernels/wilson_clover.hpp), so it is a candidate of their keys only (variant_available); the nvcc builds' default
// 128/5 caps sm_90 at 96 registers (5 blocks of 128, 640 threads per SM, against 2 blocks of 256 for fp32 oe_clover's
// 128 registers unbounded). CPU backend: its OpenMP loop is the one variant ("host"). Who may include:
// kernels/backend/{cpu,gpu}.hpp and the code that builds the run's Tuner.
#pragma once

#include <type_traits>
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
#ifndef EMPRISM_TUNE_BOUNDED_BLOCK
#define EMPRISM_TUNE_BOUNDED_BLOCK 0
#define EMPRISM_TUNE_BOUNDED_OCCUPANCY 0
#endif
constexpr BlockList kTuneBlockList = tune_blocks(EMPRISM_TUNE_BLOCKS_MASK);
constexpr const int* kTuneBlocks = kTuneBlockList.block;
constexpr int kTuneVariants = kTuneBlockList.n;
constexpr int default_variant() {
  for (int i = 0; i < kTuneVariants; ++i)
    if (kTuneBlocks[i] == kBlock) return i;
  return -1;
}
static_assert(default_variant() >= 0, "EMPRISM_GPU_BLOCK must be one of EMPRISM_TUNE_BLOCKS");
constexpr int kBoundedBlock = EMPRISM_TUNE_BOUNDED_BLOCK;
constexpr int kBoundedOccupancy = EMPRISM_TUNE_BOUNDED_OCCUPANCY;
constexpr bool kHaveBounded = kBoundedBlock > 0;
constexpr int kBoundedVariant = kTuneVariants;  // its index, after the block sizes
static_assert(!kHaveBounded || kBoundedOccupancy > 0, "EMPRISM_TUNE_BOUNDED: an occupancy of at least 1");

// F asks for the launch-bounds variant (a static constexpr bool kBoundedVariant = true).
template <typename F, typename = void>
struct AsksBounded : std::false_type {};
template <typename F>
struct AsksBounded<F, std::void_t<decltype(F::kBoundedVariant)>> : std::bool_constant<F::kBoundedVariant> {};
template <typename F>
constexpr bool has_bounded_variant = kHaveBounded&& AsksBounded<F>::value;

inline std::vector<LaunchVariant> launch_variants() {
  std::vector<LaunchVariant> v;
  for (int i = 0; i < kTuneVariants; ++i) v.push_back(LaunchVariant{kTuneBlocks[i], 0});
  if (kHaveBounded) v.push_back(LaunchVariant{kBoundedBlock, kBoundedOccupancy});
  return v;
}
// Whether candidate i of launch_variants() exists for the launch of F.
template <typename F>
bool variant_available(int i) {
  return (i >= 0 && i < kTuneVariants) || (i == kBoundedVariant && has_bounded_variant<F>);
}
#else
constexpr int default_variant() { return 0; }
inline std::vector<LaunchVariant> launch_variants() { return {LaunchVariant{0, 0}}; }
template <typename F>
bool variant_available(int i) {
  return i == 0;
}
#endif

}  // namespace emprism::backend
