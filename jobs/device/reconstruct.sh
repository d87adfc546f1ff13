#!/usr/bin/env bash
# reconstruct.sh: the GPU checks and timings of compressed links (dirac.reconstruct = 18 | 12 | 8, issue 17) on one
# H100/H200, for the lead.
#
#   bash jobs/device/reconstruct.sh          # from the repository root; results under $OUT (or ./reconstruct_out)
#
# What it does (about 5 minutes of device time on 16 cores; the build is half of it):
#   1. Dependencies the image lacks (toml++, Random123) and the CUDA build for sm_90 (-j16) into build-device/
#      (jobs/device/common.sh).
#   2. ctest -L gpu (GpuReconstruct.*: the device operator with links of 12 and 8 reals in fp32 and fp64 against the
#      CPU reference, forced halo included; every other GPU test), then the CPU suite's Reconstruct.* and
#      LinkFormat.* tests, which run on the GPU in this build (packed operators against the 18-real one).
#   3. jobs/bench/bench_32x64.toml (32^3x64, random gauge width 0.3, csw 1, fp32 CG to 1e-5, the measured peak) once
#      per reconstruct 18, 12, 8 (--set dirac.reconstruct=N): the kernel table's eo_clover row (us per call, GB/s in
#      the minimum bytes of its own format, % of the measured peak) and oe_clover's, the CG iterations and time.
#   4. With the QUDA kit at .peers/quda (the lead copies /work/shared/peers/quda there): its ONLY="dslash" runs
#      (prebuilt binaries; fp32 Dslash with recon 18 and 12, MatPC recon 18) in the same session, their table.
#   5. Prints the table; leaves summary.txt and results.tar.gz in $OUT.
# Exit status: 0 when the build, every test and the three runs passed (the timings are reported, not judged).
# Optional: EMPRISM_DEVICE_SKIP_TESTS=1, EMPRISM_DEVICE_SKIP_QUDA=1, EMPRISM_DEVICE_QUDA_BUDGET (s, default 170),
# and common.sh's EMPRISM_DEVICE_JOBS, EMPRISM_DEVICE_BUILD_DIR, EMPRISM_DEVICE_BACKEND, EMPRISM_DEVICE_EXTENTS.
set -uo pipefail
EMPRISM_DEVICE_NAME=reconstruct
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 2. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu
  grep -E "GpuReconstruct\." "$out/ctest_gpu.log" | sed 's/^ *[0-9/]* *Test *#[0-9]*: /  /' | tee -a "$summary"
  device_ctest cpu_suite -R '^(Reconstruct|LinkFormat)\.' -j 8
fi
say "tests done ($(elapsed))"

# ---- 3. timings ----
exe=$build/emprism-mpi
sed -e "s/^extents = .*/extents = [$extents]/" "$repo/jobs/bench/bench_32x64.toml" > "$work/bench.toml"
for rc in 18 12 8; do
  (cd "$work" && OMP_NUM_THREADS=$jobs timeout 240 mpiexec -n 1 --bind-to none "$exe" bench.toml \
    --set "dirac.reconstruct=$rc" --set "output.file=\"r$rc.h5\"" > "r$rc.log" 2>&1
  echo $? > "r$rc.rc")
  [ "$(cat "$work/r$rc.rc")" = 0 ] || status=1
done
say "timings done ($(elapsed))"

# ---- 4. QUDA ----
quda=$repo/.peers/quda
if [ "${EMPRISM_DEVICE_SKIP_QUDA:-0}" != 1 ] && [ -f "$quda/all.sh" ]; then
  ONLY="dslash" TOTAL_BUDGET=${EMPRISM_DEVICE_QUDA_BUDGET:-170} RESULTS_DIR=/tmp/quda-results SAVE_BIN=0 \
    bash "$quda/all.sh" "$out/quda" > "$out/quda.log" 2>&1
  say "QUDA dslash (exit $?, $(elapsed)):"
  tee -a "$summary" < "$out/quda/summary.txt" 2> /dev/null || say "  no summary (see quda.log)"
else
  say "QUDA: not run (no kit at .peers/quda, or EMPRISM_DEVICE_SKIP_QUDA=1)"
fi

# ---- 5. table ----
row() {  # row LOG KERNEL: "us/call GB/s %peak" from the kernel table (ms/call is its third column)
  grep -E "\] $2 +[0-9]" "$1" | tail -1 | awk '{ printf "%9.1f %9.1f %7.1f", 1e3 * $(NF - 3), $(NF - 1), $NF }'
}
say ""
say "lattice [$extents], backend $backend, fp32; GB/s in the minimum bytes of each format (links 18, 12, 8 reals)"
say "recon   eo_clover: us/call      GB/s  %peak   oe_clover: us/call      GB/s  %peak   CG"
for rc in 18 12 8; do
  log=$work/r$rc.log
  cg=$(grep -m1 -E "solve '[a-z_]*': converged in" "$log" | sed 's/.*converged in //')
  say "$(printf '%5s' "$rc")   $(row "$log" eo_clover)          $(row "$log" oe_clover)   ${cg:-(exit $(cat "$work/r$rc.rc"))}"
done
grep -m1 -E "empirical peak bandwidth" "$work/r18.log" | sed 's/^.*\] /  /' | tee -a "$summary"
touch "$out/ctest_gpu.log" "$out/ctest_cpu_suite.log"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt ctest_gpu.log ctest_cpu_suite.log \
  2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
