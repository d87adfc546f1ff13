"""Tests of analysis/report.py on output files the program writes during the test (no stored fixtures).

Two runs on a 4x4x4x8 random gauge field (width 0.3), csw = 1.0, metrics.peak = true, single precision:
  "point":       one point solve;
  "propagator":  the point solve and a propagator solve (wuppertal smearing on APE links, momenta [[1, 0, 0]]).
and the same two with metrics.peak = false, output.fields = false, double precision ("bare" files).
Every printed kernel, rank-time, solve and correlator number is parsed back and compared with the file (read here
with h5py, independently of report.py) to the printed precision; the PNG files are checked to be real images;
bad files give exit 2 and one ERROR line. The "propagator" cases need the program's propagator support.
"""
import math
import shutil
import subprocess
import sys
import types

import h5py
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402  (after the backend is chosen)

LATTICE = """
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "random"
width = 0.3
seed = 11
[dirac]
kappa = 0.12
csw = 1.0
"""

POINT_SOLVE = """
[[solve]]
name = "pt"
type = "point"
site = [1, 0, 2, 3]
spin = 1
colour = 2
"""

PROPAGATOR_SOLVE = """
[[solve]]
name = "prop"
type = "propagator"
site = [0, 1, 2, 3]
momenta = [[1, 0, 0]]
smearing = "wuppertal"
smearing_steps = 5
smearing_weight = 0.25
link_smearing = "ape"
link_smearing_steps = 2
link_smearing_weight = 0.5
"""

FULL_RUN = """
[solver]
tol = 1e-6
max_iter = 4000
[metrics]
peak = true
"""

BARE_RUN = """
[solver]
precision = "double"
tol = 1e-10
max_iter = 4000
[metrics]
peak = false
"""

CASES = ["point", "propagator"]


def input_body(kind, run):
    """The TOML input (without [output]) of a case."""
    return LATTICE + run + POINT_SOLVE + (PROPAGATOR_SOLVE if kind == "propagator" else "")


def run_case(run_emprism_in, run_report, directory, kind, run, output):
    """Runs the program and the report (plots into <directory>/plots); returns a dict describing the case."""
    h5 = run_emprism_in(directory, input_body(kind, run), name=f"{kind}", output=output)
    out_dir = directory / "plots"
    proc = run_report(h5, "--out-dir", out_dir)
    return {"kind": kind, "h5": h5, "out_dir": out_dir, "proc": proc, "stdout": proc.stdout}


@pytest.fixture(scope="module", params=CASES)
def case(request, tmp_path_factory, run_emprism_in, run_report):
    """metrics.peak = true, fields written, single precision."""
    directory = tmp_path_factory.mktemp(f"report_{request.param}")
    return run_case(run_emprism_in, run_report, directory, request.param, FULL_RUN, None)


@pytest.fixture(scope="module", params=CASES)
def bare_case(request, tmp_path_factory, run_emprism_in, run_report):
    """metrics.peak = false, output.fields = false, double precision."""
    directory = tmp_path_factory.mktemp(f"report_bare_{request.param}")
    return run_case(run_emprism_in, run_report, directory, request.param, BARE_RUN, {"fields": False})


# ----------------------------------------------------------------------------------------------------------------
# Parsing the printed report
# ----------------------------------------------------------------------------------------------------------------

def section(stdout, title):
    """The lines after the line starting with `title`, up to the next blank line."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(title)]
    assert starts, f"no line starting with {title!r} in the report:\n{stdout}"
    out = []
    for line in lines[starts[0] + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def table(lines):
    """(header tokens, rows of tokens) of a printed table: the first line is the header."""
    return lines[0].split(), [line.split() for line in lines[1:]]


def tolerance(printed):
    """Half a unit in the last printed digit of a number (with or without exponent)."""
    mantissa, _, exponent = printed.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-decimals) * 10.0 ** (int(exponent) if exponent else 0)


def assert_printed(printed, value, what):
    """`printed` is `value` rounded to its printed precision ('-' for an unknown value)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        assert printed == "-", f"{what}: printed {printed}, expected '-'"
        return
    got = float(printed)
    assert abs(got - value) <= tolerance(printed) * (1 + 1e-9) + 1e-300, f"{what}: printed {printed}, file {value!r}"


