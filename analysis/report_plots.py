"""report_plots.py: the PNG plots of analysis/report.py, with matplotlib (Agg), from the data of output_file.load:

  residual_history.png      CG residual history of every solve (log scale; a propagator's 12 columns are thin
                            lines of one colour with one legend entry)
  bandwidth.png             achieved GB/s per kernel, one panel per kernel group with its own scale, the empirical
                            peak as a line, % of peak on the bars; rates above the peak (cache-resident) hatched,
                            labelled "cache" and cut at PEAK_AXIS_FACTOR x the peak so that they do not flatten the rest
  correlators_<name>.png    per propagator: |C(t)| per channel (log), effective masses, PCAC mass (its range set by
                            t = 2 .. Lt-2, the contact terms at t = 0, 1, Lt-1 drawn open); no error bars: one
                            configuration has no statistical errors

  write_plots(data, out_dir)   all of them; plot_bandwidth and plot_correlators return what they drew (axis ranges,
                               error bars) for the tests
Who may call: report.py and the tests.
"""
import math
import os

import numpy as np

from output_file import CACHE_NOTE, above_peak, grouped_kernels, peak_measured

PEAK_AXIS_FACTOR = 1.3  # bandwidth panels end at this multiple of the peak; taller (cache-resident) bars are cut


# ----------------------------------------------------------------------------------------------------------------
# Axis ranges (pure functions)
# ----------------------------------------------------------------------------------------------------------------

def contact_times(lt):
    """The timeslices where the PCAC mass involves C_axial on the source timeslice (contact terms): 0, 1, Lt-1."""
    return sorted({t % lt for t in (0, 1, lt - 1)})


