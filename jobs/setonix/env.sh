# shellcheck shell=bash
# jobs/setonix/env.sh: the Setonix (Pawsey, HPE Cray EX, AMD MI250X) environment of the jobs in jobs/setonix/;
# sourced by build.sh, run.sbatch and scaling.sbatch, never run. Sources jobs/local/common.sh (set EMPRISM_REPO
# first, or it is taken as the directory two levels above this file).
#
#   setonix_modules   module load of EMPRISM_SETONIX_MODULES (default below: programming environment, the MI250X
#                     target, ROCm, parallel HDF5); versions as on Setonix when written: check `module avail`
#   setonix_runtime   the job environment: MPICH_GPU_SUPPORT_ENABLED=1 (GPU-aware Cray MPICH; comm.gpu_aware =
#                     "auto" in the inputs then hands device buffers to MPI), MPICH_OFI_NIC_POLICY=NUMA (each rank
#                     uses the Slingshot NIC of its NUMA domain, which the CPU binding below makes its GCD's),
#                     OMP_NUM_THREADS (default 1: one rank per GCD, the host only launches kernels), and the per-rank
#                     srun options: -c 8 (one 8-core chiplet per GCD, the "allocation pack"), --gres=gpu:8,
#                     --gpu-bind=none and --cpu-bind=mask_cpu:<the chiplet closest to each GCD> (below)
#   setonix_cpu_masks the --cpu-bind=mask_cpu list: node-local rank L gets the 8 cores of the chiplet (CCD) with the
#                     direct Infinity Fabric link to GCD L
#
# GPU binding (why not --gpu-bind=closest): the program picks its GCD itself, GCD = node-local rank among the GCDs
# it sees (kernels/backend/runtime_gpu.cpp). --gpu-bind=closest would show each rank only its own GCD, and then
# no rank can open a neighbour's device buffer through hipIpc (the multi-GPU halo exchange and GPU-aware Cray
# MPICH's on-node transfers need it). So every rank sees all 8 GCDs (--gpu-bind=none) and the affinity comes from
# the CPU side: rank L runs on the chiplet closest to GCD L. GCD -> chiplet on the MI250X nodes of Setonix, LUMI
# and Frontier (the same HPE EX235a node): 0->6, 1->7, 2->2, 3->3, 4->0, 5->1, 6->4, 7->5 (LUMI user guide,
# "Distribution and binding options", GPU binding, "Application that can select GPU automatically";
# jobs/README.md lists the sources).
#
# Variables (all optional):
#   EMPRISM_SETONIX_DRYRUN=1   for machines without Cray modules or GPUs (tests, a workstation with Slurm): no
#                              module loads, no GPU srun options, -c 1, the CPU backend in build.sh. The #SBATCH
#                              GPU lines are then overridden on the sbatch command line, e.g.
#                              sbatch --partition=<p> --account=<a> --gres=none --overcommit jobs/setonix/run.sbatch
#   EMPRISM_SETONIX_MODULES    modules to load, in order (space-separated)
#   EMPRISM_GCDS_PER_NODE      ranks (GCDs) per node, default 8
#   EMPRISM_CPUS_PER_TASK      cores per rank, default 8 (1 with EMPRISM_SETONIX_DRYRUN=1)
#   EMPRISM_SETONIX_CPU_BIND   the srun --cpu-bind value, default mask_cpu:<setonix_cpu_masks> (e.g. "none", or
#                              LUMI-style masks that leave out the first core of each chiplet)
#   MPICH_OFI_NIC_POLICY       default NUMA (set it to override)

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

# setonix_cpu_masks: the comma-separated hex masks of --cpu-bind=mask_cpu, one per node-local rank 0..7: the 8 cores
# (8c .. 8c+7) of the chiplet c closest to GCD L, c = 6 7 2 3 0 1 4 5 for L = 0..7.
setonix_cpu_masks() {
  local c masks=""
  for c in 6 7 2 3 0 1 4 5; do
    masks+="${masks:+,}$(printf '%x' $((0xff << (8 * c))))"
  done
  echo "$masks"
}

setonix_runtime() {
  export MPICH_GPU_SUPPORT_ENABLED=1
  export MPICH_OFI_NIC_POLICY=${MPICH_OFI_NIC_POLICY:-NUMA}
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  if setonix_dryrun; then
    EMPRISM_CPUS_PER_TASK=${EMPRISM_CPUS_PER_TASK:-1}
    SRUN_GPU_OPTS=()
    emprism_log "EMPRISM_SETONIX_DRYRUN=1: no GPU srun options, -c $EMPRISM_CPUS_PER_TASK"
  else
    EMPRISM_CPUS_PER_TASK=${EMPRISM_CPUS_PER_TASK:-8}
    SRUN_GPU_OPTS=("--gres=gpu:$EMPRISM_GCDS_PER_NODE" --gpu-bind=none
      "--cpu-bind=${EMPRISM_SETONIX_CPU_BIND:-mask_cpu:$(setonix_cpu_masks)}")
  fi
  export EMPRISM_CPUS_PER_TASK
}
