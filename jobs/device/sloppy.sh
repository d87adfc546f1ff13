#!/usr/bin/env bash
# sloppy.sh: the GPU checks and timings of the mixed-precision solver's sloppy operators (solver.sloppy = "single",
# "single_fp64" and "half", issue 17 items 1-3) on one H100/H200, for the lead. (It replaces f32d.sh and half.sh, whose
# runs it holds; BENCHMARKS.md names them where they were used.)
#
#   bash jobs/device/sloppy.sh        # from the repository root; results under $OUT (or ./sloppy_out)
#
# What it does (about 6-7 minutes of device time on 16 cores; the build is about half of it):
#   1. Dependencies the image lacks and the CUDA build for sm_90 (-j16) into build-device/ (jobs/device/common.sh).
#   2. ctest: GpuF32d.* and GpuHalf.* (label gpu: the device's fp32/fp64 kernels against its fp64 operator on the
#      same fp32 fields; the half round trip within the fixed-point step, A^-1 packed to 16 bits within half a step
#      of each block's norm, the half kernels against the fp32 ones within the rounding of half; links of 18 and 12
#      reals; mixed/single_fp64 within 5% of the double CG's iterations on the unit gauge field, mixed/half solves to
#      1e-10 on unit and random gauge), then the CPU suite's F32dOperator.*, F32dSloppy.*, HalfStorage.*,
#      HalfClover.*, HalfOperator.*, HalfSloppy.* and ReliableUpdates.* tests, which run on the GPU in this build.
#   3. The unit-gauge problem of jobs/device/time_to_solution.sh (32^3x64, kappa 0.124, csw 1, antiperiodic t, one
#      random source, seed 5, fp64 result to 1e-10): double, then mixed with solver.sloppy = "single", "single_fp64"
#      and "half", links of 18 and 12 reals, with the measured peak: the solve's CG seconds, iterations, reliable
#      updates, true residual, and the kernel table's rows of the hot kernels (eo_clover, oe_clover, eo_clover_dag,
#      oe_clover_dag, blas_cg_update, blas_cg_solution, blas_axpby, or on one rank oe_clover_dag_update (with the
#      residual update) and blas_cg_direction; _f32d and _half
#      for those operators; the rows without suffix also hold the few fp64 applications of the reliable updates;
#      reduce_finish, the reductions' finishing kernels): us per call, GB/s in the minimum bytes of its own format,
#      % of the measured peak (the half operator's minimum bytes count A^-1 in 16 bits, 152 bytes per site).
#   4. Prints the table; leaves summary.txt and results.tar.gz in $OUT.
# What to look for: single_fp64's iterations within 5% of double's (single: 13-23% more on the CPU from 8^3x16 to
# 16^3x32, 14-17% on the H100 and H200 at 32^3x64; half a few more than single); the seconds of the three against
# each other and against double (on the H100 and H200 the hot kernels should stay memory-bound: a % of peak well below
# 90 says the arithmetic, fp64 or the dequantisation of half, costs more than the bytes save).
# Exit status: 0 when the build, every test and the runs passed (the timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, and common.sh's EMPRISM_DEVICE_JOBS, EMPRISM_DEVICE_BUILD_DIR,
# EMPRISM_DEVICE_BACKEND, EMPRISM_DEVICE_EXTENTS.
set -uo pipefail
EMPRISM_DEVICE_NAME=sloppy
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 2. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu -R '^(GpuF32d|GpuHalf)\.' -j 4
  suites='F32dOperator|F32dSloppy|HalfStorage|HalfClover|HalfOperator|HalfSloppy|ReliableUpdates'
  device_ctest sloppy -R "^($suites)\." -j 4
fi
say "tests done ($(elapsed))"

# ---- 3. the unit-gauge solves ----
run() {  # run NAME PRECISION SLOPPY RECONSTRUCT: the unit-gauge solve to 1e-10 (common.sh's unit_solve)
  unit_solve "$1" true "$4" "precision = \"$2\"
sloppy = \"$3\"
tol = 1e-10"
}
names=(double18 single18 f32d18 half18 double12 single12 f32d12 half12)
run double18 double single 18
run single18 mixed single 18
run f32d18 mixed single_fp64 18
run half18 mixed half 18
run double12 double single 12
run single12 mixed single 12
run f32d12 mixed single_fp64 12
run half12 mixed half 12
say "runs done ($(elapsed))"

# ---- 4. table ----
row() { solve_row "$1" "$2" 26; }  # row NAME LABEL (common.sh)
say ""
say "unit gauge, [$extents], kappa 0.124, csw 1, antiperiodic t, fp64 result to 1e-10"
printf '%-26s %8s %6s %8s %10s\n' "precision/sloppy, reconstruct" seconds iter updates true_res | tee -a "$summary"
for rc in 18 12; do
  row double$rc "double, $rc"
  row single$rc "mixed/single, $rc"
  row f32d$rc "mixed/single_fp64, $rc"
  row half$rc "mixed/half, $rc"
done
say ""
say "kernel rows of the hot kernels (the log's metrics table):"
hot="(eo_clover|oe_clover|eo_clover_dag|oe_clover_dag|oe_clover_dag_update|blas_cg_update|blas_cg_solution"
hot+="|blas_cg_direction|blas_axpby)"
hot+="(_half|_f32d)?|reduce_finish"
for n in "${names[@]}"; do
  grep -h -E "^\[.*\] (peak|$hot) " "$work/$n.log" | sed "s/^.*\] /  $n: /" | tee -a "$summary"
done
touch "$out/ctest_gpu.log" "$out/ctest_sloppy.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_sloppy.log \
  2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
