# SPDX-License-Identifier: BSD-2-Clause
"""profile.pb.gz read back by a real peer, `go tool pprof` (Debian's
golang-go), against the experiment fixture's structure: each cycle spins
INFER ms of CPU time in inference() and MODE ms in mode() (by the thread's
own CPU clock) and sleeps DB ms in database(), so inference() holds
INFER / (INFER + MODE) of the on-CPU samples by construction."""
import os
import re
import subprocess
import unittest

from common import GO, experiment_args, fixture, need_root, pprof, pprof_tags as tags, record

CYCLES, INFER, DB, MODE = 80, 30, 5, 10
def cum_percent(top, fn):
    """The cum% column of fn in `pprof -top` output."""
    for line in top.splitlines():
        f = line.split()
        if len(f) >= 6 and f[5] == fn:
            return float(f[4].rstrip("%"))
    raise AssertionError(f"{fn} not in pprof -top:\n{top}")


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], text=True, stdout=subprocess.PIPE).stdout
    m = re.search(r"Build ID:\s*([0-9a-f]+)", out)
    return m.group(1) if m else None


@need_root
@unittest.skipUnless(GO, "go tool pprof (Debian golang-go) is not installed: make deps")
class PprofTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # fp stacks need frame pointers; dwarf unwinds either
        cls.exes = {"dwarf": fixture("experiment"), "fp": fixture("experiment_fp")}
        # 999 Hz: about 3000 samples, so a share's sampling error is under 1 point
        cls.runs = {}
        for cg, exe in cls.exes.items():
            cls.runs[cg] = record(["-F", "999", "--call-graph", cg, "--cycle", "run_cycle",
                                   "--phase", "inference=inference", "--phase", "database=database",
                                   "--phase", "mode=mode"],
                                  [exe] + experiment_args(CYCLES, INFER, 4, DB, MODE))

    def path(self, cg):
        return os.path.join(self.runs[cg].dir, "profile.pb.gz")

    def test_top_share_matches_truth(self):
        truth = 100.0 * INFER / (INFER + MODE)
        for cg in self.runs:
            with self.subTest(call_graph=cg):
                top = pprof(self.path(cg), "-top", "-cum", "-nodecount=200", "-sample_index=samples")
                self.assertAlmostEqual(cum_percent(top, "inference"), truth, delta=5.0, msg=top)
                self.assertAlmostEqual(cum_percent(top, "mode"), 100 - truth, delta=5.0, msg=top)
                # the same samples as stacks.folded
                total = int(re.search(r"Total samples = (\d+)", top).group(1))
                self.assertEqual(total, sum(self.runs[cg].folded().values()))

    def test_tags_list_phases_and_labels(self):
        for cg in self.runs:
            with self.subTest(call_graph=cg):
                rec = self.runs[cg]
                t = tags(pprof(self.path(cg), "-tags", "-sample_index=samples"))
                self.assertIn("inference", t["phase"])
                self.assertIn("mode", t["phase"])
                self.assertAlmostEqual(t["phase"]["inference"], 100.0 * INFER / (INFER + MODE), delta=5.0)
                pid = str(rec.profile["pids"][0])
                self.assertEqual(set(t["pid"]), {pid})
                self.assertEqual(set(t["thread"]), {pid})  # one thread: the process itself
                self.assertEqual(set(t["comm"]), {os.path.basename(self.exes[cg])[:15]})
                # the thread's own name: one thread, named as its process (fp
                # reads it from thread_comms, dwarf from each record)
                self.assertEqual(set(t["thread_name"]), {os.path.basename(self.exes[cg])[:15]})
                cycles = {str(c["index"]) for c in rec.profile["cycles"]}
                self.assertTrue(set(t["cycle"]) <= cycles)
                self.assertGreaterEqual(len(t["cycle"]), CYCLES * 0.9)
                # database sleeps: it is there in the off-CPU sample type
                off = tags(pprof(self.path(cg), "-tags", "-sample_index=offcpu"))
                self.assertIn("database", off["phase"])
                self.assertGreater(off["phase"]["database"], 50.0)

    def test_raw_sample_types_and_build_ids(self):
        for cg, exe in self.exes.items():
            with self.subTest(call_graph=cg):
                raw = pprof(self.path(cg), "-raw")
                self.assertIn("samples/count cpu/nanoseconds[dflt] offcpu/nanoseconds", raw)
                maps = raw.split("\nMappings\n", 1)[1]
                want = build_id(exe)
                self.assertIsNotNone(want)
                line = [ln for ln in maps.splitlines() if os.path.realpath(exe) in ln]
                self.assertTrue(line and want in line[0], maps)
                self.assertIn("[kernel.kallsyms]", maps)
                # the traced executable is the profile's main binary
                self.assertIn(f"Build ID: {want}", pprof(self.path(cg), "-top"))


if __name__ == "__main__":
    unittest.main()
