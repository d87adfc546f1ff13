#!/usr/bin/env bash
# tune.sh: the GPU checks and timings of the kernel autotuner and its tune cache (issue 17 item 4) on one H100/H200,
# for the lead.
#
#   bash jobs/device/tune.sh          # from the repository root; results under $OUT (or ./tune_out)
#
# What it does (about 5 minutes of device time on 16 cores; the build is half of it):
#   1. Dependencies the image lacks and the CUDA build for sm_90 (-j16) into build-device/ (jobs/device/common.sh).
#   2. ctest -L gpu: GpuTune.* (every launch variant of the four hot kernels gives bitwise the same Mhat^dag Mhat in
#      fp32 and fp64 with links of 18, 12 and 8 reals; a tuner times the four keys once and a second one reuses every
#      choice from the first one's cache file without timing) and every other GPU test.
#   3. jobs/bench/bench_32x64.toml (32^3x64, fp32 CG to 1e-5) three times in one session: untuned ([tune]
#      enabled = false: every kernel with block 256), then twice with the same tune-cache file (run 1 tunes and writes
#      it, run 2 must reuse it: 0 kernels tuned, tuning time 0).
#   4. Appends a byte to the cache file (wrong checksum) and runs once more: the log must carry ONE warning naming the
#      file, the run tunes anew and rewrites it.
#   5. Prints: tuning time of runs 1, 2 (and 3, after the corruption), the variant chosen per hot kernel, eo_clover's
#      and oe_clover's us/call and % of the measured peak, untuned against run 2; summary.txt, results.tar.gz in $OUT.
# Exit status: 0 when the build, every test and the runs passed, run 2 tuned nothing and the corrupt file drew one
# warning (the timings are reported, not judged). Optional: EMPRISM_DEVICE_SKIP_TESTS=1, and common.sh's variables.
set -uo pipefail
EMPRISM_DEVICE_NAME=tune
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 2. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu
  grep -E "GpuTune\." "$out/ctest_gpu.log" | sed 's/^ *[0-9/]* *Test *#[0-9]*: /  /' | tee -a "$summary"
  device_ctest cpu_tune -R '^Tune\.'
fi
say "tests done ($(elapsed))"

# ---- 3. and 4. runs ----
exe=$build/emprism-mpi
cache=$work/tunecache.tsv
sed -e "s/^extents = .*/extents = [$extents]/" "$repo/jobs/bench/bench_32x64.toml" > "$work/bench.toml"
bench() {  # bench NAME ARGS...: one run in $work, log NAME.log
  local name=$1
  shift
  (cd "$work" && OMP_NUM_THREADS=$jobs timeout 240 mpiexec -n 1 --bind-to none "$exe" bench.toml \
    --set "output.file=\"$name.h5\"" "$@" > "$name.log" 2>&1
  echo $? > "$name.rc")
  [ "$(cat "$work/$name.rc")" = 0 ] || { status=1; say "run $name: exit $(cat "$work/$name.rc")"; }
}
rm -f "$cache"
bench untuned --set "tune.enabled=false"
bench run1 --set "tune.cache=\"$cache\""
bench run2 --set "tune.cache=\"$cache\""
cp "$cache" "$out/tunecache.tsv" 2> /dev/null
printf 'x' >> "$cache"
bench run3 --set "tune.cache=\"$cache\""
say "runs done ($(elapsed))"

# ---- 5. table ----
row() {  # row LOG KERNEL: "us/call %peak" from the kernel table (ms/call is its third column)
  grep -E "\] $2 +[0-9]" "$1" | tail -1 | awk '{ printf "%9.1f %7.1f", 1e3 * $(NF - 3), $NF }'
}
tuned() { grep -m1 -E "\] tune: " "$work/$1.log" | sed 's/^.*\] tune: //'; }
say ""
say "lattice [$extents], backend $backend, fp32 CG; tune cache $cache"
for r in run1 run2 run3; do say "  $r: $(tuned $r)"; done
say "chosen variants (run 1's tuning lines):"
grep -E "\] tune [a-z_.]+\|" "$work/run1.log" | sed 's/^.*\] /  /' | tee -a "$summary"
say "                 eo_clover us/call  %peak   oe_clover us/call  %peak"
say "untuned (b256)   $(row "$work/untuned.log" eo_clover)           $(row "$work/untuned.log" oe_clover)"
say "run 2 (cache)    $(row "$work/run2.log" eo_clover)           $(row "$work/run2.log" oe_clover)"
grep -m1 -E "empirical peak bandwidth" "$work/run2.log" | sed 's/^.*\] /  /' | tee -a "$summary"
if ! grep -qE "\] tune: 0 kernel launch\(es\) tuned in 0.000 s" "$work/run2.log"; then
  status=1
  say "FAIL: run 2 tuned again (it should reuse the cache)"
fi
warnings=$(grep -c "tune cache '$cache' ignored" "$work/run3.log")
say "after corrupting the cache: $warnings warning(s):"
grep -E "tune cache '$cache' ignored" "$work/run3.log" | sed 's/^.*\] /  /' | tee -a "$summary"
[ "$warnings" = 1 ] || { status=1; say "FAIL: expected exactly one warning"; }
touch "$out/ctest_gpu.log" "$out/ctest_cpu_tune.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_cpu_tune.log \
  2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
