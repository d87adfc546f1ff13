#!/usr/bin/env bash
# heatbath.sh: the GPU checks and timings of the device heatbath (issue 16) on one H100/H200, for the lead.
#
#   bash jobs/device/heatbath.sh            # from the repository root; results under $OUT (or ./heatbath_out)
#
# What it does (about 4 minutes of device time on 16 cores; the build is most of it):
#   1. Dependencies and the CUDA build for sm_90 into build-device/ (jobs/device/common.sh; an existing build-device
#      is reused and only rebuilt where sources changed).
#   2. ctest: GpuHeatbath.* (compound sweeps from a hot and a cold start and an overrelaxation pass on the device
#      against the host path: links and plaquettes to 1e-12), HeatbathDevice.* (the metrics rows of a device sweep;
#      the bitwise comparisons skip on a GPU) and the host's Heatbath.* tests (published plaquettes, unchanged).
#   3. Timings, each run once on one rank:
#      hb_32x64    32^3x64 (EMPRISM_DEVICE_EXTENTS), beta 6.0, 11 compound sweeps from cold with or_per_sweep 4 (the
#                  default, quickstart's), then one loose point solve: ms per compound sweep from the log (the
#                  cumulative s/sweep of sweeps 1 and 11: sweeps 2..11, the first one is the warm-up) and from the
#                  kernel rows heatbath_* (device time per sweep, all 11); target <= 50 ms.
#      quickstart  jobs/examples/quickstart.toml as it is (8^3x16, 50 sweeps): its thermalisation time (50 x the
#                  last s/sweep) and the set-up line.
#      split_t     16^3x32, 3 compound sweeps, on 1 rank and on 2 ranks (procs [1, 1, 1, 2], both on the one GPU): the
#                  2-rank run refreshes the t halo layers of the working copy through its pack/exchange/unpack kernels,
#                  the 1-rank run wraps periodically; the printed plaquettes (12 digits) of every sweep must agree.
#   4. Prints a table (also $OUT/summary.txt) and the heatbath_* kernel rows; results.tar.gz in $OUT.
# Exit status: 0 when the build, every test and the split_t comparison passed (the timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, EMPRISM_DEVICE_JOBS, EMPRISM_DEVICE_BUILD_DIR, EMPRISM_DEVICE_BACKEND=CPU
# (trying it without a GPU), EMPRISM_DEVICE_EXTENTS (default "32, 32, 32, 64"), EMPRISM_DEVICE_FORCE_DEBS=1.
set -uo pipefail
EMPRISM_DEVICE_NAME=heatbath
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 2. tests ----
if tests_wanted; then
  device_ctest heatbath -R '^(GpuHeatbath|HeatbathDevice|Heatbath)\.' -j 4
  grep -E "(GpuHeatbath|HeatbathDevice)\." "$out/ctest_heatbath.log" | sed 's/^ *[0-9/]* *Test *#[0-9]*: /  /' |
    tee -a "$summary"
fi
say "tests done ($(elapsed))"

# ---- 3. timings ----
exe=$build/emprism-mpi
sweeps=11
cat > "$work/hb_32x64.toml" << EOF
[lattice]
extents = [$extents]

[gauge]
source = "heatbath"
beta = 6.0
sweeps = $sweeps
or_per_sweep = 4
seed = 2026

[dirac]
kappa = 0.12
csw = 1.0

[solver]
tol = 1e-3
max_iter = 200

[output]
file = "hb_32x64.h5"
overwrite = true

[metrics]
peak = false

[[solve]]
name = "point"
type = "point"
site = [0, 0, 0, 0]
spin = 0
colour = 0
EOF
cp "$repo/jobs/examples/quickstart.toml" "$work/quickstart.toml"
run() {  # run NAME [RANKS]: NAME.toml on RANKS (default 1) ranks, not bound to a core; leaves NAME.log and NAME.rc
  (cd "$work" && OMP_NUM_THREADS=$jobs timeout 300 mpiexec -n "${2:-1}" --bind-to none "$exe" "$1.toml" > "$1.log" 2>&1
  echo $? > "$1.rc")
}
per_sweep() {  # per_sweep NAME K: the cumulative "s/sweep" of the log's heatbath sweep K
  sed -n "s/.*heatbath sweep $2 of [0-9]*: plaquette [0-9.]*, \([0-9.]*\) s\/sweep.*/\1/p" "$work/$1.log" | head -1
}
run hb_32x64
run quickstart
sed -e 's/^extents = .*/extents = [16, 16, 16, 32]/' -e 's/^sweeps = .*/sweeps = 3/' -e 's/hb_32x64.h5/split.h5/' \
  "$work/hb_32x64.toml" > "$work/split_1.toml"
sed 's/^extents = .*/&\nprocs = [1, 1, 1, 2]/' "$work/split_1.toml" > "$work/split_2.toml"
run split_1
run split_2 2
say "timings done ($(elapsed))"

# ---- 4. table ----
say ""
say "heatbath, backend $backend"
s1=$(per_sweep hb_32x64 1)
sn=$(per_sweep hb_32x64 $sweeps)
wall=$(awk -v a="$s1" -v b="$sn" -v n="$sweeps" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.1f", 1000 * (b * n - a) / (n - 1) }')
rows=$(grep -E "^\[.*\] heatbath_(update|overrelax|halo|reunitarise|plaquette) " "$work/hb_32x64.log" |
  sed 's/^.*\] //' | awk -v n="$sweeps" '{ s += $2 * $3 } END { if (s > 0) printf "%.1f", s / n; else print "-" }')
plaq=$(sed -n "s/.*heatbath sweep $sweeps of [0-9]*: plaquette \([0-9.]*\),.*/\1/p" "$work/hb_32x64.log" | head -1)
say "hb_32x64 [$extents] (exit $(cat "$work/hb_32x64.rc")): ${wall} ms per compound sweep (wall, sweeps 2..$sweeps);" \
  "${rows} ms per sweep in the heatbath_* kernel rows; plaquette after $sweeps sweeps ${plaq:--}; target <= 50 ms"
grep -E "^\[.*\] heatbath_[a-z]* " "$work/hb_32x64.log" | sed 's/^.*\] /  /' | tee -a "$summary"
grep -E "set-up: " "$work/hb_32x64.log" | sed 's/^.*\] /  /' | tee -a "$summary"
q=$(per_sweep quickstart 50)
qt=$(awk -v a="$q" 'BEGIN { if (a == "") print "-"; else printf "%.2f", 50 * a }')
say "quickstart (exit $(cat "$work/quickstart.rc")): thermalisation 50 sweeps ${qt} s (${q:--} s/sweep)"
grep -E "set-up: " "$work/quickstart.log" | sed 's/^.*\] /  /' | tee -a "$summary"
p1=$(grep -o "heatbath sweep [0-9]* of [0-9]*: plaquette [0-9.]*" "$work/split_1.log" | tr '\n' ' ')
p2=$(grep -o "heatbath sweep [0-9]* of [0-9]*: plaquette [0-9.]*" "$work/split_2.log" | tr '\n' ' ')
if [ -n "$p1" ] && [ "$p1" = "$p2" ]; then verdict=agree; else verdict=DIFFER; status=1; fi
say "split_t (exit $(cat "$work/split_1.rc"), $(cat "$work/split_2.rc")): 1 rank and 2 ranks (t split) $verdict:" \
  "${p1:--} / ${p2:--}"
touch "$out/ctest_heatbath.log"
rm -f "$work"/*.h5
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_heatbath.log 2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
