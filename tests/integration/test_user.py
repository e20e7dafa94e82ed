# SPDX-License-Identifier: BSD-2-Clause
"""--user USER runs the launched command without root; under sudo
(SUDO_UID/SUDO_GID) the invoking user is the default and `--user root`
keeps root. The command's own `id` output is the truth."""
import os
import pwd
import subprocess
import tempfile
import unittest

from common import INFERTRACE, need_root, record

# prints its ids, then spins in the shell so that it is sampled as that user
SPIN = "id -u; id -g; echo \"$HOME\"; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"


def nobody():
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


@need_root
@unittest.skipUnless(nobody(), "no user 'nobody' in /etc/passwd")
class UserTest(unittest.TestCase):
    def ids(self, rec):
        uid, gid, home = rec.stdout.splitlines()[:3]
        return int(uid), int(gid), home

    def test_user_by_name(self):
        pw = nobody()
        rec = record(["--user", "nobody"], ["/bin/sh", "-c", SPIN], wall_split=None)
        self.assertEqual(self.ids(rec), (pw.pw_uid, pw.pw_gid, pw.pw_dir))
        self.assertEqual(rec.profile["config"]["user"], "nobody")
        # traced as any other command: its samples are there
        self.assertGreater(rec.profile["samples"]["total"], 0)
        self.assertTrue(any(s.startswith("sh;") for s in rec.folded()), list(rec.folded())[:3])

    def test_numeric_uid_without_passwd_entry(self):
        uid = 54321
        while True:
            try:
                pwd.getpwuid(uid)
                uid += 1
            except KeyError:
                break
        rec = record(["--user", str(uid)], ["/bin/sh", "-c", "id -u; id -g; id -G"], wall_split=None)
        self.assertEqual(rec.stdout.split(), [str(uid), str(uid), str(uid)])  # no supplementary groups

    def test_sudo_default_and_root_kept(self):
        pw = nobody()
        env = dict(os.environ, SUDO_UID=str(pw.pw_uid), SUDO_GID=str(pw.pw_gid))
        out = tempfile.mkdtemp(prefix="it-user-")
        os.rmdir(out)  # created by record, and handed to the sudo user
        rec = record([], ["/bin/sh", "-c", "id -u"], env=env, outdir=out, wall_split=None)
        self.assertEqual(rec.stdout.split(), [str(pw.pw_uid)])
        self.assertEqual(os.stat(os.path.join(out, "profile.json")).st_uid, pw.pw_uid)
        rec = record(["--user", "root"], ["/bin/sh", "-c", "id -u"], env=env, wall_split=None)
        self.assertEqual(rec.stdout.split(), ["0"])
        self.assertNotIn("user", rec.profile["config"])

    def test_errors(self):
        for args, want in ((["--user", "no-such-user-x", "--", "true"], "invalid --user 'no-such-user-x'"),
                           (["--user", "nobody", "-p", str(os.getpid())], "--user applies to a launched COMMAND")):
            p = subprocess.run([INFERTRACE, "record", "-o", tempfile.mkdtemp(prefix="it-user-")] + args,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stderr)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn(want, lines[0])


if __name__ == "__main__":
    unittest.main()
