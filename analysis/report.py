#!/usr/bin/env python3
"""report.py: a text report and PNG plots of one EmPRiSM-MPI output file.

Usage: python3 analysis/report.py OUT.h5 [--out-dir DIR] [--no-plots]

Prints to stdout:
  - a header: program, lattice, precision, ranks and process grid, backend and device, gauge field, empirical peak;
  - the per-kernel table of /metrics/kernels (rank 0's kernels): calls, ms per call, GB/s (minimum bytes / time),
    % of the empirical peak, GFLOP/s, registers, spill bytes and theoretical occupancy ('-' where unknown), and
    a summary of the per-rank times of /metrics/ranks (min / mean / max, load balance = mean / max compute);
  - the solve summary: kind, CG iterations, restarts, true residual, converged, seconds, ms per iteration;
  - for each propagator solve: its source and smearing, the 12 columns' iterations and residuals, and for each
    correlator channel at p = 0: Re C(0), Re C(Lt/2), the effective mass at t = 1 and Lt/4 and its plateau
    average over the middle third of the lattice (finite points only), the effective energies of the non-zero
    momenta, and the PCAC mass in the middle.
Writes, unless --no-plots, into DIR (default: <file stem>_report/ beside the file), with matplotlib (Agg):
  residual_history.png      CG residual history of every solve (log scale; a propagator's 12 columns are thin
                            lines of one colour with one legend entry)
  bandwidth.png             achieved GB/s of each kernel, the empirical peak as a line, % of peak on the bars
  correlators_<name>.png    per propagator: |C(t)| per channel (log scale), effective masses, PCAC mass

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

import h5py
import numpy as np

PROG = "report.py"
KERNEL_FIELDS = ("name", "calls", "total_s", "mean_s", "min_s", "flops", "bytes", "gbs", "percent_of_peak",
                 "registers", "spill_bytes", "shared_bytes", "block", "occupancy")
RANK_FIELDS = ("rank", "compute_s", "halo_wait_s", "reduction_s")
SMEARING_ATTRS = ("smearing", "smearing_steps", "smearing_weight", "link_smearing", "link_smearing_steps",
                  "link_smearing_weight")
PROPAGATOR_KIND = "propagator"


class ReportError(Exception):
    """A file that cannot be reported on; str() is the reason for the ERROR line."""


# ----------------------------------------------------------------------------------------------------------------
# Reading: plain data structures (dicts, lists, numpy arrays) from the file
# ----------------------------------------------------------------------------------------------------------------

def text(v):
    """An HDF5 string attribute or table cell (bytes or str) as str."""
    return v.decode() if isinstance(v, bytes) else str(v)


def attr(obj, name, default=None):
    """Attribute `name` of an h5py object, or `default` when it is absent."""
    return obj.attrs[name] if name in obj.attrs else default


def momentum_group(n):
    """The group name of momentum n = (nx, ny, nz): "p1_0_-1"."""
    return "p" + "_".join(str(int(c)) for c in n)


def check_file(path):
    """Raises ReportError unless `path` is a readable HDF5 file."""
    if not os.path.exists(path):
        raise ReportError("no such file")
    if os.path.isdir(path):
        raise ReportError("is a directory, not an HDF5 file")
    if not os.access(path, os.R_OK):
        raise ReportError("not readable (permission denied)")
    try:
        ok = h5py.is_hdf5(path)
    except OSError as e:
        raise ReportError(f"cannot be read: {e}") from e
    if not ok:
        raise ReportError("not an HDF5 file")


def read_root(f):
    """Root attributes: the run's description."""
    for key in ("program_version", "extents"):
        if key not in f.attrs:
            raise ReportError(f"not an EmPRiSM-MPI output file (no root attribute '{key}')")
    a = f.attrs
    return {
        "program_version": text(a["program_version"]),
        "git_hash": text(attr(f, "git_hash", "?")),
        "date": text(attr(f, "date", "?")),
        "backend": text(attr(f, "backend", "?")),
        "device": text(attr(f, "device", "?")),
        "ranks": int(attr(f, "ranks", 1)),
        "process_grid": [int(p) for p in attr(f, "process_grid", [1, 1, 1, 1])],
        "extents": [int(e) for e in a["extents"]],
        "precision": text(attr(f, "precision", "?")),
        "input_hash": text(a["input_hash"]) if "input_hash" in a else None,
        "physics_inputs": text(a["physics_inputs"]) if "physics_inputs" in a else None,
    }