def attr_text(v):
    """An HDF5 string attribute as str."""
    return v.decode() if isinstance(v, bytes) else str(v)


def assert_image(path):
    """`path` is a non-empty PNG with a positive size and more than one colour."""
    assert path.is_file(), f"no {path}"
    assert path.stat().st_size > 0, f"{path} is empty"
    img = matplotlib.image.imread(str(path))
    assert img.ndim in (2, 3) and img.shape[0] > 0 and img.shape[1] > 0, f"{path}: shape {img.shape}"
    pixels = img.reshape(img.shape[0] * img.shape[1], -1)
    assert np.ptp(pixels, axis=0).max() > 0, f"{path} is a single colour"


# ----------------------------------------------------------------------------------------------------------------
# The report on the full file
# ----------------------------------------------------------------------------------------------------------------

def test_report_exits_zero(case):
    proc = case["proc"]
    assert proc.returncode == 0, f"report.py exited {proc.returncode}\nstderr:\n{proc.stderr}"
    assert proc.stderr == "", proc.stderr
    for title in ("EmPRiSM-MPI report:", "Kernels (", "Stencil kernels (", "BLAS kernels (", "Rank times (",
                  "Solves ("):
        assert any(line.startswith(title) for line in proc.stdout.splitlines()), f"no {title!r} section"


def test_no_spread_is_printed_as_an_error(case):
    """One configuration has no statistical errors: no "+-" or "±" anywhere in the report."""
    assert "+-" not in case["stdout"] and "\u00b1" not in case["stdout"], case["stdout"]


def test_header_matches_file(case):
    out = case["stdout"]
    with h5py.File(case["h5"], "r") as f:
        a = f.attrs
        ext = "x".join(str(int(e)) for e in a["extents"])
        grid = "x".join(str(int(p)) for p in a["process_grid"])
        assert f"lattice {ext} (volume {int(np.prod(a['extents']))}), precision {attr_text(a['precision'])}" in out
        assert f"ranks {int(a['ranks'])}, process grid {grid}" in out
        assert f"backend {attr_text(a['backend'])}, device {attr_text(a['device'])}" in out
        peak = dict(f["metrics/peak"].attrs)
        assert bool(peak["measured"])
    line = [x for x in out.splitlines() if x.startswith("empirical peak:")][0]
    nums = [w.strip(",;") for w in line.split() if w.strip(",;").replace(".", "", 1).isdigit()]
    assert len(nums) == 4, line
    for printed, key in zip(nums, ("copy_gbs", "triad_gbs", "read_gbs", "peak_gbs")):
        assert_printed(printed, float(peak[key]), f"peak {key}")


def kernel_rows_of_file(h5):
    """name -> row of /metrics/kernels."""
    with h5py.File(h5, "r") as f:
        rows = f["metrics/kernels"][...]
    return {attr_text(r["name"]): r for r in rows}


KERNEL_HEADER = ["kernel", "calls", "ms/call", "GB/s", "%peak", "GFLOP/s", "regs", "spill_B", "occupancy"]
GROUP_TITLES = ("Stencil kernels", "BLAS kernels", "Host kernels", "Other kernels")


def kernel_tables(stdout):
    """{group title: rows} of the printed kernel tables (each checked to have the kernel header)."""
    out = {}
    for title in GROUP_TITLES:
        if any(line.startswith(title + " (") for line in stdout.splitlines()):
            header, rows = table(section(stdout, title + " ("))
            assert header == KERNEL_HEADER, f"{title}: header {header}"
            out[title] = rows
    return out


def test_kernels_are_grouped(case):
    tables = kernel_tables(case["stdout"])
    stencil = [r[0] for r in tables.get("Stencil kernels", [])]
    blas = [r[0] for r in tables.get("BLAS kernels", [])]
    for hot in ("eo_clover", "oe_clover", "eo_clover_dag", "oe_clover_dag"):
        assert hot in stencil, f"{hot} not among the stencil kernels {stencil}"
    assert blas and all(n.startswith("blas_") for n in blas), blas
    assert not any(n.startswith("blas_") for n in stencil), stencil
    assert all(n.startswith("host_") for n in (r[0] for r in tables.get("Host kernels", []))), tables
    for title, rows in tables.items():
        with h5py.File(case["h5"], "r") as f:
            total = {attr_text(k["name"]): float(k["total_s"]) for k in f["metrics/kernels"][...]}
        times = [total[r[0]] for r in rows]
        assert times == sorted(times, reverse=True), f"{title} not sorted by total time"


