# SPDX-License-Identifier: BSD-2-Clause
"""GPU kernel timing end to end: `infertrace record` launches
tests/fixtures/gpu_exp.c, whose fake libcuda loads our CUPTI injection
library at cuInit and simulates the GPU in the fake libcupti
(tests/fixtures/fake_cupti.c). The fake writes every op it simulated, on
CLOCK_MONOTONIC, to FAKE_CUPTI_TRUTH: the ground truth by construction that
the profile's per-cycle and per-phase figures, trace.json's GPU tracks,
gpu.folded and the verdicts are checked against."""
import json
import os
import subprocess
import tempfile
import unittest

import common

PHASES = ["--cycle", "run_cycle", "--phase", "host=host_work", "--phase", "launch=launch_kernels",
          "--phase", "wait=wait_gpu", "--phase", "copy_in=copy_in", "--phase", "copy_out=copy_out"]
# ms of slack between the tracer's figures and the truth: the clock map
# (calibration pairs read around cuptiGetTimestamp) is good to a few µs
EPS_MS = 0.02
# trace.json's slices are in whole µs: each phase window's ends are within 2 µs
EPS_PHASE_MS = 0.002 + EPS_MS


def union_ms(ivs):
    ivs = sorted(ivs)
    total, cur = 0, None
    for a, b in ivs:
        if b <= a:
            continue
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
    if cur:
        total += cur[1] - cur[0]
    return total / 1e6


def run(mode, cycles, args=(), env_extra=None, check=True):
    """Records gpu_exp MODE CYCLES: (recording, the fake's ops, the fixture's truth)."""
    truth_path = tempfile.mktemp(prefix="it-cupti-truth-")
    env = dict(os.environ, INFERTRACE_CUPTI_LIB=common.fixture("libfake_cupti.so"), FAKE_CUPTI_TRUTH=truth_path,
               **(env_extra or {}))
    try:
        r = common.record(list(args) + PHASES, [common.fixture("gpu_exp"), mode, str(cycles)], env=env, check=check)
        ops = []
        if os.path.exists(truth_path):
            with open(truth_path) as f:
                ops = [json.loads(line) for line in f if line.strip()]
    finally:
        if os.path.exists(truth_path):
            os.unlink(truth_path)
    return r, [o for o in ops if o.get("what") != "api"], common.truth_of(r)


def track_names(events):
    """trace.json's process names by pid and thread names by (pid, tid)."""
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return procs, threads


def device(cycle_or_phase, dev=0):
    for d in (cycle_or_phase.get("gpu") or {}).get("devices", []):
        if d["device"] == dev:
            return d
    return None


def launched_in(ops, c, dev=0):
    return [o for o in ops if o["device"] == dev and c["start_ns"] <= o["launch_ns"] <= c["end_ns"]]


