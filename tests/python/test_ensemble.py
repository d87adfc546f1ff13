"""The ensemble analysis (analysis/resampling.py, ensemble.py, ensemble_analysis.py and report.py over several
configurations) on synthetic correlators: a known mass, Gaussian noise of a known covariance, many configurations.
Checked against what the analysis does not use: the standard error sigma / sqrt(N), numpy's covariance, a
jackknife written here as an explicit leave-one-out loop, the exact cosh/sinh forms, and the pull distribution of
the fitted mass over several seeds. Needs no program run (ctest: Python.Ensemble, label python).
"""
import csv
import math
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "analysis"))

import resampling  # noqa: E402
from ensemble import load_ensemble  # noqa: E402
from output_file import ReportError  # noqa: E402

LT = 16
MASS = 0.35
AMPLITUDE = 3.0
CHANNELS = {"pion": ("g5", "g5", 1), "axial": ("g4g5", "g5", -1)}


def exact(parity=1, lt=LT, mass=MASS):
    """The noiseless correlator A (exp(-m t) + s exp(-m (Lt - t))), written out here."""
    t = np.arange(lt)
    return AMPLITUDE * (np.exp(-mass * t) + parity * np.exp(-mass * (lt - t)))


def noise_covariance(c, relative=0.02, rho=0.6):
    """A covariance with relative errors `relative` and correlation rho^|t - t'| (positive definite)."""
    t = np.arange(c.size)
    return relative ** 2 * np.outer(c, c) * rho ** np.abs(t[:, None] - t[None, :])


def draw(n, seed, parity=1, relative=0.02):
    """n configurations of the correlator with Gaussian noise of the known covariance."""
    c = exact(parity)
    return np.random.default_rng(seed).multivariate_normal(c, noise_covariance(np.abs(c), relative), size=n)


def write_config(group, pion, axial, complete=True):
    """The correlator layout of one configuration (docs/conventions.md section 13) into an h5py group."""
    g = group.create_group("correlators/prop")
    g.attrs["channels"] = list(CHANNELS)
    g.attrs["source_site"] = [0, 0, 0, 0]
    for ch, values in (("pion", pion), ("axial", axial)):
        snk, src, parity = CHANNELS[ch]
        d = g.create_dataset(ch, data=values.astype(complex))
        d.attrs.update({"gamma_sink": snk, "gamma_source": src, "time_parity": parity})
    group.create_group("solves/prop").attrs["complete"] = complete


def root_attrs(f):
    f.attrs["program_version"] = "test"
    f.attrs["extents"] = [4, 4, 4, LT]


def ensemble_file(path, ids, pion, axial):
    """An ensemble file: /configs/<id>/... for each id, rows of pion and axial."""
    with h5py.File(path, "w") as f:
        root_attrs(f)
        for i, cid in enumerate(ids):
            write_config(f.create_group(f"configs/{cid}"), pion[i], axial[i])
    return path


def single_file(path, cid, pion, axial):
    """A single-configuration file, its id the base name of /gauge's file."""
    with h5py.File(path, "w") as f:
        root_attrs(f)
        f.create_group("gauge").attrs["file"] = f"/data/cfg/{cid}"
        write_config(f, pion, axial)
    return path


@pytest.fixture(scope="module")
def data():
    """40 configurations of pion (cosh) and axial (sinh, negative as the program's) correlators."""
    return draw(40, seed=11, parity=1), -draw(40, seed=12, parity=-1)


def ids(n):
    return [f"conf.{10 * (i + 1)}" for i in range(n)]


# ----------------------------------------------------------------------------------------------------------------
# The jackknife and binning
# ----------------------------------------------------------------------------------------------------------------

def test_jackknife_error_of_the_mean_is_the_standard_error():
    """For the mean the jackknife error is s / sqrt(N) exactly, and s / sqrt(N) estimates sigma / sqrt(N) of
    independent data within its own spread (relative 1 / sqrt(2 (N - 1)); 5 of those allowed)."""
    n, sigma = 400, 0.7
    x = np.random.default_rng(3).normal(1.0, sigma, size=(n, 6))
    err = resampling.jackknife_error(resampling.jackknife_samples(x))
    np.testing.assert_allclose(err, x.std(axis=0, ddof=1) / math.sqrt(n), rtol=1e-12)
    assert np.all(np.abs(err / (sigma / math.sqrt(n)) - 1) < 5 / math.sqrt(2 * (n - 1)))


def test_jackknife_covariance_of_the_mean_is_numpys_covariance_over_n():
    x = draw(30, seed=5)
    cov = resampling.jackknife_covariance(resampling.jackknife_samples(x))
    np.testing.assert_allclose(cov, np.cov(x, rowvar=False) / x.shape[0], rtol=1e-10)


