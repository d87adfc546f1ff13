#!/usr/bin/env bash
# test_local_slurm.sh: runs the Slurm jobs of jobs/local/ and jobs/setonix/ under a real, throw-away, single-node
# Slurm (Debian packages slurmctld, slurmd, slurm-client, munge) started by this script, and checks their results.
#
#   tests/slurm/test_local_slurm.sh EMPRISM_MPI WORK_DIR
#
# EMPRISM_MPI: a built CPU emprism-mpi (the jobs never build). WORK_DIR/slurm_jobs is deleted and re-created; it
# keeps the jobs' outputs (and, after a failure, the daemons' logs) for inspection.
# Steps:
#   1. bash -n on every jobs/**/*.sh and *.sbatch (and this script), shellcheck -x on them when installed (else a
#      message), and the two build scripts with EMPRISM_BUILD_DRY_RUN=1 (local CPU; Setonix with a stub `module`
#      command and Cray-like variables, and with EMPRISM_SETONIX_DRYRUN=1): they must print the expected cmake lines.
#   2. Without Slurm and munge (installed by `EMPRISM_SETUP_SLURM=1 jobs/setup.sh`, not by default), root, or a
#      python3 with h5py: exit 77 (skipped) after step 1, with one line "SKIP: <the reason>".
#   3. In a fresh temporary directory: a munge key and munged (--socket/--key-file/--pid-file/... there),
#      slurm.conf for this host (NodeName=$(hostname -s), CPUs=$(nproc), RealMemory 90% of free's total,
#      proctrack/linuxproc, task/none, select/cons_tres, MpiDefault=none, auth/munge on that socket, root as
#      SlurmUser, state and spool directories there, jobcomp/filetxt, free TCP ports), slurmctld and slurmd.
#   4. sbatch (ranks started by `srun --mpi=pmix`, EMPRISM_SRUN_MPI=pmix; Open MPI's pmix support is Debian's):
#        jobs/local/run.sbatch                 (2 ranks, jobs/examples/quickstart.toml)
#        jobs/local/scaling.sbatch --overcommit (defaults: 8^3x16 and 16^3x16 strong, 8^3x16 per rank weak, 1 2 4 ranks)
#        jobs/setonix/run.sbatch   with EMPRISM_SETONIX_DRYRUN=1 and --partition/--account/--gres=none/--overcommit
#                                  overriding its GPU lines: 8 ranks on jobs/setonix/inputs/setonix_16x32.toml (with
#                                  metrics.peak = false added, to save time)
#        jobs/setonix/scaling.sbatch the same way, 1 node = 8 ranks, small sizes (8x8x8x16 strong, 4x4x4x4 weak)
#        jobs/setonix/spectroscopy.sbatch the same way with 2 ranks, on two 4^3x8 ILDG configurations the program
#                                  writes first (heatbath, [generate]) and the shipped template shrunk to 4^3x8
#        jobs/local/ensemble.sh     the same two configurations by one ensemble input (gauge.pattern), an array of
#                                  two tasks, and the merge job: ensemble.h5 must hold both, in order, converged
#      waits for them (EMPRISM_SLURM_TEST_TIMEOUT seconds in all, default 360), and requires JobState=COMPLETED
#      with ExitCode=0:0 from `scontrol show job` (and the jobcomp record), and with h5py: every solve converged with
#      true_residual <= tol, the root attribute ranks and process_grid as run, every scaling point present, the
#      scaling table (scaling.md, scaling.csv) and, when matplotlib is importable, scaling.png; the spectroscopy
#      job's configs.txt, and per configuration its pion correlator and the gauge file it read.
#      EMPRISM_SLURM_TEST_LAUNCHER=mpirun runs the same jobs with EMPRISM_LAUNCHER=mpirun (Open MPI's mpirun inside
#      the allocation instead of srun --mpi=pmix: the fallback for a Slurm without a working pmix plugin).
#   5. Always (trap): cancels the jobs, stops slurmd, slurmctld and munged by their pid files, then ends any process
#      left that carries this run's marker variable EMPRISM_SLURM_TEST_ID in its environment (job steps), by pid;
#      removes the temporary directory.
# Exit: 0 all good; 1 a failure (each on a line starting with FAIL); 2 bad command line; 77 skipped (ctest
# SKIP_RETURN_CODE). Needs: root (slurmd), the packages slurmctld slurmd slurm-client munge (slurm-wlm-basic-plugins
# brings the pmix plugin), openmpi-bin, python3-h5py; optional: shellcheck, python3-matplotlib.
# Who may call: ctest (label slurm) and people. About 3 minutes on 2 cores.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 EMPRISM_MPI WORK_DIR" >&2
  exit 2
