"""A smeared propagator and its correlators do not depend on the number of ranks, the process grid or the output
mode (docs/conventions.md section 10: results do not depend on the decomposition, to rounding).

The same input (random gauge field, csw = 1, double precision, a Wuppertal source on APE links next to rank
boundaries, two non-zero momenta, the propagator dataset written) runs on 1 rank and on 2 and 4 ranks with grids
that split space (the smearing's halo exchange) and time (the source timeslice on one rank only), through
collective parallel HDF5 and through the gather to rank 0. Every file must agree with the 1-rank file under
h5_compare (fp64 rounding, iteration counts within 2; /input differs by the process grid line).
"""
import shutil
import subprocess

import h5py
import pytest

from conftest import RUN_TIMEOUT_S, program_env

BODY = """\
[lattice]
extents = [4, 4, 4, 8]
{procs}
[gauge]
source = "random"
width = 0.5
seed = 77
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-11
[metrics]
peak = false
[output]
file = "out.h5"
io = "{io}"
[[solve]]
name = "prop"
type = "propagator"
site = [3, 0, 1, 4]
momenta = [[1, 0, 0], [0, 1, 1]]
smearing = "wuppertal"
smearing_steps = 6
smearing_weight = 0.3
link_smearing = "ape"
link_smearing_steps = 3
link_smearing_weight = 0.5
"""


def run(binary, directory, ranks, procs, io):
    directory.mkdir(parents=True, exist_ok=True)
    procs_line = f"procs = [{', '.join(str(p) for p in procs)}]" if procs else ""
    (directory / "run.toml").write_text(BODY.format(procs=procs_line, io=io))
    env = program_env()
    env["OMP_NUM_THREADS"] = "1"
    cmd = [str(binary), "run.toml"]
    if ranks > 1:
        mpiexec = shutil.which("mpiexec")
        assert mpiexec, "mpiexec is not on PATH"
        cmd = [mpiexec, "-n", str(ranks), "--oversubscribe"] + cmd
    return subprocess.run(cmd, cwd=str(directory), env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


@pytest.fixture(scope="module")
def reference(emprism_binary, tmp_path_factory):
    directory = tmp_path_factory.mktemp("np1")
    proc = run(emprism_binary, directory, 1, None, "gather")
    assert proc.returncode == 0, proc.stderr + proc.stdout[-3000:]
    return directory / "out.h5"


@pytest.mark.parametrize("procs,io", [((2, 1, 1, 1), "collective"), ((1, 1, 1, 2), "gather"),
                                      ((2, 2, 1, 1), "collective"), ((1, 2, 1, 2), "gather")])
def test_propagator_file_does_not_depend_on_the_process_grid(emprism_binary, h5_compare, reference, tmp_path,
                                                             procs, io):
    assert h5_compare is not None, "EMPRISM_H5_COMPARE is not set (ctest sets it)"
    ranks = procs[0] * procs[1] * procs[2] * procs[3]
    proc = run(emprism_binary, tmp_path, ranks, procs, io)
    if io == "collective" and proc.returncode == 2 and "output.io" in proc.stderr:
        proc = run(emprism_binary, tmp_path, ranks, procs, "gather")  # this HDF5 has no MPI: gather only
    assert proc.returncode == 0, proc.stderr + proc.stdout[-3000:]
    out = tmp_path / "out.h5"
    with h5py.File(out, "r") as f:
        assert [int(p) for p in f.attrs["process_grid"]] == list(procs)
        assert f["solves/prop/propagator"].shape == (4, 3, 8, 4, 4, 4, 4, 3)
    cmp = subprocess.run([str(h5_compare), str(out), str(reference), "--rtol", "1e-10", "--iter-slack", "2",
                          "--ignore-data", "/input"], capture_output=True, text=True, timeout=120)
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
