#!/usr/bin/env bash
# half.sh: the GPU checks and timings of half-precision sloppy fields (solver.sloppy = "half", issue 17 items 2 and 3:
# 16-bit spinors and the half operator's A^-1 in 16 bits) on one H100/H200, for the lead.
#
#   bash jobs/device/half.sh          # from the repository root; results under $OUT (or ./half_out)
#
# What it does (about 4-5 minutes of device time on 16 cores; the build is half of it):
#   1. Dependencies the image lacks (toml++, Random123) and the CUDA build for sm_90 (-j16) into build-device/
#      (jobs/device/common.sh).
#   2. ctest: GpuHalf.* (label gpu: device round trip within the fixed-point step, A^-1 packed to 16 bits on the
#      device within half a step of each block's norm, the half kernels against the fp32 ones with links of 18 and 12
#      reals within the rounding of half and the derived error of the 16-bit A^-1, mixed/half solves to 1e-10 on unit
#      and random gauge), then the CPU suite's HalfStorage.*, HalfClover.*, HalfOperator.*, HalfSloppy.* and
#      ReliableUpdates.* tests, which run on the GPU in this build.
#   3. The unit-gauge problem of jobs/device/time_to_solution.sh (32^3x64, kappa 0.124, csw 1, antiperiodic t, one
#      random source, seed 5, fp64 result to 1e-10), mixed precision with solver.sloppy = "single" and "half", links of
#      18 and 12 reals, with the measured peak: the solve's CG seconds, iterations, reliable updates, true residual,
#      and the kernel table's rows of the sloppy operator (half: eo_clover_half, oe_clover_half, eo_clover_dag_half,
#      oe_clover_dag_half, blas_cg_update_half, blas_axpby_half; single: the same without _half, which also hold the
#      few fp64 applications of the reliable updates): us per call, GB/s in the minimum bytes of its own format, % of
#      the measured peak.
#   4. Prints the table; leaves summary.txt and results.tar.gz in $OUT.
# What to look for (the half operator's minimum bytes per site now count A^-1 in 16 bits, 152 instead of 288 bytes:
# eo_clover_half 840 / 648 bytes with links 18 / 12, oe_clover_half 960 / 768 with the fused |v|^2): BENCHMARKS.md's
# last half numbers (H100, 2026-11-24, links 12, fp32 A^-1, second pass with a tune cache) are eo_clover_half 0.298 ms,
# oe_clover_half 0.340 ms, eo_clover_dag_half 0.297 ms, oe_clover_dag_half 0.210 ms (~90% of peak each) and mixed/half
# 0.280 s in 161 iterations (links 18: 0.341 s, 161). At the same % of peak the 16-bit A^-1 would give eo_clover_half
# ~0.25 ms, oe_clover_half ~0.29 ms, eo_clover_dag_half ~0.25 ms (oe_clover_dag_half reads no clover: unchanged), and
# the iterations within a few of 161; a % of peak well below 90 says the dequantisation costs more than the bytes save
# (registers: kernels/register_budgets.txt). For a second pass like BENCHMARKS.md's, set EMPRISM_TUNE_CACHE to a file
# and run the script twice (EMPRISM_DEVICE_SKIP_TESTS=1 the second time).
# Exit status: 0 when the build, every test and the four runs passed (the timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, and common.sh's EMPRISM_DEVICE_JOBS, EMPRISM_DEVICE_BUILD_DIR,
# EMPRISM_DEVICE_BACKEND, EMPRISM_DEVICE_EXTENTS.
set -uo pipefail
EMPRISM_DEVICE_NAME=half
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 2. tests ----
if [ "${EMPRISM_DEVICE_SKIP_TESTS:-0}" = 1 ]; then
  say "tests: skipped (EMPRISM_DEVICE_SKIP_TESTS=1)"
else
  device_ctest gpu -L gpu -R '^GpuHalf\.' -j 4
  device_ctest half -R '^(HalfStorage|HalfClover|HalfOperator|HalfSloppy|ReliableUpdates)\.' -j 4
fi
say "tests done ($(elapsed))"

# ---- 3. the unit-gauge solves ----
run() {  # run NAME SLOPPY RECONSTRUCT: the mixed unit-gauge solve to 1e-10 (common.sh's unit_solve)
  unit_solve "$1" true "$3" "precision = \"mixed\"
sloppy = \"$2\"
tol = 1e-10"
}
run single18 single 18
run half18 half 18
run single12 single 12
run half12 half 12
say "runs done ($(elapsed))"

# ---- 4. table ----
row() { solve_row "$1" "$2" 22; }  # row NAME LABEL (common.sh)
say ""
say "unit gauge, [$extents], kappa 0.124, csw 1, antiperiodic t, mixed precision, fp64 result to 1e-10"
printf '%-22s %8s %6s %8s %10s\n' "sloppy, reconstruct" seconds iter updates true_res | tee -a "$summary"
row single18 "single, 18"
row half18 "half, 18"
row single12 "single, 12"
row half12 "half, 12"
say ""
say "kernel rows of the sloppy operator (the log's metrics table):"
for n in single18 half18 single12 half12; do
  grep -h -E "^\[.*\] (peak|(eo_clover|oe_clover|eo_clover_dag|oe_clover_dag|blas_cg_update|blas_cg_solution|blas_cg_direction|blas_axpby)(_half)?|reduce_finish) " \
    "$work/$n.log" | sed "s/^.*\] /  $n: /" | tee -a "$summary"
done
touch "$out/ctest_gpu.log" "$out/ctest_half.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_half.log 2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
