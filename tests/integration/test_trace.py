# SPDX-License-Identifier: BSD-2-Clause
"""trace.json as Perfetto and chrome://tracing read it: cycles numbered as in
profile.json, each phase slice naming the cycle it ran in and lying inside
it, every process and thread track named, no time before the start, and
every sample's stack (sf) a chain of stackFrames that is a stack of
stacks.folded. The main thread's blocked system calls are off-CPU slices
with their reason: in the database phase, the fixture's nanosleep. Every
thread's slices nest properly, as speedscope needs to build one timeline per
thread; and real speedscope (npm's, tests/peers, in headless Chromium) imports the file
without a nesting complaint."""
import base64
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import common

CYCLES = 4
DB_MS = 3
BROWSER = shutil.which("chromium-headless-shell") or shutil.which("chromium")


@common.need_root
class TraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # two worker threads run the inference: phases on three threads;
        # blocks of 1 ms or more with their own stacks (a sampled block's
        # slice has none: test_offcpu_sampling)
        cls.rec = common.record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                                 "--phase", "database=database", "--offcpu-sample-us", "1000"],
                                [common.fixture("experiment"), str(CYCLES), "5", "3", str(DB_MS), "1", "2"])
        cls.trace = common.load_json(cls.rec.dir + "/trace.json")
        cls.events = cls.trace["traceEvents"]
        cls.fixture = json.loads(cls.rec.stdout)

    def slices(self, cat):
        return [e for e in self.events if e["ph"] == "X" and e.get("cat") == cat]

    def test_cycle_slices_carry_the_profile_index(self):
        cycles = {c["index"]: c for c in self.rec.profile["cycles"]}
        got = self.slices("cycle")
        self.assertEqual(sorted(e["args"]["index"] for e in got), sorted(cycles))
        self.assertEqual(len(got), CYCLES)
        for e in got:
            self.assertAlmostEqual(e["dur"] / 1e3, cycles[e["args"]["index"]]["duration_ms"], delta=0.01)

    def test_phase_slices_name_their_cycle_and_lie_inside_it(self):
        cycles = {e["args"]["index"]: e for e in self.slices("cycle")}
        phases = self.slices("phase")
        # per cycle: one inference call on each of 2 workers (or on the main
        # thread) and one database call, by construction of the fixture
        self.assertGreaterEqual(len(phases), 2 * CYCLES)
        for e in phases:
            i = e["args"]["cycle"]
            self.assertIn(i, cycles, e)
            c = cycles[i]
            self.assertEqual(e["pid"], c["pid"])
            self.assertGreaterEqual(e["ts"], c["ts"] - 0.001, (e, c))
            self.assertLessEqual(e["ts"] + e["dur"], c["ts"] + c["dur"] + 0.001, (e, c))
            self.assertAlmostEqual(e["args"]["duration_ms"], e["dur"] / 1e3, delta=0.002)

    def test_tracks_named(self):
        named_p = {e["pid"] for e in self.events if e["ph"] == "M" and e["name"] == "process_name"}
        named_t = {(e["pid"], e["tid"]) for e in self.events if e["ph"] == "M" and e["name"] == "thread_name"}
        used = {(e["pid"], e["tid"]) for e in self.events if e["ph"] in ("X", "i")}
        self.assertTrue(used)
        self.assertLessEqual({p for p, _ in used}, named_p)
        self.assertLessEqual(used, named_t)
        # the workers' phase slices are on their own, named tracks
        self.assertGreater(len({t for p, t in used}), 1)

    def test_no_time_before_the_start(self):
        self.assertGreaterEqual(min(e["ts"] for e in self.events if "ts" in e), 0)

    def test_samples_reference_their_stacks(self):
        frames = self.trace["stackFrames"]
        folded = self.rec.folded()
        samples = [e for e in self.events if e["ph"] == "i" and e.get("cat") == "sample"]
        self.assertTrue(samples)
        seen = collections.Counter()
        for e in samples:
            self.assertIn("sf", e, e)
            chain, at = [], e["sf"]
            while at is not None:
                chain.append(frames[at]["name"])
                at = frames[at].get("parent")
                self.assertLess(len(chain), 1000)
            stack = ";".join(reversed(chain))
            self.assertIn(stack, folded)
            seen[stack] += 1
        # each stack has as many samples on the timeline as stacks.folded
        # counts, or fewer (the timeline keeps at most 2^20 samples)
        for stack, n in seen.items():
            self.assertLessEqual(n, folded[stack], stack)
        if not self.rec.profile["lost"].get("trace_samples_not_kept"):
            self.assertEqual(sum(seen.values()), sum(folded.values()))

    def test_offcpu_slices_are_the_database_sleep(self):
        """Per cycle, the main thread's off-CPU slices inside its database
        phase slice are sleeps, and add up to the time the fixture's own
        clock saw database() take, less what the scheduler saw it run or wait
        for a CPU in it, within 5% or 1 ms; and to no less than 95% of the
        sleep asked (nanosleep sleeps at least that long) when the call was
        not preempted. A sleep that did not block (the fixture saw no
        voluntary switch in it: kept off its CPU past the sleep's end before
        it reached schedule()) has no slice to show."""
        pid = self.rec.profile["pids"][0]
        cycles = {e["args"]["index"]: e for e in self.slices("cycle")}
        off = [e for e in self.slices("offcpu") if e["tid"] == pid]
        self.assertTrue(off)
        quality = self.rec.profile["offcpu"]["stack_quality"]
        for i, c in cycles.items():
            db = [e for e in self.slices("phase") if e["tid"] == pid and e["name"] == "database"
                  and e["args"]["cycle"] == i]
            self.assertEqual(len(db), 1, (i, db))
            db = db[0]
            inside = [e for e in off if db["ts"] <= e["ts"] and e["ts"] + e["dur"] <= db["ts"] + db["dur"]]
            if not self.fixture["database_blocked"][i]:
                continue
            self.assertTrue(inside, (i, db, quality, self.fixture))
            for e in inside:
                self.assertEqual(e["name"], "sleep", e)
                self.assertEqual(e["args"]["reason"], "sleep", e)
                self.assertIn("nanosleep", e["args"]["stack"], e)
                self.assertIn("sf", e)
            blocked = sum(e["args"]["blocked_ms"] for e in inside)
            ph = next(x for x in self.rec.profile["cycles"] if x["index"] == i)["phases"]["database"]
            wall = self.fixture["database_wall_ms"][i]
            self.assertLessEqual(blocked, wall + 0.01, (i, blocked, wall))
            expect = wall - ph["oncpu_ms"] - ph["runq_wait_ms"]
            self.assertLessEqual(abs(blocked - expect), max(1.0, 0.05 * expect), (i, blocked, wall, ph))
            if not self.fixture["database_preempted"][i]:
                self.assertGreaterEqual(blocked, 0.95 * DB_MS, (i, blocked))
            # the slices' own extent agrees with their blocked time
            self.assertAlmostEqual(sum(e["dur"] for e in inside) / 1e3, blocked, delta=0.002 * len(inside) + 0.001)

    def test_slices_lie_inside_their_threads_lifetime(self):
        """The main thread's slices lie inside the recording; a worker's
        inside one of the main thread's inference calls, which create and
        join the workers (by construction of the fixture)."""
        pid = self.rec.profile["pids"][0]
        end_us = self.rec.profile["duration_s"] * 1e6
        infer = [e for e in self.slices("phase") if e["tid"] == pid and e["name"] == "llm_inference"]
        self.assertEqual(len(infer), CYCLES)
        for e in self.events:
            if e["ph"] != "X":
                continue
            self.assertGreaterEqual(e["ts"], 0, e)
            self.assertLessEqual(e["ts"] + e["dur"], end_us + 1, e)
            if e["tid"] != pid and e["pid"] == pid:
                self.assertTrue(any(i["ts"] <= e["ts"] and e["ts"] + e["dur"] <= i["ts"] + i["dur"]
                                    for i in infer), e)

    def test_slices_nest_per_thread(self):
        """What speedscope's Chrome importer needs to build one call tree per
        thread from X events (it sorts them by ts, longer first, and ends
        each at ts + dur): per thread, every slice lies inside the one it
        starts in, or starts after it ended; times are whole microseconds, so
        that ts + dur is exact in a viewer."""
        per = collections.defaultdict(list)
        for e in self.events:
            if e["ph"] == "X":
                self.assertEqual(e["ts"], int(e["ts"]), e)
                self.assertEqual(e["dur"], int(e["dur"]), e)
                per[(e["pid"], e["tid"])].append(e)
        for track, evs in per.items():
            stack = []
            for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
                while stack and stack[-1] <= e["ts"]:
                    stack.pop()
                if stack:
                    self.assertLessEqual(e["ts"] + e["dur"], stack[-1], (track, e))
                stack.append(e["ts"] + e["dur"])
        # the fixture's phases and sleeps nest in their cycles: nothing cut
        self.assertFalse([e for e in self.events if e.get("args", {}).get("clipped")])

    def test_speedscope_imports_one_timeline_per_thread(self):
        """Real speedscope (npm's, in headless Chromium, loaded as its CLI
        loads a file) imports trace.json as Trace Event Format without a
        complaint about nesting (what a staircase of cycles shows), shows the
        main thread's timeline, and lists each cycle, phase and sleep with
        the cycle's own duration as its total."""
        if not BROWSER:
            self.skipTest("no chromium-headless-shell (make deps installs it)")
        index = common.SPEEDSCOPE
        if not os.path.exists(index):
            self.skipTest("no speedscope in tests/peers (tools/install-deps.sh test installs it)")
        tmp = tempfile.mkdtemp(prefix="it-speedscope-")
        self.addCleanup(shutil.rmtree, tmp, True)
        with open(os.path.join(self.rec.dir, "trace.json"), "rb") as f:
            data = base64.b64encode(f.read()).decode()
        loader = os.path.join(tmp, "profile.js")
        with open(loader, "w") as f:
            f.write("speedscope.loadFileFromBase64(%s, %s)" % (json.dumps("trace.json"), json.dumps(data)))
        url = "file://" + index + "#localProfilePath=" + loader + "&view=sandwich"
        r = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                            "--v=0", "--virtual-time-budget=5000", "--dump-dom", url],
                           capture_output=True, text=True, timeout=120)
        console = [line for line in r.stderr.splitlines() if "CONSOLE" in line]
        self.assertTrue(any("Importing as Trace Event Format profile" in c for c in console), console)
        bad = [c for c in console if "Tried to end" in c or "still open" in c or "rror" in c]
        self.assertFalse(bad)
        text = re.sub(r"<[^>]+>", "\n", r.stdout)
        pid = self.rec.profile["pids"][0]
        self.assertIn(f"(tid {pid})", text)
        # sandwich rows: total, self, name; a cycle's total is its own
        # duration (in a staircase it holds every later cycle too)
        cells = [c.strip() for c in text.split("\n") if c.strip()]
        for e in self.slices("cycle"):
            name = next(c for c in cells if c.startswith(e["name"] + " {"))
            total = cells[cells.index(name) - 2]
            m = re.match(r"([0-9.]+)(ms|s)\b", total)
            self.assertTrue(m, (name, total))
            ms = float(m.group(1)) * (1e3 if m.group(2) == "s" else 1)
            self.assertAlmostEqual(ms, e["dur"] / 1e3, delta=0.01 * e["dur"] / 1e3 + 0.01, msg=(name, total))
        for want in ("llm_inference {", "database {", "sleep {"):
            self.assertTrue(any(c.startswith(want) for c in cells), want)


if __name__ == "__main__":
    unittest.main()
