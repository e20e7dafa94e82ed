# SPDX-License-Identifier: BSD-2-Clause
"""`infertrace report` on a real recording of the experiment fixture (counts
and shape only), and `infertrace diff` on fixed profiles whose changes are
known by construction (two live runs would compare the machine's load)."""
import os
import subprocess
import tempfile
import unittest

from common import INFERTRACE, fixture, need_root, record, write_profile

ARGS = ["--cycle", "run_cycle", "--phase", "llm_inference=inference", "--phase", "database=database",
        "--phase", "mode=mode", "--count", "tokens=token"]


@need_root
class TestReportDiff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = record(ARGS, [fixture("experiment"), "5", "20", "4", "5", "2"])

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



def percentile(v, p):
    """numpy's default (linear between closest ranks), as infertrace's."""
    v = sorted(v)
    r = p / 100 * (len(v) - 1)
    lo = int(r)
    return v[lo] + (r - lo) * (v[lo + 1] - v[lo]) if lo + 1 < len(v) else v[lo]


def profile(avg_cycle_ms, phases, n=10, spread=0.02, cycle="run_cycle"):
    """A profile.json whose figures are known: n cycles alternating
    avg_cycle_ms * (1 -+ spread), phases {name: (total_ms, calls)} split
    evenly over the cycles with the same spread."""
    durs = [avg_cycle_ms * (1 + (spread if i % 2 else -spread)) for i in range(n)] if n > 1 else [avg_cycle_ms] * n
    cycles = [{"index": i, "start_ns": i * 10**9, "end_ns": i * 10**9 + int(d * 1e6), "duration_ms": d,
               "phases": {name: {"ms": t / n * d / avg_cycle_ms, "calls": c // n}
                          for name, (t, c) in phases.items()}}
              for i, d in enumerate(durs)]
    return {
        "schema_version": "1.0", "tool": {"name": "infertrace", "version": "test"}, "duration_s": 1.0,
        "config": {"cycle": cycle, "cycle_marker": None, "presets": []},
        "aggregate_metrics": {"total_cycles": n, "cycles_source": "cycle" if cycle else "whole_run",
                              "avg_cycle_ms": sum(durs) / n if n else None,
                              "p50_cycle_ms": percentile(durs, 50) if n else None,
                              "p95_cycle_ms": percentile(durs, 95) if n else None,
                              "p99_cycle_ms": percentile(durs, 99) if n else None,
                              "max_cycle_ms": max(durs) if n else None},
        "phases": {n: {"total_ms": t, "calls": c, "percent_of_cycle": 10.0} for n, (t, c) in phases.items()},
        "cycles": cycles, "bottlenecks": [], "recommendations": [], "lost": {"samples": 0, "events": 0},
    }


class TestDiffOnKnownProfiles(unittest.TestCase):
    """diff on fixed inputs whose changes are known: any machine, any load."""

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
        r = subprocess.run([INFERTRACE, "report", write_profile(p)], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("llama.cpp: prompt 100 tokens in 200.0 ms (500.0 tok/s), generation 80 tokens in "
                      "700.0 ms (112.9 tok/s), 0.125 J per generated token", r.stdout)
        # without measured energy: no energy figure at all
        del p["llama"]["j_per_generated_token"]
        r = subprocess.run([INFERTRACE, "report", write_profile(p)], text=True, stdout=subprocess.PIPE)
        self.assertNotIn("J per generated token", r.stdout)
        self.assertNotIn("nan", r.stdout)

    def test_stack_hint_follows_the_call_graph_mode(self):
        p = profile(100.0, {})
        p["samples"] = {"total": 100, "requested_hz": 99, "achieved_hz": 99.0, "target_cpu_seconds": 1.0,
                        "stack_quality": {"complete_percent": 50.0,
                                          "by_leaf_object": {"libfoo.so": {"samples": 100, "truncated_percent": 50.0}}}}
        for mode in ("fp", "dwarf"):
            p["samples"]["call_graph"] = mode
            r = subprocess.run([INFERTRACE, "report", write_profile(p)], text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            self.assertEqual(r.returncode, 0, r.stderr)
            warning = self.line(r.stdout, "  warning: 50% of stacks in libfoo.so end early")
            if mode == "fp":
                self.assertIn("try --call-graph dwarf", warning)
            else:
                self.assertNotIn("try --call-graph dwarf\n", r.stdout)
                self.assertIn("with --call-graph dwarf", warning)
                self.assertIn("--call-graph dwarf,SIZE", warning)

    def interval(self, line):
        """The 95% interval column of a table line, as (lo, hi) percent."""
        lo, hi = [t for t in line.split() if ".." in t][0].split("..")
        return float(lo.rstrip("%")), float(hi.rstrip("%"))

    def test_regression_and_speedup(self):
        base = write_profile(profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)}))
        slow = write_profile(profile(120.0, {"llm_inference": (400.0, 10), "database": (50.0, 10)}))
        p = self.diff(base, slow)
        self.assertEqual(p.returncode, 1, p.stdout)
        line = self.line(p.stdout, "phase llm_inference")
        self.assertIn("REGRESSION", line)
        self.assertAlmostEqual(float(line.split()[5].rstrip("%")), 100.0, places=1)
        # 10 cycles within 2% of their mean each side: the interval is tight around +100%
        lo, hi = self.interval(line)
        self.assertTrue(90 < lo <= 100.0 <= hi < 110, line)
        lo, hi = self.interval(self.line(p.stdout, "avg_cycle_ms"))
        self.assertTrue(15 < lo <= 20.0 <= hi < 25, p.stdout)
        self.assertNotIn("REGRESSION", self.line(p.stdout, "phase database"))
        self.assertAlmostEqual(float(self.line(p.stdout, "avg_cycle_ms").split()[3].rstrip("%")), 20.0, places=1)
        # the other way round: faster, and within a 25% threshold no regression
        p = self.diff("--threshold", "25", slow, base)
        self.assertEqual(p.returncode, 0, p.stdout)
        line = self.line(p.stdout, "phase llm_inference")
        self.assertIn("faster", line)
        self.assertAlmostEqual(float(line.split()[5].rstrip("%")), -50.0, places=1)

    def test_same_distribution_is_no_regression(self):
        """+6% on the mean, beyond the 5% threshold, from 10 cycles spread
        +-30%: the interval holds zero, so no verdict and exit 0."""
        base = write_profile(profile(100.0, {}, spread=0.3))
        noisy = write_profile(profile(106.0, {}, spread=0.3))
        p = self.diff(base, noisy)
        self.assertEqual(p.returncode, 0, p.stdout)
        line = self.line(p.stdout, "avg_cycle_ms")
        self.assertAlmostEqual(float(line.split()[3].rstrip("%")), 6.0, places=1)
        lo, hi = self.interval(line)
        self.assertTrue(lo < 0 < 6.0 < hi, line)
        self.assertIn("within noise", line)
        self.assertNotIn("REGRESSION", p.stdout)
        self.assertIn("no regression", p.stdout)
        # the same inputs, the same interval (a fixed seed)
        self.assertEqual(p.stdout, self.diff(base, noisy).stdout)

    def test_one_cycle_against_ten_warns_and_gives_no_interval(self):
        """A whole-run recording (1 cycle) against 10 marked cycles: the
        speedup compares different spans, and says so; no verdict."""
        whole = write_profile(profile(1231.0, {}, n=1, cycle=None))
        marked = write_profile(profile(100.0, {}, n=10))
        p = self.diff(whole, marked)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("cycles: base 1 (whole run); new 10 (cycle 'run_cycle')", p.stdout)
        self.assertIn("WARNING: the cycles are defined differently", p.stdout)
        self.assertIn("no interval: base has 1 cycle", p.stdout)
        line = self.line(p.stdout, "avg_cycle_ms")
        self.assertIn("12.31x", line)
        self.assertIn("no interval", line)
        # the same definition, counts far apart: a warning of its own
        p = self.diff(write_profile(profile(100.0, {}, n=3)), marked)
        self.assertNotIn("defined differently", p.stdout)
        self.assertIn("WARNING: the cycle counts differ", p.stdout)

    def test_power_mode_only_when_known(self):
        base = profile(100.0, {})
        p = self.diff(write_profile(base), write_profile(base))
        self.assertNotIn("power mode", p.stdout)
        self.assertFalse(p.stdout.startswith("power mode: base unknown"))
        known = profile(100.0, {})
        known["system"] = {"power": {"governor": "performance"}}
        p = self.diff(write_profile(base), write_profile(known))
        self.assertIn("power mode: base unknown; new governor performance", p.stdout)

    def test_missing_or_null_figure_fails_the_gate(self):
        base = write_profile(profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)}))
        gone = write_profile(profile(100.0, {"llm_inference": (200.0, 10)}))
        p = self.diff(base, gone)
        self.assertEqual(p.returncode, 1, p.stdout)
        line = self.line(p.stdout, "phase database")
        self.assertIn("MISSING in new", line)
        # the base's figure, and "-" for the side that lacks it
        self.assertEqual(line.split()[3:5], ["5.000", "-"])
        # a phase of the new run only: "-" in the base column
        line = self.line(self.diff(gone, base).stdout, "phase database")
        self.assertEqual(line.split()[3:5], ["-", "5.000"])
        self.assertIn("MISSING in base", line)
        nul = profile(100.0, {"llm_inference": (200.0, 10), "database": (50.0, 10)})
        nul["aggregate_metrics"]["p95_cycle_ms"] = None
        p = self.diff(base, write_profile(nul))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("MISSING", self.line(p.stdout, "p95_cycle_ms"))

    def test_malformed_and_other_version(self):
        base = write_profile(profile(100.0, {}))
        bad = tempfile.mkdtemp(prefix="it-diff-")
        with open(os.path.join(bad, "profile.json"), "w") as f:
            f.write('{"cycles": [1, 2')
        p = self.diff(base, bad)
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn(bad, p.stderr)
        other = profile(100.0, {})
        other["schema_version"] = "9.0"
        p = self.diff(base, write_profile(other))
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn("schema_version 9.0", p.stderr)
        other = profile(100.0, {})
        other["cycles"] = {"not": "an array"}
        p = self.diff(base, write_profile(other))
        self.assertEqual(p.returncode, 4)  # the input recording is unusable
        self.assertIn("cycles", p.stderr)


if __name__ == "__main__":
    unittest.main()
