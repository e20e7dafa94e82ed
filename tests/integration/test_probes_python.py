# SPDX-License-Identifier: BSD-2-Clause
"""A Python experiment (Debian's /usr/bin/python3.11): cycles from
--cycle-marker on a native call of a ctypes-loaded library, an inference
phase in that library, and --preset sqlite, whose library (libsqlite3.so.0)
the sqlite3 module's extension loads with dlopen: the preset's probes are
placed lazily when it is mapped. The fixture queries at module level with a
cached statement (no prepare in the cycles, no function to time: the
preset's database phase has nothing there, docs/probes.md), so the
time inside libsqlite3 is the user's own phase db_step, on sqlite3_step by
path."""
import os
import unittest

from common import FIXTURES, ProbeTestCase, fixture, need_root, record, truth_of

PYTHON = "/usr/bin/python3.11"
SQLITE = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"


def have_sqlite_module():
    import subprocess
    return os.path.exists(PYTHON) and os.path.exists(SQLITE) and \
        subprocess.run([PYTHON, "-c", "import sqlite3"]).returncode == 0


@need_root
@unittest.skipUnless(have_sqlite_module(), "needs /usr/bin/python3.11 with the sqlite3 module")
class TestPython(ProbeTestCase):
    def test_python_marker_ctypes_phase_and_sqlite_preset(self):
        lib = fixture("libexppy.so")
        cycles, infer, tokens, rows = 6, 20, 4, 60000
        step_spec = f"{SQLITE}:sqlite3_step"
        rec = record(["--cycle-marker", f"{lib}:py_mark", "--phase", f"llm_inference={lib}:py_infer",
                      "--count", f"tokens={lib}:py_token", "--preset", "sqlite",
                      "--phase", f"db_step={step_spec}", "--count", f"db_statements={step_spec}"],
                     [PYTHON, os.path.join(FIXTURES, "exp_py.py"), lib, str(cycles), str(infer),
                      str(tokens), str(rows)])
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "cycle_marker")
        probes = {x["spec"]: x for x in p["probes"]}
        # the preset's probe, placed lazily when the extension loaded libsqlite3
        prep = probes["libsqlite3:sqlite3_prepare_v2"]
        self.assertTrue(prep["from_preset"])
        self.assertTrue(any("libsqlite3.so" in f for f in prep["placed_in"]), prep)
        # the preset's per-statement fallback (module-level code queried) is
        # not placed on a function the user's own phase probes already
        self.assertTrue(probes["libsqlite3:sqlite3_step"]["fallback"])
        self.assertEqual(probes["libsqlite3:sqlite3_step"]["placed_in"], [])
        self.assertIn("probe 'libsqlite3:sqlite3_step' is not placed: the function is already probed", rec.stderr)
        self.assertNotIn("timed as its Python callers", rec.stderr)
        for c in p["cycles"]:
            self.assertEqual(c["counts"]["tokens"], tokens)
            # one SELECT returning one row: sqlite3_step twice (the row, then
            # done); the statement was prepared before the first cycle and
            # comes from the sqlite3 module's statement cache
            self.assertEqual(c["counts"]["db_statements"], 2)
            self.assertEqual(c["phases"]["db_step"]["calls"], 2)
            self.assertNotIn("database", c["phases"])
        self.assertPhase(rec, "llm_inference", truth, "inference_ms")
        # the database phase is time inside libsqlite3; the fixture's window
        # adds the Python around the query (tens of microseconds)
        self.assertPhase(rec, "db_step", truth, "database_ms", calls_per_cycle=None)
        self.assertCycleTimes(rec, truth)
        self.assertConsistent(rec)


if __name__ == "__main__":
    unittest.main()
