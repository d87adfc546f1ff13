# shellcheck shell=bash disable=SC2034  # sourced; status and extents are read by the scripts that source it
# common.sh: the start every jobs/device script shares, sourced (not run) by multi_gpu.sh and setup_gpu.sh after they
# set EMPRISM_DEVICE_NAME (their results go to $OUT, or ./<name>_out). It sets repo, out, build, work, deps, jobs,
# summary, backend, extents, status, exe and the functions say (echo and append to summary.txt), elapsed,
# device_ctest, unit_solve and solve_row (below; Open MPI allowed to run as root), then
#   1. the dependencies the GPU image lacks (Ubuntu 24.04 + CUDA 13: toml++, Random123): the Debian packages carried
#      in .debs/ (libtomlplusplus-dev, libtomlplusplus3, librandom123-dev; `apt-get download` them) unpacked with
#      dpkg -x into /tmp/emprism-deps, pkg-config, CMake and the loader pointed at them (installed ones are used);
#   2. builds the backend (default CUDA for sm_90) into $build with -j $jobs; on failure it exits 1, logs in $out.
# Environment (all optional): EMPRISM_DEVICE_BACKEND (default CUDA), EMPRISM_DEVICE_EXTENTS (default
# "32, 32, 32, 64"), EMPRISM_DEVICE_FORCE_DEBS=1, EMPRISM_DEVICE_JOBS (default 16), EMPRISM_DEVICE_BUILD_DIR
# (default build-device), EMPRISM_DEVICE_TARGETS (the CMake targets to build, space-separated; default all, e.g.
# "emprism-mpi" to skip the test binaries).

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$repo/${EMPRISM_DEVICE_NAME}_out}
build=${EMPRISM_DEVICE_BUILD_DIR:-$repo/build-device}
work=$out/work
deps=/tmp/emprism-deps
jobs=${EMPRISM_DEVICE_JOBS:-16}
mkdir -p "$out" "$work"
summary=$out/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
status=0
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# ---- 1. dependencies ----
multiarch=$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)
mkdir -p "$deps"
backend=${EMPRISM_DEVICE_BACKEND:-CUDA}
extents=${EMPRISM_DEVICE_EXTENTS:-32, 32, 32, 64}
need_toml=1
need_r123=1
if [ "${EMPRISM_DEVICE_FORCE_DEBS:-0}" != 1 ]; then
  pkg-config --exists tomlplusplus 2> /dev/null && need_toml=0
  [ -f /usr/include/Random123/philox.h ] && need_r123=0
fi
unpack() {  # unpack PATTERN: the first .deb of .debs/ matching it, once per machine (a marker in $deps)
  [ -f "$deps/.unpacked-$1" ] && return 0
  local found=("$repo"/.debs/"$1"_*.deb)
  local f=${found[0]}
  if [ ! -f "$f" ]; then
    say "MISSING: .debs/$1_*.deb (apt-get download $1 on a Debian 12 machine)"
    return 1
  fi
  dpkg -x "$f" "$deps" && touch "$deps/.unpacked-$1"
}
# Scripts started together on one machine share $deps: the first unpacks under a lock, the others wait and find it
# done (two dpkg -x at once failed with "File exists", and a second unpack would put back the .pc's prefix).
exec {deps_lock}> "$deps.lock"
flock "$deps_lock"
if [ $need_toml = 1 ]; then
  unpack libtomlplusplus-dev && unpack libtomlplusplus3 || exit 1
  pc=$deps/usr/lib/$multiarch/pkgconfig/tomlplusplus.pc
  sed -i "s#^prefix=.*#prefix=$deps/usr#" "$pc"
  export PKG_CONFIG_PATH=$deps/usr/lib/$multiarch/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$deps/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
r123_flag=()
if [ $need_r123 = 1 ]; then
  unpack librandom123-dev || exit 1
  r123_flag=(-DRANDOM123_INCLUDE_DIR="$deps/usr/include")
fi
flock -u "$deps_lock"
say "deps: toml++ $([ $need_toml = 1 ] && echo "from .debs" || echo installed), Random123 $([ $need_r123 = 1 ] && echo "from .debs" || echo installed)"
if [ "$backend" = CUDA ]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /' |
    tee -a "$summary"
fi
# The device's copy carries the working tree but not always an up-to-date git directory, so its HEAD may be stale;
# the tree line is the git tree of the files themselves (tracked and untracked, not ignored), which names the commit
# where `git rev-parse <commit>^{tree}` gives the same hash.
tree_hash() {
  local idx
  idx=$(mktemp -u)
  (cd "$repo" && GIT_INDEX_FILE=$idx git read-tree HEAD 2> /dev/null
    GIT_INDEX_FILE=$idx git add -A 2> /dev/null && GIT_INDEX_FILE=$idx git write-tree 2> /dev/null) || echo unknown
  rm -f "$idx"
}
say "commit: $(git -C "$repo" rev-parse --short=12 HEAD 2> /dev/null || echo unknown) (may be stale)  tree: $(tree_hash | cut -c1-12)  date: $(date -u +%Y-%m-%dT%H:%MZ)"

