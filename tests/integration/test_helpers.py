# SPDX-License-Identifier: BSD-2-Clause
"""The integration tests' own rules, without root: every fixture of
common.FIXTURE_RULES builds by its rule and is built again when the rule
changes; a name has one rule and a rule one name; and the test modules keep
to common: they build fixtures through common.fixture() only (no compiler
called, only names the table has), import helpers from common only (never
from another test module), and define no function common or another module
already has."""
import ast
import glob
import os
import unittest

import common

HERE = os.path.dirname(os.path.abspath(__file__))
COMPILERS = ("gcc", "g++", "cc", "c++", "clang", "clang++", "objcopy", "ld")


def modules():
    """{file name: (source, AST)} of the test modules of this directory."""
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        if os.path.basename(path) == os.path.basename(__file__):
            continue  # this one names the compilers it looks for
        with open(path) as f:
            src = f.read()
        out[os.path.basename(path)] = (src, ast.parse(src, path))
    return out


def calls_to(tree, name):
    """The calls of tree to name or to common.name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == name) or \
               (isinstance(f, ast.Attribute) and f.attr == name and
                    isinstance(f.value, ast.Name) and f.value.id == "common"):
                yield node


def functions(tree):
    """The functions and methods of tree: (name, line, body as text)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]  # the docstring
            yield node.name, node.lineno, ast.dump(ast.Module(body=body, type_ignores=[]))


class FixtureRulesTest(unittest.TestCase):
    def test_every_fixture_builds(self):
        for name in common.FIXTURE_RULES:
            with self.subTest(fixture=name):
                path = common.fixture(name)
                self.assertTrue(os.path.isfile(path), path)
                self.assertTrue(os.access(path, os.X_OK) or name.endswith((".so",)) or ".so." in name, path)
                # built once: a second call finds it fresh
                built = os.path.getmtime(path)
                self.assertEqual(common.fixture(name), path)
                self.assertEqual(os.path.getmtime(path), built, f"{name} built twice by one rule")

    def test_changed_rule_builds_again(self):
        name = "test_helpers_probe"
        path = os.path.join(common.FIXTURE_BUILD, name)
        self.addCleanup(common.FIXTURE_RULES.pop, name, None)
        for p in (path, path + ".rule"):
            self.addCleanup(lambda p=p: os.path.exists(p) and os.unlink(p))
        common.FIXTURE_RULES[name] = common.Rule(("probe_bench.c",), "-O0")
        self.assertEqual(common.fixture(name), path)
        with open(path + ".rule") as f:
            self.assertIn('"-O0"', f.read())
        common.FIXTURE_RULES[name] = common.Rule(("probe_bench.c",), "-O2")
        self.assertEqual(common.fixture(name), path)
        with open(path + ".rule") as f:
            stamp = f.read()
        self.assertIn('"-O2"', stamp)
        self.assertNotIn('"-O0"', stamp)

    def test_one_rule_per_name_one_name_per_rule(self):
        # a key given twice in the table's literal would silently keep the last
        with open(os.path.join(HERE, "common.py")) as f:
            tree = ast.parse(f.read())
        table = next(n.value for n in tree.body if isinstance(n, ast.Assign) and
                     any(isinstance(t, ast.Name) and t.id == "FIXTURE_RULES" for t in n.targets))
        keys = [k.value for k in table.keys]
        self.assertEqual(sorted(k for k in keys if keys.count(k) > 1), [], "fixture names with two rules")
        by_rule = {}
        for name, rule in common.FIXTURE_RULES.items():
            by_rule.setdefault(rule, []).append(name)
        self.assertEqual([names for names in by_rule.values() if len(names) > 1], [], "one rule under two names")
        for name, rule in common.FIXTURE_RULES.items():
            for dep in rule.deps:
                self.assertIn(dep, common.FIXTURE_RULES, name)
            for src in rule.sources:
                self.assertTrue(os.path.isfile(os.path.join(common.FIXTURES, src)), (name, src))


class TestModulesTest(unittest.TestCase):
    """The test modules keep to common."""

    @classmethod
    def setUpClass(cls):
        cls.mods = modules()

    def test_no_compiler_called(self):
        found = []
        for f, (_, tree) in self.mods.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                    v = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                    if v.strip() in COMPILERS or v.split(" ", 1)[0] in COMPILERS and " " in v:
                        found.append(f"{f}:{node.lineno}: {v[:60]!r}")
            for name in ("build", "_compile"):
                found += [f"{f}:{c.lineno}: {name}()" for c in calls_to(tree, name)]
        self.assertEqual(found, [], "build fixtures with common.fixture(NAME), by a rule of common.FIXTURE_RULES")

    def test_fixtures_named_are_in_the_table(self):
        used = set()
        for f, (_, tree) in self.mods.items():
            for c in calls_to(tree, "fixture"):
                self.assertTrue(c.args and isinstance(c.args[0], ast.Constant),
                                f"{f}:{c.lineno}: a fixture named by a literal, not a variable")
                used.add(c.args[0].value)
                self.assertTrue(c.args[0].value in common.FIXTURE_RULES,
                                f"{f}:{c.lineno}: fixture {c.args[0].value!r} has no rule in common.FIXTURE_RULES")
        for rule in common.FIXTURE_RULES.values():
            used |= set(rule.deps)
        self.assertEqual(sorted(set(common.FIXTURE_RULES) - used), [], "rules no test uses")

    def test_helpers_come_from_common(self):
        found = []
        for f, (_, tree) in self.mods.items():
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                found += [f"{f}:{node.lineno}: imports {n}" for n in names if n.startswith("test_")]
        self.assertEqual(found, [], "shared helpers and data live in common.py")

    def test_no_function_defined_twice(self):
        with open(os.path.join(HERE, "common.py")) as f:
            tree = ast.parse(f.read())
        own = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        bodies, found = {}, []
        for name, line, body in functions(tree):
            bodies.setdefault(body, []).append(f"common.py:{line} {name}")
        for f, (_, mtree) in self.mods.items():
            found += [f"{f}:{n.lineno}: {n.name} is common's" for n in mtree.body
                      if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in own]
            for name, line, body in functions(mtree):
                bodies.setdefault(body, []).append(f"{f}:{line} {name}")
        found += [" = ".join(where) for body, where in bodies.items() if len(where) > 1]
        self.assertEqual(found, [], "one definition each, in common.py")


if __name__ == "__main__":
    unittest.main()
