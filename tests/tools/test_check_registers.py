#!/usr/bin/env python3
"""test_check_registers.py: jobs/check_registers.py on sample compiler reports (hipcc kernel-resource-usage remarks,
ptxas -v lines) against small budget files: kernels within budget pass, a kernel over budget, a spilling kernel, a
pattern that matches nothing and a malformed budget line fail; the repository's budget file parses.
Run by ctest (Tools.CheckRegisters) with the repository root as argument; needs c++filt."""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
CHECKER = os.path.join(REPO, "jobs", "check_registers.py")

XPAY = "_ZN7emprism7backend10for_kernelINS_14DslashInteriorINS_13EpiCloverXpayIfEEEEEEvT_i"
NORM = "_ZN7emprism7backend13reduce_kernelILi1ENS_12Norm2FunctorIdEEEEvT0_iPNS_4SumsIXT_EEE"


def hip_remarks(name, vgprs, agprs=0, scratch=0, vspill=0, sspill=0):
    lines = [f"Function Name: {name}", "SGPRs: 70", f"VGPRs: {vgprs}", f"AGPRs: {agprs}",
             f"ScratchSize [bytes/lane]: {scratch}", "Occupancy [waves/SIMD]: 5", f"SGPRs Spill: {sspill}",
             f"VGPRs Spill: {vspill}", "LDS Size [bytes/block]: 0"]
    return "".join(f"kernels/backend/gpu.hpp:30:1: remark: {'' if i == 0 else '    '}{t} "
                   f"[-Rpass-analysis=kernel-resource-usage]\n" for i, t in enumerate(lines))


def ptxas_lines(name, regs, spill_stores=0):
    return (f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
            f"ptxas info    : Function properties for {name}\n"
            f"    0 bytes stack frame, {spill_stores} bytes spill stores, {spill_stores} bytes spill loads\n"
            f"ptxas info    : Used {regs} registers, used 0 barriers\n")


BUDGETS = """# sample
hip   96  for_kernel<Dslash*<EpiCloverXpay<float> > >
hip  168  reduce_kernel<1, Norm2Functor<double> >
cuda 120  for_kernel<DslashInterior<EpiCloverXpay<float> > >
"""


class CheckRegisters(unittest.TestCase):
    def run_checker(self, kind, log, budgets=BUDGETS):
        with tempfile.TemporaryDirectory() as d:
            lp, bp = os.path.join(d, "build.log"), os.path.join(d, "budgets.txt")
            with open(lp, "w") as f:
                f.write(log)
            with open(bp, "w") as f:
                f.write(budgets)
            r = subprocess.run([sys.executable, CHECKER, kind, lp, "--budgets", bp], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

    def test_hip_within_budget_passes(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 90) + hip_remarks(NORM, 54))
        self.assertEqual(rc, 0, out)
        self.assertIn("for_kernel<DslashInterior<EpiCloverXpay<float> > >", out)

    def test_hip_over_budget_fails(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 104) + hip_remarks(NORM, 54))
        self.assertEqual(rc, 1, out)
        self.assertIn("104 registers > budget 96", out)

    def test_hip_agprs_count_against_the_budget(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 90) + hip_remarks(NORM, 160, agprs=12))
        self.assertEqual(rc, 1, out)
        self.assertIn("172 registers > budget 168", out)

    def test_hip_scratch_fails_within_budget(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 96, scratch=32, vspill=8) + hip_remarks(NORM, 54))
        self.assertEqual(rc, 1, out)
        self.assertIn("spills (scratch 32 B/lane, 8 VGPR spills", out)

    def test_hip_sgpr_spills_to_vgpr_lanes_are_shown_not_failed(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 90, sspill=16) + hip_remarks(NORM, 54))
        self.assertEqual(rc, 0, out)
        self.assertIn("16 spilt to VGPR lanes", out)

    def test_pattern_matching_no_kernel_fails(self):
        rc, out = self.run_checker("hip", hip_remarks(XPAY, 90))
        self.assertEqual(rc, 1, out)
        self.assertIn("no hip kernel matches", out)

    def test_cuda_within_budget_passes_ignoring_hip_budgets(self):
        rc, out = self.run_checker("cuda", ptxas_lines(XPAY, 80))
        self.assertEqual(rc, 0, out)

    def test_cuda_over_budget_fails(self):
        rc, out = self.run_checker("cuda", ptxas_lines(XPAY, 128))
        self.assertEqual(rc, 1, out)
        self.assertIn("128 registers > budget 120", out)

    def test_cuda_spill_fails(self):
        rc, out = self.run_checker("cuda", ptxas_lines(XPAY, 120, spill_stores=16))
        self.assertEqual(rc, 1, out)
        self.assertIn("spill", out)

    def test_malformed_budget_line_is_bad_input(self):
        rc, out = self.run_checker("cuda", ptxas_lines(XPAY, 80), budgets="cuda many for_kernel<*>\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("budgets.txt:1", out)

    def test_no_report_is_bad_input(self):
        rc, out = self.run_checker("hip", "nothing compiled\n")
        self.assertEqual(rc, 2, out)

    def test_repository_budgets_parse(self):
        sys.path.insert(0, os.path.join(REPO, "jobs"))
        import check_registers
        path = os.path.join(REPO, "kernels", "register_budgets.txt")
        for kind in ("hip", "cuda"):
            self.assertGreater(len(check_registers.read_budgets(path, kind)), 0, kind)


if __name__ == "__main__":
    unittest.main(verbosity=2)
