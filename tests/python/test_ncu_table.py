"""Tests of analysis/ncu_table.py (jobs/device/profile.sh's reader of Nsight Compute's CSV) on a CSV written here in
ncu's layout (ncu --csv --print-units base: one row per launch and metric, numbers with thousands separators, the
profiler's own "==PROF==" lines before the header): one row per launch, in launch order, with the time, the DRAM
bytes and their rate computed from them, the L2 fabric's bytes (32 per sector), rate and share of the DRAM bytes, and
the functor's name without the launcher and namespaces (QUDA's kernels by their functor and argument); one line
and exit status 2 for a file that is not ncu's metrics CSV."""
import pathlib
import subprocess
import sys

from conftest import fails_with_one_line

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "analysis" / "ncu_table.py"
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
KERNEL = {
    "0": ("void emprism::backend::for_kernel_sized<128, emprism::DslashInterior<emprism::EpiClover<float, false>, 18>>"
          "(T2, int)"),
    "1": "void emprism::backend::reduce_kernel<1, emprism::CgUpdateFunctor<float>>(T2, int, Sums<1>*)",
}
METRICS = {  # ID -> metric -> value as ncu prints it
    "0": {"gpu__time_duration.sum": "380,000", "dram__bytes_read.sum": "1,000,000,000",
          "dram__bytes_write.sum": "140,000,000", "launch__registers_per_thread": "80",
          "lts__t_sectors_srcunit_ltcfabric.sum": "14,680,071",
          "lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed": "94.97"},
    "1": {"gpu__time_duration.sum": "200,000", "dram__bytes_read.sum": "400,000,000",
          "dram__bytes_write.sum": "200,000,000"},
}


# QUDA's kernels as ncu named them in jobs/device/profile.sh's call of 2026-12-02 (its clover copy and its half Dslash)
QUDA_KERNEL = {
    "0": ("enable_if<use_kernel_arg<T2>(), void>::type Kernel2D<CloverCopy, CopyCloverArg<double, double, "
          "clover::QDPOrder<double, 72>, clover::FloatNOrder<double, 72, 2, 0, 0, 0>>, 0>(T2)"),
    "1": ("enable_if<use_kernel_arg<T2>(), void>::type Kernel3D<dslash_functor, dslash_functor_arg<"
          "wilsonCloverPreconditioned, packShmem, 1, 0, 0, 5, WilsonCloverArg<short, 3, 4, 12, 0>>, 0>(T2)"),
}
QUDA_METRICS = {"0": {"gpu__time_duration.sum": "577,400"}, "1": {"gpu__time_duration.sum": "174,200"}}


def write_csv(path, kernels=KERNEL, metrics=METRICS, order=("1", "0")):  # out of order: the table sorts by launch
    lines = ["==PROF== Connected to process 1", HEADER]
    for i in order:
        for m, v in metrics[i].items():
            lines.append(f'"{i}","1","emprism-mpi","h","{kernels[i]}","1","7","(128, 1, 1)","(8192, 1, 1)","0","9.0",'
                         f'"Command line profiler metrics","{m}","-","{v}"')
    path.write_text("\n".join(lines) + "\n")


def table_rows(tmp_path, **csv):
    csv_path = tmp_path / "p.csv"
    write_csv(csv_path, **csv)
    out = subprocess.run([sys.executable, str(SCRIPT), str(csv_path)], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[1:]


def test_one_row_per_launch_with_rate_from_bytes_and_time(tmp_path):
    rows = table_rows(tmp_path)
    assert len(rows) == 2
    first = rows[0].split()
    assert first[0] == "380.0" and first[1] == "1000.0" and first[2] == "140.0"
    assert first[3] == str(round((1e9 + 1.4e8) / 380e-6 / 1e9))  # GB/s from the bytes and the time: 3000
    assert first[6] == "80" and rows[0].endswith("DslashInterior<EpiClover<float, false>, 18>")
    assert rows[1].split()[3] == "3000" and "CgUpdateFunctor<float>" in rows[1] and "emprism::" not in rows[1]
    assert rows[1].split()[4] == "-"  # a metric ncu did not print


def test_fabric_bytes_rate_and_share_from_sectors(tmp_path):
    first, second = (r.split() for r in table_rows(tmp_path))
    fabric = 32 * 14680071  # bytes: 32 per sector
    assert first[8] == f"{fabric / 1e6:.1f}"  # 469.8 MB
    assert first[9] == str(round(fabric / 380e3))  # GB/s over 380 us: 1236
    assert first[10] == f"{fabric / (1e9 + 1.4e8):.3f}"  # share of the DRAM bytes: 0.412
    assert first[11] == "95.0"
    assert second[8:12] == ["-", "-", "-", "-"]  # ncu printed no fabric metric for this launch


def test_quda_kernels_named_by_functor_and_argument(tmp_path):
    rows = table_rows(tmp_path, kernels=QUDA_KERNEL, metrics=QUDA_METRICS)
    assert rows[0].split()[0] == "577.4" and rows[0].endswith("Kernel2D<CloverCopy, CopyCloverArg>")
    assert rows[1].split()[0] == "174.2"
    assert rows[1].endswith("Kernel3D<dslash_functor, wilsonCloverPreconditioned, WilsonCloverArg<short, 3, 4, 12, 0>>")


def test_a_file_that_is_not_ncus_metrics_csv_fails_with_one_line(tmp_path):
    p = tmp_path / "sass.csv"  # a source page (analysis/ncu_sass.py's input), not a metrics CSV
    p.write_text('"Kernel Name","k",""\n"Address","Source","Warp Stall Sampling (All Samples)"\n')
    fails_with_one_line(SCRIPT, (p, tmp_path / "missing.csv"))
