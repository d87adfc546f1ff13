#!/usr/bin/env bash
# hip_nvidia.sh: HIP on NVIDIA GPUs against the CUDA backend, on a machine with one H100/H200 and CUDA 13 that has
# neither HIP nor toml++ (issue 20). From the repository root:
#   1. unpacks the Debian packages carried in .debs/ (libamdhip64-dev: HIP's headers with hip/nvidia_detail;
#      libtomlplusplus-dev, libtomlplusplus3, librandom123-dev; and, if carried, pkgconf-bin and libpkgconf3 for a
#      machine without pkg-config) with dpkg -x into a scratch prefix;
#   2. builds the CUDA backend and the HIP backend on HIP's NVIDIA platform (-DEMPRISM_BACKEND=HIP
#      -DEMPRISM_HIP_PLATFORM=nvidia) from the same tree: the program, the GPU tests (emprism_gpu_tests and the
#      distributed test, which ctest -L gpu runs on the device with 1, 2 and 4 ranks and every halo transport, the
#      peer one through hipIpc/cudaIpc) and h5_compare;
#   3. runs ctest -L gpu in both builds (every GPU test must pass in both, none skipped);
#   4. runs the same solves with both programs and compares the output files with h5_compare --rtol 0
#      --cross-backend, i.e. bitwise (solutions, residual histories, iteration counts; not timings): a
#      double-precision 16^3x32 solve (point and random sources, solutions written) and the fp32 32^3x64 benchmark
#      jobs/bench/bench_32x64.toml;
#   5. runs the benchmark twice more per build, alternating the builds, and compares the hot kernels' ms per call
#      (best of the three runs of each build, from the kernel table of the program's log): a table kernel, CUDA ms,
#      HIP-on-NVIDIA ms, ratio; each ratio must be within 5% of 1.
# The last lines are the table and one verdict per check (PASS/FAIL) and "hip_nvidia: ALL PASS" or "hip_nvidia:
# FAILED (n)"; exit 0 only if all passed. Logs, inputs and the kernel tables go to $OUT/hip_nvidia_logs.tar.gz,
# the summary to $OUT/hip_nvidia_summary.txt. Device time: the two builds side by side (a few minutes at 16 cores),
# two GPU test runs, eight short runs: about 5 to 7 minutes.
# Usage: jobs/device/hip_nvidia.sh                 on the GPU machine (with .debs/ carried; OUT, JOBS optional)
#        jobs/device/hip_nvidia.sh --fetch-debs    here, once: apt-get download the packages into .debs/
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
debs=(libamdhip64-dev libtomlplusplus-dev libtomlplusplus3 librandom123-dev)
optional_debs=(pkgconf-bin libpkgconf3)  # a pkg-config, used when carried (for a machine without one)
if [ "${1:-}" = --fetch-debs ]; then
  mkdir -p .debs
  (cd .debs && apt-get download "${debs[@]}" "${optional_debs[@]}")
  ls -l .debs
  exit 0
fi

out=${OUT:-$repo/hip-nvidia-out}
jobs=${JOBS:-16}
work=$(mktemp -d /tmp/emprism-hip-nvidia.XXXXXX)
logs=$work/logs
mkdir -p "$out" "$logs"
summary=$out/hip_nvidia_summary.txt
: > "$summary"
say() { echo "hip_nvidia: $*" | tee -a "$summary"; }
fails=0
verdict() {  # verdict NAME OK(0/1) DETAIL
  if [ "$2" -eq 0 ]; then say "PASS $1 ($3)"; else
    say "FAIL $1 ($3)"
    fails=$((fails + 1))
  fi
}
finish() {
  tar -C "$work" -czf "$out/hip_nvidia_logs.tar.gz" logs
  if [ "$fails" -eq 0 ]; then say "ALL PASS"; else say "FAILED ($fails)"; fi
  [ "$fails" -eq 0 ]
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-$jobs}

