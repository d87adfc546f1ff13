#!/usr/bin/env bash
# jobs/fuzz.sh: the sanitizer and fuzzing stage of CI (.ci/run), or by hand. Builds the CPU backend with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (-O1 -g, libFuzzer's coverage instrumentation) into build-san/,
# only the targets it needs: the GoogleTest binary emprism_tests and the libFuzzer harnesses of tests/fuzz (the TOML
# reader, each gauge file reader, the gauge readers' device path). Then
#   1. runs the unit tests in emprism_tests once under the sanitizers (EMPRISM_SAN_JOBS GoogleTest shards at once,
#      gtest filter EMPRISM_SAN_FILTER; a failure or any sanitizer report fails the stage),
#   2. runs each harness for EMPRISM_FUZZ_SECONDS (default 20) from its checked-in seed corpus tests/fuzz/corpus/<name>
#      (fuzz_gauge_device: the four gauge corpora; copied to a scratch directory, so the repository is not written),
#      1 s per input at most, 2 GB of memory, JOBS harnesses at once;
#      a crash, a sanitizer report, an uncaught exception or a timeout fails the stage and leaves the input in
#      build-san/fuzz/<name>/ (crash-*, timeout-*, oom-*).
# Prints the time of each step. Needs clang, libclang-rt-dev and libomp-dev (jobs/setup.sh installs them).
# Environment: EMPRISM_FUZZ_SECONDS (default 20), EMPRISM_SAN_BUILD_DIR (default build-san), EMPRISM_SAN_JOBS
# (default nproc), EMPRISM_SAN_FILTER (default: every test but those of SAN_SKIP below; ctest runs all of them).
# SAN_SKIP: tests whose code other tests run under the sanitizers in less time (CPU seconds under ASan on a 2-core
# machine, 2026-12-03):
#   - the end-to-end Cli.* tests, which start the uninstrumented program;
#   - the two statistical heatbath plaquette runs (2 minutes);
#   - the fp32/fp64 sloppy CG's 12^3x24 iteration count (over 4 minutes): its 8^3x16 twin and the operator tests stay;
#   - the reliable-update tests that solve the 400-iteration random field or the fp32 CG down to its floor (140 s and
#     41 s), and the two unit-gauge iteration counts (90 s): MixedSolutionEqualsDoubleWithinTol,
#     HistoryHasOneEntryPerIteration and StopNormal* run the same reliable updates;
#   - HalfSloppy.UnitGaugeReaches1e10 (21 s): RandomGaugeReaches1e10 runs the same half CG;
#   - FusedUpdate.FusedSolveRecordsTheFusedKernelInsteadOfTheUpdate (19 s): the solve of
#     MixedSingleSolveHasTheUnfusedBits.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${EMPRISM_SAN_BUILD_DIR:-$REPO_ROOT/build-san}"
SECONDS_PER_HARNESS="${EMPRISM_FUZZ_SECONDS:-20}"
SAN_SKIP="Cli.*:Heatbath.Plaquette*:F32dSloppy.UnitGauge12x24*:ReliableUpdates.RandomGauge*"
SAN_SKIP+=":ReliableUpdates.MixedTrueResidualMeetsTolByTheReference:ReliableUpdates.SingleBelowItsFloor*"
SAN_SKIP+=":ReliableUpdates.UnitGaugeMixedIterations*:HalfSloppy.UnitGaugeReaches1e10"
SAN_SKIP+=":FusedUpdate.FusedSolveRecordsTheFusedKernelInsteadOfTheUpdate"
FILTER="${EMPRISM_SAN_FILTER:--$SAN_SKIP}"
JOBS="${EMPRISM_SAN_JOBS:-$(nproc)}"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"  # Open MPI's and HDF5's one-time allocations are not leaks
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2

step() { echo "fuzz.sh: $* ($(date -u +%H:%M:%S))"; }
t0=$(date +%s)

