# SPDX-License-Identifier: BSD-2-Clause
"""`make demo-python` as a new user sees it: tools/demo-python.sh run once (the
same libllama and model as make demo, set up by tools/demo-setup.sh), its own
outputs checked against the Python driver's own figures (driver.json)."""
import glob
import json
import os
import unittest

import common
from common import MIN_IN_CYCLE, NAN, THREAD_ADVICE, need_root


@need_root
class DemoPythonTest(common.DemoPageRun):
    """The Python demo's recording; its report.html is rendered in headless
    Chromium too (ReportPageChecks): a bar per driver cycle, the phases'
    segments and splits as profile.json has them, the top functions those
    of the Python view."""
    SCRIPT, TIMEOUT, WHAT = "demo-python.sh", 600, "make demo-python"

    def test_page_top_functions_are_pythons_view(self):
        """A Python target: report.html's top functions come from the
        Python view (test_page_top_functions checks them against it)."""
        self.assertTrue(os.path.exists(os.path.join(self.out, "stacks.python.folded")))

    def test_cycles_and_tokens_are_the_drivers(self):
        p, d = self.profile, self.driver
        self.assertTrue(d["driver"].startswith("python-"), d["driver"])
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], d["cycles"])
        self.assertEqual(p["llama"]["generated_tokens"], sum(d["generated_per_cycle"]))
        self.assertEqual(p["llama"]["prompt_tokens"], d["cycles"] * d["prompt_tokens"])
        self.assertIn(f"Driver says: {d['cycles']} cycles, {sum(d['generated_per_cycle'])} tokens", self.stdout)
        # the database the loop wrote: one row per cycle and per token
        self.assertEqual(d["db_rows"], d["cycles"] + sum(d["generated_per_cycle"]))
        self.assertTrue(os.path.exists(os.path.join(self.out, "results.db")))

    def test_phases_present_with_calls(self):
        ph, d = self.profile["phases"], self.driver
        self.assertEqual(ph["llm_prompt"]["calls"], d["cycles"])
        self.assertEqual(ph["llm_generate"]["calls"], sum(n - 1 for n in d["decode_calls_per_cycle"]))
        # py: phases, one call per cycle (the last cycle ends with its own steps)
        for name in ("memory", "database"):
            self.assertEqual(ph[name]["calls"], d["cycles"], name)
            self.assertEqual(ph[name]["outside_cycles"]["calls"], 0, name)
            self.assertGreater(ph[name]["total_ms"], 0, name)
        for line in self.stdout.splitlines():
            if line.startswith(("llm_prompt ", "llm_generate ", "memory ", "database ")):
                self.assertNotIn(" - ", line, line)
        self.assertIn("Python phases (py: specs)", self.stdout)

    def test_llama_dominates_the_cycles(self):
        """At least 60% of in-cycle samples with their leaf in libllama or
        libggml, by the libraries' own symbol tables (a lower bound)."""
        inside, llama = self.in_cycle_samples()
        self.assertGreaterEqual(inside, MIN_IN_CYCLE, "samples inside cycles")
        self.assertGreaterEqual(llama / inside, 0.60, f"{llama}/{inside} in-cycle samples in llama.cpp")

    def test_verdict(self):
        p = self.profile
        kinds = [b["type"] for b in p["bottlenecks"]]
        self.assertEqual(kinds[0], "llm_inference", kinds)
        text = json.dumps(p["bottlenecks"]) + json.dumps(p["recommendations"]) + self.stdout
        for advice in THREAD_ADVICE:
            self.assertNotIn(advice, text)
        # contention only when other work took the CPUs (as test_demo)
        own = p["samples"]["target_cpu_seconds"] + p["self"]["cpu_s"]
        others = (self.busy_s - own) / p["duration_s"]
        if others < 0.2:
            self.assertNotIn("cpu_contention", kinds, f"other work used {others:.2f} CPUs")

    def test_no_nan_anywhere(self):
        self.assertIsNone(NAN.search(self.stdout), "in the demo's report")
        for path in glob.glob(os.path.join(self.out, "*")):
            if path.endswith((".gz", ".db")):
                continue
            with open(path, errors="replace") as f:
                m = NAN.search(f.read())
            self.assertIsNone(m, f"{os.path.basename(path)}: {m and m.group(0)}")


if __name__ == "__main__":
    unittest.main()