@common.need_root
class GpuActivityTest(unittest.TestCase):
    def check_cycles(self, r, ops, devices=(0,), cycles=None):
        """Every cycle's (or those given) busy, active/idle and kernel count
        per device, from the truth."""
        cycles = r.profile["cycles"] if cycles is None else cycles
        self.assertGreater(len(cycles), 0)
        for c in cycles:
            self.assertEqual(c["gpu"]["source"], "cupti", c["gpu"])
            win = (c["end_ns"] - c["start_ns"]) / 1e6
            for dev in devices:
                mine = launched_in(ops, c, dev)
                d = device(c, dev)
                self.assertIsNotNone(d, (c["index"], dev, c["gpu"]))
                kernels = [o for o in mine if o["what"] == "kernel"]
                self.assertEqual(d["kernels"], len(kernels), d)
                self.assertAlmostEqual(d["busy_ms"], union_ms((o["start_ns"], o["end_ns"]) for o in kernels),
                                       delta=EPS_MS, msg=d)
                active = union_ms((max(o["start_ns"], c["start_ns"]), min(o["end_ns"], c["end_ns"]))
                                  for o in ops if o["device"] == dev)
                self.assertAlmostEqual(d["window_ms"], win, delta=1e-6)
                self.assertAlmostEqual(d["active_ms"], active, delta=EPS_MS, msg=d)
                self.assertAlmostEqual(d["idle_ms"], win - active, delta=EPS_MS, msg=d)
        return cycles

    def check_phases(self, r, ops, dev=0):
        """Every cycle's per-phase window, active and idle time against the
        truth, the phases' windows taken from trace.json's phase slices
        (whole µs: EPS_PHASE_MS of slack per window)."""
        with open(os.path.join(r.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        cycle_ts = {e["args"]["index"]: e["ts"] for e in events if e.get("cat") == "cycle"}
        checked = 0
        for c in r.profile["cycles"]:
            for name, ph in device(c, dev)["phases"].items():
                t0 = cycle_ts[c["index"]]
                wins = [(c["start_ns"] + (e["ts"] - t0) * 1000, c["start_ns"] + (e["ts"] + e["dur"] - t0) * 1000)
                        for e in events if e.get("cat") == "phase" and e["name"] == name
                        and e["args"].get("cycle") == c["index"]]
                slack = EPS_PHASE_MS * len(wins)
                clipped = [(max(o["start_ns"], a), min(o["end_ns"], b)) for o in ops if o["device"] == dev
                           for a, b in wins]
                self.assertAlmostEqual(ph["window_ms"], union_ms(wins), delta=slack, msg=(name, ph))
                self.assertAlmostEqual(ph["active_ms"], union_ms(clipped), delta=slack, msg=(name, ph))
                self.assertAlmostEqual(ph["idle_ms"], ph["window_ms"] - ph["active_ms"], delta=1e-6)
                checked += 1
        self.assertGreater(checked, 0)

    def verdicts(self, r):
        return {b["type"] for b in r.profile.get("bottlenecks", [])}

    def test_gpu_bound(self):
        r, ops, truth = run("gpu", 5)
        common.assert_schema(r.profile)
        cycles = self.check_cycles(r, ops)
        self.check_phases(r, ops)
        a = r.profile["gpu"]["activity"]
        self.assertEqual(a["source"], "cupti")
        self.assertEqual(a["kernels"], 4 * 5)
        self.assertEqual(a["unattributed"], 0)
        self.assertEqual(a["dropped"], 0)
        # the fake's clock is CLOCK_MONOTONIC + 7 s: the map finds it
        self.assertAlmostEqual(a["clock"]["offset_ns"], -7e9, delta=5e3)
        top = device(cycles[0])["top_kernels"]
        self.assertEqual(top[0]["name"], "gemm_large(float*, float*, int)")
        self.assertEqual(top[0]["count"], 4)
        self.assertAlmostEqual(top[0]["ms"], 40, delta=EPS_MS)
        # the kernels were launched in the phase `launch`: its busy time is theirs
        ph = device(cycles[0])["phases"]["launch"]
        self.assertEqual(ph["kernels"], 4)
        self.assertAlmostEqual(ph["busy_ms"], 40, delta=EPS_MS)
        self.assertIn("gpu_bound", self.verdicts(r))
        self.assertNotIn("launch_bound", self.verdicts(r))
        # per phase over the run
        self.assertEqual(device(r.profile["phases"]["launch"])["kernels"], 20)
        # gpu.folded: the kernels' µs under their launching phase
        folded = r.folded("gpu.folded")
        self.assertEqual(folded.get("launch;gemm_large(float*, float*, int)"), 5 * 4 * 10000, folded)
        # trace.json: a track for device 0's stream, one slice per kernel
        with open(os.path.join(r.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        procs, threads = track_names(events)
        gpu_pids = {pid for pid, n in procs.items() if n == "GPU 0"}
        self.assertEqual(len(gpu_pids), 1, procs)
        slices = [e for e in events if e.get("ph") == "X" and e["pid"] in gpu_pids]
        self.assertEqual(len(slices), 20)
        self.assertTrue(all(e["name"] == "gemm_large(float*, float*, int)" for e in slices))
        self.assertEqual({threads.get((e["pid"], e["tid"])) for e in slices}, {"stream 0"})

    def test_launch_bound_gap_named_by_host_work(self):
        r, ops, truth = run("launch", 4)
        cycles = self.check_cycles(r, ops)
        self.check_phases(r, ops)
        for c in cycles:
            d = device(c)
            # the GPU idles while the launching thread spins in host_work
            self.assertGreater(d["idle_ms"], 0.8 * d["window_ms"], d)
            self.assertGreaterEqual(d["idle_host_ms"], 0.9 * d["idle_ms"], d)
            self.assertLessEqual(d["idle_host_ms"], d["idle_ms"] + EPS_MS, d)
            host = d["phases"]["host"]
            self.assertEqual(host["kernels"], 0)
            self.assertGreaterEqual(host["idle_host_ms"], 0.9 * host["idle_ms"], host)
        run_dev = r.profile["gpu"]["activity"]["devices"][0]
        self.assertTrue(run_dev["idle_stacks"], run_dev)
        self.assertIn("host_work", run_dev["idle_stacks"][0]["stack"].split(";"), run_dev["idle_stacks"][0])
        self.assertIn("launch_bound", self.verdicts(r))
        self.assertNotIn("gpu_bound", self.verdicts(r))

    def test_sync_bound(self):
        r, ops, truth = run("sync", 3, env_extra={"FAKE_CUPTI_SYNC_LATENCY_US": "400"})
        cycles = self.check_cycles(r, ops)
        for c in cycles:
            d = device(c)
            self.assertEqual(d["kernels"], 50)
            # 50 waits of at least the 400 µs latency each
            self.assertGreaterEqual(d["sync_ms"], 50 * 0.4, d)
            self.assertLess(d["idle_host_ms"], 0.5 * d["idle_ms"], d)
        self.assertIn("sync_bound", self.verdicts(r))
        self.assertNotIn("launch_bound", self.verdicts(r))

    def test_transfer_bound(self):
        r, ops, truth = run("transfer", 3)
        cycles = self.check_cycles(r, ops)
        self.check_phases(r, ops)
        for c in cycles:
            d = device(c)
            mine = launched_in(ops, c)
            htod = [o for o in mine if o["what"] == "copy" and o["dir"] == 1]
            self.assertEqual(d["copies"]["htod"]["count"], 4)
            self.assertEqual(d["copies"]["htod"]["bytes"], sum(o["bytes"] for o in htod))
            self.assertAlmostEqual(d["copies"]["htod"]["ms"], sum((o["end_ns"] - o["start_ns"]) / 1e6 for o in htod),
                                   delta=EPS_MS)
            self.assertEqual(d["copies"]["dtoh"]["count"], 1)
        # the verdict the fixture's truth supports: the fake's copy time over
        # the cycles' wall on the fixture's clock against transfer_pct (30%);
        # a busy machine stretches the host's memcpy between the copies.
        # Within a tenth of the threshold either verdict holds.
        copy_ms = sum((o["end_ns"] - o["start_ns"]) / 1e6 for o in ops if o["what"] == "copy")
        wall_ms = sum((c["end_ns"] - c["start_ns"]) / 1e6 for c in truth["cycles"])
        share = 100 * copy_ms / wall_ms
        print(f"\n  copies {copy_ms:.1f} ms of {wall_ms:.1f} ms of cycles ({share:.0f}%)")
        if share >= 33:
            self.assertIn("transfer_bound", self.verdicts(r))
        elif share < 27:
            self.assertNotIn("transfer_bound", self.verdicts(r))

    def test_two_devices(self):
        r, ops, truth = run("multi", 3)
        self.check_cycles(r, ops, devices=(0, 1))
        with open(os.path.join(r.dir, "trace.json")) as f:
            events = json.load(f)["traceEvents"]
        procs, threads = track_names(events)
        tracks = {(procs.get(e["pid"]), threads.get((e["pid"], e["tid"])))
                  for e in events if e.get("ph") == "X" and e.get("cat") == "gpu"}
        self.assertTrue({("GPU 0", "stream 1"), ("GPU 0", "stream 2"), ("GPU 1", "stream 1"),
                         ("GPU 1", "stream 2")} <= tracks, tracks)

    def test_sampled_windows(self):
        """--cupti 3: activity on for one 100 ms window in three. The cycles
        whole inside a window have their exact figures, marked sampled; the
        others have none from CUPTI; the run's figures are the recorded
        cycles' alone."""
        r, ops, truth = run("gpu", 16, args=["--cupti", "3"], env_extra={"INFERTRACE_GPU_WINDOW_MS": "100"})
        common.assert_schema(r.profile)
        s = r.profile["gpu"]["activity"]["sampling"]
        self.assertEqual((s["mode"], s["every"], s["sampled"]), ("3", 3, True), s)
        self.assertGreaterEqual(s["windows"], 2, s)
        cycles = r.profile["cycles"]
        rec = [c for c in cycles if (c.get("gpu") or {}).get("sampled")]
        self.assertEqual(s["cycles_recorded"], len(rec), s)
        self.assertGreater(len(rec), 0)
        self.assertLess(len(rec), len(cycles))
        self.check_cycles(r, ops, cycles=rec)
        for c in rec:
            self.assertEqual(device(c)["kernels"], 4)
        for c in cycles:
            if c not in rec:
                self.assertNotEqual((c.get("gpu") or {}).get("source"), "cupti", c.get("gpu"))
        # a recorded cycle's kernels were all recorded; the others' not all
        for c in cycles:
            mine = [o for o in launched_in(ops, c) if o["what"] == "kernel"]
            self.assertEqual(len(mine), 4)
            if c in rec:
                self.assertTrue(all(o["recorded"] for o in mine), c["index"])
        # the run: the recorded cycles' kernels and busy time, their time
        run0 = next(d for d in r.profile["gpu"]["activity"]["devices"] if d["device"] == 0)
        self.assertEqual(run0["kernels"], 4 * len(rec))
        self.assertAlmostEqual(run0["busy_ms"], sum(device(c)["busy_ms"] for c in rec), delta=EPS_MS * len(rec))
        self.assertAlmostEqual(s["recorded_ms"], sum((c["end_ns"] - c["start_ns"]) / 1e6 for c in rec), delta=1e-3)
        self.assertIn("gpu_bound", self.verdicts(r))

    def test_target_with_its_own_injection_left_alone(self):
        own = common.fixture("libfake_cupti.so")  # any library: the point is that it is the target's
        r, ops, truth = run("gpu", 2, env_extra={"CUDA_INJECTION64_PATH": own})
        self.assertIn("CUDA_INJECTION64_PATH", r.stderr)
        a = r.profile["gpu"].get("activity") or {}
        self.assertIn("CUDA_INJECTION64_PATH", a.get("notice") or "", a)
        self.assertFalse(a.get("kernels"), a)
        self.assertNotEqual((r.profile["cycles"][0].get("gpu") or {}).get("source"), "cupti")

    def test_cupti_off(self):
        r, ops, truth = run("gpu", 2, args=["--cupti", "off"])
        self.assertEqual(ops, [])  # the library was never loaded: the fake saw no client
        a = r.profile["gpu"].get("activity") or {}
        self.assertFalse(a.get("kernels"), a)

    def test_attach_says_kernel_timing_needs_launch(self):
        env = dict(os.environ, INFERTRACE_CUPTI_LIB=common.fixture("libfake_cupti.so"))
        target = subprocess.Popen([common.fixture("gpu_exp"), "gpu", "200"], env=env, stdout=subprocess.DEVNULL)
        try:
            r = common.record(["-p", str(target.pid), "--duration", "1"] + PHASES, wall_split=None)
        finally:
            target.kill()
            target.wait()
        self.assertIn("kernel timing needs the process to be started by record", r.stderr)
        a = r.profile["gpu"].get("activity") or {}
        self.assertIn("started by record", a.get("notice") or "", a)

    def test_nvml_busy_without_cupti(self):
        script = tempfile.mktemp(prefix="it-nvml-")
        with open(script, "w") as f:
            f.write("count=1\nname=Fake GPU\nutil=60\nsample_ms=10\n")
        try:
            r, ops, truth = run("gpu", 8, args=["--cupti", "off", "--gpu", "nvml", "--side-period", "0.2"],
                                env_extra={"INFERTRACE_NVML_LIB": common.fixture("libfake_nvml.so"),
                                           "FAKE_NVML_SCRIPT": script})
        finally:
            os.unlink(script)
        common.assert_schema(r.profile)
        self.assertEqual(r.profile["gpu"]["activity"]["source"], "nvml")
        covered = 0
        for c in r.profile["cycles"]:
            d = device(c)
            if d is None:
                continue
            self.assertEqual(c["gpu"]["source"], "nvml")
            self.assertLessEqual(d["covered_ms"], d["window_ms"] + 1e-6)
            self.assertAlmostEqual(d["busy_ms"], 0.6 * d["covered_ms"], delta=1e-6, msg=d)
            covered += d["covered_ms"] >= 0.99 * d["window_ms"]
        # the driver's samples cover every cycle once the sampler runs
        self.assertGreaterEqual(covered, len(r.profile["cycles"]) - 1)


if __name__ == "__main__":
    unittest.main()
