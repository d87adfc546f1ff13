#!/usr/bin/env python3
"""export_propagator.py: a point-source propagator of an EmPRiSM-MPI output file in the DeGrand-Rossi gamma basis
and PyQUDA's site-major layout, as HDF5 or .npy.

Usage: python3 analysis/export_propagator.py OUT.h5 --output PROP.h5|PROP.npy [--solve NAME] [--config ID]
                                             [--normalisation kappa|mass]
(analysis/export_propagator is this, run by analysis/python3.)

Read: /solves/<name>/propagator [4][3][Lt][Lz][Ly][Lx][4][3] complex (source spin, source colour, then the
solution's t, z, y, x, sink spin, sink colour; docs/conventions.md section 13), in our chiral basis (section 3),
of a single-configuration file, or of /configs/<ID>/solves/<name> of an ensemble file. --solve may be left out
when the file (configuration) holds one propagator; --config when the ensemble file holds one configuration.

Written: the array P[t][z][y][x][sink spin][source spin][sink colour][source colour], complex128 (numpy '<c16'),
    P(x) = U S(x) U^dag        (S(x) the 12 x 12 propagator from the source site, spin by spin)
with U the unitary that maps our gammas onto DeGrand-Rossi's (gamma_basis.basis_change: U = diag(i s_2, i s_2) up to
a phase, which cancels; it flips the signs of gamma_1 and gamma_3 and leaves gamma_2, gamma_4 and gamma_5 alone).
That is the basis and order of QUDA's QUDA_DEGRAND_ROSSI_GAMMA_BASIS, Chroma and PyQUDA, whose LatticePropagator
holds data[..., sink spin, source spin, sink colour, source colour] (CLQCD/PyQUDA, pyquda_comm/field.py:
LatticePropagator.setFermion(fermion, spin, color) sets data[..., :, spin, :, color]; its lexico() form is
(Lt, Lz, Ly, Lx, Ns, Ns, Nc, Nc), the shape pyquda_utils/io/npy.py readPropagator reads: '<c16', C order). Sites
stay where they are (global coordinates; the source at the file's source_site), fermion boundary phases are those
of the run (section 5; QUDA puts an antiperiodic t boundary into the links instead: the same propagator).
Normalisation: "kappa" (default) keeps ours, S = M^-1 with M = 1 - kappa H + clover (section 4), which is QUDA's
QUDA_KAPPA_NORMALIZATION; "mass" gives (D + m0)^-1 = 2 kappa S, QUDA's QUDA_MASS_NORMALIZATION and Chroma's.
  PROP.npy   the array only (np.save), readable by numpy.load and PyQUDA's io.npy.readPropagator;
  PROP.h5    dataset propagator (the array) with attrs dims, basis ("DeGrand-Rossi"), basis_change (U [4][4]),
             gamma_matrices (DeGrand-Rossi gamma_1..gamma_4, [4][4][4]), normalisation, kappa, csw, source_site [4],
             extents [4] (Lx, Ly, Lz, Lt), source_file, config, solve.
The array is converted one timeslice at a time (memory: one timeslice of input and output).
Exit status: 0 written; 2 bad command line or input (one line "export_propagator.py: ERROR: <file>: <reason>",
nothing written); 1 the output could not be written.
Who may call: anyone (a command-line tool); the functions convert() and read_source() are used by the tests.
"""
import argparse
import os
import sys

import h5py
import numpy as np

from ensemble import CONFIGS, natural_key
from gamma_basis import DEGRAND_ROSSI, OURS, basis_change
from output_file import ReportError, attr, check_file

PROG = "export_propagator.py"
DIMS = "t,z,y,x,sink_spin,source_spin,sink_colour,source_colour"


def convert(block, u):
    """Our propagator block [4][3][...sites...][4][3] (source spin, source colour, sites, sink spin, sink colour) ->
    [...sites...][4][4][3][3] (sink spin, source spin, sink colour, source colour) in the basis U: U S U^dag."""
    return np.einsum("Ai,Bj,jb...ia->...ABab", u, u.conj(), block, optimize=True)


def pick(names, wanted, what, where):
    """The one name of `names` that is `wanted` (or the only one); ReportError otherwise."""
    if wanted is not None:
        if wanted not in names:
            raise ReportError(f"no {what} '{wanted}' in {where} (there: {', '.join(names) or 'none'})")
        return wanted
    if len(names) != 1:
        raise ReportError(f"{where} holds {len(names)} {what}s ({', '.join(names) or 'none'}): choose one with "
                          f"--{what}")
    return names[0]


def read_source(f, config, solve):
    """(root group, config id, solve name) of the propagator to export in an open file."""
    if CONFIGS in f:
        ids = sorted(f[CONFIGS], key=natural_key)
        config = pick(ids, config, "config", "the ensemble file")
        root = f[CONFIGS][config]
    else:
        root = f
    solves = root["solves"] if "solves" in root else {}
    props = [n for n in solves if "propagator" in solves[n]]
    where = "the file" if root.name == "/" else f"configuration {config}"
    name = pick(props, solve, "solve", where + " (propagators written with output.fields)")
    return root, config, name


