"""Shared fixtures of the Python tests (run by ctest as Python.Analysis, or by hand with pytest).

Environment:
  EMPRISM_BINARY       the emprism-mpi program (required; ctest sets it)
  EMPRISM_H5_COMPARE   the h5_compare tool (optional; None when unset)
  EMPRISM_SOURCE_DIR   the repository root (default: two levels above this file)
By hand: EMPRISM_BINARY=build/emprism-mpi python3 -m pytest -q tests/python

Fixtures:
  emprism_binary, h5_compare, source_dir, report_script   paths (pathlib.Path; h5_compare may be None)
  run_emprism        run_emprism(body, name="run", output=None, timeout=RUN_TIMEOUT_S) writes <dir>/<name>.toml
                     (body plus an [output] table with file = <dir>/<name>.h5, overwrite = true and the keys of
                     `output`), runs the program on it and returns the output path; fails the test, with the
                     program's stderr, unless it exits 0 and the file exists. The directory is the test's tmp_path.
  run_emprism_in     the same with the directory as first argument, for module-scoped fixtures
  run_report         run_report(*args) runs analysis/report.py with this interpreter; returns the CompletedProcess
Helpers: mpi_command(ranks, cmd) starts cmd on several ranks through tests/support/mpirun.sh; run_args(binary,
directory, args, env=None) runs the program with arguments and returns the CompletedProcess; ok(proc) asserts exit 0;
fails_with_one_line(script, paths) asserts that a reader of analysis/ refuses each path with one line and exit 2.
"""
import os
import pathlib
import subprocess
import sys

import pytest

RUN_TIMEOUT_S = 300
REPORT_TIMEOUT_S = 120


def program_env():
    """The environment of a program run: two OpenMP threads, Open MPI allowed to run as root."""
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "2", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    return env


MPIRUN = pathlib.Path(__file__).resolve().parents[1] / "support" / "mpirun.sh"


def mpi_command(ranks, cmd):
    """`cmd` on `ranks` ranks through tests/support/mpirun.sh (the tests' one way to start ranks), or as it is on one."""
    return ["bash", str(MPIRUN), str(ranks)] + list(cmd) if ranks > 1 else list(cmd)


def toml_value(v):
    """A Python value as a TOML value (bool, int, float, str, or lists of these)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {v!r}")


def write_input(directory, name, body, output=None):
    """Writes <directory>/<name>.toml: `body` plus the [output] table; returns (input path, output path)."""
    directory = pathlib.Path(directory)
    out = directory / f"{name}.h5"
    keys = {"file": str(out), "overwrite": True}
    keys.update(output or {})
    table = "\n".join(f"{k} = {toml_value(v)}" for k, v in keys.items())
    path = directory / f"{name}.toml"
    path.write_text(body.rstrip() + "\n\n[output]\n" + table + "\n")
    return path, out


def run_program(binary, directory, body, name="run", output=None, timeout=RUN_TIMEOUT_S):
    """Runs the program on a generated input in `directory`; returns the output path (asserts success)."""
    toml, out = write_input(directory, name, body, output)
    try:
        proc = subprocess.run([str(binary), str(toml)], cwd=str(directory), env=program_env(), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{binary} {toml} ran past {timeout} s; stderr:\n{e.stderr}")
    assert proc.returncode == 0, (f"{binary} {toml} exited {proc.returncode}\n--- input ---\n{toml.read_text()}"
                                  f"--- stderr ---\n{proc.stderr}\n--- stdout (tail) ---\n{proc.stdout[-3000:]}")
    assert out.is_file(), f"{binary} {toml} exited 0 but wrote no {out}"
    return out


def run_args(binary, directory, args, env=None, timeout=RUN_TIMEOUT_S):
    """Runs the program with `args` in `directory` (environment program_env() unless `env`); returns the
    CompletedProcess (text mode) whatever the exit status."""
    return subprocess.run([str(binary)] + [str(a) for a in args], cwd=str(directory),
                          env=program_env() if env is None else env, capture_output=True, text=True, timeout=timeout)


def ok(proc):
    """Asserts that the CompletedProcess exited 0 (the message shows stderr and the tail of stdout); returns it."""
    assert proc.returncode == 0, f"exit {proc.returncode}\n--- stderr ---\n{proc.stderr}\n--- stdout ---\n{proc.stdout[-3000:]}"
    return proc


def fails_with_one_line(script, paths):
    """Asserts that the Python script, run with this interpreter on each path alone, exits 2 with nothing on stdout
    and one line on stderr that names the path (an analysis/ reader given a file it cannot read)."""
    for path in paths:
        r = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == "", f"exit {r.returncode}, stdout {r.stdout!r}"
        assert len(r.stderr.splitlines()) == 1 and str(path) in r.stderr, r.stderr


@pytest.fixture(scope="session")
def source_dir():
    """The repository root."""
    env = os.environ.get("EMPRISM_SOURCE_DIR")
    return pathlib.Path(env) if env else pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def emprism_binary(source_dir):
    """The emprism-mpi program (EMPRISM_BINARY)."""
    env = os.environ.get("EMPRISM_BINARY")
    if not env:
        pytest.fail("EMPRISM_BINARY is not set: point it at the emprism-mpi program "
                    "(ctest sets it; by hand: EMPRISM_BINARY=build/emprism-mpi python3 -m pytest tests/python)")
    path = pathlib.Path(env).resolve()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"EMPRISM_BINARY={env} is not an executable file")
    return path


@pytest.fixture(scope="session")
def h5_compare():
    """The h5_compare tool (EMPRISM_H5_COMPARE), or None when not given."""
    env = os.environ.get("EMPRISM_H5_COMPARE")
    return pathlib.Path(env).resolve() if env else None


@pytest.fixture(scope="session")
def report_script(source_dir):
    """analysis/report.py of the source tree."""
    path = source_dir / "analysis" / "report.py"
    assert path.is_file(), f"no {path}"
    return path


@pytest.fixture(scope="session")
def run_emprism_in(emprism_binary):
    """run_emprism_in(directory, body, name="run", output=None, timeout=...) -> output path."""
    def run(directory, body, name="run", output=None, timeout=RUN_TIMEOUT_S):
        return run_program(emprism_binary, directory, body, name, output, timeout)
    return run


@pytest.fixture
def run_emprism(run_emprism_in, tmp_path):
    """run_emprism(body, name="run", output=None, timeout=...) -> output path, in the test's tmp_path."""
    def run(body, name="run", output=None, timeout=RUN_TIMEOUT_S):
        return run_emprism_in(tmp_path, body, name, output, timeout)
    return run


@pytest.fixture(scope="session")
def run_report(report_script):
    """run_report(*args) -> subprocess.CompletedProcess of `python3 analysis/report.py args...` (text mode)."""
    def run(*args, cwd=None):
        return subprocess.run([sys.executable, str(report_script)] + [str(a) for a in args], capture_output=True,
                              text=True, timeout=REPORT_TIMEOUT_S, cwd=cwd)
    return run
