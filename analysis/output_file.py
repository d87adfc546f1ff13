"""output_file.py: one EmPRiSM-MPI output file read into plain data (dicts, lists, numpy arrays) with h5py, and the
numbers derived from it that the report prints and plots. Layout read: docs/conventions.md section 13.

  load(path)            everything the report needs (raises ReportError, with the reason, for a missing, unreadable,
                        non-HDF5 or non-EmPRiSM-MPI file)
  kernel_group(name)    "stencil" (the Dirac operator's kernels), "blas" (blas_*), "host" (host_*) or "other"
  grouped_kernels       the kernels by group, each group by total time; above_peak: a rate above the measured peak
  plateau               the mean of a per-timeslice quantity over the middle third of the lattice (no error: one
                        configuration); channel_summary, kernel_summary, rank_summary: the printed numbers
Who may call: analysis scripts (report.py, report_plots.py) and the tests; pure functions apart from load.
"""
import math
import os

import h5py
import numpy as np

KERNEL_FIELDS = ("name", "calls", "total_s", "mean_s", "min_s", "flops", "bytes", "gbs", "percent_of_peak",
                 "registers", "spill_bytes", "shared_bytes", "block", "occupancy")
RANK_FIELDS = ("rank", "compute_s", "halo_wait_s", "reduction_s")
SMEARING_ATTRS = ("smearing", "smearing_steps", "smearing_weight", "link_smearing", "link_smearing_steps",
                  "link_smearing_weight")
PROPAGATOR_KIND = "propagator"
# Kernel groups, in the order of the tables and panels: (key, table title, panel title).
KERNEL_GROUPS = (("stencil", "Stencil kernels (Dirac operator)", "stencil (Dirac operator)"),
                 ("blas", "BLAS kernels", "BLAS (vector operations)"),
                 ("host", "Host kernels", "host (smearing, contractions)"),
                 ("other", "Other kernels", "other"))
CACHE_NOTE = ("above the measured peak: the kernel's data stayed in cache between calls (a small working set), so "
              "the rate is not a memory-bandwidth figure")


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


def kernel_group(name):
    """The group of a kernel by its name: "stencil" (hops of the Dirac operator), "blas" (blas_*), "host" (host_*),
    or "other"."""
    if name.startswith("blas_"):
        return "blas"
    if name.startswith("host_"):
        return "host"
    if any(w in name for w in ("clover", "wilson", "dslash", "hop")):
        return "stencil"
    return "other"


def grouped_kernels(kernels):
    """[(group key, table title, panel title, kernels by total time, longest first)] of the groups present."""
    out = []
    for key, title, panel in KERNEL_GROUPS:
        ks = sorted((k for k in kernels if kernel_group(k["name"]) == key), key=lambda k: -float(k["total_s"]))
        if ks:
            out.append((key, title, panel, ks))
    return out


def above_peak(k, peak):
    """True when a kernel's rate exceeds the measured peak (its data were cache-resident)."""
    return peak_measured(peak) and float(k["percent_of_peak"]) > 100.0


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
    """(mean, count) of the finite values in the middle third; (nan, 0) if none. A mean over timeslices of one
    configuration: it has no statistical error (the timeslices are correlated; errors need an ensemble)."""
    lo, hi = plateau_window(lt)
    v = np.asarray(values, dtype=float)[lo:hi + 1]
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, 0
    return float(v.mean()), int(v.size)


def channel_summary(corr, meff, lt):
    """The p = 0 summary of one channel: Re C(0), Re C(Lt/2), m_eff(1), m_eff(Lt/4), the plateau."""
    c = corr["values"]
    m = meff["values"] if meff is not None else np.full(lt, math.nan)
    return {"parity": corr["time_parity"], "c0": float(c[0].real), "c_half": float(c[lt // 2].real),
            "form": meff["form"] if meff is not None else "-", "m1": float(m[1]) if lt > 1 else math.nan,
            "m_quarter": float(m[lt // 4]), "plateau": plateau(m, lt)}
