#!/usr/bin/env python3
"""check_registers.py: reads the per-kernel resource report of a GPU compile and checks it against the register
budgets of kernels/register_budgets.txt.

Input: the compiler output of a build of the kernel translation units with the resource report on
(EMPRISM_RESOURCE_REPORT=ON, as jobs/check_gpu_builds.sh builds them):
  hip   hipcc -Rpass-analysis=kernel-resource-usage remarks (gfx90a: VGPRs, AGPRs, SGPRs, scratch, occupancy)
  cuda  nvcc -Xptxas -v lines (sm_90: registers, spill stores/loads, stack frame)
Prints one line per kernel (demangled, namespaces dropped), then checks every budget line of the backend:
  - every kernel whose name matches the pattern uses at most the budget's registers (hip: VGPRs + AGPRs),
  - and does not spill to memory (hip: scratch 0 B/lane and no VGPR spills; cuda: 0 B spill stores and loads;
    SGPR spills on AMD GPUs go to lanes of a VGPR, counted in the VGPRs, and are only shown),
  - and each pattern matches at least one kernel (a renamed kernel must not slip out of the check).
Exit status: 0 when every budget holds, 1 when one does not (one line per violation), 2 on bad input.
Usage: check_registers.py {hip|cuda} LOG [--budgets FILE] [--quiet]
Who may call: jobs/check_gpu_builds.sh (CI) and tests/tools/test_check_registers.py; needs c++filt (binutils).
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUDGETS = os.path.join(HERE, "..", "kernels", "register_budgets.txt")


def demangle(names):
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    pretty = []
    for name in out.split("\n")[: len(names)]:
        name = re.sub(r"emprism::|backend::|^void |\(.*$", "", name)
        pretty.append(name.strip())
    return pretty


def parse_hip(log):
    """Kernels of hipcc's kernel-resource-usage remarks, in order of appearance."""
    kernels = []
    for m in re.finditer(r"Function Name: (\S+)(.*?)LDS Size \[bytes/block\]: (\d+)", log, re.S):
        body = m.group(2)

        def get(key, body=body):
            f = re.search(re.escape(key) + r": (\d+)", body)
            return int(f.group(1)) if f else 0

        kernels.append({"mangled": m.group(1), "registers": get("VGPRs") + get("AGPRs"), "vgprs": get("VGPRs"),
                        "agprs": get("AGPRs"), "sgprs": get("SGPRs"), "scratch": get("ScratchSize [bytes/lane]"),
                        "spills": get("VGPRs Spill"), "sgpr_spills": get("SGPRs Spill"),
                        "occupancy": get("Occupancy [waves/SIMD]")})
    return kernels


def parse_cuda(log):
    """Kernels of ptxas -v: 'Function properties for X' followed by the stack/spill line and 'Used N registers'."""
    kernels = []
    pat = (r"Function properties for (\S+)\n\s*(\d+) bytes stack frame, (\d+) bytes spill stores, "
           r"(\d+) bytes spill loads\n(?:ptxas info\s*: )?\s*Used (\d+) registers")
    for m in re.finditer(pat, log):
        kernels.append({"mangled": m.group(1), "registers": int(m.group(5)), "stack": int(m.group(2)),
                        "spills": int(m.group(3)) + int(m.group(4))})
    return kernels


def unique_named(kernels):
    """Demangles and keeps the first report of each kernel (a kernel compiled in two units is reported twice)."""
    seen, out = set(), []
    for k, name in zip(kernels, demangle([k["mangled"] for k in kernels])):
        if name in seen:
            continue
        seen.add(name)
        k["name"] = name
        out.append(k)
    return out


def describe(kind, k):
    if kind == "hip":
        sgpr_spills = f" ({k['sgpr_spills']} spilt to VGPR lanes)" if k["sgpr_spills"] else ""
        return (f"VGPRs {k['vgprs']:>3}  AGPRs {k['agprs']:>2}  SGPRs {k['sgprs']:>3}{sgpr_spills}  scratch "
                f"{k['scratch']:>3} B/lane  occupancy {k['occupancy']} waves/SIMD")
    return f"registers {k['registers']:>3}  spills {k['spills']:>3} B  stack {k['stack']} B"


def read_budgets(path, kind):
    """Lines 'backend  max_registers  pattern' (pattern: fnmatch over the demangled name, may hold spaces)."""
    budgets = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) != 3 or parts[0] not in ("hip", "cuda") or not parts[1].isdigit():
                raise ValueError(f"{path}:{n}: expected 'hip|cuda  MAX_REGISTERS  PATTERN', got '{line}'")
            if parts[0] == kind:
                budgets.append((parts[2], int(parts[1]), n))
    return budgets


def check(kind, kernels, budgets):
    """Violations, one line each."""
    errors = []
    for pattern, limit, line in budgets:
        matched = [k for k in kernels if fnmatch.fnmatchcase(k["name"], pattern)]
        if not matched:
            errors.append(f"budget line {line} ({pattern}): no {kind} kernel matches")
        for k in matched:
            if k["registers"] > limit:
                errors.append(f"{k['name']}: {k['registers']} registers > budget {limit} (line {line})")
            spilled = k["spills"] > 0 or (kind == "hip" and k["scratch"] > 0)
            if spilled:
                what = f"scratch {k['scratch']} B/lane, {k['spills']} VGPR spills" if kind == "hip" else \
                    f"{k['spills']} B spill stores+loads"
                errors.append(f"{k['name']}: spills ({what}; line {line})")
    return errors


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["hip", "cuda"])
    ap.add_argument("log")
    ap.add_argument("--budgets", default=DEFAULT_BUDGETS)
    ap.add_argument("--quiet", action="store_true", help="print only the verdict")
    args = ap.parse_args(argv)
    try:
        with open(args.log, errors="replace") as f:
            log = f.read()
        budgets = read_budgets(args.budgets, args.kind)
    except (OSError, ValueError) as e:
        print(f"check_registers: {e}", file=sys.stderr)
        return 2
    kernels = unique_named(parse_hip(log) if args.kind == "hip" else parse_cuda(log))
    if not kernels:
        print(f"check_registers: no {args.kind} kernel resources in {args.log}", file=sys.stderr)
        return 2
    if not args.quiet:
        for k in kernels:
            print(f"  {describe(args.kind, k)}  {k['name']}")
        print(f"  ({len(kernels)} kernels)")
    errors = check(args.kind, kernels, budgets)
    for e in errors:
        print(f"check_registers: FAIL {e}")
    if errors:
        return 1
    print(f"check_registers: {args.kind}: the {len(budgets)} budgets of {os.path.relpath(args.budgets)} hold "
          f"(registers; no spills to memory)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
