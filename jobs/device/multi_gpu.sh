#!/usr/bin/env bash
# multi_gpu.sh: the GPU checks and the benchmark of the halo exchange (issue 12) on one H100/H200, for the lead.
#
#   bash jobs/device/multi_gpu.sh            # from the repository root; results under $OUT (or ./multi_gpu_out)
#
# What it does (about 5-6 minutes of device time on 16 cores):
#   1. Dependencies the image lacks (Ubuntu 24.04 + CUDA 13: toml++, Random123): unpacks the Debian packages
#      carried in .debs/ (libtomlplusplus-dev, libtomlplusplus3, librandom123-dev; `apt-get download` them) with
#      dpkg -x into /tmp/emprism-deps, points pkg-config, CMake and the loader at it. Installed ones are used as are.
#   2. Builds the CUDA backend for sm_90 (-j16) into build-device/.
#   3. ctest -L gpu (the kernels against the CPU reference; test_distributed_mpi on the device with 1 rank and
#      force_halo in x y z t, 2 and 4 ranks sharing the GPU, every transport, every candidate policy bitwise equal
#      to the tuned one), then the halo, operator, solver, transport CLI and distributed MPI tests of the CPU
#      suite, which run on the GPU in this build.
#   4. The benchmark: 32^3x64, fp32, random gauge (width 1, kappa 0.12, csw 1, as shared/peers/side-by-side
#      k_dslash.toml), a warm-up solve (the halo policy is tuned there) then eight timed ones; ms per CG iteration
#      of the timed ones (their seconds over their iterations) for: no halos; comm.force_halo in x y z t with
#      transport staged, peer and auto; gpu_aware (expected: refused with exit 2, this Open MPI is not CUDA-aware);
#      2 ranks sharing the GPU (lattice.procs = [1, 1, 1, 2]) with auto and staged, and auto again under CUDA MPS
#      when nvidia-cuda-mps-control starts (stopped afterwards).
#   5. Prints a table (ms per iteration, ratio to no halos, the policy each run chose, /metrics/comm rows from
#      the logs) and leaves summary.txt plus results.tar.gz (inputs, logs, HDF5 files, test logs) in $OUT.
# Targets (issue 12, one GPU, force_halo in x y z t): peer <= 1.15 x and staged <= 1.5 x the no-halo time per
# iteration. Exit status: 0 when the build and every test passed (the ratios are reported, not judged).
# For trying the script elsewhere (all optional): EMPRISM_DEVICE_BACKEND=CPU (default CUDA),
# EMPRISM_DEVICE_EXTENTS="8, 8, 8, 16" (default "32, 32, 32, 64"), EMPRISM_DEVICE_FORCE_DEBS=1 (unpack the .debs
# even where the packages are installed), EMPRISM_DEVICE_SKIP_TESTS=1, EMPRISM_DEVICE_JOBS (default 16),
# EMPRISM_DEVICE_BUILD_DIR (default build-device).
set -uo pipefail
EMPRISM_DEVICE_NAME=multi_gpu
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---- 3. tests ----
if tests_wanted; then
  device_ctest gpu -L gpu -V
  grep -E ": grid |not available here" "$out/ctest_gpu.log" | sed 's/^[0-9]*: /  /' | tee -a "$summary"
  # The halo, operator, solver, transport CLI and distributed MPI tests on the GPU build.
  device_ctest cpu_suite -R '^(Halo|Dirac|Solver)\.|^Cli\..*(Transport|ForcedHalo|Reductions)|^Mpi\.Distributed' -j 8
fi
say "tests done ($(elapsed))"

# ---- 4. benchmark ----
exe=$build/emprism-mpi
input() {  # input NAME COMM_LINES PROCS_LINE
  cat > "$work/$1.toml" << EOF
[lattice]
extents = [$extents]
$3
[comm]
$2
[gauge]
source = "random"
width = 1.0
seed = 11
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "single"
tol = 1e-5
max_iter = 5000
[log]
progress_every = 100000
[metrics]
peak = false
[output]
file = "$1.h5"
overwrite = true
fields = false
[[solve]]
name = "warmup"
type = "random"
seed = 4
EOF
  for k in 1 2 3 4 5 6 7 8; do  # eight timed solves: about 100 CG iterations, the seconds' rounding below 0.5%
    printf '[[solve]]\nname = "timed%d"\ntype = "random"\nseed = %d\n' "$k" $((4 + k)) >> "$work/$1.toml"
  done
}
# run NAME RANKS: runs the input NAME.toml; prints nothing, leaves NAME.log and NAME.rc
run() {
  (cd "$work" && timeout 240 mpiexec -n "$2" --oversubscribe "$exe" "$1.toml" > "$1.log" 2>&1
  echo $? > "$1.rc")
}
ms_per_it() {  # from the timed solves' "converged in N iterations (...), ..., S s", summed over the eight
  sed -n "s/.*solve 'timed[0-9]*': converged in \([0-9]*\) iterations.*, \([0-9.]*\) s$/\1 \2/p" "$work/$1.log" |
    awk '{ n += $1; s += $2 } END { if (n > 0) printf "%.3f", 1000 * s / n }'
}
input nohalo "" ""
input fh_staged $'force_halo = [true, true, true, true]\ntransport = "staged"' ""
input fh_peer $'force_halo = [true, true, true, true]\ntransport = "peer"' ""
input fh_auto $'force_halo = [true, true, true, true]\ntransport = "auto"' ""
input fh_gpu_aware $'force_halo = [true, true, true, true]\ntransport = "gpu_aware"' ""
input r2_auto 'transport = "auto"' "procs = [1, 1, 1, 2]"
input r2_staged 'transport = "staged"' "procs = [1, 1, 1, 2]"
input r2_mps 'transport = "auto"' "procs = [1, 1, 1, 2]"
# Three rounds of the one-rank runs, interleaved (the time per iteration drifts by a few % between runs: each ratio is
# taken within a round, the table shows the median of the three).
for k in 2 3; do
  for r in nohalo fh_staged fh_peer fh_auto; do
    sed "s/^file = \"$r.h5\"/file = \"${r}_$k.h5\"/" "$work/$r.toml" > "$work/${r}_$k.toml"
  done
