#!/usr/bin/env bash
# compare_binaries.sh: "behaviour unchanged" check of a refactoring. Runs the same inputs with a reference build of
# emprism-mpi and a new one and requires identical output files.
#
#   tests/tools/compare_binaries.sh REF_BINARY NEW_BINARY H5_COMPARE [WORKDIR]
#
# Runs (small lattices; a few minutes in all on two cores, the reference's results are cached in WORKDIR/ref and
# reused while REF_BINARY is unchanged):
#   quickstart  jobs/examples/quickstart.toml as it is (heatbath, point, Z2 noise, smeared propagator), 1 rank
#   resume      point + Jacobi/stout-smeared propagator + noise on 4^3x8, killed after its 2nd complete solve
#               (EMPRISM_TEST_CRASH_AFTER_SOLVES=2), then --resume; the partial file after the kill and the final
#               file are compared
#   generate    heatbath with [generate] (2 ILDG configurations) and a point solve; the configuration files too
#   mpi4        4 ranks (tests/support/mpirun.sh 4, one thread each), 1x1x2x2 grid: the first generated
#               configuration read back (gauge.source = "file"), write_gauge, point, plane wave and smeared
#               propagator (tol 1e-4, to keep it short), collective output; then the same with output.io = "gather"
# Every output file must satisfy `h5_compare NEW REF --rtol 0` (every dataset and attribute bitwise equal; it skips
# date, git_hash, ranks, process_grid, device on the root, /solves/*/seconds and /metrics/*) AND a stricter check of
# what h5_compare skips: ranks, process_grid and device equal; /metrics/kernels equal row by row (by name) except
# the timing columns; /metrics/ranks and /metrics/comm rows equal except the times; /metrics/peak's measured flag
# equal. Only dates, the git hash and timings may differ. Gauge files must be equal byte for byte once their creation dates are masked.
# Exit 0 when every comparison passes, 1 otherwise (each difference printed).
# Needs /usr/bin/python3 with h5py (Debian python3-h5py) for the strict check, mpiexec for mpi4.
set -uo pipefail

