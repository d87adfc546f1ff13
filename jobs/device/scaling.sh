#!/usr/bin/env bash
# scaling.sh: weak and strong scaling of the CG over the GPUs of one host (issue 13), for the lead; one rank per GPU
# (node-local rank = device), `mpiexec -n N --bind-to none`, every run's solution compared with one GPU's.
#
#   EMPRISM_SCALING_SERIES="weak strong48" bash jobs/device/scaling.sh    # from the repository root; results in $OUT
#
# Series (EMPRISM_SCALING_SERIES, default "weak strong48 strong64 setonix"), each for fp32 (tol 1e-6) and mixed
# fp64/fp32 (tol 1e-10), on every GPU count N in EMPRISM_SCALING_GPUS (default: 1 and every power of two up to the
# GPUs nvidia-smi lists), the N-GPU runs with comm.transport = "auto" (the tuned policy) and forced to "staged" and
# "peer" ("gpu_aware" is tried once and must be refused with exit 2 where MPI is not CUDA-aware):
#   weak      32^3x64 per GPU, the time direction split (global 32^3x(64 N), procs [1, 1, 1, N]); efficiency = ms per
#             iteration on 1 GPU / on N; each N-GPU run is compared with a 1-GPU run of its global lattice;
#   strong48  48^3x64 in total, procs [1, 1, 1, N]; speed-up = ms per iteration on 1 GPU / on N;
#   strong64  64^3x128 in total, as strong48;
#   setonix   jobs/setonix/inputs/setonix_32x64.toml as the Setonix job runs it (8 ranks, procs [1, 1, 1, 8]; here
#             8 / N ranks share each GPU) against the same input on 1 rank.
# Input of the generated runs: random gauge field (width 1, seed 11), kappa 0.12, csw 1, a warm-up solve (kernel
# and halo policies tuned there; the kernel tune cache is shared by the runs) then the timed solve, both from
# Gaussian noise. Each timed point runs twice (the second without fields); ms per iteration = the timed solve's
# logged seconds / its iterations, the smaller of the two runs. Exposed halo per iteration =
# rank 0's "waiting for halos" over both solves' iterations, with the fraction of the exchange hidden.
# Each N-GPU file is compared with its reference by tests' h5_compare (--ignore-data /input, --iter-slack 2) at
# rtol 1e-6 (fp32) or 1e-10 (mixed), else at 1e-5 or 1e-8 (the one met is reported). The solution and source fields
# are written (and compared) for the series in EMPRISM_SCALING_FIELDS (default "weak"; h5_compare reads a
# 32^3x128 pair in about 25 s there); the others compare the residual histories, true residuals and attributes.
# Files are deleted after their comparison (disk). Leaves summary.txt, table.md and results.tar.gz (inputs, logs).
# Environment (optional): EMPRISM_SCALING_SERIES, EMPRISM_SCALING_GPUS, EMPRISM_SCALING_PRECISIONS ("single
# mixed"), EMPRISM_SCALING_TRANSPORTS ("auto staged peer"), EMPRISM_SCALING_FIELDS, EMPRISM_DEVICE_SKIP_TESTS=1 (no `ctest -L gpu`), and
# those of common.sh (EMPRISM_DEVICE_BACKEND, EMPRISM_DEVICE_JOBS, ...). EMPRISM_SCALING_SMALL=1 shrinks every
# lattice by 4 in each direction (for trying the script on a CPU build).
# Exit status: 0 when the build, the tests, every run and every comparison passed (timings are reported, not judged).
set -uo pipefail
EMPRISM_DEVICE_NAME=scaling
EMPRISM_DEVICE_JOBS=${EMPRISM_DEVICE_JOBS:-$(nproc)}
# shellcheck source=jobs/device/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] 2> /dev/null || ngpu=1
nvidia-smi topo -m 2> /dev/null | sed 's/^/topo: /' | tee -a "$summary"
gpus=${EMPRISM_SCALING_GPUS:-}
if [ -z "$gpus" ]; then
  gpus=1
  for ((n = 2; n <= ngpu; n *= 2)); do gpus+=" $n"; done
fi
series=${EMPRISM_SCALING_SERIES:-weak strong48 strong64 setonix}
precisions=${EMPRISM_SCALING_PRECISIONS:-single mixed}
transports=${EMPRISM_SCALING_TRANSPORTS:-auto staged peer}
fields_series=${EMPRISM_SCALING_FIELDS-weak}
shrink=1
[ "${EMPRISM_SCALING_SMALL:-0}" = 1 ] && shrink=4
say "GPUs: $ngpu; GPU counts: $gpus; series: $series; precisions: $precisions; transports: $transports"

if tests_wanted; then
  device_ctest gpu -L gpu
fi