def test_jackknife_of_a_nonlinear_function_matches_an_explicit_leave_one_out_loop():
    """The jackknife error of the effective mass at t = 4: resampling's vectorised leave-one-out means and bisection
    against an explicit loop over np.delete with the cosh form solved by scipy's brentq."""
    import scipy.optimize
    x = draw(25, seed=6)
    n = x.shape[0]
    t = 4

    def meff(c):  # c(t)/c(t+1) = cosh(m (Lt/2 - t)) / cosh(m (Lt/2 - t - 1)), solved by brentq
        a = LT / 2 - t
        return scipy.optimize.brentq(lambda m: math.cosh(m * a) / math.cosh(m * (a - 1)) - c[t] / c[t + 1], 1e-6, 5,
                                     xtol=1e-15)
    loo = np.array([meff(np.delete(x, i, axis=0).mean(axis=0)) for i in range(n)])
    expected = math.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum())
    got = resampling.jackknife_error(resampling.effective_mass(resampling.jackknife_samples(x), 1)[:, t])
    assert got == pytest.approx(expected, rel=1e-9)


def test_bin_size_one_is_no_binning():
    x = draw(17, seed=7)
    np.testing.assert_array_equal(resampling.bin_data(x, 1), x)


@pytest.mark.parametrize("parity", [1, -1])
def test_fold_keeps_the_exact_form_and_averages_mirror_timeslices(parity):
    # t >= 1: the sinh form's C(0) is not antisymmetric (folded, it is 0, as C(Lt - 0) = -C(0) demands)
    np.testing.assert_allclose(resampling.fold(exact(parity), parity)[1:], exact(parity)[1:], atol=1e-15 * AMPLITUDE)
    x = draw(3, seed=4, parity=parity)
    folded = resampling.fold(x, parity)
    for t in range(1, LT):
        np.testing.assert_allclose(folded[:, t], 0.5 * (x[:, t] + parity * x[:, LT - t]), rtol=1e-15)


def test_bins_average_consecutive_configurations_and_drop_the_rest():
    x = np.arange(14, dtype=float)[:, None] * np.ones((1, 3))
    b = resampling.bin_data(x, 4)
    np.testing.assert_array_equal(b[:, 0], [1.5, 5.5, 9.5])


