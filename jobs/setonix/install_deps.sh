#!/usr/bin/env bash
# jobs/setonix/install_deps.sh: builds the four libraries EmPRiSM-MPI needs that are not Cray or Pawsey modules
# (toml++, CLI11, Random123, spdlog with its bundled fmt) from their release tarballs into one prefix, for
# jobs/setonix/build.sh (EMPRISM_DEPS_PREFIX). Run it once on a Setonix login node (it downloads), any directory.
#
#   jobs/setonix/install_deps.sh [PREFIX]         PREFIX default: $MYSOFTWARE/emprism-deps (else $HOME/emprism-deps)
#   EMPRISM_DEPS_PREFIX=PREFIX jobs/setonix/build.sh
#
# What it installs (versions pinned below; each from https://github.com/<repo>/archive/refs/tags/v<version>.tar.gz):
#   toml++ 3.4.0     header-only: CMake install of the headers, plus PREFIX/lib/pkgconfig/tomlplusplus.pc (our
#                    CMakeLists.txt finds toml++ through pkg-config; upstream's CMake install writes no .pc)
#   CLI11 2.4.2      header-only: CMake install (PREFIX/share/cmake/CLI11, found by find_package(CLI11 CONFIG))
#   Random123 1.14.0 header-only: include/Random123 copied to PREFIX/include
#   spdlog 1.13.0    compiled (static, -fPIC) with its bundled fmt: CMake install (PREFIX/lib/cmake/spdlog)
# The tarballs are taken from EMPRISM_DEPS_SOURCES when there (file names <name>-<version>.tar.gz, as listed by
# EMPRISM_DEPS_DRY_RUN=1), else downloaded there with curl or wget. Their SHA-256 sums are printed and written to
# PREFIX/SOURCES.sha256; no sums are pinned here (GitHub's archives were not downloaded where this script was
# written), so compare them with the releases' if your site requires it. Nothing is installed outside PREFIX.
#
# Environment (all optional):
#   EMPRISM_DEPS_SOURCES    directory of the tarballs (default PREFIX/src)
#   EMPRISM_DEPS_CXX        C++ compiler for spdlog (default $CXX, else g++: PrgEnv-gnu's GCC, the libstdc++ that
#                           hipcc links against; the Cray wrapper CC works too)
#   EMPRISM_DEPS_JOBS       parallel compile jobs (default 8)
#   EMPRISM_DEPS_DRY_RUN=1  print what it would download, unpack, build and write; change nothing
# Needs: cmake >= 3.14 (module cmake on Setonix), a C++17 compiler, tar, curl or wget (unless the tarballs are there).
# Who runs it: users, once per installation. Tested where it was written only with tarballs made from the upstream
# repositories' release tags (git archive) and Debian's GCC and CMake, not on Setonix (see jobs/README.md).
set -euo pipefail

# name|version|GitHub repository|top directory of the tarball
DEPS=(
  "tomlplusplus|3.4.0|marzer/tomlplusplus|tomlplusplus-3.4.0"
  "CLI11|2.4.2|CLIUtils/CLI11|CLI11-2.4.2"
  "random123|1.14.0|DEShawResearch/random123|random123-1.14.0"
  "spdlog|1.13.0|gabime/spdlog|spdlog-1.13.0"
)

prefix=${1:-${MYSOFTWARE:-$HOME}/emprism-deps}
dry=${EMPRISM_DEPS_DRY_RUN:-0}
jobs=${EMPRISM_DEPS_JOBS:-8}
cxx=${EMPRISM_DEPS_CXX:-${CXX:-g++}}

log() { echo "install_deps: $*"; }
die() {
  echo "install_deps: error: $*" >&2
  exit 1
}
run() {
  echo "install_deps: $*"
  if [[ $dry != 1 ]]; then "$@"; fi
}