def attrs_of(g, f, path, config, name, normalisation, u):
    """The attributes of the HDF5 output."""
    return {"dims": DIMS, "basis": "DeGrand-Rossi", "basis_change": u, "gamma_matrices": DEGRAND_ROSSI,
            "normalisation": normalisation, "kappa": float(attr(g, "kappa", np.nan)),
            "csw": float(attr(g, "csw", np.nan)), "source_site": np.asarray(attr(g, "source_site", [0, 0, 0, 0])),
            "extents": np.asarray(f.attrs["extents"]), "source_file": os.path.abspath(path),
            "config": config if config is not None else "", "solve": name}


def check_propagator(d, f):
    """ReportError unless the dataset has the shape [4][3][Lt][Lz][Ly][Lx][4][3] of the file's extents."""
    if "extents" not in f.attrs:
        raise ReportError("not an EmPRiSM-MPI output file (no root attribute 'extents')")
    lx, ly, lz, lt = (int(e) for e in f.attrs["extents"])
    want = (4, 3, lt, lz, ly, lx, 4, 3)
    if d.shape != want:
        raise ReportError(f"{d.name} has shape {d.shape}, not {want}")
    return want


def export(path, output, config, solve, normalisation):
    """Converts and writes; the output appears only when complete (written as <output>.partial, then renamed)."""
    check_file(path)
    kind = output_kind(output)
    u = basis_change(OURS, DEGRAND_ROSSI)
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ReportError(f"cannot be read: {e}") from e
    with f:
        root, config, name = read_source(f, config, solve)
        g = root["solves"][name]
        d = g["propagator"]
        shape = check_propagator(d, f)
        scale = 2 * float(attr(g, "kappa", np.nan)) if normalisation == "mass" else 1.0
        if not np.isfinite(scale):
            raise ReportError(f"{g.name} has no kappa attribute: --normalisation mass needs it")
        out_shape = shape[2:6] + (4, 4, 3, 3)
        partial = str(output) + ".partial"
        try:
            if kind == "npy":
                dst = np.lib.format.open_memmap(partial, mode="w+", dtype="<c16", shape=out_shape)
                for t in range(shape[2]):
                    dst[t] = scale * convert(d[:, :, t], u)
                dst.flush()
                del dst
            else:
                with h5py.File(partial, "w") as o:
                    dst = o.create_dataset("propagator", shape=out_shape, dtype="<c16")
                    for t in range(shape[2]):
                        dst[t] = scale * convert(d[:, :, t], u)
                    dst.attrs.update(attrs_of(g, f, path, config, name, normalisation, u))
            os.replace(partial, output)
        except BaseException:
            if os.path.exists(partial):
                os.remove(partial)
            raise
    return config, name, out_shape


def output_kind(output):
    """"npy" or "h5" from the output's extension; ReportError otherwise."""
    lower = str(output).lower()
    if lower.endswith(".npy"):
        return "npy"
    if lower.endswith((".h5", ".hdf5")):
        return "h5"
    raise ReportError(f"--output {output}: the file name must end in .npy, .h5 or .hdf5")


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as one ERROR line (exit 2)."""

    def error(self, message):
        raise ReportError(f"{message} (usage: {PROG} OUT.h5 --output PROP.h5|PROP.npy [--solve NAME] "
                          "[--config ID] [--normalisation kappa|mass])")


def parse_args(argv):
    p = Parser(prog=PROG, description="Export a propagator in the DeGrand-Rossi basis and PyQUDA's site-major "
                                      "layout (Lt, Lz, Ly, Lx, Ns, Ns, Nc, Nc).")
    p.add_argument("file", help="the program's HDF5 output file (single-configuration or ensemble)")
    p.add_argument("--output", required=True, help="PROP.npy (the array) or PROP.h5 (the array with attributes)")
    p.add_argument("--solve", help="the propagator solve's name (default: the only one)")
    p.add_argument("--config", help="the configuration id in an ensemble file (default: the only one)")
    p.add_argument("--normalisation", choices=("kappa", "mass"), default="kappa",
                   help="kappa: ours, M^-1 (default); mass: (D + m0)^-1 = 2 kappa M^-1")
    return p.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
    except ReportError as e:
        files = [a for a in argv if not a.startswith("-")]
        print(f"{PROG}: ERROR: {files[0] if files else '(command line)'}: {e}", file=sys.stderr)
        return 2
    try:
        config, name, shape = export(args.file, args.output, args.config, args.solve, args.normalisation)
    except ReportError as e:
        print(f"{PROG}: ERROR: {args.file}: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except (OSError, KeyError, ValueError) as e:
        print(f"{PROG}: ERROR: {args.output}: cannot write: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    where = f"configuration {config}, " if config is not None else ""
    print(f"wrote {args.output}: {where}solve {name}, shape {shape} (t, z, y, x, sink spin, source spin, sink colour, "
          f"source colour), DeGrand-Rossi basis, {args.normalisation} normalisation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