def test_kernel_rows_match_file(case):
    rows = [r for rows in kernel_tables(case["stdout"]).values() for r in rows]
    header = KERNEL_HEADER
    kernels = kernel_rows_of_file(case["h5"])
    assert kernels, "the file has no kernel rows"
    assert sorted(r[0] for r in rows) == sorted(kernels), "printed kernels differ from /metrics/kernels"
    for r in rows:
        assert len(r) == len(header), f"row {r}"
        k = kernels[r[0]]
        calls, total = int(k["calls"]), float(k["total_s"])
        assert int(r[1]) == calls, f"{r[0]} calls"
        assert_printed(r[2], 1e3 * total / calls if calls else None, f"{r[0]} ms/call")
        assert_printed(r[3], float(k["gbs"]), f"{r[0]} GB/s")
        assert r[4].endswith("*") == (float(k["percent_of_peak"]) > 100), f"{r[0]}: cache mark of {r[4]}"
        assert_printed(r[4].rstrip("*"), float(k["percent_of_peak"]), f"{r[0]} % of peak")
        assert_printed(r[5], float(k["flops"]) / total / 1e9 if total > 0 else None, f"{r[0]} GFLOP/s")
        for cell, key in ((r[6], "registers"), (r[7], "spill_bytes")):
            assert cell == (str(int(k[key])) if k[key] >= 0 else "-"), f"{r[0]} {key}"
        if k["occupancy"] >= 0:
            assert_printed(r[8].rstrip("%"), 100 * float(k["occupancy"]), f"{r[0]} occupancy")
        else:
            assert r[8] == "-"


def test_rank_times_match_file(case):
    lines = section(case["stdout"], "Rank times (")
    header, rows = table([x for x in lines if not x.strip().startswith("load balance")])
    assert header == ["time", "min", "mean", "max"]
    with h5py.File(case["h5"], "r") as f:
        ranks = f["metrics/ranks"][...]
        assert len(ranks) == int(f.attrs["ranks"])
    for r in rows:
        v = np.asarray(ranks[r[0] + "_s"], dtype=float)
        for printed, value in zip(r[1:], (v.min(), v.mean(), v.max())):
            assert_printed(printed, float(value), f"rank {r[0]}")
    balance = [x for x in lines if "load balance" in x][0].split()[-1]
    c = np.asarray(ranks["compute_s"], dtype=float)
    assert_printed(balance, float(c.mean() / c.max()) if c.max() > 0 else 1.0, "load balance")


def check_solve_rows(out, h5):
    """Every printed solve row matches its /solves/<name> group."""
    header, rows = table([x for x in section(out, "Solves (") if "note:" not in x])
    assert header == ["solve", "kind", "iterations", "restarts", "true_residual", "converged", "seconds", "ms/iter",
                      "fields"]
    with h5py.File(h5, "r") as f:
        solves = f["solves"]
        assert sorted(r[0] for r in rows) == sorted(solves)
        for r in rows:
            g = solves[r[0]]
            a = g.attrs
            it, sec = int(a["iterations"]), float(a["seconds"])
            assert r[1] == attr_text(a["source_kind"])
            assert int(r[2]) == it and int(r[3]) == int(a["restarts"])
            assert_printed(r[4], float(a["true_residual"]), f"{r[0]} true residual")
            assert r[5] == ("yes" if bool(a["converged"]) else "NO")
            assert_printed(r[6], sec, f"{r[0]} seconds")
            assert_printed(r[7], 1e3 * sec / it if it else None, f"{r[0]} ms/iter")
            has_fields = any(k in g for k in ("solution", "source", "propagator"))
            assert r[8] == ("yes" if has_fields else "no")
    return rows


def test_solve_summary_matches_file(case):
    rows = check_solve_rows(case["stdout"], case["h5"])
    assert ("prop" in [r[0] for r in rows]) == (case["kind"] == "propagator")
    assert all(r[8] == "yes" for r in rows), "fields are written in this run"


