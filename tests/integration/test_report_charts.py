# SPDX-License-Identifier: BSD-2-Clause
"""report.html's charts, rendered by headless Chromium, hold the run's own
numbers: one cycle bar per cycle of profile.json with its duration_ms, the
phases' segments with each cycle's phase ms, each phase's histogram over
the cycles it ran in and its split summed as profile.json's cycles give
it, the tail cycles (tail_exp's slow ones) outlined and no other; the side
data charted where profile.json says it was measured, named on the "not
measured" line where not; the split table per phase holds profile.json's
sums. The page fetches nothing: no http(s) URL in any src, href or url().
The same checks hold for the experiment fixture and for a Python loop
(py_loop_main.py, its phases `py:` functions), whose top functions in
report.html and in the text report are the leaves of stacks.python.folded
(the interpreter's frames folded into the Python function running them),
and whose text report lists each phase's and each cycle's split as
profile.json has it."""
import html
import os
import re
import subprocess
import tempfile
import unittest

import common

CYCLES, INFER, TOKENS, DB, MODE = 8, 20, 3, 2, 1
TAIL_CYCLES, SLOW_DB, EXTRA_DB, SLOW_MODE, EXTRA_MODE = 24, 7, 30, 12, 25
MS_EPS = 0.0006  # the charts write ms to three decimals
PHASES = ["--phase", "llm_inference=inference", "--phase", "database=database", "--phase", "mode=mode"]


def rects(dom, cls):
    """The attributes ({name: value}) of every <rect> of class cls, in order."""
    out = []
    for attrs in re.findall(r'<rect class="%s"([^>]*)>' % re.escape(cls), dom):
        out.append(dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)))
    return out


def cycle_bars(dom):
    """{cycle index: (data-ms, tail)} of the cycle chart's bars."""
    bars = {}
    for cls, tail in (("cycle", False), ("cycle tail", True)):
        for a in rects(dom, cls):
            bars[int(a["data-cycle"])] = (float(a["data-ms"]), tail)
    return bars


def split_table(dom):
    """{phase: (on-CPU ms, run queue ms, blocked ms)} of the split table per phase."""
    m = re.search(r'<table class="split">(.*?)</table>', dom, re.S)
    if not m:
        return {}
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", m.group(1))
    return {html.unescape(r[0]): tuple(float(v) for v in r[1:]) for r in rows}


def phase_split_sums(profile, name):
    """The phase's (on-CPU, run queue, blocked) ms summed over the cycles
    that have its split in profile.json; None when none has."""
    ran = [c["phases"][name] for c in profile["cycles"] if name in c["phases"]]
    with_split = [p for p in ran if {"oncpu_ms", "runq_wait_ms", "offcpu_ms"} & set(p)]
    if not with_split:
        return None
    return tuple(sum(p.get(k, 0) for p in with_split) for k in ("oncpu_ms", "runq_wait_ms", "offcpu_ms"))


