# SPDX-License-Identifier: BSD-2-Clause
"""Tear-down: once the outputs are written, record hands the detaching of
its programs (about 20 ms per tracepoint link here, one after another) to a
grandchild and exits; the programs are frozen meanwhile, and every one of
them is gone shortly after. The grandchild holds none of record's output
pipes, so a reader of them is not kept waiting."""
import json
import os
import subprocess
import tempfile
import time
import unittest

import common


def loaded_programs(name):
    out = subprocess.run(["bpftool", "prog", "show", "-j"], text=True, capture_output=True, check=True).stdout
    return sum(1 for p in json.loads(out or "[]") if p.get("name") == name)


def detachers():
    """record's detaching grandchildren: processes named infertrace that lead
    their own session (a tracer, or its watchdog, does not)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        session = int(stat[stat.rindex(")") + 2:].split()[3])
        if comm == "infertrace" and session == int(pid):
            found.append(int(pid))
    return found


@common.need_root
class TeardownTest(unittest.TestCase):
    def test_programs_detached_after_exit_and_no_pipe_held(self):
        before = loaded_programs("sched_on_switch")
        out = tempfile.mkdtemp(prefix="it-teardown-")
        p = subprocess.Popen([common.INFERTRACE, "record", "-q", "-o", out, "--", "sleep", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = p.communicate(timeout=120)  # EOF on both pipes, then the exit
        self.assertEqual(p.returncode, 0, stderr)
        with open(os.path.join(out, "profile.json")) as f:
            self.assertEqual(json.load(f)["stop_reason"], "target exited")
        # a detacher still alive holds no pipe of ours: its output is /dev/null
        for pid in detachers():
            for fd in (0, 1, 2):
                try:
                    self.assertEqual(os.readlink(f"/proc/{pid}/fd/{fd}"), "/dev/null", (pid, fd))
                except FileNotFoundError:
                    pass  # it ended meanwhile
        deadline = time.monotonic() + 30
        while loaded_programs("sched_on_switch") > before and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(loaded_programs("sched_on_switch"), before)
        deadline = time.monotonic() + 30
        while detachers() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(detachers(), [])


if __name__ == "__main__":
    unittest.main()
