// launch_groups.hpp: the groups of tuned kernels that get a launch-bounds variant (a register cap) from the tuner. A
// functor names its group in a static constexpr int kLaunchBound (kernels/wilson_clover.hpp); the build gives each
// group its bound (CMake's EMPRISM_TUNE_BOUNDED, EMPRISM_TUNE_BOUNDED_HALF and EMPRISM_TUNE_BOUNDED_F32D,
// kernels/backend/variants.hpp), or none.
// Who may include: kernels/ headers that declare tuned functors, and kernels/backend/variants.hpp.
#pragma once

namespace emprism {

constexpr int kBoundNone = -1;  // no launch-bounds variant
constexpr int kBoundFp32 = 0;   // the fp32 operator's hopping kernels
constexpr int kBoundHalf = 1;   // the half operator's hopping kernels
constexpr int kBoundF32d = 2;   // the fp32/fp64 operator's staged interior kernels (links of 12)
constexpr int kBoundGroups = 3;

}  // namespace emprism
