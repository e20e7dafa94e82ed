# SPDX-License-Identifier: BSD-2-Clause
"""Real llama.cpp end to end: node-llama-cpp's prebuilt llama.cpp CPU libraries
(installed by tools/demo-setup.sh, idempotent) driven by demo/driver.mjs, traced
with --preset llama.cpp. The driver prints its own figures as a JSON line; the
tracer's must agree with them."""
import os
import re
import subprocess
import unittest

from common import DEMO, INFERTRACE, LIBDIR, library_symbols, need_root, trace_llama


def trace_demo(model, cycles, tokens, extra=(), tokenize="each"):
    return trace_llama(model, 1, cycles, tokens, ["--tokenize", tokenize], extra)


class LlamaDemoTest(unittest.TestCase):
    def check_loop(self, tokenize):
        """Cycles from llama.cpp's prompt batches, whatever the driver does
        around them: exact cycles and tokens, prefill and generation times
        against the driver's own clock."""
        cycles, tokens = 3, 8
        r, d = trace_demo("bench.gguf", cycles, tokens, tokenize=tokenize)
        p = r.profile
        agg = p["aggregate_metrics"]
        self.assertEqual(agg["cycles_source"], "llama_prompt")
        self.assertEqual(agg["total_cycles"], d["cycles"], "cycles counted as run")
        got = p["cycles"]
        self.assertEqual([c["llama"]["prompt_tokens"] for c in got], [d["prompt_tokens"]] * cycles)
        self.assertEqual([c["llama"]["generated_tokens"] for c in got], d["generated_per_cycle"])
        self.assertEqual([c["phases"]["llm_generate"]["calls"] for c in got],
                         [n - 1 for n in d["decode_calls_per_cycle"]], "one single-token batch per fed-back token")
        for c, pre, gen in zip(got, d["prefill_ms"], d["generation_ms"]):
            # ours is the time inside llama_decode; the driver's clock also
            # runs over its JS work between the calls (sampling, N-API),
            # which grows with the machine's load (0.89 seen on a loaded
            # fresh root): at most 10% over the driver's, at least 80% of it
            ours = c["llama"]["prefill_ms"] + c["llama"]["decode_ms"]
            ratio = ours / (pre + gen)
            self.assertTrue(0.80 <= ratio <= 1.10, f"prefill+decode {ours:.1f} ms, driver {pre + gen:.1f} ms")
        ll = p["llama"]
        self.assertEqual(ll["prompt_tokens"], cycles * d["prompt_tokens"])
        self.assertEqual(ll["generated_tokens"], sum(d["generated_per_cycle"]))
        # the model as gguf_gen.py's bench preset makes it, the context as the driver asked
        m = ll["model"]
        self.assertEqual(m["path"], os.path.join(DEMO, "models", "bench.gguf"))
        self.assertEqual((m["arch"], m["file_type"], m["n_layer"], m["n_embd"], m["n_ctx_train"]),
                         ("llama", "F32", 4, 768, 1024))
        E, F, L, V, KV = 768, 2048, 4, 1024, 768 // 12 * 4
        self.assertEqual(m["n_params"], 2 * E * V + E + L * (2 * E + 2 * E * E + 2 * E * KV + 3 * E * F))
        self.assertEqual(m["size_bytes"], os.path.getsize(m["path"]))
        self.assertEqual(ll["context"]["n_ctx"], d["context_size"])
        self.assertEqual(ll["context"]["n_batch"], d["batch_size"])
        # thread counts only from llama_set_n_threads (the parameters' layout
        # after n_seq_max differs between builds): as the driver asked, or
        # left out when the driver never called it, never guessed
        setter = [q["hits"] for q in p["probes"] if q["spec"] == "libllama:llama_set_n_threads"]
        if setter and setter[0]:
            self.assertEqual((ll["context"]["n_threads"], ll["context"]["n_threads_batch"]), (d["threads"], d["threads"]))
        else:
            self.assertNotIn("n_threads", ll["context"])
            self.assertNotIn("n_threads_batch", ll["context"])
        rep = subprocess.run([INFERTRACE, "report", r.dir], text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(rep.returncode, 0, rep.stdout)
        self.assertIsNone(re.search(r"\b(nan|-?inf)\b", rep.stdout, re.I), rep.stdout)
        return r, d

    @need_root
    def test_tokenize_each_cycle(self):
        self.check_loop("each")

    @need_root
    def test_tokenize_once(self):
        self.check_loop("once")

    @need_root
    def test_ggml_stacks_reach_llama_decode(self):
        r, d = trace_demo("bench.gguf", 4, 16, ["-F", "299"])
        q = r.profile["samples"]["stack_quality"]["by_leaf_object"]
        cpu_libs = sorted((k for k in q if k.startswith("libggml-cpu")), key=lambda k: -q[k]["samples"])
        self.assertTrue(cpu_libs, f"no libggml-cpu variant sampled: {list(q)}")
        # ggml loads each CPU variant its loader can choose while it picks one:
        # their initializers may be sampled too, but one variant does the work
        lib = cpu_libs[0]
        variant_samples = sum(q[k]["samples"] for k in cpu_libs)
        self.assertGreaterEqual(q[lib]["samples"] / variant_samples, 0.90,
                                f"one libggml-cpu variant does the work: {[(k, q[k]['samples']) for k in cpu_libs]}")
        names = library_symbols(os.path.join(LIBDIR, lib))
        self.assertTrue(names, f"no symbols read from {lib}")
        total = reach = 0
        for stack, n in r.folded().items():
            user = [f for f in stack.split(";")[1:] if not f.endswith("_[k]")]
            if not user:
                continue
            leaf = user[-1]
            if leaf in names or leaf.startswith(lib + "+"):
                total += n
                if "llama_decode" in user:
                    reach += n
        self.assertGreater(total, 50, "samples in libggml-cpu")
        self.assertGreaterEqual(reach / total, 0.90,
                                f"{reach}/{total} libggml-cpu samples have stacks reaching llama_decode")
        self.assertLessEqual(q[lib]["truncated_percent"], 10.0)


if __name__ == "__main__":
    unittest.main()
