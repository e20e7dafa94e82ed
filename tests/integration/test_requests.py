# SPDX-License-Identifier: BSD-2-Clause
"""Requests from llama.cpp's batches (docs/servers.md): real llama.cpp
(node-llama-cpp's prebuilt CPU libraries, as the demo installs them) driven
by a ctypes fixture that decodes two sequences per batch, as a batching
server does, and times its own calls. Every request the fixture made is
found, with its exact tokens, positions and batch sharers, and its times
against the fixture's clock."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

from common import DEMO, FIXTURES, INFERTRACE, ROOT, DemoTestCase, need, need_root, read_stderr_until, record, \
    start_record, unknown_keys

SEQS = os.path.join(FIXTURES, "llama_seqs.py")
LONG = os.path.join(FIXTURES, "llama_long.py")
SERVER = os.path.join(FIXTURES, "llama_server.mjs")


def context_model(tmp):
    """A model whose single-token step is mostly attention: 2 layers of 256
    with a 256-wide FFN and a 4,096-token context (tools/gguf_gen.py). The
    bench model's matmuls hide its context cost: 0.1-0.2 ms per 1,000
    positions on 5 ms steps, r2 about 0, over its 1,024 positions."""
    path = os.path.join(tmp, "ctx.gguf")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gguf_gen.py"), "--preset", "tiny", "--layers", "2",
                    "--embd", "256", "--ff", "256", "--heads", "4", "--heads-kv", "4", "--ctx", "4096",
                    "--vocab", "300", "-o", path], check=True, stdout=subprocess.DEVNULL)
    return path



def metric(text, name):
    """The value of the series NAME (any labels) in exposition text; None if absent."""
    m = re.search(rf"^{re.escape(name)}{{[^}}]*}} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def scrape(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def requests_truth(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith('{"requests"'):
            return json.loads(line)["requests"]
    raise AssertionError(f"no truth line in:\n{stdout[-2000:]}")


@need_root
class RequestsTest(DemoTestCase):
    def run_seqs(self, rounds, p0, p1, g0, g1, extra=()):
        model = os.path.join(DEMO, "models", "bench.gguf")
        rec = record(["--preset", "llama.cpp"] + list(extra),
                     [sys.executable, SEQS, model, str(rounds), str(p0), str(p1), str(g0), str(g1)],
                     timeout=300, wall_split=None)
        return rec, requests_truth(rec.stdout)

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
        # each round a cycle: its prompt batch is prompt tokens; its decode
        # steps, shared by both sequences or not, are generation, and every
        # output a generated token (each sequence's first from the prompt)
        cyc = [c.get("llama") or {} for c in rec.profile["cycles"]]
        self.assertEqual([(c.get("prompt_tokens"), c.get("generated_tokens")) for c in cyc],
                         [(p0 + p1, g0 + g1)] * rounds, cyc)
        self.assertEqual(unknown_keys(rec.profile), [])
        # no warning for llama.cpp's older names of the calls it has
        self.assertNotIn("llama_kv_self_seq_rm' was never placed", rec.stderr)

    def run_long(self, gen, hog_at=None):
        tmp = tempfile.mkdtemp(prefix="it-req-long-")
        model = context_model(tmp)
        cmd = [sys.executable, LONG, model, "32", str(gen)] + ([str(hog_at)] if hog_at is not None else [])
        rec = record(["--preset", "llama.cpp"], cmd, timeout=300, wall_split=None,
                     env=dict(os.environ, LLAMA_LONG_CTX="4096"))
        shutil.rmtree(tmp, ignore_errors=True)
        line = [ln for ln in rec.stdout.splitlines() if ln.startswith('{"steps"')]
        self.assertTrue(line, rec.stdout[-2000:])
        return rec, json.loads(line[-1])

    def test_context_slope_of_a_long_generation(self):
        """3,000 steps on one sequence: the slope of a step's time against
        its position is positive and within 30% of the one the fixture
        fits to its own timing of each call (its thread's CPU time: the
        tool's step time leaves out run-queue waits, which other work on
        the machine adds to the wall time at random); the token rate fell,
        and the verdict is the context's."""
        rec, truth = self.run_long(3000)
        c = rec.profile["llama"]["context_slope"]
        self.assertEqual(c["steps"], 2999)
        self.assertEqual(c["pos_min"], 32)
        self.assertEqual(c["pos_max"], 32 + 2998)
        self.assertEqual(c["pos_reached"], 32 + 2998)
        self.assertEqual(c["n_ctx"], 4096)
        theirs = truth["cpu_slope_ms_per_1k"]
        self.assertGreater(theirs, 0)
        self.assertGreater(c["ms_per_1k_tokens"], 0)
        self.assertLessEqual(abs(c["ms_per_1k_tokens"] - theirs), 0.30 * theirs,
                             f"ours {c['ms_per_1k_tokens']:.4f}, the fixture's {theirs:.4f} ms per 1k positions")
        (q,) = rec.profile["requests"]
        self.assertEqual(q["generated_tokens"], 3000)
        self.assertEqual(q["rate"]["cause"], "context", q["rate"])
        self.assertLess(q["rate"]["last_tokens_per_s"], q["rate"]["first_tokens_per_s"])

    def test_cpu_hog_halfway_is_contention_not_context(self):
        """The same generation with a busy loop on its CPU from step 1,500:
        the token rate falls much more, and the verdict names CPU
        contention, its run-queue wait the evidence."""
        rec, truth = self.run_long(3000, hog_at=1500)
        (q,) = rec.profile["requests"]
        self.assertEqual(q["rate"]["cause"], "cpu_contention", q["rate"])
        self.assertGreater(q["rate"]["runq_added_ms"], 0.5 * q["rate"]["added_ms"])
        self.assertGreater(q["runq_ms"], 0)
        rep = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE, check=True)
        self.assertIn("token rate fell: seq 0", rep.stdout)
        self.assertIn("CPU contention: its run-queue wait per token grew", rep.stdout)

    def test_node_llama_cpp_server(self):
        """A real batching server: node-llama-cpp serving HTTP on loopback
        from one context of 4 sequences. 12 requests, 3 at a time (each wave
        let in together), each with its own prompt and generation length.
        Per request, found by its lengths: prompt and generated tokens
        exact, time to first token and duration within 10% of the server's
        own clock (2 ms floor), decode time too or within one step, and its
        prompt batch shared with the two others of its wave; the metrics
        histograms count every request and gap."""
        model = os.path.join(DEMO, "models", "bench.gguf")
        p, out = start_record(["--preset", "llama.cpp", "--metrics", "127.0.0.1:0"],
                              [os.path.join(DEMO, "bin", "node"), SERVER, model, "4"], stdout=subprocess.PIPE)
        logs = []
        try:
            _, m = read_stderr_until(p, r"serving metrics at (http://\S+)")
            self.assertTrue(m, "no metrics URL announced")
            line = p.stdout.readline()
            self.assertTrue(line.startswith("listening "), line)
            base = f"http://127.0.0.1:{int(line.split()[1])}"
            asked = [(12 + 3 * i, 6 + i) for i in range(12)]
            for w in range(4):
                wave = asked[3 * w:3 * w + 3]
                threads = [threading.Thread(target=scrape,
                                            args=(f"{base}/generate?words={words}&tokens={n}&wave=3",),
                                            kwargs={"timeout": 120})
                           for words, n in wave]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                logs += [json.loads(p.stdout.readline())["request"] for _ in wave]
            # every request ended (its sequence freed): the histograms count them all
            text = ""
            for _ in range(100):
                text = scrape(m.group(1))
                if metric(text, "infertrace_requests_total") == len(logs):
                    break
                time.sleep(0.2)
            self.assertEqual(metric(text, "infertrace_request_ttft_seconds_count"), len(logs), text[-2000:])
            self.assertEqual(metric(text, "infertrace_request_duration_seconds_count"), len(logs))
            self.assertEqual(metric(text, "infertrace_request_inter_token_seconds_count"),
                             sum(t["generated_tokens"] - 1 for t in logs))
            scrape(f"{base}/quit")
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        with open(os.path.join(out, "profile.json")) as f:
            prof = json.load(f)
        got = {(q["prompt_tokens"], q["generated_tokens"]): q for q in prof["requests"]}
        self.assertEqual(len(prof["requests"]), 12, [(q["seq"], q["prompt_tokens"]) for q in prof["requests"]])
        for t in logs:
            q = got.get((t["prompt_tokens"], t["generated_tokens"]))
            self.assertIsNotNone(q, (t, sorted(got)))
            what = f"request of {t['prompt_tokens']} prompt tokens, {t['generated_tokens']} generated"
            decode = sum(q["token_gaps_ms"])
            self.assertLessEqual(abs(q["ttft_ms"] - t["ttft_ms"]), max(0.10 * t["ttft_ms"], 2.0),
                                 f"{what}: first token {q['ttft_ms']:.1f} ms, the server's {t['ttft_ms']:.1f}")
            # node-llama-cpp samples on a worker thread: a request's first
            # token can reach its handler a batch after the one that gave
            # it (another sequence's step ran meanwhile), which moves the
            # server's decode start by up to one step
            step = max(q["token_gaps_ms"]) if q["token_gaps_ms"] else 0
            self.assertLessEqual(abs(decode - t["decode_ms"]), max(0.10 * t["decode_ms"], step, 2.0),
                                 f"{what}: decode {decode:.1f} ms, the server's {t['decode_ms']:.1f}")
            self.assertLessEqual(abs(q["duration_ms"] - t["duration_ms"]), max(0.10 * t["duration_ms"], 2.0),
                                 f"{what}: duration {q['duration_ms']:.1f} ms, the server's {t['duration_ms']:.1f}")
            self.assertEqual(q["sharers"]["max"], 2, what)
            self.assertIn(q["seq"], range(4), what)
            self.assertEqual(q["ended_by"], "removed", what)
        agg = prof["llama"]["requests"]
        self.assertEqual(agg["max_concurrent"], 3)
        self.assertEqual(agg["count"], 12)
        self.assertEqual(agg["ttft_ms"]["n"], 12)
        shutil.rmtree(out, ignore_errors=True)

    def test_trace_tracks(self):
        """trace.json: a track per sequence, a slice per request holding its
        prefill and decode parts, as long as the request."""
        rec, truth = self.run_seqs(2, 12, 8, 4, 3)
        with open(os.path.join(rec.dir, "trace.json")) as f:
            t = json.load(f)
        ev = t["traceEvents"] if isinstance(t, dict) else t
        names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"
                 and str(e["args"].get("name", "")).startswith("requests: seq")}
        self.assertEqual(sorted(names.values()), ["requests: seq 0", "requests: seq 1"])
        reqs = [e for e in ev if e.get("cat") == "request" and e["name"] == "request"]
        self.assertEqual(len(reqs), len(truth))
        prof = {(q["seq"], round(q["duration_ms"] * 1000)): q for q in rec.profile["requests"]}
        for r in reqs:
            q = [v for (seq, us), v in prof.items() if seq == r["args"]["seq"] and abs(us - r["dur"]) <= 2]
            self.assertTrue(q, r)
            parts = [e for e in ev if e.get("cat") == "request" and e["tid"] == r["tid"] and e["name"] != "request"
                     and r["ts"] <= e["ts"] <= r["ts"] + r["dur"]]
            self.assertEqual([p["name"] for p in parts], ["prefill", "decode"], r)
            self.assertEqual(parts[0]["ts"], r["ts"])
            self.assertLessEqual(parts[1]["ts"] + parts[1]["dur"], r["ts"] + r["dur"] + 1)

    def test_metrics_histograms_scraped(self):
        """--metrics while the fixture holds after its last round: promtool
        accepts the text, and the request histograms count every request
        (and every gap) the fixture made; a real Prometheus scrapes the same
        count."""
        promtool, prometheus = need("promtool"), need("prometheus")
        rounds, p0, p1, g0, g1 = 2, 12, 8, 5, 3
        model = os.path.join(DEMO, "models", "bench.gguf")
        p, out = start_record(["--preset", "llama.cpp", "--metrics", "127.0.0.1:0"],
                              [sys.executable, SEQS, model, str(rounds), str(p0), str(p1), str(g0), str(g1), "60"],
                              stdout=subprocess.PIPE)
        tmp = tempfile.mkdtemp(prefix="it-req-prom-")
        prom = None
        try:
            _, m = read_stderr_until(p, r"serving metrics at (http://\S+)")
            self.assertTrue(m, "no metrics URL announced")
            url = m.group(1)
            truth = requests_truth(p.stdout.readline())
            n, gaps = len(truth), sum(t["generated_tokens"] - 1 for t in truth)
            text = ""
            for _ in range(100):
                try:
                    text = scrape(url)
                except OSError:
                    text = ""
                if metric(text, "infertrace_requests_total") == n:
                    break
                time.sleep(0.2)
            self.assertEqual(metric(text, "infertrace_requests_total"), n, text[-3000:])
            chk = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.assertEqual(chk.returncode, 0, chk.stdout)
            self.assertEqual(metric(text, "infertrace_request_ttft_seconds_count"), n)
            self.assertEqual(metric(text, "infertrace_request_duration_seconds_count"), n)
            self.assertEqual(metric(text, "infertrace_request_inter_token_seconds_count"), gaps)
            self.assertEqual(metric(text, "infertrace_requests_in_flight"), 0)
            # a real Prometheus scrapes the same count
            port = socket.socket()
            port.bind(("127.0.0.1", 0))
            free = port.getsockname()[1]
            port.close()
            with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
                f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                        f"  - job_name: infertrace\n    static_configs:\n      - targets: "
                        f"['{urllib.parse.urlparse(url).netloc}']\n")
            prom = subprocess.Popen([prometheus, f"--config.file={tmp}/prometheus.yml",
                                     f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{free}"],
                                    cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            q = f"http://127.0.0.1:{free}/api/v1/query?query=" + urllib.parse.quote(
                "infertrace_request_ttft_seconds_count")
            seen = None
            for _ in range(60):
                try:
                    with urllib.request.urlopen(q, timeout=5) as r:
                        res = json.load(r)["data"]["result"]
                    if res:
                        seen = float(res[0]["value"][1])
                        break
                except (OSError, ValueError, KeyError):
                    pass
                time.sleep(0.5)
            self.assertEqual(seen, n)
        finally:
            if prom:
                prom.terminate()
                prom.wait(timeout=30)
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=120)
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)

    def test_report_and_read_back(self):
        """The report prints the requests and their distributions from the
        profile it reads back."""
        rec, truth = self.run_seqs(1, 12, 8, 4, 3)
        rep = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE, check=True)
        self.assertIn("REQUESTS", rep.stdout)
        self.assertIn(f"{len(truth)} requests", rep.stdout)
        for t in truth:
            self.assertRegex(rep.stdout, rf"\n\s+{t['seq']}\s+{t['prompt_tokens']}\s+{t['generated_tokens']}\s")
        # report.html: the section, a row per request
        with open(os.path.join(rec.dir, "report.html")) as f:
            html = f.read()
        sec = html[html.index('<h2 id="requests">'):]
        sec = sec[:sec.index("<h2", 4)] if "<h2" in sec[4:] else sec
        self.assertIn(f"<p>{len(truth)} requests", sec)
        self.assertEqual(sec.count("<tr><td>"), len(truth))
        # diff of the recording with itself: the request rows, unchanged
        d = subprocess.run([INFERTRACE, "diff", rec.dir, rec.dir], text=True, stdout=subprocess.PIPE)
        ttft = rec.profile["llama"]["requests"]["ttft_ms"]["p50"]
        self.assertRegex(d.stdout, rf"requests ttft_ms p50\s+{ttft:.3f}\s+{ttft:.3f}\s+\+0\.0%")
        self.assertIn("requests itl_ms p99", d.stdout)
        self.assertEqual(d.returncode, 0, d.stdout)


if __name__ == "__main__":
    unittest.main()
