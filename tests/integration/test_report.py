# SPDX-License-Identifier: BSD-2-Clause
"""`infertrace report` and `infertrace diff` on real recordings of the
experiment fixture, whose phase times differ by construction."""
import subprocess
import unittest

from common import INFERTRACE, build, need_root, record

ARGS = ["--cycle", "run_cycle", "--phase", "llm_inference=inference", "--phase", "database=database",
        "--phase", "mode=mode", "--count", "tokens=token"]


def experiment():
    return build("experiment", ["experiment.c"], "-O1 -g -fno-omit-frame-pointer -pthread")


@need_root
class TestReportDiff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # base: 20 ms inference; slow: 40 ms inference (a 2x regression)
        cls.base = record(ARGS, [experiment(), "5", "20", "4", "5", "2"])
        cls.slow = record(ARGS, [experiment(), "5", "40", "4", "5", "2"])

    def test_report_summarizes(self):
        p = subprocess.run([INFERTRACE, "report", self.base.dir], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Cycles: 5", p.stdout)
        for phase in ("llm_inference", "database", "mode"):
            self.assertIn(phase, p.stdout)
        self.assertIn("Top on-CPU functions", p.stdout)

    def test_report_bad_input(self):
        p = subprocess.run([INFERTRACE, "report", "/nonexistent"], text=True, stderr=subprocess.PIPE)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("/nonexistent", p.stderr)

    def test_diff_regression_and_speedup(self):
        p = subprocess.run([INFERTRACE, "diff", self.base.dir, self.slow.dir], text=True, stdout=subprocess.PIPE)
        self.assertEqual(p.returncode, 1, p.stdout)
        line = [l for l in p.stdout.splitlines() if l.startswith("phase llm_inference")][0]
        self.assertIn("REGRESSION", line)
        # 20 ms -> 40 ms of CPU per call: +100% on an idle machine; preemption
        # by other load only adds wall time, so at least +50% whatever the load
        change = float(line.split()[5].rstrip("%"))
        self.assertGreater(change, 50)
        # the other way round: faster; the short sleep/spin phases may vary
        # by some tens of percent on a loaded machine, hence the threshold
        p = subprocess.run([INFERTRACE, "diff", "--threshold", "40", self.slow.dir, self.base.dir], text=True,
                           stdout=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stdout)
        line = [l for l in p.stdout.splitlines() if l.startswith("phase llm_inference")][0]
        self.assertIn("faster", line)
        self.assertLess(float(line.split()[5].rstrip("%")), -30)


if __name__ == "__main__":
    unittest.main()
