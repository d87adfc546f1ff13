"""ensemble_report.py: the text of the ensemble report (analysis/report.py given several configurations: an
ensemble file, several of them, or single-configuration files, in any mix), from ensemble_analysis.analyse:

  per correlator (<name> at p = 0, <name>/p<nx>_<ny>_<nz> at a non-zero momentum): the number of configurations and
  jackknife samples; per channel the mean correlator and
  the effective mass with jackknife errors, t = 0 .. Lt/2 (the rest mirrors it for the ensemble mean); for each
  fitted channel the fit: range (given or proposed), correlated or not, mass and amplitude with jackknife errors,
  chi^2/dof, p-value, and notes (singular covariance, no acceptable range, uncorrelated chi^2); the PCAC mass with
  jackknife errors (with pion and axial); a binning check: the error of C(Lt/4) for bins of 2, 4, 8, ...
  configurations relative to bin 1.
Values print as value(error), the error's two leading digits in the parentheses: 0.41234(56) = 0.41234 +- 0.00056.

  run(paths, options, out_dir, summary, plots, out)   the whole ensemble report; returns the list of files written
Raises output_file.ReportError (exit 2, nothing written) for input that cannot be analysed.
Who may call: report.py and the tests.
"""
import sys

from ensemble import load_ensemble
from ensemble_analysis import analyse, pm, summary_kind, write_summary
from ensemble_plots import write_ensemble_plots


def print_channel(ch, res, lt, out):
    """The table of one channel and its fit line."""
    print(f"  {ch} (G_snk {res['gamma_sink']}, G_src {res['gamma_source']}, time parity {res['time_parity']:+d})",
          file=out)
    print(f"    {'t':>3}  {'C(t)':>22}  {'rel.err':>8}  {'m_eff(t)':>16}", file=out)
    for t in range(lt // 2 + 1):
        c, e = float(res["mean"][t]), float(res["error"][t])
        rel = f"{abs(e / c):.2e}" if c != 0 else "-"
        print(f"    {t:>3}  {pm(c, e):>22}  {rel:>8}  "
              f"{pm(float(res['effective_mass'][t]), float(res['effective_mass_error'][t])):>16}", file=out)
    fit = res["fit"]
    if fit is not None:
        kind = "correlated" if fit["correlated"] else "uncorrelated"
        form = "cosh" if res["time_parity"] == 1 else "sinh"
        print(f"    fit t = {fit['tmin']}..{fit['tmax']} ({fit['range']}, {kind}, {form} form): "
              f"m = {pm(fit['mass'], fit['mass_error'])}, A = {pm(fit['amplitude'], fit['amplitude_error'])}, "
              f"chi2/dof = {fit['chi2_per_dof']:.3f} (dof {fit['dof']}), p = {fit['p_value']:.3f}", file=out)
    if res["fit_note"]:
        print(f"    note: {res['fit_note']}", file=out)


def print_results(ens, results, options, out):
    """The whole text report."""
    ext = ens["extents"]
    print(f"EmPRiSM-MPI ensemble report: {len(ens['configs'])} configuration(s) from {len(ens['files'])} file(s)",
          file=out)
    print(f"lattice {'x'.join(map(str, ext))}; configurations {ens['configs'][0]} .. {ens['configs'][-1]}", file=out)
    folded = "; C(t) and s C(Lt - t) averaged (--fold)" if options.get("fold") else ""
    print(f"errors: jackknife over bins of {options['bin']} configuration(s){folded}; fits "
          f"{'correlated' if options['correlated'] else 'uncorrelated'}, "
          + (f"range t = {options['fit_range'][0]}..{options['fit_range'][1]}" if options.get("fit_range")
             else f"range proposed (the widest of >= 3 points in 1..Lt/2 with p >= {options['p_min']})"), file=out)
    for w in ens["warnings"]:
        print(f"warning: {w}", file=out)
    for r in results:
        print(file=out)
        dropped = f", last {r['dropped']} dropped by binning" if r["dropped"] else ""
        print(f"Correlators {r['name']}: {r['n_configs']} configurations, {r['n_bins']} jackknife samples{dropped}",
              file=out)
        if r["bin_scan"] is not None and len(r["bin_scan"][1]) > 1:
            ch, scan = r["bin_scan"]
            ratios = ", ".join(f"bin {b}: {ratio:.2f}" for b, ratio in scan[1:])
            print(f"  binning check ({ch}, C({ext[3] // 4})): jackknife error relative to bin 1: {ratios}", file=out)
            print("    (a ratio that grows with the bin: consecutive configurations are correlated; bin more)",
                  file=out)
        for ch, res in r["channels"].items():
            print_channel(ch, res, ext[3], out)
        if r["pcac"] is not None:
            values = "  ".join(f"{t}: {pm(float(r['pcac']['mean'][t]), float(r['pcac']['error'][t]))}"
                               for t in range(2, ext[3] // 2 + 1))
            print(f"  PCAC mass (t = 2 .. Lt/2, away from the contact terms): {values}", file=out)


def run(paths, options, out_dir, summary, plots, out=None):
    """Reads, analyses, prints; then writes the summary and the plots. Returns the paths written."""
    out = sys.stdout if out is None else out
    if summary is not None:
        summary_kind(summary)
    ens = load_ensemble(paths)
    results = analyse(ens, options)
    print_results(ens, results, options, out)
    written = []
    if summary is not None:
        write_summary(results, ens, options, summary)
        written.append(summary)
    if plots:
        written.extend(write_ensemble_plots(results, ens["extents"][3], out_dir))
    return written
