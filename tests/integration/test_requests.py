# SPDX-License-Identifier: BSD-2-Clause
"""Requests from llama.cpp's batches (docs/servers.md): real llama.cpp
(node-llama-cpp's prebuilt CPU libraries, as the demo installs them) driven
by a ctypes fixture that decodes two sequences per batch, as a batching
server does, and times its own calls. Every request the fixture made is
found, with its exact tokens, positions and batch sharers, and its times
against the fixture's clock."""
import json
import os
import subprocess
import sys
import unittest

from common import DEMO, FIXTURES, INFERTRACE, need_root, record, setup_demo, unknown_keys

SEQS = os.path.join(FIXTURES, "llama_seqs.py")


def truth_of(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith('{"requests"'):
            return json.loads(line)["requests"]
    raise AssertionError(f"no truth line in:\n{stdout[-2000:]}")


@need_root
class RequestsTest(unittest.TestCase):
    def setUp(self):
        why = setup_demo()
        if why:
            self.skipTest(why)

    def run_seqs(self, rounds, p0, p1, g0, g1, extra=()):
        model = os.path.join(DEMO, "models", "bench.gguf")
        rec = record(["--preset", "llama.cpp"] + list(extra),
                     [sys.executable, SEQS, model, str(rounds), str(p0), str(p1), str(g0), str(g1)],
                     timeout=300, wall_split=None)
        return rec, truth_of(rec.stdout)

    def test_two_sequences_per_batch(self):
        """2 rounds of 2 requests sharing their batches: one request per
        sequence and round, each with its exact prompt and generated
        tokens, last position, batch sharers and end; its first-token time
        and duration within 10% of the fixture's clock (which also runs
        over the sampling between batches: a floor of 0.5 ms)."""
        rounds, p0, p1, g0, g1 = 2, 24, 16, 8, 5
        rec, truth = self.run_seqs(rounds, p0, p1, g0, g1)
        got = rec.profile["requests"]
        self.assertEqual(len(got), len(truth), [(q["seq"], q["start_ms"]) for q in got])
        got = sorted(got, key=lambda q: (q["start_ms"], q["seq"]))
        for i, (q, t) in enumerate(zip(got, truth)):
            what = f"request {i} (round {t['round']}, seq {t['seq']})"
            self.assertEqual(q["seq"], t["seq"], what)
            self.assertEqual(q["prompt_tokens"], t["prompt_tokens"], what)
            self.assertEqual(q["generated_tokens"], t["generated_tokens"], what)
            self.assertEqual(q["cached_tokens"], 0, what)
            self.assertEqual(q["pos_max"], t["pos_max"], what)
            self.assertEqual(q["sharers"]["max"], t["sharers_max"], what)
            self.assertAlmostEqual(q["sharers"]["avg"], t["sharers_avg"], places=6, msg=what)
            self.assertEqual(len(q["token_gaps_ms"]), t["generated_tokens"] - 1, what)
            self.assertEqual(q["ended_by"], "exit" if t["round"] == rounds - 1 else "removed", what)
            for key in ("ttft_ms", "duration_ms"):
                self.assertLessEqual(abs(q[key] - t[key]), max(0.10 * t[key], 0.5),
                                     f"{what}: {key} {q[key]:.2f} ms, the fixture's {t[key]:.2f} ms")
            # the batch shares add up to the time inside its batches
            self.assertLessEqual(q["prefill_ms"] + q["decode_ms"], q["duration_ms"] + 1e-6, what)
        agg = rec.profile["llama"]["requests"]
        self.assertEqual(agg["count"], len(truth))
        self.assertEqual(agg["prompt_tokens"], sum(t["prompt_tokens"] for t in truth))
        self.assertEqual(agg["generated_tokens"], sum(t["generated_tokens"] for t in truth))
        self.assertEqual(agg["max_concurrent"], 2)
        # per round: the prompt batch and g1 - 1 steps were shared
        self.assertEqual(agg["shared_batches"], rounds * g1)
        self.assertEqual(agg["itl_ms"]["n"], sum(t["generated_tokens"] - 1 for t in truth))
        self.assertEqual(agg["unread_tokens"], 0)
        self.assertEqual(agg["batches_incomplete"], 0)
        self.assertEqual(unknown_keys(rec.profile), [])
        # no warning for llama.cpp's older names of the calls it has
        self.assertNotIn("llama_kv_self_seq_rm' was never placed", rec.stderr)

    def test_report_and_read_back(self):
        """The report prints the requests and their distributions from the
        profile it reads back."""
        rec, truth = self.run_seqs(1, 12, 8, 4, 3)
        rep = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE, check=True)
        self.assertIn("REQUESTS", rep.stdout)
        self.assertIn(f"{len(truth)} requests", rep.stdout)
        for t in truth:
            self.assertRegex(rep.stdout, rf"\n\s+{t['seq']}\s+{t['prompt_tokens']}\s+{t['generated_tokens']}\s")


if __name__ == "__main__":
    unittest.main()
