#!/usr/bin/env bash
# jobs/setup.sh: prepare a fresh Debian 12 (bookworm) or Ubuntu 24.04 (noble) machine for
# EmPRiSM-MPI, then configure and build it. Safe to re-run; it can be called from any directory.
#
#   1. Checks with dpkg-query which of the Debian/Ubuntu packages the build, the tests and the
#      analysis scripts need are missing. Only if some are: `apt-get update` and
#      `apt-get install -y` of the missing ones (DEBIAN_FRONTEND=noninteractive), as root, or
#      through sudo when not root. On a prepared machine this step needs neither root nor network.
#      On Ubuntu several of the packages are in the "universe" component, which must be enabled.
#   2. cmake -S <repo> -B <repo>/<build dir> -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=<backend>
#   3. cmake --build <repo>/<build dir> -j <nproc>
#   The program is then <build dir>/emprism-mpi, and `ctest --test-dir build` runs the tests.
#
# Environment variables (all optional):
#   EMPRISM_BACKEND        kernel backend passed to CMake: CPU (default), HIP or CUDA.
#   EMPRISM_BUILD_DIR      build directory, relative to the repository root or absolute
#                          (default: build). The README's `ctest --test-dir build` assumes the default.
#   EMPRISM_SETUP_DRY_RUN  if 1, print the apt-get and cmake commands that would run (after the same
#                          dpkg-query check) instead of running them; changes nothing.
#
# OpenMPI and root: mpirun/mpiexec refuse to run as root unless OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set. A script cannot set variables in the shell that called
# it, so if you run multi-rank jobs by hand as root (containers, CI), export both yourself. The
# tests that launch mpiexec set them on their own.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin libhdf5-dev libhdf5-openmpi-dev zlib1g-dev
  libspdlog-dev libtomlplusplus-dev libcli11-dev libgtest-dev librandom123-dev
  python3 python3-h5py python3-numpy python3-matplotlib python3-pytest
  # for the Slurm job tests (a single-node Slurm started by tests/slurm/test_local_slurm.sh) and shellcheck
  slurmctld slurmd slurm-client munge libpmix-dev shellcheck
)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BACKEND="${EMPRISM_BACKEND:-CPU}"
BUILD_DIR="${EMPRISM_BUILD_DIR:-build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$REPO_ROOT/$BUILD_DIR"
DRY_RUN="${EMPRISM_SETUP_DRY_RUN:-0}"

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

main() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "warning: dpkg-query not found (not Debian/Ubuntu); skipping package installation." \
        "Install the equivalents of: ${PACKAGES[*]}"
  else
    local -a missing
    mapfile -t missing < <(missing_packages "${PACKAGES[@]}")
    if [[ ${#missing[@]} -eq 0 ]]; then
      log "all ${#PACKAGES[@]} required packages are installed"
    else
      install_packages "${missing[@]}"
    fi
  fi

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
