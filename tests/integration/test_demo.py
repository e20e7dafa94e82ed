# SPDX-License-Identifier: BSD-2-Clause
"""`make demo` as a new user sees it: tools/demo.sh run once, its own outputs
checked against the driver's own figures (driver.json, the driver's clock)."""
import glob
import json
import os
import re
import subprocess
import tempfile
import unittest

from common import BUILD, ROOT, need_root
from test_llama import LIBDIR, library_symbols, sanitize, setup_demo

NAN = re.compile(r"\b(nan|-?inf|-?infinity)\b", re.I)
THREAD_ADVICE = ("cpu_oversubscribed", "Run fewer compute threads", "threads than CPUs")


def cpu_busy_s():
    """All CPUs' busy seconds so far (/proc/stat: everything but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


# Samples inside the cycles needed to judge a 60% share: with 300 the share's
# standard error is under 3 points. A count, not a rate: the cycles' CPU time
# (and so the count at a given rate) depends on the CPU (1,200 at 99 Hz on
# one VM, 750 on a faster one).
MIN_IN_CYCLE = 300


class DemoRun(unittest.TestCase):
    """One run of a demo script (SCRIPT, within TIMEOUT s) into a temporary
    directory; its profile, its driver's own JSON and its printed report.
    Shared by the node demo here and the Python one (test_demo_python)."""
    SCRIPT, TIMEOUT, WHAT = "demo.sh", 240, "make demo"

    @classmethod
    def setUpClass(cls):
        why = setup_demo()
        if why:
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.TemporaryDirectory(prefix="it-demo-")
        cls.out = os.path.join(cls.tmp.name, "out")
        busy0 = cpu_busy_s()
        p = subprocess.run([os.path.join(ROOT, "tools", cls.SCRIPT), BUILD], text=True, timeout=cls.TIMEOUT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=dict(os.environ, DEMO_OUT=cls.out))
        cls.busy_s = cpu_busy_s() - busy0
        cls.stdout = p.stdout
        if p.returncode:
            raise AssertionError(f"{cls.WHAT} failed ({p.returncode}):\n{p.stdout[-3000:]}")
        with open(os.path.join(cls.out, "profile.json")) as f:
            cls.profile = json.load(f)
        with open(os.path.join(cls.out, "driver.json")) as f:
            cls.driver = json.loads(f.read().strip().splitlines()[-1])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def in_cycle_samples(self):
        """(samples inside the cycles, those with their leaf in libllama or
        libggml by the libraries' own symbol tables: a lower bound, since a
        libc leaf called from ggml counts against)."""
        names = set()
        for lib in glob.glob(os.path.join(LIBDIR, "lib*.so")):
            if re.match(r"lib(llama|ggml)", os.path.basename(lib)):
                names |= library_symbols(lib)
        self.assertTrue(names)
        with open(os.path.join(self.out, "trace.json")) as f:
            ev = json.load(f)["traceEvents"]
        cycles = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "cycle"]
        self.assertEqual(len(cycles), self.driver["cycles"])
        inside = llama = 0
        for e in ev:
            if e.get("cat") != "sample" or not any(a <= e["ts"] < b for a, b in cycles):
                continue
            inside += 1
            if sanitize(e["name"]) in names:
                llama += 1
        return inside, llama


@need_root
class DemoTest(DemoRun):
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
