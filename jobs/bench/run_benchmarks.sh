#!/usr/bin/env bash
# run_benchmarks.sh: runs the benchmark inputs (16^3x32, 32^3x64, 48^3x64 by default) on one GPU (or rank) and
# prints, per lattice, the per-kernel table (ms per call, GB/s, % of the empirical peak, registers, occupancy)
# and the time per CG iteration, like the tables of the EmPRiSM sprint report. The HDF5 files stay in the
# output directory with everything in /metrics.
# Usage: jobs/bench/run_benchmarks.sh [BUILD_DIR [OUT_DIR [SIZES...]]]    e.g. ... build-cuda out 16x32 32x64
# Environment: LAUNCH, a command prefix for the program (e.g. "srun -n 1"); default: run it directly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}
out=${2:-$PWD/bench-out}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16x32 32x64 48x64)
mkdir -p "$out"
exe=$(cd "$build" && pwd)/emprism-mpi
[ -x "$exe" ] || { echo "run_benchmarks: no executable $exe (build first)" >&2; exit 2; }
echo "run_benchmarks: $(date -u +%Y-%m-%dT%H:%M:%SZ), $("$exe" --version), host $(hostname)"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
command -v rocm-smi > /dev/null && rocm-smi --showproductname | grep -i "card series" | head -1
for s in "${sizes[@]}"; do
  input="$here/bench_${s}.toml"
  [ -f "$input" ] || { echo "run_benchmarks: no input $input" >&2; exit 2; }
  echo "=== ${s}: ${LAUNCH:-} emprism-mpi $input"
  (cd "$out" && ${LAUNCH:-} "$exe" "$input" 2>&1 | tee "bench_${s}.log")
done
python3 "$repo/analysis/bench_table.py" "$out"/bench_*.h5
