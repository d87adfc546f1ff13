#!/usr/bin/env bash
# jobs/local/build.sh: configure and build EmPRiSM-MPI for the jobs of jobs/local/ (CPU backend by default), on a
# login node or workstation with the Debian/Ubuntu packages of jobs/setup.sh (or their equivalents) installed.
#
#   jobs/local/build.sh            then: sbatch jobs/local/run.sbatch   /   sbatch jobs/local/scaling.sbatch
#
# Runs: cmake -S <repo> -B <build dir> -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=<backend>
#       cmake --build <build dir> -j <jobs> --target emprism-mpi
# Environment (all optional):
#   EMPRISM_BUILD_DIR      build directory, absolute or relative to the repository root (default: build, the
#                          directory the jobs look in)
#   EMPRISM_BACKEND        CPU (default), CUDA or HIP (jobs/setonix/build.sh for Setonix)
#   EMPRISM_BUILD_JOBS     parallel compile jobs (default: nproc)
#   EMPRISM_CMAKE_ARGS     extra cmake arguments, split on spaces (e.g. "-DCMAKE_CUDA_ARCHITECTURES=80")
#   EMPRISM_BUILD_DRY_RUN  1: print the commands instead of running them
# Who runs it: users before submitting the jobs; tests/slurm/test_local_slurm.sh runs it with
# EMPRISM_BUILD_DRY_RUN=1 only (the test is handed a built program).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${EMPRISM_BUILD_DIR:-build}
[[ $build == /* ]] || build=$repo/$build
backend=${EMPRISM_BACKEND:-CPU}
jobs=${EMPRISM_BUILD_JOBS:-$(nproc 2> /dev/null || echo 2)}
extra=()
if [[ -n ${EMPRISM_CMAKE_ARGS:-} ]]; then
  read -r -a extra <<< "$EMPRISM_CMAKE_ARGS"
fi

run() {
  echo "build: $*"
  if [[ ${EMPRISM_BUILD_DRY_RUN:-0} != 1 ]]; then
    "$@"
  fi
}

run cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DEMPRISM_BACKEND=$backend" "${extra[@]}"
run cmake --build "$build" -j "$jobs" --target emprism-mpi
if [[ ${EMPRISM_BUILD_DRY_RUN:-0} == 1 ]]; then
  echo "build: dry run, nothing built; the program would be $build/emprism-mpi"
else
  echo "build: program $build/emprism-mpi"
fi
