# SPDX-License-Identifier: BSD-2-Clause
"""report.html's charts, rendered by headless Chromium, hold the run's own
numbers (common.ReportPageChecks): one cycle bar per cycle of profile.json
with its duration_ms, the phases' segments with each cycle's phase ms,
each phase's histogram over the cycles it ran in and its split summed as
profile.json's cycles give it; the side data charted where profile.json
says it was measured, named on the "not measured" line where not; the
split table per phase holds profile.json's sums. The page fetches
nothing: no http(s) URL in any src, href or url(). On tail_exp, the tail
cycles (its slow ones) are outlined and no other.
The same checks hold for the experiment fixture and for a Python loop
(py_loop_main.py, its phases `py:` functions), whose top functions in
report.html and in the text report are the leaves of stacks.python.folded
(the interpreter's frames folded into the Python function running them),
and whose text report lists each phase's and each cycle's split as
profile.json has it."""
import os
import re
import subprocess
import tempfile
import unittest

import common

CYCLES, INFER, TOKENS, DB, MODE = 8, 20, 3, 2, 1
TAIL_CYCLES, SLOW_DB, EXTRA_DB, SLOW_MODE, EXTRA_MODE = 24, 7, 30, 12, 25
PHASES = ["--phase", "llm_inference=inference", "--phase", "database=database", "--phase", "mode=mode"]


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@common.need_root
class ReportChartsTest(common.ReportPageChecks, unittest.TestCase):
    CYCLES = CYCLES

    @classmethod
    def setUpClass(cls):
        cls.rec = common.record(["-F", "499", "--cycle", "run_cycle"] + PHASES,
                                [common.fixture("experiment")] + common.experiment_args(CYCLES, INFER, TOKENS, DB,
                                                                                        MODE))
        cls.load_report(cls.rec.dir, cls.rec.profile)


PY_CYCLES = 12
PY_PHASES = ["--cycle-marker", "py:generate", "--phase", "inference=py:generate", "--phase", "rest=py:pause",
             "--phase", "database=py:save"]


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@unittest.skipUnless(common.PYTHONS, "no CPython 3.10..3.13 on this machine")
@common.need_root
class PythonLoopChartsTest(common.ReportPageChecks, unittest.TestCase):
    """A Python loop (py_loop_main.py: generate spins 30 ms, pause sleeps
    10 ms, save commits), its cycle and phases `py:` functions."""
    CYCLES = PY_CYCLES

    @classmethod
    def setUpClass(cls):
        python = common.PYTHONS.get("system-python3.11") or sorted(common.PYTHONS.values())[-1]
        tmp = tempfile.mkdtemp(prefix="it-pyloop-")
        cls.rec = common.record(["-F", "499"] + PY_PHASES,
                                [python, os.path.join(common.FIXTURES, "py_loop_main.py"), str(PY_CYCLES),
                                 os.path.join(tmp, "truth.json"), os.path.join(tmp, "db.sqlite")])
        cls.load_report(cls.rec.dir, cls.rec.profile)
        cls.report = subprocess.run([common.INFERTRACE, "report", cls.rec.dir], text=True, check=True,
                                    stdout=subprocess.PIPE).stdout

    def test_top_functions_are_pythons_view(self):
        """The Python view (test_page_top_functions checks report.html's
        table against it) is not the full stacks': spin, the Python function
        the loop spins in, is a leaf there more often than in stacks.folded,
        where the interpreter's frames sit below it. The text report lists
        the view's 10 busiest leaves."""
        view = common.folded_leaves(self.rec.folded("stacks.python.folded"))
        full = common.folded_leaves(self.rec.folded())
        self.assertEqual(sum(view.values()), sum(full.values()))
        spin = "spin (py_loop_main.py)"
        self.assertGreater(view.get(spin, 0), full.get(spin, 0))
        self.assertIn(spin, [name for _, name in common.page_top_functions(self.dom)[1]])
        text = re.search(r"\nTop on-CPU functions \(leaf frames; the interpreter's own frames folded into the "
                         r"Python function running them\):\n((?:  .*\n?)*)", self.report)
        self.assertIsNotNone(text, self.report)
        rows = [(float(p), n) for p, n in re.findall(r"^ +([\d.]+)%  (.*)$", text.group(1), re.M)]
        common.assert_top_rows(self, rows, view, 10)

    def test_text_report_splits(self):
        """The text report's split per phase and per cycle are profile.json's."""
        p = self.rec.profile
        for name in p["phases"]:
            want = common.phase_split_sums(p, name)
            if want is None:
                continue
            m = re.search(r"(?m)^%s +([\d.]+) +([\d.]+) +([\d.]+)  [\d/]+ " % re.escape(name), self.report)
            self.assertIsNotNone(m, name + "\n" + self.report)
            for got, ms in zip(m.groups(), want):
                self.assertAlmostEqual(float(got), ms, delta=0.006, msg=name)
        table = re.search(r"Split per cycle \(main thread\):\n.*\n((?: +\d+ .*\n)+)", self.report)
        self.assertIsNotNone(table, self.report)
        rows = {int(r[0]): [float(v) for v in r[1:]]
                for r in re.findall(r"(?m)^ +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)  ", table.group(1))}
        with_split = [c for c in p["cycles"] if "oncpu_ms" in c]
        self.assertEqual(sorted(rows), [c["index"] for c in with_split])
        for c in with_split:
            for got, key in zip(rows[c["index"]], ("duration_ms", "oncpu_ms", "runq_wait_ms", "offcpu_ms")):
                self.assertAlmostEqual(got, c[key], delta=0.006, msg=(c["index"], key))


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@common.need_root
class TailBarsTest(unittest.TestCase):
    def test_tail_cycles_outlined(self):
        """tail_exp's slow cycles are profile.json's tail_cycles; their bars,
        and only theirs, are class tail."""
        rec = common.record(["-F", "499", "--cycle", "run_cycle"] + PHASES,
                            [common.fixture("tail_exp")] + [str(a) for a in (TAIL_CYCLES, 2, 4, 1, SLOW_DB, EXTRA_DB,
                                                                             SLOW_MODE, EXTRA_MODE)])
        dom, console = common.load_page(os.path.join(rec.dir, "report.html"))
        self.assertEqual(console, [])
        tail = {t["cycle"] for t in rec.profile["tail_cycles"]}
        self.assertTrue({SLOW_DB, SLOW_MODE} <= tail, tail)
        bars = common.page_cycle_bars(dom)
        self.assertEqual(len(bars), len(rec.profile["cycles"]))
        self.assertEqual({i for i, (_, is_tail) in bars.items() if is_tail}, tail)


if __name__ == "__main__":
    unittest.main()