fi
exe=$(realpath "$1")
if [[ ! -x $exe ]]; then
  echo "$0: $exe is not an executable" >&2
  exit 2
fi
mkdir -p "$2"
work=$(realpath "$2")/slurm_jobs
rm -rf "$work"
mkdir -p "$work"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deadline=$((SECONDS + ${EMPRISM_SLURM_TEST_TIMEOUT:-360}))
failures=0

log() { echo "test_local_slurm: $*"; }
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# ---------------------------------------------------------------------------------------------------------------
# 1. Static checks of the job scripts.
mapfile -t scripts < <(cd "$repo" && find jobs tests/slurm -type f \( -name '*.sh' -o -name '*.sbatch' \) | sort)
for s in "${scripts[@]}"; do
  bash -n "$repo/$s" || fail "bash -n $s"
done
if command -v shellcheck > /dev/null 2>&1; then
  if (cd "$repo" && shellcheck -x "${scripts[@]}"); then
    log "shellcheck: ${#scripts[@]} scripts clean"
  else
    fail "shellcheck reported problems in jobs/ or tests/slurm/"
  fi
else
  log "shellcheck not installed: skipping the shellcheck part (apt-get install shellcheck)"
fi

# expect_output DESCRIPTION PATTERN OUTPUT: OUTPUT must contain a line matching the extended regex PATTERN.
expect_output() {
  grep -Eq -- "$2" <<< "$3" || fail "$1: no line matching '$2' in:"$'\n'"$3"
}
out=$(EMPRISM_BUILD_DRY_RUN=1 EMPRISM_BUILD_DIR=/nonexistent/build bash "$repo/jobs/local/build.sh" 2>&1) ||
  fail "jobs/local/build.sh dry run exited $?"
expect_output "jobs/local/build.sh" "^build: cmake -S $repo -B /nonexistent/build .*-DEMPRISM_BACKEND=CPU" "$out"
stub=$(mktemp -d "${TMPDIR:-/tmp}/emprism-module-stub.XXXXXX")
printf '#!/bin/sh\necho "stub module $*"\n' > "$stub/module"
chmod +x "$stub/module"
out=$(PATH="$stub:$PATH" MPICH_DIR=/opt/cray/pe/mpich/x/ofi/gnu/9.1 PE_MPICH_GTL_DIR_amd_gfx90a=-L/opt/cray/gtl/lib \
  PE_MPICH_GTL_LIBS_amd_gfx90a=-lmpi_gtl_hsa EMPRISM_BUILD_DRY_RUN=1 EMPRISM_BUILD_DIR=/nonexistent/build-hip \
  bash "$repo/jobs/setonix/build.sh" 2>&1) || fail "jobs/setonix/build.sh dry run exited $?"
rm -rf "$stub"
expect_output "jobs/setonix/build.sh" "^build: module load craype-accel-amd-gfx90a" "$out"
expect_output "jobs/setonix/build.sh" "^build: module load cray-hdf5-parallel" "$out"
expect_output "jobs/setonix/build.sh" "-DEMPRISM_BACKEND=HIP -DEMPRISM_HIP_ARCH=gfx90a -DCMAKE_CXX_COMPILER=hipcc" "$out"
expect_output "jobs/setonix/build.sh" "-DMPI_CXX_LIBRARIES=/opt/cray/pe/mpich/x/ofi/gnu/9.1/lib/libmpi.so;/opt/cray/gtl/lib/libmpi_gtl_hsa.so" "$out"
out=$(EMPRISM_SETONIX_DRYRUN=1 EMPRISM_BUILD_DRY_RUN=1 EMPRISM_BUILD_DIR=/nonexistent/build-cpu \
  bash "$repo/jobs/setonix/build.sh" 2>&1) || fail "jobs/setonix/build.sh EMPRISM_SETONIX_DRYRUN=1 exited $?"
