"""The program as a physicist uses it (issue 18): --set, --help, --dry-run, live progress and the timing summary, and
the output file's metadata (axis names, units, /gauge's origin, strings that h5py returns as str).

Each test runs emprism-mpi on a tiny lattice in its tmp_path and checks one property; the files are read with h5py
(the interpreter of analysis/python3). Inputs use [metrics] peak = false, as the other end-to-end tests.
"""
import datetime
import re
import subprocess

import h5py
import numpy as np
import pytest

from conftest import ok, program_env, run_args, toml_value

TIMEOUT_S = 300

BASE = """
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "random"
seed = 5
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-9
[log]
progress_every = 2
[metrics]
peak = false
"""

POINT = """
[[solve]]
name = "pt"
type = "point"
"""

PROPAGATOR = """
[[solve]]
name = "prop"
type = "propagator"
smearing = "wuppertal"
smearing_steps = 2
smearing_weight = 0.25
"""


def write(tmp_path, body, name="run"):
    out = tmp_path / f"{name}.h5"
    toml = tmp_path / f"{name}.toml"
    toml.write_text(body.rstrip() + f"\n\n[output]\nfile = {toml_value(str(out))}\noverwrite = true\n")
    return toml, out


def run(binary, tmp_path, args):
    return run_args(binary, tmp_path, args, timeout=TIMEOUT_S)


def error_lines(proc):
    return [line for line in proc.stderr.splitlines() if line.strip()]


# ---- --set


def test_set_changes_the_key_and_is_recorded_in_the_file(emprism_binary, tmp_path):
    toml, out = write(tmp_path, BASE + POINT)
    ok(run(emprism_binary, tmp_path, [toml, "--set", "dirac.kappa=0.115", "--set", "solve[0].tol=1e-7"]))
    with h5py.File(out) as f:
        assert f["/solves/pt"].attrs["kappa"] == 0.115
        assert f["/solves/pt"].attrs["tol"] == 1e-7
        physics = f.attrs["physics_inputs"]
        assert "dirac.kappa = 0.115" in physics and "solve[0].tol = 1e-07" in physics, physics
        text = f["input"].asstr()[()]
    assert "--set dirac.kappa=0.115" in text.splitlines()[0], text
    assert "kappa = 0.115" in text, text


def test_set_takes_a_bare_word_for_a_string_key(emprism_binary, tmp_path):
    toml, out = write(tmp_path, BASE + POINT)
    ok(run(emprism_binary, tmp_path, [toml, "--set", "gauge.source=unit"]))
    with h5py.File(out) as f:
        assert f["/gauge"].attrs["source"] == "unit"
        assert f["/gauge"].attrs["plaquette"] == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("setting, key", [("dirac.kapa=0.1", "dirac.kapa"), ("dirac.kappa=abc", "dirac.kappa"),
                                          ("dirac.kappa=-1", "dirac.kappa"), ("solve[3].tol=1e-8", "solve[3]"),
                                          ("solver.max_iter=1.5", "solver.max_iter")])
def test_set_with_a_bad_key_or_value_exits_two_naming_the_key_and_the_option(emprism_binary, tmp_path, setting, key):
    toml, out = write(tmp_path, BASE + POINT)
    proc = run(emprism_binary, tmp_path, [toml, "--set", setting])
    assert proc.returncode == 2, proc.stderr
    lines = error_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert "--set" in lines[0] and key in lines[0], lines[0]
    assert not out.exists()


def test_resume_sees_the_effective_input_of_set(emprism_binary, tmp_path):
    """A partial file written with --set dirac.kappa=X does not resume without it (the physics inputs differ)."""
    toml, out = write(tmp_path, BASE + POINT + POINT.replace('"pt"', '"pt2"'))
    env = program_env()
    env["EMPRISM_TEST_CRASH_AFTER_SOLVES"] = "1"
    subprocess.run([str(emprism_binary), str(toml), "--set", "dirac.kappa=0.115"], cwd=str(tmp_path), env=env,
                   capture_output=True, text=True, timeout=TIMEOUT_S)
    assert (tmp_path / "run.h5.partial").exists()
    proc = run(emprism_binary, tmp_path, [toml, "--resume"])
    assert proc.returncode == 2 and "dirac.kappa" in proc.stderr, proc.stderr
    ok(run(emprism_binary, tmp_path, [toml, "--resume", "--set", "dirac.kappa=0.115"]))
    with h5py.File(out) as f:
        assert f["/solves/pt2"].attrs["kappa"] == 0.115


# ---- --help and --log-level


def test_help_lists_the_subcommands_one_line_each(emprism_binary, tmp_path):
    proc = ok(run(emprism_binary, tmp_path, ["--help"]))
    lines = [line for line in proc.stdout.splitlines() if line.strip().startswith("gauge-info")]
    assert len(lines) == 1, proc.stdout
    assert "--set" in proc.stdout and "--dry-run" in proc.stdout


