# SPDX-License-Identifier: BSD-2-Clause
"""flamegraph.svg and report.html in real headless Chromium (Debian's
chromium-headless-shell, installed by `make deps`): search highlights a
function and reports its share as stacks.folded counts it, a click zooms a
frame to the full width, no console error, no "nan". The view is set through
the URL fragment (#search=, #zoom=: the share links), which dispatches a real
click on the frame. offcpu.svg and report.html's off-CPU graph likewise, and
report.html's phase selector (#phase=) shows the phase's own stacks. A phase
that never ran (worker: the fixture runs without workers) gets no folded
files, and profile.json and report.html say so."""
import os
import re
import shutil
import subprocess
import unittest
import urllib.parse

import common

BROWSER = shutil.which("chromium-headless-shell") or shutil.which("chromium")


def load(path, fragment):
    """The DOM after the page's scripts ran, and Chromium's console lines."""
    url = "file://" + urllib.parse.quote(path) + "#" + urllib.parse.urlencode(fragment)
    p = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--virtual-time-budget=3000", "--dump-dom", url],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    return p.stdout, console


def frame_rect(dom, name):
    """(x, width, display style) of the frame named name."""
    m = re.search(r'<g class="f"( style="[^"]*")?><title>' + re.escape(name) +
                  r' \([^<]*</title><rect x="([0-9.]+)"[^>]* width="([0-9.]+)"', dom)
    return (float(m.group(2)), float(m.group(3)), m.group(1) or "") if m else None


@unittest.skipUnless(BROWSER, "no chromium-headless-shell (make deps installs it)")
@common.need_root
class BrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = common.record(["-F", "499", "--cycle", "run_cycle", "--phase", "llm_inference=inference",
                                 "--phase", "database=database", "--phase", "never=worker"],
                                [common.fixture("experiment"), "8", "20", "3", "2", "1"])
        st = cls.rec.folded()
        total = sum(st.values())
        # the share of samples with spin_cpu anywhere in the stack
        cls.truth = 100.0 * common.frame_share(st, "spin_cpu")
        cls.total = total

    def check_page(self, name):
        path = os.path.join(self.rec.dir, name)
        dom, console = load(path, {"search": "^spin_cpu$", "zoom": "inference"})
        self.assertEqual(console, [])
        m = re.search(r"Matched: ([0-9.]+)%", dom)
        self.assertTrue(m, dom[-2000:])
        self.assertAlmostEqual(float(m.group(1)), self.truth, delta=1.0)
        self.assertIn("rgb(230,0,230)", dom)  # highlighted
        x, w, style = frame_rect(dom, "inference")
        self.assertAlmostEqual(x, 10.0, delta=0.1)
        self.assertAlmostEqual(w, 1180.0, delta=0.1)
        self.assertIn("Reset Zoom", dom)
        self.assertNotRegex(dom.replace("nanosleep", ""), r"\bnan\b")
        return dom

    def test_flamegraph_svg(self):
        self.assertGreater(self.total, 20)
        self.check_page("flamegraph.svg")

    def test_report_html(self):
        dom = self.check_page("report.html")
        # it links to the outputs beside it, which exist
        links = set(re.findall(r'<a href="([^"#:]+)"', dom))
        self.assertTrue({"profile.json", "trace.json", "flamegraph.svg", "stacks.folded"} <= links, links)
        for name in links:
            self.assertTrue(os.path.exists(os.path.join(self.rec.dir, name)), name)

    def share(self, name, frame):
        return 100.0 * common.frame_share(self.rec.folded(name), frame)

    def test_offcpu_svg(self):
        # database() sleeps: its blocked time is the off-CPU graph's weight
        truth = self.share("offcpu.folded", "database")
        self.assertGreater(truth, 0)
        dom, console = load(os.path.join(self.rec.dir, "offcpu.svg"), {"search": "^database$"})
        self.assertEqual(console, [])
        self.assertIn("Off-CPU flame graph", dom)
        self.assertIn(" us blocked, ", dom)
        m = re.search(r"Matched: ([0-9.]+)%", dom)
        self.assertTrue(m, dom[-2000:])
        self.assertAlmostEqual(float(m.group(1)), truth, delta=1.0)

    def view(self, dom, kind, phase):
        """The style and the content of one flame graph view of report.html."""
        m = re.search(r'<div class="fg-view" data-kind="%s" data-phase="%s" style="([^"]*)">(.*?)</svg>'
                      % (kind, re.escape(phase)), dom, re.S)
        self.assertTrue(m, (kind, phase))
        return m.group(1), m.group(2)

    def test_report_phase_selector_and_offcpu(self):
        dom, console = load(os.path.join(self.rec.dir, "report.html"),
                            {"phase": "llm_inference", "search": "^spin_cpu$"})
        self.assertEqual(console, [])
        # the on-CPU graph shows the phase's stacks, the whole set hidden
        style, svg = self.view(dom, "oncpu", "llm_inference")
        self.assertNotIn("none", style)
        self.assertIn("none", self.view(dom, "oncpu", "")[0])
        self.assertIn("phase llm_inference", svg)
        m = re.search(r"Matched: ([0-9.]+)%", svg)
        self.assertAlmostEqual(float(m.group(1)), self.share("stacks.llm_inference.folded", "spin_cpu"), delta=1.0)
        # the off-CPU graph has no llm_inference stacks (it spins): it stays on all
        self.assertNotIn("none", self.view(dom, "offcpu", "")[0])
        self.assertIn("none", self.view(dom, "offcpu", "database")[0])
        self.assertNotIn('data-kind="offcpu" data-phase="llm_inference"', dom)
        self.assertIn("Off-CPU flame graph", dom)
        self.assertIn('<a href="offcpu.svg">', dom)

    def test_phase_without_stacks_writes_no_file(self):
        files = set(os.listdir(self.rec.dir))
        out = self.rec.profile["outputs"]
        not_written = {n["file"]: n["reason"] for n in out["not_written"]}
        for name in ("stacks.never.folded", "offcpu.never.folded"):
            self.assertNotIn(name, files)
            self.assertIn("phase never", not_written[name])
        # what profile.json lists is what is there, and every folded file
        # has lines (flamegraph.pl fails on an empty one)
        self.assertEqual(set(out["files"]), {f for f in files if not f.startswith(".")})
        self.assertFalse(set(not_written) & files)
        for name in files:
            if name.endswith(".folded"):
                self.assertTrue(self.rec.folded(name), name)
        with open(os.path.join(self.rec.dir, "report.html")) as f:
            html = f.read()
        self.assertIn("<code>stacks.never.folded</code>: no samples in phase never", html)


if __name__ == "__main__":
    unittest.main()
