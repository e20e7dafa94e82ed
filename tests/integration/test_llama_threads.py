# SPDX-License-Identifier: BSD-2-Clause
"""Real llama.cpp with more compute threads than CPUs, and with one: the
thread counts ggml's CPU backend was given read back exactly as the driver
asked (llama.context.n_threads_used), the spin-wait advice where the threads
outnumber the CPUs and none with one thread; diff's llama rows computed from
the two recordings. Uses the demo's node-llama-cpp libraries (skipped, with
the reason, where tools/demo-setup.sh cannot install them)."""
import os
import re
import subprocess
import unittest

from common import INFERTRACE, need_root, trace_llama


def cpus():
    return len(os.sched_getaffinity(0))


def trace_threads(threads, cycles=2, tokens=4):
    return trace_llama("tiny.gguf", threads, cycles, tokens, ["--steps", "none"])


def found(profile, key, kind):
    return [x for x in profile[key] if x.get(kind) == "cpu_oversubscribed"]


class LlamaThreadsTest(unittest.TestCase):
    runs = {}

    @classmethod
    def run_of(cls, threads):
        if threads not in cls.runs:
            cls.runs[threads] = trace_threads(threads)
        return cls.runs[threads]

    def check_used(self, r, d, threads):
        """Every graph of the cycles computed with the driver's count, by phase."""
        ctx = r.profile["llama"]["context"]
        self.assertEqual(ctx["n_threads_used"], {"prompt": threads, "generation": threads}, ctx)
        calls = ctx["n_threads_used_calls"]
        # one graph per llama_decode here (the batch fits n_ubatch)
        self.assertEqual(calls["prompt"], {str(threads): d["cycles"]})
        self.assertEqual(calls["generation"], {str(threads): sum(n - 1 for n in d["decode_calls_per_cycle"])})

    @need_root
    def test_oversubscribed(self):
        n = 2 * cpus()
        r, d = self.run_of(n)
        self.assertEqual(d["threads"], n)
        self.check_used(r, d, n)
        p = r.profile
        b = found(p, "bottlenecks", "type")
        self.assertEqual(len(b), 1, f"cpu_oversubscribed with {n} threads on {cpus()} CPUs: {p['bottlenecks']}")
        ev = b[0]["evidence"]
        self.assertEqual(ev["n_threads_used"], n)
        self.assertEqual(ev["cpus"], cpus())
        self.assertGreaterEqual(ev["spin_percent_of_samples"], 10.0)
        rec = found(p, "recommendations", "bottleneck")
        self.assertEqual(len(rec), 1)
        self.assertLessEqual(int(rec[0]["recommended_value"]), cpus())
        self.assertGreaterEqual(int(rec[0]["recommended_value"]), 1)
        self.assertIn(f"{n} threads on {cpus()} CPUs", rec[0]["current_value"])
        with open(os.path.join(r.dir, "report.html")) as f:
            html = f.read()
        self.assertIn("<h2>llama.cpp</h2>", html)
        self.assertIn(f"<th>context n_threads_used</th><td>prompt {n}, generation {n}</td>", html)

    @need_root
    def test_one_thread(self):
        r, d = self.run_of(1)
        self.check_used(r, d, 1)
        self.assertEqual(found(r.profile, "bottlenecks", "type"), [])
        self.assertEqual(found(r.profile, "recommendations", "bottleneck"), [])

    @need_root
    def test_diff_llama_rows(self):
        """diff's llama rows: the change as the two profiles' figures give it."""
        (b, _), (n, _) = self.run_of(1), self.run_of(2 * cpus())
        out = subprocess.run([INFERTRACE, "diff", b.dir, n.dir], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertIn(out.returncode, (0, 1), out.stdout)
        for key in ("decode_tokens_per_s", "prefill_tokens_per_s"):
            bv, nv = b.profile["llama"][key], n.profile["llama"][key]
            m = re.search(rf"^llama {key}\s+(\S+)\s+(\S+)\s+([+-]\d+\.\d)%\s+(\S+)x\s+(\S+)\s*(.*)$", out.stdout, re.M)
            self.assertIsNotNone(m, out.stdout)
            self.assertAlmostEqual(float(m.group(1)), bv, delta=0.001)
            self.assertAlmostEqual(float(m.group(3)), 100 * (nv - bv) / bv, delta=0.051)
            if m.group(6) == "REGRESSION":
                self.assertEqual(out.returncode, 1)
                self.assertLess(nv, bv * 0.95)


if __name__ == "__main__":
    unittest.main()
