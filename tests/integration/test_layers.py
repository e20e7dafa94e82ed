# SPDX-License-Identifier: BSD-2-Clause
"""tools/check_layers.py, the include-structure check of make lint, on
planted trees whose violations are known by construction: a clean tree
passes; an include up a layer, a circle of includes, and a circle of calls
through headers of other names (seen only in the objects' symbols) each
fail, naming what they found; a baseline lets the known ones pass and a new
one still fails. Then the real tree against its baseline."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import BUILD, ROOT, compile_object

CHECK = os.path.join(ROOT, "tools", "check_layers.py")


def plant(files):
    """A tree {relative path: text} under a new directory, with a layers
    file lib < core < outputs; returns (dir, root, layers, baseline)."""
    d = tempfile.mkdtemp(prefix="it-layers-")
    root = os.path.join(d, "user")
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    layers = os.path.join(d, "layers.txt")
    with open(layers, "w") as f:
        f.write("# lowest first\nlib\ncore\noutputs\n")
    return d, root, layers, os.path.join(d, "baseline.txt")


def check(root, layers, baseline, *extra):
    return subprocess.run([sys.executable, CHECK, "--root", root, "--layers", layers, "--baseline", baseline,
                           *extra], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


CLEAN = {
    "lib/vec.h": "#define VEC 1\n",
    "core/model.h": '#include "lib/vec.h"\nint model(void);\n',
    "core/model.c": '#include "model.h"\nint model(void) { return 1; }\n',
    "outputs/json.c": '#include "core/model.h"\n#include <stdio.h>\n#include "infertrace.h"\nint json(void) { return model(); }\n',
}


class TestCheckLayers(unittest.TestCase):
    def setUp(self):
        self.dirs = []

    def tearDown(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def planted(self, files):
        t = plant(files)
        self.dirs.append(t[0])
        return t[1:]

    def test_clean_tree_passes(self):
        r = check(*self.planted(CLEAN))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 known violations, 0 new", r.stdout)

    def test_include_up_a_layer_fails(self):
        files = dict(CLEAN)
        files["lib/vec.h"] = '#include "core/model.h"\n'
        r = check(*self.planted(files))
        self.assertEqual(r.returncode, 1)
        self.assertIn("up a layer: lib/vec.h includes core/model.h (lib is below core)", r.stderr)
        # and lib <-> core is now a folder circle
        self.assertIn("folder circle: core <-> lib", r.stderr)

    def test_include_circle_fails(self):
        files = dict(CLEAN)
        files["core/a.h"] = '#include "b.h"\n'
        files["core/b.h"] = '#include "a.h"\n'
        r = check(*self.planted(files))
        self.assertEqual(r.returncode, 1)
        self.assertIn("file circle: core/a <-> core/b", r.stderr)
        self.assertNotIn("up a layer", r.stderr)

    def test_call_circle_seen_in_objects_only(self):
        """a.c calls b's function and b.c calls a's, each declaring the
        other's function itself: no include joins them; the symbols do."""
        files = dict(CLEAN)
        files["core/a.c"] = "int b_fn(void);\nint a_fn(void) { return b_fn(); }\n"
        files["core/b.c"] = "int a_fn(void);\nint b_fn(void) { return 0; }\nint b2(void) { return a_fn(); }\n"
        root, layers, baseline = self.planted(files)
        objdir = os.path.join(os.path.dirname(root), "build")
        for src in ("core/a.c", "core/b.c", "core/model.c"):
            compile_object(os.path.join(root, src), os.path.join(objdir, "user", src[:-2] + ".o"), root)
        self.assertEqual(check(root, layers, baseline).returncode, 0)
        r = check(root, layers, baseline, "--objects", objdir)
        self.assertEqual(r.returncode, 1)
        self.assertIn("file circle: core/a <-> core/b", r.stderr)

    def test_baseline_passes_known_and_fails_new(self):
        files = dict(CLEAN)
        files["lib/vec.h"] = '#include "core/model.h"\n'
        root, layers, baseline = self.planted(files)
        r = check(root, layers, baseline, "--write-baseline")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(check(root, layers, baseline).returncode, 0)
        # a new violation beside the known one
        with open(os.path.join(root, "core", "model.c"), "a") as f:
            f.write('#include "outputs/json.c"\n')
        r = check(root, layers, baseline)
        self.assertEqual(r.returncode, 1)
        self.assertIn("up a layer: core/model.c includes outputs/json.c", r.stderr)
        self.assertNotIn("lib/vec.h includes", r.stderr)
        # the known one fixed: reported, so the baseline can shrink
        with open(os.path.join(root, "lib", "vec.h"), "w") as f:
            f.write("#define VEC 1\n")
        with open(os.path.join(root, "core", "model.c"), "w") as f:
            f.write('#include "model.h"\nint model(void) { return 1; }\n')
        r = check(root, layers, baseline)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fixed, remove from the baseline: up a layer: lib/vec.h includes core/model.h", r.stdout)

    def test_folder_without_layer_fails(self):
        files = dict(CLEAN)
        files["extra/x.c"] = '#include "core/model.h"\n'
        r = check(*self.planted(files))
        self.assertEqual(r.returncode, 1)
        self.assertIn("folders with no layer: extra", r.stderr)

    def test_real_tree_has_no_new_violation(self):
        # the baseline holds what the objects show too (make lint's way)
        self.assertTrue(os.path.isdir(os.path.join(BUILD, "user")), f"{BUILD}: not built (make)")
        r = subprocess.run([sys.executable, CHECK, "--objects", BUILD], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
