#!/usr/bin/env bash
# bad_decomposition.sh: end-to-end check that a process grid that cannot fit is refused as bad input on every
# rank, without a hang, a crash or an output file (docs/conventions.md section 12; lattice.procs in
# jobs/examples/full_reference.toml).
#
#   bad_decomposition.sh EMPRISM_MPI H5_COMPARE WORK_DIR
#
# Cases, on an 8x8x8x16 lattice:
#   - 3 ranks, no lattice.procs: no grid of 3 ranks gives even local extents; the line names lattice.extents
#     and "3 ranks";
#   - 3 ranks, lattice.procs = [1, 1, 1, 3]: 16 / 3 does not divide; the line names lattice.procs and "3 ranks";
#   - 4 ranks, lattice.procs = [2, 2, 2, 1]: the product is 8, not 4; the line names lattice.procs and the job's
#     4 ranks ("4 ranks" or "has 4").
# Each run (`timeout 60 mpiexec -n N`) must exit with code 2 (not 124 = a hang, not > 128 = a signal, not 1 =
# an abort), print exactly one line containing "ERROR" over stdout and stderr together (in stderr), and leave
# no output file (nor its temporary) behind. H5_COMPARE is not used; it is taken so that both MPI scripts share
# one command line. Environment: MPIEXEC (default mpiexec), MPIEXEC_FLAGS (default --oversubscribe).
# Exit 0 when every case behaves, 1 otherwise (each problem on one line starting with FAIL), 2 for a bad
# command line.
# Who may call: ctest (label mpi) and people; WORK_DIR/bad_decomposition is deleted and re-created.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 EMPRISM_MPI H5_COMPARE WORK_DIR" >&2
  exit 2
fi
emprism=$(realpath "$1")
if [[ ! -x $emprism ]]; then
  echo "$0: $emprism is not an executable" >&2
  exit 2
fi
mkdir -p "$3"
work=$(realpath "$3")/bad_decomposition
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

# check_case NAME NRANKS PROCS_LINE KEY_RE COUNT_RE: runs the case in its own directory and checks it.
check_case() {
  local name=$1 n=$2 procs_line=$3 key_re=$4 count_re=$5
  local dir=$work/$name
  mkdir -p "$dir"
  {
    echo "[lattice]"
    echo "extents = [8, 8, 8, 16]"
    if [[ -n $procs_line ]]; then echo "$procs_line"; fi
    cat <<EOF
[dirac]
kappa = 0.12
[metrics]
peak = false
[output]
file = "out.h5"
[[solve]]
type = "point"
EOF
  } > "$dir/input.toml"

  local rc=0
  (cd "$dir" && timeout 60 "$mpiexec_cmd" -n "$n" "${mpiexec_flags[@]}" "$emprism" input.toml \
    > stdout.txt 2> stderr.txt) || rc=$?
  local problems=$failures
  if [[ $rc -eq 124 ]]; then
    fail "$name ($n ranks): timed out after 60 s (a hang); expected exit code 2"
  elif [[ $rc -gt 128 ]]; then
    fail "$name ($n ranks): exit code $rc (killed by signal $((rc - 128))?); expected exit code 2"
  elif [[ $rc -ne 2 ]]; then
    fail "$name ($n ranks): exit code $rc; expected 2 (bad input)"
  fi
  local in_stderr in_stdout
  in_stderr=$(grep -c ERROR "$dir/stderr.txt" || true)
  in_stdout=$(grep -c ERROR "$dir/stdout.txt" || true)
  if [[ $in_stderr -ne 1 || $in_stdout -ne 0 ]]; then
    fail "$name ($n ranks): $in_stderr ERROR line(s) in stderr and $in_stdout in stdout; expected exactly one," \
      "in stderr"
  fi
  if [[ $in_stderr -ge 1 ]]; then
    local line
    line=$(grep -m 1 ERROR "$dir/stderr.txt")
    if ! grep -qE "$key_re" <<< "$line"; then
      fail "$name ($n ranks): the ERROR line does not name $key_re: $line"
    fi
    if ! grep -qE "$count_re" <<< "$line"; then
      fail "$name ($n ranks): the ERROR line does not mention $count_re: $line"
    fi
  fi
  local left
  left=$(cd "$dir" && find . -maxdepth 1 \( -name 'out.h5' -o -name '.out.h5*' -o -name 'out.h5.*' \) -print)
  if [[ -n $left ]]; then
    fail "$name ($n ranks): output left behind: $(tr '\n' ' ' <<< "$left")"
  fi
  if [[ $failures -eq $problems ]]; then
    echo "ok: $name ($n ranks): exit 2, $(grep -m 1 ERROR "$dir/stderr.txt")"
  else
    echo "$name: stderr was:" >&2
    sed 's/^/  | /' "$dir/stderr.txt" >&2
  fi
}

check_case np3_default 3 "" 'lattice\.extents' '\b3 ranks\b'
check_case np3_procs_1113 3 "procs = [1, 1, 1, 3]" 'lattice\.procs' '\b3 ranks\b'
check_case np4_procs_2221 4 "procs = [2, 2, 2, 1]" 'lattice\.procs' '\b4 ranks\b|\bhas 4\b'

if [[ $failures -ne 0 ]]; then
  echo "bad_decomposition: $failures problem(s); inputs and logs are in $work" >&2
  exit 1
fi
echo "bad_decomposition: every bad process grid was refused with exit code 2 and one ERROR line"
