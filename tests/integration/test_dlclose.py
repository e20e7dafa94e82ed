# SPDX-License-Identifier: BSD-2-Clause
"""A probed library closed (dlclose) while traced, another library mapped
where it was, and the first opened again elsewhere (tests/fixtures/dl_reload.c):
phases counted exactly, samples named by the file mapped when they were taken."""
import json
import os
import unittest

from common import FIXTURE_BUILD, FIXTURES, build, need_root, record


def fixtures():
    inc = f"-I{FIXTURES} -O2 -g"
    lib = build("libexpdl.so", ["exp_dl.c"], f"{inc} -shared -fPIC")
    alt = build("libexpdl_alt.so", ["exp_dl.c"], f"{inc} -shared -fPIC -DDL_ALT")
    # -O0: each round's caller stays a frame of its own (no tail calls)
    exe = build("dl_reload", ["dl_reload.c"], f"-I{FIXTURES} -O0 -g -ldl")
    return exe, lib, alt


def folded(path):
    with open(path) as f:
        return [(l.rsplit(" ", 1)[0], int(l.rsplit(" ", 1)[1])) for l in f if l.strip()]


@need_root
class TestDlclose(unittest.TestCase):
    def test_library_closed_and_reopened_mid_trace(self):
        exe, lib, alt = fixtures()
        n = 20
        rec = record(["--cycle", "reload_cycle", "--phase", f"dl={lib}:dl_work",
                      "--phase", f"spin={lib}:dl_spin"], [exe, str(n), lib, alt])
        truth = json.loads([l for l in rec.stdout.splitlines() if l.startswith("{")][-1])
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
        spin = folded(os.path.join(rec.dir, "stacks.spin.folded"))
        self.assertTrue(spin)
        for stack, _ in spin:
            self.assertNotIn("alt_spin", stack)
        self.assertTrue(any(s.endswith("dl_spin") or ";dl_spin;" in s for s, _ in spin), spin)
        stacks = folded(os.path.join(rec.dir, "stacks.folded"))
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
