#!/usr/bin/env python3
"""report.py: a text report and PNG plots of one EmPRiSM-MPI output file, or the analysis of an ensemble.

Usage: python3 analysis/report.py OUT.h5 [--out-dir DIR] [--no-plots]
       python3 analysis/report.py FILE... [--bin N] [--fit-range TMIN TMAX] [--uncorrelated] [--fold]
                                  [--fit-channels LIST] [--p-min P] [--summary OUT.h5|OUT.csv] [--out-dir DIR]
                                  [--no-plots]

The first form (one single-configuration file, none of the ensemble options) is the run report below. Given an
ensemble file (/configs/<id>/...), several files (ensemble files and single-configuration files in any mix), or
any ensemble option, it is the ensemble report of ensemble_report.py: mean correlators and effective masses with
jackknife errors, fits of the pion mass (README "Analysis over an ensemble"); plots ensemble_<name>.png in DIR
(default: <first file stem>_report_ensemble/ beside it).

Prints to stdout:
  - a header: program, lattice, precision, ranks and process grid, backend and device, gauge field, empirical peak;
  - the per-kernel tables of /metrics/kernels (rank 0's kernels), one per group: stencil kernels (the Dirac
    operator's hops, which the empirical peak judges), BLAS kernels (vector operations), host kernels (a
    propagator's smearing and contractions) and any others; per kernel, by total time: calls, ms per call, GB/s
    (minimum bytes / time), % of the empirical peak (marked '*' above 100%: the data stayed in cache between calls,
    so the rate is no memory-bandwidth figure), GFLOP/s, registers, spill bytes and theoretical occupancy ('-'
    where unknown); then a summary of the per-rank times of /metrics/ranks (min / mean / max, load balance);
  - the solve summary: kind, CG iterations, restarts, true residual, converged, seconds, ms per iteration;
  - for each propagator solve: its source and smearing, the 12 columns' iterations and residuals, and for each
    correlator channel at p = 0: Re C(0), Re C(Lt/2), the effective mass at t = 1 and Lt/4 and its mean over the
    middle third of the lattice (finite points only), the effective energies of the non-zero momenta, and the PCAC
    mass averaged over the same window and in the middle. One file is one gauge configuration: these numbers have
    no statistical error, and none is printed (the spread over timeslices is not one).
Writes, unless --no-plots, into DIR (default: <file stem>_report/ beside the file), with matplotlib (Agg):
  residual_history.png      CG residual history of every solve (log scale; a propagator's 12 columns are thin
                            lines of one colour with one legend entry)
  bandwidth.png             achieved GB/s of each kernel, one panel per kernel group (each with its own scale),
                            the empirical peak as a line, % of peak on the bars; bars above the peak hatched and
                            labelled "cache", the axis cut at 1.3 x the peak so that they do not flatten the rest
  correlators_<name>.png    per propagator: |C(t)| per channel (log scale), effective masses, PCAC mass (its range
                            set by t = 2 .. Lt-2: the contact terms at t = 0, 1, Lt-1 drawn open, possibly outside);
                            points without error bars (one configuration)

Modules beside it: output_file.py reads the file and derives the numbers, report_plots.py draws the plots; this
file prints the report and runs the command line.

Layout read (docs/conventions.md section 13; README.md "Output"), with h5py:
  /                      attrs program_version, git_hash, date, backend, device, ranks, process_grid[4],
                         extents[4] (Lx, Ly, Lz, Lt), precision; optional input_hash, physics_inputs
  /gauge                 attrs plaquette, link_trace, source
  /solves/<name>         attrs iterations, restarts, true_residual, converged, seconds, kappa, csw, tol,
                         source_kind, optional complete; dataset residual_history [iterations], or for
                         source_kind = "propagator" a group residual_history/ with datasets s<spin>c<colour>, the
                         datasets column_iterations [4][3], column_true_residual [4][3] and the attributes
                         source_site, smearing, smearing_steps, smearing_weight, link_smearing, link_smearing_steps,
                         link_smearing_weight; the fields (solution, source, propagator) are not read
  /correlators/<name>    attrs source_site, momenta [n][3] (first row 0 0 0), channels, sink, convention;
                         datasets <channel> [Lt] complex (attrs gamma_sink, gamma_source, time_parity, momentum),
                         effective_mass/<channel> [Lt] (attr form), pcac_mass [Lt]; the same per non-zero momentum
                         in groups p<nx>_<ny>_<nz>/
  /metrics/peak          attrs copy_gbs, triad_gbs, read_gbs, peak_gbs, measured
  /metrics/kernels       table name, calls, total_s, mean_s, min_s, flops, bytes, gbs, percent_of_peak, registers,
                         spill_bytes, shared_bytes, block, occupancy (-1 where unknown)
  /metrics/ranks         table rank, compute_s, halo_wait_s, reduction_s
Every group but the root attributes program_version and extents is optional (files with no propagators, no
solves, output.fields = false or metrics.peak = false all work).

Exit status: 0 report written; 2 bad command line, or a file that is missing, unreadable, not HDF5 or not an
EmPRiSM-MPI output file (one line "report.py: ERROR: <file>: <reason>" on stderr); 1 the plots could not be written.
"""
import argparse
import math
import os
import sys

