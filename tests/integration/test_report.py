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

    def diff_line(self, a, b, threshold):
        """`diff --threshold T A B`'s llm_inference row, checked against the two
        recordings' own figures: ms per call, the change, its label and the
        exit status follow from them (not from how much slower the slow run
        came out on this machine: a ratio of two live runs)."""
        p = subprocess.run([INFERTRACE, "diff", "--threshold", str(threshold), a.dir, b.dir], text=True,
                           stdout=subprocess.PIPE)
        line = [l for l in p.stdout.splitlines() if l.startswith("phase llm_inference")][0]
        per_call = [r.profile["phases"]["llm_inference"]["total_ms"] / r.profile["phases"]["llm_inference"]["calls"]
                    for r in (a, b)]
        want = 100 * (per_call[1] / per_call[0] - 1)
        f = line.split()
        self.assertAlmostEqual(float(f[3]), per_call[0], delta=0.001, msg=line)
        self.assertAlmostEqual(float(f[4]), per_call[1], delta=0.001, msg=line)
        self.assertAlmostEqual(float(f[5].rstrip("%")), want, delta=0.1, msg=line)
        label = "REGRESSION" if want > threshold else "faster" if want < -threshold else None
        for word in ("REGRESSION", "faster"):
            (self.assertIn if word == label else self.assertNotIn)(word, line)
        if want > threshold:
            self.assertEqual(p.returncode, 1, p.stdout)
        return want

    def test_diff_regression_and_speedup(self):
        # both ways (20 ms vs 40 ms of CPU per call; how far apart the wall
        # times came out depends on the load), then a threshold just above
        # and just below the change
        change = self.diff_line(self.base, self.slow, 5)
        self.diff_line(self.slow, self.base, 5)
        self.diff_line(self.base, self.slow, abs(change) + 1)
        if abs(change) > 1:
            self.diff_line(self.base, self.slow, abs(change) - 1)


if __name__ == "__main__":
    unittest.main()
