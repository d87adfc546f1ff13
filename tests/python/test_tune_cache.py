"""The tune cache of the kernel autotuner through the program (README, "Autotuning and the tune cache"): the file a run
writes, the one warning for a corrupt or foreign file (which is then rewritten), which of [tune] cache and
EMPRISM_TUNE_CACHE wins, and the input check of tune.cache. On the CPU backend the launcher has one variant, so the file
holds only its header; the timing itself is tested in tests/test_tune.cpp and tests/gpu/test_gpu_tune.cpp.

Each test runs emprism-mpi on a tiny lattice in its tmp_path and checks one property.
"""
from conftest import ok, program_env, run_args, toml_value

TIMEOUT_S = 300
MAGIC = "emprism-tunecache\t1\t"

BASE = """
[lattice]
extents = [4, 4, 4, 4]
[gauge]
source = "random"
seed = 5
[dirac]
kappa = 0.12
csw = 1.0
[solver]
precision = "double"
tol = 1e-8
[metrics]
peak = false
[[solve]]
name = "pt"
type = "point"
"""


def run(binary, tmp_path, cache=None, env_cache=None):
    body = BASE
    if cache is not None:
        body = body.replace("[metrics]", f"[tune]\ncache = {toml_value(str(cache))}\n[metrics]")
    toml = tmp_path / "run.toml"
    toml.write_text(body + f"\n[output]\nfile = {toml_value(str(tmp_path / 'run.h5'))}\noverwrite = true\n")
    env = program_env()
    env.pop("EMPRISM_TUNE_CACHE", None)
    if env_cache is not None:
        env["EMPRISM_TUNE_CACHE"] = str(env_cache)
    return run_args(binary, tmp_path, [toml], env=env, timeout=TIMEOUT_S)


def warnings_naming(proc, path):
    return [l for l in (proc.stdout + proc.stderr).splitlines() if f"tune cache '{path}' ignored" in l]


def test_run_writes_a_valid_cache_file(emprism_binary, tmp_path):
    cache = tmp_path / "tunecache.tsv"
    ok(run(emprism_binary, tmp_path, cache=cache))
    assert cache.read_text().startswith(MAGIC)


def test_second_run_reads_the_file_without_warning(emprism_binary, tmp_path):
    cache = tmp_path / "tunecache.tsv"
    ok(run(emprism_binary, tmp_path, cache=cache))
    proc = ok(run(emprism_binary, tmp_path, cache=cache))
    assert warnings_naming(proc, cache) == []
    assert "entries read" in proc.stdout + proc.stderr


def test_corrupt_file_is_ignored_with_one_warning_and_rewritten(emprism_binary, tmp_path):
    cache = tmp_path / "tunecache.tsv"
    cache.write_text("emprism-tunecache\t1\tnot this build\n")  # truncated: no checksum line
    proc = ok(run(emprism_binary, tmp_path, cache=cache))
    assert len(warnings_naming(proc, cache)) == 1, proc.stdout + proc.stderr
    assert cache.read_text().startswith(MAGIC)
    assert "not this build" not in cache.read_text()


def test_file_of_another_build_is_ignored_with_one_warning(emprism_binary, tmp_path):
    cache = tmp_path / "tunecache.tsv"
    ok(run(emprism_binary, tmp_path, cache=cache))
    lines = cache.read_text().split("\n")
    head = lines[0].split("\t")
    head[2] = "0000000 another build"
    cache.write_text("\n".join(["\t".join(head)] + lines[1:]))
    proc = ok(run(emprism_binary, tmp_path, cache=cache))
    warning = warnings_naming(proc, cache)
    assert len(warning) == 1 and "another build" in warning[0], proc.stdout + proc.stderr
    assert "another build" not in cache.read_text().split("\n")[0]


def test_environment_variable_names_the_file_when_the_key_is_absent(emprism_binary, tmp_path):
    cache = tmp_path / "from_env.tsv"
    ok(run(emprism_binary, tmp_path, env_cache=cache))
    assert cache.read_text().startswith(MAGIC)


def test_input_key_wins_over_the_environment_variable(emprism_binary, tmp_path):
    key, env = tmp_path / "from_key.tsv", tmp_path / "from_env.tsv"
    ok(run(emprism_binary, tmp_path, cache=key, env_cache=env))
    assert key.exists() and not env.exists()


def test_cache_in_a_missing_directory_is_an_input_error(emprism_binary, tmp_path):
    proc = run(emprism_binary, tmp_path, cache=tmp_path / "no_such_dir" / "tunecache.tsv")
    assert proc.returncode == 2
    assert "tune.cache" in proc.stderr and "does not exist" in proc.stderr
    assert not (tmp_path / "run.h5").exists()