build=$(cd "$build" && pwd)
exe=$build/emprism-mpi
cmp_exe=$build/tests/h5_compare
export EMPRISM_TUNE_CACHE=$work/tunecache.tsv OMP_NUM_THREADS=$(($(nproc) / ngpu))
table=$out/table.md
printf "| series | precision | GPUs | global | local | transport | policy | iterations | solve s | ms/it | ratio | halo exposed ms/it | hidden | reductions/it | wait s | agrees (rtol) |\n|---|---|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n" > "$table"

# input NAME T_EXTENTS PROCS PRECISION TRANSPORT FIELDS: $work/NAME.toml (T_EXTENTS "x, y, z, t" before shrinking)
input() {
  local ext tol=1e-6
  ext=$(echo "$2" | awk -F', *' -v s=$shrink '{ printf "%d, %d, %d, %d", $1 / s, $2 / s, $3 / s, $4 / s }')
  [ "$4" = mixed ] && tol=1e-10
  cat > "$work/$1.toml" << EOF
[lattice]
extents = [$ext]
procs = [$3]
[comm]
transport = "$5"
[gauge]
source = "random"
width = 1.0
seed = 11
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "$4"
tol = $tol
max_iter = 5000
[log]
progress_every = 100000
[metrics]
peak = false
[output]
file = "$1.h5"
overwrite = true
fields = $6
[[solve]]
name = "warmup"
type = "random"
seed = 4
[[solve]]
name = "timed"
type = "random"
seed = 5
EOF
}
# run NAME RANKS: NAME.log and NAME.rc in $work
run() {
  (cd "$work" && timeout 300 mpiexec -n "$2" --bind-to none --oversubscribe "$exe" "$1.toml" > "$1.log" 2>&1
  echo $? > "$1.rc")
}
# run_twice NAME RANKS: run, then the same input again without fields as NAME_again (the timing of two processes
# on two GPUs varies from run to run; ms_per_it takes the faster)
run_twice() {
  run "$1" "$2"
  sed -e 's/^fields = .*/fields = false/' -e "s/^file = .*/file = \"$1_again.h5\"/" "$work/$1.toml" \
    > "$work/$1_again.toml"
  run "$1_again" "$2"
  drop "$1_again"
}
ms_per_it() {  # the timed solve's ms per iteration in NAME.log, or the smaller of NAME's and NAME_again's
  cat "$work/$1.log" "$work/$1_again.log" 2> /dev/null |
    sed -n "s/.*solve 'timed': converged in \([0-9]*\) iterations.*, \([0-9.]*\) s$/\1 \2/p" |
    awk '$1 > 0 { v = 1000 * $2 / $1; if (m == "" || v < m) m = v } END { if (m != "") printf "%.3f", m }'
}
field() {  # field NAME REGEX: the first capture of REGEX (sed -n s/REGEX/\1/p) in NAME.log
  sed -n "s/$2/\1/p" "$work/$1.log" | head -1
}
# agree NAME REF MAX_RTOL: the tighter rtol (fp32 1e-6, mixed 1e-10) or else MAX_RTOL at which h5_compare accepts
# NAME.h5 against REF.h5 ("NO" when neither)
agree() {
  local r tight=1e-6
  [ "$3" = 1e-8 ] && tight=1e-10
  for r in $tight "$3"; do
    if "$cmp_exe" "$work/$1.h5" "$work/$2.h5" --rtol "$r" --iter-slack 2 --ignore-data /input > "$work/$1.cmp" 2>&1
    then
      echo "$r"
      return
    fi
    [ "$r" = "$3" ] && break
  done
  echo "NO"
}
# row SERIES PRECISION GPUS NAME REF BASE_MS MAX_RTOL: one line of the table; REF empty: the reference itself
row() {
  local ms ratio=- its_all wait exposed=- hidden policy red redwait agrees=ref rc
  rc=$(cat "$work/$4.rc" 2> /dev/null || echo -)
  ms=$(ms_per_it "$4")
  if [ -n "$ms" ] && [ -n "$6" ]; then
    ratio=$(awk -v a="$6" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')
  fi
  its_all=$(sed -n "s/.*converged in \([0-9]*\) iterations.*/\1/p" "$work/$4.log" | awk '{ s += $1 } END { print s }')
  wait=$(field "$4" '.*s computing, \([0-9.]*\) s waiting for halos.*')
  [ -n "$wait" ] && [ "${its_all:-0}" -gt 0 ] && exposed=$(awk -v w="$wait" -v n="$its_all" 'BEGIN { printf "%.3f", 1000 * w / n }')
  hidden=$(field "$4" '.*halo exchange [0-9.]* s, of which \([0-9.]*%\) hidden.*')
  policy=$(field "$4" '.*halo policy (fp[0-9]* operator): \([^;]*; exterior [a-z]*\).*')
  red=$(field "$4" '.*reductions (\([0-9.]*\) per CG iteration.*')
  redwait=$(field "$4" '.*per CG iteration, \([0-9.]*\) s waiting.*')
  if [ "$rc" != 0 ]; then
    agrees="exit $rc"
    status=1
  elif [ -n "$5" ]; then
    agrees=$(agree "$4" "$5" "$7")
    [ "$agrees" = NO ] && status=1 && agrees="NO (see $4.cmp)"
  fi
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$1" "$2" "$3" \
    "$(field "$4" '.*: lattice \([0-9x]*\) (.*')" "$(field "$4" '.*(local lattice \([0-9x]*\)).*')" \
    "$(sed -n 's/^transport = "\(.*\)"/\1/p' "$work/$4.toml")" "${policy:--}" \
    "$(field "$4" ".*solve 'timed': converged in \([0-9]*\) iterations.*")" \
    "$(field "$4" ".*solve 'timed': converged.*, \([0-9.]*\) s$")" "${ms:--}" "$ratio" "$exposed" "${hidden:--}" \
    "${red:--}" "${redwait:--}" "$agrees" | tee -a "$table"
}
drop() { rm -f "$work/$1.h5"; }

# series_run SERIES PRECISION: every GPU count and transport of one series
series_run() {
  local s=$1 p=$2 n t name ref base max_rtol=1e-5 ext fields=true
  [ "$p" = mixed ] && max_rtol=1e-8
  case $s in
    weak) ext="32, 32, 32, 64" ;;
    strong48) ext="48, 48, 48, 64" ;;
    strong64) ext="64, 64, 64, 128" ;;
  esac
  case " $fields_series " in *" $s "*) ;; *) fields=false ;; esac
  name=${s}_${p}_1
  input "$name" "$ext" "1, 1, 1, 1" "$p" auto $fields
  run_twice "$name" 1
  base=$(ms_per_it "$name")
  row "$s" "$p" 1 "$name" "" "$base" "$max_rtol"
  for n in $gpus; do
    [ "$n" = 1 ] && continue
    ref=$name
    if [ "$s" = weak ]; then  # the reference: the same global lattice on one GPU
      ref=${s}_${p}_1_t$((64 * n))
      input "$ref" "32, 32, 32, $((64 * n))" "1, 1, 1, 1" "$p" auto $fields
      run "$ref" 1
      row "$s (1-GPU reference)" "$p" 1 "$ref" "" "" "$max_rtol"
    fi
    for t in $transports; do
      local e=$ext
      [ "$s" = weak ] && e="32, 32, 32, $((64 * n))"
      input "${s}_${p}_${n}_$t" "$e" "1, 1, 1, $n" "$p" "$t" $fields
      run_twice "${s}_${p}_${n}_$t" "$n"
      row "$s" "$p" "$n" "${s}_${p}_${n}_$t" "$ref" "$base" "$max_rtol"
      drop "${s}_${p}_${n}_$t"
    done
    [ "$s" = weak ] && drop "$ref"
  done
  drop "$name"
  say "series $s $p done ($(elapsed))"
}