# ---- 2. build ----
backend_flags=(-DEMPRISM_BACKEND="$backend")
if [ "$backend" = CUDA ]; then
  cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
  backend_flags+=(-DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc")
fi
if ! cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release "${backend_flags[@]}" "${r123_flag[@]}" \
  > "$out/cmake.log" 2>&1; then
  say "BUILD: cmake failed"
  tail -40 "$out/cmake.log"
  exit 1
fi
targets=()
if [ -n "${EMPRISM_DEVICE_TARGETS:-}" ]; then read -ra targets <<< "--target $EMPRISM_DEVICE_TARGETS"; fi
if ! cmake --build "$build" -j "$jobs" "${targets[@]}" > "$out/build.log" 2>&1; then
  say "BUILD: failed"
  grep -E "error" "$out/build.log" | head -30
  tail -30 "$out/build.log"
  tar -czf "$out/results.tar.gz" -C "$out" cmake.log build.log summary.txt 2> /dev/null
  exit 1
fi
say "build: OK ($(elapsed))"

# ---- helpers for the scripts ----
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# tests_wanted: true unless EMPRISM_DEVICE_SKIP_TESTS=1, which it notes in the summary (the scripts' `if tests_wanted;
# then <their tests>; fi`).
tests_wanted() {
  [ "${EMPRISM_DEVICE_SKIP_TESTS:-0}" = 1 ] || return 0
  say "tests: skipped (EMPRISM_DEVICE_SKIP_TESTS=1)"
  return 1
}
# device_ctest NAME ARGS...: ctest in $build with ARGS (and a 300 s timeout per test) into $out/ctest_NAME.log; one
# summary line, and on failure the failing tests' lines and status=1.
device_ctest() {
  local name=$1 log=$out/ctest_$1.log
  shift
  if ctest --test-dir "$build" "$@" --timeout 300 > "$log" 2>&1; then
    say "ctest $name: $(grep -E 'tests passed' "$log")"
  else
    status=1
    say "ctest $name: FAILED: $(grep -E 'tests passed' "$log")"
    grep -E "\*\*\*Failed|FAILED|Timeout" "$log" | head -20 | tee -a "$summary"
  fi
}

# unit_solve NAME PEAK RECONSTRUCT SOLVER [SOURCES]: issue 17's unit-gauge problem ($extents, kappa 0.124, csw 1,
# antiperiodic t, one random source, seed 5: the solve 'noise') with the [solver] lines SOLVER ("key = value",
# newline-separated; max_iter 5000 added), links of RECONSTRUCT reals and metrics.peak = PEAK, run once on one rank;
# SOURCES = 2 adds a second solve 'noise2' (seed 6), which finds the kernels tuned (QUDA's tests report their second
# source likewise). Leaves NAME.toml, NAME.log and NAME.rc (the exit status) in $work and sets status=1 when it failed.
exe=$build/emprism-mpi
unit_solve() {
  cat > "$work/$1.toml" << EOF
[lattice]
extents = [$extents]
[gauge]
source = "unit"
[dirac]
kappa = 0.124
csw = 1.0
reconstruct = $3
[solver]
$4
max_iter = 5000
[log]
progress_every = 1000
[metrics]
peak = $2
[output]
file = "$1.h5"
overwrite = true
fields = false
[[solve]]
name = "noise"
type = "random"
seed = 5
EOF
  if [ "${5:-1}" = 2 ]; then
    printf '[[solve]]\nname = "noise2"\ntype = "random"\nseed = 6\n' >> "$work/$1.toml"
  fi
  (cd "$work" && OMP_NUM_THREADS=$jobs timeout 200 mpiexec -n 1 --bind-to none "$exe" "$1.toml" > "$1.log" 2>&1
  echo $? > "$1.rc")
  [ "$(cat "$work/$1.rc")" = 0 ] || status=1
}

# solve_row NAME LABEL WIDTH [SOLVE]: one row of a solve table from $work/NAME.log (seconds, iterations, reliable
# updates and true residual of its solve SOLVE, default 'noise'; the exit status and the log's last line when it has
# no such line), LABEL in a column of WIDTH characters, appended to summary.txt.
solve_row() {
  local line s it upd res
  line=$(grep -m1 -E "solve '${4:-noise}': (converged|NOT converged)" "$work/$1.log")
  s=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s$/\1/p')
  it=$(echo "$line" | sed -n 's/.*converged in \([0-9]*\) iterations.*/\1/p')
  upd=$(echo "$line" | sed -n 's/.*(\([0-9]*\) reliable updates).*/\1/p')
  res=$(echo "$line" | sed -n 's/.*true residual \([0-9.e+-]*\).*/\1/p')
  [ -n "$it" ] || line="exit $(cat "$work/$1.rc"): $(tail -1 "$work/$1.log")"
  printf "%-${3}s %8s %6s %8s %10s  %s\n" "$2" "${s:--}" "${it:--}" "${upd:--}" "${res:--}" \
    "$([ -n "$it" ] || echo "$line")" | tee -a "$summary"
}