tree=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
say "$(date -u +%Y-%m-%dT%H:%M:%SZ), tree $tree, host $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$summary" || true
nvcc_bin=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
"$nvcc_bin" --version | tail -2 | tee -a "$summary"

# 1. The carried packages, unpacked (nothing is installed).
prefix=$work/prefix
mkdir -p "$prefix"
for p in "${debs[@]}" "${optional_debs[@]}"; do
  shopt -s nullglob
  found=(.debs/"${p}"_*.deb)
  shopt -u nullglob
  if [ ${#found[@]} -gt 0 ]; then
    dpkg -x "${found[0]}" "$prefix"
  elif [[ " ${debs[*]} " == *" $p "* ]]; then
    say "no .debs/${p}_*.deb (run jobs/device/hip_nvidia.sh --fetch-debs here and carry .debs)"
    exit 2
  fi
done
pkgconf_arg=()
[ ! -x "$prefix/usr/bin/pkgconf" ] || pkgconf_arg=(-DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf")
pcdir=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig
sed -i "s|^prefix=.*|prefix=$prefix/usr|" "$pcdir"/tomlplusplus.pc
export PKG_CONFIG_PATH=$pcdir LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
hip_version=$(awk '/define HIP_VERSION_(MAJOR|MINOR|PATCH)/ {printf "%s%s", sep, $3; sep = "."}' \
  "$prefix"/usr/include/hip/hip_version.h)
say "HIP $hip_version headers from $(basename .debs/libamdhip64-dev_*.deb)"

# 2. Both builds, side by side with half the cores each (a few long nvcc units dominate each build).
build() {  # build DIR CMAKE_ARGS...: exit status in DIR.rc
  local dir=$1
  shift
  if cmake -S "$repo" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DCMAKE_PREFIX_PATH="$prefix/usr" \
    "${pkgconf_arg[@]}" "$@" > "$logs/$(basename "$dir").cmake.log" 2>&1 &&
    cmake --build "$dir" -j $(((jobs + 1) / 2)) --target emprism-mpi emprism_gpu_tests test_distributed_mpi \
      h5_compare \
      > "$logs/$(basename "$dir").build.log" 2>&1; then
    echo 0 > "$dir.rc"
  else
    echo 1 > "$dir.rc"
  fi
}
cuda=$work/build-cuda
hipnv=$work/build-hip-nvidia
t0=$SECONDS
build "$cuda" -DEMPRISM_BACKEND=CUDA &
build "$hipnv" -DEMPRISM_BACKEND=HIP -DEMPRISM_HIP_PLATFORM=nvidia -DEMPRISM_HIP_INCLUDE_DIR="$prefix/usr/include" &
wait
for b in "$cuda" "$hipnv"; do verdict "build $(basename "$b")" "$(cat "$b.rc")" "$((SECONDS - t0)) s for both"; done
[ "$(cat "$cuda.rc")$(cat "$hipnv.rc")" = 00 ] || { finish; exit 1; }

# 3. The GPU tests of both builds.
for b in "$cuda" "$hipnv"; do
  name=$(basename "$b")
  rc=0
  ctest --test-dir "$b" -L gpu --output-on-failure > "$logs/$name.ctest.log" 2>&1 || rc=$?
  skipped=$(grep -c '\*\*\*Skipped' "$logs/$name.ctest.log" || true)
  [ "$skipped" -eq 0 ] || rc=1
  line=$(grep -E 'tests passed|tests failed' "$logs/$name.ctest.log" | tail -1)
  verdict "ctest -L gpu, $name" $rc "$line, $skipped skipped"
done

# 4. The same solves, bitwise: double precision with solutions, and the fp32 benchmark.
runs=$work/runs
mkdir -p "$runs"
cat > "$runs/fp64.toml" << 'EOF'
# hip_nvidia.sh: a double-precision solve whose solutions are compared bitwise between the CUDA and HIP builds.
[lattice]
extents = [16, 16, 16, 32]
[gauge]
source = "random"
width = 0.3
seed = 11
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-10
max_iter = 5000
[output]
file = "fp64.h5"
overwrite = true
fields = true
[[solve]]
name = "point"
type = "point"
site = [1, 2, 3, 4]
spin = 2
colour = 1
[[solve]]
name = "noise"
type = "random"
seed = 5
EOF
cp "$repo/jobs/bench/bench_32x64.toml" "$runs/bench.toml"
sed -i 's|^file = .*|file = "bench.h5"|' "$runs/bench.toml"
run() {  # run BUILD INPUT TAG: the program in runs/TAG, log in logs/TAG.log
  mkdir -p "$runs/$3"
  (cd "$runs/$3" && "$1/emprism-mpi" "$runs/$2" > "$logs/$3.log" 2>&1)
}
compare() {  # compare TAG DESCRIPTION A B: h5_compare's lines in logs/compare-TAG.log
  local rc=0
  "$cuda/tests/h5_compare" "$3" "$4" --rtol 0 --cross-backend > "$logs/compare-$1.log" 2>&1 || rc=$?
  verdict "$2 bitwise equal" $rc "$(tail -1 "$logs/compare-$1.log")"
}
if run "$cuda" fp64.toml cuda-fp64 && run "$hipnv" fp64.toml hip-fp64; then
  compare fp64 "fp64 16^3x32 solves" "$runs/hip-fp64/fp64.h5" "$runs/cuda-fp64/fp64.h5"
else
  verdict "fp64 runs" 1 "see logs/cuda-fp64.log, logs/hip-fp64.log"
fi
for i in 1 2 3; do
  run "$cuda" bench.toml "cuda-bench$i" || verdict "cuda bench run $i" 1 "logs/cuda-bench$i.log"
  run "$hipnv" bench.toml "hip-bench$i" || verdict "hip bench run $i" 1 "logs/hip-bench$i.log"
done
compare bench "fp32 32^3x64 benchmark solves" "$runs/hip-bench1/bench.h5" "$runs/cuda-bench1/bench.h5"

# 5. Hot-kernel times: best ms/call of the three runs of each build, from the kernel table of the log.
python3 - "$logs" "$summary" << 'PY' || fails=$((fails + 1))
import glob, re, sys
logs, summary = sys.argv[1], sys.argv[2]
hot = ["eo_clover", "eo_clover_dag", "oe_clover", "oe_clover_dag", "oe_clover_dag_update", "blas_cg_update",
       "blas_cg_solution", "blas_cg_direction", "blas_axpby", "blas_norm2"]
def best(tag):
    ms = {}
    for path in sorted(glob.glob(f"{logs}/{tag}-bench*.log")):
        for line in open(path):
            m = re.search(r"\] (\w+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$", line)
            if m and m.group(1) in hot:
                ms[m.group(1)] = min(ms.get(m.group(1), 1e30), float(m.group(3)))
    return ms
c, h = best("cuda"), best("hip")
lines = ["", "hot kernels, 32^3x64 fp32 (best ms/call of 3 runs each):",
         f"{'kernel':<16} {'CUDA ms':>9} {'HIP-on-NVIDIA ms':>17} {'ratio':>7}"]
bad = 0
for k in hot:
    if k not in c or k not in h:
        lines.append(f"{k:<16} missing from a kernel table")
        bad += 1
        continue
    r = h[k] / c[k]
    bad += abs(r - 1) > 0.05
    lines.append(f"{k:<16} {c[k]:>9.4f} {h[k]:>17.4f} {r:>7.3f}{'' if abs(r - 1) <= 0.05 else '  > 5%'}")
word = "PASS" if bad == 0 else "FAIL"
lines.append(f"hip_nvidia: {word} hot-kernel times within 5% ({len(hot) - bad} of {len(hot)})")
print("\n".join(lines))
open(summary, "a").write("\n".join(lines) + "\n")
sys.exit(1 if bad else 0)
PY
cp "$summary" "$logs/"
cp "$runs"/*.toml "$logs/"
finish
