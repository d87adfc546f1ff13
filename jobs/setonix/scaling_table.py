#!/usr/bin/env python3
"""scaling_table.py: strong- and weak-scaling table (markdown, CSV) and plot from EmPRiSM-MPI output files.

Usage: python3 jobs/setonix/scaling_table.py [--ranks-per-node N] [--csv FILE] [--plot FILE.png] FILE.h5|DIR ...

Written by jobs/setonix/scaling.sbatch and jobs/local/scaling.sbatch at the end of a series; it can be run by hand
on any set of output files (a directory stands for the *.h5 files in it), GPU or CPU runs alike. Per file it reads
(layout of README.md, "Output"): the root attributes extents, ranks, process_grid, backend and device; the attributes
iterations, seconds and converged of every /solves/<name>; and the /metrics/ranks table (compute_s, halo_wait_s,
reduction_s per rank). The time per CG iteration is the summed solve seconds over the summed iterations.

Series: a file whose name starts with "weak" belongs to the weak-scaling series; every other file to the strong
series of its global extents. Within a series the point with the fewest ranks is the reference:
  strong: speedup = t(ref) / t, efficiency = speedup * ranks(ref) / ranks     (t = time per CG iteration)
  weak:   efficiency = t(ref) / t                                             (same local lattice per rank)
Columns "compute" and "halo wait" are the slowest rank's /metrics/ranks times per CG iteration; "halo %" is the
mean halo wait over the mean of compute + halo wait + reductions. --ranks-per-node adds a nodes column and plots
against nodes (8 on Setonix: one rank per GCD). The plot needs matplotlib; without it the plot is skipped with a
warning. Exit status: 0 table written, 1 no readable file, 2 bad command line.
"""
import argparse
import csv
import glob
import math
import os
import sys