step "configure and build (clang, ASan+UBSan) in $BUILD"
mkdir -p "$BUILD"
cmake -S "$REPO_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DEMPRISM_BACKEND=CPU -DEMPRISM_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -g $SAN -fsanitize=fuzzer-no-link" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >"$BUILD/fuzz-configure.log"
HARNESSES=(fuzz_toml fuzz_gauge_ildg fuzz_gauge_nersc fuzz_gauge_openqcd fuzz_gauge_milc fuzz_gauge_device)
cmake --build "$BUILD" -j "$JOBS" --target emprism_tests "${HARNESSES[@]}" >"$BUILD/fuzz-build.log" 2>&1 ||
  { tail -50 "$BUILD/fuzz-build.log"; exit 1; }
t_build=$(date +%s)

step "unit tests under ASan+UBSan (filter '$FILTER', $JOBS shards at once)"
# GoogleTest's sharding: shard k of JOBS runs every JOBS-th test, each shard one process (the tests run in parallel
# under ctest already, so they do not share files).
pids=()
for ((k = 0; k < JOBS; ++k)); do
  (cd "$BUILD/tests" && OMP_WAIT_POLICY=passive GTEST_TOTAL_SHARDS=$JOBS GTEST_SHARD_INDEX=$k \
    ./emprism_tests --gtest_filter="$FILTER" --gtest_brief=1 >"$BUILD/unit-tests-$k.log" 2>&1) &
  pids+=($!)
done
tests_failed=0
for ((k = 0; k < JOBS; ++k)); do
  wait "${pids[k]}" || tests_failed=1
  tail -5 "$BUILD/unit-tests-$k.log"
done
if ((tests_failed)); then
  echo "fuzz.sh: FAIL: the unit tests under the sanitizers (logs: $BUILD/unit-tests-*.log):"
  grep -h -E "FAILED|ERROR: AddressSanitizer|runtime error|SUMMARY" "$BUILD"/unit-tests-*.log | head -20
  exit 1
fi
t_tests=$(date +%s)

# fuzz_one HARNESS: runs it from its seed corpus for SECONDS_PER_HARNESS s and prints its result; fails on a finding.
fuzz_one() {
  local h=$1 name work seeds
  name=${h#fuzz_}
  name=${name#gauge_}
  work="$BUILD/fuzz/$name"
  rm -rf "$work" && mkdir -p "$work/corpus"
  seeds=("$name")
  if [[ $name == device ]]; then seeds=(ildg nersc openqcd milc); fi  # the device path reads every format
  for s in "${seeds[@]}"; do  # every harness has seeds (openqcd, milc: make_seeds.py)
    if [[ -d "$REPO_ROOT/tests/fuzz/corpus/$s" ]]; then
      cp "$REPO_ROOT/tests/fuzz/corpus/$s"/* "$work/corpus/" 2>/dev/null || true
    fi
  done
  # One OpenMP thread: the harnesses run JOBS at once, one per core (two threads per harness halve the device
  # harness's inputs per second, the readers' parallel loops being short).
  if ! (cd "$work" && OMP_NUM_THREADS=1 "$BUILD/tests/fuzz/$h" -max_total_time="$SECONDS_PER_HARNESS" -timeout=1 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 corpus >"$work/log" 2>&1); then
    echo "fuzz.sh: FAIL: $h found an input that breaks it (see $work):"
    grep -E "ERROR|SUMMARY|terminate|Test unit written" "$work/log" | head -10
    return 1
  fi
  echo "fuzz.sh: $h: $(grep -E "stat::number_of_executed_units" "$work/log" | tail -1)"
}

# The harnesses JOBS at a time (each one process on one core).
status=0
running=0
for h in "${HARNESSES[@]}"; do
  if ((running == JOBS)); then
    wait -n || status=1
    running=$((running - 1))
  fi
  step "$h for $SECONDS_PER_HARNESS s"
  fuzz_one "$h" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || status=1
  running=$((running - 1))
done
t_end=$(date +%s)
echo "fuzz.sh: build $((t_build - t0)) s, unit tests $((t_tests - t_build)) s, fuzzing $((t_end - t_tests)) s," \
  "total $((t_end - t0)) s"
exit $status
