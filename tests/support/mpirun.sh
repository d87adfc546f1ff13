#!/usr/bin/env bash
# mpirun.sh: the one way the tests start a program on several ranks.
#
#   tests/support/mpirun.sh NRANKS PROGRAM [ARGS...]
#
# Runs `$MPIEXEC -n NRANKS $MPIEXEC_FLAGS PROGRAM ARGS...` and exits with its exit code. Defaults: MPIEXEC=mpiexec,
# MPIEXEC_FLAGS=--oversubscribe (several ranks may share the cores of a CI machine; set MPIEXEC_FLAGS= for none, or
# e.g. MPIEXEC=srun MPIEXEC_FLAGS=--mpi=pmix under Slurm). Open MPI refuses to run as root unless told: the two
# OMPI_ALLOW_RUN_AS_ROOT variables are set. OMP_NUM_THREADS defaults to 1 (ranks share the cores).
# Who may call: ctest (the MPI test programs, tests/mpi/*.sh), the Python tests (conftest.py), people.
set -euo pipefail

if [[ $# -lt 2 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 NRANKS PROGRAM [ARGS...]" >&2
  exit 2
fi
nranks=$1
shift
read -r -a flags <<< "${MPIEXEC_FLAGS-"--oversubscribe"}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
exec "${MPIEXEC:-mpiexec}" -n "$nranks" "${flags[@]}" "$@"
