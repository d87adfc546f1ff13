"""analysis/export_propagator and the ensemble report on files the program writes (4^3 x 8, random gauge fields,
Wilson-clover propagators in double precision).

The exported propagator (DeGrand-Rossi basis, PyQUDA's (Lt, Lz, Ly, Lx, Ns, Ns, Nc, Nc) layout) must give, with the
DeGrand-Rossi gammas of PyQUDA, the same meson correlators as the program's /correlators hold and as our
propagator gives with our gammas, computed here by an independent numpy contraction (docs/conventions.md
section 9): the pion, the axial (g4g5, g5) and the vector (gi, gi) and scalar channels. An ensemble file assembled
from the single-configuration files (/configs/<id>/...) must give the same analysis as the single files, and the
effective masses of analysis/resampling.py the program's, configuration by configuration.
"""
import math
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "analysis"))

import gamma_basis  # noqa: E402
import resampling  # noqa: E402
from ensemble import load_ensemble  # noqa: E402
from ensemble_analysis import analyse  # noqa: E402

BODY = """\
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "random"
width = 0.4
seed = {seed}
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-12
[metrics]
peak = false
[[solve]]
name = "prop"
type = "propagator"
site = [1, 2, 3, 5]
channels = ["pion", "axial", "rho", "a0"]
momenta = [[1, 0, 0]]
"""
SEEDS = (11, 12, 13)
EXPORT = pathlib.Path(__file__).resolve().parents[2] / "analysis" / "export_propagator.py"
# Double precision with a solver tolerance of 1e-12: the correlators agree to rounding, relative to C(0).
RTOL = 1e-11


@pytest.fixture(scope="module")
def outputs(run_emprism_in, tmp_path_factory):
    """Three single-configuration files (gauge seeds 11, 12, 13), the first with the propagator field."""
    d = tmp_path_factory.mktemp("export")
    return [run_emprism_in(d, BODY.format(seed=s), name=f"cfg{s}", output={"fields": s == SEEDS[0]}) for s in SEEDS]


