# SPDX-License-Identifier: BSD-2-Clause
"""Tear-down: once the outputs are written, record hands the detaching of
its programs (about 20 ms per tracepoint link here, one after another) to a
grandchild and exits; the programs are frozen meanwhile, and every one of
them is gone shortly after. The grandchild holds none of record's output
pipes, so a reader of them is not kept waiting."""
import collections
import json
import os
import subprocess
import tempfile
import time
import unittest

import common


def program_ids(name):
    """The ids of the loaded BPF programs named name."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], text=True, capture_output=True, check=True).stdout
    return {p["id"] for p in json.loads(out or "[]") if p.get("name") == name}


def held_ids(pid, key):
    """The ids of the BPF objects process pid holds open, by its fds'
    fdinfo line KEY ("link_id", "prog_id"). A recording is told from
    another on the machine by what its process holds."""
    ids = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


def probe_links(pid=None):
    """The BPF links of the probe programs (it_uprobe, it_uretprobe) as
    {link id: link type, by bpftool's name or number (12: uprobe_multi)};
    with pid, only those that process holds (other recordings on the
    machine have their own)."""
    progs = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], text=True, capture_output=True,
                                      check=True).stdout or "[]")
    ids = {p["id"] for p in progs if p.get("name") in ("it_uprobe", "it_uretprobe")}
    links = json.loads(subprocess.run(["bpftool", "link", "show", "-j"], text=True, capture_output=True,
                                      check=True).stdout or "[]")
    held = held_ids(pid, "link_id") if pid is not None else None
    return {l["id"]: str(l.get("type")) for l in links
            if l.get("prog_id") in ids and (held is None or l["id"] in held)}


def kernel_at_least(major, minor):
    release = os.uname().release.split(".")
    return (int(release[0]), int(release[1].split("-")[0])) >= (major, minor)


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
        """Its programs (sched_on_switch, by the ids its process held) are
        unloaded soon after record returns; a detaching grandchild holding
        them holds no pipe of ours, and ends."""
        out = tempfile.mkdtemp(prefix="it-teardown-")
        p = subprocess.Popen([common.INFERTRACE, "record", "-q", "-o", out, "--", "sleep", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ours = set()
        while p.poll() is None:
            ours |= held_ids(p.pid, "prog_id") & program_ids("sched_on_switch")
            time.sleep(0.05)
        stdout, stderr = p.communicate(timeout=120)  # EOF on both pipes, then the exit
        self.assertEqual(p.returncode, 0, stderr)
        self.assertTrue(ours, "sched_on_switch was never seen held by the recording")
        with open(os.path.join(out, "profile.json")) as f:
            self.assertEqual(json.load(f)["stop_reason"], "target exited")

        def our_detachers():
            return [d for d in detachers() if held_ids(d, "prog_id") & ours]
        # a detacher still alive holds no pipe of ours: its output is /dev/null
        for pid in our_detachers():
            for fd in (0, 1, 2):
                try:
                    self.assertEqual(os.readlink(f"/proc/{pid}/fd/{fd}"), "/dev/null", (pid, fd))
                except FileNotFoundError:
                    pass  # it ended meanwhile
        deadline = time.monotonic() + 30
        while ours & program_ids("sched_on_switch") and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(ours & program_ids("sched_on_switch"), set())
        deadline = time.monotonic() + 30
        while our_detachers() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(our_detachers(), [])

    def test_probe_links_gone_when_record_returns(self):
        """Probes in files are detached before record returns (a frozen
        uretprobe would still rewrite the next run's return addresses), as
        uprobe-multi links where the kernel has them (6.6+): perf-event
        uprobes detach one after another under a global mutex."""
        exe = common.fixture("experiment")
        out = tempfile.mkdtemp(prefix="it-teardown-")
        p = subprocess.Popen([common.INFERTRACE, "record", "-q", "-o", out, "--cycle", "run_cycle", "--",
                              exe, "30", "5", "3", "90", "5"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # the links it holds while the cycles run: the view seen most often
        # (start-up's probe-cost calibration places probes of its own, and
        # the end closes them one by one)
        views = collections.Counter()
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            now = probe_links(p.pid)
            if now:
                views[tuple(sorted(now.items()))] += 1
            time.sleep(0.2)
        seen = dict(views.most_common(1)[0][0]) if views else {}
        _, stderr = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, stderr)
        self.assertEqual(len(seen), 2, f"entry and return links of --cycle run_cycle: {seen}")
        if kernel_at_least(6, 6):
            self.assertTrue(all(t in ("uprobe_multi", "12") for t in seen.values()), seen)
        else:
            self.assertTrue(all(t == "perf_event" for t in seen.values()), seen)
        # its own links, by id: other recordings on the machine keep theirs
        self.assertEqual(set(seen) & set(probe_links()), set(), "probe links outlived record")
        prof = common.load_json(os.path.join(out, "profile.json"))
        self.assertEqual(len(prof["cycles"]), 30)


if __name__ == "__main__":
    unittest.main()
