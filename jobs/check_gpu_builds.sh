#!/usr/bin/env bash
# check_gpu_builds.sh: builds the two GPU backends on a machine without a GPU (CI) and prints each kernel's
# resources as the compilers report them:
#   HIP  with hipcc for gfx90a (MI250X GCD):  -Rpass-analysis=kernel-resource-usage (VGPRs, SGPRs, scratch, occupancy)
#   CUDA with nvcc for sm_90 (H100/H200):      -Xptxas -v (registers, spill stores/loads)
# It compiles and links the program and the test programs (nothing runs: no GPU). A build failure exits non-zero.
# Usage: jobs/check_gpu_builds.sh [hip|cuda|all]   (default all). Needs: hipcc + libamdhip64-dev (Debian/Ubuntu
# packages "hipcc libamdhip64-dev"; installed here if missing) and nvcc (CUDA_HOME, default /usr/local/cuda).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
what=${1:-all}
jobs=$(nproc 2> /dev/null || echo 2)
cuda_home=${CUDA_HOME:-/usr/local/cuda}

# Demangled, one line per kernel: the functor of the generic kernel and its resources.
report() {
  python3 - "$1" "$2" << 'PY'
import re, subprocess, sys
kind, log = sys.argv[1], open(sys.argv[2]).read()
rows = []
if kind == "hip":
    for m in re.finditer(r"Function Name: (\S+)(.*?)LDS Size \[bytes/block\]: (\d+)", log, re.S):
        body = m.group(2)
        get = lambda k: re.search(re.escape(k) + r": (\d+)", body).group(1)
        vgpr, sgpr = get("VGPRs"), get("SGPRs")
        scratch, occ = get("ScratchSize [bytes/lane]"), get("Occupancy [waves/SIMD]")
        rows.append((m.group(1), f"VGPRs {vgpr:>3}  SGPRs {sgpr:>3}  scratch {scratch:>3} B/lane  occupancy {occ} waves/SIMD"))
else:
    for m in re.finditer(r"Function properties for (\S+)\n\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads\n"
                         r"ptxas info\s*: Used (\d+) registers", log):
        rows.append((m.group(1), f"registers {m.group(5):>3}  spill stores {m.group(3):>3} B  spill loads {m.group(4):>3} B  stack {m.group(2)} B"))
seen = set()
names = subprocess.run(["c++filt"], input="\n".join(r[0] for r in rows), capture_output=True, text=True).stdout.split("\n")
for (mangled, res), name in zip(rows, names):
    name = re.sub(r"emprism::|backend::|^void |\(.*$", "", name)
    if name in seen:
        continue
    seen.add(name)
    print(f"  {res}  {name}")
print(f"  ({len(seen)} kernels)")
PY
}

if [ "$what" = hip ] || [ "$what" = all ]; then
  if ! command -v hipcc > /dev/null; then
    echo "check_gpu_builds: installing hipcc libamdhip64-dev"
    sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
    $sudo_cmd apt-get update -q > /dev/null
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -q hipcc libamdhip64-dev > /dev/null
  fi
  echo "check_gpu_builds: HIP backend, hipcc, gfx90a"
  cmake -S "$repo" -B "$repo/build-hip" -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=HIP -DCMAKE_CXX_COMPILER=hipcc \
    -DEMPRISM_HIP_ARCH=gfx90a -DEMPRISM_RESOURCE_REPORT=ON > "$repo/build-hip.cmake.log"
  touch "$repo"/src/physics/dirac.cpp "$repo"/src/physics/blas.cpp "$repo"/src/physics/peak.cpp  # the report is printed when they compile
  cmake --build "$repo/build-hip" -j "$jobs" > "$repo/build-hip.log" 2>&1 || { tail -60 "$repo/build-hip.log"; exit 1; }
  echo "check_gpu_builds: HIP gfx90a build OK; per-kernel resources (hot kernels and BLAS):"
  report hip "$repo/build-hip.log"
fi

if [ "$what" = cuda ] || [ "$what" = all ]; then
  [ -x "$cuda_home/bin/nvcc" ] || { echo "check_gpu_builds: no nvcc at $cuda_home/bin/nvcc (set CUDA_HOME)" >&2; exit 1; }
  echo "check_gpu_builds: CUDA backend, nvcc, sm_90"
  cmake -S "$repo" -B "$repo/build-cuda" -DCMAKE_BUILD_TYPE=Release -DEMPRISM_BACKEND=CUDA \
    -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES=90 -DEMPRISM_RESOURCE_REPORT=ON \
    > "$repo/build-cuda.cmake.log"
  touch "$repo"/src/physics/dirac.cpp "$repo"/src/physics/blas.cpp "$repo"/src/physics/peak.cpp
  cmake --build "$repo/build-cuda" -j "$jobs" > "$repo/build-cuda.log" 2>&1 || { tail -60 "$repo/build-cuda.log"; exit 1; }
  echo "check_gpu_builds: CUDA sm_90 build OK; per-kernel resources:"
  report cuda "$repo/build-cuda.log"
fi
