# SPDX-License-Identifier: BSD-2-Clause
"""The form of every output of a recording, on a fixed fixture whose
structure is known: profile.json's sections and keys, the cycle count, the
phase names, the roots of the folded stacks, the trace's event kinds, the
SVG and the HTML page. Values are measured and checked elsewhere; this test
fails when a writer drops or renames something."""
import os
import re
import sys
import unittest

from common import experiment_args, fixture, need_root, record

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import output_shape  # noqa: E402

CYCLES = 4
TOP_LEVEL = {
    "schema_version", "tool", "system", "phases", "aggregate_metrics", "samples", "offcpu", "sched",
    "memory", "thermal", "gpu", "disk", "network", "lost", "cycles", "crashes", "bottlenecks",
    "recommendations", "alerts", "command", "pids", "processes", "started_at", "duration_s",
    "stop_reason", "config", "probes", "probes_overhead", "outputs",
}
CYCLE_KEYS = {
    "index", "bpf_cycle", "pid", "start_ns", "end_ns", "duration_ms", "samples", "phases", "counts",
    "tokens_per_second", "tokens_per_second_wall", "oncpu_ms", "runq_wait_ms", "offcpu_ms", "blocked",
    "all_threads", "page_faults", "context_switches", "rss_peak_mb", "rss_end_mb",
}
PHASE_KEYS = {"total_ms", "thread_ms", "calls", "percent_of_cycle", "outside_cycles", "p50_ms", "p95_ms",
              "p99_ms", "percentiles_from", "histogram"}


@need_root
class OutputShapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                          "--phase", "database=database", "--phase", "mode=mode", "--count", "tokens=token"],
                         [fixture("experiment")] + experiment_args(CYCLES, 20, 4, 8, 4))
        cls.shape = output_shape.shape(cls.rec.dir)

    def test_files(self):
        want = {"profile.json", "stacks.folded", "offcpu.folded", "trace.json", "flamegraph.svg", "offcpu.svg",
                "report.html", "stacks.llm_inference.folded", "offcpu.database.folded"}
        self.assertTrue(want <= set(self.shape["files"]), want - set(self.shape["files"]))
        # a phase's folded file is written, or listed as not written (no stacks)
        out = self.rec.profile["outputs"]
        not_written = {n["file"] for n in out["not_written"]}
        for name in (f"{k}.{p}.folded" for k in ("stacks", "offcpu") for p in ("llm_inference", "database", "mode")):
            self.assertNotEqual(name in self.shape["files"], name in not_written, name)

    def test_profile_keys(self):
        p = self.rec.profile
        self.assertTrue(TOP_LEVEL <= set(p), TOP_LEVEL - set(p))
        self.assertEqual(len(p["cycles"]), CYCLES)
        self.assertEqual(self.shape["cycles"], CYCLES)
        self.assertEqual(self.shape["phases"], ["database", "llm_inference", "mode"])
        for i, c in enumerate(p["cycles"]):
            self.assertEqual(c["index"], i)
            self.assertTrue(CYCLE_KEYS <= set(c), CYCLE_KEYS - set(c))
            self.assertEqual(set(c["phases"]), {"llm_inference", "database", "mode"})
            self.assertEqual(c["counts"], {"tokens": 4})
        for name, v in p["phases"].items():
            self.assertTrue(PHASE_KEYS <= set(v), (name, PHASE_KEYS - set(v)))
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], CYCLES)
        self.assertEqual({"samples", "events"} - set(p["lost"]), set())
        self.assertIn("thresholds", p["config"])

    def test_stack_roots_are_the_process(self):
        roots = self.shape["stack_roots"]
        self.assertEqual(roots["stacks.folded"], ["experiment"])
        self.assertEqual(roots["offcpu.folded"], ["experiment"])
        self.assertEqual(roots["offcpu.database.folded"], ["experiment"])  # database sleeps

    def test_trace_and_pages(self):
        kinds = {tuple(k) for k in self.shape["trace_events"]}
        self.assertTrue({("M", "process_name"), ("X", "cycle"), ("X", "phase")} <= kinds, kinds)
        self.assertTrue(self.shape["svg"]["root"] and self.shape["svg"]["rects"])
        for h in ("Cycles", "Phases", "Samples", "On-CPU flame graph", "Off-CPU flame graph (time blocked)", "Outputs"):
            self.assertIn(h, self.shape["html_sections"])
        html = open(os.path.join(self.rec.dir, "report.html")).read()
        # a number printed as nan (a word of its own; frame labels such as
        # `hrtimer_nanos..` hold the letters)
        self.assertNotRegex(html, r"\b(nan|-?inf)\b")


if __name__ == "__main__":
    unittest.main()
