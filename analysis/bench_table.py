#!/usr/bin/env python3
"""bench_table.py: per-kernel benchmark tables (markdown) from EmPRiSM-MPI output files.

For each file: the lattice, device and empirical peak, then one row per kernel with calls, ms per call,
GB/s (minimum bytes / time), % of the empirical peak, GFLOP/s, registers, spill bytes and theoretical
occupancy, and the time per CG iteration of each solve. Usage: python3 analysis/bench_table.py out1.h5 ...
Reads the layout documented in README.md with h5py.
"""
import sys

import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def table(path):
    with h5py.File(path, "r") as f:
        root = f.attrs
        ext = "x".join(str(int(e)) for e in root["extents"])
        peak = f["metrics/peak"].attrs
        print(f"### {ext} ({text(root['precision'])}, {int(root['ranks'])} rank(s), {text(root['backend'])}: "
              f"{text(root['device'])})")
        print(f"Empirical peak: copy {peak['copy_gbs']:.0f}, triad {peak['triad_gbs']:.0f}, "
              f"read {peak['read_gbs']:.0f} GB/s; peak used {peak['peak_gbs']:.0f} GB/s. File: {path}")
        print()
        print("| kernel | calls | ms/call | GB/s | % of peak | GFLOP/s | registers | spill B | occupancy |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in f["metrics/kernels"]:
            calls = int(k["calls"])
            ms = 1e3 * k["total_s"] / calls if calls else 0.0
            gflops = k["flops"] / k["total_s"] / 1e9 if k["total_s"] > 0 else 0.0
            occ = f"{100 * k['occupancy']:.0f}%" if k["occupancy"] >= 0 else "-"
            reg = int(k["registers"]) if k["registers"] >= 0 else "-"
            spill = int(k["spill_bytes"]) if k["spill_bytes"] >= 0 else "-"
            print(f"| {text(k['name'])} | {calls} | {ms:.4f} | {k['gbs']:.0f} | {k['percent_of_peak']:.1f} | "
                  f"{gflops:.0f} | {reg} | {spill} | {occ} |")
        print()
        for name, g in f["solves"].items():
            it = int(g.attrs["iterations"])
            sec = float(g.attrs["seconds"])
            per = 1e3 * sec / it if it else 0.0
            print(f"Solve {name}: {it} CG iterations in {sec:.3f} s = {per:.3f} ms per iteration "
                  f"(true residual {g.attrs['true_residual']:.2e}, converged {bool(g.attrs['converged'])})")
        print()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    for path in sys.argv[1:]:
        table(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
