# SPDX-License-Identifier: BSD-2-Clause
"""Launch stacks (docs/side-data.md): with --preset cuda the uprobe on
cuLaunchKernel sends the launching thread's stack, Python or native, and
gpu.folded puts each kernel's µs under PHASE;LAUNCH STACK;kernel.

Python launchers:
tests/fixtures/py_gpu_exp.py drives the fake driver with ctypes: in each
run_cycle(), attention() launches attn(float*) (0.3 ms) three times and mlp()
launches mlp(float*) (0.5 ms) twice; the fake CUPTI simulates the GPU, so
each kernel's time is its duration exactly, and the totals are known by
construction: duration x launches x cycles, under a stack whose Python
frames end with the function that launched it. Without --preset cuda the
kernels stay under their phase alone.

Native launchers: tests/fixtures/gpu_exp.c's native mode, in C, where
attention() calls launch_attn() three times and mlp() calls launch_mlp()
twice, each of which calls cuLaunchKernel itself; with both functions
phases, each kernel's time is exactly under its phase and the native stack
that ends with its launcher, with DWARF copies (the default) and with
frame pointers (--call-graph fp, the fixture built with them)."""
import json
import os
import tempfile
import unittest

import common

SCRIPT = os.path.join(common.FIXTURES, "py_gpu_exp.py")
CYCLES = 20


def one_python():
    """The system's CPython where present (what the distribution ships),
    else the newest found."""
    pys = common.PYTHONS
    for label, path in pys.items():
        if label == "system-python3.11":
            return label, path
    return sorted(pys.items())[-1] if pys else (None, None)


def run(python, args):
    """Records py_gpu_exp.py: (recording, the script's truth)."""
    truth_path = tempfile.mktemp(prefix="it-cupti-truth-")
    env = dict(os.environ, INFERTRACE_CUPTI_LIB=common.fixture("libfake_cupti.so"), FAKE_CUPTI_TRUTH=truth_path)
    try:
        r = common.record(["--cycle", "py:run_cycle"] + list(args),
                          [python, SCRIPT, common.fixture("libcuda.so.1"), str(CYCLES)], env=env)
    finally:
        if os.path.exists(truth_path):
            os.unlink(truth_path)
    return r, common.truth_of(r)


@common.need_root
@unittest.skipUnless(common.PYTHONS, "no CPython 3.10+ on this machine")
class GpuLaunchStacksTest(unittest.TestCase):
    def test_kernels_under_their_python_launcher(self):
        for label, python in common.PYTHONS.items():
            with self.subTest(python=label):
                r, truth = run(python, ["--preset", "cuda"])
                folded = r.folded("gpu.folded")
                for kernel, k in truth["kernels"].items():
                    want_us = k["dur_ns"] // 1000 * k["per_cycle"] * truth["cycles"]
                    suffix = f";run_cycle (py_gpu_exp.py);{k['launcher']} (py_gpu_exp.py);{kernel}"
                    mine = {s: c for s, c in folded.items() if s.endswith(";" + kernel)}
                    # every launch of it seen, each under its launcher
                    self.assertEqual(sum(mine.values()), want_us, (label, folded))
                    under = sum(c for s, c in mine.items() if s.endswith(suffix))
                    self.assertEqual(under, want_us, (label, kernel, folded))
                    for s in mine:
                        frames = s.split(";")
                        # the phase stays the root; Python frames below it
                        self.assertGreater(len(frames), 3, s)
                        self.assertNotIn("(py_gpu_exp.py)", frames[0], s)
                        self.assertIn("main (py_gpu_exp.py)", frames, s)

    def test_phase_only_without_the_preset(self):
        label, python = one_python()
        r, truth = run(python, [])
        folded = r.folded("gpu.folded")
        for kernel, k in truth["kernels"].items():
            want_us = k["dur_ns"] // 1000 * k["per_cycle"] * truth["cycles"]
            mine = {s: c for s, c in folded.items() if s.endswith(";" + kernel)}
            self.assertEqual(sum(mine.values()), want_us, (label, folded))
            for s in mine:
                self.assertEqual(len(s.split(";")), 2, (label, s))


NATIVE_CYCLES = 10
NATIVE_LAUNCHERS = {"_Z4attnPf": ("attention", "launch_attn", "attn(float*)"),
                    "_Z3mlpPf": ("mlp", "launch_mlp", "mlp(float*)")}


def run_native(exe, args):
    """Records EXE (a gpu_exp build, its path) native: (recording, the fake
    CUPTI's kernels)."""
    truth_path = tempfile.mktemp(prefix="it-cupti-truth-")
    env = dict(os.environ, INFERTRACE_CUPTI_LIB=common.fixture("libfake_cupti.so"), FAKE_CUPTI_TRUTH=truth_path)
    try:
        r = common.record(["--cycle", "run_cycle", "--phase", "attention=attention", "--phase", "mlp=mlp",
                           "--preset", "cuda", "--cupti", "full"] + list(args),
                          [exe, "native", str(NATIVE_CYCLES)], env=env)
        with open(truth_path) as f:
            ops = [json.loads(line) for line in f if line.strip()]
    finally:
        if os.path.exists(truth_path):
            os.unlink(truth_path)
    return r, [o for o in ops if o["what"] == "kernel"]


@common.need_root
class NativeLaunchStacksTest(unittest.TestCase):
    def check(self, r, kernels, copied):
        folded = r.folded("gpu.folded")
        for mangled, (phase, launcher, kernel) in NATIVE_LAUNCHERS.items():
            mine = [o for o in kernels if o["name"] == mangled]
            self.assertEqual(len(mine), NATIVE_CYCLES * (3 if phase == "attention" else 2))
            want_us = sum((o["end_ns"] - o["start_ns"] + 500) // 1000 for o in mine)
            lines = {s: c for s, c in folded.items() if s.endswith(";" + kernel)}
            self.assertEqual(sum(lines.values()), want_us, folded)
            # the launch's phase is the root, its launcher the last frame
            # before the driver's entry point, the kernel the leaf
            for s in lines:
                frames = s.split(";")
                self.assertEqual(frames[0], phase, s)
                self.assertIn(launcher, frames, s)
                self.assertEqual(frames[frames.index(launcher) + 1:], ["cuLaunchKernel", kernel], s)
                self.assertIn("run_cycle", frames, s)
                self.assertIn("main", frames, s)
        cuda = r.profile["gpu"]["cuda"]["launch_stacks"]
        self.assertEqual(cuda["native"], NATIVE_CYCLES * 5, cuda)
        self.assertEqual(cuda["python"], 0, cuda)
        self.assertEqual(cuda["not_kept"], 0, cuda)
        # dwarf: each launch copied, or named a copy's stack (a check matched)
        self.assertEqual(cuda["copies"] + cuda["reused"], NATIVE_CYCLES * 5 if copied else 0, cuda)
        self.assertNotIn("gpu_launch_stacks", r.profile["lost"])

    def test_kernels_under_their_native_launcher(self):
        r, kernels = run_native(common.fixture("gpu_exp"), [])
        self.check(r, kernels, True)

    def test_native_launcher_with_frame_pointers(self):
        r, kernels = run_native(common.fixture("gpu_exp_fp"), ["--call-graph", "fp"])
        self.check(r, kernels, False)


if __name__ == "__main__":
    unittest.main()