import numpy as np

from output_file import (CACHE_NOTE, ReportError, above_peak, channel_summary, grouped_kernels, kernel_summary, load,
                         peak_measured, plateau, plateau_window, rank_summary)
from report_plots import write_plots

import ensemble_report
from ensemble import is_ensemble_file

PROG = "report.py"


# ----------------------------------------------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------------------------------------------

def sig(x, digits=4):
    """x to `digits` significant digits (an exponent only for very large or small values); '-' for None/NaN."""
    if x is None or not math.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    e = int(math.floor(math.log10(abs(x))))
    if e >= digits or e < -4:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{max(digits - 1 - e, 0)}f}"


def fixed(x, decimals):
    """x with `decimals` decimals; '-' for None/NaN."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.{decimals}f}"


def columns(rows, header, right):
    """Lines of a whitespace-aligned table; `right` says which columns are right-aligned."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [str(c).rjust(w) if right[i] else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def print_header(data, out):
    """Program, lattice, ranks, backend and device, gauge field, empirical peak."""
    r = data["root"]
    ext = r["extents"]
    print(f"EmPRiSM-MPI report: {data['path']}", file=out)
    print(f"program {r['program_version']} (git {r['git_hash']}), run {r['date']}", file=out)
    print(f"lattice {'x'.join(map(str, ext))} (volume {int(np.prod(ext))}), precision {r['precision']}", file=out)
    print(f"ranks {r['ranks']}, process grid {'x'.join(map(str, r['process_grid']))}", file=out)
    print(f"backend {r['backend']}, device {r['device']}", file=out)
    if r["input_hash"] is not None:
        print(f"input hash {r['input_hash']}", file=out)
    g = data["gauge"]
    if g is not None:
        print(f"gauge {g['source']}: plaquette {g['plaquette']:.10f}, link trace {g['link_trace']:.10f}", file=out)
    p = data["peak"]
    if peak_measured(p):
        print(f"empirical peak: copy {p['copy_gbs']:.1f}, triad {p['triad_gbs']:.1f}, read {p['read_gbs']:.1f} GB/s;"
              f" peak used {p['peak_gbs']:.1f} GB/s", file=out)
    else:
        print("empirical peak: not measured (metrics.peak = false)", file=out)


