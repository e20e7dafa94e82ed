# SPDX-License-Identifier: BSD-2-Clause
"""Cycles, phases and counts (uprobes/uretprobes) against fixture experiments
whose structure is known by construction (tests/fixtures/experiment.c). The
fixture prints its own measurements; the tracer's numbers must match them:
total cycles and token counts exactly, phase and cycle times within 5% (or
1 ms), percent_of_cycle and tokens/s consistent with those times. The
profile.json of every run is validated against docs/profile.schema.json."""
import json
import os
import unittest

from common import STRICT_CYCLES, ProbeTestCase, experiment_args, fixture, need_root, record, truth_of


@need_root
class TestCyclesExperiment(ProbeTestCase):
    """--cycle/--phase/--count on the fixture, several shapes."""

    def run_shape(self, cycles, infer, tokens, db, mode):
        exe = fixture("experiment")
        rec = record(["--cycle", "run_cycle", "--phase", "llm_inference=inference",
                      "--phase", "database=database", "--phase", "mode=mode",
                      "--count", "tokens=token"],
                     [exe] + experiment_args(cycles, infer, tokens, db, mode))
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "cycle")
        for i, c in enumerate(p["cycles"]):
            self.assertEqual(c["index"], i)
            self.assertEqual(c["counts"]["tokens"], tokens, f"cycle {i}")
        self.assertCycleTimes(rec, truth)
        self.assertPhase(rec, "llm_inference", truth, "inference_wall_ms")
        self.assertPhase(rec, "database", truth, "database_wall_ms")
        self.assertPhase(rec, "mode", truth, "mode_wall_ms")
        for name in ("llm_inference", "database", "mode"):
            self.assertEqual(p["phases"][name]["calls"], cycles)
        self.assertConsistent(rec)
        probes = {x["spec"]: x for x in p["probes"]}
        self.assertEqual(probes["token"]["hits"], cycles * tokens)
        self.assertEqual(probes["run_cycle"]["hits"], cycles)
        return rec

    def test_shape_12_cycles_inference_dominant(self):
        self.run_shape(12, 40, 8, 15, 3)

    def test_shape_5_cycles_database_dominant(self):
        self.run_shape(5, 12, 3, 45, 9)

    def test_shape_9_cycles_many_tokens(self):
        rec = self.run_shape(9, 24, 48, 4, 6)
        self.assertEqual(sum(c["counts"]["tokens"] for c in rec.profile["cycles"]), 9 * 48)

    def test_no_cycle_is_one_whole_run_cycle(self):
        exe = fixture("experiment")
        rec = record(["--phase", "database=database", "--count", "tokens=token"],
                     [exe] + experiment_args(4, 10, 5, 8, 1))
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], 1)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "whole_run")
        self.assertEqual(p["cycles"][0]["counts"]["tokens"], 20)
        self.assertEqual(p["cycles"][0]["phases"]["database"]["calls"], 4)
        if not any(truth["preempted"]):
            self.assertClose(p["cycles"][0]["phases"]["database"]["ms"], sum(truth["database_wall_ms"]), "database")
        self.assertGreaterEqual(p["cycles"][0]["duration_ms"], sum(truth["cycle_ms"]))
        # tokens/s with no inference phase: tokens over the whole cycle
        self.assertAlmostEqual(p["cycles"][0]["tokens_per_second"],
                               20 / (p["cycles"][0]["duration_ms"] / 1000), delta=1e-3)

    def test_cycle_marker_on_native_function(self):
        exe = fixture("experiment")
        # each inference() call starts a cycle: cycles run from one inference
        # to the next, the last until the process exits
        rec = record(["--cycle-marker", "inference", "--phase", "database=database",
                      "--count", "tokens=token"], [exe] + experiment_args(6, 10, 4, 20, 2))
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "cycle_marker")
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], 6)
        self.assertPhase(rec, "database", truth, "database_wall_ms")
        for c in p["cycles"]:
            self.assertEqual(c["counts"]["tokens"], 4)
        # a marker cycle runs from one inference() to the next: about the
        # fixture's run_cycle time; the last one until the process exits
        self.assertCycleTimes(rec, truth, list(range(5)))
        self.assertConsistent(rec)


@need_root
class TestCyclesThreads(ProbeTestCase):
    """Inference on 2 worker threads: per-process wall union vs per-thread sum."""

    def test_inference_on_two_worker_threads(self):
        exe = fixture("experiment")
        cycles, infer, tokens = 7, 30, 6
        rec = record(["--cycle", "run_cycle", "--phase", "llm_inference=inference_work",
                      "--phase", "database=database", "--count", "tokens=token"],
                     [exe] + experiment_args(cycles, infer, tokens, 10, 2, workers=2))
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        for i, c in enumerate(p["cycles"]):
            inf = c["phases"]["llm_inference"]
            # one outermost call per worker thread
            self.assertEqual(inf["calls"], 2, f"cycle {i}")
            # the wall union lies inside the main thread's create..join window,
            # which adds thread start-up and join (~0.1 ms)
            self.assertLessEqual(inf["ms"], truth["inference_wall_ms"][i] + 0.01)
            # the per-thread sum is more than the union: the workers overlapped
            self.assertGreater(inf["thread_ms"], inf["ms"] * 1.2)
            self.assertGreaterEqual(inf["thread_ms"], 2 * infer * 0.99)
            # both workers' tokens count to the cycle open in the process
            self.assertEqual(c["counts"]["tokens"], 2 * tokens)
        self.assertPerCycle(rec, truth, [c["phases"]["llm_inference"]["ms"] for c in p["cycles"]],
                            truth["inference_union_ms"], "inference union")
        self.assertCycleTimes(rec, truth)
        self.assertPhase(rec, "database", truth, "database_wall_ms")
        self.assertAlmostEqual(p["phases"]["llm_inference"]["thread_ms"],
                               sum(c["phases"]["llm_inference"]["thread_ms"] for c in p["cycles"]), places=3)
        self.assertConsistent(rec)


