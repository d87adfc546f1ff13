#!/usr/bin/env bash
# check_gpu_builds.sh: builds the GPU backends on a machine without a GPU (CI), prints each kernel's resources as the
# compilers report them and fails when a hot kernel spills or exceeds its register budget (kernels/register_budgets.txt,
# checked by jobs/check_registers.py):
#   hip         HIP with hipcc for gfx90a (MI250X GCD): -Rpass-analysis=kernel-resource-usage (VGPRs, AGPRs, SGPRs,
#               scratch, occupancy); the budgets' hip lines
#   cuda        CUDA with nvcc for sm_90 (H100/H200): -Xptxas -v (registers, spill stores/loads); the cuda lines.
#               The default block only (EMPRISM_TUNE_BLOCKS=256) and the launch-bounds variants: the kernels the
#               budgets name (for_kernel and for_kernel_sized_bounded); the other block sizes' launch template is
#               compiled by hip-nvidia's nvcc and hip's hipcc
#   hip-nvidia  HIP on its NVIDIA platform: the HIP source with nvcc and HIP's own headers, taken from the
#               libamdhip64-dev package unpacked with dpkg -x into build-hip-nvidia/hip-prefix (as on a GPU machine
#               without HIP, jobs/device/hip_nvidia.sh), linked against cudart. Device code as PTX for compute_90 only
#               (CMAKE_CUDA_ARCHITECTURES 90-virtual): ptxas, a third of nvcc's time, would repeat the cuda build's
#               machine code and budgets for the same kernels, so this build checks compiling and linking, no budgets.
#               The tuner's block sizes 128 and 256 only (EMPRISM_TUNE_BLOCKS; the default adds 64 and 512): each
#               launch template (the default block, another block size, the launch-bounds variants) is compiled
#               for every hot kernel, with half the copies (350 -> 250 s on a 2-core machine, 2026-12-03)
# Each builds the program and what ctest -L gpu runs (emprism-mpi, emprism_gpu_tests, test_distributed_mpi), the
# targets with device code; the other tests are host code that the CPU build compiles with g++ (jobs/setup.sh) and
# jobs/fuzz.sh with clang, and that a GPU machine's full build (jobs/device/common.sh) compiles with its backend.
# It compiles and links (nothing runs: no GPU). A build failure or a broken budget exits non-zero.
# Usage: jobs/check_gpu_builds.sh [hip|cuda|hip-nvidia|all]   (default all = the three). Needs: hipcc and
# libamdhip64-dev (Debian/Ubuntu packages "hipcc libamdhip64-dev"; installed here if missing; hip-nvidia takes the
# .deb from .debs/, apt's cache or apt-get download) and nvcc (CUDA_HOME, default /usr/local/cuda).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
what=${1:-all}
jobs=$(nproc 2> /dev/null || echo 2)
cuda_home=${CUDA_HOME:-/usr/local/cuda}
case $what in hip | cuda | hip-nvidia | all) ;; *)
  echo "usage: jobs/check_gpu_builds.sh [hip|cuda|hip-nvidia|all]" >&2
  exit 2
  ;;
esac
want() { [ "$what" = "$1" ] || [ "$what" = all ]; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# The report of one build, then the budgets of its backend (the kernel translation units are touched so that they
# compile, and print their report, even in a reused build directory; not for kind none, which has no report).
# kind: hip, cuda (the budgets' lines to check) or none (no budgets: PTX only).
gpu_targets=(emprism-mpi emprism_gpu_tests test_distributed_mpi)
build_and_check() {
  local kind=$1 dir=$2
  if [ "$kind" != none ]; then
    touch "$repo"/src/physics/dirac_impl.hpp "$repo"/src/physics/blas.cpp "$repo"/src/physics/peak.cpp
  fi
  cmake --build "$dir" -j "$jobs" --target "${gpu_targets[@]}" > "$dir.log" 2>&1 || { tail -60 "$dir.log"; exit 1; }
  if [ "$kind" = none ]; then
    echo "check_gpu_builds: $(basename "$dir") build OK (PTX only: no resources, no budgets)"
    return
  fi
  echo "check_gpu_builds: $(basename "$dir") build OK; per-kernel resources and register budgets:"
  python3 "$here/check_registers.py" "$kind" "$dir.log"
}

if want hip; then
  if ! command -v hipcc > /dev/null; then
    echo "check_gpu_builds: installing hipcc libamdhip64-dev"
    as_root apt-get update -q > /dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q hipcc libamdhip64-dev > /dev/null
  fi
  echo "check_gpu_builds: HIP backend, hipcc, gfx90a"
  cmake -S "$repo" -B "$repo/build-hip" -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=HIP -DCMAKE_CXX_COMPILER=hipcc \
    -DEMPRISM_HIP_ARCH=gfx90a -DEMPRISM_RESOURCE_REPORT=ON > "$repo/build-hip.cmake.log"
  build_and_check hip "$repo/build-hip"
fi

if want cuda || want hip-nvidia; then
  if [ ! -x "$cuda_home/bin/nvcc" ]; then
    echo "check_gpu_builds: no nvcc at $cuda_home/bin/nvcc (set CUDA_HOME)" >&2
    exit 1
  fi
fi

if want cuda; then
  echo "check_gpu_builds: CUDA backend, nvcc, sm_90"
  cmake -S "$repo" -B "$repo/build-cuda" -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=CUDA \
    -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 -DEMPRISM_RESOURCE_REPORT=ON \
    -DEMPRISM_TUNE_BLOCKS=256 > "$repo/build-cuda.cmake.log"
  build_and_check cuda "$repo/build-cuda"
fi

if want hip-nvidia; then
  dir=$repo/build-hip-nvidia
  prefix=$dir/hip-prefix
  if [ ! -f "$prefix/usr/include/hip/nvidia_detail/nvidia_hip_runtime.h" ]; then
    shopt -s nullglob
    debs=("$repo"/.debs/libamdhip64-dev_*.deb /var/cache/apt/archives/libamdhip64-dev_*.deb)
    if [ ${#debs[@]} -eq 0 ]; then
      mkdir -p "$dir/debs"
      (cd "$dir/debs" && apt-get download libamdhip64-dev > /dev/null)
      debs=("$dir"/debs/libamdhip64-dev_*.deb)
    fi
    shopt -u nullglob
    mkdir -p "$prefix"
    dpkg -x "${debs[0]}" "$prefix"
  fi
  echo "check_gpu_builds: HIP backend on the NVIDIA platform, nvcc, compute_90 (PTX), HIP headers unpacked in $prefix"
  cmake -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=HIP -DEMPRISM_HIP_PLATFORM=nvidia \
    -DEMPRISM_HIP_INCLUDE_DIR="$prefix/usr/include" -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES=90-virtual -DEMPRISM_TUNE_BLOCKS="128;256" > "$dir.cmake.log"
  build_and_check none "$dir"
fi
