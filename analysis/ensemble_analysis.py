"""ensemble_analysis.py: the numbers of the ensemble report (README "Analysis over an ensemble"): per correlator and
channel (at p = 0, and at each non-zero momentum as correlator <name>/p<nx>_<ny>_<nz>) the mean correlator and
effective mass (energy) with jackknife errors (after optional binning), and fits of
C(t) = A (exp(-m t) + s exp(-m (Lt - t))) in a plateau the user gives or the report proposes
(resampling.propose_range); and the summary files (HDF5 or CSV).

  analyse(ens, options)        [Result] for the correlators of ensemble.load_ensemble
  write_summary(results, ens, options, path)   out.h5 or out.csv (layout: SUMMARY_LAYOUT)
  pm(value, error)             "0.41234(56)": value with the error's two leading digits in parentheses
Options (a dict, the report's command line): bin (int >= 1), fit_range ((tmin, tmax) or None), correlated (bool),
fit_channels (list of names, or ["all"]), p_min (float), fold (bool, default False: average C(t) and s C(Lt - t)
per configuration first).
Raises output_file.ReportError for input that cannot be analysed (fewer than 2 bins, a bad fit range).
Who may call: ensemble_report.py and the tests.
"""
import csv
import math

import h5py
import numpy as np

import resampling
from output_file import ReportError

SUMMARY_LAYOUT = """\
HDF5 (--summary out.h5):
  /                                attrs configs (ids, in order), files, n_configs, bin, extents [4], folded,
                                   correlated (as asked), method = "jackknife"
  /<correlator>/<channel>/         (<correlator>: <name> at p = 0, <name>/p<nx>_<ny>_<nz> otherwise) attrs
                                   time_parity, gamma_sink, gamma_source, n_configs, n_bins
    mean, error                    [Lt] Re C(t) over the ensemble and its jackknife error
    effective_mass, effective_mass_error     [Lt] m_eff of the mean correlator and its jackknife error (NaN where
                                   undefined)
    jackknife_samples              [n_bins][Lt] leave-one-out means of C(t) (to carry the analysis further)
    fit/                           (fitted channels) attrs tmin, tmax, range ("given" or "proposed"), accepted,
                                   mass, mass_error, amplitude, amplitude_error, chi2, dof, chi2_per_dof, p_value,
                                   correlated (as used), singular; dataset mass_samples [n_bins]
  /<correlator>/pcac_mass/         (with pion and axial) mean, error [Lt]: the PCAC mass of the mean correlators
                                   and its jackknife error
CSV (--summary out.csv): header correlator,channel,quantity,t,value,error; quantity "correlator" and
  "effective_mass" (one row per t), and per fitted channel "mass", "amplitude" (value, error), "chi2_per_dof",
  "p_value", "tmin", "tmax", "dof" (value only; t empty); "pcac_mass" (channel empty, one row per t)."""


def pm(value, error):
    """value(error) with two significant digits of the error; value +- error in e-notation for tiny or huge
    numbers; "-" for NaN."""
    if value is None or not math.isfinite(value):
        return "-"
    if error is None or not math.isfinite(error) or error <= 0:
        return f"{value:.6g}"
    scale = abs(value) if value != 0 else error
    if scale >= 1e5 or scale < 1e-4:
        return f"{value:.4e} +- {error:.2e}"
    decimals = max(0, 1 - int(math.floor(math.log10(error))))
    digits = int(round(error * 10 ** decimals))
    if digits >= 100:  # rounding carried into a third digit
        decimals = max(0, decimals - 1)
        digits = int(round(error * 10 ** decimals))
    return f"{value:.{decimals}f}({digits})"


def check_options(options, lt):
    """Raises ReportError for options that cannot work on this lattice."""
    if options["bin"] < 1:
        raise ReportError(f"--bin {options['bin']}: the bin size must be at least 1")
    r = options.get("fit_range")
    if r is not None:
        tmin, tmax = r
        if not (0 <= tmin < tmax < lt) or tmax - tmin < 2:
            raise ReportError(f"--fit-range {tmin} {tmax}: needs 0 <= tmin, tmax <= Lt-1 = {lt - 1} and at least 3 "
                              "points (tmax >= tmin + 2)")