@need_root
class TestConfigFile(ProbeTestCase):
    """--config FILE: the same options as JSON; the command line wins."""

    def test_config_then_command_line(self):
        import tempfile
        exe = fixture("experiment")
        out = tempfile.mkdtemp(prefix="it-cfg-")
        cfg = os.path.join(out, "cfg.json")
        with open(cfg, "w") as f:
            json.dump({"output": os.path.join(out, "from-config"), "frequency": 49, "cycle": "run_cycle",
                       "phases": {"llm_inference": "inference", "database": ["database"], "mode": "no_such"},
                       "counts": {"tokens": "token"},
                       "command": [exe] + experiment_args(4, 8, 3, 6, 1)}, f)
        rec = record(["--config", cfg, "--phase", "mode=mode"], outdir=os.path.join(out, "from-cli"))
        p = rec.profile
        self.assertIsNotNone(p, rec.stderr)
        self.assertValid(rec)
        self.assertEqual(p["config"]["frequency"], 49)
        self.assertEqual(p["config"]["config_file"], cfg)
        self.assertEqual(p["config"]["phases"], {"llm_inference": "inference", "database": "database",
                                                 "mode": "mode"})
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], 4)
        self.assertEqual([c["counts"]["tokens"] for c in p["cycles"]], [3] * 4)
        self.assertEqual(set(p["phases"]), {"llm_inference", "database", "mode"})

    def test_bad_config(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="it-cfg-")
        for text, needle in (('{"frequncy": 3}', "unknown option"), ('{"frequency": ', "line"),
                             ('{"phases": {"x": 3}}', "phases"), ('[1]', "object")):
            with self.subTest(text=text):
                cfg = os.path.join(d, "c.json")
                with open(cfg, "w") as f:
                    f.write(text)
                rec = record(["--config", cfg], ["/bin/true"], check=False)
                self.assertNotEqual(rec.proc.returncode, 0)
                self.assertIn(needle, rec.stderr)
                self.assertIsNone(rec.profile)


@need_root
class TestProbeErrors(unittest.TestCase):
    """Bad specs: one clear line, non-zero exit, the command never runs, no outputs."""

    def check_error(self, args, needle):
        marker = os.path.join(os.path.dirname(fixture("experiment")), "it-error-ran")
        if os.path.exists(marker):
            os.unlink(marker)
        rec = record(args, ["/bin/sh", "-c", f"touch {marker}"], check=False)
        self.assertNotEqual(rec.proc.returncode, 0)
        err = [l for l in rec.stderr.splitlines() if l.strip()]
        # every bad value is one line, "infertrace record: ..."
        self.assertEqual(len(err), 1, f"expected one error line, got:\n{rec.stderr}")
        self.assertIn(needle, err[0])
        self.assertTrue(err[0].startswith("infertrace record: "), err[0])
        self.assertFalse(os.path.exists(marker), "the command ran despite the error")
        self.assertFalse(os.path.exists(os.path.join(rec.dir, "profile.json")))
        self.assertFalse(os.path.exists(os.path.join(rec.dir, "stacks.folded")))
        return err[0]

    def test_unknown_symbol(self):
        exe = fixture("experiment")
        line = self.check_error(["--cycle", f"{exe}:no_such_function"], "no_such_function")
        self.assertIn("not found", line)

    def test_unknown_symbol_in_main_executable(self):
        line = self.check_error(["--phase", "x=definitely_not_in_sh"], "definitely_not_in_sh")
        self.assertIn("not found", line)

    def test_unknown_library_waits_and_is_reported(self):
        """A library name no file of the target has may come with dlopen:
        the probe waits (said at start), the run goes on, and the end says
        it was never placed."""
        rec = record(["--phase", "llm_inference=libnosuchlib:llama_decode"], ["/bin/true"])
        self.assertRegex(rec.stderr, r"probe 'libnosuchlib:llama_decode' waits for a library named 'libnosuchlib'")
        self.assertRegex(rec.stderr, r"warning: probe 'libnosuchlib:llama_decode' was never placed: "
                                     r"library 'libnosuchlib' is not loaded by the target")
        probe = rec.profile["probes"][0]
        self.assertEqual(probe["placed_in"], [])
        self.assertIn("not loaded", probe["not_placed"])

    def test_missing_object_path(self):
        self.check_error(["--count", "tokens=/nonexistent/libx.so:f"], "/nonexistent/libx.so")

    def test_bad_syntax(self):
        for spec, needle in (("lib:", "bad probe spec"), (":sym", "bad probe spec"),
                             ("usdt:onlyobject", "bad USDT spec"), ("usdt:a:b:c:d:e", "bad USDT spec"),
                             ("a:b:c", "bad probe spec")):
            with self.subTest(spec=spec):
                self.check_error(["--phase", f"p={spec}"], needle)

    def test_bad_named_option(self):
        self.check_error(["--phase", "nospec"], "NAME=SPEC")

    def test_usdt_point_as_phase(self):
        self.check_error(["--phase", "p=usdt:/bin/sh:prov:name"], "BEGIN:END")

    def test_unknown_preset(self):
        self.check_error(["--preset", "nosuchpreset"], "nosuchpreset")


def tearDownModule():
    if os.environ.get("INFERTRACE_TEST_VERBOSE"):
        for t, what, checked, n in STRICT_CYCLES:
            print(f"  {t}: {what}: {checked}/{n} cycles checked alone")


if __name__ == "__main__":
    unittest.main()