@pytest.mark.parametrize("case", ["propagator"], indirect=True)
def test_propagator_summary_matches_file(case):
    out = case["stdout"]
    head = [x for x in out.splitlines() if x.startswith("Propagator prop:")]
    assert head, out
    assert "source site (0, 1, 2, 3)" in head[0]
    assert "wuppertal smearing (5 steps, weight 0.25)" in head[0] and "ape links (2 steps, weight 0.5)" in head[0]
    lines = section(out, "Propagator prop:")
    start = [i for i, x in enumerate(lines) if x.split()[:1] == ["channel"]][0]
    end = start + 1
    while end < len(lines) and not lines[end].lstrip().startswith(("p =", "PCAC")):
        end += 1
    header, rows = table(lines[start:end])
    with h5py.File(case["h5"], "r") as f:
        c = f["correlators/prop"]
        lt = int(f.attrs["extents"][3])
        channels = [attr_text(x) for x in c.attrs["channels"]]
        assert [r[0] for r in rows] == channels
        lo, hi = round(lt / 3), round(2 * lt / 3) - 1
        assert header[7] == f"mean(t={lo}..{hi})", header
        for r in rows:
            corr = c[r[0]][...]
            meff = c["effective_mass/" + r[0]][...]
            assert int(r[1]) == int(c[r[0]].attrs["time_parity"])
            assert_printed(r[2], float(corr[0].real), f"{r[0]} C(0)")
            assert_printed(r[3], float(corr[lt // 2].real), f"{r[0]} C(Lt/2)")
            assert r[4] == attr_text(c["effective_mass/" + r[0]].attrs["form"])
            assert_printed(r[5], float(meff[1]), f"{r[0]} m_eff(1)")
            assert_printed(r[6], float(meff[lt // 4]), f"{r[0]} m_eff(Lt/4)")
            window = meff[lo:hi + 1]
            window = window[np.isfinite(window)]
            assert len(r) == len(header) and int(r[-1]) == window.size
            assert_printed(r[7], float(window.mean()) if window.size else None, f"{r[0]} mean")
        assert any(x.lstrip().startswith("p = (1,0,0): E_eff") for x in lines)
        if "pcac_mass" in c:
            pcac = [x for x in lines if x.lstrip().startswith("PCAC mass:")]
            assert pcac, "no PCAC line"
            assert_printed(pcac[0].split()[-1], float(c["pcac_mass"][lt // 2]), "PCAC mass at Lt/2")
            window = c["pcac_mass"][lo:hi + 1]
            assert_printed(pcac[0].split()[4], float(np.mean(window[np.isfinite(window)])), "PCAC mean")
        assert any("no statistical errors" in x for x in lines)


def test_plots_are_images(case):
    assert case["proc"].returncode == 0
    names = ["residual_history.png", "bandwidth.png"]
    if case["kind"] == "propagator":
        names.append("correlators_prop.png")
    for name in names:
        assert_image(case["out_dir"] / name)
        assert f"wrote {case['out_dir'] / name}" in case["stdout"]


def test_default_out_dir_is_beside_the_file(case, tmp_path, run_report):
    h5 = tmp_path / "copy.h5"
    shutil.copy(case["h5"], h5)
    proc = run_report(h5)
    assert proc.returncode == 0, proc.stderr
    assert_image(tmp_path / "copy_report" / "residual_history.png")
    assert_image(tmp_path / "copy_report" / "bandwidth.png")


def test_no_plots_writes_no_files(case, tmp_path, run_report):
    h5 = tmp_path / "copy.h5"
    shutil.copy(case["h5"], h5)
    proc = run_report(h5, "--no-plots", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Kernels (" in proc.stdout and "wrote " not in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.h5"]
    proc = run_report(h5, "--no-plots", "--out-dir", tmp_path / "plots")
    assert proc.returncode == 0 and not (tmp_path / "plots").exists()


@pytest.mark.parametrize("case", ["propagator"], indirect=True)
def test_load_reads_the_correlators(case, analysis):
    data = analysis.output.load(str(case["h5"]))
    with h5py.File(case["h5"], "r") as f:
        c = f["correlators/prop"]
        loaded = {x["name"]: x for x in data["correlators"]}["prop"]
        assert [s["momentum"] for s in loaded["sectors"]] == [tuple(int(v) for v in n) for n in c.attrs["momenta"]]
        for sec in loaded["sectors"]:
            g = c if sec["momentum"] == (0, 0, 0) else c[analysis.output.momentum_group(sec["momentum"])]
            for ch, d in sec["correlators"].items():
                np.testing.assert_array_equal(d["values"], g[ch][...])
                np.testing.assert_array_equal(sec["effective_mass"][ch]["values"], g["effective_mass/" + ch][...])


# ----------------------------------------------------------------------------------------------------------------
# Cache-resident rates, the PCAC range, error bars (on copies of the files with chosen numbers)
# ----------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def analysis(source_dir):
    """The analysis modules: analysis.output (output_file.py: reading), analysis.plots (report_plots.py)."""
    sys.path.insert(0, str(source_dir / "analysis"))
    try:
        import output_file
        import report_plots
    finally:
        sys.path.pop(0)
    return types.SimpleNamespace(output=output_file, plots=report_plots)


def with_cache_rates(src, dst, blas_percent, stencil_percent):
    """Copies src to dst with every blas_* kernel at blas_percent of the peak and every other at stencil_percent
    (gbs and percent_of_peak consistent); returns the peak in GB/s."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        peak = float(f["metrics/peak"].attrs["peak_gbs"])
        rows = f["metrics/kernels"][...]
        for r in rows:
            pct = blas_percent if attr_text(r["name"]).startswith("blas_") else stencil_percent
            r["percent_of_peak"], r["gbs"] = pct, pct * peak / 100
        f["metrics/kernels"][...] = rows
    return peak


@pytest.mark.parametrize("case", ["point"], indirect=True)
def test_rates_above_the_peak_are_marked_cache_resident(case, tmp_path, run_report):
    h5 = tmp_path / "cache.h5"
    with_cache_rates(case["h5"], h5, 241.0, 62.5)
    proc = run_report(h5, "--out-dir", tmp_path / "plots")
    assert proc.returncode == 0, proc.stderr
    tables = kernel_tables(proc.stdout)
    for r in tables["BLAS kernels"]:
        assert r[4] == "241.0*", r
    for r in tables["Stencil kernels"]:
        assert r[4] == "62.5", r
    note = [x for x in proc.stdout.splitlines() if x.startswith("* ")]
    assert len(note) == 1 and f"* {len(tables['BLAS kernels'])} kernel(s) above the measured peak" in note[0], note
    assert "cache" in note[0]
    assert_image(tmp_path / "plots" / "bandwidth.png")


@pytest.mark.parametrize("case", ["point"], indirect=True)
def test_cache_rates_do_not_set_the_bandwidth_axis(case, tmp_path, analysis):
    h5 = tmp_path / "cache.h5"
    peak = with_cache_rates(case["h5"], h5, 1000.0, 80.0)
    limits = analysis.plots.plot_bandwidth(analysis.output.load(str(h5)), str(tmp_path / "bandwidth.png"))
    assert_image(tmp_path / "bandwidth.png")
    assert len(limits) >= 2, f"stencil and BLAS kernels share a panel: {limits}"
    for title, (_, top) in limits.items():
        # The peak and an 80% bar are visible; the 10x-peak BLAS bars are cut at the top, not scaled into view.
        assert 1.0 * peak < top <= 1.5 * peak, f"panel {title}: top {top} for a peak of {peak}"


def test_bandwidth_top_without_a_peak_fits_the_tallest_bar(analysis):
    assert analysis.plots.bandwidth_top([1.0, 5.0, 2.0], 0.0) == pytest.approx(5.75)
    assert analysis.plots.bandwidth_top([1.0, 500.0], 10.0) == pytest.approx(13.0)


@pytest.mark.parametrize("case", ["propagator"], indirect=True)
def test_pcac_range_ignores_the_contact_terms(case, tmp_path, analysis):
    h5 = tmp_path / "contact.h5"
    shutil.copy(case["h5"], h5)
    with h5py.File(h5, "r+") as f:
        lt = int(f.attrs["extents"][3])
        pcac = f["correlators/prop/pcac_mass"][...]
        pcac[0], pcac[1], pcac[lt - 1] = -300.0, 250.0, 1e4
        f["correlators/prop/pcac_mass"][...] = pcac
    inner = pcac[2:lt - 1]
    assert np.isfinite(inner).all()
    data = analysis.output.load(str(h5))
    c = {x["name"]: x for x in data["correlators"]}["prop"]
    summary = analysis.plots.plot_correlators(c, lt, str(tmp_path / "corr.png"))
    assert_image(tmp_path / "corr.png")
    lo, hi = summary["pcac_ylim"]
    assert lo <= inner.min() and hi >= inner.max(), f"range {lo, hi} cuts the PCAC points {inner}"
    span = max(inner.max() - inner.min(), 0.05 * np.abs(inner).max())
    assert hi - lo <= 3 * span, f"range {lo, hi} set by the contact terms, not by {inner}"
    assert summary["errorbars"] == 0, "error bars drawn for one configuration"


def test_pcac_limits_fall_back_to_all_points(analysis):
    values = np.array([0.1, 0.2, np.nan, np.nan, np.nan, np.nan, np.nan, 0.3])
    lo, hi = analysis.plots.pcac_limits(values, 8)
    assert lo < 0.1 and hi > 0.3
    assert analysis.plots.pcac_limits(np.full(8, np.nan), 8) is None
    assert analysis.plots.contact_times(8) == [0, 1, 7]


# ----------------------------------------------------------------------------------------------------------------
# metrics.peak = false, output.fields = false, double precision
# ----------------------------------------------------------------------------------------------------------------

def test_bare_file_reports(bare_case):
    proc = bare_case["proc"]
    assert proc.returncode == 0, f"report.py exited {proc.returncode}\nstderr:\n{proc.stderr}"
    with h5py.File(bare_case["h5"], "r") as f:
        assert not bool(f["metrics/peak"].attrs["measured"])
        assert attr_text(f.attrs["precision"]) == "double"
        for g in f["solves"].values():
            assert not any(k in g for k in ("solution", "source", "propagator"))
    out = proc.stdout
    assert "empirical peak: not measured (metrics.peak = false)" in out
    rows = [r for rows in kernel_tables(out).values() for r in rows]
    assert rows and all(r[KERNEL_HEADER.index("%peak")] == "-" for r in rows)
    rows = check_solve_rows(out, bare_case["h5"])
    assert all(r[8] == "no" for r in rows)
    if bare_case["kind"] == "propagator":
        assert any(x.startswith("Propagator prop:") for x in out.splitlines())
        assert_image(bare_case["out_dir"] / "correlators_prop.png")
    assert_image(bare_case["out_dir"] / "bandwidth.png")
    assert_image(bare_case["out_dir"] / "residual_history.png")


# ----------------------------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------------------------

def make_bad_input(kind, tmp_path):
    """(argument list, the file named in the ERROR line) for one kind of bad invocation."""
    if kind == "missing":
        return [tmp_path / "missing.h5"], str(tmp_path / "missing.h5")
    if kind == "not_hdf5":
        p = tmp_path / "text.h5"
        p.write_text("this is not an HDF5 file\n")
        return [p], str(p)
    if kind == "other_hdf5":
        p = tmp_path / "other.h5"
        with h5py.File(p, "w") as f:
            f["x"] = np.arange(3)
        return [p], str(p)
    if kind == "directory":
        return [tmp_path], str(tmp_path)
    if kind == "no_arguments":
        return [], "(command line)"
    if kind == "unknown_option":
        p = tmp_path / "missing.h5"
        return [p, "--colour"], str(p)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["missing", "not_hdf5", "other_hdf5", "directory", "no_arguments",
                                  "unknown_option"])
def test_bad_input_gives_one_error_line(kind, tmp_path, run_report):
    args, where = make_bad_input(kind, tmp_path)
    proc = run_report(*args)
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"report.py: ERROR: {where}: "), lines[0]
    assert proc.stdout == ""
    assert not (tmp_path / "missing_report").exists() and not (tmp_path / "text_report").exists()


def test_help_exits_zero(run_report):
    proc = run_report("--help")
    assert proc.returncode == 0 and "--no-plots" in proc.stdout


def test_interpreter_has_the_analysis_packages():
    """The analysis needs h5py, numpy, matplotlib and scipy from one interpreter (Debian python3-* packages)."""
    proc = subprocess.run([sys.executable, "-c", "import h5py, numpy, matplotlib, scipy"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
