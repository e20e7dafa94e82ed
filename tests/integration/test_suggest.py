# SPDX-License-Identifier: BSD-2-Clause
"""A loop recorded without a cycle spec gets a suggested --cycle in record's
last lines, the report and profile.json: run_cycle in py_stacks.py's loop
(every CPython found) and in the C fixture experiment.c, whose loops call
it once per iteration; nothing for a run with no loop."""
import os
import subprocess
import unittest

from common import FIXTURES, INFERTRACE, PYTHONS, fixture, need_root, record


@need_root
class TestSuggestedCycle(unittest.TestCase):
    def check(self, rec, cycles, expected, min_bursts=None):
        sg = rec.profile.get("suggested_cycle")
        self.assertIsNotNone(sg, rec.stderr)
        self.assertEqual(sg["option"], "--cycle")
        self.assertEqual(sg["function"], expected[1])
        self.assertIn(f"suggested cycle: --cycle {expected[0]} (seen in ", rec.stderr)
        # at most one burst per iteration; the first one or two may be missed
        self.assertLessEqual(sg["bursts"], cycles)
        self.assertGreaterEqual(sg["bursts"], cycles - 2 if min_bursts is None else min_bursts)
        rep = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE, check=True).stdout
        self.assertIn(f"Suggested cycle: --cycle {expected[0]} (seen in ", rep)

    @unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
    def test_python_loop(self):
        cycles = 10
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = record([], [python, os.path.join(FIXTURES, "py_stacks.py"), "loop", str(cycles)])
                self.check(rec, cycles, ("py:run_cycle", "run_cycle (py_stacks.py)"))

    def test_native_loop(self):
        cycles = 16
        # per cycle: 30 ms inference, 20 ms database sleep, 10 ms mode. On-CPU
        # samples only: when no sample falls in mode, one cycle's inference
        # runs on into the next one's in the timeline (one burst for two).
        # At 499 Hz each cycle has ~20 samples (at 99 Hz, ~4: a busy machine
        # left too few to see a period)
        rec = record(["-F", "499"], [fixture("experiment"), str(cycles), "30", "5", "20", "10"])
        self.check(rec, cycles, ("run_cycle", "run_cycle"), min_bursts=cycles // 2)

    def test_no_loop(self):
        rec = record([], ["sleep", "0.3"])
        self.assertNotIn("suggested_cycle", rec.profile)
        self.assertNotIn("suggested cycle", rec.stderr)

    def test_not_with_a_cycle_spec(self):
        rec = record(["--cycle", "run_cycle"], [fixture("experiment"), "6", "30", "5", "20", "10"])
        self.assertNotIn("suggested_cycle", rec.profile)


if __name__ == "__main__":
    unittest.main()