def print_kernels(data, out):
    """The per-kernel tables, one per group, and the per-rank time summary."""
    print(file=out)
    kernels = data["kernels"]
    peak = data["peak"]
    measured = peak_measured(peak)
    print(f"Kernels ({len(kernels)}, rank 0; GB/s = minimum bytes / time; %peak of the measured peak)", file=out)
    if not kernels:
        print("  (no kernel metrics in the file)", file=out)
    header = ["kernel", "calls", "ms/call", "GB/s", "%peak", "GFLOP/s", "regs", "spill_B", "occupancy"]
    cached = 0
    for _, title, _, group in grouped_kernels(kernels):
        rows = []
        for k in group:
            s = kernel_summary(k)
            occ = f"{100 * s['occupancy']:.0f}%" if s["occupancy"] is not None else "-"
            pct = fixed(k["percent_of_peak"], 1) if measured else "-"
            if above_peak(k, peak):
                pct += "*"
                cached += 1
            rows.append([k["name"], int(k["calls"]), sig(s["ms_per_call"]), fixed(k["gbs"], 1), pct,
                         fixed(s["gflops"], 1), s["registers"] if s["registers"] is not None else "-",
                         s["spill_bytes"] if s["spill_bytes"] is not None else "-", occ])
        print(file=out)
        print(f"{title} ({len(group)})", file=out)
        for line in columns(rows, header, [False] + [True] * 8):
            print(line, file=out)
    if cached:
        print(file=out)
        print(f"* {cached} kernel(s) {CACHE_NOTE}.", file=out)
    print_ranks(data["ranks"], out)


def print_ranks(rows, out):
    """min / mean / max of the per-rank times and the load balance."""
    s = rank_summary(rows)
    print(file=out)
    if s is None:
        print("Rank times: (no /metrics/ranks in the file)", file=out)
        return
    print(f"Rank times ({s['ranks']} rank(s), seconds)", file=out)
    table = [[label, sig(s[key][0]), sig(s[key][1]), sig(s[key][2])]
             for label, key in (("compute", "compute_s"), ("halo_wait", "halo_wait_s"),
                                ("reduction", "reduction_s"))]
    for line in columns(table, ["time", "min", "mean", "max"], [False, True, True, True]):
        print(line, file=out)
    print(f"  load balance (mean / max compute): {s['load_balance']:.3f}", file=out)


def print_solves(data, out):
    """One row per solve."""
    print(file=out)
    solves = data["solves"]
    print(f"Solves ({len(solves)})", file=out)
    if not solves:
        print("  (no solves in the file)", file=out)
        return
    header = ["solve", "kind", "iterations", "restarts", "true_residual", "converged", "seconds", "ms/iter", "fields"]
    rows = [[s["name"], s["kind"], s["iterations"], s["restarts"], f"{s['true_residual']:.3e}",
             "yes" if s["converged"] else "NO", sig(s["seconds"]), sig(s["ms_per_iteration"]),
             "yes" if s["fields"] else "no"] for s in solves]
    for line in columns(rows, header, [False, False, True, True, True, True, True, True, True]):
        print(line, file=out)
    for s in solves:
        if not s["complete"]:
            print(f"  note: solve {s['name']} is marked incomplete (complete = false)", file=out)


def smearing_text(p):
    """The smearing attributes of a propagator in words."""
    kind = p.get("smearing", "none")
    if kind in ("none", None):
        return "point source (no smearing)"
    words = f"{kind} smearing ({p.get('smearing_steps', '?')} steps, weight {p.get('smearing_weight', '?')})"
    link = p.get("link_smearing", "none")
    if link not in ("none", None):
        words += (f" on {link} links ({p.get('link_smearing_steps', '?')} steps, "
                  f"weight {p.get('link_smearing_weight', '?')})")
    return words


def print_propagator_solve(s, out):
    """Source, smearing and the 12 columns of one propagator solve."""
    p = s["propagator"]
    site = ", ".join(map(str, p["source_site"]))
    print(f"Propagator {s['name']}: source site ({site}); {smearing_text(p)}", file=out)
    its, res = p["column_iterations"], p["column_true_residual"]
    if its is not None and res is not None:
        print(f"  12 columns: iterations {int(its.min())}..{int(its.max())} (sum {int(its.sum())}), "
              f"max true residual {float(res.max()):.3e}, all converged {'yes' if s['converged'] else 'NO'}",
              file=out)


