# SPDX-License-Identifier: BSD-2-Clause
"""Off-CPU stacks of short blocks, sampled by time (--offcpu-sample-us,
1000 here, 10000 by default): a pipe ping-pong blocks tens of thousands of times for
microseconds, and copying and unwinding each block's stack would cost as
much as the block. A thread's short blocks in one phase are cut into
windows of about one period of blocked time, each weighed on one block
elected in proportion to its blocked time; every longer block keeps its own
copy and its exact weight.
Ground truth by construction (tests/fixtures/pingpong.c): the parent makes
three round trips in ping_a for one in ping_b and times both, and sleeps
2 ms every 300 rounds in pause_us, timed by its own clocks."""
import json
import os
import unittest

import common

ROUNDS = 24000
SLEEP_EVERY = 300
SLEEP_US = 2000


@common.need_root
class OffcpuSamplingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cmd = [common.fixture("pingpong"), str(ROUNDS), str(SLEEP_EVERY), str(SLEEP_US)]
        cls.rec = common.record(["--offcpu-sample-us", "1000"], cmd)
        cls.truth = common.truth_of(cls.rec)
        cls.exact = common.record(["--offcpu-sample-us", "0"], cmd)
        cls.exact_truth = common.truth_of(cls.exact)

    def test_few_copies_all_blocked_time_in_stacks(self):
        p, t = self.rec.profile, self.truth
        q = p["offcpu"]["stack_quality"]
        d = q["dwarf"]
        self.assertEqual(d["sample_us"], 1000)
        self.assertEqual(p["config"]["offcpu_sample_us"], 1000)
        # copies: a few per millisecond of short blocks per thread, and one
        # per sleep; the parent alone blocked once per round trip
        self.assertLess(d["records"] * 3, t["voluntary_switches"], (d, t))
        self.assertGreater(d["candidates"], 0, d)
        self.assertGreater(d["sampled_ms"], 0, d)
        self.assertEqual(d["sent"], d["records"])
        # the blocked time is in stacks, with their whole chains
        self.assertGreaterEqual(q["complete_percent"], 95, q)
        self.assertGreaterEqual(q["blocked_in_stacks_ms"], 0.95 * p["offcpu"]["total_ms"], (q, p["offcpu"]))
        # and nothing is weighed twice: the stacks hold the blocked time
        # less what is left out by name (short runs of exited threads, runs
        # without a copy of their own, blocks under --min-block-us)
        self.assertLessEqual(q["blocked_in_stacks_ms"],
                             p["offcpu"]["total_ms"] - d["short_exited_ms"] - d["unweighed_ms"] + 0.01, (q, p["offcpu"]))

    def test_long_blocks_keep_exact_weights(self):
        """Every 2 ms sleep has its own copy: pause_us weighs no more than
        the sleeps' time by the fixture's clock, less what it ran in them,
        and no less than the sleeps asked (nanosleep blocks at least that
        long), by 10%."""
        t = self.truth
        slept = common.offcpu_ms(self.rec.folded("offcpu.folded"), "pause_us")
        self.assertLessEqual(slept, t["blocked_sleep_ms"] - t["sleep_cpu_ms"] + 0.5, t)
        self.assertGreaterEqual(slept, 0.9 * (ROUNDS // SLEEP_EVERY) * SLEEP_US / 1e3, (slept, t))

    def test_short_blocks_weighed_in_proportion(self):
        """ping_b's share of the two callers' blocked time is its share of
        their time by the fixture's clock (a quarter of the rounds), within
        the sampling error of some hundreds of copies."""
        t = self.truth
        folded = self.rec.folded("offcpu.folded")
        a, b = common.offcpu_ms(folded, "ping_a"), common.offcpu_ms(folded, "ping_b")
        self.assertGreater(a + b, 0)
        want = t["ping_b_ms"] / (t["ping_a_ms"] + t["ping_b_ms"])
        self.assertAlmostEqual(b / (a + b), want, delta=0.12, msg=(a, b, t))

    def test_zero_copies_every_block(self):
        p, t = self.exact.profile, self.exact_truth
        d = p["offcpu"]["stack_quality"]["dwarf"]
        self.assertEqual(d["sample_us"], 0)
        self.assertEqual(d["candidates"], 0)
        self.assertEqual(d["sampled_ms"], 0)
        # the parent's blocks alone are one per round trip (its voluntary
        # switches, by its own count); the child blocks as often
        self.assertGreaterEqual(d["sent"] + d["lost"], t["voluntary_switches"], (d, t))
        folded = self.exact.folded("offcpu.folded")
        slept = common.offcpu_ms(folded, "pause_us")
        self.assertLessEqual(slept, t["blocked_sleep_ms"] + 0.5, t)

    def test_default_period_and_slices_of_sampled_blocks(self):
        """By default a block is sampled below 10 ms: the 2 ms sleeps share
        copies too, yet each shows in trace.json as an off-CPU slice of its
        own (a small record, no stack) inside pause_us's time, and all the
        blocked time is still in stacks."""
        rounds = 6000
        rec = common.record([], [common.fixture("pingpong"), str(rounds), str(SLEEP_EVERY), str(SLEEP_US)])
        p, t = rec.profile, common.truth_of(rec)
        q = p["offcpu"]["stack_quality"]
        self.assertEqual(p["config"]["offcpu_sample_us"], 10000)
        self.assertEqual(q["dwarf"]["sample_us"], 10000)
        self.assertGreaterEqual(q["blocked_in_stacks_ms"], 0.95 * p["offcpu"]["total_ms"], (q, p["offcpu"]))
        # fewer copies than sleeps: the sleeps are sampled with the rest
        sleeps = rounds // SLEEP_EVERY
        self.assertLess(q["dwarf"]["records"], t["voluntary_switches"] // 10, q["dwarf"])
        with open(os.path.join(rec.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        slices = [e for e in events if e.get("cat") == "offcpu" and e.get("ph") == "X"]
        # one sleep slice per sleep of the parent (>= 1 ms each; the child
        # waits on the pipe meanwhile: slices of another reason)
        long = [e for e in slices if e["args"]["reason"] == "sleep"]
        self.assertEqual(len(long), sleeps, [(e["dur"], e["tid"]) for e in slices][:10])
        self.assertTrue(all(e["dur"] >= SLEEP_US for e in long), [e["dur"] for e in long])
        slept = sum(e["dur"] for e in long) / 1e3
        self.assertLessEqual(slept, t["blocked_sleep_ms"] - t["sleep_cpu_ms"] + 0.5, t)
        self.assertGreaterEqual(slept, 0.9 * sleeps * SLEEP_US / 1e3, t)

    def test_bad_value(self):
        r = common.record(["--offcpu-sample-us", "-3"], ["true"], check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("--offcpu-sample-us", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
