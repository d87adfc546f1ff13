"""Ensembles end to end (README: Ensembles): [generate] writes a small quenched ensemble, ONE ensemble input measures a
point propagator with its meson correlators on every configuration, the run is killed after the first
configuration's solve (test hook EMPRISM_TEST_CRASH_AFTER_SOLVES=1: SIGKILL, no clean-up), resumed, and checked:

- the final file has every configuration complete, in the order of the input (root attributes config_ids and
  config_files), and the configuration measured before the kill is not read again;
- /configs/<id> holds exactly what a single-configuration run on that file holds at its root (groups, datasets,
  attributes; not /input and /metrics, which stay at the root), with equal values. Tolerance 0: the ensemble runs the
  same code on the same field as the single run, so every value (correlators included) must be bitwise equal; only
  the timings (attribute "seconds") may differ;
- the ensemble on 2 ranks, given by pattern/first/last/step instead of the glob, gives the same correlators to
  rounding (another rank count sums in another order: rtol 1e-11 in double precision, as test_resume.py);
- analysis/merge_ensemble joins the files of a split ensemble (the Slurm array job) into the file of one run.
Every run lives in one directory and names the configurations relatively, so /gauge's "file" attributes compare equal.
"""
import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import RUN_TIMEOUT_S, mpi_command, program_env

LATTICE = """\
[lattice]
extents = [4, 4, 4, 8]
[metrics]
peak = false
"""

GENERATE = LATTICE + """\
[gauge]
source = "heatbath"
beta = 5.8
sweeps = 4
or_per_sweep = 1
seed = 11
[generate]
count = 3
every = 2
prefix = "cfg"
[dirac]
kappa = 0.12
[output]
file = "generate.h5"
"""
IDS = ["6", "8", "10"]  # sweeps 4 + 2, 4 + 4, 4 + 6
FILES = [f"cfg_{int(i):06d}.ildg" for i in IDS]

MEASURE = """\
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-10
[[solve]]
name = "pion"
type = "propagator"
site = [0, 1, 2, 3]
channels = ["pion", "rho"]
"""


