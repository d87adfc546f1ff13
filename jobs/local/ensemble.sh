#!/bin/bash
# jobs/local/ensemble.sh: submits an ensemble measurement as a Slurm job array and its merge step (README: Ensembles).
#
#   jobs/local/ensemble.sh INPUT.toml FIRST LAST [STEP [PER_TASK]] [-- sbatch options for the array]
#
# INPUT.toml: an ensemble input with gauge.pattern (absolute path; e.g. "/scratch/ens/cfg_%06d.ildg" as [generate]
# writes them). Submits jobs/local/ensemble_array.sbatch as an array of ceil(n / PER_TASK) tasks, n = the
# configurations FIRST, FIRST + STEP, ... <= LAST (STEP default 1, PER_TASK default 1), each writing part_<a>_<b>.h5
# in EMPRISM_OUT_DIR, then jobs/local/ensemble_merge.sbatch with --dependency=afterok on the whole array, which
# writes EMPRISM_OUT_DIR/ensemble.h5 (--kill-on-invalid-dep=yes: cancelled, not left pending, once a task failed).
# Prints the two job ids. A task that failed or hit its time limit: resubmit it alone with the same EMPRISM_OUT_DIR
# (it resumes), then the merge job by hand (both commands are printed).
#
# Environment: EMPRISM_OUT_DIR (default: $PWD/emprism-ensemble-<date-time>), and what the two jobs read.
# Who runs it: users on a login node; tests/slurm/test_local_slurm.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() {
  echo "ensemble.sh: error: $*" >&2
  exit 2
}
(($# >= 3)) || die "usage: jobs/local/ensemble.sh INPUT.toml FIRST LAST [STEP [PER_TASK]] [-- sbatch options]"
input=$1 first=$2 last=$3
shift 3
step=1 per_task=1
if (($# > 0)) && [[ $1 != -- ]]; then
  step=$1
  shift
fi
if (($# > 0)) && [[ $1 != -- ]]; then
  per_task=$1
  shift
fi
if (($# > 0)) && [[ $1 == -- ]]; then shift; fi
[[ -f $input ]] || die "no input file '$input'"
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ && $step =~ ^[1-9][0-9]*$ && $per_task =~ ^[1-9][0-9]*$ ]] ||
  die "FIRST, LAST, STEP, PER_TASK must be integers (STEP, PER_TASK > 0)"
((last >= first)) || die "LAST ($last) is before FIRST ($first)"
count=$(((last - first) / step + 1))
tasks=$(((count + per_task - 1) / per_task))
export EMPRISM_OUT_DIR=${EMPRISM_OUT_DIR:-$PWD/emprism-ensemble-$(date +%Y%m%d-%H%M%S)}
export EMPRISM_ENSEMBLE="$first $last $step $per_task"
mkdir -p "$EMPRISM_OUT_DIR"
array=$(sbatch --parsable --array="0-$((tasks - 1))" "$@" "$here/ensemble_array.sbatch" "$input")
array=${array%%;*}
merge=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency="afterok:$array" "$here/ensemble_merge.sbatch")
merge=${merge%%;*}
echo "ensemble.sh: $count configuration(s) in $tasks array task(s): job $array; merge: job $merge"
echo "ensemble.sh: output directory $EMPRISM_OUT_DIR"
echo "ensemble.sh: to redo task K: EMPRISM_OUT_DIR=$EMPRISM_OUT_DIR EMPRISM_ENSEMBLE=\"$EMPRISM_ENSEMBLE\"" \
  "sbatch --array=K $* $here/ensemble_array.sbatch $input; then EMPRISM_OUT_DIR=$EMPRISM_OUT_DIR sbatch" \
  "$here/ensemble_merge.sbatch"
