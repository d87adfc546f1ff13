"""Joins the output files of an ensemble measured in slices (the Slurm array job jobs/local/ensemble_array.sbatch,
one slice of gauge.first..gauge.last per array task) into one ensemble file, as one run over the whole ensemble
would have written it (README: Ensembles; docs/conventions.md section 13):

  analysis/merge_ensemble OUT.h5 PART.h5 [PART.h5 ...] [--overwrite]

Each PART must be a complete ensemble file (gauge.source = "ensemble", renamed from .partial by its run: every solve
of every configuration flagged complete) and all must come from the same input but for the list of configurations:
their physics_inputs root attributes, without the gauge.files line, must be equal. A configuration id may appear in
one part only. OUT gets the root attributes and /input of the first part, the configurations of all parts in the
order of their ids (numerically when every id is an integer) as /configs/<id>, config_ids and config_files in that
order, physics_inputs with the merged gauge.files line (what one run over the whole ensemble records), and each
part's /metrics as /metrics/parts/<k> (the run's own metrics stay per part: they time different jobs).
Exit status: 0 merged; 2 refused (one line on stderr naming the file and the reason; nothing written).
"""
import argparse
import os
import sys

import h5py

FILES_KEY = "gauge.files = "


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def strings(values):
    return [text(v) for v in values]


class Refused(Exception):
    pass


def split_physics(physics):
    """(physics_inputs without the gauge.files line, the members of that line as "<id>=<file>" strings)."""
    lines = physics.splitlines()
    rest = [line for line in lines if not line.startswith(FILES_KEY)]
    listed = [line[len(FILES_KEY):] for line in lines if line.startswith(FILES_KEY)]
    return "\n".join(rest), listed[0] if listed else None


def check_part(path):
    """The part's ids, files and physics text without the list; Refused when it is not a complete ensemble file."""
    if path.endswith(".partial"):
        raise Refused(f"{path}: a partial file (its run did not finish); resume that run first")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise Refused(f"{path}: cannot open it as HDF5 ({e})") from None
    with f:
        if "config_ids" not in f.attrs or "configs" not in f:
            raise Refused(f"{path}: not an ensemble file (no config_ids attribute or /configs group)")
        ids, files = strings(f.attrs["config_ids"]), strings(f.attrs["config_files"])
        physics, listed = split_physics(text(f.attrs.get("physics_inputs", "")))
        if listed is None:
            raise Refused(f"{path}: its physics_inputs has no gauge.files line")
        for i in ids:
            if i not in f["configs"] or "solves" not in f["configs"][i]:
                raise Refused(f"{path}: configuration {i} is missing")
            for name, solve in f["configs"][i]["solves"].items():
                if not bool(solve.attrs.get("complete", False)):
                    raise Refused(f"{path}: solve {name} of configuration {i} is not complete")
    return ids, files, physics


def order_key(i):
    return (0, int(i), "") if i.isdigit() else (1, 0, i)


def quoted(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def merge(out, parts):
    """Checks every part, then writes OUT (through OUT.partial, renamed at the end)."""
    members, first_physics = {}, None
    for path in parts:
        ids, files, physics = check_part(path)
        if first_physics is None:
            first_physics = physics
        elif physics != first_physics:
            raise Refused(f"{path}: written by another input than {parts[0]} (physics inputs other than the "
                          f"configuration list differ)")
        for i, name in zip(ids, files):
            if i in members:
                raise Refused(f"{path}: configuration {i} is also in {members[i][0]}")
            members[i] = (path, name)
    order = sorted(members, key=order_key)
    listed = "[" + ", ".join(quoted(f"{i}={members[i][1]}") for i in order) + "]"
    lines = first_physics.split("\n")
    at = next((k for k, line in enumerate(lines) if line.startswith("gauge.format = ")), 1) + 1
    lines.insert(at, FILES_KEY + listed)
    physics = "\n".join(lines) + "\n"
    tmp = out + ".partial"
    with h5py.File(tmp, "w") as o:
        with h5py.File(parts[0], "r") as first:
            for k, v in first.attrs.items():
                o.attrs[k] = v
            first.copy("input", o)
        for k, path in enumerate(parts):
            with h5py.File(path, "r") as p:
                if "metrics" in p:
                    p.copy("metrics", o, name=f"metrics/parts/{k}")
        for i in order:
            with h5py.File(members[i][0], "r") as p:
                p.copy(f"configs/{i}", o, name=f"configs/{i}")
        o.attrs["config_ids"] = order
        o.attrs["config_files"] = [members[i][1] for i in order]
        o.attrs["physics_inputs"] = physics
        o.attrs["merged_from"] = [os.path.abspath(p) for p in parts]
    os.replace(tmp, out)
    return order


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the merged ensemble file to write")
    ap.add_argument("parts", nargs="+", help="complete ensemble files of the same input (one per array task)")
    ap.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    a = ap.parse_args(argv)
    try:
        if os.path.exists(a.out) and not a.overwrite:
            raise Refused(f"{a.out}: exists; give --overwrite to replace it")
        order = merge(a.out, a.parts)
    except Refused as e:
        print(f"merge_ensemble: {e}", file=sys.stderr)
        return 2
    print(f"merge_ensemble: wrote {a.out}: {len(order)} configuration(s) from {len(a.parts)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
