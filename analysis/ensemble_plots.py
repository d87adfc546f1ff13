"""ensemble_plots.py: the PNG plots of the ensemble report (analysis/report.py on several configurations), with
matplotlib (Agg), in the style of report_plots.py:

  ensemble_<correlator>.png   (ensemble_<correlator>_p<nx>_<ny>_<nz>.png for a non-zero momentum) |C(t)| per
                              channel with jackknife error bars (log scale), and the effective masses with
                              jackknife error bars, each fitted channel's mass as a band (mass +- error) over its
                              fit range tmin..tmax
  write_ensemble_plots(results, lt, out_dir)   all of them; returns their paths
  plot_ensemble(result, lt, path)              one; returns {"errorbars": sets drawn, "bands": {channel: (tmin,
                                               tmax, low, high)}} for the tests
Who may call: report.py (through ensemble_report.py) and the tests.
"""
import os

import numpy as np

from ensemble_analysis import pm
from report_plots import clip_log_axis, colour, pyplot, robust_limits


def meff_limits(result):
    """The y-range of the effective-mass panel: from the points whose error is below their value (the noisy
    points far from the source would squash the rest), with the fit bands."""
    vals = []
    for res in result["channels"].values():
        m, e = res["effective_mass"], res["effective_mass_error"]
        good = np.isfinite(m) & np.isfinite(e) & (e < np.abs(m))
        vals.extend((m[good] - e[good]).tolist() + (m[good] + e[good]).tolist())
        if res["fit"] is not None:
            vals.extend([res["fit"]["mass"] - res["fit"]["mass_error"], res["fit"]["mass"] + res["fit"]["mass_error"]])
    return robust_limits(vals, pad=0.05)


def plot_ensemble(result, lt, path):
    """ensemble_<name>.png; see the module's description."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True)
    t = np.arange(lt)
    bands, drawn = {}, 0
    for i, (ch, res) in enumerate(result["channels"].items()):
        c = np.abs(res["mean"])
        c = np.where(c > 0, c, np.nan)
        axes[0].errorbar(t, c, yerr=res["error"], fmt="o", ms=3, capsize=2, color=colour(i), label=ch)
        axes[1].errorbar(t + 0.05 * i, res["effective_mass"], yerr=res["effective_mass_error"], fmt="o", ms=3,
                         capsize=2, color=colour(i), label=ch)
        drawn += 2
        fit = res["fit"]
        if fit is not None:
            lo, hi = fit["mass"] - fit["mass_error"], fit["mass"] + fit["mass_error"]
            label = f"{ch} fit {fit['tmin']}..{fit['tmax']}: m = {pm(fit['mass'], fit['mass_error'])}"
            axes[1].fill_between([fit["tmin"], fit["tmax"]], [lo, lo], [hi, hi], color=colour(i), alpha=0.3,
                                 label=label)
            bands[ch] = (fit["tmin"], fit["tmax"], lo, hi)
    axes[0].set_yscale("log")
    clip_log_axis(axes[0])
    axes[0].set_ylabel("|C(t)| (mean over the ensemble)")
    axes[0].legend(fontsize="x-small", ncol=2)
    limits = meff_limits(result)
    if limits is not None:
        axes[1].set_ylim(*limits)
    axes[1].set_ylabel("effective mass")
    axes[1].set_xlabel("t (from the source timeslice)")
    axes[1].legend(fontsize="x-small", ncol=2)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].set_title(f"correlators {result['name']}: {result['n_configs']} configurations, {result['n_bins']} "
                      "jackknife samples")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    from matplotlib.container import ErrorbarContainer
    summary = {"errorbars": sum(isinstance(x, ErrorbarContainer) for ax in axes for x in ax.containers),
               "bands": bands}
    plt.close(fig)
    assert summary["errorbars"] == drawn
    return summary


def write_ensemble_plots(results, lt, out_dir):
    """All PNG files into out_dir (created if needed); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for r in results:
        path = os.path.join(out_dir, f"ensemble_{r['name'].replace('/', '_')}.png")
        plot_ensemble(r, lt, path)
        written.append(path)
    return written
