// variants.hpp: the launch variants a tuned launch may choose among (kernels/tune.hpp), in plain C++ so that host
// code (the run's Tuner) and the backends see the same list. GPU backends: kTuneBlocks[i] threads per block, no
// occupancy bound; kBlock (EMPRISM_GPU_BLOCK, the untuned launches' block) is the default and must be in the list.
// The list is the CMake cache variable EMPRISM_TUNE_BLOCKS (default 64;128;256;512; passed as the macro
// EMPRISM_TUNE_BLOCKS_MASK, the sum of the sizes): each block size besides kBlock compiles the hot kernels once more
// (compile time), and the list 256 alone turns tuning off.
// Launch-bounds variants may follow the block sizes, one per group of kernels, each "block/occupancy" from CMake
// (empty, block 0: none): EMPRISM_TUNE_BOUNDED for the fp32 operator's hopping kernels (kBoundFp32; passed as
// EMPRISM_TUNE_BOUNDED_BLOCK and EMPRISM_TUNE_BOUNDED_OCCUPANCY), EMPRISM_TUNE_BOUNDED_HALF for the half operator's
// (kBoundHalf; EMPRISM_TUNE_BOUNDED_HALF_BLOCK and _OCCUPANCY), EMPRISM_TUNE_BOUNDED_F32D for the fp32/fp64 operator's
// staged interior kernels (kBoundF32d; EMPRISM_TUNE_BOUNDED_F32D_BLOCK and _OCCUPANCY). Each is
// __launch_bounds__(block, occupancy) in the platform's unit (gpu.hpp), a register cap, compiled only for the functors
// of its group (a static member kLaunchBound, kernels/wilson_clover.hpp), so it is a candidate of their keys only
// (variant_available); no two groups may have the same bound (a cached choice names the bound). The nvcc builds'
// defaults cap sm_90 at 72 registers for fp32 (128/7: 28 warps per SM against 24 at the fp32 kernels' 80 unbounded;
// 128/5, the default until 2026-11-29, capped at 96 and left them at 80), at 64 for half (128/8: 32 warps per SM
// against 28 at the half kernels' 72) and at 128 for fp32/fp64 (128/4: staged oe_clover_f32d takes 130 unbounded, 12
// warps per SM instead of 16). CPU backend: its OpenMP loop is the one variant ("host"). Who may include:
// kernels/backend/{cpu,gpu}.hpp and the code that builds the run's Tuner.
#pragma once

#include <type_traits>
#include <vector>

#include "kernels/launch_groups.hpp"
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
#ifndef EMPRISM_TUNE_BOUNDED_HALF_BLOCK
#define EMPRISM_TUNE_BOUNDED_HALF_BLOCK 0
#define EMPRISM_TUNE_BOUNDED_HALF_OCCUPANCY 0
#endif
#ifndef EMPRISM_TUNE_BOUNDED_F32D_BLOCK
#define EMPRISM_TUNE_BOUNDED_F32D_BLOCK 0
#define EMPRISM_TUNE_BOUNDED_F32D_OCCUPANCY 0
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
// The launch-bounds variants' bounds, per group (kernels/launch_groups.hpp: a functor's kLaunchBound); block 0: none
// in this build.
struct LaunchBound {
  int block = 0;
  int occupancy = 0;
};
constexpr LaunchBound kLaunchBounds[kBoundGroups] = {
    {EMPRISM_TUNE_BOUNDED_BLOCK, EMPRISM_TUNE_BOUNDED_OCCUPANCY},
    {EMPRISM_TUNE_BOUNDED_HALF_BLOCK, EMPRISM_TUNE_BOUNDED_HALF_OCCUPANCY},
    {EMPRISM_TUNE_BOUNDED_F32D_BLOCK, EMPRISM_TUNE_BOUNDED_F32D_OCCUPANCY}};
// Every group's bound has an occupancy of at least 1 (or is none), and no two are the same.
constexpr bool launch_bounds_valid() {
  for (int g = 0; g < kBoundGroups; ++g) {
    if (kLaunchBounds[g].block == 0) continue;
    if (kLaunchBounds[g].occupancy < 1) return false;
    for (int k = 0; k < g; ++k)
      if (kLaunchBounds[k].block == kLaunchBounds[g].block && kLaunchBounds[k].occupancy == kLaunchBounds[g].occupancy)
        return false;
  }
  return true;
}
static_assert(launch_bounds_valid(),
              "EMPRISM_TUNE_BOUNDED, EMPRISM_TUNE_BOUNDED_HALF and EMPRISM_TUNE_BOUNDED_F32D: "
              "each an occupancy of at least 1, no two the same");
// The candidate index of group g's variant: after the block sizes and the groups before it that this build has.
constexpr int bounded_variant_index(int g) {
  int i = kTuneVariants;
  for (int k = 0; k < g; ++k)
    if (kLaunchBounds[k].block > 0) ++i;
  return i;
}

// F's group (a static constexpr int kLaunchBound), kBoundNone without one.
template <typename F, typename = void>
struct LaunchBoundOf : std::integral_constant<int, kBoundNone> {};
template <typename F>
struct LaunchBoundOf<F, std::void_t<decltype(F::kLaunchBound)>> : std::integral_constant<int, F::kLaunchBound> {};
template <typename F>
constexpr int launch_bound_group = LaunchBoundOf<F>::value;
constexpr bool group_has_bound(int g) { return g >= 0 && g < kBoundGroups && kLaunchBounds[g].block > 0; }
template <typename F>
constexpr bool has_bounded_variant = group_has_bound(launch_bound_group<F>);
// F's bound and candidate index (meaningful where has_bounded_variant<F>).
template <typename F>
constexpr LaunchBound launch_bound_of =
    has_bounded_variant<F> ? kLaunchBounds[launch_bound_group<F>] : LaunchBound{1, 1};
template <typename F>
constexpr int bounded_variant_of = has_bounded_variant<F> ? bounded_variant_index(launch_bound_group<F>) : -1;

inline std::vector<LaunchVariant> launch_variants() {
  std::vector<LaunchVariant> v;
  for (int i = 0; i < kTuneVariants; ++i) v.push_back(LaunchVariant{kTuneBlocks[i], 0});
  for (const LaunchBound& b : kLaunchBounds)
    if (b.block > 0) v.push_back(LaunchVariant{b.block, b.occupancy});
  return v;
}
// Whether candidate i of launch_variants() exists for the launch of F.
template <typename F>
bool variant_available(int i) {
  return (i >= 0 && i < kTuneVariants) || (has_bounded_variant<F> && i == bounded_variant_of<F>);
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