class ChartChecks:
    """The checks of one recording's report.html (self.rec, self.dom: its DOM
    after rendering, self.html: its text, self.console), for each class
    that records one (CYCLES cycles)."""
    CYCLES = None

    @classmethod
    def load(cls, rec):
        cls.rec = rec
        cls.path = os.path.join(rec.dir, "report.html")
        cls.dom, cls.console = common.load_page(cls.path)
        with open(cls.path) as f:
            cls.html = f.read()

    def test_renders_without_errors(self):
        self.assertEqual(self.console, [])
        self.assertIn('<h2 id="charts">Charts</h2>', self.dom)
        self.assertGreaterEqual(self.dom.count('role="img"'), 3)
        self.assertNotRegex(self.dom.replace("nanosleep", ""), r"\bnan\b")

    def test_one_bar_per_cycle_with_its_duration(self):
        cycles = self.rec.profile["cycles"]
        self.assertEqual(len(cycles), self.CYCLES)
        bars = cycle_bars(self.dom)
        self.assertEqual(sorted(bars), sorted(c["index"] for c in cycles))
        for c in cycles:
            self.assertAlmostEqual(bars[c["index"]][0], c["duration_ms"], delta=MS_EPS, msg=c["index"])

    def test_phase_segments_are_the_cycles_phases(self):
        want = {(c["index"], name): p["ms"] for c in self.rec.profile["cycles"]
                for name, p in c["phases"].items() if p.get("ms")}
        got = {(int(a["data-cycle"]), html.unescape(a["data-phase"])): float(a["data-ms"])
               for a in rects(self.dom, "seg")}
        self.assertEqual(set(got), set(want))
        for key, ms in want.items():
            self.assertAlmostEqual(got[key], ms, delta=MS_EPS, msg=key)
        # the rest of each cycle: its time in no phase
        for a in rects(self.dom, "rest"):
            c = self.rec.profile["cycles"][int(a["data-cycle"])]
            in_phases = sum(p.get("ms", 0) for p in c["phases"].values())
            self.assertAlmostEqual(float(a["data-ms"]), c["duration_ms"] - in_phases, delta=2 * MS_EPS)

    def test_phase_histograms_and_splits(self):
        cycles = self.rec.profile["cycles"]
        for name in self.rec.profile["phases"]:
            ran = [c["phases"][name] for c in cycles if name in c["phases"]]
            if not ran:
                continue
            with self.subTest(phase=name):
                bins = [a for a in rects(self.dom, "bin") if html.unescape(a["data-phase"]) == name]
                self.assertEqual(sum(int(a["data-count"]) for a in bins), len(ran))
                self.assertAlmostEqual(float(bins[0]["data-lo"]), min(p["ms"] for p in ran), delta=MS_EPS)
                self.assertAlmostEqual(float(bins[-1]["data-hi"]), max(p["ms"] for p in ran), delta=MS_EPS)
                with_split = [p for p in ran if {"oncpu_ms", "runq_wait_ms", "offcpu_ms"} & set(p)]
                parts = {a["data-part"]: float(a["data-ms"]) for a in rects(self.dom, "part")
                         if html.unescape(a["data-phase"]) == name}
                if not with_split:
                    self.assertEqual(parts, {})
                    continue
                for part, key in (("oncpu", "oncpu_ms"), ("runq", "runq_wait_ms"), ("blocked", "offcpu_ms")):
                    self.assertAlmostEqual(parts[part], sum(p.get(key, 0) for p in with_split),
                                           delta=MS_EPS * len(with_split), msg=part)

    def test_side_data_measured_or_named(self):
        """Each source has a chart when profile.json has its readings, else
        a name on the one "not measured" line, never both."""
        p = self.rec.profile
        m = re.search(r'<p class="not-measured">not measured: ([^<]*)</p>', self.dom)
        missing = m.group(1) if m else ""
        series = {html.unescape(s)
                  for s in re.findall(r'<polyline class="series"[^>]* data-series="([^"]*)"', self.dom)}
        timeline = p.get("memory", {}).get("timeline", [])
        self.assertEqual("RSS (MB)" in series, bool(timeline))
        self.assertEqual(re.search(r"\bRSS\b", missing) is not None, not timeline)
        if timeline:
            points = re.search(r'data-series="RSS \(MB\)" data-points="(\d+)"', self.dom)
            self.assertEqual(int(points.group(1)), len(timeline))
        zones = p.get("thermal", {}).get("zones", {})
        self.assertEqual("temperature (C)" in series, bool(zones))
        self.assertEqual(missing.startswith("temperature") or ", temperature" in missing,
                         not (series & {"temperature (C)", "hwmon temperature (C)"}))
        gpu = any(s.startswith("gpu ") for s in series)
        self.assertEqual(gpu, bool(p.get("gpu", {}).get("available")))
        self.assertEqual("GPU" in missing, not gpu)
        # a time chart per series, each with the cycles shaded behind
        self.assertEqual(self.dom.count('<g class="cycle-spans">'), self.dom.count('<svg class="chart side"'))

    def test_no_network_request(self):
        urls = re.findall(r'\b(?:src|href)\s*=\s*["\']?([^"\'\s>]+)', self.html)
        urls += re.findall(r'url\(\s*["\']?([^"\')]+)', self.html)
        self.assertTrue(urls)  # the links to the files beside it
        self.assertEqual([u for u in urls if re.match(r"(?i)\s*(https?:)?//", u)], [])
        self.assertNotRegex(self.html, r"(?i)<script[^>]+src=")
        self.assertNotRegex(self.html, r"(?i)<link[^>]+stylesheet")

    def test_split_table_per_phase(self):
        """The table's on-CPU, run queue and blocked ms per phase are the
        sums of profile.json's cycles (two decimals written)."""
        table = split_table(self.dom)
        want = {name: phase_split_sums(self.rec.profile, name) for name in self.rec.profile["phases"]}
        want = {k: v for k, v in want.items() if v is not None}
        self.assertTrue(want)
        self.assertEqual(set(table), set(want))
        for name, parts in want.items():
            for got, ms in zip(table[name], parts):
                self.assertAlmostEqual(got, ms, delta=0.006, msg=name)


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@common.need_root
class ReportChartsTest(ChartChecks, unittest.TestCase):
    CYCLES = CYCLES

    @classmethod
    def setUpClass(cls):
        cls.load(common.record(["-F", "499", "--cycle", "run_cycle"] + PHASES,
                               [common.fixture("experiment")] + common.experiment_args(CYCLES, INFER, TOKENS, DB,
                                                                                       MODE)))


