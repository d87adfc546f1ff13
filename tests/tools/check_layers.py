#!/usr/bin/env python3
"""check_layers.py: the layering rules of the source tree (docs/architecture.md), checked on the files as they are.

  python3 tests/tools/check_layers.py [REPO_ROOT]

Layers, lowest first; a file may include project headers of its own layer and of the layers below it only:
  kernels       kernels/            per-site functors, backend shim, launch, metrics registry, error types
  comm          comm/               every MPI call: communicator, collectives, process grid, halo exchanges
  lattice       src/lattice/        geometry, fields, host gauge field, counter-based RNG, context
  physics       src/physics/        Dirac operator, CG, BLAS, clover, sources, smearing, heatbath, contractions
  io            io/                 HDF5 toolkit and field writer, gauge file formats, TOML reader, logging
  run           src/run/, src/main.cpp   input schema, driver, tasks, checkpoint store, output schema
A project header is an #include "..." of a path under kernels/, comm/, src/ or io/ (the generated
emprism_version.hpp belongs to no layer and may be included anywhere).
Also: no MPI call (MPI_Xxx( ... ) outside comm/ (the same rule as `grep -rn 'MPI_[A-Z][a-z_]*(' src io kernels`),
and every source file under those folders belongs to a layer.
Exit 0 when every rule holds; 1 with one line per violation ("file:line: ...") otherwise.
"""
import pathlib
import re
import sys

LAYERS = ["kernels", "comm", "lattice", "physics", "io", "run"]
FOLDERS = [("src/lattice/", "lattice"), ("src/physics/", "physics"), ("src/run/", "run"), ("src/main.cpp", "run"),
           ("kernels/", "kernels"), ("comm/", "comm"), ("io/", "io")]
SOURCES = ("kernels", "comm", "src", "io")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
MPI_CALL = re.compile(r"MPI_[A-Z][a-z_]*\(")


def layer_of(relpath):
    for prefix, layer in FOLDERS:
        if relpath == prefix or relpath.startswith(prefix):
            return layer
    return None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    problems = []
    files = sorted(p for d in SOURCES for p in (root / d).rglob("*")
                   if p.suffix in (".hpp", ".cpp", ".h", ".cu") and p.is_file())
    for path in files:
        rel = path.relative_to(root).as_posix()
        mine = layer_of(rel)
        if mine is None:
            problems.append(f"{rel}:1: belongs to no layer (move it into one of the layer folders)")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1).split("/")[0] in SOURCES:
                theirs = layer_of(m.group(1))
                if theirs is None:
                    problems.append(f"{rel}:{number}: includes \"{m.group(1)}\", which belongs to no layer")
                elif LAYERS.index(theirs) > LAYERS.index(mine):
                    problems.append(f"{rel}:{number}: {mine} includes \"{m.group(1)}\" of the higher layer {theirs}")
            if mine != "comm" and MPI_CALL.search(line):
                problems.append(f"{rel}:{number}: MPI call outside comm/: {line.strip()}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(files)} files, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