for s in $series; do
  if [ "$s" = setonix ]; then
    for p in $precisions; do
      [ "$p" = mixed ] && continue  # the Setonix input is fp32
      sed -e 's/^file = .*/file = "setonix_8.h5"/' "$repo/jobs/setonix/inputs/setonix_32x64.toml" > "$work/setonix_8.toml"
      sed -e 's/^file = .*/file = "setonix_1.h5"/' -e 's/^procs = .*/procs = [1, 1, 1, 1]/' \
        "$repo/jobs/setonix/inputs/setonix_32x64.toml" > "$work/setonix_1.toml"
      run setonix_1 1
      run setonix_8 8
      row "setonix_32x64 (8 ranks on $ngpu GPUs)" single 8 setonix_8 setonix_1 "$(ms_per_it setonix_1)" 1e-5
      drop setonix_1
      drop setonix_8
    done
    continue
  fi
  for p in $precisions; do series_run "$s" "$p"; done
done
# gpu_aware must be refused here (Open MPI without CUDA support): exit 2, one line naming the key
if [ "$ngpu" -ge 2 ]; then
  input refused_gpu_aware "32, 32, 32, 128" "1, 1, 1, 2" single gpu_aware false
  run refused_gpu_aware 2
  say "transport gpu_aware on 2 GPUs: exit $(cat "$work/refused_gpu_aware.rc"); $(grep -m1 ERROR "$work/refused_gpu_aware.log" | cut -c1-160)"
fi

say ""
tee -a "$summary" < "$table"
mapfile -t ctest_logs < <(cd "$out" && ls ctest_*.log 2> /dev/null)
tar -czf "$out/results.tar.gz" -C "$out" work cmake.log build.log summary.txt table.md "${ctest_logs[@]}" 2> /dev/null
rm -rf "$work"
say "total $(elapsed); exit $status"
exit $status
