# SPDX-License-Identifier: BSD-2-Clause
"""Real llama.cpp end to end: node-llama-cpp's prebuilt llama.cpp CPU libraries
(installed by tools/demo-setup.sh, idempotent) driven by demo/driver.mjs, traced
with --preset llama.cpp. The driver prints its own figures as a JSON line; the
tracer's must agree with them."""
import glob
import json
import os
import subprocess
import unittest

from common import ROOT, need_root, record

DEMO = os.path.join(ROOT, "demo")
LIBDIR = os.path.join(DEMO, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
_setup = None


def setup_demo():
    """Runs tools/demo-setup.sh once; the reason it failed, or None."""
    global _setup
    if _setup is None:
        p = subprocess.run([os.path.join(ROOT, "tools", "demo-setup.sh")], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _setup = "" if p.returncode == 0 else f"demo set-up failed: {p.stdout[-500:]}"
    return _setup or None


def driver_json(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("{") and '"driver"' in line:
            return json.loads(line)
    raise AssertionError(f"no driver JSON line in:\n{stdout[-2000:]}")


def trace_demo(model, cycles, tokens, extra=()):
    why = setup_demo()
    if why:
        raise unittest.SkipTest(why)
    cmd = [os.path.join(DEMO, "bin", "node"), os.path.join(DEMO, "driver.mjs"), "--model", os.path.join(DEMO, "models", model),
           "--threads", "1", "--cycles", str(cycles), "--tokens", str(tokens), "--json"]
    r = record(["--preset", "llama.cpp"] + list(extra), cmd, timeout=300)
    return r, driver_json(r.stdout)


def sanitize(name):
    return name.replace(";", ":").replace(" ", "_").replace("\n", "_")


def library_symbols(path):
    """Function names of an ELF file as the folded stacks show them."""
    out = subprocess.run(["nm", "-C", "--defined-only", path], text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwWiI":
            names.add(sanitize(parts[2].split("@")[0]))
    return names


class LlamaDemoTest(unittest.TestCase):
    @need_root
    def test_cycles_decodes_and_tokens_per_second(self):
        cycles, tokens = 5, 16
        r, d = trace_demo("tiny.gguf", cycles, tokens)
        p = r.profile
        agg = p["aggregate_metrics"]
        self.assertEqual(agg["cycles_source"], "cycle_marker")
        self.assertEqual(agg["total_cycles"], d["cycles"], "cycles counted as run")
        got = p["cycles"]
        decodes = [c["counts"].get("tokens") for c in got]
        self.assertEqual(decodes, d["decode_calls_per_cycle"], "llama_decode calls per cycle")
        self.assertEqual([c["phases"]["llm_inference"]["calls"] for c in got], d["decode_calls_per_cycle"])
        # tokens/s over the cycles' time, as the driver computes it. A marker
        # cycle ends at the next marker; the last one has none and stays open
        # until the process exits (after the driver's own timing), so it is
        # compared only for its counts.
        closed = [(c, ms, n) for c, ms, n in zip(got, d["cycle_ms"], d["generated_per_cycle"])
                  if not c.get("open_at_end")]
        self.assertGreaterEqual(len(closed), cycles - 1)
        ours = sum(n for _, _, n in closed) / (sum(c["duration_ms"] for c, _, _ in closed) / 1000.0)
        theirs = sum(n for _, _, n in closed) / (sum(ms for _, ms, _ in closed) / 1000.0)
        self.assertAlmostEqual(ours / theirs, 1.0, delta=0.10,
                               msg=f"tokens/s: ours {ours:.1f}, driver {theirs:.1f}")
        for c, ms, _ in closed:
            self.assertAlmostEqual(c["duration_ms"] / ms, 1.0, delta=0.10)
        # the probe cost estimate is there, measured on this machine
        po = p["probes_overhead"]
        self.assertGreater(po["cost_ns_per_hit"], 0)
        self.assertIn("llm_inference", po["phases"])
        for f in ("trace.json", "flamegraph.svg", "report.html"):
            self.assertTrue(os.path.getsize(os.path.join(r.dir, f)) > 0, f)

    @need_root
    def test_ggml_stacks_reach_llama_decode(self):
        r, d = trace_demo("bench.gguf", 4, 16, ["-F", "299"])
        q = r.profile["samples"]["stack_quality"]["by_leaf_object"]
        cpu_libs = [k for k in q if k.startswith("libggml-cpu")]
        self.assertEqual(len(cpu_libs), 1, f"one libggml-cpu variant sampled: {list(q)}")
        lib = cpu_libs[0]
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