PY_CYCLES = 12
PY_PHASES = ["--cycle-marker", "py:generate", "--phase", "inference=py:generate", "--phase", "rest=py:pause",
             "--phase", "database=py:save"]


def leaves(folded):
    """{leaf frame: samples} of a folded file."""
    out = {}
    for s, c in folded.items():
        leaf = s.rsplit(";", 1)[-1]
        out[leaf] = out.get(leaf, 0) + c
    return out


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@unittest.skipUnless(common.PYTHONS, "no CPython 3.10..3.13 on this machine")
@common.need_root
class PythonLoopChartsTest(ChartChecks, unittest.TestCase):
    """A Python loop (py_loop_main.py: generate spins 30 ms, pause sleeps
    10 ms, save commits), its cycle and phases `py:` functions."""
    CYCLES = PY_CYCLES

    @classmethod
    def setUpClass(cls):
        python = common.PYTHONS.get("system-python3.11") or sorted(common.PYTHONS.values())[-1]
        tmp = tempfile.mkdtemp(prefix="it-pyloop-")
        cls.load(common.record(["-F", "499"] + PY_PHASES,
                               [python, os.path.join(common.FIXTURES, "py_loop_main.py"), str(PY_CYCLES),
                                os.path.join(tmp, "truth.json"), os.path.join(tmp, "db.sqlite")]))
        cls.report = subprocess.run([common.INFERTRACE, "report", cls.rec.dir], text=True, check=True,
                                    stdout=subprocess.PIPE).stdout

    def test_top_functions_are_pythons_view(self):
        """report.html's and the text report's top functions are the leaves
        of stacks.python.folded, not of stacks.folded: spin, the Python
        function the loop spins in, has its share there, while in the full
        stacks the interpreter's frames sit below it."""
        view, full = leaves(self.rec.folded("stacks.python.folded")), leaves(self.rec.folded())
        total = sum(view.values())
        self.assertEqual(total, sum(full.values()))
        spin = "spin (py_loop_main.py)"
        self.assertGreater(view.get(spin, 0), full.get(spin, 0))
        m = re.search(r'<table class="top-functions">(.*?)</table>', self.dom, re.S)
        self.assertIsNotNone(m)
        rows = [(float(p), html.unescape(n))
                for p, n in re.findall(r"<tr><td>([\d.]+)</td><td>([^<]*)</td>", m.group(1))]
        text = re.search(r"\nTop on-CPU functions \(leaf frames; the interpreter's own frames folded into the "
                         r"Python function running them\):\n((?:  .*\n?)*)", self.report)
        self.assertIsNotNone(text, self.report)
        text_rows = [(float(p), n) for p, n in re.findall(r"^ +([\d.]+)%  (.*)$", text.group(1), re.M)]
        for what, got, n in (("report.html", rows, 15), ("report", text_rows, 10)):
            with self.subTest(what):
                self.assertEqual(len(got), min(n, len(view)))
                self.assertIn(spin, [name for _, name in got])
                for pct, name in got:
                    self.assertIn(name, view)
                    self.assertAlmostEqual(pct, 100.0 * view[name] / total, delta=0.006, msg=name)
                    # the busiest leaves: none left out has more samples
                    self.assertGreaterEqual(view[name], max([c for k, c in view.items()
                                                            if k not in {x for _, x in got}] or [0]))

    def test_text_report_splits(self):
        """The text report's split per phase and per cycle are profile.json's."""
        p = self.rec.profile
        for name in p["phases"]:
            want = phase_split_sums(p, name)
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
        bars = cycle_bars(dom)
        self.assertEqual(len(bars), len(rec.profile["cycles"]))
        self.assertEqual({i for i, (_, is_tail) in bars.items() if is_tail}, tail)


if __name__ == "__main__":
    unittest.main()