def read_gauge(f):
    """/gauge attributes, or None."""
    if "gauge" not in f:
        return None
    g = f["gauge"]
    return {"source": text(attr(g, "source", "?")), "plaquette": float(attr(g, "plaquette", math.nan)),
            "link_trace": float(attr(g, "link_trace", math.nan))}


def read_peak(f):
    """/metrics/peak attributes, or None."""
    if "metrics/peak" not in f:
        return None
    g = f["metrics/peak"]
    peak = {k: float(attr(g, k, 0.0)) for k in ("copy_gbs", "triad_gbs", "read_gbs", "peak_gbs")}
    peak["measured"] = bool(attr(g, "measured", peak["peak_gbs"] > 0))
    return peak


def read_table(f, path, fields):
    """The rows of a compound table as dicts (strings decoded, numbers as Python scalars); [] if absent."""
    if path not in f:
        return []
    data = f[path][...]
    missing = [k for k in fields if k not in (data.dtype.names or ())]
    if missing:
        raise ReportError(f"{path}: no column(s) {', '.join(missing)}")
    rows = []
    for r in data:
        row = {}
        for k in fields:
            v = r[k]
            row[k] = text(v) if isinstance(v, (bytes, str)) else v.item()
        rows.append(row)
    return rows


def read_histories(g):
    """Residual histories of a solve group: {"": array}, or {"s0c0": array, ...} for a propagator."""
    if "residual_history" not in g:
        return {}
    h = g["residual_history"]
    if isinstance(h, h5py.Group):
        return {k: np.asarray(h[k][...], dtype=float) for k in sorted(h) if isinstance(h[k], h5py.Dataset)}
    return {"": np.asarray(h[...], dtype=float)}


def read_propagator_attrs(g):
    """The propagator-only attributes and column datasets of a solve group."""
    p = {k: (text(g.attrs[k]) if isinstance(g.attrs[k], (bytes, str)) else g.attrs[k].item())
         for k in SMEARING_ATTRS if k in g.attrs}
    p["source_site"] = [int(v) for v in attr(g, "source_site", [])]
    for key in ("column_iterations", "column_true_residual"):
        p[key] = np.asarray(g[key][...]) if key in g else None
    return p


def read_solve(name, g):
    """One /solves/<name> group as a dict."""
    kind = text(attr(g, "source_kind", "?"))
    iterations = int(attr(g, "iterations", 0))
    seconds = float(attr(g, "seconds", math.nan))
    solve = {
        "name": name,
        "kind": kind,
        "iterations": iterations,
        "restarts": int(attr(g, "restarts", 0)),
        "true_residual": float(attr(g, "true_residual", math.nan)),
        "converged": bool(attr(g, "converged", False)),
        "complete": bool(attr(g, "complete", True)),
        "seconds": seconds,
        "ms_per_iteration": 1e3 * seconds / iterations if iterations > 0 else math.nan,
        "kappa": float(attr(g, "kappa", math.nan)),
        "csw": float(attr(g, "csw", math.nan)),
        "tol": float(attr(g, "tol", math.nan)),
        "fields": sorted(k for k in ("solution", "source", "propagator") if k in g),
        "histories": read_histories(g),
        "propagator": read_propagator_attrs(g) if kind == PROPAGATOR_KIND else None,
    }
    return solve


def read_channels(g, channels):
    """The correlators and effective masses of one momentum group."""
    corr, meff = {}, {}
    for ch in channels:
        if ch in g and isinstance(g[ch], h5py.Dataset):
            d = g[ch]
            corr[ch] = {"values": np.asarray(d[...], dtype=complex),
                        "gamma_sink": text(attr(d, "gamma_sink", "?")),
                        "gamma_source": text(attr(d, "gamma_source", "?")),
                        "time_parity": int(attr(d, "time_parity", 1))}
        key = "effective_mass/" + ch
        if key in g:
            d = g[key]
            meff[ch] = {"values": np.asarray(d[...], dtype=float), "form": text(attr(d, "form", "?"))}
    return corr, meff


def read_correlators(name, g):
    """One /correlators/<name> group as a dict; sectors[0] is p = 0."""
    channels = [text(c) for c in np.atleast_1d(attr(g, "channels", []))]
    momenta = np.asarray(attr(g, "momenta", [[0, 0, 0]]), dtype=int).reshape(-1, 3)
    sectors = []
    for i, n in enumerate(momenta):
        group = g if i == 0 else g.get(momentum_group(n))
        corr, meff = read_channels(group, channels) if group is not None else ({}, {})
        sectors.append({"momentum": tuple(int(c) for c in n), "present": group is not None,
                        "correlators": corr, "effective_mass": meff})
    pcac = np.asarray(g["pcac_mass"][...], dtype=float) if "pcac_mass" in g else None
    return {"name": name, "source_site": [int(v) for v in attr(g, "source_site", [])], "channels": channels,
            "sink": text(attr(g, "sink", "?")), "convention": text(attr(g, "convention", "")),
            "sectors": sectors, "pcac_mass": pcac}


