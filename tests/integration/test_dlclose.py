# SPDX-License-Identifier: BSD-2-Clause
"""A probed library closed (dlclose) while traced, another library mapped
where it was, and the first opened again elsewhere (tests/fixtures/dl_reload.c):
phases counted exactly, samples named by the file mapped when they were taken."""
import unittest

from common import fixture, need_root, record, truth_of


@need_root
class TestDlclose(unittest.TestCase):
    def test_library_closed_and_reopened_mid_trace(self):
        exe, lib, alt = fixture("dl_reload"), fixture("libexpdl.so"), fixture("libexpdl_alt.so")
        n = 20
        rec = record(["--cycle", "reload_cycle", "--phase", f"dl={lib}:dl_work",
                      "--phase", f"spin={lib}:dl_spin"], [exe, str(n), lib, alt])
        truth = truth_of(rec)
        self.assertEqual(truth["calls"], [n, n, n])
        # opened again at another address (ALT or a reservation holds the old one)
        self.assertNotEqual(truth["bases"][2], truth["bases"][0])
        cycles = rec.profile["cycles"]
        self.assertEqual(len(cycles), 3 * n)
        # rounds 0 and 2 call the probed library once per phase; round 1 never
        for i, c in enumerate(cycles):
            if n <= i < 2 * n:
                self.assertEqual(c["phases"], {}, (i, c["phases"]))
            else:
                self.assertEqual(c["phases"]["dl"]["calls"], 1, (i, c["phases"]))
                self.assertEqual(c["phases"]["spin"]["calls"], 1, (i, c["phases"]))
                self.assertGreater(c["phases"]["spin"]["oncpu_ms"], 0, (i, c["phases"]))
        self.assertEqual(rec.profile["lost"]["probe_stack_overflow"], 0)
        # samples: the spin phase ran only in libexpdl (rounds 0 and 2); a
        # round-0 sample named through a later capture would read alt_spin,
        # which lies at the same address after the close
        spin = list(rec.folded("stacks.spin.folded").items())
        self.assertTrue(spin)
        for stack, _ in spin:
            self.assertNotIn("alt_spin", stack)
        self.assertTrue(any(s.endswith("dl_spin") or ";dl_spin;" in s for s, _ in spin), spin)
        stacks = list(rec.folded().items())
        alt_samples = 0
        for stack, count in stacks:
            frames = stack.split(";")
            if "use_alt" in frames:
                self.assertNotIn("dl_spin", frames, stack)
            if "alt_spin" in frames:
                alt_samples += count
        self.assertGreater(alt_samples, 0, stacks)


if __name__ == "__main__":
    unittest.main()
