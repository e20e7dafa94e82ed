# SPDX-License-Identifier: BSD-2-Clause
"""The on-CPU / run-queue / blocked split at every cycle and phase edge
(tests/fixtures/edges.c): phases of 1, 5 and 20 ms of CPU time back to back,
alone, with a sleep inside each, and beside a busy thread on the same CPU.
Every cycle's every phase must add up to its wall time (common.check_wall_split,
which record() runs); the rest is checked against the fixture's own clocks."""
import json
import os
import unittest

import common

PHASES = ("p1", "p5", "p20")
LENGTH = {"p1": 1, "p5": 5, "p20": 20}
CYCLES = 15
# how far apart the kernel (schedstat) and the tracer put the ends of one
# block: the kernel's begins where it dequeues the thread, the tracer's at
# the switch after the scheduler picked the next task (measured up to 0.06
# ms apart on a loaded 2-vCPU VM)
CLOCKS_MS = 0.1


@common.need_root
class EdgesTest(unittest.TestCase):
    def run_edges(self, *mode):
        rec = common.record(["--cycle", "run_cycle", "--phase", "p1=phase_1ms", "--phase", "p5=phase_5ms",
                             "--phase", "p20=phase_20ms"], [common.fixture("edges"), str(CYCLES)] + list(mode))
        p = rec.profile
        truth = json.loads([l for l in rec.stdout.splitlines() if l.startswith("{")][-1])
        self.assertTrue(p["sched"]["available"], p["sched"])
        self.assertEqual(len(p["cycles"]), CYCLES)
        # the invariant was checked on every cycle and every phase
        self.assertEqual(rec.split_checks, CYCLES * (1 + len(PHASES)))
        self.assertEqual(p["sched"]["phase_unattributed"]["ms"], 0, p["sched"]["phase_unattributed"])
        for i, c in enumerate(p["cycles"]):
            for name in PHASES:
                ph = c["phases"][name]
                self.assertEqual(ph["calls"], 1, f"cycle {i} {name}")
                # the probes' window lies inside the fixture's clock reads
                self.assertLessEqual(ph["ms"], truth[f"wall_{LENGTH[name]}ms"][i] + 0.001, f"cycle {i} {name}")
                # time on a CPU is the phase's whole wall unless it waited or slept
                self.assertLessEqual(ph["oncpu_ms"], ph["ms"] + 1e-6)
        return rec, truth

    def test_cpu_bound_phases_back_to_back(self):
        rec, truth = self.run_edges("spin")
        for c in rec.profile["cycles"]:
            for name in PHASES:
                # a spin never blocks
                self.assertLess(c["phases"][name]["offcpu_ms"], 0.05, c["phases"][name])

    def test_sleep_inside_each_phase(self):
        rec, truth = self.run_edges("sleep")
        for i, c in enumerate(rec.profile["cycles"]):
            for name in PHASES:
                ph = c["phases"][name]
                L = LENGTH[name]
                # the phase blocks only in its sleep: its blocked time is the
                # kernel's for that sleep (the fixture's wall clock less what
                # its schedstat saw it on a CPU or waiting for one, at least
                # and at most), but for where each puts the block's ends
                lo, hi = truth[f"sleep_blocked_lo_{L}ms"][i], truth[f"sleep_blocked_hi_{L}ms"][i]
                self.assertTrue(lo - CLOCKS_MS <= ph["offcpu_ms"] <= hi + CLOCKS_MS,
                                f"cycle {i} {name}: {ph}, the fixture's sleep blocked {lo:.4f}-{hi:.4f} ms")
                # it blocked where the fixture saw a voluntary switch in it:
                # one preempted past its end before it reached schedule()
                # never blocks (all of it is then run-queue wait)
                if truth[f"blocked_{L}ms"][i]:
                    self.assertGreater(ph["offcpu_ms"], 0, f"cycle {i} {name}: {ph}")
                self.assertGreaterEqual(ph["blocked"]["sleep"], ph["offcpu_ms"] * 0.99, ph)

    def test_busy_thread_on_the_same_cpu(self):
        for mode in ("spin", "sleep"):
            with self.subTest(mode=mode):
                rec, truth = self.run_edges(mode, "hog")
                runq = sum(c["phases"][n]["runq_wait_ms"] for c in rec.profile["cycles"] for n in PHASES)
                self.assertGreater(runq, 0, "the busy thread on the same CPU made the phases wait")
                # the busy thread is in no phase: its time is not in theirs
                for c in rec.profile["cycles"]:
                    for name in PHASES:
                        ph = c["phases"][name]
                        self.assertEqual(ph["thread_ms"], ph["ms"])


if __name__ == "__main__":
    unittest.main()
