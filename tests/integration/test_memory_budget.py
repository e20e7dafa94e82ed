# SPDX-License-Identifier: BSD-2-Clause
"""--max-memory: once the tracer's RSS reaches the budget, it keeps no more
labelled stacks, side-data rows or process maps and counts them in lost,
while the kernel's totals (stacks) go on; cycles, phase calls and trace
events are spooled to disk, not held, so they are all kept. The fixture (tick_cycles) prints
each cycle's index as it ends: the number of cycles run is its own count."""
import unittest

import common

CYCLES, SPIN_MS, SLEEP_MS = 60, 5, 2


def run_cycles(rec):
    return sum(1 for l in rec.stdout.splitlines() if l.strip().isdigit())


@common.need_root
class MemoryBudgetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        exe = common.fixture("tick_cycles")
        cmd = [exe, str(CYCLES), str(SPIN_MS), str(SLEEP_MS)]
        # 1 MB: below any tracer's RSS, reached at the first tick
        cls.full = common.record(["--max-memory", "1", "--cycle", "run_cycle"], cmd, wall_split=None)
        cls.plain = common.record(["--cycle", "run_cycle"], cmd, wall_split="cycles")

    def test_reached_budget_counts_what_it_does_not_keep(self):
        r, p = self.full, self.full.profile
        self.assertEqual(run_cycles(r), CYCLES)
        # spooled on disk: the budget does not drop them
        self.assertEqual(len(p["cycles"]), CYCLES)
        self.assertNotIn("cycles_not_kept", p["lost"])
        b = p["self"]["memory_budget"]
        self.assertEqual(b["max_mb"], 1)
        self.assertEqual(p["config"]["max_memory_mb"], 1)
        self.assertEqual(b["times_reached"], 1)
        self.assertIsNotNone(b["reached_at_s"])
        self.assertGreater(b["recording_peak_rss_mb"], 1)
        self.assertIn("--max-memory 1 MB", r.stderr)
        self.assertEqual(sum(1 for l in r.stderr.splitlines() if "--max-memory" in l), 1, r.stderr)
        self.assertNotIn("trace_samples_not_kept", p["lost"])
        # nor labelled stacks: the samples count without thread and cycle
        self.assertGreater(p["lost"]["sample_labels"], 0)
        self.assertLessEqual(p["lost"]["sample_labels"], p["samples"]["total"])
        # the kernel's totals go on: the fixture's spins are in the stacks
        spins = sum(c for s, c in r.folded().items() if "run_cycle" in s.split(";"))
        self.assertGreater(spins, 0)
        self.assertEqual(common.unknown_keys(p), [])

    def test_default_budget_keeps_every_cycle(self):
        r, p = self.plain, self.plain.profile
        self.assertEqual(len(p["cycles"]), run_cycles(r))
        self.assertEqual(len(p["cycles"]), CYCLES)
        self.assertNotIn("cycles_not_kept", p["lost"])
        b = p["self"]["memory_budget"]
        self.assertEqual(b["max_mb"], 1024)
        self.assertIsNone(b["reached_at_s"])
        self.assertEqual(b["times_reached"], 0)
        self.assertNotIn("--max-memory", r.stderr)
        self.assertEqual(common.unknown_keys(p), [])

    def test_bad_budget_is_refused(self):
        for bad in ("0", "-5", "1.5", "2000000", "lots"):
            r = common.record(["--max-memory", bad], ["true"], check=False, wall_split=None)
            self.assertNotEqual(r.proc.returncode, 0, bad)
            self.assertIn("--max-memory", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
