# SPDX-License-Identifier: BSD-2-Clause
"""The systemd unit example of docs/long-runs.md's Fleets section passes
`systemd-analyze verify` (with the binary path pointed at this build), and
the check is real: the same unit with a misspelt directive fails it."""
import os
import shutil
import subprocess
import tempfile
import unittest

from common import INFERTRACE, ROOT

UNIT = os.path.join(ROOT, "docs", "examples", "infertrace@.service")


@unittest.skipUnless(shutil.which("systemd-analyze"), "systemd-analyze is not installed")
class FleetUnitTest(unittest.TestCase):
    def verify(self, text):
        d = tempfile.mkdtemp(prefix="it-unit-")
        path = os.path.join(d, "infertrace@lab1.service")
        with open(path, "w") as f:
            f.write(text.replace("/usr/local/bin/infertrace", os.path.abspath(INFERTRACE)))
        return subprocess.run(["systemd-analyze", "verify", path], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)

    def test_unit_verifies(self):
        with open(UNIT) as f:
            text = f.read()
        self.assertIn("--metrics", text)
        self.assertIn("--checkpoint", text)
        p = self.verify(text)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(p.stdout.strip(), "", p.stdout)
        bad = self.verify(text.replace("KillSignal=", "KillSignall="))
        self.assertIn("KillSignall", bad.stdout)


if __name__ == "__main__":
    unittest.main()