expect_output "jobs/setonix/build.sh (dry run)" "-B /nonexistent/build-cpu -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=CPU$" "$out"
if grep -q "^build: module" <<< "$out"; then fail "jobs/setonix/build.sh loads modules with EMPRISM_SETONIX_DRYRUN=1"; fi
# The Setonix GPU binding (not exercised by the dry runs below): every rank sees all GCDs (--gpu-bind=none, for IPC
# between GCDs), the CPU masks give each node-local rank one whole chiplet, all 8 chiplets once, and the NIC policy.
out=$(EMPRISM_REPO=$repo EMPRISM_SETONIX_DRYRUN=0 bash -c 'source "$EMPRISM_REPO/jobs/setonix/env.sh"
  setonix_runtime; echo "policy $MPICH_OFI_NIC_POLICY"; printf "opt %s\n" "${SRUN_GPU_OPTS[@]}"' 2>&1) ||
  fail "jobs/setonix/env.sh setonix_runtime: $out"
expect_output "jobs/setonix/env.sh" "^opt --gpu-bind=none$" "$out"
expect_output "jobs/setonix/env.sh" "^opt --gres=gpu:8$" "$out"
expect_output "jobs/setonix/env.sh" "^policy NUMA$" "$out"
masks=$(sed -n 's/^opt --cpu-bind=mask_cpu://p' <<< "$out")
covered=0
IFS=, read -r -a mask_list <<< "$masks"
for m in "${mask_list[@]}"; do
  [[ $m =~ ^(ff)(00)*$ ]] || fail "jobs/setonix/env.sh: CPU mask '$m' is not one whole 8-core chiplet"
  ((covered & 16#$m)) && fail "jobs/setonix/env.sh: CPU mask '$m' overlaps another"
  covered=$((covered | 16#$m))
done
((${#mask_list[@]} == 8 && covered == -1)) ||
  fail "jobs/setonix/env.sh: CPU masks '$masks' do not cover the 64 cores once"
log "static checks done ($failures failure(s))"

# ---------------------------------------------------------------------------------------------------------------
# 2. Requirements of the Slurm part.
skip() {
  log "SKIP: $*"
  if ((failures > 0)); then exit 1; fi
  exit 77
}
missing=()
for c in munged munge slurmctld slurmd sbatch scontrol squeue sinfo srun scancel; do
  command -v "$c" > /dev/null 2>&1 || missing+=("$c")
done
((${#missing[@]} == 0)) || skip "Slurm and munge are not installed (no ${missing[*]});" \
  "EMPRISM_SETUP_SLURM=1 jobs/setup.sh installs them (Debian packages slurmctld slurmd slurm-client munge)"
[[ $(id -u) -eq 0 ]] || skip "not root (the test starts its own slurmd, which must run as root)"
# The python3 of analysis/python3 (EMPRISM_PYTHON, else python3 on PATH, /usr/bin/python3) that imports h5py.
py=$(EMPRISM_PYTHON_MODULES=h5py "$repo/analysis/python3" -c 'import sys; print(sys.executable)' 2> /dev/null) ||
  skip "no python3 with h5py (Debian package python3-h5py, or set EMPRISM_PYTHON)"
have_mpl=0
if "$py" -c "import matplotlib" > /dev/null 2>&1; then have_mpl=1; fi

# ---------------------------------------------------------------------------------------------------------------
# 3. A private Slurm: munged, slurmctld, slurmd, all files in $tmp.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emprism-slurm.XXXXXX")
chmod 755 "$tmp" # munged wants every directory above its socket searchable by all
marker="EMPRISM_SLURM_TEST_ID=$tmp"
export SLURM_CONF=$tmp/slurm.conf

# stop_pidfile FILE NAME: TERM the process whose pid FILE holds (if it still runs NAME), KILL it after 10 s.
stop_pidfile() {
  local pid i
  [[ -s $1 ]] || return 0
  pid=$(< "$1")
  [[ $pid =~ ^[0-9]+$ ]] && [[ -r /proc/$pid/comm ]] && [[ $(< "/proc/$pid/comm") == "$2"* ]] || return 0
  kill -TERM "$pid" 2> /dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2> /dev/null || return 0
    sleep 0.1
  done
  log "$2 (pid $pid) ignored TERM; killing it"
  kill -KILL "$pid" 2> /dev/null || true
}

# marked_pids: processes (other than this shell) whose environment holds this run's marker.
marked_pids() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid == "$$" ]] && continue
    if { tr '\0' '\n' < "$d/environ"; } 2> /dev/null | grep -qxF "$marker"; then echo "$pid"; fi
  done
}

cleanup() {
  local rc=$? id pid i
  trap - EXIT INT TERM
  set +e
  if [[ -s $tmp/slurmctld.pid ]]; then
    for id in $(squeue -h -o %i 2> /dev/null); do scancel "$id" 2> /dev/null; done
    for ((i = 0; i < 40; i++)); do
      [[ -z $(squeue -h -o %i 2> /dev/null) ]] && break
      sleep 0.5
    done
  fi
  stop_pidfile "$tmp/slurmd.pid" slurmd
  stop_pidfile "$tmp/slurmctld.pid" slurmctld
  stop_pidfile "$tmp/munge/munged.pid" munged
  for pid in $(marked_pids); do kill -TERM "$pid" 2> /dev/null; done
  sleep 0.5
  for pid in $(marked_pids); do
    log "killing leftover process $pid ($(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null))"
    kill -KILL "$pid" 2> /dev/null
  done
  if ((rc != 0 || failures > 0)); then
    mkdir -p "$work/daemon_logs"
    cp -r "$tmp/log/." "$tmp/munge/munged.log" "$tmp/slurm.conf" "$work/daemon_logs/" 2> /dev/null
    log "daemon logs kept in $work/daemon_logs"
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
chmod 755 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
env "$marker" munged --socket="$tmp/munge/munge.sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" ||
  { fail "munged did not start: $(tail -n 3 "$tmp/munge/munged.log" 2> /dev/null)"; exit 1; }
munge -S "$tmp/munge/munge.sock" -n | unmunge -S "$tmp/munge/munge.sock" > /dev/null ||
  { fail "munge round trip failed"; exit 1; }

read -r ctld_port slurmd_port < <("$py" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
cat > "$SLURM_CONF" << EOF
# Generated by tests/slurm/test_local_slurm.sh: a single-node Slurm for this test only.
ClusterName=emprismtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$tmp/log/jobcomp.txt
ReturnToService=2
MinJobAge=600
KillWait=5
# RPC timeouts of 60 s (default 10): on this 2-core machine loaded by builds, a step launch once failed ("task launch
# failed: Unspecified error").
MessageTimeout=60
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=30 State=UP
EOF
env "$marker" slurmctld -f "$SLURM_CONF" || { fail "slurmctld did not start"; exit 1; }
env "$marker" slurmd -f "$SLURM_CONF" || { fail "slurmd did not start"; exit 1; }
state=""
for ((i = 0; i < 60; i++)); do
  state=$(sinfo -h -n "$host" -o %t 2> /dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
if [[ $state != idle ]]; then
  fail "node $host is '$state', not idle, 30 s after starting slurmd: $(scontrol show node "$host" | grep -i reason)"
  exit 1
fi
srun --mpi=list 2>&1 | grep -qw pmix || { fail "srun --mpi=list offers no pmix plugin (slurm-wlm-basic-plugins)"; exit 1; }
log "Slurm $(sinfo -V | awk '{print $2}') up on $host (ports $ctld_port/$slurmd_port, $(nproc) CPUs); pmix plugin present"

# ---------------------------------------------------------------------------------------------------------------
# 4. The jobs.
common_env=("$marker" EMPRISM_EXE="$exe" EMPRISM_SRUN_MPI=pmix EMPRISM_PYTHON="$py")
if [[ ${EMPRISM_SLURM_TEST_LAUNCHER:-srun} == mpirun ]]; then
  common_env+=(EMPRISM_LAUNCHER=mpirun OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
  log "EMPRISM_SLURM_TEST_LAUNCHER=mpirun: the jobs start their ranks with Open MPI's mpirun inside the allocation"
fi
setonix_opts=(--partition=debug --account=emprismtest-gpu --gres=none --nodes=1 --overcommit --time=10)
# submit NAME DIR SBATCH_ARGS... -- ENV...: sbatch from DIR (the jobs write their results under their submit
# directory), print the job id.
submit() {
  local dir=$work/$1 id
  shift
  local -a sargs=() envs=()
  while [[ $1 != -- ]]; do sargs+=("$1"); shift; done
  shift
  envs=("$@")
  mkdir -p "$dir"
  id=$(cd "$dir" && env "${common_env[@]}" "${envs[@]}" sbatch --parsable "${sargs[@]}") || return 1
  echo "${id%%;*}"
}
{
  cat "$repo/jobs/setonix/inputs/setonix_16x32.toml"
  printf '\n[metrics]\npeak = false\n'
} > "$work/setonix_16x32.toml"
# The spectroscopy job's ensemble: two 4^3x8 heatbath configurations written as ILDG by the program itself, and the
# shipped template shrunk to that lattice (fewer smearing steps, no peak measurement).
mkdir -p "$work/ensemble"
cat > "$work/ensemble/generate.toml" << EOF
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "heatbath"
beta = 5.8
sweeps = 10
seed = 3
[dirac]
kappa = 0.12
[generate]
count = 2
every = 5
format = "ildg"
prefix = "cfg"
[metrics]
peak = false
[output]
file = "generate.h5"
EOF
(cd "$work/ensemble" && env "$marker" OMP_NUM_THREADS=1 "$exe" generate.toml > generate.log 2>&1) ||
  { fail "generating the spectroscopy configurations: $(tail -n 3 "$work/ensemble/generate.log")"; exit 1; }
sed -e 's/^extents = \[32, 32, 32, 64\]/extents = [4, 4, 4, 8]/' -e 's/^smearing_steps = 50/smearing_steps = 5/' \
  -e 's/^link_smearing_steps = 20/link_smearing_steps = 2/' -e 's/^tol = 1e-9/tol = 1e-8/' \
  "$repo/jobs/setonix/inputs/spectroscopy_32x64.toml.in" > "$work/spectroscopy_4x8.toml.in"
printf '\n[metrics]\npeak = false\n' >> "$work/spectroscopy_4x8.toml.in"
grep -q '^extents = \[4, 4, 4, 8\]' "$work/spectroscopy_4x8.toml.in" ||
  fail "jobs/setonix/inputs/spectroscopy_32x64.toml.in: no 'extents = [32, 32, 32, 64]' line to shrink"

declare -A job=()
job[local_run]=$(submit local_run --time=10 "$repo/jobs/local/run.sbatch" --) || fail "sbatch jobs/local/run.sbatch"
job[local_scaling]=$(submit local_scaling --overcommit --time=10 "$repo/jobs/local/scaling.sbatch" --) ||
  fail "sbatch jobs/local/scaling.sbatch"
job[setonix_run]=$(submit setonix_run "${setonix_opts[@]}" "$repo/jobs/setonix/run.sbatch" "$work/setonix_16x32.toml" \
  -- EMPRISM_SETONIX_DRYRUN=1) || fail "sbatch jobs/setonix/run.sbatch"
job[setonix_scaling]=$(submit setonix_scaling "${setonix_opts[@]}" "$repo/jobs/setonix/scaling.sbatch" \
  -- EMPRISM_SETONIX_DRYRUN=1 EMPRISM_STRONG_SIZES=8x8x8x16 EMPRISM_WEAK_LOCAL=4x4x4x4) ||
  fail "sbatch jobs/setonix/scaling.sbatch"
job[setonix_spectroscopy]=$(submit setonix_spectroscopy "${setonix_opts[@]}" "$repo/jobs/setonix/spectroscopy.sbatch" \
  -- EMPRISM_SETONIX_DRYRUN=1 EMPRISM_GCDS_PER_NODE=2 EMPRISM_SPECTROSCOPY_INPUT="$work/spectroscopy_4x8.toml.in" \
  EMPRISM_CONFIGS="$work/ensemble/cfg_*.ildg") || fail "sbatch jobs/setonix/spectroscopy.sbatch"
# The ensemble job array (jobs/local/ensemble.sh): the same two configurations measured by one ensemble input with
# gauge.pattern, one array task each, then the merge job (afterok on the array: it runs only if both tasks exit 0).
cat > "$work/ensemble_measure.toml" << EOF
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "ensemble"
pattern = "$work/ensemble/cfg_%06d.ildg"
first = 15
last = 20
[dirac]
kappa = 0.12
[solver]
tol = 1e-6
[metrics]
peak = false
[output]
file = "unused.h5"
[[solve]]
name = "pion"
type = "propagator"
site = [0, 0, 0, 0]
channels = ["pion"]
EOF
mkdir -p "$work/ensemble_array"
submitted=$(cd "$work/ensemble_array" && env "${common_env[@]}" EMPRISM_OUT_DIR="$work/ensemble_array/out" \
  "$repo/jobs/local/ensemble.sh" "$work/ensemble_measure.toml" 15 20 5 1 -- --time=10) ||
  fail "jobs/local/ensemble.sh: $submitted"
job[ensemble_merge]=$(sed -n 's/.*; merge: job \([0-9]*\)$/\1/p' <<< "$submitted")
[[ -n ${job[ensemble_merge]} ]] || fail "jobs/local/ensemble.sh printed no merge job: $submitted"
((failures == 0)) || exit 1
log "submitted: $(for k in "${!job[@]}"; do printf '%s=%s ' "$k" "${job[$k]}"; done)"

# job_field ID FIELD: a field of `scontrol show job -o ID`.
job_field() { scontrol show job -o "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
terminal='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)'
declare -A final=()
while ((${#final[@]} < ${#job[@]})); do
  for k in "${!job[@]}"; do
    [[ -n ${final[$k]:-} ]] && continue
    s=$(job_field "${job[$k]}" JobState)
    if [[ $s =~ $terminal ]]; then
      final[$k]=$s
      log "job $k (${job[$k]}): JobState=$s ExitCode=$(job_field "${job[$k]}" ExitCode) after $SECONDS s"
    fi
  done
  if ((SECONDS > deadline)); then
    fail "jobs still running after ${EMPRISM_SLURM_TEST_TIMEOUT:-360} s: $(squeue -h -o '%i %j %T %M' | tr '\n' ';')"
    exit 1
  fi
  sleep 1
done

for k in "${!job[@]}"; do
  id=${job[$k]}
  if [[ ${final[$k]} != COMPLETED || $(job_field "$id" ExitCode) != 0:0 ]]; then
    fail "job $k ($id): JobState=${final[$k]} ExitCode=$(job_field "$id" ExitCode); its output:"
    tail -n 30 "$(job_field "$id" StdOut)" >&2 || true
    # A cancelled merge job ran nothing: the array tasks' outputs say why (afterok failed).
    [[ $k != ensemble_merge ]] || tail -n 20 "$work"/ensemble_array/emprism-ensemble-*.out >&2 || true
  fi
  grep -q "JobId=$id .*JobState=COMPLETED" "$tmp/log/jobcomp.txt" || fail "job $k ($id): no COMPLETED jobcomp record"
done

# check_h5 FILE RANKS GRID: every solve converged (true_residual <= tol), ranks and process_grid as given
# (GRID "" = any grid whose product is RANKS).
check_h5() {
  local msg
  [[ -f $1 ]] || { fail "missing $1"; return; }
  msg=$("$py" - "$@" << 'PY' 2>&1
import sys, h5py, numpy as np
path, ranks, grid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with h5py.File(path, "r") as f:
    errs = []
    if int(f.attrs["ranks"]) != ranks:
        errs.append(f"ranks {int(f.attrs['ranks'])}, expected {ranks}")
    pg = [int(p) for p in f.attrs["process_grid"]]
    if int(np.prod(pg)) != ranks or (grid and "x".join(map(str, pg)) != grid):
        errs.append(f"process_grid {pg}, expected {grid or 'product ' + str(ranks)}")
    if len(f["solves"]) == 0:
        errs.append("no solves")
    for name, g in f["solves"].items():
        a = g.attrs
        if not bool(a["converged"]) or not float(a["true_residual"]) <= float(a["tol"]):
            errs.append(f"solve {name}: converged {bool(a['converged'])}, true_residual {a['true_residual']}, tol {a['tol']}")
    if len(f["metrics/ranks"]) != ranks:
        errs.append(f"/metrics/ranks has {len(f['metrics/ranks'])} rows")
    print("; ".join(errs))
PY
  ) || { fail "$1: h5py check failed: $msg"; return; }
  [[ -z $msg ]] || fail "$1: $msg"
}

# check_scaling DIR POINTS...: every point's .h5 (name:ranks:grid) checked, points.txt all 0, table and plot there.
check_scaling() {
  local dir=$1 p name ranks grid rows f
  shift
  [[ -d $dir ]] || { fail "no scaling directory $dir"; return; }
  for p in "$@"; do
    IFS=: read -r name ranks grid <<< "$p"
    check_h5 "$dir/$name.h5" "$ranks" "$grid"
  done
  [[ $(awk '$4 != 0' "$dir/points.txt" | wc -l) -eq 0 && $(wc -l < "$dir/points.txt") -eq $# ]] ||
    fail "$dir/points.txt: $(tr '\n' ';' < "$dir/points.txt")"
  for f in scaling.md scaling.csv; do
    [[ -f $dir/$f ]] || { fail "missing $dir/$f"; return; }
  done
  rows=$(grep -c '^| [0-9]' "$dir/scaling.md" || true)
  [[ $rows -eq $# ]] || fail "$dir/scaling.md has $rows table rows, expected $#"
  rows=$(($(wc -l < "$dir/scaling.csv") - 1))
  [[ $rows -eq $# ]] || fail "$dir/scaling.csv has $rows rows, expected $#"
  if ((have_mpl)); then
    [[ -s $dir/scaling.png ]] || fail "no $dir/scaling.png although matplotlib is installed"
  fi
}

d=$work/local_run/emprism-run-${job[local_run]}
check_h5 "$d/quickstart.h5" 2 ""
[[ $(cat "$d/exit_code" 2> /dev/null) == 0 ]] || fail "$d/exit_code is not 0"
check_scaling "$work/local_scaling/emprism-scaling-${job[local_scaling]}" \
  strong-8x8x8x16-r1:1: strong-8x8x8x16-r2:2: strong-8x8x8x16-r4:4: \
  strong-16x16x16x16-r1:1: strong-16x16x16x16-r2:2: strong-16x16x16x16-r4:4: \
  weak-8x8x8x16-r1:1:1x1x1x1 weak-8x8x8x32-r2:2:1x1x1x2 weak-8x8x16x32-r4:4:1x1x2x2
check_h5 "$work/setonix_run/emprism-setonix-${job[setonix_run]}/setonix_16x32.h5" 8 1x1x1x8
check_scaling "$work/setonix_scaling/emprism-scaling-${job[setonix_scaling]}" \
  strong-8x8x8x16-r8:8: weak-4x8x8x8-r8:8:1x2x2x2
grep -q "EMPRISM_SETONIX_DRYRUN=1: not loading modules" "$work/setonix_run/emprism-setonix-${job[setonix_run]}.out" ||
  fail "jobs/setonix/run.sbatch did not report skipping the modules"
d=$work/setonix_spectroscopy/emprism-spectroscopy
[[ $(cat "$d/configs.txt" 2> /dev/null) == $'cfg_000015 0\ncfg_000020 0' ]] ||
  fail "$d/configs.txt is not two configurations with exit code 0: $(tr '\n' ';' < "$d/configs.txt" 2> /dev/null)"
for f in "$d"/cfg_000015.h5 "$d"/cfg_000020.h5; do
  check_h5 "$f" 2 ""
  [[ -f $f ]] || continue
  msg=$("$py" - "$f" "$work/ensemble/$(basename "${f%.h5}").ildg" << 'PY' 2>&1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    c = f["correlators/wuppertal/pion"][...]
    errs = [] if c.shape == (8,) and np.all(c.real > 0) else [f"pion correlator {c}"]
    if sys.argv[2] not in f["input"][()].decode():
        errs.append(f"/input does not name {sys.argv[2]}")
    print("; ".join(errs))
PY
  ) || msg="h5py check failed: $msg"
  [[ -z $msg ]] || fail "$f: $msg"
done

d=$work/ensemble_array/out
msg=$("$py" - "$d/ensemble.h5" << 'PY' 2>&1
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    ids = [i.decode() if isinstance(i, bytes) else i for i in f.attrs["config_ids"]]
    errs = [] if ids == ["15", "20"] else [f"config_ids {ids}"]
    for i in ids:
        c = f[f"configs/{i}/correlators/pion/pion"][...]
        if c.shape != (8,) or not np.all(c.real > 0) or not bool(f[f"configs/{i}/solves/pion"].attrs["converged"]):
            errs.append(f"configuration {i}: pion correlator {c}")
    print("; ".join(errs))
PY
) || msg="h5py check failed: $msg"
[[ -z $msg ]] || fail "$d/ensemble.h5: $msg"

if ((failures > 0)); then
  log "$failures failure(s); job outputs in $work"
  exit 1
fi
log "all ${#job[@]} jobs COMPLETED with converged output ($SECONDS s); job outputs in $work"
