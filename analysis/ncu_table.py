#!/usr/bin/env python3
"""ncu_table.py: one row per kernel launch from Nsight Compute's CSV (ncu --csv --print-units base, the metrics of
jobs/device/profile.sh): time, DRAM bytes read and written, their rate, L2 hit rate, achieved occupancy, registers,
and the L2 fabric between the two L2 partitions of an H100/H200: the bytes that crossed it (its sectors, 32 bytes
each), their rate, their share of the DRAM bytes and the fabric's active cycles (% of the elapsed ones). On an H200
the fp32 hopping kernels with links of 12 and 18 stop at about 2.35 TB/s over the fabric (BENCHMARKS.md, 2026-11-29).

    python3 analysis/ncu_table.py profile.csv

Only the standard library; the metric names are those profile.sh asks for (a missing one prints as '-'). A file that
cannot be read or is not ncu's metrics CSV: one line on stderr, exit status 2."""
import csv
import re
import sys

SECTOR_BYTES = 32  # an L2 sector
FABRIC_SECTORS = "lts__t_sectors_srcunit_ltcfabric.sum"
FABRIC_ACTIVE = "lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed"


def short(name):
    """The kernel's functor without namespaces, e.g. DslashInterior<EpiClover<float, false>, 18>; QUDA's kernels
    (Kernel1D/2D/3D<functor, its argument>) by the functor, the argument's kind and its innermost argument type, e.g.
    Kernel3D<dslash_functor, wilsonCloverPreconditioned, WilsonCloverArg<short, 3, 4, 12, 0>>."""
    name = name.replace("emprism::", "").replace("quda::", "")
    m = re.search(r"for_kernel\w*<(?:\d+, )?(.*)>\(", name)
    if m:
        return m.group(1)[:90]
    q = re.search(r"(Kernel\dD)<(\w+), (\w+)<(\w+)", name)
    if q:
        parts = [q.group(2), q.group(4) if q.group(3).endswith("_arg") else q.group(3)]
        inner = re.search(r"\w+Arg<[^<>]*>", name)  # an argument type with plain parameters only
        if inner:
            parts.append(inner.group(0))
        return f"{q.group(1)}<{', '.join(parts)}>"[:90]
    return name.split("(")[0][:90]


def ratio(a, b):
    """a / b where both are numbers and b > 0 (a rate per ns, or a share), else None."""
    return a / b if isinstance(a, float) and isinstance(b, float) and b > 0 else None


def fail(message, tool="ncu_table.py"):
    """Bad input: one line on stderr naming the tool, exit status 2 (analysis/ncu_sass.py too)."""
    print(f"{tool}: {message}", file=sys.stderr)
    sys.exit(2)


def csv_lines(path, tool="ncu_table.py"):
    """The CSV lines of an ncu output file (ncu prints its own lines, ==PROF==, before the CSV); fail() when the file
    cannot be read."""
    try:
        with open(path, newline="") as f:
            return [ln for ln in f if ln.startswith('"')]
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}", tool)


def records(path):
    """ncu's rows (one per launch and metric); exits 2 with one line when the file cannot be read or is not ncu's
    metrics CSV."""
    reader = csv.DictReader(csv_lines(path))
    if not {"ID", "Kernel Name", "Metric Name", "Metric Value"} <= set(reader.fieldnames or []):
        fail(f"{path} is not ncu's metrics CSV (ncu --csv --print-units base --metrics ...)")
    return list(reader)


def main(path):
    rows = {}
    for r in records(path):
        k = rows.setdefault(r["ID"], {"name": short(r["Kernel Name"])})
        try:
            k[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            k[r["Metric Name"]] = r["Metric Value"]

    def get(k, m, scale=1.0, fmt="{:.1f}"):
        v = k.get(m)
        return fmt.format(v * scale) if isinstance(v, float) else "-"

    print(f"{'us':>8} {'read MB':>8} {'write MB':>8} {'GB/s':>7} {'L2 hit%':>7} {'occ%':>5} {'regs':>4} "
          f"{'block':>5} {'fab MB':>7} {'fab GB/s':>8} {'fab/DRAM':>8} {'fab act%':>8}  kernel")
    for _, k in sorted(rows.items(), key=lambda kv: int(kv[0])):
        t = k.get("gpu__time_duration.sum")
        rd, wr = k.get("dram__bytes_read.sum"), k.get("dram__bytes_write.sum")
        dram = rd + wr if all(isinstance(v, float) for v in (rd, wr)) else None
        sectors = k.get(FABRIC_SECTORS)
        fab = SECTOR_BYTES * sectors if isinstance(sectors, float) else None
        rate, fab_rate, share = ratio(dram, t), ratio(fab, t), ratio(fab, dram)
        print(f"{get(k, 'gpu__time_duration.sum', 1e-3):>8} {get(k, 'dram__bytes_read.sum', 1e-6):>8} "
              f"{get(k, 'dram__bytes_write.sum', 1e-6):>8} {('%.0f' % rate) if rate else '-':>7} "
              f"{get(k, 'lts__t_sector_hit_rate.pct'):>7} "
              f"{get(k, 'sm__warps_active.avg.pct_of_peak_sustained_active', 1, '{:.0f}'):>5} "
              f"{get(k, 'launch__registers_per_thread', 1, '{:.0f}'):>4} "
              f"{get(k, 'launch__block_size', 1, '{:.0f}'):>5} "
              f"{get(k, FABRIC_SECTORS, SECTOR_BYTES * 1e-6):>7} "
              f"{('%.0f' % fab_rate) if fab_rate else '-':>8} {('%.3f' % share) if share else '-':>8} "
              f"{get(k, FABRIC_ACTIVE):>8}  {k['name']}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: ncu_table.py PROFILE.csv")
    main(sys.argv[1])
