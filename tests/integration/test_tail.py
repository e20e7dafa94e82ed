# SPDX-License-Identifier: BSD-2-Clause
"""Tail-cycle forensics against a fixture whose slow cycles are known: cycle
SLOW_DB sleeps EXTRA_DB ms longer in its database phase, cycle SLOW_MODE
spins EXTRA_MODE ms more CPU in its mode phase. The forensics must name
those cycles with their true causes, each excess within 20% of the
fixture's own clock, and no cycle the fixture did not see slow."""
import os
import statistics
import subprocess
import unittest

import common

CYCLES, INFER, DB, MODE = 24, 2, 4, 1
SLOW_DB, EXTRA_DB, SLOW_MODE, EXTRA_MODE = 7, 30, 12, 25
REL = 0.20


def cause(t, kind, name):
    for c in t["causes"]:
        if c["kind"] == kind and c["name"] == name:
            return c
    return None


@common.need_root
class TailTest(common.ProbeTestCase):
    REL, ABS_MS = REL, 0.0  # assertClose: within REL of the fixture's excess

    @classmethod
    def setUpClass(cls):
        exe = common.fixture("tail_exp")
        cls.rec = common.record(["-F", "999", "--cycle", "run_cycle", "--phase", "llm_inference=inference",
                                 "--phase", "database=database", "--phase", "mode=mode"],
                                [exe, str(CYCLES), str(INFER), str(DB), str(MODE), str(SLOW_DB), str(EXTRA_DB),
                                 str(SLOW_MODE), str(EXTRA_MODE)])
        cls.truth = common.truth_of(cls.rec)
        cls.tail = {t["cycle"]: t for t in cls.rec.profile["tail_cycles"]}

    def excess(self, key, i):
        v = self.truth[key]
        return v[i] - statistics.median(v)

    def test_names_exactly_the_slow_cycles(self):
        self.assertIn(SLOW_DB, self.tail)
        self.assertIn(SLOW_MODE, self.tail)
        calls = self.truth["call_ms"]
        med = statistics.median(calls)
        for i in set(self.tail) - {SLOW_DB, SLOW_MODE}:
            # another cycle only when the fixture itself saw it slow (preempted
            # by the other work of this busy machine)
            self.assertTrue(self.truth["preempted"][i] or calls[i] > 1.05 * med,
                            f"cycle {i} named ({self.tail[i]['ms']:.2f} ms) but the fixture saw "
                            f"{calls[i]:.2f} ms (median {med:.2f}) and no preemption")
        for i in (SLOW_DB, SLOW_MODE):
            self.assertClose(self.tail[i]["excess_ms"], self.excess("call_ms", i), f"cycle {i} excess")

    def test_sleep_in_database(self):
        t = self.tail[SLOW_DB]
        want = self.excess("database_wall_ms", SLOW_DB)
        ph = cause(t, "phase", "database")
        self.assertIsNotNone(ph, t["causes"])
        self.assertClose(ph["excess_ms"], want, "database phase")
        sl = cause(t, "blocked", "sleep")
        self.assertIsNotNone(sl, t["causes"])
        self.assertClose(sl["excess_ms"], want, "blocked sleep")
        # the phase is the cycle's largest cause, and nothing on the CPU grew
        self.assertIn(t["causes"][0]["kind"], ("phase", "blocked"))
        self.assertIsNone(cause(t, "oncpu", "main_thread"))
        # mode is named only when the fixture's own clock saw that cycle's
        # mode slower too (preempted by the other work of a busy machine),
        # and then with the fixture's excess
        mode, mode_excess = cause(t, "phase", "mode"), self.excess("mode_wall_ms", SLOW_DB)
        if mode is not None:
            self.assertGreaterEqual(mode_excess, 0.25, (mode, mode_excess))
            self.assertLessEqual(abs(mode["excess_ms"] - mode_excess), max(0.5, REL * mode_excess), (mode, mode_excess))
        # the off-CPU stack that grew is the sleep under database()
        self.assertTrue(any(s["kind"] == "offcpu" and "database" in s["stack"] for s in sl["stacks"]), sl["stacks"])

    def test_cpu_burst_in_mode(self):
        t = self.tail[SLOW_MODE]
        ph = cause(t, "phase", "mode")
        self.assertIsNotNone(ph, t["causes"])
        self.assertClose(ph["excess_ms"], self.excess("mode_wall_ms", SLOW_MODE), "mode phase")
        cpu = cause(t, "oncpu", "main_thread")
        self.assertIsNotNone(cpu, t["causes"])
        self.assertClose(cpu["excess_ms"], self.excess("cpu_ms", SLOW_MODE), "on-CPU")
        self.assertIsNone(cause(t, "phase", "database"))
        self.assertIsNone(cause(t, "blocked", "sleep"))
        self.assertTrue(any(s["kind"] == "oncpu" and "mode" in s["stack"] for s in ph["stacks"]), ph["stacks"])

    def test_schema(self):
        self.assertEqual(common.unknown_keys(self.rec.profile), [])

    def test_report_and_html_show_them(self):
        rep = subprocess.run([common.INFERTRACE, "report", self.rec.dir], text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        self.assertEqual(rep.returncode, 0, rep.stdout)
        self.assertIn("Tail cycles", rep.stdout)
        self.assertIn(f"cycle {SLOW_DB}:", rep.stdout)
        self.assertIn("phase database +", rep.stdout)
        with open(os.path.join(self.rec.dir, "report.html")) as f:
            html = f.read()
        self.assertIn("<h2>Tail cycles</h2>", html)


if __name__ == "__main__":
    unittest.main()
