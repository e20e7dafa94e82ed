# SPDX-License-Identifier: BSD-2-Clause
"""Start-up and tear-down reported apart from the cycles; the verdicts read
the cycles only. The fixture crowds its start-up with short-lived threads
(more than the CPUs, all spinning) and then runs calm one-thread cycles."""
import unittest

import common
from common import need_root, record


@need_root
class StartupTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fix = common.fixture("startup_storm")
        cls.rec = record(["--cycle", "run_cycle"],
                         [fix, "4", "8", "40", "20", "5", "15"])
        cls.p = cls.rec.profile
        cls.fix = common.truth_of(cls.rec)

    def test_startup_and_teardown_apart(self):
        p, fix = self.p, self.fix
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], fix["cycles"])
        st, td = p["startup"], p["teardown"]
        first = min(c["start_ns"] for c in p["cycles"])
        last = max(c["end_ns"] for c in p["cycles"])
        self.assertAlmostEqual(st["ms"] + td["ms"] + (last - first) / 1e6, p["duration_s"] * 1e3, delta=1.0)
        # the start-up holds the threads' own time: at least their wall clock spent spinning
        self.assertGreaterEqual(st["ms"], fix["startup_ms"] * 0.99)
        self.assertGreater(st["samples"], 0)
        names = [f["name"] for f in st["top_functions"]]
        self.assertTrue(any("exp_spin" in n or "clock_gettime" in n or "exp_cpu_ms" in n for n in names), names)
        self.assertGreaterEqual(td["samples"], 0)
        # run-queue time: at least what the threads saw themselves waiting (wall - CPU of a spinning thread)
        self.assertGreater(fix["threads_waited_ms"], 0)
        self.assertGreaterEqual(st["runq_wait_ms"], 0.8 * fix["threads_waited_ms"],
                                f"start-up run queue {st['runq_wait_ms']:.1f} ms, threads waited {fix['threads_waited_ms']:.1f} ms")
        self.assertIn("Start-up (outside the cycles):", common.sh([common.INFERTRACE, "report", self.rec.dir]))

    def test_verdict_reads_the_cycles(self):
        p = self.p
        thr = p["config"].get("thresholds", {}).get("runq_pct", 20)
        # the whole recording is contended by construction (the threads outnumber the CPUs) ...
        st = p["startup"]
        self.assertGreater(st["runq_share_percent"], thr)
        # ... the cycles' own share is what the verdict may use
        on = sum(c["all_threads"]["oncpu_ms"] for c in p["cycles"])
        rq = sum(c["all_threads"]["runq_wait_ms"] for c in p["cycles"])
        share = 100 * rq / (on + rq)
        kinds = [b["type"] for b in p["bottlenecks"]]
        self.assertNotIn("cpu_oversubscribed", kinds)
        if share <= thr:
            self.assertNotIn("cpu_contention", kinds, f"cycles' run-queue share {share:.1f}%")
        else:  # other work on a busy machine took the cycles' CPUs: then the evidence is the cycles'
            ev = next(b for b in p["bottlenecks"] if b["type"] == "cpu_contention")["evidence"]
            self.assertEqual(ev["scope"], "cycles")
            self.assertAlmostEqual(ev["runq_wait_ms"], rq, delta=0.01 * rq + 0.01)


if __name__ == "__main__":
    unittest.main()
