# SPDX-License-Identifier: BSD-2-Clause
"""--preset cuda against fake CUDA libraries with the real function names:
tests/fixtures/fake_cudart.c (libcudart.so.12, implemented with the
driver's calls like the real runtime) and fake_cuda.c (libcuda.so.1), called
by tests/fixtures/cuda_exp.c, whose launches, copied bytes and sync sleeps
per cycle are known by construction."""
import os
import unittest

import common

CYCLES, LAUNCHES, SYNC_MS = 6, 10, 5


@common.need_root
class CudaTest(unittest.TestCase):
    def test_launches_bytes_sync(self):
        exe = common.fixture("cuda_exp")
        env = dict(os.environ, FAKE_CUDA_SYNC_MS=str(SYNC_MS))
        r = common.record(["--preset", "cuda", "--cycle", "run_cycle"], [exe, str(CYCLES), str(LAUNCHES)], env=env)
        p = r.profile
        cycles = p["cycles"]
        self.assertEqual(len(cycles), CYCLES)
        truth = common.truth_of(r)["sync_ms"]
        for i, c in enumerate(cycles):
            cu = c["cuda"]
            # runtime launches + 2 direct driver launches + 1 cudaLaunchKernelExC
            # + 3 direct cuLaunchKernelEx; the driver calls the runtime makes
            # for its own launches are not counted again
            self.assertEqual(cu["kernel_launches"], LAUNCHES + i + 2 + 1 + 3, cu)
            # one cudaGraphLaunch (its cuGraphLaunch inside not counted) + one direct
            self.assertEqual(cu["graph_launches"], 2, cu)
            self.assertEqual(cu["memcpy_calls"], 4, cu)
            self.assertEqual(cu["memcpy_bytes"], 2 * (1 << (20 + i % 3)) + 4096 + 1000, cu)
            self.assertEqual(cu["sync_calls"], 3, cu)
            # the fixture's own clock around the three calls (each sleeps SYNC_MS)
            wait = truth[i]
            self.assertGreaterEqual(wait, 3 * SYNC_MS)
            self.assertAlmostEqual(cu["sync_wait_ms"], wait, delta=0.05 * wait, msg=cu)
            sync = c["phases"]["gpu_sync"]
            self.assertEqual(sync["calls"], 3)
            self.assertAlmostEqual(sync["ms"], cu["sync_wait_ms"], delta=0.05 * wait)
            # the blocked time inside the syncs is GPU waiting, not sleep
            # (no more than the fixture's clock around the syncs; a sleep lasts
            # at least what was asked, from a few µs into the call)
            self.assertLessEqual(c["blocked"]["gpu_sync"], wait, c["blocked"])
            self.assertGreaterEqual(c["blocked"]["gpu_sync"], 3 * SYNC_MS * 0.98, c["blocked"])
            self.assertLess(c["blocked"]["sleep"], 0.1 * wait, c["blocked"])
        tot = p["gpu"]["cuda"]
        self.assertEqual(tot["kernel_launches"], sum(LAUNCHES + i + 6 for i in range(CYCLES)))
        self.assertEqual(tot["graph_launches"], 2 * CYCLES)
        self.assertEqual(tot["sync_calls"], 3 * CYCLES)
        libs = sorted(os.path.basename(x) for x in tot["libraries"])
        self.assertEqual(libs, ["libcuda.so.1", "libcudart.so.12"])

    def test_no_cuda_library(self):
        r = common.record(["--preset", "cuda"], ["/bin/true"])
        self.assertEqual(r.profile["gpu"]["cuda"]["libraries"], [])
        self.assertIn("never loaded libcudart or libcuda", r.stderr)


if __name__ == "__main__":
    unittest.main()
