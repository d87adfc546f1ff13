#!/usr/bin/env python3
"""ncu_sass.py: where one kernel's warps wait, instruction by instruction, from Nsight Compute's source page (ncu
--section SourceCounters, then `ncu -i REPORT --page source --csv --print-source sass`): the stall reasons of all its
samples, then the kernel cut into load rounds, then its hottest instructions.

    python3 analysis/ncu_sass.py kernel_sass.csv [--hot N] [--min-wait F]

A load round starts at a global load (LDG) that follows a long-scoreboard wait (an instruction holding at least F of
the samples as stall_long_sb, default 0.005) since the round's own first load: a hopping kernel's rounds are its hops
(each hop's loads are issued together and waited on once) and its epilogue's groups of loads. Per round: the first
instruction's index, its instructions, loads and stores, and its share of the samples, of the long-scoreboard ones
(waiting on memory) and of the no-instruction ones (instruction fetch). The CSV of BENCHMARKS.md's oe_clover_half
table (2026-12-02: its epilogue takes 48% of the samples in seven rounds) came from a solve with the tune cache filled:

    ncu --clock-control none --kernel-name-base demangled -k "regex:EpiCloverXpay<emprism::Half" --launch-skip 30 \
        --launch-count 1 --section SourceCounters --section WarpStateStats --import-source no -o oe \
        ./emprism-mpi in.toml
    ncu -i oe.ncu-rep --page source --csv --print-source sass > oe_sass.csv

Only the standard library and analysis/ncu_table.py (its reader of ncu's files). ncu writes the kernel's name on the
first line, the column names on the second. A file that cannot be read or is not such a page: one line on stderr, exit
status 2."""
import argparse
import csv

from ncu_table import csv_lines, fail

TOOL = "ncu_sass.py"
ALL = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
LONG_SB = "stall_long_sb"
NO_INST = "stall_no_inst"


def number(text):
    """A count as ncu prints it ('1,048,576', '-' or '' for none)."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read(path):
    """The kernel's name and one dict per SASS instruction, in program order; exits 2 with one line when the file
    cannot be read or is not ncu's source page."""
    rows = list(csv.reader(csv_lines(path, TOOL)))
    if len(rows) < 2 or rows[0][:1] != ["Kernel Name"] or ALL not in rows[1]:
        fail(f"{path} is not ncu's source page of one kernel (--page source --csv --print-source sass)", TOOL)
    header = rows[1]
    return rows[0][1], [dict(zip(header, r)) for r in rows[2:] if len(r) == len(header)]


def opcode(instr):
    """The instruction's opcode without its predicate and modifiers: 'LDG' for '@P0 LDG.E.64 R2, ...'."""
    words = instr.get("Source", "").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def rounds(instrs, min_wait):
    """The start indices of the load rounds (the docstring's rule); min_wait in samples."""
    starts, loaded, waited = [0], False, False
    for i, ins in enumerate(instrs):
        if opcode(ins) == "LDG":
            if loaded and waited:
                starts.append(i)
                waited = False
            loaded = True
        elif loaded and number(ins.get(LONG_SB, "0")) >= min_wait:
            waited = True
    return starts


def share(part, total):
    return 100.0 * part / total if total > 0 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--hot", type=int, default=10, help="hottest instructions to list (default 10)")
    ap.add_argument("--min-wait", type=float, default=0.005, help="a wait's least share of the samples")
    args = ap.parse_args()
    name, instrs = read(args.csv)
    total = sum(number(i.get(ALL, "0")) for i in instrs)
    print(f"kernel: {name}")
    print(f"{len(instrs)} instructions, {total:.0f} samples, {sum(number(i.get(EXECUTED, '0')) for i in instrs):.0f} "
          "warp instructions executed")
    sums = {k: sum(number(i.get(k, "0")) for i in instrs)
            for k in (instrs[0] if instrs else {}) if k.startswith("stall_") and "(" not in k}
    reasons = sorted(sums, key=lambda k: -sums[k])
    print("stall reasons, % of the samples: " + ", ".join(f"{k[6:]} {share(sums[k], total):.1f}" for k in reasons[:8]))
    starts = rounds(instrs, args.min_wait * total)
    print(f"\n{'round':>5} {'first':>6} {'instr':>6} {'loads':>5} {'stores':>6} {'samples%':>8} {'long_sb%':>8} "
          f"{'no_inst%':>8}")
    for n, (a, b) in enumerate(zip(starts, starts[1:] + [len(instrs)])):
        part = instrs[a:b]
        ops = [opcode(i) for i in part]
        pct = [share(sum(number(i.get(k, "0")) for i in part), total) for k in (ALL, LONG_SB, NO_INST)]
        print(f"{n:>5} {a:>6} {b - a:>6} {ops.count('LDG'):>5} {ops.count('STG'):>6} "
              f"{pct[0]:>8.1f} {pct[1]:>8.1f} {pct[2]:>8.1f}")
    print(f"\nhottest instructions ({args.hot}):")
    hot = sorted(range(len(instrs)), key=lambda k: -number(instrs[k].get(ALL, "0")))[: args.hot]
    for k in sorted(hot):
        ins = instrs[k]
        top = max(reasons, key=lambda r: number(ins.get(r, "0"))) if reasons else "-"
        src = ins.get("Source", "").strip()[:70]
        print(f"{k:>6} {share(number(ins.get(ALL, '0')), total):5.1f}% {top[6:]:<14} {src}")


if __name__ == "__main__":
    main()
