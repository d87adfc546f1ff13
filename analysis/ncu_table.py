#!/usr/bin/env python3
"""ncu_table.py: one row per kernel launch from Nsight Compute's CSV (ncu --csv --print-units base, the metrics of
jobs/device/profile.sh): time, DRAM bytes read and written, their rate, L2 hit rate, achieved occupancy, registers.

    python3 analysis/ncu_table.py profile.csv

Only the standard library; the metric names are those profile.sh asks for (a missing one prints as '-')."""
import csv
import re
import sys


def short(name):
    """The kernel's functor without namespaces and the link format, e.g. DslashInterior<EpiClover<float, false>>."""
    m = re.search(r"for_kernel\w*<(?:\d+, )?(.*)>\(", name)
    s = m.group(1) if m else name.split("(")[0]
    s = s.replace("emprism::", "").replace("quda::", "")
    return s[:90]


def main(path):
    rows = {}
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.startswith('"')]  # ncu prints its own lines (==PROF==) before the CSV
    for r in csv.DictReader(lines):
        k = rows.setdefault(r["ID"], {"name": short(r["Kernel Name"])})
        try:
            k[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            k[r["Metric Name"]] = r["Metric Value"]

    def get(k, m, scale=1.0, fmt="{:.1f}"):
        v = k.get(m)
        return fmt.format(v * scale) if isinstance(v, float) else "-"

    print(f"{'us':>8} {'read MB':>8} {'write MB':>8} {'GB/s':>7} {'L2 hit%':>7} {'occ%':>5} {'regs':>4} "
          f"{'block':>5}  kernel")
    for _, k in sorted(rows.items(), key=lambda kv: int(kv[0])):
        t = k.get("gpu__time_duration.sum")
        rd, wr = k.get("dram__bytes_read.sum"), k.get("dram__bytes_write.sum")
        rate = (rd + wr) / t if all(isinstance(v, float) for v in (t, rd, wr)) and t > 0 else None
        print(f"{get(k, 'gpu__time_duration.sum', 1e-3):>8} {get(k, 'dram__bytes_read.sum', 1e-6):>8} "
              f"{get(k, 'dram__bytes_write.sum', 1e-6):>8} {('%.0f' % rate) if rate else '-':>7} "
              f"{get(k, 'lts__t_sector_hit_rate.pct'):>7} "
              f"{get(k, 'sm__warps_active.avg.pct_of_peak_sustained_active', 1, '{:.0f}'):>5} "
              f"{get(k, 'launch__registers_per_thread', 1, '{:.0f}'):>4} "
              f"{get(k, 'launch__block_size', 1, '{:.0f}'):>5}  {k['name']}")


if __name__ == "__main__":
    main(sys.argv[1])
