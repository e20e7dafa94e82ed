# SPDX-License-Identifier: BSD-2-Clause
"""Root-safe and honest under hostile or careless input: profiles edited by
hand, contradictory command lines, signals, names and bytes chosen by the
traced program, misspelt probes and a target that fails on its own."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from common import INFERTRACE, fixture, infertrace, need_root, record, write_profile

NAN_INF = re.compile(r"(?<![A-Za-z_])-?(nan|inf)(?![A-Za-z_])", re.I)


def profile(**kw):
    """A minimal profile.json that report and diff accept."""
    p = {"schema_version": "1.0", "tool": {"name": "infertrace", "version": "test"}, "duration_s": 1.0,
         "aggregate_metrics": {"total_cycles": 0}, "phases": {}, "cycles": [],
         "lost": {"samples": 0, "events": 0}}
    p.update(kw)
    return p


class TestReportInputs(unittest.TestCase):
    """report and diff on profiles no recording writes: each a one-line
    reason and exit 4, or a report without nan/inf."""

    def test_too_many_phases(self):
        d = write_profile(profile(phases={f"p{i}": {"total_ms": 1.0, "calls": 1} for i in range(40)}))
        for argv in (["report", d], ["diff", d, d]):
            p = infertrace(*argv)
            self.assertEqual(p.returncode, 4, p.stderr)
            self.assertIn("more than 31 phase", p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_numeric_schema_version(self):
        d = write_profile(profile(schema_version=1))
        for argv in (["report", d], ["diff", d, d]):
            p = infertrace(*argv)
            self.assertEqual(p.returncode, 4, p.stderr)
            self.assertIn("schema_version must be a string", p.stderr)
            self.assertNotIn("no schema_version", p.stderr)

    def test_idle_target_no_nan(self):
        """An idle -p target: no target CPU time, no achieved rate."""
        d = write_profile(profile(
            samples={"total": 0, "requested_hz": 99, "achieved_hz": None, "target_cpu_seconds": 0,
                     "stack_quality": {"complete_percent": None}},
            phases={"work": {"calls": 3}}, self={"cpu_s": 0.1},
            probes_overhead={"cost_ns_per_hit": 900.0, "phases": {"work": {}}}))
        p = infertrace("report", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Hz achieved", p.stdout)
        self.assertIsNone(NAN_INF.search(p.stdout), p.stdout)


class TestTargetConflicts(unittest.TestCase):
    """-p PID and -- COMMAND name two targets; --user only applies to a
    launched command. Refused before anything runs (it used to record the
    command and ignore the PID, exit 0)."""

    def test_pid_and_command(self):
        out = tempfile.mkdtemp(prefix="it-hostile-")
        marker = os.path.join(out, "ran")
        for argv in (["-p", str(os.getpid()), "--", "touch", marker],
                     ["-p", str(os.getpid()), "--user", "nobody", "--", "touch", marker]):
            p = infertrace("record", "-o", os.path.join(out, "o"), *argv)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("not both", p.stderr)
            self.assertFalse(os.path.exists(marker))

    def test_user_with_pid(self):
        p = infertrace("record", "-o", tempfile.mkdtemp(prefix="it-hostile-"), "--user", "nobody",
                       "-p", str(os.getpid()))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--user", p.stderr)


@need_root
class TestStopSignals(unittest.TestCase):
    """Every catchable terminating signal ends a recording as SIGINT does:
    outputs written, stop_reason names it, the launched command ended. They
    used to kill the tracer with no outputs and leave the command running."""

    def test_signals_write_outputs(self):
        for sig in (signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGRTMIN + 2):
            with self.subTest(sig=sig):
                d = tempfile.mkdtemp(prefix="it-hostile-")
                marker = os.path.join(d, "pid")
                p = subprocess.Popen([INFERTRACE, "record", "-q", "-o", os.path.join(d, "o"), "--", "sh", "-c",
                                      f"echo $$ > {marker}.tmp; mv {marker}.tmp {marker}; exec sleep 60"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                deadline = time.time() + 60
                while not os.path.exists(marker) and time.time() < deadline and p.poll() is None:
                    time.sleep(0.05)
                self.assertTrue(os.path.exists(marker), "the command never ran")
                time.sleep(0.3)
                p.send_signal(sig)
                _, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
                with open(os.path.join(d, "o", "profile.json")) as f:
                    reason = json.load(f)["stop_reason"]
                name = signal.Signals(sig).name if sig in signal.Signals.__members__.values() else None
                self.assertEqual(reason, name or f"SIGRTMIN+{sig - signal.SIGRTMIN}")
                with open(marker) as f:
                    pid = int(f.read())
                self.assertFalse(os.path.exists(f"/proc/{pid}") and
                                 open(f"/proc/{pid}/stat").read().split()[2] != "Z", "the command still runs")


@need_root
class TestTerminalEscapes(unittest.TestCase):
    """A symbol the target chose reaches report's terminal output escaped
    (\\xHH), never as an escape sequence."""

    def test_report_escapes_symbol(self):
        exe = fixture("odd_syms_esc")
        r = record(["-F", "499"], [exe, "400"], wall_split=None)
        with open(os.path.join(r.dir, "stacks.folded"), "rb") as f:
            self.assertIn(b"evil", f.read())
        p = subprocess.run([INFERTRACE, "report", r.dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(b"\x1b", p.stdout + p.stderr)
        self.assertNotIn(b"\x07", p.stdout + p.stderr)
        self.assertIn(b"evil\\x1B[31m", p.stdout)


@need_root
class TestTargetFate(unittest.TestCase):
    """The launched command's own exit, apart from the helpers it ran; a
    command that cannot start is an error."""

    def test_exit_status_and_helpers(self):
        r = record(["-q"], ["sh", "-c", "readlink /nonexistent-34; sleep 0.1; exit 3"], wall_split=None)
        self.assertRegex(r.stderr, r"the target sh \(pid \d+\) exited with status 3")
        self.assertIn("helper processes the target ran: 0 crashed (a signal), 1 exited non-zero", r.stderr)
        self.assertNotIn("crashed or exited abnormally", r.stderr)
        roots = [p for p in r.profile["processes"] if p["root"]]
        self.assertEqual([p.get("exit_code") for p in roots], [3])
        roles = {c["comm"]: c["role"] for c in r.profile["crashes"]}
        self.assertEqual(roles, {"sh": "target", "readlink": "helper"})
        p = infertrace("report", r.dir)
        self.assertRegex(p.stdout, r"Target: sh \(pid \d+\) exited with status 3")
        self.assertIn("1 exited non-zero", p.stdout)

    def test_crash_is_not_an_exit(self):
        r = record(["-q"], ["sh", "-c", "kill -SEGV $$"], wall_split=None)
        self.assertRegex(r.stderr, r"the target sh \(pid \d+\) crashed: killed by SIGSEGV")
        self.assertRegex(infertrace("report", r.dir).stdout, r"Target: sh \(pid \d+\) crashed: killed by SIGSEGV")

    def test_cannot_start(self):
        p = infertrace("record", "-q", "-o", tempfile.mkdtemp(prefix="it-hostile-"), "--", "/nonexistent-34/cmd")
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("cannot start '/nonexistent-34/cmd'", p.stderr)


@need_root
class TestNonUtf8(unittest.TestCase):
    """Bytes that are not UTF-8 (an argument, the output path, a symbol)
    keep every output valid and stay recoverable as \\xHH text."""

    def test_outputs_stay_valid(self):
        import xml.etree.ElementTree as ET
        exe = fixture("odd_syms_utf8")
        base = tempfile.mkdtemp(prefix="it-hostile-").encode()
        out = base + b"/out\xffdir"
        p = subprocess.run([INFERTRACE.encode(), b"record", b"-q", b"-F", b"499", b"-o", out, b"--",
                            exe.encode(), b"400", b"0", b"arg\xff\\x41"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out + b"/profile.json", "rb") as f:
            prof = json.loads(f.read().decode("utf-8"))  # strict: valid UTF-8
        self.assertEqual(prof["command"][-1], "arg\\xFF\\x5Cx41")
        self.assertTrue(prof["config"]["output_dir"].endswith("out\\xFFdir"), prof["config"])
        ET.parse(out + b"/flamegraph.svg")  # well-formed XML
        with open(out + b"/flamegraph.svg", "rb") as f:
            self.assertIn(b"bad\\xFF\\xFEname", f.read())
        with open(out + b"/trace.json", "rb") as f:
            names = {e.get("name") for e in json.loads(f.read().decode("utf-8"))["traceEvents"]}
        self.assertIn("bad\\xFF\\xFEname", names)
        with open(out + b"/stacks.folded", "rb") as f:
            self.assertIn(b"bad\\xFF\\xFEname", f.read())


@need_root
@unittest.skipUnless(os.uname().machine == "x86_64", "jit_exp is x86-64 code")
class TestPerfMapCredentials(unittest.TestCase):
    """A traced program running as nobody in its own user and mount
    namespace bind-mounts a root-only file over its /tmp/perf-PID.map: the
    tracer, root, must not read it for the program (without the check the
    file's names reached stacks.folded)."""
    SECRET = "leaked_secret_name"

    def run_planted(self, mode):
        secret = tempfile.NamedTemporaryFile("w", prefix="it-secret-", suffix=".map", dir="/var/tmp",
                                             delete=False)
        # jit_exp's planted code lives at 0x200000000000
        secret.write(f"200000000000 1000 {self.SECRET}\n")
        secret.close()
        os.chmod(secret.name, mode)
        # dated after the process starts: not an earlier process's stale map
        later = time.time() + 120
        os.utime(secret.name, (later, later))
        jit = fixture("jit_exp")
        if subprocess.run(["runuser", "-u", "nobody", "--", "unshare", "-Urm", "true"]).returncode:
            os.unlink(secret.name)
            self.skipTest("no unprivileged user namespaces here")
        script = (f"touch /tmp/perf-$$.map && mount --bind {secret.name} /tmp/perf-$$.map && "
                  f"exec {jit} 600 300 planted")
        try:
            return record(["-F", "199"], ["runuser", "-u", "nobody", "--", "unshare", "-Urm", "sh", "-c", script],
                          wall_split=None)
        finally:
            os.unlink(secret.name)
            for m in os.listdir("/tmp"):
                p = os.path.join("/tmp", m)
                if m.startswith("perf-") and m.endswith(".map") and os.stat(p).st_uid != 0:
                    os.unlink(p)

    def outputs_text(self, rec):
        text = ""
        for name in ("stacks.folded", "trace.json", "report.html", "profile.json"):
            path = os.path.join(rec.dir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    text += f.read()
        return text

    def test_root_only_map_refused(self):
        rec = self.run_planted(0o600)
        self.assertIn("the process itself may not read it", rec.stderr)
        self.assertNotIn(self.SECRET, self.outputs_text(rec))


if __name__ == "__main__":
    unittest.main()
