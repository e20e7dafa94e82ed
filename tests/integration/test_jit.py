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

from common import FIXTURES, fixture, need_root, record, truth_of


def run_fixture(test, mode, extra=(), period_ms=600, gap_ms=500):
    r = record(["-F", "199"] + list(extra), [fixture("jit_exp"), str(period_ms), str(gap_ms), mode], timeout=120)
    info = truth_of(r)
    test.addCleanup(lambda: os.path.exists(f"/tmp/perf-{info['pid']}.map")
                    and os.unlink(f"/tmp/perf-{info['pid']}.map"))
    return r, info


def counts(folded):
    """Samples per (period, JIT frame) among the fixture's own stacks."""
    c = {}
    for stack, n in folded.items():
        frames = stack.split(";")
        period = next((p for p in ("period_pre", "period_a", "period_b") if p in frames), None)
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
    def test_stale_map_of_a_recycled_pid(self):
        """A map an earlier process left under the PID (an hour old) is not
        read; the process's own, written over it, names its code."""
        r, _ = run_fixture(self, "stale", period_ms=400, gap_ms=300)
        c = counts(r.folded())
        self.assertFalse([k for k in c if k[1] and k[1].startswith("stale_")], c)
        # the code ran before the process named it: period_pre has samples,
        # none named by the stale map (the oldest entry read after names them)
        self.assertGreater(sum(n for (p, _), n in c.items() if p == "period_pre"), 5, c)
        self.assertGreater(c.get(("period_a", "name_a_[j]"), 0), 5, c)
        self.assertGreater(c.get(("period_b", "name_b_[j]"), 0), 5, c)

    @need_root
    def test_map_truncated_and_written_anew(self):
        """A map read, then truncated and written anew shorter (V8 opens it
        "w+" over a stale one): the new lines are read from the start, the old
        entries name nothing after."""
        r, _ = run_fixture(self, "rewritten", period_ms=400, gap_ms=300)
        c = counts(r.folded())
        # dated now, the earlier lines are taken at first: they name period_pre
        self.assertGreater(c.get(("period_pre", "stale_a_[j]"), 0), 5, c)
        self.assertEqual(c.get(("period_a", "stale_a_[j]"), 0) + c.get(("period_b", "stale_a_[j]"), 0), 0, c)
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
        out = truth_of(r)
        if os.path.exists(f"/tmp/perf-{out['pid']}.map"):
            os.unlink(f"/tmp/perf-{out['pid']}.map")
        # the switches record adds write no V8 log into the command's directory
        self.assertEqual([f for f in os.listdir(".") if f.endswith(f"-{out['pid']}-v8.log")], [])
        self.assertTrue(out["perf_map_switches"], "record passes NODE_OPTIONS to the command")
        st = r.folded()
        # the runtime's own name, its space kept: `numericPhase (jsloop.js:17)`
        loop = re.compile(r"(numericPhase|stringPhase|runCycle) \(jsloop\.js:\d+\)_\[j\]")
        # the loop's samples: the main thread inside the script's own module
        # code, after node's start-up (which runs no script frame)
        in_script = {k: v for k, v in st.items() if " (jsloop.js:" in k}
        total = sum(in_script.values())
        named = sum(v for k, v in in_script.items() if loop.search(k))
        self.assertGreater(total, 200, "4 s at 199 Hz")
        self.assertGreaterEqual(named / total, 0.9, f"{named}/{total} carry a loop function")
        # and the script's samples are most of the process's
        self.assertGreater(total / sum(st.values()), 0.6)

    @need_root
    def test_js_loop_suggested_as_a_phase(self):
        """Cycles of 90 ms (60 + 30): runCycle leaves the stacks between
        them; js: specs cannot bound cycles, so the loop is suggested as what
        they can time, a phase."""
        node = self._node()
        r = record(["-F", "199"], [node, os.path.join(FIXTURES, "jsloop.js"), "3", "60", "30"], timeout=120)
        out = truth_of(r)
        self._cleanup_node_files(out["pid"])
        sg = r.profile["suggested_cycle"]
        self.assertEqual(sg["option"], "--phase", sg)
        self.assertTrue(sg["function"].startswith("runCycle (jsloop.js:"), sg)
        self.assertIn("suggested phase: --phase loop=js:runCycle (a JavaScript loop", r.stderr)
        # its bursts are the loop's iterations, not a multiple of them: the
        # period is the loop's own median cycle (samples every 5 ms blur it)
        self.assertLess(abs(sg["period_ms"] - out["median_cycle_ms"]), 0.25 * out["median_cycle_ms"], (sg, out))

    def _node(self):
        node, why = node_binary()
        if not node:
            print(f"skipped: {why}")
            self.skipTest(why)
        return node

    def _cleanup_node_files(self, pid):
        for leftover in [f"/tmp/perf-{pid}.map"] + \
                [f for f in os.listdir(".") if f.endswith(f"-{pid}-v8.log")]:
            if os.path.exists(leftover):
                os.unlink(leftover)

    @need_root
    def test_js_phases_share_of_the_loop_clock(self):
        """js: phases against the loop's own clock: 60 ms of numeric work and
        30 ms of string building per cycle, each timed by the loop itself."""
        node = self._node()
        r = record(["-F", "199", "--phase", "loop=js:runCycle", "--phase", "numeric=js:numericPhase",
                    "--phase", "string=js:stringPhase"],
                   [node, os.path.join(FIXTURES, "jsloop.js"), "5", "60", "30"], timeout=120)
        out = truth_of(r)
        self._cleanup_node_files(out["pid"])
        ph = r.profile["phases"]
        loop_ms = ph["loop"]["total_ms"]
        # runCycle is on the stack for the whole loop: its time is the loop's
        self.assertLess(abs(loop_ms - out["total_ms"]) / out["total_ms"], 0.1, (loop_ms, out))
        for name, own in (("numeric", out["numeric_ms"]), ("string", out["string_ms"])):
            traced = 100 * ph[name]["total_ms"] / loop_ms
            truth = 100 * own / out["total_ms"]
            self.assertLess(abs(traced - truth), 10, f"{name}: traced {traced:.1f}% vs own clock {truth:.1f}%")
            # one interval per call, give or take the run's first and last
            self.assertLess(abs(ph[name]["calls"] - out["cycles"]), 0.25 * out["cycles"] + 2, (name, ph[name], out))
            self.assertGreater(r.profile["samples"]["by_phase"][name]["samples"], 20)
            self.assertTrue(r.folded(f"stacks.{name}.folded"))
        probes = {p["spec"]: p for p in r.profile["probes"]}
        self.assertEqual(probes["js:numericPhase"]["method"], "sampled")
        self.assertNotIn("warning", probes["js:numericPhase"])
        # the trace's phase spans and sample marks carry the js: phases
        with open(os.path.join(r.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        self.assertTrue([e for e in events if e.get("cat") == "phase" and e["name"] == "string"])
        self.assertTrue([e for e in events if e.get("cat") == "sample" and e["args"].get("phase") == "numeric"])

    @need_root
    def test_js_phase_inlined_or_unknown_is_reported(self):
        node = self._node()
        r = record(["-F", "199", "--phase", "step=js:smallStep", "--phase", "ghost=js:noSuchFunction"],
                   [node, os.path.join(FIXTURES, "jsinline.js"), "3"], timeout=120)
        out = truth_of(r)
        self._cleanup_node_files(out["pid"])
        probes = {p["spec"]: p for p in r.profile["probes"]}
        self.assertIn("inlined", probes["js:smallStep"].get("warning", ""), probes)
        self.assertIn("no perf-map entry", probes["js:noSuchFunction"].get("warning", ""), probes)
        self.assertRegex(r.stderr, r"phase step: .*inlined")
        # the same function with inlining off in V8: seen in many samples
        r = record(["-F", "199", "--phase", "step=js:smallStep"],
                   [node, "--no-turbo-inlining", os.path.join(FIXTURES, "jsinline.js"), "3"], timeout=120)
        out = truth_of(r)
        self._cleanup_node_files(out["pid"])
        self.assertGreater(r.profile["samples"]["by_phase"]["step"]["samples"], 20)

    @need_root
    def test_js_specs_refused_where_they_cannot_work(self):
        for args, msg in (
                (["--cycle", "js:runCycle"], "js: specs time phases only"),
                (["--count", "n=js:runCycle"], "js: specs time phases only"),
                (["--call-graph", "fp", "--phase", "a=js:runCycle"], "need --call-graph dwarf"),
                (["--jit-maps", "off", "--phase", "a=js:runCycle"], "not with --jit-maps off"),
                (["--phase", "a=js:runCycle,libc:malloc"], "mixes js: specs")):
            r = record(args, ["/bin/true"], check=False)
            self.assertNotEqual(r.proc.returncode, 0, args)
            self.assertIn(msg, r.stderr, args)



if __name__ == "__main__":
    unittest.main()
