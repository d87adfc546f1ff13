#!/usr/bin/env bash
# time_to_solution.sh: issue 17's time to solution, EmPRiSM-MPI against QUDA on the same GPU in the same call, for the
# lead.
#
#   bash jobs/device/time_to_solution.sh     # from the repository root; results under $OUT (or ./time_to_solution_out)
#
# Needs the QUDA kit (the peers kit "quda", with its prebuilt/ binaries) copied to .peers/quda in the repository
# (git-ignored; carried with the tree), or its path in EMPRISM_QUDA_KIT.
# What it does (about 8-9 minutes of device time on 16 cores):
#   1. Dependencies and the CUDA backend for sm_90 (jobs/device/common.sh), about 2-3 minutes.
#   2. ctest -L gpu (every GPU test) and the CPU suite's Solver.* and ReliableUpdates.* tests (on the GPU in this
#      build: mixed-precision iteration counts within 5% of double, true residuals, solutions).
#   3. Ours: the unit-gauge problem (32^3x64, kappa 0.124, csw 1, antiperiodic t, one random source, seed 5) as in
#      the peers kit's side-by-side inputs s_unit_*.toml: mixed (fp64 result to 1e-10, reliable updates) with links of
#      18 reals and of 12 reals (dirac.reconstruct = 12: both operators, the fp32 one is the CG's), mixed with
#      solver.sloppy = "single_fp64" and "half" (links of 12), double to 1e-10 (links of 18 and 12), single to 1e-6,
#      and the mixed and double solves to 1e-10 again with solver.stop = "normal" (QUDA's stopping criterion, for
#      iteration counts one to one); each run once with two random sources (seeds 5 and 6), the second solve's CG
#      seconds and iterations from its log line (the first solve tunes the kernels, as QUDA's first source does).
#   4. QUDA's (its all.sh with ONLY="inv_unit_double_single inv_unit_double_half inv_unit_double_double
#      inv_unit_single_single" in the time left): seconds and iterations of the second solve (QUDA's "Done:" line).
#   5. One table of both; summary.txt and results.tar.gz (logs) in $OUT.
# Exit status: 0 when the build, the tests and our thirteen solves passed (timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, EMPRISM_DEVICE_SKIP_QUDA=1, EMPRISM_QUDA_KIT, EMPRISM_DEVICE_JOBS (16),
# EMPRISM_DEVICE_BUILD_DIR (build-device), EMPRISM_DEVICE_BACKEND=CPU (trying it without a GPU), EMPRISM_DEVICE_EXTENTS
# ("32, 32, 32, 64"), EMPRISM_TTS_BUDGET (seconds for the whole script, default 450: QUDA gets what is left),
# EMPRISM_TTS_QUDA_ONLY (QUDA's runs, default the four above).
set -uo pipefail
EMPRISM_DEVICE_NAME=time_to_solution
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
budget=${EMPRISM_TTS_BUDGET:-450}

# ---- 2. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu -j 4
  device_ctest solver -R '^(Solver|ReliableUpdates)\.' -j 4
fi
say "tests done ($(elapsed))"

# ---- 3. ours ----
ours() {  # ours NAME PRECISION TOL [RECONSTRUCT [STOP [SLOPPY]]]: the unit-gauge solve (common.sh's unit_solve)
  local sloppy=""
  [ -n "${6:-}" ] && sloppy="
sloppy = \"$6\""
  unit_solve "$1" false "${4:-18}" "precision = \"$2\"
tol = $3
stop = \"${5:-full}\"$sloppy" 2
}
ours mixed mixed 1e-10
ours mixed12 mixed 1e-10 12
ours mixed12f mixed 1e-10 12 full single_fp64
ours mixed12h mixed 1e-10 12 full half
ours double double 1e-10
ours double12 double 1e-10 12
ours mixed_n mixed 1e-10 18 normal
ours double_n double 1e-10 18 normal
ours mixed12_n mixed 1e-10 12 normal
ours mixed12f_n mixed 1e-10 12 normal single_fp64
ours mixed12h_n mixed 1e-10 12 normal half
ours double12_n double 1e-10 12 normal
ours single single 1e-6
say "ours done ($(elapsed))"