def test_a_bad_log_level_is_blamed_on_the_option_not_the_input(emprism_binary, tmp_path):
    toml, out = write(tmp_path, BASE + POINT)
    proc = run(emprism_binary, tmp_path, [toml, "--log-level", "loud"])
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1 and "--log-level" in lines[0] and "run.toml" not in lines[0], proc.stderr
    assert not out.exists()


# ---- --dry-run


def test_dry_run_lists_the_solves_in_order_even_under_log_level_warn(emprism_binary, tmp_path):
    toml, out = write(tmp_path, BASE + POINT + PROPAGATOR)
    proc = ok(run(emprism_binary, tmp_path, [toml, "--dry-run", "--log-level", "warn", "--set", "solve[1].tol=1e-8"]))
    lines = proc.stdout.splitlines()
    listed = [line.strip() for line in lines if re.match(r"\s+\d+\. '", line)]
    assert len(listed) == 2, proc.stdout
    assert listed[0].startswith("1. 'pt': point, precision double, tol 1.0e-09"), listed[0]
    assert listed[1].startswith("2. 'prop': propagator, precision double, tol 1.0e-08"), listed[1]
    assert "12 columns" in listed[1] and "1 source" in listed[0]
    assert all("per 1000 iterations" in line and "at most" in line for line in listed)
    assert any("assumed 20 GB/s" in line and "bytes per even site" in line for line in lines), proc.stdout
    assert not out.exists()


def test_dry_run_estimate_scales_with_the_volume(emprism_binary, tmp_path):
    """The stated time per iteration is bytes x sites / bandwidth: 16x the volume gives 16x the time."""
    def per_iteration(extents):
        toml, _ = write(tmp_path, BASE.replace("[4, 4, 4, 8]", extents) + POINT)
        proc = ok(run(emprism_binary, tmp_path, [toml, "--dry-run"]))
        return float(re.search(r"([0-9.e+-]+) ms per iteration", proc.stdout).group(1))
    assert per_iteration("[8, 8, 8, 16]") == pytest.approx(16 * per_iteration("[4, 4, 4, 8]"), rel=1e-2)


# ---- live progress and the timing summary

STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\] \[info\] (.*)$")


