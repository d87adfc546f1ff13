# shellcheck shell=bash
# jobs/setonix/env.sh: the Setonix (Pawsey, HPE Cray EX, AMD MI250X) environment of the jobs in jobs/setonix/;
# sourced by build.sh, run.sbatch and scaling.sbatch, never run. Sources jobs/local/common.sh (set EMPRISM_REPO
# first, or it is taken as the directory two levels above this file).
#
#   setonix_modules   module load of EMPRISM_SETONIX_MODULES (default below: programming environment, the MI250X
#                     target, ROCm, parallel HDF5); versions as on Setonix when written: check `module avail`
#   setonix_runtime   the job environment: MPICH_GPU_SUPPORT_ENABLED=1 (GPU-aware Cray MPICH; comm.gpu_aware =
#                     "auto" in the inputs then hands device buffers to MPI), OMP_NUM_THREADS (default 1: one rank
#                     per GCD, the host only launches kernels), and the per-rank srun options: -c 8 (one 8-core
#                     chiplet per GCD, the "allocation pack") and --gres=gpu:8 --gpu-bind=closest per node
#
# Variables (all optional):
#   EMPRISM_SETONIX_DRYRUN=1   for machines without Cray modules or GPUs (tests, a workstation with Slurm): no
#                              module loads, no GPU srun options, -c 1, the CPU backend in build.sh. The #SBATCH
#                              GPU lines are then overridden on the sbatch command line, e.g.
#                              sbatch --partition=<p> --account=<a> --gres=none --overcommit jobs/setonix/run.sbatch
#   EMPRISM_SETONIX_MODULES    modules to load, in order (space-separated)
#   EMPRISM_GCDS_PER_NODE      ranks (GCDs) per node, default 8
#   EMPRISM_CPUS_PER_TASK      cores per rank, default 8 (1 with EMPRISM_SETONIX_DRYRUN=1)

: "${EMPRISM_REPO:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# shellcheck source=jobs/local/common.sh
source "$EMPRISM_REPO/jobs/local/common.sh"

EMPRISM_SETONIX_DRYRUN=${EMPRISM_SETONIX_DRYRUN:-0}
EMPRISM_SETONIX_MODULES=${EMPRISM_SETONIX_MODULES:-PrgEnv-gnu craype-accel-amd-gfx90a rocm/5.7.3 cray-hdf5-parallel}
EMPRISM_GCDS_PER_NODE=${EMPRISM_GCDS_PER_NODE:-8}

setonix_dryrun() { [[ $EMPRISM_SETONIX_DRYRUN == 1 ]]; }

setonix_modules() {
  local m
  if setonix_dryrun; then
    emprism_log "EMPRISM_SETONIX_DRYRUN=1: not loading modules ($EMPRISM_SETONIX_MODULES)"
    return 0
  fi
  if ! type module > /dev/null 2>&1; then
    # Batch scripts of non-login shells may miss the module function.
    for m in /usr/share/lmod/lmod/init/bash /opt/cray/pe/lmod/lmod/init/bash /etc/profile.d/lmod.sh; do
      if [[ -f $m ]]; then
        # shellcheck source=/dev/null
        source "$m"
        break
      fi
    done
  fi
  type module > /dev/null 2>&1 || emprism_die "no module command (not on Setonix? set EMPRISM_SETONIX_DRYRUN=1)"
  for m in $EMPRISM_SETONIX_MODULES; do
    emprism_log "module load $m"
    module load "$m"
  done
}

setonix_runtime() {
  export MPICH_GPU_SUPPORT_ENABLED=1
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  if setonix_dryrun; then
    EMPRISM_CPUS_PER_TASK=${EMPRISM_CPUS_PER_TASK:-1}
    SRUN_GPU_OPTS=()
    emprism_log "EMPRISM_SETONIX_DRYRUN=1: no GPU srun options, -c $EMPRISM_CPUS_PER_TASK"
  else
    EMPRISM_CPUS_PER_TASK=${EMPRISM_CPUS_PER_TASK:-8}
    SRUN_GPU_OPTS=("--gres=gpu:$EMPRISM_GCDS_PER_NODE" --gpu-bind=closest)
  fi
  export EMPRISM_CPUS_PER_TASK
}