done
for k in 1 2 3; do
  for r in nohalo fh_staged fh_peer fh_auto; do
    if [ $k = 1 ]; then run $r 1; else run ${r}_$k 1; fi
  done
done
run fh_gpu_aware 1
for r in r2_auto r2_staged; do run $r 2; done
mps=no
export CUDA_MPS_PIPE_DIRECTORY=/tmp/emprism-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/emprism-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if command -v nvidia-cuda-mps-control > /dev/null && nvidia-cuda-mps-control -d > "$work/mps_start.log" 2>&1; then
  mps=yes
  run r2_mps 2
  echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
  sleep 1
else
  echo "MPS did not start" > "$work/r2_mps.log"
  echo - > "$work/r2_mps.rc"
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
say "benchmark done ($(elapsed)); MPS: $mps"

# ---- 5. table ----
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
ratio_of() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
base=$(ms_per_it nohalo)
say ""
say "lattice [$extents] fp32, backend $backend; ms per CG iteration of the timed solves (after a warm-up solve that tunes the policy)"
printf "%-14s %4s %20s %7s  %s\n" run exit ms/it ratio "halo policy chosen" | tee -a "$summary"
for r in nohalo fh_staged fh_peer fh_auto fh_gpu_aware r2_auto r2_staged r2_mps; do
  ms=$(ms_per_it $r)
  ratio=-
  [ -n "$ms" ] && [ -n "$base" ] && ratio=$(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
  case $r in nohalo | fh_staged | fh_peer | fh_auto)  # the median over the rounds of each round's own ratio
    r1=$(ratio_of "$ms" "$base")
    r2=$(ratio_of "$(ms_per_it ${r}_2)" "$(ms_per_it nohalo_2)")
    r3=$(ratio_of "$(ms_per_it ${r}_3)" "$(ms_per_it nohalo_3)")
    ms="$ms/$(ms_per_it ${r}_2)/$(ms_per_it ${r}_3)"
    ratio=$(median3 "${r1:-inf}" "${r2:-inf}" "${r3:-inf}")
    ;;
  esac
  policy=$(sed -n 's/.*halo policy (fp32 operator): \([^;]*; [a-z ]*\).*/\1/p' "$work/$r.log" | head -1)
  [ $r = fh_gpu_aware ] && policy=$(grep -o "comm.transport: .*" "$work/$r.log" | head -1 | cut -c1-90)
  printf "%-14s %4s %20s %7s  %s\n" $r "$(cat "$work/$r.rc" 2> /dev/null)" "${ms:--}" "$ratio" "$policy" |
    tee -a "$summary"
done
say "targets: fh_peer <= 1.15, fh_staged <= 1.5 (ratio to nohalo); fh_gpu_aware must exit 2 (MPI not CUDA-aware)"
say "(one-rank rows: ms/it of rounds 1/2/3, ratio = the median of the three rounds' ratios to that round's nohalo)"
say ""
say "per run: the policy tuning (slowest-rank ms per application of each candidate), /metrics/comm of rank 0"
say "(exchange = start of the exchange to faces in place, exposed = the compute stream waiting for them after the"
say "interior), and the reductions (global sums per CG iteration, time waiting for the device's partial sums)"
for r in fh_staged fh_peer fh_auto r2_auto r2_staged r2_mps; do
  grep -E "halo policy \(fp32|\] halo [xyzt] \(fp32\)|per CG iteration" "$work/$r.log" 2> /dev/null |
    sed -e "s/^.*\] /  $r: /" -e 's/timing summary (rank 0): //' | tee -a "$summary"
done
grep -h "ERROR" "$work/fh_gpu_aware.log" 2> /dev/null | sed 's/^/  fh_gpu_aware: /' | tee -a "$summary"
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log ctest_gpu.log ctest_cpu_suite.log summary.txt \
  2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
