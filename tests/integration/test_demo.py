# SPDX-License-Identifier: BSD-2-Clause
"""`make demo` as a new user sees it: tools/demo.sh run once, its own outputs
checked against the driver's own figures (driver.json, the driver's clock)."""
import glob
import json
import os
import unittest

import common
from common import MIN_IN_CYCLE, NAN, THREAD_ADVICE, need_root


@need_root
class DemoTest(common.DemoPageRun):
    """The demo's recording; its report.html is rendered in headless
    Chromium too (ReportPageChecks): a bar per driver cycle, the phases'
    segments and splits as profile.json has them."""

    def test_cycles_and_tokens_are_the_drivers(self):
        p, d = self.profile, self.driver
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], d["cycles"])
        self.assertEqual(p["llama"]["generated_tokens"], sum(d["generated_per_cycle"]))
        self.assertEqual(p["llama"]["prompt_tokens"], d["cycles"] * d["prompt_tokens"])
        # tokens/s over the whole cycle: all tokens over all the cycles' time, as the driver says
        ours = p["aggregate_metrics"]["avg_tokens_per_second_wall"]
        self.assertAlmostEqual(ours / d["tokens_per_second"], 1.0, delta=0.05,
                               msg=f"report {ours:.2f} tok/s, driver {d['tokens_per_second']:.2f}")
        self.assertIn(f"{ours:.2f} over the whole cycle", self.stdout)

    def test_phases_present_with_calls(self):
        ph = self.profile["phases"]
        self.assertEqual(ph["llm_prompt"]["calls"], self.driver["cycles"])
        self.assertEqual(ph["llm_generate"]["calls"], sum(n - 1 for n in self.driver["decode_calls_per_cycle"]))
        # the report's table: a phase that never ran in a cycle shows a dash, never a number or nan
        for line in self.stdout.splitlines():
            if line.startswith(("llm_prompt ", "llm_generate ")):
                self.assertNotIn(" - ", line, line)
            if line.startswith("model_load "):
                self.assertRegex(line, r"^model_load\s+-\s+0\s+-\s+-\s+-\s+-")

    def test_llama_dominates_the_cycles(self):
        """Enough samples inside cycles to judge a share (MIN_IN_CYCLE), at
        least 60% of them in libllama or libggml (in_cycle_samples: a lower
        bound)."""
        inside, llama = self.in_cycle_samples()
        self.assertGreaterEqual(inside, MIN_IN_CYCLE, "samples inside cycles at the default rate")
        self.assertGreaterEqual(llama / inside, 0.60, f"{llama}/{inside} in-cycle samples in llama.cpp")

    def test_verdict(self):
        p = self.profile
        kinds = [b["type"] for b in p["bottlenecks"]]
        self.assertEqual(kinds[0], "llm_inference", kinds)
        text = json.dumps(p["bottlenecks"]) + json.dumps(p["recommendations"]) + self.stdout
        for advice in THREAD_ADVICE:  # one compute thread: no thread advice, busy machine or not
            self.assertNotIn(advice, text)
        # contention only when other work took the CPUs: the machine's busy time
        # beyond the demo's own (target and tracer) over the recording
        own = p["samples"]["target_cpu_seconds"] + p["self"]["cpu_s"]
        others = (self.busy_s - own) / p["duration_s"]
        if others < 0.2:
            self.assertNotIn("cpu_contention", kinds, f"other work used {others:.2f} CPUs")
        elif "cpu_contention" in kinds:
            self.assertLessEqual(next(b for b in p["bottlenecks"] if b["type"] == "cpu_contention")
                                 ["evidence"]["avg_runnable_threads"], 2.5)

    def test_no_nan_anywhere(self):
        self.assertIsNone(NAN.search(self.stdout), "in the demo's report")
        for path in glob.glob(os.path.join(self.out, "*")):
            if path.endswith(".gz"):
                continue
            with open(path, errors="replace") as f:
                m = NAN.search(f.read())
            self.assertIsNone(m, f"{os.path.basename(path)}: {m and m.group(0)}")


if __name__ == "__main__":
    unittest.main()