def print_correlator_group(c, lt, out):
    """Channel summaries at p = 0, effective energies at p != 0 and the PCAC mass of one propagator."""
    lo, hi = plateau_window(lt)
    moms = " ".join("(" + ",".join(map(str, sec["momentum"])) + ")" for sec in c["sectors"])
    print(f"  correlators: {len(c['channels'])} channel(s), momenta {moms}, sink {c['sink']}", file=out)
    if c["convention"]:
        print(f"  convention: {c['convention']}", file=out)
    zero = c["sectors"][0] if c["sectors"] else {"correlators": {}, "effective_mass": {}}
    header = ["channel", "parity", "ReC(0)", f"ReC({lt // 2})", "form", "m_eff(1)", f"m_eff({lt // 4})",
              f"mean(t={lo}..{hi})", "n"]
    rows = []
    for ch in c["channels"]:
        if ch not in zero["correlators"]:
            rows.append([ch, "-", "missing", "-", "-", "-", "-", "-", "-"])
            continue
        s = channel_summary(zero["correlators"][ch], zero["effective_mass"].get(ch), lt)
        mean, n = s["plateau"]
        rows.append([ch, f"{s['parity']:+d}", f"{s['c0']:.5e}", f"{s['c_half']:.5e}", s["form"], fixed(s["m1"], 5),
                     fixed(s["m_quarter"], 5), fixed(mean, 5) if n else "-", n])
    for line in columns(rows, header, [False, True, True, True, False, True, True, True, True]):
        print(line, file=out)
    for sec in c["sectors"][1:]:
        label = "(" + ",".join(map(str, sec["momentum"])) + ")"
        if not sec["present"]:
            print(f"  p = {label}: missing in the file", file=out)
            continue
        parts = [f"{ch} {fixed(plateau(sec['effective_mass'][ch]['values'], lt)[0], 5)}"
                 for ch in c["channels"] if ch in sec["effective_mass"]]
        print(f"  p = {label}: E_eff mean (t={lo}..{hi}): {', '.join(parts) if parts else '-'}", file=out)
    if c["pcac_mass"] is not None:
        mean, n = plateau(c["pcac_mass"], lt)
        mid = c["pcac_mass"][lt // 2]
        print(f"  PCAC mass: mean (t={lo}..{hi}) {fixed(mean, 6)} ({n} points), at t={lt // 2}: {fixed(float(mid), 6)}",
              file=out)
    print("  (one gauge configuration: no statistical errors; means over timeslices are not fits)", file=out)


def print_propagators(data, out):
    """The propagator solves and their correlators."""
    props = [s for s in data["solves"] if s["propagator"] is not None]
    corrs = {c["name"]: c for c in data["correlators"]}
    if not props and not corrs:
        return
    lt = data["root"]["extents"][3]
    for s in props:
        print(file=out)
        print_propagator_solve(s, out)
        if s["name"] in corrs:
            print_correlator_group(corrs.pop(s["name"]), lt, out)
        else:
            print("  (no /correlators group for this propagator)", file=out)
    for name, c in corrs.items():
        print(file=out)
        print(f"Correlators {name} (no propagator solve of that name)", file=out)
        print_correlator_group(c, lt, out)


def print_report(data, out=None):
    """The whole text report (to stdout by default)."""
    out = sys.stdout if out is None else out
    print_header(data, out)
    print_kernels(data, out)
    print_solves(data, out)
    print_propagators(data, out)


# ----------------------------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------------------------

def default_out_dir(path):
    """<file stem>_report/ beside the file."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.join(os.path.dirname(os.path.abspath(path)), stem + "_report")


def error(where, reason, code):
    """Prints the one ERROR line and returns the exit code."""
    print(f"{PROG}: ERROR: {where}: {' '.join(str(reason).split())}", file=sys.stderr)
    return code


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one ERROR line (exit 2)."""

    def error(self, message):
        raise ReportError(f"{message} (usage: {PROG} FILE... [--bin N] [--fit-range TMIN TMAX] [--uncorrelated] "
                          "[--fold] [--fit-channels LIST] [--p-min P] [--summary OUT.h5|OUT.csv] [--out-dir DIR] "
                          "[--no-plots])")


ENSEMBLE_OPTIONS = ("bin", "fit_range", "uncorrelated", "fold", "fit_channels", "p_min", "summary")


def parse_args(argv):
    """The command line."""
    p = Parser(prog=PROG, description="Text report and PNG plots of one EmPRiSM-MPI output file, or the jackknife "
                                      "analysis of an ensemble of configurations (several files or an ensemble file).")
    p.add_argument("files", nargs="+", metavar="FILE", help="the program's HDF5 output file(s)")
    p.add_argument("--out-dir", help="directory for the PNG files (default: <file stem>_report/ beside the file, "
                                     "<first file stem>_report_ensemble/ for an ensemble)")
    p.add_argument("--no-plots", action="store_true", help="print the report only, write no plots")
    e = p.add_argument_group("ensemble analysis")
    e.add_argument("--bin", type=int, help="average N consecutive configurations before the jackknife (default 1)")
    e.add_argument("--fit-range", type=int, nargs=2, metavar=("TMIN", "TMAX"),
                   help="fit range (default: proposed, the widest range of >= 3 points in 1..Lt/2 with p >= P)")
    e.add_argument("--uncorrelated", action="store_true", help="fit with the diagonal of the covariance only")
    e.add_argument("--fold", action="store_true", help="average C(t) and s C(Lt - t) of each configuration first")
    e.add_argument("--fit-channels", help="comma-separated channels to fit, or 'all' (default: pion)")
    e.add_argument("--p-min", type=float, help="p-value a proposed range must reach (default 0.05)")
    e.add_argument("--summary", help="write the numbers to OUT.h5 (HDF5) or OUT.csv (layout in README)")
    return p.parse_args(argv)


def ensemble_mode(args):
    """True for the ensemble report: several files, an ensemble file, or an ensemble option given."""
    if len(args.files) > 1 or any(getattr(args, k) not in (None, False) for k in ENSEMBLE_OPTIONS):
        return True
    return is_ensemble_file(args.files[0])


def ensemble_options(args):
    """The options dict of ensemble_analysis from the command line."""
    channels = [c.strip() for c in (args.fit_channels or "pion").split(",") if c.strip()]
    return {"bin": 1 if args.bin is None else args.bin, "fit_range": tuple(args.fit_range) if args.fit_range else None,
            "correlated": not args.uncorrelated, "fold": args.fold, "fit_channels": channels,
            "p_min": 0.05 if args.p_min is None else args.p_min}


def main_ensemble(args):
    """The ensemble report; returns the exit status."""
    out_dir = args.out_dir or default_out_dir(args.files[0]) + "_ensemble"
    try:
        written = ensemble_report.run(args.files, ensemble_options(args), out_dir, args.summary, not args.no_plots)
    except ReportError as e:
        return error(args.files[0] if len(args.files) == 1 else f"{len(args.files)} files", str(e), 2)
    except OSError as e:
        return error(args.summary or out_dir, f"cannot write: {e}", 1)
    if written:
        print()
    for path in written:
        print(f"wrote {path}")
    return 0


def main(argv=None):
    """Entry point; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
    except ReportError as e:
        files = [a for a in argv if not a.startswith("-")]
        return error(files[0] if files else "(command line)", str(e), 2)
    try:
        if ensemble_mode(args):
            return main_ensemble(args)
    except ReportError as e:
        return error(args.files[0], str(e), 2)
    args.file = args.files[0]
    try:
        data = load(args.file)
    except ReportError as e:
        return error(args.file, str(e), 2)
    print_report(data)
    if not args.no_plots:
        out_dir = args.out_dir or default_out_dir(args.file)
        try:
            print()
            for path in write_plots(data, out_dir):
                print(f"wrote {path}")
        except OSError as e:
            return error(out_dir, f"cannot write the plots: {e}", 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
