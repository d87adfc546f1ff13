#!/usr/bin/env bash
# profile.sh: hardware counters of the hot kernels (Nsight Compute) on one H100/H200, ours and QUDA's, for the lead:
# what the DRAM really moves per call against our minimum bytes, the L2 hit rate, the achieved occupancy and the
# registers (issue 17: eo_clover <= 0.95x QUDA, every hot kernel >= 90% of the measured peak).
#
#   bash jobs/device/profile.sh       # from the repository root; results under $OUT (or ./profile_out)
#
# What it does (about 7 minutes on 16 cores, the build half of it):
#   1. Dependencies and the CUDA build for sm_90 (jobs/device/common.sh); ctest -L gpu unless
#      EMPRISM_DEVICE_SKIP_TESTS=1.
#   2. jobs/bench/bench_32x64.toml (fp32, random gauge) with links of 18 and 12 reals: the kernel table (us, GB/s in
#      minimum bytes, % of the measured peak).
#   3. The same input under ncu (--clock-control none: the clocks are left alone), 8 hot-kernel launches after the
#      tuning ones: time, DRAM bytes read and written, L2 hit rate, achieved occupancy, registers per thread, and the
#      bytes that crossed the fabric between the two L2 partitions with its active cycles (on an H200 the fp32
#      kernels with links of 12 and 18 stop at about 2.35 TB/s over it: BENCHMARKS.md, 2026-11-29).
#   4. The half operator: common.sh's unit-gauge problem, mixed/half with links of 12 (its kernel table), then its four
#      interior kernels under ncu with the same metrics, then one launch of oe_clover_half sampled instruction by
#      instruction (ncu's SourceCounters: where its warps wait, analysis/ncu_sass.py).
#   5. With the QUDA kit at .peers/quda: its fp32 Dslash (A_ee^-1 D_eo, recon 18 and 12) once to fill its tune cache,
#      then under ncu with the same metrics; its half Dslash with recon 12 timed by dslash_test (200 calls) and under
#      ncu alike.
#   6. Prints the tables (ncu's CSV, one row per kernel launch and metric, reduced by analysis/ncu_table.py), and the
#      stall reasons and load rounds of oe_clover_half.
# Exit status: 0 when the build, the tests and our runs passed. Optional: EMPRISM_DEVICE_SKIP_TESTS=1,
# EMPRISM_DEVICE_SKIP_QUDA=1, and common.sh's variables.
set -uo pipefail
EMPRISM_DEVICE_NAME=profile
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if tests_wanted; then
  device_ctest gpu -L gpu -j 4
fi

metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
metrics=$metrics,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size
metrics=$metrics,lts__t_sectors_srcunit_ltcfabric.sum,lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed
ncu_run() {  # ncu_run NAME REGEX SKIP COUNT CMD...: ncu's CSV of COUNT launches matching REGEX into $out/NAME.csv
  local name=$1 regex=$2 skip=$3 count=$4
  shift 4
  timeout 300 ncu --clock-control none --csv --print-units base --kernel-name-base demangled -k "regex:$regex" --launch-skip "$skip" \
    --launch-count "$count" --metrics "$metrics" "$@" > "$out/$name.csv" 2> "$out/$name.err"
  say "ncu $name: exit $? ($(elapsed))"
}

exe=$build/emprism-mpi
export EMPRISM_TUNE_CACHE=$work/tunecache.tsv  # the timed run tunes; the run under ncu reuses its choices
sed -e "s/^extents = .*/extents = [$extents]/" "$repo/jobs/bench/bench_32x64.toml" > "$work/bench.toml"
for rc in 18 12; do
  (cd "$work" && timeout 240 mpiexec -n 1 --bind-to none "$exe" bench.toml --set "dirac.reconstruct=$rc" \
    --set "output.file=\"r$rc.h5\"" > "r$rc.log" 2>&1) || status=1
  say "bench r$rc: $(grep -m1 -E "converged in" "$work/r$rc.log" | sed 's/^.*\] //')"
  grep -E "\] (eo|oe)_clover(_dag)? +[0-9]|peak bandwidth" "$work/r$rc.log" | sed 's/^.*\] /  /' | tee -a "$summary"
  (cd "$work" && ncu_run "ours_r$rc" "Dslash|CgUpdate|Axpby" 20 12 "$exe" bench.toml \
    --set "dirac.reconstruct=$rc" --set "output.file=\"n$rc.h5\"" --set "solver.max_iter=40")
