# SPDX-License-Identifier: BSD-2-Clause
"""Memory tracing: known RSS and known growth by construction."""
import unittest

import common


@common.need_root
class MemoryTest(unittest.TestCase):
    def test_peak_rss(self):
        r = common.record([], [common.fixture("sched_fix"), "touch", "150", "200"])
        mem = r.profile["memory"]
        self.assertIn("mm counters", mem["source"])
        self.assertAlmostEqual(mem["peak_mb"], 151.5, delta=151.5 * 0.05, msg=mem)
        self.assertLessEqual(len(mem["timeline"]), 512)
        self.assertGreater(mem["faults"]["minor"], 150 * 256 * 0.9)  # 4 KiB pages touched
        self.assertAlmostEqual(r.profile["aggregate_metrics"]["peak_memory_mb"], mem["peak_mb"])

    def test_leak_per_cycle(self):
        r = common.record(["--cycle", "cycle_leak"], [common.fixture("sched_fix"), "leak", "10", "12"])
        mem = r.profile["memory"]
        self.assertAlmostEqual(mem["growth_mb_per_cycle"], 10, delta=1, msg=mem)
        peaks = [c["rss_peak_mb"] for c in r.profile["cycles"]]
        self.assertEqual(len(peaks), 12)
        self.assertGreater(peaks[-1] - peaks[0], 100)


if __name__ == "__main__":
    unittest.main()
