"""analysis/python3 and analysis/report work whatever python3 comes first on PATH.

A stub python3 without h5py (this interpreter with -S: no site-packages) is put first on PATH, the directory of this
interpreter second, EMPRISM_PYTHON unset: the README's report command must still run report.py (which imports h5py
first thing). A set EMPRISM_PYTHON without the packages, or modules no interpreter has, give one ERROR line and exit 1.
"""
import os
import subprocess
import sys

import pytest

TIMEOUT_S = 60


@pytest.fixture
def stub_bin(tmp_path):
    """A directory whose python3 is this interpreter without site-packages (so without h5py)."""
    d = tmp_path / "bin"
    d.mkdir()
    stub = d / "python3"
    stub.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    stub.chmod(0o755)
    probe = subprocess.run([str(stub), "-c", "import h5py"], capture_output=True, text=True)
    assert probe.returncode != 0, "the stub python3 imports h5py: this test cannot tell anything"
    return d


def run(source_dir, args, env_changes, tmp_path):
    """Runs analysis/<args[0]> with the environment changed (None removes a variable); returns CompletedProcess."""
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([str(source_dir / "analysis" / args[0])] + [str(a) for a in args[1:]], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path)


def test_report_runs_with_a_python3_without_h5py_first_on_path(source_dir, stub_bin, tmp_path):
    path = f"{stub_bin}:{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}"
    missing = tmp_path / "missing.h5"
    proc = run(source_dir, ["report", missing], {"PATH": path, "EMPRISM_PYTHON": None}, tmp_path)
    # report.py ran (its own ERROR line for a missing file, exit 2), not a ModuleNotFoundError.
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"report.py: ERROR: {missing}: no such file", proc.stderr


def test_python3_wrapper_runs_an_interpreter_with_the_packages(source_dir, stub_bin, tmp_path):
    path = f"{stub_bin}:{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}"
    code = "import sys, h5py, numpy, matplotlib, scipy; print(sys.executable)"
    proc = run(source_dir, ["python3", "-c", code], {"PATH": path, "EMPRISM_PYTHON": None}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() != str(stub_bin / "python3")


def test_emprism_python_without_the_packages_is_one_error_line(source_dir, stub_bin, tmp_path):
    stub = stub_bin / "python3"
    proc = run(source_dir, ["report", tmp_path / "x.h5"], {"EMPRISM_PYTHON": str(stub)}, tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"analysis/python3: ERROR: EMPRISM_PYTHON={stub} cannot import"), lines[0]
    assert "No module named 'h5py'" in lines[0]


def test_modules_no_interpreter_has_are_one_error_line(source_dir, tmp_path):
    proc = run(source_dir, ["python3", "-c", "pass"],
               {"EMPRISM_PYTHON": None, "EMPRISM_PYTHON_MODULES": "numpy emprism_no_such_module"}, tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("analysis/python3: ERROR: no python3 imports numpy emprism_no_such_module")
    assert "No module named 'emprism_no_such_module'" in lines[0] and "EMPRISM_PYTHON" in lines[0]
