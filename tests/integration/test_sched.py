# SPDX-License-Identifier: BSD-2-Clause
"""Scheduler tracing against fixtures whose on-CPU, blocked and run-queue
times are known by construction (tests/fixtures/sched_fix.c)."""
import os
import unittest

import common

FIX = None


def fixture():
    global FIX
    if FIX is None:
        FIX = common.build("sched_fix", ["sched_fix.c"], "-O1 -g -fno-omit-frame-pointer -pthread")
    return FIX


def check_split(tc, obj, what, tol=2.0):
    """on-CPU + run-queue + blocked + unattributed = wall, unattributed <= tol %."""
    tc.assertLessEqual(obj["unattributed_percent"], tol, f"{what}: {obj}")


@common.need_root
class SchedTest(unittest.TestCase):
    def test_sleep_spin_cycles(self):
        r = common.record(["--cycle", "cycle_sleepspin", "--phase", "spin=spin_ms"],
                          [fixture(), "sleepspin", "20"])
        cycles = r.profile["cycles"]
        self.assertEqual(len(cycles), 20)
        for c in cycles:
            check_split(self, c, f"cycle {c['index']}")
            self.assertAlmostEqual(c["oncpu_ms"], 20, delta=2, msg=c)
            self.assertAlmostEqual(c["offcpu_ms"], 10, delta=1, msg=c)
            self.assertAlmostEqual(c["blocked"]["sleep"], 10, delta=1, msg=c)
            spin = c["phases"]["spin"]
            check_split(self, spin, f"cycle {c['index']} phase spin")
            self.assertAlmostEqual(spin["oncpu_ms"], 20, delta=2, msg=spin)
            self.assertLess(spin["offcpu_ms"], 1, msg=spin)

    def test_whole_run_and_offcpu_stack(self):
        r = common.record([], [fixture(), "sleepspin", "30"])
        (c,) = [c for c in r.profile["cycles"] if c["pid"] == r.profile["pids"][0]]
        check_split(self, c, "whole run")
        self.assertAlmostEqual(c["oncpu_ms"], 600, delta=60)
        self.assertAlmostEqual(c["offcpu_ms"], 300, delta=30)
        stacks = r.folded("offcpu.folded")
        top = max(stacks, key=stacks.get)
        self.assertIn("cycle_sleepspin", top)
        self.assertIn("do_nanosleep_[k]", top)
        self.assertTrue(top.startswith("sched_fix;"), top)
        self.assertAlmostEqual(stacks[top] / 1e3, 300, delta=30)  # microseconds
        self.assertIn("cycle_sleepspin", r.profile["offcpu"]["top_stacks"][0]["stack"])
        cs = r.profile["sched"]["context_switches"]
        self.assertGreaterEqual(cs["voluntary"], 30)

    def test_runq_contention(self):
        """4 busy threads on one CPU wait ~3/4 of the time; 1 thread hardly."""
        taskset = "/usr/bin/taskset"
        if not os.path.exists(taskset):
            self.skipTest("taskset missing")
        four = common.record([], [taskset, "-c", "0", fixture(), "threads", "4", "300"])
        one = common.record([], [taskset, "-c", "1", fixture(), "threads", "1", "300"])
        p4 = [p for p in four.profile["sched"]["per_process"] if p["comm"] == "sched_fix"][0]
        p1 = [p for p in one.profile["sched"]["per_process"] if p["comm"] == "sched_fix"][0]
        self.assertGreater(p4["runq_share_percent"], 60, p4)
        self.assertAlmostEqual(p4["oncpu_ms"], 1200, delta=150)
        self.assertGreater(p4["runq"]["p50_us"], 1000)
        self.assertLess(p1["runq_share_percent"], p4["runq_share_percent"] / 2, (p1, p4))
        self.assertGreater(four.profile["sched"]["avg_runnable_threads"],
                           one.profile["sched"]["avg_runnable_threads"] * 2)


if __name__ == "__main__":
    unittest.main()
