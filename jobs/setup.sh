#!/usr/bin/env bash
# jobs/setup.sh: prepare a fresh Debian 12 (bookworm) or Ubuntu 24.04 (noble) machine for
# EmPRiSM-MPI, then configure and build it. Safe to re-run; it can be called from any directory.
#
#   1. Checks with dpkg-query which of the Debian/Ubuntu packages that building, running and testing need are
#      missing (compilers, CMake, Open MPI, HDF5 with h5dump, spdlog, toml++, CLI11, GoogleTest, Random123, the
#      analysis Python packages h5py, numpy, matplotlib, scipy and pytest, shellcheck; with EMPRISM_SETUP_SLURM=1
#      also Slurm and munge). Only if some are: `apt-get update` and `apt-get install -y` of the missing ones
#      (DEBIAN_FRONTEND=noninteractive), as root, or through sudo when not root. On a prepared machine this step
#      needs neither root nor network. On Ubuntu several of the packages are in the "universe" component.
#   2. Finds the python3 that analysis/report and the Python tests will use (analysis/python3: EMPRISM_PYTHON, else
#      the first of python3 on PATH and /usr/bin/python3 that imports h5py, numpy, matplotlib and scipy) and says
#      which; a pyenv or conda python3 first on PATH does not matter.
#   3. cmake -S <repo> -B <repo>/<build dir> -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=<backend>
#   4. cmake --build <repo>/<build dir> -j <nproc>
#   The program is then <build dir>/emprism-mpi, and `ctest --test-dir build` runs the tests.
#
# Environment variables (all optional):
#   EMPRISM_BACKEND        kernel backend passed to CMake: CPU (default), HIP or CUDA.
#   EMPRISM_BUILD_DIR      build directory, relative to the repository root or absolute
#                          (default: build). The README's `ctest --test-dir build` assumes the default.
#   EMPRISM_SETUP_DRY_RUN  if 1, print the apt-get and cmake commands that would run (after the same
#                          dpkg-query check) instead of running them; changes nothing.
#   EMPRISM_SETUP_SLURM    if 1, also install Slurm and munge (slurmctld slurmd slurm-client munge libpmix-dev),
#                          which only the Slurm job test (tests/slurm/test_local_slurm.sh) needs: that test starts its
#                          own private munged, slurmctld and slurmd and skips without them. Debian's packages enable
#                          the system services munge, slurmctld and slurmd when installed, which is why they are
#                          not installed by default. CI (.ci/run) sets it.
#   EMPRISM_PYTHON         a python3 with h5py, numpy, matplotlib and scipy to use instead of searching.
#
# OpenMPI and root: mpirun/mpiexec refuse to run as root unless OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set. A script cannot set variables in the shell that called
# it, so if you run multi-rank jobs by hand as root (containers, CI), export both yourself. The
# tests that launch mpiexec set them on their own.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin libhdf5-dev libhdf5-openmpi-dev zlib1g-dev hdf5-tools
  libspdlog-dev libtomlplusplus-dev libcli11-dev libgtest-dev librandom123-dev
  python3 python3-h5py python3-numpy python3-matplotlib python3-scipy python3-pytest
  # the static checks of the job scripts (tests/slurm/test_local_slurm.sh, step 1)
  shellcheck
  # jobs/fuzz.sh (CI): clang with libFuzzer and the sanitizer runtimes, and clang's OpenMP
  clang libclang-rt-dev libomp-dev
)
# Only with EMPRISM_SETUP_SLURM=1: a single-node Slurm for tests/slurm/test_local_slurm.sh (srun --mpi=pmix).
SLURM_PACKAGES=(slurmctld slurmd slurm-client munge libpmix-dev)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BACKEND="${EMPRISM_BACKEND:-CPU}"
BUILD_DIR="${EMPRISM_BUILD_DIR:-build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$REPO_ROOT/$BUILD_DIR"
DRY_RUN="${EMPRISM_SETUP_DRY_RUN:-0}"
SETUP_SLURM="${EMPRISM_SETUP_SLURM:-0}"

log() { echo "setup: $*"; }
die() { echo "setup: error: $*" >&2; exit 1; }

# Run a command, or in dry-run mode only print it.
run() {
  if [[ "$DRY_RUN" == 1 ]]; then
    echo "setup: [dry run] would run: $*"
  else
    "$@"
  fi
}

# Print the names among "$@" that dpkg does not list as installed.
missing_packages() {
  local pkg
  for pkg in "$@"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" != "install ok installed" ]]; then
      echo "$pkg"
    fi
  done
}

# Install "$@" with apt-get, as root or through sudo.
install_packages() {
  local -a as_root=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 ||
      die "missing packages ($*) and not root, and sudo is not available; install them as root: apt-get install $*"
    log "not root: using sudo for apt-get (it may ask for your password)"
    as_root=(sudo)
  fi
  log "installing $# package(s): $*"
  run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  if ! run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; then
    die "apt-get install failed; see the apt-get messages above (on Ubuntu, several packages are in the universe component: add-apt-repository universe)"
  fi
}

# Report the python3 that analysis/report and the Python tests will use (analysis/python3), or how to get one.
check_python() {
  local py
  if py=$(EMPRISM_PYTHON_MODULES="h5py numpy matplotlib scipy pytest" "$REPO_ROOT/analysis/python3" \
            -c 'import sys; print(sys.executable)' 2>/dev/null); then
    log "analysis python: $py (h5py, numpy, matplotlib, scipy, pytest); analysis/report uses it"
  elif [[ "$DRY_RUN" == 1 ]]; then
    log "[dry run] no python3 with h5py, numpy, matplotlib, scipy and pytest yet (the packages above provide one)"
  else
    log "warning: no python3 imports h5py, numpy, matplotlib, scipy and pytest: analysis/report and the Python" \
        "tests will fail until one does (install them, or set EMPRISM_PYTHON)"
  fi
}

main() {
  [[ "$SETUP_SLURM" == 0 || "$SETUP_SLURM" == 1 ]] || die "EMPRISM_SETUP_SLURM must be 0 or 1, not '$SETUP_SLURM'"
  local -a wanted=("${PACKAGES[@]}")
  if [[ "$SETUP_SLURM" == 1 ]]; then
    wanted+=("${SLURM_PACKAGES[@]}")
    log "EMPRISM_SETUP_SLURM=1: including Slurm and munge (${SLURM_PACKAGES[*]})"
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "warning: dpkg-query not found (not Debian/Ubuntu); skipping package installation." \
        "Install the equivalents of: ${wanted[*]}"
  else
    local -a missing
    mapfile -t missing < <(missing_packages "${wanted[@]}")
    if [[ ${#missing[@]} -eq 0 ]]; then
      log "all ${#wanted[@]} required packages are installed"
    else
      install_packages "${missing[@]}"
    fi
  fi
  check_python

  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  log "configuring (backend $BACKEND, build dir $BUILD_DIR)"
  run cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "-DEMPRISM_BACKEND=$BACKEND"
  log "building with $jobs job(s)"
  run cmake --build "$BUILD_DIR" -j "$jobs"
  if [[ "$DRY_RUN" == 1 ]]; then
    log "dry run finished; nothing was changed"
  else
    log "done: $BUILD_DIR/emprism-mpi"
  fi
}

# Run only when executed, so that the functions can be sourced and tested on their own.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
