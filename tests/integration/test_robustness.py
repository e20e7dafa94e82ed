# SPDX-License-Identifier: BSD-2-Clause
"""Robustness and safety as root: planted symlinks and unsafe output
directories, a tracer killed while it holds the target, signals, hostile
files, fork storms, probe-stack overflow and odd process names."""
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import unittest

import common

OUTPUT_NAMES = ["profile.json", "trace.json", "flamegraph.svg", "report.html",
                "stacks.folded", "offcpu.folded", "write-check"]


@common.need_root
class OutputFilesTest(unittest.TestCase):
    def test_planted_symlinks_do_not_redirect_writes(self):
        d = common.sticky_world_dir()
        victim_dir = tempfile.mkdtemp(prefix="it-victim-")
        victim = os.path.join(victim_dir, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        # at every output name, and at the temp names the old scheme would
        # have used (.NAME.tmp.PID) for the next few hundred PIDs
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        planted = []
        for name in OUTPUT_NAMES:
            planted.append(name)
            for pid in range(last + 1, last + 300):
                planted.append(f".{name}.tmp.{pid}")
        for name in planted:
            os.symlink(victim, os.path.join(d, name))
        r = common.record([], ["sleep", "0.3"], outdir=d)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.stat(victim).st_size, 9)
        for name in ["profile.json", "flamegraph.svg", "stacks.folded"]:
            st = os.lstat(os.path.join(d, name))
            self.assertTrue(stat.S_ISREG(st.st_mode), name)
        self.assertIsNotNone(r.profile)

    def test_unsafe_directories_refused(self):
        world = tempfile.mkdtemp(prefix="it-world-")
        os.chmod(world, 0o777)
        r = common.record([], ["true"], outdir=world, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("infertrace record: refusing output directory", r.stderr)
        self.assertIn("sticky", r.stderr)
        self.assertEqual(os.listdir(world), [])
        other = tempfile.mkdtemp(prefix="it-other-")
        os.chown(other, 54321, 54321)
        r = common.record([], ["true"], outdir=other, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("owned by uid 54321", r.stderr)
        # the invoking sudo user's own directory is fine
        env = dict(os.environ, SUDO_UID="54321", SUDO_GID="54322")
        r = common.record([], ["sleep", "0.2"], outdir=other, env=env)
        self.assertEqual(os.stat(os.path.join(other, "profile.json")).st_uid, 54321)

    def test_outputs_handed_to_sudo_user(self):
        parent = tempfile.mkdtemp(prefix="it-sudo-")
        d = os.path.join(parent, "new", "out")
        env = dict(os.environ, SUDO_UID="54321", SUDO_GID="54322")
        common.record([], ["sleep", "0.2"], outdir=d, env=env)
        for name in ["profile.json", "stacks.folded"]:
            st = os.stat(os.path.join(d, name))
            self.assertEqual((st.st_uid, st.st_gid), (54321, 54322), name)
        st = os.stat(d)
        self.assertEqual((st.st_uid, st.st_gid), (54321, 54322))

    def test_symlinked_output_dir_refused(self):
        real = tempfile.mkdtemp(prefix="it-real-")
        link = real + "-link"
        os.symlink(real, link)
        r = common.record([], ["true"], outdir=link, check=False)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("infertrace record: refusing output directory", r.stderr)
        self.assertIn("symbolic link", r.stderr)
        self.assertEqual(os.listdir(real), [])

    def test_full_disk_exit_6_and_nothing_half_written(self):
        # a tmpfs too small for every output: the exit status and message say
        # so, and each file left is complete (written whole or not at all)
        for size in ("16k", "48k"):
            mnt = tempfile.mkdtemp(prefix="it-full-")
            if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt]).returncode:
                os.rmdir(mnt)
                self.skipTest("cannot mount a tmpfs here")
            try:
                out = os.path.join(mnt, "out")
                r = common.record(["--cycle", "run_cycle", "--phase", "llm_inference=inference"],
                                  [common.fixture("experiment"), "4", "5", "3", "2", "1"], check=False, outdir=out,
                                  wall_split=None)
                self.assertEqual(r.proc.returncode, 6, r.stderr)
                self.assertIn("No space left on device", r.stderr)
                self.assertNotIn("Input/output error", r.stderr)
                names = os.listdir(out)
                self.assertFalse([n for n in names if n.startswith(".")], names)
                for n in names:
                    path = os.path.join(out, n)
                    if n.endswith(".json"):
                        common.load_json(path)
                    elif n.endswith(".svg") or n.endswith(".html"):
                        with open(path) as f:
                            self.assertIn("</html>" if n.endswith(".html") else "</svg>", f.read()[-40:])
                    elif n.endswith(".folded"):
                        common.read_folded(path)  # every line: stack and count
            finally:
                subprocess.run(["umount", "-l", mnt])
                os.rmdir(mnt)

    def test_stale_outputs_removed(self):
        d = tempfile.mkdtemp(prefix="it-stale-")
        stale = ["stacks.oldphase.folded", "offcpu.oldphase.folded", ".profile.json.tmp.1234"]
        mine = ["notes.txt", "stacks.txt"]
        for name in stale + mine:
            with open(os.path.join(d, name), "w") as f:
                f.write("x 1\n")
        common.record([], ["sleep", "0.2"], outdir=d)
        left = set(os.listdir(d))
        for name in stale:
            self.assertNotIn(name, left)
        for name in mine:
            self.assertIn(name, left)
        self.assertIn("profile.json", left)

    def test_empty_output_dir_name(self):
        p = subprocess.run([common.INFERTRACE, "record", "-o", "", "--", "true"],
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("infertrace record: ", p.stderr)


if __name__ == "__main__":
    unittest.main()


def proc_stat(pid):
    """(state, ppid, pgid) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2])


def group_members(pgid):
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st[2] == pgid:
                out[int(name)] = st[0]
    return out


def wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    return pred()


def start_announced(args, cmd):
    """Starts `record` and waits for its announcement (all is attached):
    (process, output directory, what it wrote on stderr until then)."""
    p, d = common.start_record(args, cmd)
    head, _ = common.read_stderr_until(p, "recording|error")
    return p, d, head


def launched_child(tracer_pid):
    """The launched command: the tracer's child that leads its own group."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st[1] == tracer_pid and st[2] == int(name):
                return int(name)
    return None


@common.need_root
class SignalsTest(unittest.TestCase):
    def test_sigkill_while_target_held_releases_it(self):
        # a pending preset probe (sqlite never loads) stops the target at every
        # executable mmap; each /bin/true exec maps its libraries
        p, d, err = start_announced(["--preset", "sqlite"],
                                 ["sh", "-c", "while :; do /bin/true; sleep 0.01; done"])
        self.assertIn("recording", err)
        child = launched_child(p.pid)
        self.assertIsNotNone(child)
        try:
            # freeze the tracer so the next stop is never answered, then kill it
            os.kill(p.pid, signal.SIGSTOP)
            held = wait_for(lambda: [m for m, s in group_members(child).items() if s == "T"], 20)
            self.assertTrue(held, "no target was held: the test proves nothing")
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
            p.stderr.close()
            released = wait_for(lambda: all(s in "RSD" for s in group_members(child).values()), 10)
            self.assertTrue(released, f"target left stopped: {group_members(child)}")
            # and it keeps running: the loop still forks new children
            before = set(group_members(child))
            self.assertTrue(wait_for(lambda: set(group_members(child)) - before - {child}, 10),
                            f"the target's loop stopped: {before} {group_members(child)}")
            time.sleep(1.2)  # past the watchdog's last SIGCONT
            self.assertTrue(all(s != "T" for s in group_members(child).values()))
        finally:
            try:
                os.killpg(child, signal.SIGKILL)
            except (ProcessLookupError, TypeError):
                pass

    def test_clean_end_leaves_no_target_stopped(self):
        # a -p target held at every exec's mmaps while a preset probe is
        # pending; each recording's end must answer every stop it caused
        t = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"], start_new_session=True)
        try:
            for _ in range(3):
                r = common.record(["--preset", "sqlite", "-p", str(t.pid), "-d", "1"])
                self.assertEqual(r.profile["stop_reason"], "duration")
                time.sleep(0.2)
                states = group_members(t.pid)
                self.assertTrue(all(s != "T" for s in states.values()), states)
        finally:
            os.killpg(t.pid, signal.SIGKILL)
            t.wait()

    def test_stderr_pipe_closed_keeps_outputs(self):
        d = tempfile.mkdtemp(prefix="it-out-")
        p = subprocess.run(f"{common.INFERTRACE} record -o {d} -- sleep 1 2>&1 | head -1",
                           shell=True, text=True, stdout=subprocess.PIPE, timeout=120)
        self.assertIn("infertrace record:", p.stdout)
        prof = common.load_json(os.path.join(d, "profile.json"))
        self.assertEqual(prof["stop_reason"], "target exited")
        self.assertTrue(os.path.getsize(os.path.join(d, "flamegraph.svg")) > 0)

    def test_sighup_stops_like_sigterm_and_ends_the_group(self):
        tag = f"{os.getpid() % 1000}.{int(time.monotonic() * 1000) % 1000:03d}"
        p, d, err = start_announced([], ["sh", "-c", f"sleep 1{tag} & sleep 2{tag} & wait"])
        self.assertIn("recording", err)
        child = launched_child(p.pid)
        self.assertTrue(wait_for(lambda: len(group_members(child)) >= 3, 10))
        os.kill(p.pid, signal.SIGHUP)
        rest = p.stderr.read()
        p.stderr.close()
        self.assertEqual(p.wait(timeout=60), 0, rest)
        prof = common.load_json(os.path.join(d, "profile.json"))
        self.assertEqual(prof["stop_reason"], "SIGHUP")
        self.assertEqual(group_members(child), {})

    def test_duration_ends_shell_wrapped_grandchildren(self):
        tag = f"{os.getpid() % 1000}.{int(time.monotonic() * 1000) % 1000:03d}"
        # the shell ignores SIGTERM; its children do not: both must go
        r = common.record(["-d", "1"], ["sh", "-c", f"trap '' TERM; sleep 3{tag} & sleep 4{tag}; wait"])
        self.assertEqual(r.profile["stop_reason"], "duration")
        # the shell and its sleeps, by their own command lines (record's, which
        # names them too, is not theirs)
        left = subprocess.run(["pgrep", "-f", f"^(sleep [34]{tag}|sh -c trap '' TERM; sleep 3{tag})"],
                              stdout=subprocess.PIPE, text=True).stdout
        self.assertEqual(left.strip(), "")


@common.need_root
class HostileFilesTest(unittest.TestCase):
    def test_fifo_as_probe_object(self):
        d = tempfile.mkdtemp(prefix="it-fifo-")
        fifo = os.path.join(d, "libfake.so")
        os.mkfifo(fifo)
        r = common.record(["--phase", f"p={fifo}:f"], ["sleep", "0.2"], check=False, timeout=60)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn(f"infertrace record: probe '{fifo}:f'", r.stderr)
        self.assertIn("not a regular file", r.stderr)

    def test_fifo_in_place_of_mapped_file(self):
        d = tempfile.mkdtemp(prefix="it-fifo-")
        lib = os.path.join(d, "libhot.so")  # the fixture swaps it for a FIFO in place
        shutil.copy(common.fixture("libhotfix.so"), lib)
        exe = common.fixture("fifo_swap")
        t = subprocess.Popen([exe, lib, "30"], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(t.stdout.readline().strip(), "ready")
            self.assertTrue(stat.S_ISFIFO(os.stat(lib).st_mode))
            r = common.record(["-p", str(t.pid), "-d", "1.5"], timeout=60)
            self.assertEqual(r.profile["stop_reason"], "duration")
            # the mapping is still reached through /proc/PID/map_files
            self.assertGreater(r.share(lambda s: "lib_hot" in s), 0.3)
        finally:
            t.kill()
            t.wait()
            t.stdout.close()

    def test_corrupt_usdt_note(self):
        exe = common.fixture("bad_usdt_note")
        r = common.record(["--phase", f"p=usdt:{exe}:ab:x:y"], [exe], check=False, timeout=60)
        self.assertNotEqual(r.proc.returncode, 0)
        self.assertIn("USDT probe 'x' not found", r.stderr)
        # the reader goes on past the corrupt note to the valid one after it
        # (whose zero address libbpf then refuses to place)
        r = common.record(["--phase", f"p=usdt:{exe}:good:probe:probe"], [exe], check=False, timeout=60)
        self.assertNotIn("not found", r.stderr)


@common.need_root
class ForkStormTest(unittest.TestCase):
    def test_fifty_short_lived_children_with_dwarf_unwinding(self):
        exe = common.fixture("fork_storm")
        # the crash depended on when processes came and went: a few rounds
        for _ in range(3):
            r = common.record(["-F", "499"], [exe, "50", "5"], timeout=180)
            self.assertEqual(r.stdout.strip(), "50")  # the fixture reaped every child
            self.assertEqual(r.profile["stop_reason"], "target exited")
            st = r.folded()
            self.assertTrue(any("child_spin" in s for s in st), list(st)[:5])
            # the target and each of its 50 children, each seen to exit
            procs = r.profile["processes"]
            self.assertEqual(len(procs), 51)
            self.assertEqual(sum(1 for p in procs if p["exit_code"] == 0), 51)


@common.need_root
class ChurnTest(unittest.TestCase):
    """Threads that come and go by the thousand, and an exec mid-trace."""

    def test_thousand_threads_each_counted(self):
        r = common.record(["--phase", "worker=thread_work", "--count", "steps=thread_step"],
                          [common.fixture("churn"), "threads", "1000"])
        self.assertEqual(r.proc.stdout.strip(), "joined 1000") if r.proc.stdout else None
        self.assertEqual(r.profile["stop_reason"], "target exited")
        lost = r.profile["lost"]
        ph = r.profile["phases"]["worker"]
        calls = ph["calls"] + ph.get("outside_cycles", {}).get("calls", 0)
        if lost["events"] == 0:
            # every thread's one call seen, none twice: counts by construction
            self.assertEqual(calls, 1000, ph)
        else:
            # a loss on a loaded machine is allowed only when it is counted
            self.assertLessEqual(calls, 1000)
            self.assertGreater(lost["events"], 0)
        common.read_folded(os.path.join(r.dir, "stacks.folded"))

    def test_exec_mid_trace_symbolizes_both_programs(self):
        # the program execs a copy of itself (another file): samples before the
        # exec resolve in the first, after it in the second
        exe = common.fixture("churn")
        copy = os.path.join(tempfile.mkdtemp(prefix="it-exec-"), "churn_after")
        shutil.copy(exe, copy)
        r = common.record(["-F", "199"], [exe, "exec", copy])
        self.assertEqual(r.profile["stop_reason"], "target exited")
        st = r.folded()
        before = sum(c for s, c in st.items() if "before_exec" in s)
        after = sum(c for s, c in st.items() if "after_exec" in s)
        # 300 ms of CPU each at 199 Hz: about 60 samples; 10 is far below
        self.assertGreater(before, 10, list(st)[:5])
        self.assertGreater(after, 10, list(st)[:5])


@common.need_root
class CallRateTest(unittest.TestCase):
    """A probed function called as fast as a loop can: every call counted or
    the loss counted, and the tracer still answers a signal."""

    def test_million_probed_calls_counted(self):
        r = common.record(["--phase", "call=empty_call"], [common.fixture("probe_bench"), "1000000"],
                          timeout=300, wall_split=None)
        self.assertEqual(r.profile["stop_reason"], "target exited")
        ph = r.profile["phases"]["call"]
        calls = ph["calls"] + ph.get("outside_cycles", {}).get("calls", 0)
        lost = r.profile["lost"]["events"]
        if lost == 0:
            self.assertEqual(calls, 1000000, ph)
        else:
            self.assertLess(calls, 1000000)
            self.assertIn("lost", r.stderr)

    def test_sigint_acted_on_under_probe_load(self):
        # about a minute of probed calls; SIGINT after 2 s must end the run
        # promptly with outputs, and the target must not be left stopped
        p, d, head = start_announced(["--phase", "call=empty_call"], [common.fixture("probe_bench"), "50000000"])
        self.assertIn("recording", head)
        time.sleep(2)
        target = launched_child(p.pid)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(took, 30, err)
        prof = common.load_json(os.path.join(d, "profile.json"))
        self.assertEqual(prof["stop_reason"], "SIGINT")
        self.assertGreater(prof["phases"]["call"]["calls"] +
                           prof["phases"]["call"].get("outside_cycles", {}).get("calls", 0), 0)
        if target:
            st = wait_for(lambda: proc_stat(target) is None or proc_stat(target)[0] != "T", 5)
            self.assertTrue(st, "target left stopped")


@common.need_root
class OverflowTest(unittest.TestCase):
    def test_phases_nested_past_the_probe_stack_are_counted_lost(self):
        exe = common.fixture("nest12")
        rounds, depth, stack = 10, 12, 8  # stack: IT_PHASE_STACK
        args = []
        for i in range(1, depth + 1):
            args += ["--phase", f"p{i}=f{i}"]
        # the phases nest (p1 calls p2 ...): the per-phase split holds for
        # unnested phases only (common.check_wall_split)
        r = common.record(args, [exe, str(rounds)], wall_split="cycles")
        p = r.profile
        # every call below the stack's depth is timed; each deeper one is counted
        self.assertEqual(p["lost"]["probe_stack_overflow"], rounds * (depth - stack))
        for i in range(1, stack + 1):
            self.assertEqual(p["phases"][f"p{i}"]["calls"], rounds)
        for i in range(stack + 1, depth + 1):
            self.assertEqual(p["phases"][f"p{i}"]["calls"], 0)
        self.assertIn("lost.probe_stack_overflow", r.stderr)


@common.need_root
class BadInputTest(unittest.TestCase):
    def check_outputs(self, r, named_at_start):
        import xml.etree.ElementTree as ET
        ET.parse(os.path.join(r.dir, "flamegraph.svg"))  # raises on invalid XML
        with open(os.path.join(r.dir, "profile.json"), "rb") as f:
            json.loads(f.read().decode("utf-8"))  # strict UTF-8
        # a launched command is named at exec, before it renames itself
        if named_at_start:
            comms = [p["comm"] for p in r.profile["processes"]]
            self.assertIn("?) x (? y", comms)
        self.assertTrue(any(s.startswith("?) x (? y;") and "odd_spin" in s for s in r.folded()),
                        list(r.folded())[:3])

    def test_odd_comm_launched(self):
        r = common.record([], [common.fixture("odd_comm"), "1.5"])
        self.assertEqual(r.profile["stop_reason"], "target exited")
        self.check_outputs(r, False)

    def test_odd_comm_crash_named(self):
        # the crash record carries the name too, made valid UTF-8 as everywhere
        r = common.record([], [common.fixture("odd_comm"), "0.5", "segv"], check=False)
        with open(os.path.join(r.dir, "profile.json"), "rb") as f:
            json.loads(f.read().decode("utf-8"))  # strict UTF-8
        crashes = r.profile["crashes"]
        self.assertEqual(len(crashes), 1, crashes)
        self.assertEqual(crashes[0]["signal_name"], "SIGSEGV")
        self.assertEqual(crashes[0]["comm"], "?) x (? y")

    def test_thread_id_records_its_process_and_odd_comm_exit_is_seen(self):
        import types
        t = subprocess.Popen([common.fixture("odd_comm"), "-1"], stdout=subprocess.PIPE, text=True)
        try:
            pid, tid = map(int, t.stdout.readline().split())
            self.assertNotEqual(pid, tid)
            # no -d: the run ends only if the target's exit is read correctly
            # from /proc/PID/stat despite ')' and spaces in its name
            out = tempfile.mkdtemp(prefix="it-out-")
            tracer = subprocess.Popen([common.INFERTRACE, "record", "-o", out, "-p", str(tid)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            err = ""
            # attached: "recording N process(es)" (the thread line says "recording the whole process")
            while "recording 1 process" not in (line := tracer.stderr.readline()):
                self.assertTrue(line, f"the tracer ended before recording: {err}")
                err += line
            time.sleep(0.5)  # samples of the spinning threads
            os.kill(pid, signal.SIGUSR1)
            stdout, rest = tracer.communicate(timeout=120)
            r = common.Recording(out, types.SimpleNamespace(stdout=stdout, stderr=err + line + rest,
                                                            returncode=tracer.returncode))
            self.assertEqual(tracer.returncode, 0, r.stderr)
        finally:
            t.kill()
            t.wait()
            t.stdout.close()
        self.assertIn(f"infertrace record: PID {tid} is a thread of process {pid}", r.stderr)
        self.assertEqual(r.profile["pids"], [pid])
        self.assertEqual(r.profile["stop_reason"], "target exited")
        self.check_outputs(r, True)

    def test_phase_names_unfit_for_file_names_refused(self):
        exe = common.fixture("nest12")
        for name in ["a/b", "../up", ".hidden", "x" * 65, "tab\there"]:
            r = common.record(["--phase", f"{name}=f1"], [exe, "1"], check=False, timeout=60)
            self.assertNotEqual(r.proc.returncode, 0, name)
            self.assertIn("invalid --phase name", r.stderr)
            self.assertIsNone(r.profile)
        r = common.record(["--phase", "ok-name.v2=f1"], [exe, "3"])
        self.assertEqual(r.profile["phases"]["ok-name.v2"]["calls"], 3)
        # the phase mostly sleeps: an on-CPU sample may never land in it
        # on a busy machine, its off-CPU stacks always do
        self.assertTrue(os.path.exists(os.path.join(r.dir, "offcpu.ok-name.v2.folded")), os.listdir(r.dir))


@common.need_root
@unittest.skipUnless(shutil.which("unshare"), "needs unshare (util-linux)")
class ContainerTest(unittest.TestCase):
    def test_probe_in_binary_only_in_a_private_mount_namespace(self):
        exe = common.fixture("nest12")
        d = tempfile.mkdtemp(prefix="it-ns-")  # empty here; a tmpfs with the binary there
        t = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                              f"mount -t tmpfs none {d} && cp {exe} {d}/ && exec {d}/nest12 1000000"],
                             stderr=subprocess.PIPE, text=True)
        try:
            inside = os.path.join(d, "nest12")

            def started():
                if t.poll() is not None:
                    return True
                try:
                    return os.readlink(f"/proc/{t.pid}/exe") == inside
                except OSError:  # exiting between the poll and the read
                    return False
            self.assertTrue(wait_for(started, 20))
            if t.poll() is not None:
                # e.g. inside a chroot, whose root is no mount point: no private
                # mount namespace can be made here at all
                self.skipTest(f"cannot make a private mount namespace here: {t.stderr.read().strip()}")
            self.assertFalse(os.path.exists(inside))  # not in the tracer's namespace
            # f1 calls f2: nested phases, so the split is checked per cycle
            r = common.record(["-p", str(t.pid), "-d", "2", "--phase", "p1=f1", "--phase", "p2=f2"],
                              wall_split="cycles")
        finally:
            t.kill()
            t.wait()
        p = r.profile
        probes = {x["spec"]: x for x in p["probes"]}
        self.assertEqual(probes["f1"]["placed_in"], [f"/proc/{t.pid}/root{inside}"])
        c1, c2 = p["phases"]["p1"]["calls"], p["phases"]["p2"]["calls"]
        self.assertGreater(c1, 0)
        # each f1 calls f2 once: they differ only by calls cut at the edges
        self.assertLessEqual(abs(c2 - c1), 2)
        self.assertTrue(any("f2" in s and s.startswith("nest12;") for s in r.folded()))
