# SPDX-License-Identifier: BSD-2-Clause
"""Robustness and safety as root: planted symlinks and unsafe output
directories, a tracer killed while it holds the target, signals, hostile
files, fork storms, probe-stack overflow and odd process names."""
import json
import os
import signal
import stat
import subprocess
import tempfile
import time
import unittest

import common

OUTPUT_NAMES = ["profile.json", "trace.json", "flamegraph.svg", "report.html",
                "stacks.folded", "offcpu.folded", "write-check"]


def sticky_world_dir():
    d = tempfile.mkdtemp(prefix="it-sticky-")
    os.chmod(d, 0o1777)
    return d


@common.need_root
class OutputFilesTest(unittest.TestCase):
    def test_planted_symlinks_do_not_redirect_writes(self):
        d = sticky_world_dir()
        victim_dir = tempfile.mkdtemp(prefix="it-victim-")
        victim = os.path.join(victim_dir, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        # at every output name, and at the temp names the old scheme would
        # have used (.NAME.tmp.PID) for the next few hundred PIDs
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        planted = []
        for name in OUTPUT_NAMES:
            planted.append(name)
            for pid in range(last + 1, last + 300):
                planted.append(f".{name}.tmp.{pid}")
        for name in planted:
            os.symlink(victim, os.path.join(d, name))
        r = common.record([], ["sleep", "0.3"], outdir=d)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.stat(victim).st_size, 9)
        for name in ["profile.json", "flamegraph.svg", "stacks.folded"]:
            st = os.lstat(os.path.join(d, name))
            self.assertTrue(stat.S_ISREG(st.st_mode), name)
        self.assertIsNotNone(r.profile)

    def test_unsafe_directories_refused(self):
        world = tempfile.mkdtemp(prefix="it-world-")
        os.chmod(world, 0o777)
        r = common.record([], ["true"], outdir=world, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("infertrace: refusing output directory", r.stderr)
        self.assertIn("sticky", r.stderr)
        self.assertEqual(os.listdir(world), [])
        other = tempfile.mkdtemp(prefix="it-other-")
        os.chown(other, 54321, 54321)
        r = common.record([], ["true"], outdir=other, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("owned by uid 54321", r.stderr)
        # the invoking sudo user's own directory is fine
        env = dict(os.environ, SUDO_UID="54321", SUDO_GID="54322")
        r = common.record([], ["sleep", "0.2"], outdir=other, env=env)
        self.assertEqual(os.stat(os.path.join(other, "profile.json")).st_uid, 54321)

    def test_outputs_handed_to_sudo_user(self):
        parent = tempfile.mkdtemp(prefix="it-sudo-")
        d = os.path.join(parent, "new", "out")
        env = dict(os.environ, SUDO_UID="54321", SUDO_GID="54322")
        common.record([], ["sleep", "0.2"], outdir=d, env=env)
        for name in ["profile.json", "stacks.folded"]:
            st = os.stat(os.path.join(d, name))
            self.assertEqual((st.st_uid, st.st_gid), (54321, 54322), name)
        st = os.stat(d)
        self.assertEqual((st.st_uid, st.st_gid), (54321, 54322))

    def test_symlinked_output_dir_refused(self):
        real = tempfile.mkdtemp(prefix="it-real-")
        link = real + "-link"
        os.symlink(real, link)
        r = common.record([], ["true"], outdir=link, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("infertrace: refusing output directory", r.stderr)
        self.assertIn("symbolic link", r.stderr)
        self.assertEqual(os.listdir(real), [])

    def test_stale_outputs_removed(self):
        d = tempfile.mkdtemp(prefix="it-stale-")
        stale = ["stacks.oldphase.folded", "offcpu.oldphase.folded", ".profile.json.tmp.1234"]
        mine = ["notes.txt", "stacks.txt"]
        for name in stale + mine:
            with open(os.path.join(d, name), "w") as f:
                f.write("x 1\n")
        common.record([], ["sleep", "0.2"], outdir=d)
        left = set(os.listdir(d))
        for name in stale:
            self.assertNotIn(name, left)
        for name in mine:
            self.assertIn(name, left)
        self.assertIn("profile.json", left)

    def test_empty_output_dir_name(self):
        p = subprocess.run([common.INFERTRACE, "record", "-o", "", "--", "true"],
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("infertrace: ", p.stderr)


if __name__ == "__main__":
    unittest.main()
