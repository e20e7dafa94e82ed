# SPDX-License-Identifier: BSD-2-Clause
"""`infertrace diff --flamegraph FILE BASE NEW`: the differential flame graph
as difffolded.pl | flamegraph.pl draw it. Frame widths are NEW's counts;
each frame is red when its share of all samples grew from BASE to NEW, blue
when it shrank, white when equal, deeper the larger the change. Checked
frame by frame against a tree built here from the two stacks.folded files:
on fixed inputs (exact colours), and on two recordings of the experiment
fixture whose shapes differ by construction (inference spins 20 ms and mode
2 ms of CPU time per cycle in one, the other way round in the other)."""
import os
import re
import subprocess
import tempfile
import unittest

import common
from common import INFERTRACE

SVG_W, X0 = 1200.0, 10.0
FRAME = re.compile(r'<g class="f"><title>(.*?) \((\d+) samples, [^;]*; ([-+][0-9.]+) points against the base\)'
                   r'</title><rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"[^>]* fill="rgb\((\d+),(\d+),(\d+)\)"')


# the least of a profile.json that diff reads beside its stacks.folded
STUB = {"schema_version": "1.0", "tool": {"name": "infertrace", "version": "test"}, "duration_s": 1.0,
        "cycles": [], "bottlenecks": [], "recommendations": [], "lost": {"samples": 0, "events": 0}}


def unescape(s):
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#39;", "'") \
            .replace("&amp;", "&")


def tree(folded):
    """{path tuple: count} over every frame of every stack."""
    t = {}
    for stack, count in folded.items():
        path = ()
        for frame in stack.split(";"):
            path += (frame,)
            t[path] = t.get(path, 0) + count
    return t


def expected_frames(base, new):
    """NEW's frames in the writer's order (depth first, children by name),
    each with its count and its change of share, without those narrower
    than the writer's 0.1 px."""
    bt, nt = tree(base), tree(new)
    btot, ntot = sum(base.values()), sum(new.values())
    scale = (SVG_W - 2 * X0) / ntot
    out = []
    maxd = max(abs(c / ntot - bt.get(p, 0) / btot) for p, c in nt.items())

    def walk(path):
        kids = sorted({p[len(path)] for p in nt if len(p) == len(path) + 1 and p[:len(path)] == path},
                      key=lambda s: s.encode())
        for k in kids:
            p = path + (k,)
            if nt[p] * scale < 0.1:
                continue
            out.append((k, nt[p], nt[p] / ntot - bt.get(p, 0) / btot))
            walk(p)
    walk(())
    return out, scale, maxd


class DiffFlamegraphCheck:
    def check(self, base_dir, new_dir, base, new):
        svg = os.path.join(tempfile.mkdtemp(prefix="it-diffsvg-"), "diff.svg")
        p = subprocess.run([INFERTRACE, "diff", "--flamegraph", svg, base_dir, new_dir], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertIn(p.returncode, (0, 1), p.stderr)  # 1: a regression, which the table reports
        self.assertIn("differential flame graph: " + svg, p.stdout)
        with open(svg) as f:
            text = f.read()
        got = [(unescape(m[0]), int(m[1]), float(m[2]), float(m[3]), float(m[4]), (int(m[5]), int(m[6]), int(m[7])))
               for m in FRAME.findall(text)]
        want, scale, maxd = expected_frames(base, new)
        self.assertEqual([(g[0], g[1]) for g in got], [(w[0], w[1]) for w in want])
        for (name, count, points, x, width, rgb), (_, _, delta) in zip(got, want):
            self.assertAlmostEqual(width, count * scale, delta=0.06, msg=name)
            self.assertAlmostEqual(points, 100 * delta, delta=0.006, msg=name)
            # flamegraph.pl's scale: the largest change is the deepest colour
            v = 210 * (maxd - abs(delta)) / maxd if maxd else 255
            if abs(delta) < 1e-12:
                self.assertEqual(rgb, (255, 255, 255), name)
            elif delta > 0:
                self.assertEqual(rgb[0], 255, (name, rgb, delta))
                self.assertEqual(rgb[1], rgb[2])
                self.assertAlmostEqual(rgb[1], v, delta=1.0)
            else:
                self.assertEqual(rgb[2], 255, (name, rgb, delta))
                self.assertEqual(rgb[0], rgb[1])
                self.assertAlmostEqual(rgb[0], v, delta=1.0)
        return got, text


class DiffFlamegraphFixedTest(DiffFlamegraphCheck, unittest.TestCase):
    """Known folded inputs: any machine, any load."""

    def write(self, stacks):
        return common.write_profile(STUB, stacks)

    def test_colours_by_change_of_share(self):
        base = {"app;main;infer;matmul": 60, "app;main;db": 30, "app;main;gone": 10}
        # twice the samples: shares decide, not counts (db: 30% -> 15%)
        new = {"app;main;infer;matmul": 150, "app;main;db": 30, "app;main;new one (x)": 20}
        got, text = self.check(self.write(base), self.write(new), base, new)
        colour = {g[0]: g[5] for g in got}
        self.assertEqual(colour["main"], (255, 255, 255))  # 100% in both
        self.assertEqual(colour["matmul"][0], 255)          # 60% -> 75%: grew
        self.assertEqual(colour["db"][2], 255)              # 30% -> 15%: shrank
        self.assertNotIn("gone", colour)                    # only BASE has it: no width
        self.assertIn("Differential flame graph", text)

    def test_missing_stacks(self):
        d = self.write({"a;b": 1})
        os.unlink(os.path.join(d, "stacks.folded"))
        p = subprocess.run([INFERTRACE, "diff", "--flamegraph", os.path.join(d, "diff.svg"), d, self.write({"a": 1})],
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 4)
        self.assertIn("stacks.folded", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "diff.svg")))

    def test_unwritable_output(self):
        d = self.write({"a;b": 1})
        p = subprocess.run([INFERTRACE, "diff", "--flamegraph", "/nonexistent/dir/diff.svg", d, d],
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 6)
        self.assertIn("/nonexistent/dir/diff.svg", p.stderr)


@common.need_root
class DiffFlamegraphRecordedTest(DiffFlamegraphCheck, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        args = ["-F", "499", "--cycle", "run_cycle"]
        # CYCLES INFER_MS TOKENS DB_SLEEP_MS MODE_MS
        cls.a = common.record(args, [common.fixture("experiment"), "6", "20", "2", "1", "2"])
        cls.b = common.record(args, [common.fixture("experiment"), "6", "2", "2", "1", "20"])

    def test_mode_grew_inference_shrank(self):
        base, new = self.a.folded(), self.b.folded()
        # the shapes differ as built (CPU time spun: 20 ms against 2 ms)
        self.assertGreater(common.frame_share(new, "mode"), common.frame_share(base, "mode"))
        self.assertLess(common.frame_share(new, "inference"), common.frame_share(base, "inference"))
        got, text = self.check(self.a.dir, self.b.dir, base, new)
        for name, _, points, _, _, rgb in got:
            if name == "mode" and points > 0:
                self.assertEqual(rgb[0], 255)
            if name == "inference" and points < 0:
                self.assertEqual(rgb[2], 255)
        self.assertTrue(any(g[0] == "mode" and g[2] > 0 for g in got))


if __name__ == "__main__":
    unittest.main()
