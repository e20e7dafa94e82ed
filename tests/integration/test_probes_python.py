# SPDX-License-Identifier: BSD-2-Clause
"""A Python experiment (Debian's /usr/bin/python3.11): cycles from
--cycle-marker on a native call of a ctypes-loaded library, an inference
phase in that library, and a database phase from --preset sqlite, whose
library (libsqlite3.so.0) the sqlite3 module's extension loads with dlopen:
the preset's probes are placed lazily when it is mapped."""
import os
import unittest

from common import FIXTURES, build, need_root, record
from test_cycles import ProbeTestCase, truth_of

PYTHON = "/usr/bin/python3.11"


def have_sqlite_module():
    import subprocess
    return os.path.exists(PYTHON) and subprocess.run([PYTHON, "-c", "import sqlite3"]).returncode == 0


@need_root
@unittest.skipUnless(have_sqlite_module(), "needs /usr/bin/python3.11 with the sqlite3 module")
class TestPython(ProbeTestCase):
    def test_python_marker_ctypes_phase_and_sqlite_preset(self):
        lib = build("libexppy.so", ["exp_pylib.c"], f"-I{FIXTURES} -O2 -g -shared -fPIC")
        cycles, infer, tokens, rows = 6, 20, 4, 60000
        rec = record(["--cycle-marker", f"{lib}:py_mark", "--phase", f"llm_inference={lib}:py_infer",
                      "--count", f"tokens={lib}:py_token", "--preset", "sqlite"],
                     [PYTHON, os.path.join(FIXTURES, "exp_py.py"), lib, str(cycles), str(infer),
                      str(tokens), str(rows)])
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "cycle_marker")
        probes = {x["spec"]: x for x in p["probes"]}
        step = probes["libsqlite3:sqlite3_step"]
        self.assertTrue(step["from_preset"])
        self.assertTrue(any("libsqlite3.so" in f for f in step["placed_in"]), step)
        for c in p["cycles"]:
            self.assertEqual(c["counts"]["tokens"], tokens)
            # one SELECT returning one row: sqlite3_step twice (the row, then
            # done); the statement was prepared before the first cycle and
            # comes from the sqlite3 module's statement cache
            self.assertEqual(c["counts"]["db_statements"], 2)
            self.assertEqual(c["phases"]["database"]["calls"], 2)
        self.assertPhase(rec, "llm_inference", truth, "inference_ms")
        # the database phase is time inside libsqlite3; the fixture's window
        # adds the Python around the query (tens of microseconds)
        self.assertPhase(rec, "database", truth, "database_ms", calls_per_cycle=None)
        self.assertCycleTimes(rec, truth)
        self.assertConsistent(rec)


if __name__ == "__main__":
    unittest.main()