done
# The half operator (mixed/half with links of 12, the fastest fp64 solve and the hot kernel furthest below 90%:
# oe_clover_half) on the unit-gauge problem of common.sh's unit_solve: its rows, then its four interior kernels under
# ncu (the tune cache of the timed run: no tuning launches).
half_solver='precision = "mixed"
tol = 1e-10
sloppy = "half"'
unit_solve half12 true 12 "$half_solver" 2
say "half r12: $(grep -m1 -E "solve 'noise2': converged" "$work/half12.log" | sed 's/^.*\] //')"
grep -E "\] (eo|oe)_clover(_dag)?(_update)?_half +[0-9]" "$work/half12.log" | sed 's/^.*\] /  /' | tee -a "$summary"
sed -e 's/^file = .*/file = "half12_ncu.h5"/' "$work/half12.toml" > "$work/half12_ncu.toml"
(cd "$work" && ncu_run ours_half_r12 "DslashInterior<emprism::Epi[A-Za-z]+<emprism::Half" 20 8 "$exe" half12_ncu.toml)
(cd "$work" && timeout 300 ncu --clock-control none --kernel-name-base demangled -k "regex:EpiCloverXpay<emprism::Half" \
  --launch-skip 30 --launch-count 1 --section SourceCounters --section WarpStateStats --import-source no \
  -o "$work/half_oe" "$exe" half12_ncu.toml > "$out/half_oe_sampling.log" 2>&1 &&
  ncu -i "$work/half_oe.ncu-rep" --page source --csv --print-source sass > "$out/half_oe_sass.txt")
say "ncu oe_clover_half sampling: exit $? ($(elapsed))"

quda=$repo/.peers/quda
if [ "${EMPRISM_DEVICE_SKIP_QUDA:-0}" != 1 ] && [ -f "$quda/all.sh" ]; then
  ONLY="dslash_s_r18_Dslash dslash_s_r12_Dslash" DSLASH_NITER=200 TOTAL_BUDGET=150 RESULTS_DIR=/tmp/quda-results \
    SAVE_BIN=0 bash "$quda/all.sh" "$out/quda" > "$out/quda.log" 2>&1
  say "QUDA dslash (exit $?, $(elapsed)):"
  tee -a "$summary" < "$out/quda/summary.txt" 2> /dev/null || say "  no summary (see quda.log)"
  qbuild=$repo/.peers/quda-kit-work/build
  export QUDA_RESOURCE_PATH=/tmp/quda-results/tunecache
  export LD_LIBRARY_PATH="$qbuild/lib:$qbuild/tests${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  dslash=("$qbuild/tests/dslash_test" --dslash-type clover --dim 32 32 32 64 --matpc even-even --verify false --test Dslash)
  for rc in 18 12; do
    ncu_run "quda_r$rc" "[Dd]slash|[Cc]lover" 4 6 "${dslash[@]}" --niter 10 --prec single --recon "$rc"
  done
  timeout 60 "${dslash[@]}" --niter 200 --prec half --recon 12 > "$out/quda_half_r12.log" 2>&1
  say "QUDA half Dslash, recon 12 (exit $?): $(grep -m1 -E "us per kernel call" "$out/quda_half_r12.log")"
  ncu_run quda_half_r12 "[Dd]slash|[Cc]lover" 4 6 "${dslash[@]}" --niter 10 --prec half --recon 12
fi

for f in "$out"/*.csv; do
  [ -s "$f" ] || continue
  say "== $(basename "$f" .csv)"
  /usr/bin/env python3 "$repo/analysis/ncu_table.py" "$f" | tee -a "$summary"
done
if [ -s "$out/half_oe_sass.txt" ]; then
  say "== oe_clover_half, links of 12: where its warps wait"
  /usr/bin/env python3 "$repo/analysis/ncu_sass.py" "$out/half_oe_sass.txt" | tee -a "$summary"
fi
(cd "$out" && tar -czf results.tar.gz work cmake.log build.log summary.txt ./*.csv ./*.err 2> /dev/null)
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