import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def read_point(path):
    with h5py.File(path, "r") as f:
        root = f.attrs
        extents = [int(e) for e in root["extents"]]
        grid = [int(p) for p in root["process_grid"]]
        ranks = int(root["ranks"])
        iterations, seconds, converged, nsolves = 0, 0.0, True, 0
        for g in f["solves"].values():
            iterations += int(g.attrs["iterations"])
            seconds += float(g.attrs["seconds"])
            converged = converged and bool(g.attrs["converged"])
            nsolves += 1
        rows = f["metrics/ranks"][...]
        compute, halo, red = rows["compute_s"], rows["halo_wait_s"], rows["reduction_s"]
        busy = float(compute.mean() + halo.mean() + red.mean())
        name = os.path.basename(path)
        return {
            "file": path,
            "series": "weak" if name.startswith("weak") else "strong " + "x".join(map(str, extents)),
            "extents": "x".join(map(str, extents)),
            "ranks": ranks,
            "grid": "x".join(map(str, grid)),
            "local": "x".join(str(e // p) for e, p in zip(extents, grid)),
            "backend": text(root["backend"]),
            "device": text(root["device"]),
            "solves": nsolves,
            "iterations": iterations,
            "seconds": seconds,
            "ms_per_iter": 1e3 * seconds / iterations if iterations else float("nan"),
            "compute_ms_per_iter": 1e3 * float(compute.max()) / iterations if iterations else float("nan"),
            "halo_ms_per_iter": 1e3 * float(halo.max()) / iterations if iterations else float("nan"),
            "halo_percent": 100.0 * float(halo.mean()) / busy if busy > 0 else 0.0,
            "load_balance": float(compute.mean() / compute.max()) if compute.max() > 0 else 1.0,
            "converged": converged,
        }


def expand(args):
    paths = []
    for a in args:
        paths += sorted(glob.glob(os.path.join(a, "*.h5"))) if os.path.isdir(a) else [a]
    return paths


def add_scaling(points, rpn):
    series = {}
    for p in points:
        p["nodes"] = math.ceil(p["ranks"] / rpn) if rpn else ""
        series.setdefault(p["series"], []).append(p)
    for name, pts in series.items():
        pts.sort(key=lambda p: p["ranks"])
        ref = pts[0]
        for p in pts:
            ratio = ref["ms_per_iter"] / p["ms_per_iter"] if p["ms_per_iter"] > 0 else float("nan")
            if name == "weak":
                p["speedup"] = ratio * p["ranks"] / ref["ranks"]  # scaled speedup
                p["efficiency"] = ratio
            else:
                p["speedup"] = ratio
                p["efficiency"] = ratio * ref["ranks"] / p["ranks"]
    # strong series by lattice volume, the weak series last
    order = sorted(series, key=lambda n: (n == "weak", math.prod(int(e) for e in series[n][0]["extents"].split("x"))))
    return {n: series[n] for n in order}


COLUMNS = [("series", "series", "{}"), ("extents", "extents", "{}"), ("ranks", "ranks", "{}"), ("nodes", "nodes", "{}"),
           ("grid", "grid", "{}"), ("local", "local", "{}"), ("iterations", "CG iter", "{}"),
           ("ms_per_iter", "ms/iter", "{:.3f}"), ("speedup", "speedup", "{:.2f}"), ("efficiency", "efficiency", "{:.2f}"),
           ("compute_ms_per_iter", "compute ms/iter", "{:.3f}"), ("halo_ms_per_iter", "halo wait ms/iter", "{:.3f}"),
           ("halo_percent", "halo %", "{:.1f}"), ("load_balance", "load balance", "{:.2f}"),
           ("converged", "converged", "{}")]


def markdown(series, rpn):
    cols = [c for c in COLUMNS if c[0] != "series" and (rpn or c[0] != "nodes")]
    for name, pts in series.items():
        kind = "Weak scaling (local lattice per rank fixed)" if name == "weak" else f"Strong scaling, {pts[0]['extents']}"
        print(f"### {kind}: {pts[0]['backend']} ({pts[0]['device']})")
        print()
        print("| " + " | ".join(c[1] for c in cols) + " |")
        print("|" + "|".join("---" if c[0] in ("extents", "grid", "local", "converged") else "---:" for c in cols) + "|")
        for p in pts:
            print("| " + " | ".join(c[2].format(p[c[0]]) for c in cols) + " |")
        print()


def write_csv(path, points):
    keys = [c[0] for c in COLUMNS] + ["seconds", "solves", "backend", "device", "file"]
    with open(path, "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for p in points:
            w.writerow(p)


def plot(path, series, rpn):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"scaling_table: matplotlib is not available; no plot {path}", file=sys.stderr)
        return
    xkey, xlabel = ("nodes", "nodes") if rpn else ("ranks", "MPI ranks")
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, pts in series.items():
        xs = [p[xkey] for p in pts]
        if name != "weak":
            ts = [p["ms_per_iter"] for p in pts]
            line, = ax_t.plot(xs, ts, "o-", label=pts[0]["extents"])
            ax_t.plot(xs, [ts[0] * xs[0] / x for x in xs], "--", color=line.get_color(), alpha=0.5)
        ax_e.plot(xs, [p["efficiency"] for p in pts], "o-" if name != "weak" else "s-",
                  label=("weak, local " + pts[0]["local"]) if name == "weak" else "strong " + pts[0]["extents"])
    ticks = sorted({p[xkey] for pts in series.values() for p in pts})
    for ax in (ax_t, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time per CG iteration [ms]")
    ax_t.set_title("Strong scaling (dashed: ideal)")
    ax_e.set_ylabel("parallel efficiency")
    ax_e.set_ylim(bottom=0)
    ax_e.axhline(1.0, color="grey", lw=0.8)
    ax_e.set_title("Efficiency (strong and weak)")
    for ax in (ax_t, ax_e):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"scaling_table: wrote {path}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="output files (.h5) or directories holding them")
    ap.add_argument("--ranks-per-node", type=int, default=0, help="ranks per node: adds a nodes column (Setonix: 8)")
    ap.add_argument("--csv", help="also write the table as CSV to this file")
    ap.add_argument("--plot", help="write the scaling plot (PNG) to this file (needs matplotlib)")
    args = ap.parse_args()
    points = []
    for path in expand(args.paths):
        try:
            points.append(read_point(path))
        except (OSError, KeyError, ValueError) as e:
            print(f"scaling_table: skipping {path}: {e}", file=sys.stderr)
    if not points:
        print("scaling_table: no readable output files", file=sys.stderr)
        return 1
    series = add_scaling(points, args.ranks_per_node)
    markdown(series, args.ranks_per_node)
    if args.csv:
        write_csv(args.csv, points)
    if args.plot:
        plot(args.plot, series, args.ranks_per_node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
