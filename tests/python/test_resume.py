"""Checkpoints and resume (README: Interrupted runs and resume), end to end with the real program.

A run is killed right after its k-th complete solve by the test hook EMPRISM_TEST_CRASH_AFTER_SOLVES=k (SIGKILL on
every rank, no clean-up: what a node failure or a Slurm time limit does), then the same input runs again with
output.resume = true. The final file must equal the file of an uninterrupted run (h5_compare: every dataset and
attribute but timings, date and process grid), the complete solves must not be solved again, and an input with
other physics must be refused without touching the partial file. Runs on 1 and 2 ranks, resumed on another count.

Each run's input lives in its own directory and names its output "out.h5" relatively, so the inputs are the same
text and /input compares equal too.
"""
import subprocess

import h5py
import pytest

from conftest import RUN_TIMEOUT_S, mpi_command, program_env

BODY = """\
[lattice]
extents = [4, 4, 4, 8]
[gauge]
source = "random"
width = 0.4
seed = 5
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-10
[metrics]
peak = false
[output]
file = "out.h5"
resume = true
[[solve]]
name = "point"
type = "point"
site = [1, 2, 3, 4]
[[solve]]
name = "prop"
type = "propagator"
site = [0, 1, 2, 3]
momenta = [[1, 0, 0]]
smearing = "jacobi"
smearing_steps = 4
smearing_weight = 0.15
link_smearing = "stout"
link_smearing_steps = 2
link_smearing_weight = 0.1
[[solve]]
name = "noise"
type = "random"
distribution = "z2"
seed = 3
"""
SOLVES = ["point", "prop", "noise"]


def run(binary, directory, ranks=1, crash_after=None, body=BODY, extra_args=()):
    """Runs the program on `body` (written to directory/run.toml) on `ranks` ranks; returns the CompletedProcess."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "run.toml").write_text(body)
    env = program_env()
    env["OMP_NUM_THREADS"] = "1"
    if crash_after is not None:
        env["EMPRISM_TEST_CRASH_AFTER_SOLVES"] = str(crash_after)
    cmd = [str(binary), *extra_args, "run.toml"]
    cmd = mpi_command(ranks, cmd)
    return subprocess.run(cmd, cwd=str(directory), env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


def describe(proc):
    return f"exit {proc.returncode}\n--- stderr ---\n{proc.stderr}\n--- stdout (tail) ---\n{proc.stdout[-4000:]}"


def complete_solves(path):
    """Names of the solves flagged complete in an output or partial file."""
    with h5py.File(path, "r") as f:
        return sorted(n for n, g in f["solves"].items() if bool(g.attrs.get("complete", False)))


@pytest.fixture(scope="module")
def reference(emprism_binary, tmp_path_factory):
    """The uninterrupted run on one rank."""
    directory = tmp_path_factory.mktemp("reference")
    proc = run(emprism_binary, directory)
    assert proc.returncode == 0, describe(proc)
    return directory / "out.h5"


def compare(h5_compare, a, b, *flags):
    assert h5_compare is not None, "EMPRISM_H5_COMPARE is not set (ctest sets it)"
    proc = subprocess.run([str(h5_compare), str(a), str(b), *flags], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{a} and {b} differ:\n{proc.stdout}{proc.stderr}"


def interrupt(binary, directory, ranks, k):
    """Runs until the k-th solve is complete and is killed there; checks what it leaves behind."""
    proc = run(binary, directory, ranks=ranks, crash_after=k)
    assert proc.returncode != 0, "the test hook did not kill the run\n" + describe(proc)
    if ranks == 1:
        assert proc.returncode == -9, describe(proc)  # SIGKILL
    assert not (directory / "out.h5").exists(), "a killed run must not leave the final file"
    partial = directory / "out.h5.partial"
    assert partial.is_file(), "a killed run must leave its partial file"
    assert complete_solves(partial) == sorted(SOLVES[:k])
    return partial


@pytest.mark.parametrize("k", [1, 2])
def test_resume_gives_the_file_of_an_uninterrupted_run(emprism_binary, h5_compare, reference, tmp_path, k):
    interrupt(emprism_binary, tmp_path, 1, k)
    proc = run(emprism_binary, tmp_path)
    assert proc.returncode == 0, describe(proc)
    for name in SOLVES[:k]:
        assert f"solve '{name}': complete in the partial file of the interrupted run" in proc.stdout, proc.stdout
    for name in SOLVES[k:]:
        assert f"solve '{name}': complete in the partial file" not in proc.stdout
    assert "solve 'point': point source" not in proc.stdout, "a complete solve was solved again"
    assert not (tmp_path / "out.h5.partial").exists()
    assert complete_solves(tmp_path / "out.h5") == sorted(SOLVES)
    compare(h5_compare, tmp_path / "out.h5", reference, "--rtol", "0")


@pytest.mark.parametrize("crash_ranks,resume_ranks,k", [(2, 1, 1), (1, 2, 2)])
def test_resume_on_another_number_of_ranks(emprism_binary, h5_compare, reference, tmp_path, crash_ranks,
                                           resume_ranks, k):
    interrupt(emprism_binary, tmp_path, crash_ranks, k)
    proc = run(emprism_binary, tmp_path, ranks=resume_ranks)
    assert proc.returncode == 0, describe(proc)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert int(f.attrs["ranks"]) == resume_ranks
    # Solves of another rank count agree to rounding (double precision); their iteration counts may differ by one.
    compare(h5_compare, tmp_path / "out.h5", reference, "--rtol", "1e-11", "--iter-slack", "2")


def test_resume_with_other_physics_is_refused_and_keeps_the_partial_file(emprism_binary, tmp_path):
    partial = interrupt(emprism_binary, tmp_path, 1, 1)
    before = partial.read_bytes()
    proc = run(emprism_binary, tmp_path, body=BODY.replace("seed = 5", "seed = 6"))
    assert proc.returncode == 2, describe(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "output.resume: the partial file" in lines[0]
    assert "gauge.seed is 6 here but 5 in the file" in lines[0]
    assert partial.read_bytes() == before
    assert not (tmp_path / "out.h5").exists()


def test_resume_flag_on_the_command_line(emprism_binary, h5_compare, reference, tmp_path):
    body = BODY.replace("resume = true\n", "")
    interrupt_proc = run(emprism_binary, tmp_path, crash_after=1, body=body)
    assert interrupt_proc.returncode == -9, describe(interrupt_proc)
    refused = run(emprism_binary, tmp_path, body=body)
    assert refused.returncode == 2, describe(refused)
    assert "set output.resume = true (or --resume)" in refused.stderr
    proc = run(emprism_binary, tmp_path, body=body, extra_args=["--resume"])
    assert proc.returncode == 0, describe(proc)
    compare(h5_compare, tmp_path / "out.h5", reference, "--rtol", "0", "--ignore-data", "/input")
