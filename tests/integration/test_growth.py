# SPDX-License-Identifier: BSD-2-Clause
"""tools/check_growth.py, make lint's check that tables grow only through
user/lib/vec.h, on planted trees: realloc() in vec.h, in a comment or in a
string passes; a call elsewhere fails, naming the file and line; the
allowlist lets a listed file pass, wants a reason, and reports a listed
file that no longer calls realloc(). Then the real tree."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import ROOT

CHECK = os.path.join(ROOT, "tools", "check_growth.py")

CLEAN = {
    "lib/vec.h": "static inline void *grow(void *p, unsigned long n) { return realloc(p, n); }\n",
    "core/model.c": '#include "vec.h"\n/* realloc(p, n) in a comment */\n'
                    'const char *s = "realloc(p, n)";\nint model(void) { return 1; }\n',
}


class TestCheckGrowth(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="it-growth-")
        self.root = os.path.join(self.dir, "user")
        self.allowlist = os.path.join(self.dir, "allowlist.txt")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def plant(self, files, allow=""):
        for rel, text in files.items():
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        with open(self.allowlist, "w") as f:
            f.write("# planted\n" + allow)
        return subprocess.run([sys.executable, CHECK, "--root", self.root, "--allowlist", self.allowlist],
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def test_vec_comment_and_string_pass(self):
        r = self.plant(CLEAN)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 allowed realloc() calls, 0 new", r.stdout)

    def test_call_outside_vec_fails(self):
        files = dict(CLEAN)
        files["concerns/sched.c"] = "void f(void **p)\n{\n\t*p = realloc (*p, 8);\n}\n"
        files["side/energy.h"] = "#define GROW(p, n) reallocarray(p, n, 8)\n"
        r = self.plant(files)
        self.assertEqual(r.returncode, 1)
        self.assertIn("user/concerns/sched.c:3: realloc() outside lib/vec.h", r.stderr)
        self.assertIn("user/side/energy.h:1: realloc() outside lib/vec.h", r.stderr)
        self.assertIn("0 allowed realloc() calls, 2 new", r.stdout)

    def test_allowlist(self):
        files = dict(CLEAN)
        files["core/buf.c"] = "void f(void **p) { *p = realloc(*p, 8); }\n"
        r = self.plant(files, "core/buf.c: a library's buffer, not a table\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 allowed realloc() calls, 0 new", r.stdout)
        # no reason: bad input
        r = self.plant(files, "core/buf.c\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("gives no reason", r.stderr)
        # the file no longer grows by hand: the entry is reported
        files["core/buf.c"] = "int f(void) { return 0; }\n"
        r = self.plant(files, "core/buf.c: a library's buffer, not a table\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("remove from the allowlist: core/buf.c", r.stdout)

    def test_real_tree_passes(self):
        r = subprocess.run([sys.executable, CHECK], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