def load(path):
    """Reads everything the report needs from an output file into plain data structures.

    Raises ReportError (with the reason) for a missing, unreadable, non-HDF5 or non-EmPRiSM-MPI file."""
    check_file(path)
    try:
        with h5py.File(path, "r") as f:
            root = read_root(f)
            solves = [read_solve(n, g) for n, g in f["solves"].items()] if "solves" in f else []
            corrs = [read_correlators(n, g) for n, g in f["correlators"].items()] if "correlators" in f else []
            return {
                "path": path,
                "root": root,
                "gauge": read_gauge(f),
                "peak": read_peak(f),
                "kernels": read_table(f, "metrics/kernels", KERNEL_FIELDS),
                "ranks": read_table(f, "metrics/ranks", RANK_FIELDS),
                "solves": solves,
                "correlators": corrs,
            }
    except ReportError:
        raise
    except (OSError, KeyError, ValueError, TypeError, IndexError, AttributeError) as e:
        raise ReportError(f"cannot be read as an EmPRiSM-MPI output file: {e}") from e


# ----------------------------------------------------------------------------------------------------------------
# Derived numbers (pure functions of the loaded data)
# ----------------------------------------------------------------------------------------------------------------

def peak_measured(peak):
    """True when the file holds a measured empirical peak."""
    return bool(peak) and peak["measured"] and peak["peak_gbs"] > 0


def kernel_summary(k):
    """Derived per-kernel numbers; None where unknown."""
    calls, total = int(k["calls"]), float(k["total_s"])
    return {
        "ms_per_call": 1e3 * total / calls if calls > 0 else None,
        "gflops": k["flops"] / total / 1e9 if total > 0 else None,
        "registers": int(k["registers"]) if k["registers"] >= 0 else None,
        "spill_bytes": int(k["spill_bytes"]) if k["spill_bytes"] >= 0 else None,
        "occupancy": float(k["occupancy"]) if k["occupancy"] >= 0 else None,
    }


def rank_summary(rows):
    """min / mean / max of each per-rank time and the load balance (mean / max compute); None without rows."""
    if not rows:
        return None
    out = {}
    for key in RANK_FIELDS[1:]:
        v = np.array([r[key] for r in rows], dtype=float)
        out[key] = (float(v.min()), float(v.mean()), float(v.max()))
    cmax = out["compute_s"][2]
    out["load_balance"] = out["compute_s"][1] / cmax if cmax > 0 else 1.0
    out["ranks"] = len(rows)
    return out


def plateau_window(lt):
    """The middle third of 0..Lt-1 as (first, last) inclusive."""
    lo, hi = int(round(lt / 3)), int(round(2 * lt / 3)) - 1
    return lo, max(lo, hi)


def plateau(values, lt):
    """(mean, std, count) of the finite values in the middle third; (nan, nan, 0) if none."""
    lo, hi = plateau_window(lt)
    v = np.asarray(values, dtype=float)[lo:hi + 1]
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std()), int(v.size)


