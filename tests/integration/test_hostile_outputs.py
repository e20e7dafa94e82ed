# SPDX-License-Identifier: BSD-2-Clause
"""The output directory as root beside hostile local users (docs/outputs.md,
"Permissions and safety"): outputs readable by their owner only, no kernel
addresses unless asked, -o resolved without following another user's links,
planted names found at the start, one recording per directory, and after a
full disk a profile.json that lists only the files written."""
import fcntl
import gzip
import os
import stat
import subprocess
import tempfile
import time
import unittest

import common

NOBODY = 65534
NAMES = ["profile.json", "profile.pb.gz", "trace.json", "flamegraph.svg", "offcpu.svg", "report.html",
         "stacks.folded", "offcpu.folded"]
# written when a sample was taken (with its time): a short command may have none
MAYBE = ["timeline.speedscope.json"]


def as_nobody(*cmd):
    return subprocess.run(["runuser", "-u", "nobody", "--", *cmd], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def wait_locked(d, timeout=30):
    """Until a recording holds d's lock (the directory is then prepared)."""
    end = time.time() + timeout
    while time.time() < end:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        time.sleep(0.05)
    return False


# ---- profile.pb.gz: just enough of the protobuf wire format ----

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        if key & 7 == 0:
            v, i = varint(b, i)
        elif key & 7 == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {key & 7}")
        yield key >> 3, v


def kernel_addresses(path):
    """The addresses of the locations in the kernel's mapping."""
    with gzip.open(path) as f:
        prof = list(fields(f.read()))
    strings = [v.decode() for k, v in prof if k == 6]
    kmaps = set()
    for k, v in prof:
        if k == 3:
            m = dict(fields(v))
            if strings[m.get(5, 0)] == "[kernel.kallsyms]":
                kmaps.add(m.get(1))
    return [dict(fields(v)).get(3, 0) for k, v in prof if k == 4 and dict(fields(v)).get(2) in kmaps]


@common.need_root
class PermissionsTest(unittest.TestCase):
    def test_owner_only_by_default(self):
        parent = tempfile.mkdtemp(prefix="it-perm-")
        os.chmod(parent, 0o755)
        out = os.path.join(parent, "new", "out")
        r = common.record([], ["sleep", "0.3"], outdir=out)
        for d in (os.path.join(parent, "new"), out):
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o700, d)
        names = os.listdir(out)
        self.assertIn("profile.pb.gz", names)
        for n in names:
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(out, n)).st_mode), 0o600, n)
        self.assertNotEqual(as_nobody("cat", os.path.join(out, "profile.pb.gz")).returncode, 0)
        self.assertIs(r.profile["config"]["share_outputs"], False)

    def test_owner_only_under_sudo(self):
        parent = tempfile.mkdtemp(prefix="it-perm-")
        out = os.path.join(parent, "out")
        env = dict(os.environ, SUDO_UID="54321", SUDO_GID="54322")
        common.record([], ["sleep", "0.2"], outdir=out, env=env)
        st = os.stat(out)
        self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (54321, 54322, 0o700))
        for n in os.listdir(out):
            st = os.stat(os.path.join(out, n))
            self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (54321, 54322, 0o600), n)

    def test_share_outputs(self):
        parent = tempfile.mkdtemp(prefix="it-perm-")
        os.chmod(parent, 0o755)
        out = os.path.join(parent, "out")
        old = os.umask(0o077)  # the modes are the option's, whatever the umask
        try:
            r = common.record(["--share-outputs"], ["sleep", "0.2"], outdir=out)
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o755)
        for n in os.listdir(out):
            self.assertEqual(stat.S_IMODE(os.stat(os.path.join(out, n)).st_mode), 0o644, n)
        self.assertEqual(as_nobody("cat", os.path.join(out, "profile.json")).returncode, 0)
        self.assertIs(r.profile["config"]["share_outputs"], True)

    def test_kernel_addresses_only_when_asked(self):
        # sleep blocks in the kernel: its off-CPU stacks have kernel frames
        r = common.record([], ["sleep", "0.3"])
        addrs = kernel_addresses(os.path.join(r.dir, "profile.pb.gz"))
        self.assertTrue(addrs, "no kernel frames in profile.pb.gz")
        self.assertEqual(set(addrs), {0})
        r = common.record(["--kernel-addresses"], ["sleep", "0.3"])
        addrs = kernel_addresses(os.path.join(r.dir, "profile.pb.gz"))
        self.assertTrue(addrs and all(a >= 1 << 63 for a in addrs), [hex(a) for a in addrs])


@common.need_root
class PathTest(unittest.TestCase):
    def test_other_users_link_in_the_path_refused(self):
        # /tmp/x is nobody's; nobody's link x/run -> a root directory
        x = tempfile.mkdtemp(prefix="it-x-")
        os.chown(x, NOBODY, NOBODY)
        victim = tempfile.mkdtemp(prefix="it-victim-")
        self.assertEqual(as_nobody("ln", "-s", victim, os.path.join(x, "run")).returncode, 0)
        r = common.record([], ["true"], outdir=os.path.join(x, "run", "out"), check=False, wall_split=None)
        self.assertEqual(r.proc.returncode, 6, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if "refusing output directory" in ln]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("'run' in its path is a symbolic link owned by uid 65534", lines[0])
        self.assertEqual(os.listdir(victim), [])

    def test_root_link_in_the_path_followed(self):
        real = tempfile.mkdtemp(prefix="it-real-")
        link = real + "-link"
        os.symlink(real, link)
        r = common.record([], ["sleep", "0.2"], outdir=os.path.join(link, "out"))
        self.assertTrue(os.path.isfile(os.path.join(real, "out", "profile.json")))
        self.assertIsNotNone(r.profile)


