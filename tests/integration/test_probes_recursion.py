# SPDX-License-Identifier: BSD-2-Clause
"""Recursion, nesting, tail calls and calls that never return
(tests/fixtures/exp_recurse.c, exp_abandon.c): inclusive time counted once,
outermost calls only, and later cycles unharmed."""
import unittest

from common import ProbeTestCase, fixture, need_root, record, truth_of


@need_root
class TestRecursion(ProbeTestCase):
    def run_recurse(self, cycles, ms, depth, mutual):
        exe = fixture("exp_recurse")
        rec = record(["--cycle", "rec_cycle", "--phase", "walk=walk", "--phase", "mutual=ping,pong",
                      "--phase", "outer=outer", "--phase", "inner=inner",
                      "--phase", "tail=tail_a", "--phase", "tail_b=tail_b"],
                     [exe, str(cycles), str(ms), str(depth), str(mutual)],
                     wall_split="cycles")  # inner runs inside outer, tail_b inside tail
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertCycleTimes(rec, truth)
        # direct recursion: one outermost call, the whole depth once
        self.assertPhase(rec, "walk", truth, "walk_ms")
        # mutual recursion (two functions, one phase), deeper than the
        # per-thread probe stack when mutual > 8
        self.assertPhase(rec, "mutual", truth, "mutual_ms")
        # nesting of two phases: each inclusive
        self.assertPhase(rec, "outer", truth, "outer_ms")
        self.assertPhase(rec, "inner", truth, "inner_ms", upper_key="inner_call_ms")
        # a tail call: tail_a's frame is not lost when tail_b starts at its sp
        self.assertPhase(rec, "tail", truth, "tail_ms")
        self.assertPhase(rec, "tail_b", truth, "tail_b_ms", upper_key="tail_ms")
        # no double counting: phase time never exceeds the cycle
        for c in p["cycles"]:
            for name, ph in c["phases"].items():
                self.assertLessEqual(ph["ms"], c["duration_ms"], name)
                self.assertAlmostEqual(ph["ms"], ph["thread_ms"], places=3, msg=name)
        self.assertConsistent(rec)
        return rec

    def test_recursion_shallow(self):
        self.run_recurse(5, 2, 4, 6)

    def test_recursion_deeper_than_probe_stack(self):
        self.run_recurse(4, 1, 30, 20)


@need_root
class TestNeverReturns(ProbeTestCase):
    def test_longjmp_and_thread_exit_inside_phases(self):
        exe = fixture("exp_abandon")
        cycles, ms = 9, 3
        rec = record(["--cycle", "ab_cycle", "--phase", "work=work", "--phase", "jump=jumper",
                      "--phase", "quit=quitter"], [exe, str(cycles), str(ms)])
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertFalse(any(c.get("abandoned") for c in p["cycles"]))
        self.assertCycleTimes(rec, truth)
        # two work() calls per cycle, before and after the calls that never return
        self.assertPhase(rec, "work", truth, "work_ms", calls_per_cycle=2)
        # calls that never returned add no time and no calls
        for c in p["cycles"]:
            self.assertNotIn("jump", c["phases"])
            self.assertNotIn("quit", c["phases"])
        probes = {x["spec"]: x for x in p["probes"]}
        self.assertEqual(probes["jumper"]["hits"], cycles // 2)
        self.assertEqual(probes["quitter"]["hits"], (cycles + 2) // 3)
        self.assertConsistent(rec)


if __name__ == "__main__":
    unittest.main()