def fitted(channel, options):
    """True when the channel is to be fitted."""
    names = options["fit_channels"]
    return "all" in names or channel in names


def fit_channel(res, lt, options):
    """The fit of one channel's result (in place): res["fit"], res["fit_note"]."""
    samples, mean, parity = res["samples"], res["mean"], res["time_parity"]
    correlated = options["correlated"]
    try:
        if options.get("fit_range") is not None:
            tmin, tmax = options["fit_range"]
            source, accepted = "given", True
        else:
            tmin, tmax, accepted = resampling.propose_range(samples, mean, lt, parity, correlated, options["p_min"])
            source = "proposed"
        fit = resampling.fit_range(samples, mean, tmin, tmax, lt, parity, correlated)
    except (resampling.FitError, np.linalg.LinAlgError, ValueError) as e:
        res["fit"], res["fit_note"] = None, f"no fit: {e}"
        return
    fit.update({"range": source, "accepted": bool(accepted)})
    res["fit"] = fit
    notes = []
    if fit["singular"]:
        notes.append(f"the covariance of {tmax - tmin + 1} points from {samples.shape[0]} samples is singular or "
                     "ill-conditioned: fitted uncorrelated (more configurations, a larger bin or a shorter range "
                     "allow a correlated fit)")
    if not accepted:
        notes.append(f"no range reached p >= {options['p_min']}: the range of the largest p-value is shown")
    if options["correlated"] is False:
        notes.append("uncorrelated fit: chi^2/dof and p ignore the correlations between timeslices")
    res["fit_note"] = "; ".join(notes)


def analyse_channel(values, meta, options, lt):
    """The result of one channel: binned samples, jackknife means and errors, effective masses, fit."""
    if options.get("fold"):
        values = resampling.fold(values, meta["time_parity"])
    binned = resampling.bin_data(values, options["bin"])
    samples = resampling.jackknife_samples(binned)
    mean = binned.mean(axis=0)
    meff_samples = resampling.effective_mass(samples, meta["time_parity"])
    res = {"time_parity": meta["time_parity"], "gamma_sink": meta["gamma_sink"],
           "gamma_source": meta["gamma_source"], "mean": mean, "error": resampling.jackknife_error(samples),
           "samples": samples, "effective_mass": resampling.effective_mass(mean, meta["time_parity"]),
           "effective_mass_error": resampling.jackknife_error(meff_samples), "fit": None, "fit_note": ""}
    return res


def binning_scan(values, t):
    """[(bin size, jackknife error of C(t) with that bin / with bin 1)] for bin sizes 1, 2, 4, ... that leave at
    least 4 bins: a ratio that grows with the bin size reveals correlated (consecutive) configurations."""
    values = np.asarray(values, dtype=float)
    base = resampling.jackknife_error(resampling.jackknife_samples(values))[t]
    out, size = [], 1
    while values.shape[0] // size >= 4 and base > 0:
        err = resampling.jackknife_error(resampling.jackknife_samples(resampling.bin_data(values, size)))[t]
        out.append((size, float(err / base)))
        size *= 2
    return out


def pcac(channels):
    """The PCAC mass of the mean correlators and its jackknife error, {"mean", "error"} [Lt], or None without the
    pion and axial channels."""
    if "pion" not in channels or "axial" not in channels:
        return None
    p, a = channels["pion"], channels["axial"]
    return {"mean": resampling.pcac_mass(a["mean"], p["mean"]),
            "error": resampling.jackknife_error(resampling.pcac_mass(a["samples"], p["samples"]))}