def robust_limits(values, pad=0.15):
    """(low, high) around the finite values with `pad` of their span added on each side (at least a small
    absolute margin, so that a flat line gets a visible range); None without finite values."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    lo, hi = float(v.min()), float(v.max())
    margin = max(pad * (hi - lo), 0.05 * max(abs(lo), abs(hi)), 1e-12)
    return lo - margin, hi + margin


def pcac_limits(values, lt):
    """The y-range of the PCAC panel: from t = 2 .. Lt-2 only, the contact terms (contact_times) left out; from all
    finite points when those have none. None when no point is finite."""
    v = np.asarray(values, dtype=float)
    inner = np.array([v[t] for t in range(lt) if t not in contact_times(lt)], dtype=float)
    return robust_limits(inner) or robust_limits(v)


def bandwidth_top(gbs, peak_gbs):
    """The top of a bandwidth panel: PEAK_AXIS_FACTOR x the measured peak (taller bars are cut and labelled), or
    above the tallest bar without a measured peak (peak_gbs <= 0)."""
    if peak_gbs > 0:
        return PEAK_AXIS_FACTOR * peak_gbs
    finite = [g for g in gbs if math.isfinite(g)]
    return 1.15 * max(finite) if finite and max(finite) > 0 else 1.0


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


def bandwidth_panel(ax, group, peak, title):
    """One group's bars: achieved GB/s, the peak as a line, % of peak (or GB/s) on the bars; bars above the peak
    hatched and labelled "cache", cut at the top of the panel (bandwidth_top)."""
    measured = peak_measured(peak)
    gbs = [float(k["gbs"]) for k in group]
    top = bandwidth_top(gbs, peak["peak_gbs"] if measured else 0.0)
    x = np.arange(len(group))
    for xi, k, g in zip(x, group, gbs):
        cache = above_peak(k, peak)
        ax.bar(xi, min(g, top), color="0.8" if cache else "C0", hatch="//" if cache else None,
               edgecolor="C3" if cache else "C0")
        if measured:
            label = f"{k['percent_of_peak']:.0f}%\ncache" if cache else f"{k['percent_of_peak']:.1f}%"
        else:
            label = f"{g:.1f}"
        ax.annotate(label, (xi, min(g, top)), ha="center", va="top" if g >= top else "bottom", fontsize="x-small",
                    xytext=(0, -2 if g >= top else 1), textcoords="offset points",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5} if cache else None)
    if measured:
        ax.axhline(peak["peak_gbs"], color="C3", ls="--")
    ax.set_ylim(0, top)
    ax.set_xticks(x)
    ax.set_xticklabels([k["name"] for k in group], rotation=35, ha="right", fontsize="small")
    ax.set_title(title, fontsize="medium")


def plot_bandwidth(data, path):
    """bandwidth.png: achieved GB/s per kernel, one panel per kernel group (own scale), the empirical peak as a line,
    % of peak on the bars, cache-resident rates (above the peak) hatched and cut at PEAK_AXIS_FACTOR x the peak.
    Returns {panel title: (y min, y max)}."""
    plt = pyplot()
    groups = grouped_kernels(data["kernels"])
    peak = data["peak"] or {"peak_gbs": 0.0, "measured": False}
    measured = peak_measured(peak)
    widths = [max(2, len(g[3])) for g in groups] or [1]
    fig, axes = plt.subplots(1, len(widths), figsize=(min(16, max(7, 0.75 * sum(widths) + 3)), 5.5),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    axes = axes[0]
    limits = {}
    for ax, (_, _, title, group) in zip(axes, groups):
        bandwidth_panel(ax, group, peak, title)
        limits[title] = ax.get_ylim()
    if not groups:
        axes[0].text(0.5, 0.5, "no kernel metrics in the file", ha="center", va="center", transform=axes[0].transAxes)
    axes[0].set_ylabel("achieved GB/s (minimum bytes / time)")
    notes = []
    if measured:
        notes.append(f"dashed: empirical peak {peak['peak_gbs']:.1f} GB/s")
        if any(above_peak(k, peak) for g in groups for k in g[3]):
            notes.append(f"hatched 'cache': {CACHE_NOTE}; axis cut at {PEAK_AXIS_FACTOR:g} x peak")
    else:
        notes.append("empirical peak not measured (metrics.peak = false): GB/s on the bars, no % of peak")
    r = data["root"]
    fig.suptitle(f"{'x'.join(map(str, r['extents']))} {r['precision']}, {r['ranks']} rank(s), {r['backend']}: "
                 f"{r['device']}", fontsize="medium")
    fig.text(0.01, 0.01, "\n".join(notes), fontsize="x-small", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.04 * len(notes), 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return limits


def clip_log_axis(ax, decades=12):
    """Limits a log axis to `decades` below its largest value (exact zeros such as C_axial(0) show as tiny
    rounding residues that would squash the rest)."""
    ys = [y for line in ax.get_lines() for y in np.asarray(line.get_ydata(), dtype=float) if np.isfinite(y)]
    if ys:
        top = max(ys)
        ax.set_ylim(bottom=max(min(ys), top * 10.0 ** -decades) / 2, top=top * 2)


def plot_correlators(c, lt, path):
    """correlators_<name>.png: |C(t)| per channel (log), the effective masses, the PCAC mass if present (its range
    from t = 2 .. Lt-2). Returns {"pcac_ylim": (min, max) or None, "errorbars": number of error-bar sets drawn}."""
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
        pcac = np.asarray(c["pcac_mass"], dtype=float)
        contact = contact_times(lt)
        inner = np.array([pcac[i] if i not in contact else np.nan for i in range(lt)])
        axes[2].plot(t, inner, "o-", color="k", ms=3, label="PCAC mass")
        axes[2].plot(contact, pcac[contact], "o", mfc="none", color="0.5", ms=5,
                     label=f"contact terms (t = {', '.join(map(str, contact))}; may lie outside the range)")
        limits = pcac_limits(pcac, lt)
        if limits is not None:
            axes[2].set_ylim(*limits)
        axes[2].set_ylabel("PCAC mass")
        axes[2].legend(fontsize="x-small")
    axes[-1].set_xlabel("t (from the source timeslice)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"correlators {c['name']}, source {tuple(c['source_site'])}: one configuration, no error bars")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    from matplotlib.container import ErrorbarContainer
    summary = {"pcac_ylim": axes[2].get_ylim() if c["pcac_mass"] is not None else None,
               "errorbars": sum(isinstance(x, ErrorbarContainer) for ax in axes for x in ax.containers)}
    plt.close(fig)
    return summary


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