[[ $prefix == /* ]] || prefix=$PWD/$prefix
sources=${EMPRISM_DEPS_SOURCES:-$prefix/src}
[[ $sources == /* ]] || sources=$PWD/$sources
if [[ $dry != 1 ]]; then
  command -v cmake > /dev/null 2>&1 || die "cmake not found (module load cmake)"
  command -v "$cxx" > /dev/null 2>&1 || die "C++ compiler '$cxx' not found (set EMPRISM_DEPS_CXX)"
fi

# fetch NAME VERSION REPO: the tarball's path (downloaded into $sources when absent).
fetch() {
  local file=$sources/$1-$2.tar.gz url=https://github.com/$3/archive/refs/tags/v$2.tar.gz
  if [[ -f $file ]]; then
    echo "$file"
    return
  fi
  [[ $dry == 1 ]] || mkdir -p "$sources"
  if command -v curl > /dev/null 2>&1; then
    run curl -fsSL -o "$file.part" "$url" >&2 || die "cannot download $url"
  elif command -v wget > /dev/null 2>&1; then
    run wget -q -O "$file.part" "$url" >&2 || die "cannot download $url"
  else
    die "neither curl nor wget: put $1-$2.tar.gz (from $url) into $sources"
  fi
  [[ $dry == 1 ]] || mv "$file.part" "$file"
  echo "$file"
}

# unpack TARBALL TOPDIR WORKDIR: the source directory.
unpack() {
  run tar -xzf "$1" -C "$3" >&2
  [[ $dry == 1 || -d $3/$2 ]] || die "$1 does not unpack to $2/"
  echo "$3/$2"
}

# cmake_install SRC BUILD ARGS...: configure, build and install one CMake project into $prefix.
cmake_install() {
  local src=$1 build=$2
  shift 2
  run cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_INSTALL_PREFIX=$prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib "$@"
  run cmake --build "$build" -j "$jobs"
  run cmake --install "$build"
}

write_toml_pc() {
  local pc=$prefix/lib/pkgconfig/tomlplusplus.pc
  log "writing $pc"
  [[ $dry == 1 ]] && return
  mkdir -p "$(dirname "$pc")"
  cat > "$pc" << EOF
# Written by EmPRiSM-MPI's jobs/setonix/install_deps.sh: toml++ $1, header-only.
prefix=$prefix
includedir=\${prefix}/include

Name: tomlplusplus
Description: Header-only TOML config file parser and serializer for C++17
Version: $1
Cflags: -I\${includedir}
EOF
}

work=""
cleanup() { if [[ -n $work ]]; then rm -rf "$work"; fi; }
trap cleanup EXIT

main() {
  local entry name version repo top tarball src sums=""
  log "prefix $prefix, sources $sources"
  work=$(mktemp -d "${TMPDIR:-/tmp}/emprism-deps.XXXXXX")
  for entry in "${DEPS[@]}"; do
    IFS='|' read -r name version repo top <<< "$entry"
    tarball=$(fetch "$name" "$version" "$repo")
    if [[ $dry != 1 ]]; then
      sums+="$(sha256sum "$tarball" | awk '{print $1}')  $(basename "$tarball")"$'\n'
    fi
    src=$(unpack "$tarball" "$top" "$work")
    case $name in
      tomlplusplus)
        cmake_install "$src" "$work/build-$name"
        write_toml_pc "$version"
        ;;
      CLI11)
        cmake_install "$src" "$work/build-$name" -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF \
          -DCLI11_BUILD_DOCS=OFF -DCLI11_PRECOMPILED=OFF
        ;;
      random123)
        run mkdir -p "$prefix/include"
        run cp -R "$src/include/Random123" "$prefix/include/"
        ;;
      spdlog)
        cmake_install "$src" "$work/build-$name" "-DCMAKE_CXX_COMPILER=$cxx" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
          -DSPDLOG_BUILD_SHARED=OFF -DSPDLOG_FMT_EXTERNAL=OFF -DSPDLOG_BUILD_EXAMPLE=OFF -DSPDLOG_BUILD_TESTS=OFF \
          -DSPDLOG_INSTALL=ON
        ;;
    esac
  done
  if [[ $dry == 1 ]]; then
    log "dry run: nothing downloaded, built or installed"
    return
  fi
  printf '%s' "$sums" > "$prefix/SOURCES.sha256"
  log "SHA-256 of the sources used (also in $prefix/SOURCES.sha256):"
  printf '%s' "$sums" | sed 's/^/  /'
  log "done; build EmPRiSM-MPI with: EMPRISM_DEPS_PREFIX=$prefix jobs/setonix/build.sh"
}

main