def test_binning_check_sees_autocorrelation():
    """An AR(1) stream x_i = r x_(i-1) + noise has the error of its mean grow with the bin towards
    sqrt((1 + r) / (1 - r)) = 3 for r = 0.8; independent data stay near 1 (within 4 / sqrt(bins))."""
    from ensemble_analysis import binning_scan
    rng = np.random.default_rng(21)
    n, r = 4096, 0.8
    ar = np.zeros((n, 1))
    for i in range(1, n):
        ar[i] = r * ar[i - 1] + rng.normal()
    scan = dict(binning_scan(ar, 0))
    assert scan[1] == 1.0 and scan[64] > 2.3 and scan[2] < scan[8] < scan[64]
    for b, ratio in binning_scan(rng.normal(size=(n, 1)), 0):
        assert abs(ratio - 1) < 4 / math.sqrt(n // b), (b, ratio)


# ----------------------------------------------------------------------------------------------------------------
# Effective masses and fits
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("parity", [1, -1])
def test_effective_mass_of_the_exact_form_is_the_mass(parity):
    m = resampling.effective_mass(exact(parity), parity)
    defined = [t for t in range(LT - 1) if parity == 1 or t not in (LT // 2 - 1, LT // 2)]
    np.testing.assert_allclose(m[defined], MASS, rtol=1e-12)
    assert np.isnan(m[LT - 1]) and (parity == 1 or np.isnan(m[LT // 2]))


@pytest.mark.parametrize("correlated", [True, False])
def test_fitted_mass_pulls_over_seeds(correlated):
    """Over 12 independent ensembles of 60 configurations, (m_fit - m) / error is standard normal: every |pull| below
    4 and the mean square pull in the 99.9% range of chi^2_12 / 12 (0.26 .. 2.7, a little wider for the jackknife's
    own error estimate)."""
    pulls = []
    for seed in range(12):
        x = draw(60, seed=100 + seed)
        fit = resampling.fit_range(resampling.jackknife_samples(x), x.mean(axis=0), 3, 8, LT, 1, correlated)
        assert fit["correlated"] == correlated and not fit["singular"]
        pulls.append((fit["mass"] - MASS) / fit["mass_error"])
    pulls = np.array(pulls)
    assert np.all(np.abs(pulls) < 4), pulls
    assert 0.2 < np.mean(pulls ** 2) < 3.0, pulls


def test_correlated_chi2_follows_its_distribution():
    """The mean correlated chi^2/dof over seeds is near 1 (the covariance is estimated: within 0.5)."""
    chi = [resampling.fit_range(resampling.jackknife_samples(x), x.mean(axis=0), 2, 8, LT, 1, True)["chi2_per_dof"]
           for x in (draw(80, seed=200 + s) for s in range(8))]
    assert abs(np.mean(chi) - 1) < 0.5, chi


def test_singular_covariance_falls_back_to_uncorrelated():
    x = draw(5, seed=8)
    fit = resampling.fit_range(resampling.jackknife_samples(x), x.mean(axis=0), 2, 8, LT, 1, True)
    assert fit["singular"] and not fit["correlated"]


def test_proposed_range_contains_the_mass():
    x = draw(60, seed=9)
    s = resampling.jackknife_samples(x)
    tmin, tmax, accepted = resampling.propose_range(s, x.mean(axis=0), LT, 1, True)
    assert accepted and 1 <= tmin and tmax <= LT // 2 and tmax - tmin >= 2
    fit = resampling.fit_range(s, x.mean(axis=0), tmin, tmax, LT, 1, True)
    assert abs(fit["mass"] - MASS) < 4 * fit["mass_error"]


# ----------------------------------------------------------------------------------------------------------------
# Reading ensembles: one file, several files, single-configuration files
# ----------------------------------------------------------------------------------------------------------------

def test_one_ensemble_file_two_ensemble_files_and_single_files_read_alike(tmp_path, data):
    pion, axial = data
    names = ids(len(pion))
    one = load_ensemble([ensemble_file(tmp_path / "all.h5", names, pion, axial)])
    half = len(names) // 2
    two = load_ensemble([ensemble_file(tmp_path / "b.h5", names[half:], pion[half:], axial[half:]),
                         ensemble_file(tmp_path / "a.h5", names[:half], pion[:half], axial[:half])])
    singles = [single_file(tmp_path / f"s{i}.h5", names[i], pion[i], axial[i]) for i in range(len(names))]
    mixed = load_ensemble(singles[half:][::-1] + [tmp_path / "a.h5"])
    for ens in (one, two, mixed):
        assert ens["configs"] == names  # natural order: conf.100 after conf.90
        np.testing.assert_array_equal(ens["correlators"]["prop"]["channels"]["pion"]["values"], pion)
        np.testing.assert_array_equal(ens["correlators"]["prop"]["channels"]["axial"]["values"], axial)
        assert ens["correlators"]["prop"]["channels"]["axial"]["time_parity"] == -1


def test_a_configuration_twice_is_an_error(tmp_path, data):
    pion, axial = data
    a = ensemble_file(tmp_path / "a.h5", ids(3), pion[:3], axial[:3])
    b = single_file(tmp_path / "b.h5", ids(3)[1], pion[1], axial[1])
    with pytest.raises(ReportError, match="appears twice"):
        load_ensemble([a, b])


def test_incomplete_solve_is_left_out_with_a_warning(tmp_path, data):
    pion, axial = data
    path = ensemble_file(tmp_path / "a.h5", ids(4), pion[:4], axial[:4])
    with h5py.File(path, "r+") as f:
        f["configs/conf.20/solves/prop"].attrs["complete"] = False
    ens = load_ensemble([path])
    assert ens["correlators"]["prop"]["configs"] == ["conf.10", "conf.30", "conf.40"]
    assert any("conf.20" in w and "incomplete" in w for w in ens["warnings"])


# ----------------------------------------------------------------------------------------------------------------
# The command line: analysis/report over an ensemble
# ----------------------------------------------------------------------------------------------------------------

REPORT = pathlib.Path(__file__).resolve().parents[2] / "analysis" / "report.py"


def report(*args):
    """analysis/report.py as a program (its command line and exit status)."""
    return subprocess.run([sys.executable, str(REPORT)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def report_main(capsys, *args):
    """report.main in this process (faster than a new interpreter): (exit status, stdout, stderr)."""
    sys.path.insert(0, str(REPORT.parent))
    import report as report_module
    status = report_module.main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_report_summary_h5_and_csv_agree_with_the_library(tmp_path, data, capsys):
    pion, axial = data
    path = ensemble_file(tmp_path / "ens.h5", ids(len(pion)), pion, axial)
    proc = report(path, "--fit-range", 3, 8, "--bin", 2, "--summary", tmp_path / "s.h5", "--out-dir", tmp_path / "p")
    assert proc.returncode == 0, proc.stderr
    assert "m = " in proc.stdout and "fit t = 3..8 (given, correlated" in proc.stdout
    assert (tmp_path / "p" / "ensemble_prop.png").is_file()
    binned = resampling.bin_data(pion, 2)
    samples = resampling.jackknife_samples(binned)
    fit = resampling.fit_range(samples, binned.mean(axis=0), 3, 8, LT, 1, True)
    with h5py.File(tmp_path / "s.h5", "r") as f:
        g = f["prop/pion"]
        np.testing.assert_allclose(g["mean"][...], binned.mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(g["error"][...], binned.std(axis=0, ddof=1) / math.sqrt(binned.shape[0]),
                                   rtol=1e-10)
        assert g["fit"].attrs["mass"] == pytest.approx(fit["mass"], rel=1e-12)
        assert g["fit"].attrs["mass_error"] == pytest.approx(fit["mass_error"], rel=1e-9)
        assert f.attrs["n_configs"] == len(pion) and f.attrs["bin"] == 2 and "fit" not in f["prop/axial"]
        # PCAC mass: the formula written out here, its error by an explicit leave-one-out loop over the bins
        ab = resampling.bin_data(axial, 2)
        nb = binned.shape[0]

        def pcac(a, p):
            return (np.roll(a, -1) - np.roll(a, 1)) / (4 * p)
        loo = np.array([pcac(np.delete(ab, i, 0).mean(0), np.delete(binned, i, 0).mean(0)) for i in range(nb)])
        np.testing.assert_allclose(f["prop/pcac_mass/mean"][...], pcac(ab.mean(0), binned.mean(0)), rtol=1e-12)
        np.testing.assert_allclose(f["prop/pcac_mass/error"][...],
                                   np.sqrt((nb - 1) / nb * ((loo - loo.mean(0)) ** 2).sum(0)), rtol=1e-9)
    status, _, err = report_main(capsys, path, "--fit-range", 3, 8, "--bin", 2, "--summary", tmp_path / "s.csv",
                                 "--no-plots")
    assert status == 0, err
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    mass = [r for r in rows if r["correlator"] == "prop" and r["channel"] == "pion" and r["quantity"] == "mass"]
    assert float(mass[0]["value"]) == pytest.approx(fit["mass"], rel=1e-12)
    assert len([r for r in rows if r["quantity"] == "correlator"]) == 2 * LT


def test_report_proposes_a_range_and_plots_a_band(tmp_path, data):
    sys.path.insert(0, str(REPORT.parent))
    from ensemble_analysis import analyse
    from ensemble_plots import plot_ensemble
    pion, axial = data
    ens = load_ensemble([ensemble_file(tmp_path / "ens.h5", ids(len(pion)), pion, axial)])
    results = analyse(ens, {"bin": 1, "fit_range": None, "correlated": True, "fit_channels": ["all"], "p_min": 0.05})
    fits = {ch: r["fit"] for ch, r in results[0]["channels"].items()}
    assert fits["pion"]["range"] == "proposed" and abs(fits["pion"]["mass"] - MASS) < 4 * fits["pion"]["mass_error"]
    assert fits["axial"] is not None and abs(fits["axial"]["mass"] - MASS) < 4 * fits["axial"]["mass_error"]
    drawn = plot_ensemble(results[0], LT, tmp_path / "e.png")
    assert drawn["errorbars"] == 4 and set(drawn["bands"]) == {"pion", "axial"}


@pytest.mark.parametrize("bad", ["bin", "range", "summary", "one_config"])
def test_bad_ensemble_input_gives_one_error_line_and_writes_nothing(tmp_path, data, bad, capsys):
    pion, axial = data
    path = ensemble_file(tmp_path / "ens.h5", ids(4), pion[:4], axial[:4])
    args = {"bin": ["--bin", 3], "range": ["--fit-range", 5, 6], "summary": ["--summary", tmp_path / "s.txt"],
            "one_config": []}[bad]
    files = [single_file(tmp_path / "one.h5", "c1", pion[0], axial[0])] if bad == "one_config" else [path]
    status, out, err = report_main(capsys, *files, *args, "--summary" if bad != "summary" else "--no-plots",
                                   *([tmp_path / "s.h5"] if bad != "summary" else []))
    assert status == 2, out + err
    assert len(err.splitlines()) == 1 and err.startswith("report.py: ERROR: ") and out == ""
    assert not any(p.suffix in (".h5", ".csv", ".txt", ".png") and p.name not in ("ens.h5", "one.h5")
                   for p in tmp_path.rglob("*")), list(tmp_path.rglob("*"))