def channel_summary(corr, meff, lt):
    """The p = 0 summary of one channel: Re C(0), Re C(Lt/2), m_eff(1), m_eff(Lt/4), the plateau."""
    c = corr["values"]
    m = meff["values"] if meff is not None else np.full(lt, math.nan)
    return {"parity": corr["time_parity"], "c0": float(c[0].real), "c_half": float(c[lt // 2].real),
            "form": meff["form"] if meff is not None else "-", "m1": float(m[1]) if lt > 1 else math.nan,
            "m_quarter": float(m[lt // 4]), "plateau": plateau(m, lt)}


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
    """The per-kernel table and the per-rank time summary."""
    print(file=out)
    kernels = data["kernels"]
    measured = peak_measured(data["peak"])
    print(f"Kernels ({len(kernels)}, rank 0; GB/s = minimum bytes / time)", file=out)
    if not kernels:
        print("  (no kernel metrics in the file)", file=out)
    header = ["kernel", "calls", "ms/call", "GB/s", "%peak", "GFLOP/s", "regs", "spill_B", "occupancy"]
    rows = []
    for k in kernels:
        s = kernel_summary(k)
        occ = f"{100 * s['occupancy']:.0f}%" if s["occupancy"] is not None else "-"
        rows.append([k["name"], int(k["calls"]), sig(s["ms_per_call"]), fixed(k["gbs"], 1),
                     fixed(k["percent_of_peak"], 1) if measured else "-", fixed(s["gflops"], 1),
                     s["registers"] if s["registers"] is not None else "-",
                     s["spill_bytes"] if s["spill_bytes"] is not None else "-", occ])
    if rows:
        for line in columns(rows, header, [False] + [True] * 8):
            print(line, file=out)
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
              f"plateau(t={lo}..{hi})", "n"]
    rows = []
    for ch in c["channels"]:
        if ch not in zero["correlators"]:
            rows.append([ch, "-", "missing", "-", "-", "-", "-", "-", "-"])
            continue
        s = channel_summary(zero["correlators"][ch], zero["effective_mass"].get(ch), lt)
        mean, std, n = s["plateau"]
        rows.append([ch, f"{s['parity']:+d}", f"{s['c0']:.5e}", f"{s['c_half']:.5e}", s["form"], fixed(s["m1"], 5),
                     fixed(s["m_quarter"], 5), f"{fixed(mean, 5)} +- {fixed(std, 5)}" if n else "-", n])
    for line in columns(rows, header, [False, True, True, True, False, True, True, True, True]):
        print(line, file=out)
    for sec in c["sectors"][1:]:
        label = "(" + ",".join(map(str, sec["momentum"])) + ")"
        if not sec["present"]:
            print(f"  p = {label}: missing in the file", file=out)
            continue
        parts = [f"{ch} {fixed(plateau(sec['effective_mass'][ch]['values'], lt)[0], 5)}"
                 for ch in c["channels"] if ch in sec["effective_mass"]]
        print(f"  p = {label}: E_eff plateau (t={lo}..{hi}): {', '.join(parts) if parts else '-'}", file=out)
    if c["pcac_mass"] is not None:
        mean, std, n = plateau(c["pcac_mass"], lt)
        mid = c["pcac_mass"][lt // 2]
        print(f"  PCAC mass: plateau (t={lo}..{hi}) {fixed(mean, 6)} +- {fixed(std, 6)} ({n} points), "
              f"at t={lt // 2}: {fixed(float(mid), 6)}", file=out)


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
# Plots
# ----------------------------------------------------------------------------------------------------------------

def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend (imported only when plotting)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def colour(i):
    """The i-th colour of matplotlib's default cycle."""
    return f"C{i % 10}"


def positive(y):
    """y with non-positive or non-finite entries masked (for log axes)."""
    y = np.asarray(y, dtype=float)
    return np.where(np.isfinite(y) & (y > 0), y, np.nan)


def plot_residuals(data, path):
    """residual_history.png: one colour per solve, a propagator's columns as thin lines with one legend entry."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    drawn = 0
    for i, s in enumerate(data["solves"]):
        hist = [(k, h) for k, h in s["histories"].items() if h.size]
        many = len(hist) > 1
        for j, (_, h) in enumerate(hist):
            ax.plot(np.arange(1, h.size + 1), positive(h), color=colour(i), lw=0.7 if many else 1.5,
                    label=(f"{s['name']} ({len(hist)} columns)" if many else s["name"]) if j == 0 else None)
            drawn += 1
    if drawn:
        ax.set_yscale("log")
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "no residual histories in the file", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("CG iteration")
    ax.set_ylabel("|Mhat^dag (bhat - Mhat x)| / |Mhat^dag bhat|")
    ax.set_title(f"CG residual history: {os.path.basename(data['path'])}")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_bandwidth(data, path):
    """bandwidth.png: achieved GB/s per kernel, the empirical peak as a line, % of peak on the bars."""
    plt = pyplot()
    kernels = data["kernels"]
    peak = data["peak"]
    measured = peak_measured(peak)
    fig, ax = plt.subplots(figsize=(min(14, max(6, 0.8 * len(kernels) + 2)), 5))
    x = np.arange(len(kernels))
    gbs = [float(k["gbs"]) for k in kernels]
    bars = ax.bar(x, gbs, color="C0")
    ax.set_xticks(x)
    ax.set_xticklabels([k["name"] for k in kernels], rotation=30, ha="right")
    if measured:
        ax.axhline(peak["peak_gbs"], color="C3", ls="--", label=f"empirical peak {peak['peak_gbs']:.1f} GB/s")
        for b, k in zip(bars, kernels):
            ax.annotate(f"{k['percent_of_peak']:.1f}%", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize="small")
        ax.legend(fontsize="small")
    else:
        for b, k in zip(bars, kernels):
            ax.annotate(f"{k['gbs']:.1f}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                        va="bottom", fontsize="small")
        ax.text(0.5, 0.95, "empirical peak not measured (metrics.peak = false): no % of peak", ha="center",
                va="top", transform=ax.transAxes, color="C3", bbox={"facecolor": "white", "edgecolor": "C3"})
    if not kernels:
        ax.text(0.5, 0.5, "no kernel metrics in the file", ha="center", va="center", transform=ax.transAxes)
    r = data["root"]
    ax.set_ylabel("achieved GB/s (minimum bytes / time)")
    ax.set_title(f"{'x'.join(map(str, r['extents']))} {r['precision']}, {r['ranks']} rank(s), {r['backend']}: "
                 f"{r['device']}", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def clip_log_axis(ax, decades=12):
    """Limits a log axis to `decades` below its largest value (exact zeros such as C_axial(0) show as tiny
    rounding residues that would squash the rest)."""
    ys = [y for line in ax.get_lines() for y in np.asarray(line.get_ydata(), dtype=float) if np.isfinite(y)]
    if ys:
        top = max(ys)
        ax.set_ylim(bottom=max(min(ys), top * 10.0 ** -decades) / 2, top=top * 2)


def plot_correlators(c, lt, path):
    """correlators_<name>.png: |C(t)| per channel (log), the effective masses, the PCAC mass if present."""
    plt = pyplot()
    panels = 3 if c["pcac_mass"] is not None else 2
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.4 * panels), sharex=True)
    t = np.arange(lt)
    styles = ["-", "--", ":", "-."]
    for j, sec in enumerate(c["sectors"]):
        ls = styles[j % len(styles)]
        mom = "(" + ",".join(map(str, sec["momentum"])) + ")"
        for i, ch in enumerate(c["channels"]):
            label = ch if j == 0 else None
            if ch in sec["correlators"]:
                axes[0].plot(t, positive(np.abs(sec["correlators"][ch]["values"])), ls, color=colour(i), marker=".",
                             label=label)
            if ch in sec["effective_mass"]:
                axes[1].plot(t, sec["effective_mass"][ch]["values"], ls, color=colour(i), marker="o", ms=3,
                             label=label)
        axes[1].plot([], [], ls, color="k", label=f"p = {mom}")
    axes[0].set_yscale("log")
    clip_log_axis(axes[0])
    axes[0].set_ylabel("|C(t)|")
    axes[0].legend(fontsize="x-small", ncol=2)
    axes[1].set_ylabel("effective mass")
    axes[1].legend(fontsize="x-small", ncol=2)
    if c["pcac_mass"] is not None:
        axes[2].plot(t, c["pcac_mass"], "o-", color="k", ms=3)
        axes[2].set_ylabel("PCAC mass")
    axes[-1].set_xlabel("t (from the source timeslice)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"correlators {c['name']}, source {tuple(c['source_site'])}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def default_out_dir(path):
    """<file stem>_report/ beside the file."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.join(os.path.dirname(os.path.abspath(path)), stem + "_report")


def write_plots(data, out_dir):
    """All PNG files into out_dir (created if needed); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    written = [os.path.join(out_dir, "residual_history.png"), os.path.join(out_dir, "bandwidth.png")]
    plot_residuals(data, written[0])
    plot_bandwidth(data, written[1])
    lt = data["root"]["extents"][3]
    for c in data["correlators"]:
        path = os.path.join(out_dir, f"correlators_{c['name']}.png")
        plot_correlators(c, lt, path)
        written.append(path)
    return written


# ----------------------------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------------------------

def error(where, reason, code):
    """Prints the one ERROR line and returns the exit code."""
    print(f"{PROG}: ERROR: {where}: {' '.join(str(reason).split())}", file=sys.stderr)
    return code


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one ERROR line (exit 2)."""

    def error(self, message):
        raise ReportError(f"{message} (usage: {PROG} OUT.h5 [--out-dir DIR] [--no-plots])")


def parse_args(argv):
    """The command line."""
    p = Parser(prog=PROG, description="Text report and PNG plots of one EmPRiSM-MPI output file.")
    p.add_argument("file", help="the program's HDF5 output file")
    p.add_argument("--out-dir", help="directory for the PNG files (default: <file stem>_report/ beside the file)")
    p.add_argument("--no-plots", action="store_true", help="print the report only, write no files")
    return p.parse_args(argv)


def main(argv=None):
    """Entry point; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
    except ReportError as e:
        files = [a for a in argv if not a.startswith("-")]
        return error(files[0] if files else "(command line)", str(e), 2)
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
