#!/usr/bin/env bash
# rank_independence.sh: end-to-end check that the output file of emprism-mpi does not depend on the number of
# ranks, the process grid or the output mode (docs/conventions.md sections 10 and 13).
#
#   rank_independence.sh EMPRISM_MPI H5_COMPARE WORK_DIR
#
# For solver.precision "single" (tol 1e-6) and "double" (tol 1e-10) it writes one input (8x4x4x8 lattice, random
# gauge field of width 0.5, csw 1.0, a point and a z2 solve, no peak measurement, gauge links written) and runs
# it on 1 rank with output.io = "gather" (the reference), then on 1, 2 (default process grid) and 4 ranks
# (lattice.procs = [2, 1, 1, 2]) with output.io = "gather" and "collective". Every run must exit 0 and write its
# file; every file must agree with the reference under h5_compare (--rtol 1e-6 single, 1e-12 double; /input
# differs by construction, so only its presence and type are compared). When the build has no collective
# output (parallel HDF5), the first "collective" run must exit 2 with one ERROR line naming output.io; the
# collective runs are then skipped. Every mpiexec runs under `timeout 120` (exit 124 = a hang).
# Environment: MPIEXEC (default mpiexec) and MPIEXEC_FLAGS (default --oversubscribe); for Open MPI as root set
# OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1. Exit 0 when everything agrees, 1 otherwise (each
# problem on one line starting with FAIL), 2 for a bad command line.
# Who may call: ctest (label mpi) and people; WORK_DIR/rank_independence is deleted and re-created.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 EMPRISM_MPI H5_COMPARE WORK_DIR" >&2
  exit 2
fi
emprism=$(realpath "$1")
h5_compare=$(realpath "$2")
for exe in "$emprism" "$h5_compare"; do
  if [[ ! -x $exe ]]; then
    echo "$0: $exe is not an executable" >&2
    exit 2
  fi
done
mkdir -p "$3"
work=$(realpath "$3")/rank_independence
rm -rf "$work"
mkdir -p "$work"
mpiexec_cmd=${MPIEXEC:-mpiexec}
read -r -a mpiexec_flags <<< "${MPIEXEC_FLAGS-"--oversubscribe"}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# write_input FILE PRECISION TOL OUTPUT [EXTRA_LATTICE_LINE] [IO]
write_input() {
  local file=$1 precision=$2 tol=$3 output=$4 procs_line=${5:-} io=${6:-}
  {
    echo "[lattice]"
    echo "extents = [8, 4, 4, 8]"
    if [[ -n $procs_line ]]; then echo "$procs_line"; fi
    cat <<EOF
[gauge]
source = "random"
width = 0.5
seed = 2024
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "$precision"
tol = $tol
max_iter = 2000
[metrics]
peak = false
[output]
file = "$output"
write_gauge = true
EOF
    if [[ -n $io ]]; then echo "io = \"$io\""; fi
    cat <<EOF
[[solve]]
name = "point"
type = "point"
site = [3, 1, 2, 5]
spin = 2
colour = 1
[[solve]]
name = "z2"
type = "random"
distribution = "z2"
seed = 11
EOF
  } > "$file"
}

# run NRANKS NAME: runs NAME.toml in $work with NRANKS ranks; stdout to NAME.out, stderr to NAME.err. Sets rc.
run() {
  local n=$1 name=$2
  rc=0
  (cd "$work" && timeout 120 "$mpiexec_cmd" -n "$n" "${mpiexec_flags[@]}" "$emprism" "$name.toml" \
    > "$name.out" 2> "$name.err") || rc=$?
}

# expect_success NRANKS NAME: the run exited 0 and wrote NAME.h5.
expect_success() {
  local n=$1 name=$2
  if [[ $rc -ne 0 ]]; then
    local why="exit code $rc"
    if [[ $rc -eq 124 ]]; then why="timed out after 120 s (a hang?)"; fi
    if [[ $rc -gt 128 ]]; then why="exit code $rc (killed by signal $((rc - 128))?)"; fi
    fail "$name ($n ranks): $why; stderr ends: $(tail -n 3 "$work/$name.err" | tr '\n' ' ')"
    return 1
  fi
  if [[ ! -f $work/$name.h5 ]]; then
    fail "$name ($n ranks): exit code 0 but no output file $name.h5"
    return 1
  fi
}

compare() {
  local name=$1 ref=$2 rtol=$3
  if ! "$h5_compare" "$work/$name.h5" "$work/$ref.h5" --rtol "$rtol" --ignore-data /input; then
    fail "$name.h5 differs from $ref.h5 (rtol $rtol; h5_compare's lines above)"
  fi
}

collective=unknown  # yes / no once the first collective run has told
for precision in single double; do
  if [[ $precision == single ]]; then tol=1e-6 rtol=1e-6; else tol=1e-10 rtol=1e-12; fi
  ref=${precision}_np1_gather
  write_input "$work/$ref.toml" "$precision" "$tol" "$ref.h5" "" gather
  run 1 "$ref"
  if ! expect_success 1 "$ref"; then
    continue
  fi
  echo "$ref: reference written"
  for n in 1 2 4; do
    procs=""
    if [[ $n -eq 4 ]]; then procs="procs = [2, 1, 1, 2]"; fi
    for io in gather collective; do
      name=${precision}_np${n}_${io}
      [[ $name == "$ref" ]] && continue
      [[ $io == collective && $collective == no ]] && continue
      write_input "$work/$name.toml" "$precision" "$tol" "$name.h5" "$procs" "$io"
      run "$n" "$name"
      if [[ $io == collective && $collective == unknown ]]; then
        # The first collective run tells whether the build supports it. A refusal must be a bad-input error:
        # exit 2, one ERROR line naming output.io, no output file.
        errors=$(grep -c ERROR "$work/$name.err" || true)
        if [[ $rc -ne 0 ]] && grep ERROR "$work/$name.err" | grep -q 'output\.io' &&
          grep ERROR "$work/$name.err" | grep -qiE 'not supported|serial HDF5|built with(out)? MPI'; then
          collective=no
          if [[ $rc -ne 2 || $errors -ne 1 ]]; then
            fail "$name: output.io = \"collective\" refused with exit code $rc and $errors ERROR line(s);" \
              "expected exit code 2 (bad input) and one ERROR line: $(grep -m 1 ERROR "$work/$name.err")"
          else
            echo "SKIP: output.io = \"collective\" is not supported by this build: $(grep ERROR "$work/$name.err")"
          fi
          if [[ -e $work/$name.h5 ]]; then fail "$name: the refused run created $name.h5"; fi
          continue
        fi
        collective=yes
      fi
      expect_success "$n" "$name" || continue
      if [[ $n -eq 4 ]] && ! grep -q 'process grid 2x1x1x2' "$work/$name.out"; then
        fail "$name: the log does not report process grid 2x1x1x2 (lattice.procs ignored?)"
      fi
      compare "$name" "$ref" "$rtol"
    done
  done
done

if [[ $failures -ne 0 ]]; then
  echo "rank_independence: $failures problem(s); inputs, logs and files are in $work" >&2
  exit 1
fi
echo "rank_independence: all files agree with the 1-rank reference (collective output: $collective)"