def export(*args):
    return subprocess.run([sys.executable, str(EXPORT)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120)


def meson(prop, g_snk, g_src, g5, t0):
    """C(t) = sum_x tr[G_snk S(x) G_src g5 S(x)^dag g5] at p = 0, t from the source timeslice t0, for a propagator
    P[t][z][y][x][sink spin][source spin][sink colour][source colour]."""
    s = prop.reshape(prop.shape[0], -1, 4, 4, 3, 3)
    left = np.einsum("ai,tnibcd->tnabcd", g_snk, s)
    # g5 S^dag g5: [a][b][c][d] = sum g5[a][i] conj(S[j][i][d][c]) g5[j][b]
    bar = np.einsum("ai,tnjidc,jb->tnabcd", g5, s.conj(), g5)
    right = np.einsum("ai,tnibcd->tnabcd", g_src, bar)
    c = np.einsum("tnabcd,tnbadc->t", left, right)
    return np.roll(c, -t0)


def channel(name, g, s):
    """The channel's correlator of propagator s with gamma set g (averaged over i for rho)."""
    snk_src = {"pion": ("g5", "g5"), "axial": ("g4g5", "g5"), "rho": ("gi", "gi"), "a0": ("1", "1")}[name]
    snk, src = (gamma_basis.product(n, g) for n in snk_src)
    g5 = gamma_basis.gamma5(g)
    return sum(meson(s, a, b, g5, 5) for a, b in zip(snk, src)) / len(snk)


def ours_site_major(path):
    """Our propagator of the file as [t][z][y][x][sink spin][source spin][sink colour][source colour], our basis."""
    with h5py.File(path, "r") as f:
        p = f["solves/prop/propagator"][...]
    return np.einsum("jbtzyxia->tzyxijab", p)


def test_basis_change_maps_the_gammas_and_keeps_gamma5():
    u = gamma_basis.basis_change(gamma_basis.OURS, gamma_basis.DEGRAND_ROSSI)
    for g in (gamma_basis.OURS, gamma_basis.DEGRAND_ROSSI):
        for mu in range(4):
            for nu in range(4):
                np.testing.assert_allclose(g[mu] @ g[nu] + g[nu] @ g[mu], 2 * (mu == nu) * np.eye(4), atol=1e-15)
    np.testing.assert_allclose(u @ u.conj().T, np.eye(4), atol=1e-14)
    g5_ours, g5_dr = gamma_basis.gamma5(gamma_basis.OURS), gamma_basis.gamma5(gamma_basis.DEGRAND_ROSSI)
    np.testing.assert_allclose(u @ g5_ours @ u.conj().T, g5_dr, atol=1e-14)
    np.testing.assert_allclose(g5_dr, np.diag([1, 1, -1, -1]), atol=1e-15)


@pytest.mark.parametrize("name", ["pion", "axial", "rho", "a0"])
def test_exported_propagator_gives_the_programs_correlators(outputs, tmp_path, name):
    out = tmp_path / "prop.npy"
    proc = export(outputs[0], "--output", out)
    assert proc.returncode == 0, proc.stderr
    dr = np.load(out)
    assert dr.shape == (8, 4, 4, 4, 4, 4, 3, 3) and dr.dtype == np.dtype("<c16")
    with h5py.File(outputs[0], "r") as f:
        stored = f[f"correlators/prop/{name}"][...]
    from_dr = channel(name, gamma_basis.DEGRAND_ROSSI, dr)
    from_ours = channel(name, gamma_basis.OURS, ours_site_major(outputs[0]))
    scale = abs(stored[0])
    np.testing.assert_allclose(from_dr, stored, rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(from_ours, stored, rtol=0, atol=RTOL * scale)
    assert not np.allclose(dr, ours_site_major(outputs[0]))  # the basis did change


def test_h5_export_has_the_array_and_its_description(outputs, tmp_path):
    assert export(outputs[0], "--output", tmp_path / "a.npy").returncode == 0
    proc = export(outputs[0], "--output", tmp_path / "m.h5", "--normalisation", "mass")
    assert proc.returncode == 0, proc.stderr
    with h5py.File(tmp_path / "m.h5", "r") as f:
        d = f["propagator"]
        assert d.attrs["basis"] == "DeGrand-Rossi" and d.attrs["normalisation"] == "mass"
        assert list(d.attrs["source_site"]) == [1, 2, 3, 5] and d.attrs["kappa"] == 0.12
        np.testing.assert_allclose(d[...], 2 * 0.12 * np.load(tmp_path / "a.npy"), rtol=1e-15)


def test_export_bad_input_writes_nothing(outputs, tmp_path):
    proc = export(outputs[0], "--output", tmp_path / "x.npy", "--solve", "nope")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no solve 'nope'" in proc.stderr
    proc = export(outputs[1], "--output", tmp_path / "x.npy")  # written without output.fields
    assert proc.returncode == 2 and "propagators written with output.fields" in proc.stderr
    assert not list(tmp_path.iterdir())


def ensemble_from(singles, path):
    """An ensemble file /configs/<id>/... built from single-configuration files (ids cfg11, ...), as the ensemble
    run writes it."""
    with h5py.File(path, "w") as dst:
        with h5py.File(singles[0], "r") as first:
            for k, v in first.attrs.items():
                dst.attrs[k] = v
        for s in singles:
            cid = pathlib.Path(s).stem
            with h5py.File(s, "r") as src:
                for key in ("gauge", "solves", "correlators"):
                    src.copy(src[key], dst, name=f"configs/{cid}/{key}")
    return path


def test_ensemble_file_and_single_files_analyse_alike(outputs, tmp_path):
    options = {"bin": 1, "fit_range": None, "correlated": False, "fit_channels": [], "p_min": 0.05}
    ens = ensemble_from(outputs, tmp_path / "ens.h5")
    a = analyse(load_ensemble([ens]), options)
    b = analyse(load_ensemble(outputs), options)
    assert [r["name"] for r in a] == [r["name"] for r in b] == ["prop", "prop/p1_0_0"]
    for ra, rb in zip(a, b):
        for ch in ("pion", "axial", "rho", "a0"):
            np.testing.assert_array_equal(ra["channels"][ch]["mean"], rb["channels"][ch]["mean"])
            np.testing.assert_array_equal(ra["channels"][ch]["error"], rb["channels"][ch]["error"])
    proc = export(ens, "--config", "cfg11", "--output", tmp_path / "e.npy")
    assert proc.returncode == 0, proc.stderr
    direct = tmp_path / "d.npy"
    assert export(outputs[0], "--output", direct).returncode == 0
    np.testing.assert_array_equal(np.load(tmp_path / "e.npy"), np.load(direct))


def test_effective_and_pcac_masses_match_the_programs(outputs):
    """resampling.effective_mass (the cosh and sinh forms in numpy) and pcac_mass against the program's datasets, at
    p = 0 and p = (1, 0, 0)."""
    for path in outputs:
        with h5py.File(path, "r") as f:
            for ch, group in ((c, g) for c in ("pion", "axial", "rho", "a0") for g in ("", "p1_0_0/")):
                d = f[f"correlators/prop/{group}{ch}"]
                mine = resampling.effective_mass(d[...].real, int(d.attrs["time_parity"]))
                theirs = f[f"correlators/prop/{group}effective_mass/{ch}"][...]
                assert np.array_equal(np.isnan(mine), np.isnan(theirs)), (ch, mine, theirs)
                ok = ~np.isnan(theirs)
                np.testing.assert_allclose(mine[ok], theirs[ok], rtol=1e-12)
                assert math.isnan(mine[-1])
            mine = resampling.pcac_mass(f["correlators/prop/axial"][...].real, f["correlators/prop/pion"][...].real)
            np.testing.assert_allclose(mine, f["correlators/prop/pcac_mass"][...], rtol=1e-12)


def test_wrapper_runs_with_a_python3_without_h5py_first_on_path(tmp_path):
    """analysis/export_propagator finds a python3 with h5py (analysis/python3) when the first on PATH lacks it."""
    stub_dir = tmp_path / "bin"
    stub_dir.mkdir()
    stub = stub_dir / "python3"
    stub.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{stub_dir}:{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}")
    env.pop("EMPRISM_PYTHON", None)
    env.pop("EMPRISM_PYTHON_MODULES", None)
    missing = tmp_path / "missing.h5"
    proc = subprocess.run([str(EXPORT.with_suffix("")), str(missing), "--output", str(tmp_path / "p.npy")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"export_propagator.py: ERROR: {missing}: no such file", proc.stderr
