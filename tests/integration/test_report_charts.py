# SPDX-License-Identifier: BSD-2-Clause
"""report.html's charts, rendered by headless Chromium, hold the run's own
numbers: one cycle bar per cycle of profile.json with its duration_ms, the
phases' segments with each cycle's phase ms, each phase's histogram over
the cycles it ran in and its split summed as profile.json's cycles give
it, the tail cycles (tail_exp's slow ones) outlined and no other; the side
data charted where profile.json says it was measured, named on the "not
measured" line where not. The page fetches nothing: no http(s) URL in any
src, href or url()."""
import html
import os
import re
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


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
@common.need_root
class ReportChartsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = common.record(["-F", "499", "--cycle", "run_cycle"] + PHASES,
                                [common.fixture("experiment")] + common.experiment_args(CYCLES, INFER, TOKENS, DB,
                                                                                        MODE))
        cls.path = os.path.join(cls.rec.dir, "report.html")
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
        self.assertEqual(len(cycles), CYCLES)
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
