"""Reliability, end to end with the real program (README: Exit codes, Output ownership, Faults).

- Output ownership: a run owns <output.file>.partial through <output.file>.partial.lock; a second run on the same
  output (even with overwrite = true) exits 2 with one line naming output.file and the owner and touches nothing;
  a lock left by a killed run is taken over with a warning.
- Non-finite values: a solve whose residual is not finite ends every rank with exit 3 and one line.
- I/O faults: a write error injected on one rank (test hook EMPRISM_TEST_FAIL_WRITE) ends every rank with exit 1
  and one line within seconds; --resume afterwards gives the file of an uninterrupted run.
Each run's input lives in its own directory and names its output "out.h5" relatively.
"""
import fcntl
import os
import signal
import socket
import subprocess
import time

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
overwrite = true
[[solve]]
name = "point"
type = "point"
site = [1, 2, 3, 4]
[[solve]]
name = "noise"
type = "random"
distribution = "z2"
seed = 3
"""
ERROR = "emprism-mpi: ERROR: "
# The write point (see io/h5/hdf5.hpp, EMPRISM_TEST_FAIL_WRITE) of the first field of the second solve on rank 0.
FAULT_IN_SECOND_SOLVE = "0:6"


def start(binary, directory, ranks=1, body=BODY, env_extra=None, args=()):
    """Starts the program on `body` (directory/run.toml); returns the Popen."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "run.toml").write_text(body)
    env = program_env()
    env["OMP_NUM_THREADS"] = "1"
    env.update(env_extra or {})
    cmd = mpi_command(ranks, [str(binary), *args, "run.toml"])
    return subprocess.Popen(cmd, cwd=str(directory), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def run(binary, directory, ranks=1, body=BODY, env_extra=None, args=(), timeout=RUN_TIMEOUT_S):
    proc = start(binary, directory, ranks, body, env_extra, args)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the run hung (> {timeout} s)\n{err}")
    proc.stdout_text, proc.stderr_text = out, err
    return proc


def describe(proc):
    return f"exit {proc.returncode}\n--- stderr ---\n{proc.stderr_text}\n--- stdout ---\n{proc.stdout_text[-3000:]}"


def error_lines(proc):
    return [line for line in proc.stderr_text.splitlines() if line.startswith(ERROR)]


def snapshot(directory):
    """{name: bytes} of every file in directory but run.toml."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file() and p.name != "run.toml"}


def wait_for(path, proc, timeout=120):
    t0 = time.time()
    while not path.exists():
        assert proc.poll() is None, "the first run ended before it created " + str(path)
        assert time.time() - t0 < timeout, f"{path} did not appear"
        time.sleep(0.01)


# ---- output ownership


@pytest.mark.parametrize("ranks", [1, 2])
def test_second_run_on_the_same_output_exits_two_and_touches_nothing(emprism_binary, h5_compare, tmp_path, ranks):
    first_dir = tmp_path / "first"
    first = start(emprism_binary, first_dir, env_extra={"EMPRISM_TEST_PAUSE_AFTER_SOLVES": "1"})
    try:
        wait_for(first_dir / "out.h5.partial.paused", first)  # one solve complete, the run holds its lock
        before = snapshot(first_dir)
        second = run(emprism_binary, first_dir, ranks=ranks)
        assert second.returncode == 2, describe(second)
        lines = error_lines(second)
        assert len(lines) == 1, describe(second)
        if ranks == 1:  # (mpiexec adds its own banner on a non-zero exit)
            assert len(second.stderr_text.splitlines()) == 1, describe(second)
        assert "output.file: 'out.h5' is being written by another run" in lines[0], lines[0]
        assert f"pid {first.pid}" in lines[0] and socket.gethostname() in lines[0], lines[0]
        assert snapshot(first_dir) == before, "the second run changed the first run's files"
    finally:
        (first_dir / "out.h5.partial.paused").unlink(missing_ok=True)  # the first run goes on
    out, err = first.communicate(timeout=RUN_TIMEOUT_S)
    assert first.returncode == 0, err
    assert not (first_dir / "out.h5.partial.lock").exists(), "the lock must be removed at the end"
    reference = run(emprism_binary, tmp_path / "reference")
    assert reference.returncode == 0, describe(reference)
    if h5_compare is not None:
        cmp = subprocess.run([str(h5_compare), str(first_dir / "out.h5"), str(tmp_path / "reference" / "out.h5")],
                             capture_output=True, text=True, timeout=120)
        assert cmp.returncode == 0, cmp.stdout + cmp.stderr


def test_lock_held_by_a_live_process_is_refused(emprism_binary, tmp_path):
    tmp_path.mkdir(exist_ok=True)
    lock = tmp_path / "out.h5.partial.lock"
    with open(lock, "w") as f:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        f.write("host elsewhere pid 4242\n")
        f.flush()
        proc = run(emprism_binary, tmp_path)
        assert proc.returncode == 2, describe(proc)
        assert len(error_lines(proc)) == 1, describe(proc)
        assert "host elsewhere pid 4242" in proc.stderr_text, describe(proc)
        dry = run(emprism_binary, tmp_path, args=("--dry-run",))
        assert dry.returncode == 2 and "being written by another run" in dry.stderr_text, describe(dry)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.h5.partial.lock", "run.toml"]


def test_lock_of_a_dead_run_is_taken_over_with_a_warning(emprism_binary, tmp_path):
    tmp_path.mkdir(exist_ok=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "out.h5.partial.lock").write_text(f"host {socket.gethostname()} pid {dead.pid}\n")
    proc = run(emprism_binary, tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert "took over the lock" in proc.stderr_text and f"pid {dead.pid}" in proc.stderr_text, describe(proc)
    assert (tmp_path / "out.h5").is_file() and not (tmp_path / "out.h5.partial.lock").exists()


def test_killed_run_leaves_a_lock_that_resume_takes_over(emprism_binary, tmp_path):
    killed = run(emprism_binary, tmp_path, env_extra={"EMPRISM_TEST_CRASH_AFTER_SOLVES": "1"})
    assert killed.returncode == -signal.SIGKILL, describe(killed)
    assert (tmp_path / "out.h5.partial.lock").exists()
    resumed = run(emprism_binary, tmp_path, args=("--resume",))
    assert resumed.returncode == 0, describe(resumed)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert all(bool(g.attrs["complete"]) for g in f["solves"].values())


def test_run_killed_before_its_first_solve_does_not_block_a_plain_rerun(emprism_binary, tmp_path):
    body = BODY.replace("overwrite = true", "overwrite = false")
    killed = run(emprism_binary, tmp_path, body=body, env_extra={"EMPRISM_TEST_CRASH_AFTER_SOLVES": "0"})
    assert killed.returncode == -signal.SIGKILL, describe(killed)
    assert (tmp_path / "out.h5.partial").exists()
    again = run(emprism_binary, tmp_path, body=body)
    assert again.returncode == 0, describe(again)


# ---- non-finite values


@pytest.mark.parametrize("ranks", [1, 2])
def test_non_finite_residual_ends_every_rank_with_exit_three(emprism_binary, tmp_path, ranks):
    body = BODY.replace('precision = "double"', 'precision = "mixed"')
    t0 = time.time()
    proc = run(emprism_binary, tmp_path, ranks=ranks, body=body, env_extra={"EMPRISM_TEST_NAN_SOURCE": "noise"})
    assert proc.returncode == 3, describe(proc)
    assert time.time() - t0 < 120
    lines = error_lines(proc)
    assert len(lines) == 1 and "solve 'noise': the CG residual is not finite" in lines[0], describe(proc)
    assert "MPI_ABORT" not in proc.stderr_text, describe(proc)
    # the complete solve before it is kept for a resumed run
    assert (tmp_path / "out.h5.partial").is_file() and not (tmp_path / "out.h5").exists()


def test_values_that_overflow_in_the_precision_are_refused_before_any_work(emprism_binary, tmp_path):
    body = BODY.replace('name = "noise"\ntype = "random"\ndistribution = "z2"\nseed = 3\n',
                        'name = "wave"\ntype = "plane_wave"\nspinor = [[1e100, 0]' + ", [0, 0]" * 11 + "]\n")
    body = body.replace('precision = "double"', 'precision = "mixed"')  # 1e100 is finite in double, not in float
    proc = run(emprism_binary, tmp_path, body=body)
    assert proc.returncode == 2, describe(proc)
    assert error_lines(proc) == [ERROR + "run.toml: solve[1].spinor: entry 1e+100 overflows in mixed precision "
                                 "(solver.precision); |re| and |im| must be <= 4294967231"], describe(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.toml"]


def test_nan_link_in_a_gauge_file_is_refused(emprism_binary, tmp_path):
    """A NERSC file whose links hold NaN (its checksum made to match): not in SU(3), exit 2 naming the file."""
    tmp_path.mkdir(exist_ok=True)
    write_nersc_with_nan(tmp_path / "nan.nersc")
    info = subprocess.run([str(emprism_binary), "gauge-info", "nan.nersc"], cwd=str(tmp_path), env=program_env(),
                          capture_output=True, text=True, timeout=60)
    assert info.returncode == 2, info.stdout + info.stderr
    assert "not finite" in info.stderr, info.stderr


def write_nersc_with_nan(path):
    """A 4^4 NERSC file (3x3 complex double, big-endian) of unit links with one NaN, checksum consistent."""
    import struct
    links = []
    for _ in range(4 ** 4 * 4):
        links += [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    links[0] = float("nan")
    data = struct.pack(">%dd" % len(links), *links)
    words = struct.unpack(">%dI" % (len(data) // 4), data)
    checksum = sum(words) & 0xFFFFFFFF
    header = ("BEGIN_HEADER\nHDR_VERSION = 1.0\nDATATYPE = 4D_SU3_GAUGE_3x3\nDIMENSION_1 = 4\nDIMENSION_2 = 4\n"
              "DIMENSION_3 = 4\nDIMENSION_4 = 4\nCHECKSUM = %08x\nFLOATING_POINT = IEEE64BIG\nEND_HEADER\n" % checksum)
    path.write_bytes(header.encode() + data)


# ---- I/O faults


def fault_case(emprism_binary, h5_compare, tmp_path, ranks, fail, io):
    """A write error injected at write point `fail` ("rank:n") ends the run with exit 1 and one line within
    seconds; --resume then gives the file of an uninterrupted run."""
    body = BODY.replace("overwrite = true", f'overwrite = true\nio = "{io}"')
    reference = run(emprism_binary, tmp_path / "reference", ranks=ranks, body=body)
    assert reference.returncode == 0, describe(reference)
    directory = tmp_path / "faulty"
    t0 = time.time()
    proc = run(emprism_binary, directory, ranks=ranks, body=body,
               env_extra={"EMPRISM_TEST_FAIL_WRITE": fail, "EMPRISM_FAULT_AGREEMENT_S": "3"}, timeout=120)
    elapsed = time.time() - t0
    assert proc.returncode == 1, describe(proc)
    assert elapsed < 60, f"the job took {elapsed:.0f} s to end after the fault"
    lines = error_lines(proc)
    assert len(lines) == 1 and "No space left on device [test hook]" in lines[0], describe(proc)
    partial = directory / "out.h5.partial"
    assert partial.is_file() and not (directory / "out.h5").exists(), describe(proc)
    with h5py.File(partial, "r") as f:  # the solve in progress is not marked complete
        complete = sorted(n for n, g in f["solves"].items() if bool(g.attrs.get("complete", False)))
    assert complete == ["point"], complete
    resumed = run(emprism_binary, directory, ranks=ranks, body=body, args=("--resume",))
    assert resumed.returncode == 0, describe(resumed)
    if h5_compare is not None:
        cmp = subprocess.run([str(h5_compare), str(directory / "out.h5"), str(tmp_path / "reference" / "out.h5")],
                             capture_output=True, text=True, timeout=120)
        assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    return proc


def test_write_error_on_one_rank_ends_the_run_and_resume_completes_it(emprism_binary, h5_compare, tmp_path):
    fault_case(emprism_binary, h5_compare, tmp_path, 1, FAULT_IN_SECOND_SOLVE, "auto")


def test_write_error_on_rank_zero_of_two_in_gather_mode_ends_every_rank_cleanly(emprism_binary, h5_compare, tmp_path):
    proc = fault_case(emprism_binary, h5_compare, tmp_path, 2, FAULT_IN_SECOND_SOLVE, "gather")
    assert "MPI_ABORT" not in proc.stderr_text, describe(proc)


def test_write_error_on_rank_one_in_collective_mode_never_hangs(emprism_binary, h5_compare, tmp_path):
    fault_case(emprism_binary, h5_compare, tmp_path, 2, "1:" + FAULT_IN_SECOND_SOLVE.split(":")[1], "auto")


# ---- sizes, memory, damaged files, [generate], logging before validation


def body_with(**replace):
    body = BODY
    for old, new in replace.values():
        assert old in body, old
        body = body.replace(old, new)
    return body


@pytest.mark.parametrize("extents", ["[4, 4, 2147483646, 2147483646]", "[65536, 65536, 65536, 65536]"])
def test_impossible_volume_is_refused_naming_the_extents(emprism_binary, tmp_path, extents):
    body = body_with(e=("extents = [4, 4, 4, 8]", "extents = " + extents))
    for args in ((), ("--dry-run",)):
        proc = run(emprism_binary, tmp_path, body=body, args=args)
        assert proc.returncode == 2, describe(proc)
        assert len(error_lines(proc)) == 1 and "run.toml: lattice.extents:" in error_lines(proc)[0], describe(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.toml"]


def test_lattice_that_does_not_fit_in_memory_is_refused_before_allocating(emprism_binary, tmp_path):
    body = body_with(e=("extents = [4, 4, 4, 8]", "extents = [128, 128, 128, 128]"))
    for args in ((), ("--dry-run",)):
        t0 = time.time()
        proc = run(emprism_binary, tmp_path, body=body, args=args)
        assert proc.returncode == 2, describe(proc)
        line = error_lines(proc)[0]
        assert "run.toml: lattice.extents: the local lattice 128x128x128x128 does not fit in host memory" in line, line
        assert time.time() - t0 < 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.toml"]


def test_dry_run_prints_the_memory_estimate(emprism_binary, tmp_path):
    proc = run(emprism_binary, tmp_path, args=("--dry-run",))
    assert proc.returncode == 0, describe(proc)
    assert "estimated memory per rank: host" in proc.stdout_text and "available per rank" in proc.stdout_text


@pytest.mark.parametrize("ranks", [1, 2])
def test_damaged_gauge_file_is_exit_two_with_one_line(emprism_binary, tmp_path, ranks):
    tmp_path.mkdir(exist_ok=True)
    write_nersc_with_nan(tmp_path / "cfg.nersc")
    data = (tmp_path / "cfg.nersc").read_bytes()
    (tmp_path / "cfg.nersc").write_bytes(data[: len(data) - 1000])  # truncated
    body = body_with(g=('source = "random"\nwidth = 0.4\nseed = 5\n', 'source = "file"\nfile = "cfg.nersc"\n'),
                     e=("extents = [4, 4, 4, 8]", "extents = [4, 4, 4, 4]"),
                     s=("site = [1, 2, 3, 4]", "site = [1, 2, 3, 0]"))
    proc = run(emprism_binary, tmp_path, ranks=ranks, body=body)
    assert proc.returncode == 2, describe(proc)
    lines = error_lines(proc)
    assert len(lines) == 1 and lines[0].startswith(ERROR + "run.toml: gauge.file: cfg.nersc: "), describe(proc)
    assert "MPI_ABORT" not in proc.stderr_text, describe(proc)
    assert not (tmp_path / "out.h5").exists() and not (tmp_path / "out.h5.partial").exists()


def write_openqcd_unit(path, extents):
    """An openQCD file (export_cnfg: little-endian int32 N0..N3 with N0 = time, double plaquette 3, then per odd point
    its 8 links as 3x3 complex double) of the unit field on extents (Lx, Ly, Lz, Lt)."""
    import struct
    lx, ly, lz, lt = extents
    unit = struct.pack("<18d", 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0)
    path.write_bytes(struct.pack("<4id", lt, lx, ly, lz, 3.0) + unit * (8 * lx * ly * lz * lt // 2))


@pytest.mark.parametrize("ranks,procs,damage", [(2, "[1, 1, 1, 2]", "truncated"), (4, "[1, 2, 2, 1]", "truncated"),
                                                (2, "[2, 1, 1, 1]", "bad_link"), (4, "[2, 1, 1, 2]", "bad_link")])
def test_damaged_openqcd_file_is_exit_two_on_every_rank(emprism_binary, tmp_path, ranks, procs, damage):
    """gauge.source = "file" reads to the device, each rank its block and halo from the file: a truncated file, or one
    link of the last record not in SU(3) (a backward link: U_z at (3, 3, 1, 7), on the last rank in t and x), ends
    every rank with exit 2 and one line."""
    import struct
    tmp_path.mkdir(exist_ok=True)
    cfg = tmp_path / "cfg.oqcd"
    write_openqcd_unit(cfg, (4, 4, 4, 8))
    data = bytearray(cfg.read_bytes())
    if damage == "truncated":
        data = data[: len(data) - 1000]
        what = "truncated"
    else:
        # The last odd point is openQCD's (x0, x1, x2, x3) = (7, 3, 3, 2); its last link U(x - 3, 3) is our U_z at
        # (x, y, z, t) = (3, 3, 1, 7); its first real part 2 instead of 1.
        data[len(data) - 144 : len(data) - 136] = struct.pack("<d", 2.0)
        what = "link U_z at site (x, y, z, t) = (3, 3, 1, 7) is not in SU(3)"
    cfg.write_bytes(bytes(data))
    body = body_with(g=('source = "random"\nwidth = 0.4\nseed = 5\n', 'source = "file"\nfile = "cfg.oqcd"\n'
                        'format = "openqcd"\n'),
                     e=("extents = [4, 4, 4, 8]", "extents = [4, 4, 4, 8]\nprocs = " + procs))
    proc = run(emprism_binary, tmp_path, ranks=ranks, body=body)
    assert proc.returncode == 2, describe(proc)
    lines = error_lines(proc)
    assert len(lines) == 1 and lines[0].startswith(ERROR + "run.toml: gauge.file: cfg.oqcd: "), describe(proc)
    assert what in lines[0], describe(proc)
    assert "MPI_ABORT" not in proc.stderr_text, describe(proc)
    assert not (tmp_path / "out.h5").exists() and not (tmp_path / "out.h5.partial").exists()


def test_directory_as_gauge_file_is_refused(emprism_binary, tmp_path):
    (tmp_path / "cfgdir").mkdir(parents=True)
    body = body_with(g=('source = "random"\nwidth = 0.4\nseed = 5\n', 'source = "file"\nfile = "cfgdir"\n'))
    proc = run(emprism_binary, tmp_path, body=body)
    assert proc.returncode == 2 and "gauge.file: 'cfgdir' is a directory" in proc.stderr_text, describe(proc)


GENERATE = '[generate]\ncount = 1\nevery = 1\nprefix = "{}"\n'


def test_generate_does_not_replace_a_configuration_without_overwrite(emprism_binary, tmp_path):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "cfg_000001.ildg").write_bytes(b"precious")
    body = body_with(o=("overwrite = true", "overwrite = false"),
                     g=('source = "random"\nwidth = 0.4\nseed = 5\n', 'source = "heatbath"\nsweeps = 0\n'),
                     d=("[dirac]", GENERATE.format("cfg") + "[dirac]"))
    proc = run(emprism_binary, tmp_path, body=body)
    assert proc.returncode == 2, describe(proc)
    assert "generate.prefix: 'cfg_000001.ildg' exists; set output.overwrite = true" in proc.stderr_text, describe(proc)
    assert (tmp_path / "cfg_000001.ildg").read_bytes() == b"precious"


def test_generate_into_a_missing_directory_is_refused_before_the_heatbath(emprism_binary, tmp_path):
    body = body_with(g=('source = "random"\nwidth = 0.4\nseed = 5\n', 'source = "heatbath"\nsweeps = 0\n'),
                     d=("[dirac]", GENERATE.format("nowhere/cfg") + "[dirac]"))
    proc = run(emprism_binary, tmp_path, body=body)
    assert proc.returncode == 2, describe(proc)
    assert "generate.prefix: directory 'nowhere' does not exist" in proc.stderr_text, describe(proc)


def test_per_rank_logs_are_not_created_for_a_bad_input(emprism_binary, tmp_path):
    body = body_with(k=("kappa = 0.12", "kappa = -1"), m=("[metrics]", "[log]\nper_rank = true\n[metrics]"))
    proc = run(emprism_binary, tmp_path / "logs", body=body)
    assert proc.returncode == 2, describe(proc)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["run.toml"]


def test_error_lines_hold_no_embedded_newline(emprism_binary, tmp_path):
    proc = run(emprism_binary, tmp_path, env_extra={"EMPRISM_TEST_FAIL_WRITE": FAULT_IN_SECOND_SOLVE})
    assert proc.returncode == 1, describe(proc)
    assert len(proc.stderr_text.strip().splitlines()) == 1, describe(proc)
