# SPDX-License-Identifier: BSD-2-Clause
"""flamegraph.svg and report.html in real headless Chromium (Debian's
chromium-headless-shell, installed by `make deps`): search highlights a
function and reports its share as stacks.folded counts it, a click zooms a
frame to the full width, no console error, no "nan". The view is set through
the URL fragment (#search=, #zoom=: the share links), which dispatches a real
click on the frame. The graph fits the window's width, its height ends at the
deepest row with a frame at least 1 px wide (no empty band above towers too
narrow to see), and each frame's colour is its kind's, as the legend says. offcpu.svg and report.html's off-CPU graph likewise, and
report.html's phase selector (#phase=) shows the phase's own stacks. A phase
that never ran (worker: the fixture runs without workers) gets no folded
files, and profile.json and report.html say so."""
import collections
import os
import re
import unittest

import common


def frame_rect(dom, name):
    """(x, width, display style) of the frame named name."""
    m = re.search(r'<g class="f"( style="[^"]*")?><title>' + re.escape(name) +
                  r' \([^<]*</title><rect x="([0-9.]+)"[^>]* width="([0-9.]+)"', dom)
    return (float(m.group(2)), float(m.group(3)), m.group(1) or "") if m else None


def view_box(dom):
    """The first <svg>'s height attribute and viewBox (x, y, width, height)."""
    m = re.search(r'<svg [^>]*height="([0-9.]+)" viewBox="([-0-9. ]+)"', dom)
    return float(m.group(1)), tuple(float(v) for v in m.group(2).split())


def hue(rgb):
    r, g, b = (int(v) / 255 for v in rgb)
    mx, mn = max(r, g, b), min(r, g, b)
    if mx == mn:
        return None
    if mx == r:
        h = 60 * (((g - b) / (mx - mn)) % 6)
    elif mx == g:
        h = 60 * ((b - r) / (mx - mn) + 2)
    else:
        h = 60 * ((r - g) / (mx - mn) + 4)
    return h % 360


def visible_rows(folded, width_px, min_px=1.0):
    """Rows of the flame graph of folded with a frame at least min_px wide."""
    total = sum(folded.values())
    prefixes = collections.Counter()
    for stack, count in folded.items():
        frames = stack.split(";")
        for d in range(1, len(frames) + 1):
            prefixes[tuple(frames[:d])] += count
    return max((len(p) for p, c in prefixes.items() if c / total * width_px >= min_px), default=0)


@unittest.skipUnless(common.BROWSER, "no chromium-headless-shell (make deps installs it)")
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
        dom, console = common.load_page(path, {"search": "^spin_cpu$", "zoom": "inference"})
        self.assertEqual(console, [])
        m = re.search(r"Matched: ([0-9.]+)%", dom)
        self.assertTrue(m, dom[-2000:])
        self.assertAlmostEqual(float(m.group(1)), self.truth, delta=1.0)
        self.assertIn("rgb(230,0,230)", dom)  # highlighted
        # zoomed to the svg's full width, as the window gives it
        x, w, style = frame_rect(dom, "inference")
        width = view_box(dom)[1][2]
        self.assertAlmostEqual(x, 10.0, delta=0.1)
        self.assertAlmostEqual(w, width - 20, delta=0.1)
        self.assertIn("Reset Zoom", dom)
        self.assertNotRegex(dom.replace("nanosleep", ""), r"\bnan\b")
        return dom

    def test_flamegraph_svg(self):
        self.assertGreater(self.total, 20)
        self.check_page("flamegraph.svg")

    def test_flamegraph_fits_the_window(self):
        """The svg is width 100% with a viewBox; in a window 1500 px wide
        the script lays it out 1:1 (the root frame spans it but the
        margins), and its height is that of the deepest row with a frame at
        least 1 px wide at that width: no empty band."""
        path = os.path.join(self.rec.dir, "flamegraph.svg")
        with open(path) as f:
            head = f.read(600)
        self.assertRegex(head, r'<svg [^>]*width="100%" height="[0-9]+" viewBox="0 [0-9]+ 1200 [0-9]+"')
        for width in (1500, 700):
            dom, console = common.load_page(path, {}, width)
            self.assertEqual(console, [])
            height, (_, y0, vw, vh) = view_box(dom)
            self.assertAlmostEqual(vw, width, delta=20)  # less a scroll bar
            root = self.rec.profile["processes"][0]["comm"]
            x, w, _ = frame_rect(dom, root)
            self.assertAlmostEqual(x, 10.0, delta=0.1)
            self.assertAlmostEqual(w, vw - 20, delta=0.2)
            # (widths are written to 0.1 px: a frame of 1 px is either)
            lo, hi = (visible_rows(self.rec.folded(), vw - 20, px) for px in (1.05, 0.95))
            self.assertEqual(height, vh)
            self.assertTrue(40 + 20 + 16 * lo <= height <= 40 + 20 + 16 * hi, (width, height, lo, hi))
            # the root row sits on the bottom margin: nothing below it
            y = float(re.search(r'<title>' + re.escape(root) + r' \([^<]*</title><rect [^>]*y="([0-9.]+)"',
                                dom).group(1))
            self.assertEqual(y + 16, y0 + vh - 20)

    def test_flamegraph_colours_by_kind(self):
        """Each frame's hue is nearest the legend swatch of its kind:
        kernel frames (_[k]) orange, native ones red; the legend names the
        kinds drawn and no other (the fixture runs no Python or JIT code)."""
        with open(os.path.join(self.rec.dir, "flamegraph.svg")) as f:
            svg = f.read()
        legend = re.search(r'<g class="fg-legend">(.*?)</g>', svg).group(1)
        swatches = {name: hue(rgb) for *rgb, name in
                    re.findall(r'fill="rgb\((\d+),(\d+),(\d+)\)"/><text [^>]*>([^<]+)</text>', legend)}
        frames = re.findall(r'<g class="f"><title>(.*?) \([^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"',
                            svg)
        self.assertGreater(len(frames), 10)
        kinds = {}
        for name, *rgb in frames:
            kinds[name] = "kernel" if name.endswith("_[k]") else "unknown" if name.startswith("[") else "native"
        self.assertEqual(set(swatches), set(kinds.values()))
        self.assertTrue({"native", "kernel"} <= set(swatches))
        for name, *rgb in frames:
            h = hue(rgb)
            if kinds[name] == "unknown":
                self.assertIsNone(h, name)  # grey
                continue
            near = min((k for k in swatches if swatches[k] is not None),
                       key=lambda k: min(abs(h - swatches[k]), 360 - abs(h - swatches[k])))
            self.assertEqual(near, kinds[name], (name, rgb))

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
        dom, console = common.load_page(os.path.join(self.rec.dir, "offcpu.svg"), {"search": "^database$"})
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
        dom, console = common.load_page(os.path.join(self.rec.dir, "report.html"),
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
