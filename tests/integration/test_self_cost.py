# SPDX-License-Identifier: BSD-2-Clause
"""profile.json's `self`: the tracer's own cost, checked against what is
known by construction: the kernel's count of BPF program runs against the
probed calls a fixture made and the samples kept, and the tracer process's
CPU and peak RSS against the rusage its parent reads from wait4."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import common


@common.need_root
class SelfCostTest(unittest.TestCase):
    def test_bpf_runs_count_every_probe_hit(self):
        exe = common.fixture("nest12")
        calls = 25
        r = common.record(["--phase", "outer=f1"], [exe, str(calls)])
        self.assertEqual(r.profile["phases"]["outer"]["calls"], calls)
        bpf = r.profile["self"]["bpf"]
        self.assertTrue(bpf["available"], bpf)
        runs = {p["name"]: p["runs"] for p in bpf["programs"]}
        # one entry and one return per call of f1; the start-up calibration's
        # hits on the same programs came before the statistics were enabled
        self.assertEqual(runs.get("it_uprobe"), calls, runs)
        self.assertEqual(runs.get("it_uretprobe"), calls, runs)
        self.assertEqual(bpf["runs"], sum(runs.values()))
        self.assertAlmostEqual(bpf["cpu_s"], sum(p["run_time_ms"] for p in bpf["programs"]) / 1e3, places=6)
        # the report shows it
        rep = subprocess.run([common.INFERTRACE, "report", r.dir], text=True, capture_output=True)
        self.assertIn("Tracer cost:", rep.stdout)
        self.assertIn("BPF programs:", rep.stdout)

    def test_tracer_cpu_and_rss_against_wait4(self):
        exe = common.fixture("threads")
        target = subprocess.Popen([exe, "1"], stdout=subprocess.PIPE, text=True)
        out = tempfile.mkdtemp(prefix="it-self-")
        try:
            self.assertEqual(target.stdout.readline().strip(), "ready")
            # the target is not the tracer's child: wait4's rusage of the
            # tracer holds the tracer alone
            tracer = subprocess.Popen([common.INFERTRACE, "record", "-o", out, "-F", "99", "-p",
                                       str(target.pid), "-d", "2"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            _, status, ru = os.wait4(tracer.pid, 0)
            tracer.returncode = os.waitstatus_to_exitcode(status)
            err = tracer.stderr.read()
            tracer.stderr.close()
            self.assertEqual(tracer.returncode, 0, err)
        finally:
            target.kill()
            target.wait()
            target.stdout.close()
        with open(os.path.join(out, "profile.json")) as f:
            p = json.load(f)
        s = p["self"]
        ru_cpu = ru.ru_utime + ru.ru_stime
        # measured before the outputs were written and the programs detached:
        # at most the whole process's CPU, and most of it
        self.assertLessEqual(s["cpu_s"], ru_cpu + 0.01)
        self.assertGreater(s["cpu_s"], 0.3 * ru_cpu)
        self.assertAlmostEqual(s["cpu_s"], s["startup_cpu_s"] + s["recording_cpu_s"], delta=0.02)
        # the end's collection is part of the recording's CPU, measured the
        # same way (rusage), and some: the samples' stacks were folded
        self.assertGreater(s["collect_cpu_s"], 0)
        self.assertLessEqual(s["collect_cpu_s"], s["recording_cpu_s"] + 1e-6)
        self.assertLessEqual(s["max_rss_mb"], ru.ru_maxrss / 1024 + 0.1)
        self.assertGreater(s["max_rss_mb"], 0.5 * ru.ru_maxrss / 1024)
        # the run loop sleeps at most 100 ms between ring-buffer polls: over a
        # 2 s recording it was woken at least 10 times
        self.assertGreaterEqual(s["wakeups"], 10)
        # every sample kept ran the sampling program once at least (it also
        # runs for other tasks' ticks, and returns early for them)
        runs = {q["name"]: q["runs"] for q in s["bpf"]["programs"]}
        self.assertGreaterEqual(runs.get("on_cpu_sample", 0), p["samples"]["total"])
        self.assertGreater(p["samples"]["total"], 0)


    def test_parts_and_symbol_cache_across_runs(self):
        """self.parts: the parts within the tracer's CPU. The symbol cache: a second run reads back
        the tables the first wrote; a directory others may write to is
        refused, with a warning, and the run goes on."""
        exe = common.fixture("nest12")
        cache = tempfile.mkdtemp(prefix="it-symcache-")  # root's, 0700
        self.addCleanup(shutil.rmtree, cache, True)
        env = dict(os.environ, INFERTRACE_CACHE_DIR=cache)
        runs = [common.record(["-F", "499"], [exe, "3000"], env=env) for _ in range(2)]
        for r in runs:
            s = r.profile["self"]
            parts = s["parts"]
            spent = sum(parts[k] for k in ("maps_s", "files_s", "symbol_tables_s", "unwind_modules_s",
                                           "unwind_s", "other_s"))
            self.assertLessEqual(spent, s["cpu_s"] * 1.01 + 0.01, parts)
            self.assertGreaterEqual(parts["maps_reads"], 1, parts)
            self.assertEqual(s["symbol_cache"]["dir"], cache)
            self.assertIsNone(s["symbol_cache"]["refused"])
        first, second = (r.profile["self"]["symbol_cache"] for r in runs)
        self.assertGreaterEqual(first["tables_written"], 1, first)
        self.assertGreaterEqual(second["tables_read"], 1, second)
        # the same names either way
        names = []
        for r in runs:
            with open(os.path.join(r.dir, "stacks.folded")) as f:
                names.append({fr for line in f for fr in line.rsplit(" ", 1)[0].split(";")})
        self.assertIn("main", names[0])
        self.assertIn("main", names[1])
        os.chmod(cache, 0o777)
        r = common.record(["-F", "499"], [exe, "3000"], env=env)
        sc = r.profile["self"]["symbol_cache"]
        self.assertIsNone(sc["dir"], sc)
        self.assertIn("others may write", sc["refused"])
        self.assertIn("symbol cache", r.stderr)
        with open(os.path.join(r.dir, "stacks.folded")) as f:
            self.assertIn(";main;", f.read())


if __name__ == "__main__":
    unittest.main()
