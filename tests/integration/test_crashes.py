# SPDX-License-Identifier: BSD-2-Clause
"""Crashes: SIGSEGV, the OOM killer in a memory cgroup, a supervisor that
relaunches a crashing child, --comm."""
import os
import subprocess
import tempfile
import time
import unittest

import common


def memory_cgroup(limit_bytes):
    """A memory cgroup limited to limit_bytes: (procs file, cleanup). cgroup v2
    (memory.max) or v1 (memory.limit_in_bytes); None when neither works."""
    name = f"infertrace-test-{os.getpid()}"
    v2 = "/sys/fs/cgroup"
    if os.path.exists(os.path.join(v2, "cgroup.controllers")):
        d = os.path.join(v2, name)
        limit_file = "memory.max"
    elif os.path.isdir("/sys/fs/cgroup/memory"):
        d = os.path.join("/sys/fs/cgroup/memory", name)
        limit_file = "memory.limit_in_bytes"
    else:
        return None
    try:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, limit_file), "w") as f:
            f.write(str(limit_bytes))
        swap = os.path.join(d, "memory.swap.max" if limit_file == "memory.max" else "memory.memsw.limit_in_bytes")
        if os.path.exists(swap):
            try:
                with open(swap, "w") as f:
                    f.write("0" if limit_file == "memory.max" else str(limit_bytes))
            except OSError:
                pass
    except OSError:
        return None
    return os.path.join(d, "cgroup.procs"), lambda: os.rmdir(d)


@common.need_root
class CrashTest(unittest.TestCase):
    def test_sigsegv(self):
        r = common.record([], [common.fixture("sched_fix"), "segv", "100"], check=False)
        crashes = r.profile["crashes"]
        self.assertEqual(len(crashes), 1, crashes)
        self.assertEqual(crashes[0]["signal"], 11)
        self.assertEqual(crashes[0]["signal_name"], "SIGSEGV")
        self.assertEqual(crashes[0]["cause"], "signal")
        # what ran before is complete: 100 ms of CPU
        (c,) = r.profile["cycles"]
        self.assertAlmostEqual(c["oncpu_ms"], 100, delta=15)

    def test_oom_kill(self):
        """Killed by the OOM killer of its memory cgroup while traced, after 10
        probed cycles: outputs written, the kill named, the cycles kept."""
        cg = memory_cgroup(64 << 20)
        if not cg:
            self.skipTest("no usable memory cgroup: neither cgroup v2 memory.max nor v1 "
                          "/sys/fs/cgroup/memory/memory.limit_in_bytes could be set")
        procs, cleanup = cg
        try:
            # the shell joins the cgroup, then execs the fixture (same pid)
            r = common.record(["--cycle", f"{common.fixture('sched_fix')}:cycle_sleepspin"],
                              ["/bin/sh", "-c", f"echo $$ > {procs} && exec {common.fixture('sched_fix')} oom 10"],
                              check=False, timeout=60)
        finally:
            time.sleep(0.2)
            cleanup()
        self.assertEqual(r.proc.returncode, 0, r.stderr)
        self.assertIn("recording ended (target exited)", r.stderr)
        self.assertEqual(r.profile["stop_reason"], "target exited")
        crashes = r.profile["crashes"]
        self.assertTrue(any(c["cause"] == "oom_kill" and c["signal"] == 9 for c in crashes), crashes)
        # the target's own status: killed by SIGKILL, not exited
        (target,) = [p for p in r.profile["processes"] if p["root"]]
        self.assertEqual(target.get("killed_by_signal"), 9, target)
        self.assertNotIn("exit_code", target)
        self.assertGreater(r.profile["memory"]["peak_mb"], 40)
        # the cycles before the kill: as many as the fixture said it ran
        truth = common.truth_of(r)
        self.assertEqual(len(r.profile["cycles"]), truth["cycles_before_oom"])
        # each cycle's spin ran at least what the fixture's own clock saw it
        # run (spin_ms: its loop's steps but for the longest, one per context
        # switch), not the 20 ms of its CPU clock, which the kernel's count
        # can move between threads at a switch (test_sched)
        for c, seen in zip(r.profile["cycles"], truth["spin_seen_ms"]):
            self.assertGreaterEqual(seen, 0, "more context switches in the spin than spin_ms keeps")
            self.assertGreaterEqual(c["oncpu_ms"], seen - common.UNSEEN_RUN_MS, (c, seen))
        with open(os.path.join(r.dir, "stacks.folded")) as f:
            self.assertTrue(all(l.rstrip().rsplit(" ", 1)[1].isdigit() for l in f if l.strip()))

    def test_supervisor_relaunches(self):
        script = f"for i in 1 2 3; do {common.fixture('sched_fix')} segv 50; done; exit 0"
        r = common.record([], ["/bin/sh", "-c", script], check=False)
        segv = [c for c in r.profile["crashes"] if c["signal"] == 11]
        self.assertEqual(len(segv), 3, r.profile["crashes"])
        self.assertEqual(len({c["pid"] for c in segv}), 3)
        per = [p for p in r.profile["sched"]["per_process"] if p["comm"] == "sched_fix"]
        self.assertEqual(len(per), 3)
        for p in per:
            self.assertAlmostEqual(p["oncpu_ms"], 50, delta=10)

    def test_comm_follows_unrelated_process(self):
        out = tempfile.mkdtemp(prefix="it-out-")
        rec = subprocess.Popen([common.INFERTRACE, "record", "-o", out, "--comm", "sched_fix",
                                "--", "/bin/sleep", "3"], stderr=subprocess.PIPE, text=True)
        # the crashing process starts once everything is attached (the
        # tracer says so), however long attaching takes on a busy machine
        for line in rec.stderr:
            if "recording" in line:
                break
        subprocess.run([common.fixture("sched_fix"), "segv", "50"])
        rec.wait(timeout=30)
        r = common.Recording(out, rec)
        self.assertTrue(any(c["signal"] == 11 for c in r.profile["crashes"]), r.profile["crashes"])


if __name__ == "__main__":
    unittest.main()