@common.need_root
class PlantedTest(unittest.TestCase):
    def test_planted_directory_refused_at_start(self):
        d = common.sticky_world_dir()
        self.assertEqual(as_nobody("mkdir", os.path.join(d, "profile.json")).returncode, 0)
        marker = os.path.join(tempfile.mkdtemp(prefix="it-marker-"), "ran")
        p, _ = common.start_record(["-q"], ["touch", marker], outdir=d, stdout=subprocess.PIPE)
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 6, err)
        self.assertIn("'profile.json' in it is a directory owned by uid 65534", err)
        self.assertFalse(os.path.exists(marker), "the command ran though the outputs could not be written")

    def test_names_claimed_while_recording(self):
        d = common.sticky_world_dir()
        marker = os.path.join(tempfile.mkdtemp(prefix="it-marker-"), "running")
        p, _ = common.start_record(["-q"], ["sh", "-c", f"touch {marker}; sleep 3"], outdir=d,
                                   stdout=subprocess.PIPE)
        end = time.time() + 60
        while not os.path.exists(marker) and time.time() < end:
            time.sleep(0.05)
        self.assertIsNone(p.poll())
        for n in NAMES + MAYBE:
            as_nobody("mkdir", os.path.join(d, n))
        _, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        prof = common.load_json(os.path.join(d, "profile.json"))
        written = set(prof["outputs"]["files"])
        for n in NAMES + [m for m in MAYBE if m in written]:
            self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(d, n)).st_mode), n)
        for n in set(MAYBE) - written:
            self.assertFalse(os.path.lexists(os.path.join(d, n)), n)
        # each name listed as written is there; no empty claim is left
        self.assertEqual(written - set(MAYBE), set(NAMES))

    def test_unused_claims_removed(self):
        # a phase never entered gets no folded files: their claims go
        d = common.sticky_world_dir()
        r = common.record(["--phase", "unused=nosuchlib_xyz:f"], ["sleep", "0.2"], outdir=d, check=False,
                          wall_split=None)
        left = os.listdir(d)
        self.assertIn("profile.json", left, r.stderr)
        self.assertNotIn("stacks.unused.folded", left)
        self.assertNotIn("offcpu.unused.folded", left)

    def test_planted_period_directory_skipped(self):
        d = common.sticky_world_dir()
        self.assertEqual(as_nobody("mkdir", os.path.join(d, "0001")).returncode, 0)
        r = common.record(["--checkpoint", "1", "--rotate", "5"], ["sleep", "3.6"], outdir=d, wall_split=None)
        self.assertIn("'0001' is a directory owned by uid 65534", r.stderr)
        self.assertNotIn("holds other files", r.stderr)
        periods = sorted(n for n in os.listdir(d) if n.isdigit() and n != "0001")
        self.assertGreaterEqual(len(periods), 3, (os.listdir(d), r.stderr))
        for n in periods:
            self.assertTrue(os.path.isfile(os.path.join(d, n, "profile.json")), n)
        self.assertEqual(os.listdir(os.path.join(d, "0001")), [])


@common.need_root
class LockTest(unittest.TestCase):
    def test_second_recording_refused(self):
        d = tempfile.mkdtemp(prefix="it-lock-")
        first, _ = common.start_record(["-q"], ["sleep", "3"], outdir=d, stdout=subprocess.PIPE)
        self.assertTrue(wait_locked(d), "the first recording did not lock its directory")
        r = common.record([], ["true"], outdir=d, check=False, wall_split=None)
        self.assertEqual(r.proc.returncode, 6, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("is in use by another recording", lines[0])
        _, err = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, err)
        prof = common.load_json(os.path.join(d, "profile.json"))
        self.assertEqual(prof["command"], ["sleep", "3"])


@common.need_root
class FullDiskTest(unittest.TestCase):
    def test_only_written_files_listed(self):
        mnt = tempfile.mkdtemp(prefix="it-full-")
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", mnt]).returncode:
            os.rmdir(mnt)
            self.skipTest("cannot mount a tmpfs here")
        try:
            out = os.path.join(mnt, "out")
            r = common.record([], ["sleep", "0.3"], outdir=out, check=False, wall_split=None)
            self.assertEqual(r.proc.returncode, 6, r.stderr)
            self.assertNotIn("or report.html", r.stderr)  # one message for four files
            present = set(os.listdir(out))
            self.assertIsNotNone(r.profile, "profile.json lost to the views written before it")
            files = r.profile["outputs"]["files"]
            self.assertEqual(set(files), present)
            # outputs left out for want of content (no thread woke another:
            # no wakeup.folded) say why; the others failed for the full disk
            missing = {n["file"] for n in r.profile["outputs"]["not_written"]
                       if "failed" in n.get("reason", "") or "room" in n.get("reason", "")}
            self.assertTrue(missing, r.profile["outputs"]["not_written"])
            for n in missing:
                self.assertNotIn(n, present)
                self.assertTrue(f"writing {out}/{n} failed: No space left on device" in r.stderr or
                                f"removed {out}/{n} to make room" in r.stderr, (n, r.stderr))
            for n in present:
                self.assertNotIn(f"{out}/{n} failed", r.stderr)
        finally:
            subprocess.run(["umount", "-l", mnt])
            os.rmdir(mnt)


if __name__ == "__main__":
    unittest.main()