def analyse(ens, options):
    """[{"name", "configs", "n_configs", "n_bins", "dropped", "channels": {channel: result}, "pcac": {"mean",
    "error"} or None, "bin_scan": (channel, binning_scan at t = Lt/4 of the unbinned data) or None}] per
    correlator."""
    lt = ens["extents"][3]
    check_options(options, lt)
    results = []
    for name, corr in ens["correlators"].items():
        n = len(corr["configs"])
        nb = n // options["bin"]
        if nb < 2:
            raise ReportError(f"correlator {name}: {n} configuration(s) in bins of {options['bin']} give {nb} "
                              "sample(s); the jackknife needs at least 2")
        out = {"name": name, "configs": corr["configs"], "n_configs": n, "n_bins": nb,
               "dropped": n - nb * options["bin"], "channels": {}}
        for ch, meta in corr["channels"].items():
            res = analyse_channel(meta["values"], meta, options, lt)
            if fitted(ch, options):
                fit_channel(res, lt, options)
            out["channels"][ch] = res
        out["pcac"] = pcac(out["channels"]) if "/" not in name else None  # p = 0 only
        first = "pion" if "pion" in corr["channels"] else next(iter(corr["channels"]), None)
        out["bin_scan"] = (first, binning_scan(corr["channels"][first]["values"], lt // 4)) if first else None
        results.append(out)
    if not results:
        raise ReportError("no correlators in the files (no /correlators groups)")
    return results


def write_h5(results, ens, options, path):
    """The HDF5 summary."""
    with h5py.File(path, "w") as f:
        f.attrs.update({"configs": ens["configs"], "files": [str(p) for p in ens["files"]],
                        "n_configs": len(ens["configs"]), "bin": options["bin"], "extents": ens["extents"],
                        "folded": bool(options.get("fold")),
                        "correlated": bool(options["correlated"]), "method": "jackknife"})
        for r in results:
            for ch, res in r["channels"].items():
                g = f.create_group(f"{r['name']}/{ch}")
                g.attrs.update({"time_parity": res["time_parity"], "gamma_sink": res["gamma_sink"],
                                "gamma_source": res["gamma_source"], "n_configs": r["n_configs"],
                                "n_bins": r["n_bins"]})
                for key in ("mean", "error", "effective_mass", "effective_mass_error"):
                    g[key] = res[key]
                g["jackknife_samples"] = res["samples"]
                if res["fit"] is not None:
                    fg = g.create_group("fit")
                    fg.attrs.update({k: v for k, v in res["fit"].items() if k != "mass_samples"})
                    fg["mass_samples"] = res["fit"]["mass_samples"]
            if r["pcac"] is not None:
                g = f.create_group(f"{r['name']}/pcac_mass")
                g["mean"], g["error"] = r["pcac"]["mean"], r["pcac"]["error"]


def csv_number(x):
    """A number for the CSV file ('' for NaN)."""
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else repr(float(x))


def write_csv(results, path):
    """The CSV summary."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["correlator", "channel", "quantity", "t", "value", "error"])
        for r in results:
            for ch, res in r["channels"].items():
                for q, v, e in (("correlator", res["mean"], res["error"]),
                                ("effective_mass", res["effective_mass"], res["effective_mass_error"])):
                    for t in range(len(v)):
                        w.writerow([r["name"], ch, q, t, csv_number(v[t]), csv_number(e[t])])
                fit = res["fit"]
                if fit is None:
                    continue
                for q in ("mass", "amplitude"):
                    w.writerow([r["name"], ch, q, "", csv_number(fit[q]), csv_number(fit[q + "_error"])])
                for q in ("chi2_per_dof", "p_value", "tmin", "tmax", "dof"):
                    w.writerow([r["name"], ch, q, "", csv_number(fit[q]), ""])
            if r["pcac"] is not None:
                for t, (v, e) in enumerate(zip(r["pcac"]["mean"], r["pcac"]["error"])):
                    w.writerow([r["name"], "", "pcac_mass", t, csv_number(v), csv_number(e)])


def summary_kind(path):
    """"h5" or "csv" from the summary file's extension; ReportError otherwise."""
    lower = str(path).lower()
    if lower.endswith((".h5", ".hdf5")):
        return "h5"
    if lower.endswith(".csv"):
        return "csv"
    raise ReportError(f"--summary {path}: the file name must end in .h5, .hdf5 or .csv")


def write_summary(results, ens, options, path):
    """The summary file, HDF5 or CSV by its extension."""
    if summary_kind(path) == "h5":
        write_h5(results, ens, options, path)
    else:
        write_csv(results, path)
