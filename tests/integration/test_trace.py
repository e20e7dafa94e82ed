# SPDX-License-Identifier: BSD-2-Clause
"""trace.json as Perfetto and chrome://tracing read it: cycles numbered as in
profile.json, each phase slice naming the cycle it ran in and lying inside
it, every process and thread track named, no time before the start, and
every sample's stack (sf) a chain of stackFrames that is a stack of
stacks.folded."""
import collections
import unittest

import common

CYCLES = 4


def experiment():
    return common.build("experiment", ["experiment.c"], "-O1 -g -lpthread")


@common.need_root
class TraceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # two worker threads run the inference: phases on three threads
        cls.rec = common.record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                                 "--phase", "database=database"],
                                [experiment(), str(CYCLES), "5", "3", "2", "1", "2"])
        cls.trace = common.load_json(cls.rec.dir + "/trace.json")
        cls.events = cls.trace["traceEvents"]

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


if __name__ == "__main__":
    unittest.main()