if [[ $# -lt 3 ]]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
ref_bin=$(realpath "$1")
new_bin=$(realpath "$2")
h5cmp=$(realpath "$3")
work=$(realpath -m "${4:-/tmp/emprism_compare}")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
python=${EMPRISM_PYTHON:-/usr/bin/python3}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
failures=0

fail() {
  echo "compare: FAIL: $*"
  failures=$((failures + 1))
}

resume_body() {
  cat <<'EOF'
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "random"
width = 0.4
seed = 5
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-10
[metrics]
peak = false
[output]
file = "out.h5"
[[solve]]
name = "point"
type = "point"
site = [1, 2, 3, 4]
[[solve]]
name = "prop"
type = "propagator"
site = [0, 1, 2, 3]
momenta = [[1, 0, 0]]
smearing = "jacobi"
smearing_steps = 4
smearing_weight = 0.15
link_smearing = "stout"
link_smearing_steps = 2
link_smearing_weight = 0.1
[[solve]]
name = "noise"
type = "random"
distribution = "z2"
seed = 3
EOF
}

generate_body() {
  cat <<'EOF'
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "heatbath"
beta = 5.8
sweeps = 4
or_per_sweep = 2
seed = 11
[generate]
count = 2
every = 2
format = "ildg"
prefix = "cfg"
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "mixed"
tol = 1e-9
[metrics]
peak = false
[output]
file = "out.h5"
write_gauge = true
[[solve]]
name = "point"
type = "point"
site = [1, 0, 2, 5]
spin = 1
colour = 2
EOF
}

mpi4_body() {  # $1: output.io
  cat <<EOF
[lattice]
extents = [4, 4, 4, 8]
procs = [1, 1, 2, 2]
[gauge]
source = "file"
file = "../generate/cfg_000006.ildg"
[dirac]
kappa = 0.125
csw = 1.1
theta_over_pi = [0.0, 0.5, 0.0, 1.0]
[solver]
precision = "single"
tol = 1e-4
[metrics]
peak = false
[output]
file = "out.h5"
write_gauge = true
io = "$1"
[[solve]]
name = "point"
type = "point"
site = [3, 2, 1, 7]
[[solve]]
name = "wave"
type = "plane_wave"
momentum = [1, 0, -1, 0]
spinor = [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.5], [0.0, 0.0],
          [0.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.25, 0.25]]
[[solve]]
name = "prop"
type = "propagator"
site = [1, 1, 2, 6]
channels = ["pion", "axial", "rho"]
momenta = [[0, 1, 0]]
smearing = "wuppertal"
smearing_steps = 3
smearing_weight = 0.3
link_smearing = "ape"
link_smearing_steps = 2
link_smearing_weight = 0.5
EOF
}

# run DIR NRANKS BINARY ARGS...: runs in DIR (input written before), log in DIR/log.txt; prints the exit code.
run() {
  local dir=$1 n=$2 bin=$3
  shift 3
  local -a cmd=("$bin" "$@")
  local threads=$OMP_NUM_THREADS
  if [[ $n -gt 1 ]]; then
    cmd=(bash "$repo/tests/support/mpirun.sh" "$n" "${cmd[@]}")
    threads=1  # ranks share the cores
  fi
  (cd "$dir" && OMP_NUM_THREADS=$threads timeout 600 "${cmd[@]}" >>log.txt 2>&1)
  echo $?
}

# run_all ROOT BINARY: every run of this script with one binary, outputs under ROOT.
run_all() {
  local root=$1 bin=$2 rc
  rm -rf "$root"
  mkdir -p "$root"/{quickstart,resume,generate,mpi4_collective,mpi4_gather}
  cp "$repo/jobs/examples/quickstart.toml" "$root/quickstart/"
  rc=$(run "$root/quickstart" 1 "$bin" quickstart.toml)
  [[ $rc == 0 ]] || echo "quickstart: exit $rc" >>"$root/errors"

  resume_body >"$root/resume/run.toml"
  rc=$(EMPRISM_TEST_CRASH_AFTER_SOLVES=2 run "$root/resume" 1 "$bin" run.toml)
  [[ $rc == 137 ]] || echo "resume (kill): exit $rc, not 137" >>"$root/errors"
  cp "$root/resume/out.h5.partial" "$root/resume/killed.h5.partial" 2>/dev/null ||
    echo "resume: no partial file after the kill" >>"$root/errors"
  rc=$(run "$root/resume" 1 "$bin" --resume run.toml)
  [[ $rc == 0 ]] || echo "resume: exit $rc" >>"$root/errors"

  generate_body >"$root/generate/run.toml"
  rc=$(run "$root/generate" 1 "$bin" run.toml)
  [[ $rc == 0 ]] || echo "generate: exit $rc" >>"$root/errors"

  for io in collective gather; do
    mpi4_body "$io" >"$root/mpi4_$io/run.toml"
    rc=$(run "$root/mpi4_$io" 4 "$bin" run.toml)
    [[ $rc == 0 ]] || echo "mpi4 $io: exit $rc" >>"$root/errors"
  done
  true
}

# The checks h5_compare leaves out (see the header).
strict_check() {
  "$python" - "$1" "$2" <<'EOF'
import sys
import h5py
import numpy as np

new, ref = sys.argv[1], sys.argv[2]
problems = []
TIMES = {"kernels": {"total_s", "mean_s", "min_s", "gbs", "percent_of_peak"},
         "ranks": {"compute_s", "halo_wait_s", "reduction_s", "reduction_wait_s"},
         "comm": {"exchange_s", "exposed_s", "hidden_fraction", "transport", "exterior"}}  # auto: chosen by timing
KEYS = {"kernels": ("name",), "ranks": ("rank",), "comm": ("rank", "precision_bits", "direction")}
with h5py.File(new, "r") as a, h5py.File(ref, "r") as b:
    for name in ("ranks", "process_grid", "device", "backend", "program_version", "precision"):
        va, vb = a.attrs.get(name), b.attrs.get(name)
        if not np.array_equal(np.asarray(va), np.asarray(vb)):
            problems.append(f"/ attribute {name}: {va!r} != {vb!r}")
    if ("metrics" in a) != ("metrics" in b):
        problems.append("/metrics in one file only")
    elif "metrics" in a:
        ma, mb = a["metrics"], b["metrics"]
        if sorted(ma.keys()) != sorted(mb.keys()):
            problems.append(f"/metrics members {sorted(ma.keys())} != {sorted(mb.keys())}")
        for table in ("kernels", "ranks", "comm"):
            if table not in ma or table not in mb:
                continue
            ta, tb = ma[table][()], mb[table][()]
            if ta.dtype != tb.dtype:
                problems.append(f"/metrics/{table}: dtype {ta.dtype} != {tb.dtype}")
                continue
            key = KEYS[table]
            rows_a = {tuple(r[k] for k in key): r for r in ta}
            rows_b = {tuple(r[k] for k in key): r for r in tb}
            if sorted(rows_a) != sorted(rows_b) or len(ta) != len(tb):
                problems.append(f"/metrics/{table}: rows {sorted(rows_a)} != {sorted(rows_b)}")
                continue
            for k in rows_a:
                for col in ta.dtype.names:
                    if col in TIMES[table]:
                        continue
                    if rows_a[k][col] != rows_b[k][col]:
                        problems.append(f"/metrics/{table}[{k}].{col}: {rows_a[k][col]} != {rows_b[k][col]}")
        if "peak" in ma and "peak" in mb:
            pa, pb = ma["peak"].attrs, mb["peak"].attrs
            if sorted(pa.keys()) != sorted(pb.keys()) or pa.get("measured") != pb.get("measured"):
                problems.append(f"/metrics/peak attributes differ: {dict(pa)} != {dict(pb)}")
for p in problems:
    print("strict: " + p)
sys.exit(1 if problems else 0)
EOF
}

compare_h5() {  # NEW REF LABEL
  if [[ ! -f $1 || ! -f $2 ]]; then
    fail "$3: missing file ($1 or $2)"
    return
  fi
  "$h5cmp" "$1" "$2" --rtol 0 >/dev/null 2>"$work/h5cmp.err" || {
    fail "$3: h5_compare --rtol 0"
    sed 's/^/    /' "$work/h5cmp.err"
  }
  strict_check "$1" "$2" || fail "$3: strict metadata check"
}

compare_gauge_file() {  # NEW REF LABEL
  "$python" - "$1" "$2" <<'EOF' || fail "$3: gauge file differs"
import re, sys
def masked(path):
    data = open(path, "rb").read()
    data = re.sub(rb"<date>[^<]*</date>", b"<date></date>", data)
    return re.sub(rb"CREATION_DATE *= *[^\n]*", b"CREATION_DATE =", data)
sys.exit(0 if masked(sys.argv[1]) == masked(sys.argv[2]) else 1)
EOF
}

mkdir -p "$work"
stamp="$(sha256sum "$ref_bin" | cut -c1-16) $(sha256sum "$0" | cut -c1-16)"
if [[ ! -f $work/ref/stamp || "$(cat "$work/ref/stamp")" != "$stamp" ]]; then
  echo "compare: running the reference $ref_bin (cached in $work/ref)"
  run_all "$work/ref" "$ref_bin"
  echo "$stamp" >"$work/ref/stamp"
fi
echo "compare: running $new_bin"
start=$SECONDS
run_all "$work/new" "$new_bin"
echo "compare: new runs took $((SECONDS - start)) s"
for side in ref new; do
  if [[ -f $work/$side/errors ]]; then
    fail "$side runs:"
    sed 's/^/    /' "$work/$side/errors"
  fi
done

compare_h5 "$work/new/quickstart/quickstart.h5" "$work/ref/quickstart/quickstart.h5" quickstart
compare_h5 "$work/new/resume/killed.h5.partial" "$work/ref/resume/killed.h5.partial" "resume (partial file after the kill)"
compare_h5 "$work/new/resume/out.h5" "$work/ref/resume/out.h5" "resume (final file)"
compare_h5 "$work/new/generate/out.h5" "$work/ref/generate/out.h5" generate
for f in cfg_000006.ildg cfg_000008.ildg; do
  compare_gauge_file "$work/new/generate/$f" "$work/ref/generate/$f" "generate $f"
done
for io in collective gather; do
  compare_h5 "$work/new/mpi4_$io/out.h5" "$work/ref/mpi4_$io/out.h5" "mpi4 $io"
done

if [[ $failures -eq 0 ]]; then
  echo "compare: all outputs identical (dates, git hash and timings aside)"
  exit 0
fi
echo "compare: $failures comparison(s) failed"
exit 1
