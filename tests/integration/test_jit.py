# SPDX-License-Identifier: BSD-2-Clause
"""JIT frames named from perf maps.

jit_exp writes machine code into an anonymous executable mapping, names it
name_a in /tmp/perf-PID.map and runs it from period_a(); then frees it, maps
other code at the same address under name_b and runs that from period_b().
The periods are native functions of the fixture, so every stack says which
period it was taken in, independently of the JIT name: a resolver that
ignored time would give one name to both periods and fail. Also: a map with
garbage and a 100 KB line, and a FIFO in place of the map; and a node loop
with known functions (skipped when no node >= 18 is available)."""
import json
import os
import re
import shutil
import subprocess
import unittest

from common import FIXTURES, build, need_root, record


def fixture():
    return build("jit_exp", ["jit_exp.c"], flags="-O1 -fno-omit-frame-pointer -g")


def run_fixture(test, mode, extra=(), period_ms=600, gap_ms=500):
    r = record(["-F", "199"] + list(extra), [fixture(), str(period_ms), str(gap_ms), mode], timeout=120)
    info = json.loads(r.stdout.strip().splitlines()[-1])
    test.addCleanup(lambda: os.path.exists(f"/tmp/perf-{info['pid']}.map")
                    and os.unlink(f"/tmp/perf-{info['pid']}.map"))
    return r, info


def counts(folded):
    """Samples per (period, JIT frame) among the fixture's own stacks."""
    c = {}
    for stack, n in folded.items():
        frames = stack.split(";")
        period = next((p for p in ("period_a", "period_b") if p in frames), None)
        jit = [f for f in frames if f.endswith("_[j]")]
        key = (period, jit[-1] if jit else None)
        c[key] = c.get(key, 0) + n
    return c


@unittest.skipUnless(os.uname().machine == "x86_64", "the fixture emits x86-64 code")
class JitMapTest(unittest.TestCase):
    @need_root
    def test_reused_address_named_by_time(self):
        r, info = run_fixture(self, "normal")
        c = counts(r.folded())
        a = c.get(("period_a", "name_a_[j]"), 0)
        b = c.get(("period_b", "name_b_[j]"), 0)
        # each period spins in its JIT code most of the time: 600 ms at 199 Hz
        # is 120 samples on an idle CPU; a busy machine gives the fixture less
        self.assertGreater(a, 10, c)
        self.assertGreater(b, 10, c)
        # exactly: no sample of one period carries the other period's name
        self.assertEqual(c.get(("period_a", "name_b_[j]"), 0), 0, c)
        self.assertEqual(c.get(("period_b", "name_a_[j]"), 0), 0, c)
        # and the JIT code is named, not [unknown], whenever a period runs it
        unnamed = sum(n for (p, j), n in c.items() if p and j is None)
        self.assertLess(unnamed, 0.1 * (a + b), c)
        # trace.json names each sample's leaf at its own time too: every
        # name_a sample comes before every name_b one (period_a ends before
        # the code is replaced), both many, all marked as JIT frames
        with open(os.path.join(r.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        marks = [e for e in events if e.get("cat") == "sample" and e["pid"] == info["pid"]
                 and e["name"] in ("name_a", "name_b")]
        ta = [e["ts"] for e in marks if e["name"] == "name_a"]
        tb = [e["ts"] for e in marks if e["name"] == "name_b"]
        self.assertGreater(len(ta), 10)
        self.assertGreater(len(tb), 10)
        self.assertLess(max(ta), min(tb))
        self.assertTrue(all(e["args"].get("jit") for e in marks))

    @need_root
    def test_fp_stacks_get_the_newest_entry(self):
        """Stacks aggregated in the kernel carry no time: the newest entry names both periods."""
        r, _ = run_fixture(self, "normal", ["--call-graph", "fp"], period_ms=400, gap_ms=200)
        c = counts(r.folded())
        self.assertGreater(c.get(("period_a", "name_b_[j]"), 0), 5, c)
        self.assertGreater(c.get(("period_b", "name_b_[j]"), 0), 5, c)
        self.assertEqual(c.get(("period_a", "name_a_[j]"), 0) + c.get(("period_b", "name_a_[j]"), 0), 0, c)

    @need_root
    def test_garbage_and_huge_lines(self):
        r, _ = run_fixture(self, "garbage", period_ms=400, gap_ms=300)
        self.assertRegex(r.stderr, r"perf map .* malformed, over-long")
        c = counts(r.folded())
        self.assertGreater(c.get(("period_a", "name_a_[j]"), 0), 5, c)
        self.assertGreater(c.get(("period_b", "name_b_[j]"), 0), 5, c)

    @need_root
    def test_fifo_in_place_of_the_map(self):
        r, _ = run_fixture(self, "fifo", period_ms=300, gap_ms=200)
        self.assertEqual(len(re.findall(r"perf map .*\(not a regular file\)", r.stderr)), 1, r.stderr)
        c = counts(r.folded())
        self.assertFalse([k for k in c if k[1]], c)  # no names: native stacks as before
        self.assertGreater(c.get(("period_a", None), 0) + c.get(("period_b", None), 0), 10, c)

    @need_root
    def test_off(self):
        r, _ = run_fixture(self, "normal", ["--jit-maps", "off"], period_ms=300, gap_ms=100)
        self.assertFalse([k for k in counts(r.folded()) if k[1]])


def node_binary():
    """(path, None) or (None, why not)."""
    demo = os.path.join(os.path.dirname(FIXTURES), "..", "demo", "bin", "node")
    node = demo if os.access(demo, os.X_OK) else shutil.which("node")
    if not node:
        return None, "no node binary (demo/bin/node or node on PATH)"
    v = subprocess.run([node, "--version"], text=True, capture_output=True).stdout.strip()
    m = re.match(r"v(\d+)", v)
    if not m or int(m.group(1)) < 18:
        return None, f"node {v or '?'} is older than 18"
    return node, None


class NodeLoopTest(unittest.TestCase):
    @need_root
    def test_node_loop_functions_named(self):
        node, why = node_binary()
        if not node:
            print(f"skipped: {why}")
            self.skipTest(why)
        r = record(["-F", "199"], [node, os.path.join(FIXTURES, "jsloop.js"), "4"], timeout=120)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        for leftover in [f"/tmp/perf-{out['pid']}.map"] + \
                [os.path.join(os.getcwd(), f) for f in os.listdir(".") if f.endswith(f"-{out['pid']}-v8.log")]:
            if os.path.exists(leftover):
                os.unlink(leftover)
        self.assertTrue(out["perf_map_switches"], "record passes NODE_OPTIONS to the command")
        st = r.folded()
        loop = re.compile(r"(numericPhase|stringPhase|runCycle)_\(jsloop\.js:\d+\)_\[j\]")
        # the loop's samples: the main thread inside the script's own module
        # code, after node's start-up (which runs no script frame)
        in_script = {k: v for k, v in st.items() if "_(jsloop.js:" in k}
        total = sum(in_script.values())
        named = sum(v for k, v in in_script.items() if loop.search(k))
        self.assertGreater(total, 200, "4 s at 199 Hz")
        self.assertGreaterEqual(named / total, 0.9, f"{named}/{total} carry a loop function")
        # and the script's samples are most of the process's
        self.assertGreater(total / sum(st.values()), 0.6)


if __name__ == "__main__":
    unittest.main()
