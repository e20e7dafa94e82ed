# SPDX-License-Identifier: BSD-2-Clause
"""The sqlite preset on a Python loop that inserts 20,000 rows a cycle, one
cursor.execute per row, then commits (py_sqlite.py), on every CPython found:
the database phase is db_write, found from the preset's few probe hits and
timed whole, within 10% of the script's own perf_counter; no per-row
function is probed, and every preset probe's measured cost is under 2% of
the phase. The same work at module level (py_sqlite_module.py), where no
function holds it: timed from the native calls, each statement's
sqlite3_step placed when module-level code is first seen calling SQLite,
within 20% of the script's clock."""
import json
import os
import subprocess
import tempfile
import unittest

from common import FIXTURES, INFERTRACE, PYTHONS, fixture, need_root, record

FIXTURE = os.path.join(FIXTURES, "py_sqlite.py")
MODULE_FIXTURE = os.path.join(FIXTURES, "py_sqlite_module.py")


@need_root
@unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
class TestSqlitePreset(unittest.TestCase):
    CYCLES = 5
    ROWS = 20000

    def test_database_phase_whole_and_cheap(self):
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                tmp = tempfile.mkdtemp(prefix="it-pysql-")
                truth_path = os.path.join(tmp, "truth.json")
                rec = record(["--preset", "sqlite", "--cycle", "py:run_cycle"],
                             [python, FIXTURE, str(self.CYCLES), truth_path, os.path.join(tmp, "db.sqlite"),
                              str(self.ROWS)])
                with open(truth_path) as f:
                    truth = json.load(f)
                prof = rec.profile
                self.assertIn("timed as its Python callers: db_write (py_sqlite.py)", rec.stderr)
                callers = [p for p in prof["probes"] if p["spec"] == "py:@callers"][0]
                self.assertEqual(callers["callers"], ["db_write (py_sqlite.py)"])
                self.assertEqual(callers["timed_by"], "python_callers")
                # the per-statement fallback was not needed, so never placed
                step = [p for p in prof["probes"] if p["spec"] == "libsqlite3:sqlite3_step"]
                self.assertEqual(len(step), 1)
                self.assertTrue(step[0]["fallback"])
                self.assertEqual(step[0]["placed_in"], [])
                self.assertEqual(step[0]["hits"], 0)
                # no probe on a per-row function: hits a few per transaction
                native = [p for p in prof["probes"] if p.get("phase") == "database" and p["placed_in"]]
                self.assertTrue(native)
                for p in native:
                    self.assertNotIn("sqlite3_step", p["spec"])
                    self.assertLess(p["hits"], self.ROWS / 100, p)
                cycles = prof["cycles"]
                self.assertEqual(len(cycles), self.CYCLES, label)
                traced = sum(c["phases"]["database"]["ms"] for c in cycles) / len(cycles)
                own = sum(t["database"] for t in truth) / len(truth)
                self.assertLessEqual(abs(traced - own), 0.10 * own,
                                     f"{label}: traced {traced:.2f} ms, script {own:.2f} ms")
                for c in cycles:
                    self.assertEqual(c["phases"]["database"]["calls"], 1, f"{label} cycle {c['index']}")
                cost = prof["probes_overhead"]
                self.assertIsNotNone(cost["cost_ns_per_hit"])
                preset = cost["preset_probes"]
                self.assertEqual(len(preset), len(native))
                for p in preset:
                    self.assertLess(p["percent_of_phase"], 2.0, p)
                    self.assertFalse(p["over_limit"])
                    # the share is the measured cost per hit times the hits
                    self.assertAlmostEqual(p["estimated_ms"], p["hits"] * cost["cost_ns_per_hit"] / 1e6, places=6)


    def test_module_level_loop_timed_natively(self):
        """No function to time: the caller is <module>. The phase's
        statements are timed natively (sqlite3_step placed at the first
        module-level call, the CREATE TABLE before the loop), and record,
        the profile and the report say so."""
        cycles, rows = 8, 20
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                tmp = tempfile.mkdtemp(prefix="it-pysqlm-")
                truth_path = os.path.join(tmp, "truth.json")
                rec = record(["--preset", "sqlite", "--cycle-marker", "py:work"],
                             [python, MODULE_FIXTURE, str(cycles), truth_path, os.path.join(tmp, "db.sqlite"),
                              str(rows)])
                with open(truth_path) as f:
                    truth = json.load(f)
                prof = rec.profile
                self.assertIn("phase 'database' timed from its native calls: its Python caller is module-level "
                              "code, <module> (py_sqlite_module.py)", rec.stderr)
                callers = [p for p in prof["probes"] if p["spec"] == "py:@callers"][0]
                self.assertEqual(callers["callers"], [])
                self.assertEqual(callers["timed_by"], "native_calls")
                self.assertIn("module-level code", callers["native_because"])
                step = [p for p in prof["probes"] if p["spec"] == "libsqlite3:sqlite3_step"][0]
                self.assertTrue(step["fallback"])
                self.assertTrue(step["placed_in"])
                # every row's statement and each commit ran through it
                self.assertGreaterEqual(step["hits"], cycles * (rows + 1))
                cyc = prof["cycles"]
                self.assertEqual(len(cyc), cycles, label)
                traced = sum(c["phases"]["database"]["ms"] for c in cyc) / len(cyc)
                own = sum(t["database"] for t in truth) / len(truth)
                self.assertLessEqual(abs(traced - own), 0.20 * own,
                                     f"{label}: traced {traced:.2f} ms, script {own:.2f} ms")
                rep = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE,
                                     check=True)
                self.assertIn("database: timed from its native calls (its Python caller is module-level code",
                              rep.stdout)

    def test_per_row_preset_probe_is_flagged(self):
        """A C program that prepares every row: the preset's prepare probe
        fires once per row (exactly ROWS, plus sqlite3_exec's own prepares)
        and is flagged over 2% of its phase, in record's last lines too."""
        rows = 3000
        exe = fixture("sqlite_rows")
        tmp = tempfile.mkdtemp(prefix="it-csql-")
        rec = record(["--preset", "sqlite"], [exe, os.path.join(tmp, "db.sqlite"), str(rows)])
        preset = {p["spec"]: p for p in rec.profile["probes_overhead"]["preset_probes"]}
        prep = preset["libsqlite3:sqlite3_prepare_v2"]
        self.assertGreaterEqual(prep["hits"], rows)
        self.assertLessEqual(prep["hits"], rows + 10)
        self.assertTrue(prep["over_limit"], prep)
        self.assertFalse(preset["libsqlite3:sqlite3_exec"]["over_limit"])
        self.assertIn("warning: preset probe libsqlite3:sqlite3_prepare_v2 costs", rec.stderr)
        self.assertNotIn("timed as its Python callers", rec.stderr)


if __name__ == "__main__":
    unittest.main()
