"""Tests of analysis/ncu_sass.py (Nsight Compute's source page of one kernel, reduced to load rounds) on a CSV written
here in ncu's layout (`--page source --csv --print-source sass`: the kernel's name on the first line, the column names
on the second, one row per SASS instruction, counts with thousands separators): the stall reasons' shares, the rounds
(a global load after a long-scoreboard wait of at least --min-wait of the samples starts one; a predicated load counts,
a wait below the threshold does not), the hottest instructions, and one line with exit status 2 for a file that is not
a source page."""
import pathlib
import subprocess
import sys

from conftest import fails_with_one_line

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "analysis" / "ncu_sass.py"
COLUMNS = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "stall_long_sb",
           "stall_no_inst", "stall_selected", "stall_long_sb (Not Issued)"]
# (source, all samples, long scoreboard, no instruction, selected): 1000 samples in all
CODE = [
    ("LDG.E.128 R4, desc[UR4][R2.64]", 10, 0, 10, 0),
    ("@P0 LDG.E.64 R8, desc[UR4][R2.64+0x200]", 0, 0, 0, 0),
    ("FMUL R1, R4, R8", 300, 290, 0, 10),        # round 0 waits
    ("LDG.E R9, desc[UR4][R6.64]", 40, 0, 40, 0),   # round 1
    ("FFMA R1, R9, R1, R1", 4, 4, 0, 0),           # 0.4% of the samples: below the 0.5% of a wait
    ("@!P1 LDG.E R10, desc[UR4][R6.64+0x4]", 6, 0, 0, 6),  # still round 1
    ("FADD R1, R10, R1", "1,140", "1,100", 0, 40),  # counts as ncu prints them: round 1 waits
    ("STG.E desc[UR4][R12.64], R1", 0, 0, 0, 0),
    ("LDG.E.EF.64 R14, desc[UR4][R16.64]", 0, 0, 0, 0),  # round 2
    ("EXIT", 0, 0, 0, 0),
]


def csv_line(values):
    return ",".join(f'"{v}"' for v in values)


def write_csv(path):
    lines = ["==PROF== Disconnected from process 1",
             csv_line(["Kernel Name", "void emprism::backend::for_kernel<Kern>(T1, int)", ""]), csv_line(COLUMNS)]
    for k, (src, samples, long_sb, no_inst, selected) in enumerate(CODE):
        lines.append(csv_line([hex(0x1000 + 16 * k), "      " + src, samples, "32,768", long_sb, no_inst, selected,
                               "0"]))
    path.write_text("\n".join(lines) + "\n")


def run(tmp_path, *extra):
    p = tmp_path / "k.csv"
    write_csv(p)
    return subprocess.run([sys.executable, str(SCRIPT), str(p), *extra], capture_output=True, text=True,
                          check=True).stdout


def round_rows(out):
    lines = out.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.split()[:2] == ["round", "first"])
    rows = []
    for ln in lines[i + 1:]:
        if not ln.strip():
            break
        rows.append(ln.split())
    return rows


def test_totals_and_stall_reasons(tmp_path):
    out = run(tmp_path)
    assert "10 instructions, 1500 samples, 327680 warp instructions executed" in out
    # long_sb 1394 of 1500, no_inst 50, selected 56: sorted by share, without the "(Not Issued)" column
    assert "stall reasons, % of the samples: long_sb 92.9, selected 3.7, no_inst 3.3" in out
    assert "Not Issued" not in out


def test_rounds_start_at_a_load_after_a_wait(tmp_path):
    rows = round_rows(run(tmp_path))
    # round, first, instr, loads, stores, samples%, long_sb%, no_inst%
    assert rows == [
        ["0", "0", "3", "2", "0", "20.7", "19.3", "0.7"],
        ["1", "3", "5", "2", "1", "79.3", "73.6", "2.7"],
        ["2", "8", "2", "1", "0", "0.0", "0.0", "0.0"],
    ]


def test_a_higher_threshold_merges_rounds(tmp_path):
    # 290 / 1500 = 19.3% and 1100 / 1500 = 73.3%: at 50% only the second wait counts, so the first round runs on
    rows = round_rows(run(tmp_path, "--min-wait", "0.5"))
    assert [r[:4] for r in rows] == [["0", "0", "8", "4"], ["1", "8", "2", "1"]]


def test_hottest_instructions_in_program_order(tmp_path):
    out = run(tmp_path, "--hot", "2")
    hot = out.split("hottest instructions (2):\n")[1].splitlines()
    assert hot[0].split()[:3] == ["2", "20.0%", "long_sb"] and "FMUL R1, R4, R8" in hot[0]
    assert hot[1].split()[:3] == ["6", "76.0%", "long_sb"] and "FADD R1, R10, R1" in hot[1]


def test_a_file_that_is_not_a_source_page_fails_with_one_line(tmp_path):
    p = tmp_path / "table.csv"  # the metrics CSV of jobs/device/profile.sh, not a source page
    p.write_text('"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","gpu__time_duration.sum","1"\n')
    fails_with_one_line(SCRIPT, (p, tmp_path / "missing.csv"))
