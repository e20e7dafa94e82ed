# SPDX-License-Identifier: BSD-2-Clause
"""--checkpoint: a tracer killed with SIGKILL mid-run leaves its last
checkpoint whole. The fixture (tick_cycles) prints each cycle's index as it
ends, so the test knows, by the fixture's own output, how many cycles ran
until the kill."""
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from common import INFERTRACE, assert_schema, fixture, need_root

SPIN_MS, SLEEP_MS = 15, 5


@need_root
class CheckpointTest(unittest.TestCase):
    def test_sigkill_leaves_last_checkpoint(self):
        exe = fixture("tick_cycles")
        out = tempfile.mkdtemp(prefix="it-ckpt-")
        p = subprocess.Popen([INFERTRACE, "record", "-q", "-o", out, "--checkpoint", "1", "--cycle", "run_cycle",
                              "--", exe, "100000", str(SPIN_MS), str(SLEEP_MS)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ticks = []

        def read():
            for line in p.stdout:
                ticks.append(time.monotonic())
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        # some cycles first, then several checkpoints
        deadline = time.monotonic() + 60
        while len(ticks) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(6.5)
        p.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        p.wait(timeout=30)
        # the fixture outlives the tracer or not (the watchdog decides): only
        # the cycles it reported before the kill count
        ran = sum(1 for t in ticks if t <= killed)
        self.assertGreater(ran, 100)
        with open(os.path.join(out, "profile.json")) as f:
            prof = json.load(f)
        assert_schema(prof)
        self.assertTrue(prof["stop_reason"].startswith("checkpoint"), prof["stop_reason"])
        self.assertIn(f"{prof['duration_s']:.3f} s", prof["stop_reason"])  # its time range, stated
        got = prof["aggregate_metrics"]["total_cycles"]
        sys.stderr.write(f"\n  checkpoint: {got} of {ran} cycles run until the kill, covers {prof['duration_s']:.2f} s\n")
        self.assertGreaterEqual(got, 0.8 * ran, f"checkpoint holds {got} of {ran} cycles run")
        self.assertLessEqual(got, ran + 1)
        # the other checkpointed outputs are whole too
        with gzip.open(os.path.join(out, "profile.pb.gz")) as f:
            self.assertGreater(len(f.read()), 0)
        with open(os.path.join(out, "stacks.folded")) as f:
            for line in f:
                self.assertRegex(line, r"^\S.* \d+\n$")
        self.assertFalse([n for n in os.listdir(out) if n.startswith(".")], "temporary files left")


if __name__ == "__main__":
    unittest.main()