def log_lines(stdout):
    out = []
    for line in stdout.splitlines():
        m = STAMP.match(line)
        if m:
            out.append((datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f"), m.group(2)))
    return out


def test_heatbath_sweeps_are_logged_as_they_happen(emprism_binary, tmp_path):
    body = BASE.replace('source = "random"', 'source = "heatbath"\nsweeps = 4').replace("[4, 4, 4, 8]", "[8, 8, 8, 8]")
    toml, _ = write(tmp_path, body + POINT)
    proc = ok(run(emprism_binary, tmp_path, [toml, "--set", "solver.tol=1e-4"]))
    sweeps = [(t, text) for t, text in log_lines(proc.stdout) if text.startswith("heatbath sweep")]
    assert [text.split(":")[0] for _, text in sweeps] == [f"heatbath sweep {k} of 4" for k in range(1, 5)], proc.stdout
    assert all("plaquette" in text and "s/sweep" in text and "ETA" in text for _, text in sweeps)
    per_sweep = float(re.search(r"([0-9.]+) s/sweep", sweeps[-1][1]).group(1))
    # Printed at the end of each sweep, not all at once: the stamps span the sweeps' time.
    span = (sweeps[-1][0] - sweeps[0][0]).total_seconds()
    assert span >= 0.5 * 3 * per_sweep, (span, per_sweep)


def test_propagator_columns_and_cg_progress_have_rates_and_etas(emprism_binary, tmp_path):
    toml, _ = write(tmp_path, BASE + PROPAGATOR)
    proc = ok(run(emprism_binary, tmp_path, [toml]))
    texts = [text for _, text in log_lines(proc.stdout)]
    done = [text for text in texts if re.match(r"solve 'prop': column \d+ of 12 done", text)]
    assert [int(re.search(r"column (\d+)", t).group(1)) for t in done] == list(range(1, 13)), proc.stdout
    assert all("ETA" in t for t in done)
    cg = [text for text in texts if re.search(r"iteration +\d+  residual", text)]
    assert cg and all(re.search(r"column \d+ of 12 .*\(\d+\.\d it/s, ETA", t) for t in cg), cg[:3]


def test_timing_summary_accounts_for_the_whole_run(emprism_binary, tmp_path):
    toml, _ = write(tmp_path, BASE + POINT + PROPAGATOR)
    proc = ok(run(emprism_binary, tmp_path, [toml]))
    line = next(text for _, text in log_lines(proc.stdout) if "s in total =" in text)
    total = float(re.search(r"([0-9.]+) s in total", line).group(1))
    parts = {name: float(v) for name, v in re.findall(r"(set-up|gauge field|sources|solves|contractions|I/O|other) "
                                                         r"([0-9.-]+)", line)}
    assert set(parts) == {"set-up", "gauge field", "sources", "solves", "contractions", "I/O", "other"}, line
    assert sum(parts.values()) == pytest.approx(total, abs=0.01), line
    assert parts["solves"] > 0 and parts["contractions"] > 0 and parts["I/O"] > 0, line
    assert abs(parts["other"]) <= 0.1 * total + 0.05, line


# ---- metadata of the output file


@pytest.fixture(scope="module")
def propagator_file(emprism_binary, tmp_path_factory):
    d = tmp_path_factory.mktemp("meta")
    toml, out = write(d, BASE + POINT + PROPAGATOR)
    ok(run(emprism_binary, d, [toml, "--set", "output.write_gauge=true"]))
    return out


def test_field_and_correlator_datasets_name_their_axes(propagator_file):
    with h5py.File(propagator_file) as f:
        assert f["/solves/pt/solution"].attrs["dims"] == "t,z,y,x,spin,colour"
        assert f["/solves/pt/source"].attrs["dims"] == "t,z,y,x,spin,colour"
        assert f["/solves/prop/propagator"].attrs["dims"] == "source_spin,source_colour,t,z,y,x,spin,colour"
        assert f["/gauge/links"].attrs["dims"] == "t,z,y,x,mu,row,col"
        for name, d in [(n, f["/solves/pt/solution"]) for n in ["solution"]] + \
                [(n, f["/solves/prop/propagator"]) for n in ["propagator"]] + [("links", f["/gauge/links"])]:
            assert len(d.attrs["dims"].split(",")) == d.ndim, name
        corr = f["/correlators/prop"]
        for channel in corr.attrs["channels"]:
            assert corr[channel].attrs["dims"] == "t"
            assert corr["effective_mass"][channel].attrs["dims"] == "t"


def test_masses_carry_lattice_units(propagator_file):
    with h5py.File(propagator_file) as f:
        corr = f["/correlators/prop"]
        assert corr["pcac_mass"].attrs["units"] == "lattice units"
        for channel in corr.attrs["channels"]:
            assert corr["effective_mass"][channel].attrs["units"] == "lattice units"


def test_strings_come_back_as_str(propagator_file):
    """Every string attribute is str (arrays of them hold str); every string dataset is UTF-8 (h5py reads datasets
    as bytes unless asked: .asstr() gives str). /metrics/comm's fixed-length columns are the documented exception."""
    bad = []

    def visit(name, obj):
        for key, value in obj.attrs.items():
            if isinstance(value, bytes) or (isinstance(value, np.ndarray) and value.dtype.kind in "SO" and
                                            not all(isinstance(v, str) for v in value.ravel())):
                bad.append(f"{name}@{key}")
        if isinstance(obj, h5py.Dataset) and h5py.check_string_dtype(obj.dtype) is not None:
            if h5py.check_string_dtype(obj.dtype).encoding != "utf-8" or not isinstance(obj.asstr()[()], str):
                bad.append(name)

    with h5py.File(propagator_file) as f:
        for key, value in f.attrs.items():
            assert not isinstance(value, bytes), key
        f.visititems(visit)
    assert not bad, bad


def test_gauge_records_the_file_it_came_from(emprism_binary, tmp_path, source_dir):
    data = source_dir / "tests" / "data" / "pyquda_weak_field.lime"
    body = BASE.replace('source = "random"\nseed = 5', f'source = "file"\nfile = {toml_value(str(data))}')
    toml, out = write(tmp_path, body + POINT)
    ok(run(emprism_binary, tmp_path, [toml]))
    info = ok(run(emprism_binary, tmp_path, ["gauge-info", data]))
    with h5py.File(out) as f:
        g = f["/gauge"].attrs
        assert (g["file"], g["format"], g["checksum"]) == (str(data), "ildg", "ok")
        assert g["plaquette"] == pytest.approx(float(re.search(r'"plaquette": ([0-9.e+-]+)', info.stdout).group(1)),
                                               rel=1e-12)


def test_gauge_plaquette_with_generate_is_that_of_the_field_solved_on(emprism_binary, tmp_path):
    body = BASE.replace('source = "random"', 'source = "heatbath"\nsweeps = 2').replace("[4, 4, 4, 8]", "[4, 4, 4, 4]")
    body += '[generate]\ncount = 2\nevery = 1\nformat = "nersc"\nprefix = "ens"\n'
    toml, out = write(tmp_path, body + POINT)
    ok(run(emprism_binary, tmp_path, [toml]))
    last = tmp_path / "ens_000004.nersc"
    info = ok(run(emprism_binary, tmp_path, ["gauge-info", last]))
    generated = float(re.search(r'"plaquette": ([0-9.e+-]+)', info.stdout).group(1))
    with h5py.File(out) as f:
        g = f["/gauge"].attrs
        assert (g["file"], g["format"], g["checksum"]) == ("ens_000004.nersc", "nersc", "written")
        assert g["plaquette"] == pytest.approx(generated, rel=1e-12)