# ---- 4. QUDA ----
kit=${EMPRISM_QUDA_KIT:-$repo/.peers/quda}
qres=$work/quda-results
left=$((budget - $(date +%s) + t0))
if [ "${EMPRISM_DEVICE_SKIP_QUDA:-0}" = 1 ]; then
  say "QUDA: skipped (EMPRISM_DEVICE_SKIP_QUDA=1)"
elif [ ! -f "$kit/all.sh" ]; then
  say "QUDA: no kit at $kit (copy the QUDA kit there, or set EMPRISM_QUDA_KIT)"
elif [ "$left" -lt 60 ]; then
  say "QUDA: skipped, only ${left} s of the ${budget} s budget left"
else
  ONLY=${EMPRISM_TTS_QUDA_ONLY:-inv_unit_double_single inv_unit_double_half inv_unit_double_double inv_unit_single_single} \
    TOTAL_BUDGET=$left RESULTS_DIR=$qres SAVE_BIN=0 bash "$kit/all.sh" "$out/quda" > "$out/quda.log" 2>&1
  say "QUDA: all.sh exit $? ($(elapsed))"
fi

# ---- 5. table ----
ours_row() {  # ours_row NAME LABEL: common.sh's solve_row of the second source (tuned), code column "EmPRiSM"
  solve_row "$1" "$(printf '%-10s %s' EmPRiSM "$2")" 37 noise2
}
quda_row() {  # quda_row TEST LABEL: from QUDA's results.tsv (iter, secs: the last solve's "Done:" line)
  local row
  row=$(awk -F'\t' -v t="$1" '$1 == t { print $2, $18, $17, $20 }' "$qres/results.tsv" 2> /dev/null)
  # shellcheck disable=SC2086  # status secs iter res
  set -- "$1" "$2" $row
  printf '%-10s %-26s %8s %6s %8s %10s  %s\n' QUDA "$2" "${4:--}" "${5:--}" - "${6:--}" "${3:-not run}" |
    tee -a "$summary"
}
say ""
say "unit gauge, [$extents], kappa 0.124, csw 1, antiperiodic t; the second source of each run (kernels tuned)"
printf '%-10s %-26s %8s %6s %8s %10s  %s\n' code "run" seconds iter updates true_res note | tee -a "$summary"
ours_row mixed "mixed (fp64/fp32) 1e-10"
ours_row mixed12 "mixed (fp64/fp32) r12 1e-10"
ours_row mixed12f "mixed/single_fp64 r12 1e-10"
ours_row mixed12h "mixed/half r12 1e-10"
quda_row inv_unit_double_single "double/single r12 1e-10"
quda_row inv_unit_double_half "double/half r12 1e-10"
ours_row double "double 1e-10"
ours_row double12 "double r12 1e-10"
quda_row inv_unit_double_double "double/double r12 1e-10"
ours_row mixed_n "mixed 1e-10 stop=normal"
ours_row double_n "double 1e-10 stop=normal"
ours_row mixed12_n "mixed r12 stop=normal"
ours_row mixed12f_n "mixed/single_fp64 r12 normal"
ours_row mixed12h_n "mixed/half r12 stop=normal"
ours_row double12_n "double r12 stop=normal"
ours_row single "single 1e-6"
quda_row inv_unit_single_single "single/single r12 1e-6"
say "(ours: CG seconds of the second solve's log line, the first tuned the kernels; QUDA: invertQuda total incl."
say " host transfers; true_res: ours |b-Mx|/|b| of the full system, QUDA's that of its normal system; stop=normal:"
say " ours stopped by QUDA's criterion, the normal system's true residual <= tol, its true_res still that of the full"
say " system)"
for m in mixed mixed12; do
  grep -h -E "^\[.*\] (eo_clover|oe_clover|oe_clover_dag_update|blas_cg_update|blas_cg_solution|blas_cg_direction) " "$work/$m.log" | sed "s/^.*\] /  $m: /" |
    tee -a "$summary"
done
touch "$out/ctest_gpu.log" "$out/ctest_solver.log" "$out/quda.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_solver.log \
  quda.log 2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
