"""ensemble.py: the correlators of an ensemble of gauge configurations, read with h5py from any mix of
  - ensemble files: /configs/<id>/{gauge, solves/<name>, correlators/<name>} (one group per configuration, each
    laid out as a single-configuration file's root), the run attributes (extents, ...) at the file's root;
  - single-configuration files (docs/conventions.md section 13): the file's root is the configuration; its id is
    the base name of /gauge's attribute `file` (the gauge file it was measured on), else the output file's stem.
Configurations are ordered by id, naturally ("cfg.10" after "cfg.9"), which is the order binning follows. An id
seen twice (in two files) is an error. A configuration without a given correlator group, or whose propagator
solve of that name is marked incomplete, is left out of that correlator's ensemble with a warning.

  load_ensemble(paths)  {"configs": [ids], "extents": [4], "files": [paths], "correlators": {name: Correlator},
                         "warnings": [str]}; Correlator = {"name", "configs": [ids], "channels": {channel:
                         {"values": float array [N, Lt] (Re C), "time_parity": +1 or -1, "gamma_sink",
                         "gamma_source"}}}; name is the /correlators group's name for p = 0, and
                         <name>/p<nx>_<ny>_<nz> for each non-zero momentum the files hold
  is_ensemble_file(path)  True when the file has a /configs group
Raises output_file.ReportError (the reason) for a missing, unreadable, non-HDF5 or non-EmPRiSM-MPI file, or
files that do not fit together (other extents, an id twice).
Who may call: report.py, ensemble_report.py, export_propagator.py and the tests.
"""
import os
import re

import h5py
import numpy as np

from output_file import ReportError, attr, check_file, momentum_group, text

CONFIGS = "configs"


def natural_key(s):
    """Sort key that orders the digit runs of s by value: "cfg.9" < "cfg.10"."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p]


def is_ensemble_file(path):
    """True when the (readable HDF5) file holds a /configs group."""
    check_file(path)
    with h5py.File(path, "r") as f:
        return CONFIGS in f


def single_config_id(f, path):
    """The id of a single-configuration file: the base name of /gauge's `file`, else the file's stem."""
    if "gauge" in f:
        name = text(attr(f["gauge"], "file", "none"))
        if name and name != "none":
            return os.path.basename(name)
    return os.path.splitext(os.path.basename(path))[0]


def roots(f, path):
    """[(id, group)] of the configurations in an open file."""
    if CONFIGS in f:
        g = f[CONFIGS]
        return [(k, g[k]) for k in sorted(g, key=natural_key) if isinstance(g[k], h5py.Group)]
    return [(single_config_id(f, path), f)]


def read_channels(g, channels):
    """{channel: {...}} of one momentum sector's group (real parts)."""
    out = {}
    for ch in channels:
        if ch in g and isinstance(g[ch], h5py.Dataset):
            d = g[ch]
            out[ch] = {"values": np.asarray(d[...], dtype=complex).real, "time_parity": int(attr(d, "time_parity", 1)),
                       "gamma_sink": text(attr(d, "gamma_sink", "?")),
                       "gamma_source": text(attr(d, "gamma_source", "?"))}
    return out


def read_sectors(name, g):
    """[(name, channels)] of one /correlators/<name> group: p = 0 as <name>, each non-zero momentum present as
    <name>/p<nx>_<ny>_<nz>."""
    channels = [text(c) for c in np.atleast_1d(attr(g, "channels", []))]
    momenta = np.asarray(attr(g, "momenta", [[0, 0, 0]]), dtype=int).reshape(-1, 3)
    out = [(name, read_channels(g, channels))]
    for n in momenta[1:]:
        key = momentum_group(n)
        if key in g:
            out.append((f"{name}/{key}", read_channels(g[key], channels)))
    return out


def incomplete(root, name):
    """True when /solves/<name> of this configuration is marked incomplete."""
    key = "solves/" + name
    return key in root and not bool(attr(root[key], "complete", True))


def read_config(cid, root, where, store, warnings):
    """Adds one configuration's correlators to `store` {name: {id: channels}}."""
    if "correlators" not in root:
        warnings.append(f"configuration {cid} ({where}) has no correlators")
        return
    for name, g in root["correlators"].items():
        if incomplete(root, name):
            warnings.append(f"configuration {cid} ({where}): solve {name} is incomplete; left out of {name}")
            continue
        for sector, channels in read_sectors(name, g):
            store.setdefault(sector, {})[cid] = channels


def read_file(path, state):
    """Reads one file into state (ids, extents, store, warnings)."""
    check_file(path)
    with h5py.File(path, "r") as f:
        if "extents" not in f.attrs:
            raise ReportError(f"{path}: not an EmPRiSM-MPI output file (no root attribute 'extents')")
        extents = [int(e) for e in f.attrs["extents"]]
        if state["extents"] is None:
            state["extents"] = extents
        elif extents != state["extents"]:
            raise ReportError(f"{path}: lattice {'x'.join(map(str, extents))} differs from "
                              f"{'x'.join(map(str, state['extents']))} of {state['files'][0]}")
        for cid, root in roots(f, path):
            where = path if root.name == "/" else f"{path}:{root.name}"
            if cid in state["where"]:
                raise ReportError(f"configuration {cid} appears twice: in {state['where'][cid]} and {where}")
            state["where"][cid] = where
            read_config(cid, root, where, state["store"], state["warnings"])
    state["files"].append(path)


def assemble(name, by_config, order, lt, warnings):
    """One correlator's ensemble: the channels every included configuration has, stacked in `order`."""
    ids = [c for c in order if c in by_config]
    missing = [c for c in order if c not in by_config]
    if missing:
        warnings.append(f"correlator {name}: {len(missing)} configuration(s) without it: {', '.join(missing[:5])}"
                        + (" ..." if len(missing) > 5 else ""))
    common = None
    for c in ids:
        chans = set(by_config[c])
        common = chans if common is None else common & chans
    first = by_config[ids[0]]
    channels = {}
    for ch in [c for c in first if c in (common or set())]:
        rows = [by_config[c][ch]["values"] for c in ids]
        if any(r.shape != (lt,) for r in rows):
            raise ReportError(f"correlator {name}/{ch}: a configuration has not {lt} timeslices")
        channels[ch] = dict(first[ch], values=np.stack(rows))
    return {"name": name, "configs": ids, "channels": channels}


def load_ensemble(paths):
    """Reads the correlators of every configuration of the files (see the module's description)."""
    state = {"extents": None, "files": [], "where": {}, "store": {}, "warnings": []}
    try:
        for path in paths:
            try:
                read_file(path, state)
            except ReportError as e:
                named = str(e).startswith(str(path)) or "appears twice" in str(e) or len(paths) == 1
                raise ReportError(str(e) if named else f"{path}: {e}") from e
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise ReportError(f"cannot be read as an EmPRiSM-MPI output file: {e}") from e
    order = sorted(state["where"], key=natural_key)
    lt = state["extents"][3] if state["extents"] else 0
    corrs = {name: assemble(name, state["store"][name], order, lt, state["warnings"])
             for name in sorted(state["store"], key=natural_key)}
    return {"configs": order, "extents": state["extents"], "files": state["files"], "correlators": corrs,
            "warnings": state["warnings"]}
