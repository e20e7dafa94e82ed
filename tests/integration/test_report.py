# SPDX-License-Identifier: BSD-2-Clause
"""`infertrace report` on a real recording of the experiment fixture (counts
and shape only), and `infertrace diff` on fixed profiles whose changes are
known by construction (two live runs would compare the machine's load)."""
import json
import os
import subprocess
import tempfile
import unittest

from common import INFERTRACE, build, need_root, record

ARGS = ["--cycle", "run_cycle", "--phase", "llm_inference=inference", "--phase", "database=database",
        "--phase", "mode=mode", "--count", "tokens=token"]


def experiment():
    return build("experiment", ["experiment.c"], "-O1 -g -fno-omit-frame-pointer -pthread")


@need_root
class TestReportDiff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = record(ARGS, [experiment(), "5", "20", "4", "5", "2"])

    def test_report_summarizes(self):
        p = subprocess.run([INFERTRACE, "report", self.base.dir], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Cycles: 5", p.stdout)
        for phase in ("llm_inference", "database", "mode"):
            self.assertIn(phase, p.stdout)
        self.assertIn("Top on-CPU functions", p.stdout)

    def test_report_bad_input(self):
        p = subprocess.run([INFERTRACE, "report", "/nonexistent"], text=True, stderr=subprocess.PIPE)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("/nonexistent", p.stderr)



def profile(avg_cycle_ms, phases):
    """A profile.json whose figures are known: phases {name: (total_ms, calls)}."""
    return {
        "schema_version": "1.0", "tool": {"name": "infertrace", "version": "test"}, "duration_s": 1.0,
        "aggregate_metrics": {"total_cycles": 10, "avg_cycle_ms": avg_cycle_ms, "p50_cycle_ms": avg_cycle_ms,
                              "p95_cycle_ms": avg_cycle_ms, "p99_cycle_ms": avg_cycle_ms,
                              "max_cycle_ms": avg_cycle_ms},
        "phases": {n: {"total_ms": t, "calls": c, "percent_of_cycle": 10.0} for n, (t, c) in phases.items()},
        "cycles": [], "bottlenecks": [], "recommendations": [], "lost": {"samples": 0, "events": 0},
    }


class TestDiffOnKnownProfiles(unittest.TestCase):
    """diff on fixed inputs whose changes are known: any machine, any load."""

    def write(self, p):
        d = tempfile.mkdtemp(prefix="it-diff-")
        with open(os.path.join(d, "profile.json"), "w") as f:
            json.dump(p, f)
        return d

    def diff(self, *args):
        return subprocess.run([INFERTRACE, "diff", *args], text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)

    def line(self, out, prefix):
        return [l for l in out.splitlines() if l.startswith(prefix)][0]

    def test_report_prints_llama_figures(self):
        p = profile(100.0, {"llm_prompt": (20.0, 10), "llm_generate": (70.0, 70)})
        p["llama"] = {"prompt_tokens": 100, "generated_tokens": 80, "prefill_ms": 200.0, "decode_ms": 700.0,
                      "prefill_tokens_per_s": 500.0, "decode_tokens_per_s": 112.857,
                      "j_per_generated_token": 0.125}
        r = subprocess.run([INFERTRACE, "report", self.write(p)], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("llama.cpp: prompt 100 tokens in 200.0 ms (500.0 tok/s), generation 80 tokens in "
                      "700.0 ms (112.9 tok/s), 0.125 J per generated token", r.stdout)
        # without measured energy: no energy figure at all
        del p["llama"]["j_per_generated_token"]
        r = subprocess.run([INFERTRACE, "report", self.write(p)], text=True, stdout=subprocess.PIPE)
        self.assertNotIn("J per generated token", r.stdout)
        self.assertNotIn("nan", r.stdout)

    def test_stack_hint_follows_the_call_graph_mode(self):
        p = profile(100.0, {})
        p["samples"] = {"total": 100, "requested_hz": 99, "achieved_hz": 99.0, "target_cpu_seconds": 1.0,
                        "stack_quality": {"complete_percent": 50.0,
                                          "by_leaf_object": {"libfoo.so": {"samples": 100, "truncated_percent": 50.0}}}}
        for mode in ("fp", "dwarf"):
            p["samples"]["call_graph"] = mode
            r = subprocess.run([INFERTRACE, "report", self.write(p)], text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 0, r.stderr)
            warning = self.line(r.stdout, "  warning: 50% of stacks in libfoo.so end early")
            if mode == "fp":
                self.assertIn("try --call-graph dwarf", warning)
            else:
                self.assertNotIn("try --call-graph dwarf\n", r.stdout)
                self.assertIn("with --call-graph dwarf", warning)
                self.assertIn("--call-graph dwarf,SIZE", warning)

    def test_regression_and_speedup(self):
        base = self.write(profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)}))
        slow = self.write(profile(120.0, {"llm_inference": (400.0, 10), "database": (50.0, 10)}))
        p = self.diff(base, slow)
        self.assertEqual(p.returncode, 1, p.stdout)
        line = self.line(p.stdout, "phase llm_inference")
        self.assertIn("REGRESSION", line)
        self.assertAlmostEqual(float(line.split()[5].rstrip("%")), 100.0, places=1)
        self.assertNotIn("REGRESSION", self.line(p.stdout, "phase database"))
        self.assertAlmostEqual(float(self.line(p.stdout, "avg_cycle_ms").split()[3].rstrip("%")), 20.0, places=1)
        # the other way round: faster, and within a 25% threshold no regression
        p = self.diff("--threshold", "25", slow, base)
        self.assertEqual(p.returncode, 0, p.stdout)
        line = self.line(p.stdout, "phase llm_inference")
        self.assertIn("faster", line)
        self.assertAlmostEqual(float(line.split()[5].rstrip("%")), -50.0, places=1)

    def test_missing_or_null_figure_fails_the_gate(self):
        base = self.write(profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)}))
        gone = self.write(profile(100.0, {"llm_inference": (200.0, 10)}))
        p = self.diff(base, gone)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("MISSING", self.line(p.stdout, "phase database"))
        nul = profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)})
        nul["aggregate_metrics"]["p95_cycle_ms"] = None
        p = self.diff(base, self.write(nul))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("MISSING", self.line(p.stdout, "p95_cycle_ms"))

    def test_malformed_and_other_version(self):
        base = self.write(profile(100.0, {}))
        bad = tempfile.mkdtemp(prefix="it-diff-")
        with open(os.path.join(bad, "profile.json"), "w") as f:
            f.write('{"cycles": [1, 2')
        p = self.diff(base, bad)
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn(bad, p.stderr)
        other = profile(100.0, {})
        other["schema_version"] = "9.0"
        p = self.diff(base, self.write(other))
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn("schema_version 9.0", p.stderr)
        other = profile(100.0, {})
        other["cycles"] = {"not": "an array"}
        p = self.diff(base, self.write(other))
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn("cycles", p.stderr)


if __name__ == "__main__":
    unittest.main()