def run(binary, directory, name, body, ranks=1, crash_after=None, args=()):
    """Runs the program on `body` written to directory/<name>.toml, in directory; returns the CompletedProcess."""
    (directory / f"{name}.toml").write_text(body)
    env = program_env()
    env["OMP_NUM_THREADS"] = "1"
    if crash_after is not None:
        env["EMPRISM_TEST_CRASH_AFTER_SOLVES"] = str(crash_after)
    cmd = mpi_command(ranks, [str(binary), *args, f"{name}.toml"])
    return subprocess.run(cmd, cwd=str(directory), env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def strings(values):
    return [text(v) for v in values]


def describe(proc):
    return f"exit {proc.returncode}\n--- stderr ---\n{proc.stderr}\n--- stdout (tail) ---\n{proc.stdout[-4000:]}"


def ensemble_input(gauge, output):
    return LATTICE + "[gauge]\nsource = \"ensemble\"\n" + gauge + MEASURE + f"[output]\nfile = \"{output}\"\n"


GLOB = 'files = "cfg_*.ildg"\n'


@pytest.fixture(scope="module")
def ensemble(emprism_binary, tmp_path_factory):
    """The generated configurations, the single-configuration runs, and the killed-then-resumed ensemble run."""
    d = tmp_path_factory.mktemp("ensemble")
    proc = run(emprism_binary, d, "generate", GENERATE)
    assert proc.returncode == 0, describe(proc)
    assert sorted(p.name for p in d.glob("cfg_*.ildg")) == FILES
    for i, f in zip(IDS, FILES):
        body = LATTICE + f'[gauge]\nsource = "file"\nfile = "{f}"\n' + MEASURE + f'[output]\nfile = "single_{i}.h5"\n'
        proc = run(emprism_binary, d, f"single_{i}", body)
        assert proc.returncode == 0, describe(proc)
    body = ensemble_input(GLOB, "ens.h5")
    killed = run(emprism_binary, d, "ens", body, crash_after=1)
    assert killed.returncode == -9, "the test hook did not kill the run\n" + describe(killed)
    assert not (d / "ens.h5").exists() and (d / "ens.h5.partial").is_file()
    plan = run(emprism_binary, d, "ens", body, args=["--resume", "--dry-run"])
    assert plan.returncode == 0, describe(plan)
    assert "each of the 3 configurations (ids 6 .. 10, in this order); 1 of these 3 solves are complete" in plan.stdout
    resumed = run(emprism_binary, d, "ens", body, args=["--resume"])
    assert resumed.returncode == 0, describe(resumed)
    return d, resumed


def same(x, y):
    """Bitwise equal (NaN included) for numbers, equal for strings."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "OSU":
        return np.array_equal(x, y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def compare_trees(a, b, where, rtol=0.0):
    """Same members, attributes (but "seconds") and dataset values below groups a and b."""
    assert sorted(a.keys()) == sorted(b.keys()), f"{where}: members differ"
    assert sorted(k for k in a.attrs if k != "seconds") == sorted(k for k in b.attrs if k != "seconds"), where
    for k in a.attrs:
        if k != "seconds":
            assert same(a.attrs[k], b.attrs[k]), f"{where} attribute {k}"
    for name in a:
        if isinstance(a[name], h5py.Group):
            compare_trees(a[name], b[name], f"{where}/{name}", rtol)
        elif rtol == 0.0:
            assert same(a[name][()], b[name][()]), f"{where}/{name} differs"
        else:
            np.testing.assert_allclose(a[name][()], b[name][()], rtol=rtol, atol=0, err_msg=f"{where}/{name}")


def test_resumed_ensemble_is_complete_in_input_order(ensemble):
    d, resumed = ensemble
    assert not (d / "ens.h5.partial").exists()
    assert f"configuration 1 of 3 (id 6, {FILES[0]}): every solve is complete in the partial file" in resumed.stdout
    for k in (2, 3):
        assert f"configuration {k} of 3 (id {IDS[k - 1]}, {FILES[k - 1]})\n" in resumed.stdout + "\n", resumed.stdout
    with h5py.File(d / "ens.h5", "r") as f:
        assert strings(f.attrs["config_ids"]) == IDS
        assert strings(f.attrs["config_files"]) == FILES
        for i in IDS:
            assert bool(f[f"configs/{i}/solves/pion"].attrs["complete"])
        assert "input" in f and "metrics" in f and "gauge" not in f and "solves" not in f


@pytest.mark.parametrize("index", range(3))
def test_each_configuration_equals_its_single_run_bitwise(ensemble, index):
    d, _ = ensemble
    i = IDS[index]
    with h5py.File(d / "ens.h5", "r") as e, h5py.File(d / f"single_{i}.h5", "r") as s:
        assert sorted(e[f"configs/{i}"].keys()) == sorted(k for k in s.keys() if k not in ("input", "metrics"))
        for group in ("gauge", "solves", "correlators"):
            compare_trees(e[f"configs/{i}/{group}"], s[group], f"/configs/{i}/{group}")


def test_two_ranks_with_a_pattern_give_the_same_correlators(emprism_binary, ensemble):
    d, _ = ensemble
    body = ensemble_input('pattern = "cfg_%06d.ildg"\nfirst = 6\nlast = 10\nstep = 2\n', "ens_mpi.h5")
    proc = run(emprism_binary, d, "ens_mpi", body, ranks=2)
    assert proc.returncode == 0, describe(proc)
    with h5py.File(d / "ens.h5", "r") as a, h5py.File(d / "ens_mpi.h5", "r") as b:
        assert int(b.attrs["ranks"]) == 2
        for i in IDS:
            compare_trees(a[f"configs/{i}/correlators"], b[f"configs/{i}/correlators"], f"/configs/{i}", rtol=1e-11)


def merge(source_dir, *args):
    script = source_dir / "analysis" / "merge_ensemble.py"
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_slices_merge_into_the_file_of_one_run(emprism_binary, source_dir, ensemble):
    """The array job's way: one input, each task a slice by --set gauge.first/last/output.file, then the merge."""
    d, _ = ensemble
    body = ensemble_input('pattern = "cfg_%06d.ildg"\nfirst = 6\nlast = 10\nstep = 2\n', "unused.h5")
    for name, first, last in (("part_a", 6, 6), ("part_b", 8, 10)):
        sets = [f"gauge.first={first}", f"gauge.last={last}", f'output.file="{name}.h5"']
        proc = run(emprism_binary, d, "slice", body, args=[a for s in sets for a in ("--set", s)])
        assert proc.returncode == 0, describe(proc)
    proc = merge(source_dir, d / "merged.h5", d / "part_b.h5", d / "part_a.h5")
    assert proc.returncode == 0, proc.stderr
    with h5py.File(d / "ens.h5", "r") as whole, h5py.File(d / "merged.h5", "r") as merged:
        assert strings(merged.attrs["config_ids"]) == IDS
        assert text(merged.attrs["physics_inputs"]) == text(whole.attrs["physics_inputs"])
        for i in IDS:  # one rank, the same code: bitwise
            compare_trees(whole[f"configs/{i}"], merged[f"configs/{i}"], f"/configs/{i}")


def test_merge_refuses_other_physics_and_incomplete_parts(emprism_binary, source_dir, ensemble):
    d, _ = ensemble
    body = ensemble_input('pattern = "cfg_%06d.ildg"\nfirst = 6\nlast = 6\n', "other.h5").replace("kappa = 0.12",
                                                                                                   "kappa = 0.121")
    proc = run(emprism_binary, d, "other", body)
    assert proc.returncode == 0, describe(proc)
    proc = merge(source_dir, d / "refused.h5", d / "ens.h5", d / "other.h5")
    assert proc.returncode == 2 and "another input" in proc.stderr, proc.stderr
    partial = d / "copy.h5.partial"
    partial.write_bytes((d / "ens.h5").read_bytes())
    proc = merge(source_dir, d / "refused.h5", partial)
    assert proc.returncode == 2 and "partial" in proc.stderr, proc.stderr
    with h5py.File(d / "incomplete.h5", "w") as f, h5py.File(d / "ens.h5", "r") as whole:
        for k, v in whole.attrs.items():
            f.attrs[k] = v
        whole.copy("configs", f)
        f["configs/6/solves/pion"].attrs["complete"] = False
    proc = merge(source_dir, d / "refused.h5", d / "incomplete.h5")
    assert proc.returncode == 2 and "not complete" in proc.stderr, proc.stderr
    assert not (d / "refused.h5").exists()


def test_report_over_the_resumed_ensemble_equals_the_single_runs(ensemble, run_report):
    """The last step of the workflow: analysis/report over the resumed ensemble file gives the pion's mean, effective
    mass and their jackknife errors, the same numbers as over the three single-configuration files (the same
    correlators, bitwise, in the same order), and the error of the mean is the jackknife's formula computed here
    with numpy from the single files: sqrt((N - 1) / N sum_i (C_(i) - C)^2), C_(i) the mean without configuration i."""
    d, _ = ensemble
    singles = [d / f"single_{i}.h5" for i in IDS]
    for name, files in (("from_ensemble", [d / "ens.h5"]), ("from_singles", singles)):
        proc = run_report(*files, "--no-plots", "--fit-range", "1", "3", "--summary", d / f"{name}.h5")
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert "pion" in proc.stdout
    c = np.array([h5py.File(f, "r")["correlators/pion/pion"][()].real for f in singles])
    n = len(c)
    loo = (c.sum(axis=0) - c) / (n - 1)
    jack_error = np.sqrt((n - 1) / n * ((loo - c.mean(axis=0)) ** 2).sum(axis=0))
    with h5py.File(d / "from_ensemble.h5", "r") as e, h5py.File(d / "from_singles.h5", "r") as s:
        assert list(strings(e.attrs["configs"])) == IDS
        pion_e, pion_s = e["pion/pion"], s["pion/pion"]
        for key in ("mean", "error", "effective_mass", "effective_mass_error"):
            assert same(pion_e[key][()], pion_s[key][()]), key
        assert np.allclose(pion_e["mean"][()], c.mean(axis=0), rtol=1e-14, atol=0)
        assert np.allclose(pion_e["error"][()], jack_error, rtol=1e-10, atol=0)
        meff, err = pion_e["effective_mass"][()], pion_e["effective_mass_error"][()]
        assert np.all(np.isfinite(meff[1:4])) and np.all(meff[1:4] > 0) and np.all(err[1:4] > 0)
        assert np.isfinite(pion_e["fit"].attrs["mass"]) and pion_e["fit"].attrs["mass_error"] > 0
