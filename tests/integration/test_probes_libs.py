# SPDX-License-Identifier: BSD-2-Clause
"""Phases in a shared library (OBJECT a library name), in a library opened
with dlopen (OBJECT a path, or a name the probe waits for) and between USDT probes (a BEGIN:END pair, a
cycle marker and a count), on tests/fixtures/exp_shared.c."""
import os
import unittest

from common import ProbeTestCase, fixture, need_root, record, truth_of

SDT = any(os.path.exists(p) for p in ("/usr/include/sys/sdt.h", "/usr/include/x86_64-linux-gnu/sys/sdt.h",
                                      "/usr/include/aarch64-linux-gnu/sys/sdt.h"))


def fixtures():
    """exp_shared (linked with libexpfix.so), libexpfix.so and libexpdl.so."""
    return fixture("exp_shared"), fixture("libexpfix.so"), fixture("libexpdl.so")


@need_root
@unittest.skipUnless(SDT, "needs <sys/sdt.h> (systemtap-sdt-dev)")
class TestLibraries(ProbeTestCase):
    def test_library_dlopen_and_usdt_pair_with_cycle_function(self):
        exe, lib, dl = fixtures()
        cycles, infer, tokens, dl_ms, db_ms = 6, 18, 5, 7, 11
        rec = record(["--cycle", "shared_cycle",
                      "--phase", "llm_inference=libexpfix:lib_infer",
                      "--phase", f"dl={dl}:dl_work",
                      "--phase", f"database=usdt:{exe}:expfix:db_begin:db_end",
                      "--count", "tokens=libexpfix:lib_token"],
                     [exe, str(cycles), str(infer), str(tokens), str(dl_ms), str(db_ms), dl])
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        probes = {x["spec"]: x for x in p["probes"]}
        self.assertEqual(probes["libexpfix:lib_infer"]["placed_in"], [os.path.realpath(lib)])
        self.assertEqual(probes[f"{dl}:dl_work"]["placed_in"], [os.path.realpath(dl)])
        for c in p["cycles"]:
            self.assertEqual(c["counts"]["tokens"], tokens)
        self.assertCycleTimes(rec, truth)
        self.assertPhase(rec, "llm_inference", truth, "inference_ms", upper_key="inference_call_ms")
        self.assertPhase(rec, "database", truth, "database_ms")
        # the library is opened after the first cycle: no dl phase in cycle 0
        self.assertNotIn("dl", p["cycles"][0]["phases"])
        self.assertPhase(rec, "dl", truth, "dl_ms", cycles=list(range(1, cycles)), upper_key="dl_call_ms")
        self.assertEqual(p["phases"]["dl"]["calls"], cycles - 1)
        self.assertConsistent(rec)

    def test_usdt_cycle_marker_and_count_library_by_name(self):
        exe, lib, dl = fixtures()
        cycles, infer, tokens, dl_ms, db_ms = 8, 9, 3, 2, 6
        rec = record(["--cycle-marker", "usdt:exp_shared:expfix:cycle_start",
                      "--phase", "llm_inference=libexpfix:lib_infer",
                      "--count", "tokens=usdt:libexpfix:expfix:token"],
                     [exe, str(cycles), str(infer), str(tokens), str(dl_ms), str(db_ms), dl])
        truth = truth_of(rec)
        p = rec.profile
        self.assertValid(rec)
        self.assertNoProbeLoss(rec)
        # the closing marker opens an empty cycle, which is not an experiment cycle
        self.assertEqual(p["aggregate_metrics"]["total_cycles"], cycles)
        self.assertEqual(p["aggregate_metrics"]["cycles_source"], "cycle_marker")
        self.assertEqual(p["aggregate_metrics"].get("empty_marker_cycles_dropped"), 1)
        for c in p["cycles"]:
            self.assertEqual(c["counts"]["tokens"], tokens)
        self.assertPhase(rec, "llm_inference", truth, "inference_ms", upper_key="inference_call_ms")
        # marker to marker: the fixture's shared_cycle plus the loop around it
        # (and the dlopen before cycle 1), timed by the fixture before each marker
        self.assertCycleTimes(rec, dict(truth, cycle_ms=truth["marker_ms"], call_ms=truth["marker_ms"],
                                        preempted=truth["marker_preempted"]))
        self.assertConsistent(rec)

    def test_dlopened_library_by_name_waits_until_loaded(self):
        """A library named, not given by path, that the target opens with
        dlopen after its first cycle: the probe waits and is placed then;
        every later call is timed. A name no library has is never placed:
        said at the start and the end, the run goes on."""
        exe, lib, dl = fixtures()
        cycles = 4
        rec = record(["--cycle", "shared_cycle", "--phase", "dl=libexpdl:dl_work",
                      "--count", "ghost=libnosuchlib:fn"],
                     [exe, str(cycles), "2", "1", "3", "1", dl])
        self.assertRegex(rec.stderr, r"probe 'libexpdl:dl_work' waits for a library named 'libexpdl'")
        self.assertIn(f"probe 'libexpdl:dl_work' placed in {os.path.realpath(dl)}", rec.stderr)
        self.assertRegex(rec.stderr, r"warning: probe 'libnosuchlib:fn' was never placed: "
                                     r"library 'libnosuchlib' is not loaded by the target")
        probes = {x["spec"]: x for x in rec.profile["probes"]}
        self.assertEqual(probes["libexpdl:dl_work"]["placed_in"], [os.path.realpath(dl)])
        self.assertFalse(probes["libexpdl:dl_work"]["from_preset"])
        self.assertEqual(probes["libnosuchlib:fn"]["placed_in"], [])
        self.assertIn("not loaded", probes["libnosuchlib:fn"]["not_placed"])
        # the target is held at the mapping until the probe is in: no call missed
        self.assertEqual(rec.profile["phases"]["dl"]["calls"], cycles - 1)
        self.assertNotIn("dl", rec.profile["cycles"][0]["phases"])
        for c in rec.profile["cycles"][1:]:
            self.assertEqual(c["phases"]["dl"]["calls"], 1, c)

    def test_strict_fails_on_a_probe_never_placed(self):
        """--strict: a library name that never loads fails the run (exit 7),
        after the outputs are written; without it, a warning."""
        rec = record(["--strict", "--count", "ghost=libnosuchlib:fn"], ["true"], check=False, wall_split=None)
        self.assertEqual(rec.proc.returncode, 7, rec.stderr)
        self.assertIn("error: probe 'libnosuchlib:fn' was never placed: library 'libnosuchlib' is not loaded",
                      rec.stderr)
        self.assertIsNotNone(rec.profile)

    def test_second_file_of_a_waited_name_is_held_until_probed(self):
        """llama.cpp's way: one file of the library's name is opened, asked
        its score and closed, then another is opened and called at once. The
        probe placed in the first file does not cover the second: the
        process is held at the second mapping too, so every call counts."""
        first, second = fixture("libexpvar-first.so"), fixture("libexpvar-second.so")
        exe = fixture("dl_variants")
        calls = 50
        rec = record(["--count", "work=libexpvar:variant_work"], [exe, str(calls), first, second])
        probe = rec.profile["probes"][0]
        self.assertEqual(sorted(probe["placed_in"]), sorted([os.path.realpath(first), os.path.realpath(second)]))
        self.assertEqual(probe["hits"], calls)

    def test_symbol_missing_in_a_loaded_library_is_a_clear_error(self):
        exe, lib, dl = fixtures()
        rec = record(["--phase", "x=libexpfix:no_such_function"], [exe, "1", "1", "1", "1", "1", dl],
                     check=False)
        self.assertNotEqual(rec.proc.returncode, 0)
        self.assertIn("no_such_function", rec.stderr)
        self.assertIn("nm -D", rec.stderr)
        self.assertRegex(rec.stderr, r"symbol 'no_such_function' not found in /\S*/libexpfix\.so")
        self.assertIsNone(rec.profile)

    def test_symbol_missing_in_a_library_loaded_later_is_an_error(self):
        """A misspelt symbol in a library the target opens with dlopen, while
        another probe is placed in that very library: once the library loads,
        the missing symbol is named with its file and the nearest names the
        file has; the run goes on, writes its outputs, and exits with the
        target status (4), as the same typo in a library loaded at start."""
        exe, lib, dl = fixtures()
        real = os.path.realpath(dl)
        rec = record(["--cycle", "shared_cycle", "--phase", "dl=libexpdl:dl_work",
                      "--phase", "typo=libexpdl:dl_wrok"],
                     [exe, "3", "2", "1", "3", "1", dl], check=False)
        self.assertEqual(rec.proc.returncode, 4, rec.stderr)
        self.assertIn(f"probe 'libexpdl:dl_work' placed in {real}", rec.stderr)
        line = f"symbol 'dl_wrok' not found in {real}; nearest: dl_work"
        self.assertIn(f"error: probe 'libexpdl:dl_wrok': {line}", rec.stderr)
        self.assertIn(f"error: probe 'libexpdl:dl_wrok' was never placed: {line}", rec.stderr)
        self.assertNotIn("is not loaded by the target", rec.stderr)
        probes = {x["spec"]: x for x in rec.profile["probes"]}
        self.assertEqual(probes["libexpdl:dl_work"]["placed_in"], [real])
        self.assertIn(line, probes["libexpdl:dl_wrok"]["not_placed"])

    def test_unknown_usdt_probe(self):
        exe, lib, dl = fixtures()
        rec = record(["--count", f"t=usdt:{exe}:expfix:nosuchprobe"], [exe, "1", "1", "1", "1", "1", dl],
                     check=False)
        self.assertNotEqual(rec.proc.returncode, 0)
        self.assertIn("nosuchprobe", rec.stderr)
        self.assertIsNone(rec.profile)


if __name__ == "__main__":
    unittest.main()
