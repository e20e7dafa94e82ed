# SPDX-License-Identifier: BSD-2-Clause
"""Waiting for another thread is not I/O: the fixture's main thread reads a
pipe that its worker thread answers after spinning WORK ms (EXTRA ms more
in cycle SLOW). The main thread's blocked time in each cycle must be
classed waiting_for_thread, within tolerance of the fixture's own clock
(its wait, less the time /proc/thread-self/schedstat saw it runnable),
with the worker's phase (compute) as the waker's; wakeup.folded must hold
the worker's answering function with that weight; the slow cycle's
tail-cycle cause must name waiting_for_thread, not io. The main thread's
sleep (phase nap), ended by a timer while the worker spins, stays sleep."""
import statistics
import unittest

import common

CYCLES, WORK, SLOW, EXTRA, NAP = 16, 20, 9, 40, 5
REL, ABS_MS = 0.10, 1.5


@common.need_root
class WakeupTest(common.ProbeTestCase):
    REL, ABS_MS = REL, ABS_MS  # assertClose's tolerance

    @classmethod
    def setUpClass(cls):
        exe = common.fixture("wakeup_exp")
        cls.rec = common.record(["--cycle", "run_cycle", "--phase", "compute=compute", "--phase", "nap=nap"],
                                [exe, str(CYCLES), str(WORK), str(SLOW), str(EXTRA), str(NAP)])
        cls.truth = common.truth_of(cls.rec)
        cls.cycles = cls.rec.profile["cycles"]

    def test_blocked_is_waiting_for_thread(self):
        self.assertEqual(len(self.cycles), CYCLES)
        for c in self.cycles:
            i, b = c["index"], c["blocked"]
            # the main thread's read, less what of it the kernel's own
            # schedstat saw it on a CPU or waiting for one (a busy machine
            # delays its reaching the read while the worker already computes)
            hi = self.truth["wait_ms"][i]
            lo = hi - self.truth["wait_runnable_ms"][i]
            got = b["waiting_for_thread"]
            self.assertTrue(lo - ABS_MS <= got <= hi + ABS_MS,
                            f"cycle {i} waiting_for_thread {got:.2f} ms, worker computed {lo:.2f} ms, "
                            f"main thread waited {hi:.2f} ms")
            for k in ("io", "lock", "other"):
                self.assertLess(b[k], 0.5, f"cycle {i}: {k} {b[k]:.2f} ms")
            # the timer that ends the nap interrupts the spinning worker: still a sleep
            self.assertClose(b["sleep"], NAP, f"cycle {i} sleep")
            self.assertLess(c["phases"]["nap"]["blocked"]["waiting_for_thread"], 0.5)

    def test_waker_phase(self):
        w = self.rec.profile["offcpu"]["waiting_for_thread"]
        got = w["by_waker_phase"].get("compute", 0)
        blocked = sum(w - r for w, r in zip(self.truth["wait_ms"], self.truth["wait_runnable_ms"]))
        self.assertTrue(blocked - ABS_MS <= got <= sum(self.truth["wait_ms"]) + ABS_MS,
                        f"waited on compute {got:.2f} ms, the fixture blocked {blocked:.2f} ms")
        self.assertClose(self.rec.profile["offcpu"]["blocked"]["waiting_for_thread"], w["total_ms"], "total")

    def test_wakeup_folded(self):
        st = self.rec.folded("wakeup.folded")
        done = sum(v for k, v in st.items() if "worker;compute;worker_done;" in k) / 1e3
        w = self.rec.profile["offcpu"]["waiting_for_thread"]
        self.assertClose(done, w["by_waker_phase"]["compute"], "wakeup.folded under worker_done (ms)")
        blocked = sum(w - r for w, r in zip(self.truth["wait_ms"], self.truth["wait_runnable_ms"]))
        self.assertGreaterEqual(done, blocked - ABS_MS)
        self.assertFalse([k for k in st if "hrtimer" in k], "a timer's wake-up is no thread's")

    def test_tail_cause_names_the_thread_wait(self):
        tail = {t["cycle"]: t for t in self.rec.profile["tail_cycles"]}
        self.assertIn(SLOW, tail)
        causes = {(c["kind"], c["name"]): c["excess_ms"] for c in tail[SLOW]["causes"]}
        self.assertIn(("blocked", "waiting_for_thread"), causes)
        self.assertNotIn(("blocked", "io"), causes)
        # the blocked part of each wait, by the fixture's clock and schedstat
        waits = [w - r for w, r in zip(self.truth["wait_ms"], self.truth["wait_runnable_ms"])]
        self.assertClose(causes[("blocked", "waiting_for_thread")], waits[SLOW] - statistics.median(waits),
                        "slow cycle's excess wait")


if __name__ == "__main__":
    unittest.main()
