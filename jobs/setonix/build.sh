#!/usr/bin/env bash
# jobs/setonix/build.sh: build EmPRiSM-MPI's HIP backend for Setonix's MI250X GCDs (gfx90a) with the Cray modules,
# on a Setonix login node (or in a job), into build-hip/. Then: sbatch jobs/setonix/run.sbatch (see jobs/README.md).
#
#   jobs/setonix/build.sh
#
# Loads the modules of jobs/setonix/env.sh (PrgEnv-gnu craype-accel-amd-gfx90a rocm cray-hdf5-parallel), then
#   cmake -S <repo> -B <build dir> -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=HIP -DEMPRISM_HIP_ARCH=gfx90a
#         -DCMAKE_CXX_COMPILER=hipcc -DCMAKE_C_COMPILER=cc  + Cray MPICH for hipcc (below) + CMAKE_PREFIX_PATH
#   cmake --build <build dir> -j <jobs> --target emprism-mpi
# hipcc is not an MPI wrapper: MPI comes from the cray-mpich module (MPICH_DIR) given to CMake's FindMPI by hand,
# with the GPU Transport Layer library (libmpi_gtl_hsa, PE_MPICH_GTL_DIR_amd_gfx90a / PE_MPICH_GTL_LIBS_amd_gfx90a)
# that GPU-aware Cray MPICH needs at run time when MPICH_GPU_SUPPORT_ENABLED=1. Parallel HDF5 comes from
# cray-hdf5-parallel (HDF5_DIR). The header-only dependencies (toml++, CLI11, Random123, spdlog with fmt) are not
# Cray modules: install them under a prefix and list it in EMPRISM_DEPS_PREFIX.
# EMPRISM_SETONIX_COMPILER=CC uses the Cray wrapper CC instead (our CMakeLists.txt accepts a compiler path ending
# in hipcc, clang or CC): every file compiled with -x hip, the wrappers adding MPI, GTL and HDF5 themselves.
#
# Environment (all optional):
#   EMPRISM_BUILD_DIR         build directory, absolute or relative to the repository root (default build-hip;
#                             build-cpu with EMPRISM_SETONIX_DRYRUN=1)
#   EMPRISM_DEPS_PREFIX       prefix(es), ':'-separated, of toml++, CLI11, Random123, spdlog (CMAKE_PREFIX_PATH)
#   EMPRISM_SETONIX_COMPILER  hipcc (default) or CC
#   EMPRISM_SETONIX_MODULES   the modules to load (default in env.sh)
#   EMPRISM_HIP_ARCH          offload architecture (default gfx90a)
#   EMPRISM_BUILD_JOBS        parallel compile jobs (default 16)
#   EMPRISM_CMAKE_ARGS        extra cmake arguments, split on spaces
#   EMPRISM_BUILD_DRY_RUN=1   print the module and cmake commands instead of running them
#   EMPRISM_SETONIX_DRYRUN=1  no modules, CPU backend with the default compilers (a machine without Cray modules)
# Who runs it: users on Setonix; tests/slurm/test_local_slurm.sh with EMPRISM_BUILD_DRY_RUN=1 only.
set -euo pipefail
EMPRISM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=jobs/setonix/env.sh
source "$EMPRISM_REPO/jobs/setonix/env.sh"

dry=${EMPRISM_BUILD_DRY_RUN:-0}
compiler=${EMPRISM_SETONIX_COMPILER:-hipcc}
arch=${EMPRISM_HIP_ARCH:-gfx90a}
jobs=${EMPRISM_BUILD_JOBS:-16}
if setonix_dryrun; then
  build=${EMPRISM_BUILD_DIR:-build-cpu}
else
  build=${EMPRISM_BUILD_DIR:-build-hip}
fi
[[ $build == /* ]] || build=$EMPRISM_REPO/$build

run() {
  echo "build: $*"
  if [[ $dry != 1 ]]; then
    "$@"
  fi
}

if [[ $dry == 1 ]] && ! setonix_dryrun; then
  for m in $EMPRISM_SETONIX_MODULES; do echo "build: module load $m"; done
else
  setonix_modules
fi

args=(-S "$EMPRISM_REPO" -B "$build" -DCMAKE_BUILD_TYPE=Release)
if setonix_dryrun; then
  args+=(-DEMPRISM_BACKEND=CPU)
else
  args+=(-DEMPRISM_BACKEND=HIP "-DEMPRISM_HIP_ARCH=$arch")
  case $compiler in
    hipcc)
      # FindMPI cannot interrogate hipcc: name Cray MPICH's headers and libraries (MPI and the GTL) explicitly, which
      # skips FindMPI's detection (MPI_CXX_LIBRARIES + MPI_CXX_ADDITIONAL_INCLUDE_DIRS; it still test-compiles them).
      [[ -n ${MPICH_DIR:-} ]] || [[ $dry == 1 ]] || emprism_die "MPICH_DIR is not set: is cray-mpich loaded?"
      gtl_dir=${PE_MPICH_GTL_DIR_amd_gfx90a:-}
      gtl_dir=${gtl_dir#-L}
      gtl_lib=${PE_MPICH_GTL_LIBS_amd_gfx90a:--lmpi_gtl_hsa}
      gtl_lib=${gtl_lib#-l}
      args+=(-DCMAKE_CXX_COMPILER=hipcc -DCMAKE_C_COMPILER=cc
        "-DMPI_CXX_ADDITIONAL_INCLUDE_DIRS=${MPICH_DIR:-\$MPICH_DIR}/include"
        "-DMPI_CXX_LIBRARIES=${MPICH_DIR:-\$MPICH_DIR}/lib/libmpi.so;${gtl_dir:-\$PE_MPICH_GTL_DIR_amd_gfx90a}/lib$gtl_lib.so")
      ;;
    CC)
      # The Cray wrapper compiles every translation unit as HIP (-x hip only on the compile line: on the link line
      # it would make the objects HIP sources) and links the HIP runtime.
      rocm=${ROCM_PATH:-/opt/rocm}
      args+=(-DCMAKE_CXX_COMPILER=CC -DCMAKE_C_COMPILER=cc
        "-DCMAKE_CXX_COMPILE_OBJECT=<CMAKE_CXX_COMPILER> <DEFINES> <INCLUDES> <FLAGS> -x hip -o <OBJECT> -c <SOURCE>"
        "-DCMAKE_CXX_FLAGS=-D__HIP_PLATFORM_AMD__ -I$rocm/include"
        "-DCMAKE_EXE_LINKER_FLAGS=-L$rocm/lib -lamdhip64")
      ;;
    *) emprism_die "EMPRISM_SETONIX_COMPILER must be hipcc or CC, not '$compiler'" ;;
  esac
  [[ -n ${HDF5_DIR:-} ]] && args+=("-DHDF5_ROOT=$HDF5_DIR")
fi
if [[ -n ${EMPRISM_DEPS_PREFIX:-} ]]; then
  args+=("-DCMAKE_PREFIX_PATH=${EMPRISM_DEPS_PREFIX//:/;}")
fi
if [[ -n ${EMPRISM_CMAKE_ARGS:-} ]]; then
  read -r -a extra <<< "$EMPRISM_CMAKE_ARGS"
  args+=("${extra[@]}")
fi

run cmake "${args[@]}"
run cmake --build "$build" -j "$jobs" --target emprism-mpi
if [[ $dry == 1 ]]; then
  echo "build: dry run, nothing built; the program would be $build/emprism-mpi"
else
  echo "build: program $build/emprism-mpi"
fi
