# SPDX-License-Identifier: BSD-2-Clause
"""The command line as perf's: -h on every subcommand, --version, messages
prefixed with the subcommand, one exit code per class of failure (docs/usage.md,
"Exit status"), the progress line on a terminal only, and the man page and
bash completion generated from the option table."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from common import INFERTRACE, infertrace, need_root

# user/core/exit_codes.h
USAGE, PRIVILEGE, TARGET, RUNTIME, OUTPUT = 2, 3, 4, 5, 6


def record_options():
    """Every --long option `record --help` lists."""
    return set(re.findall(r"^\s+(?:-\w, )?--([a-z][a-z-]*)", infertrace("record", "--help").stdout, re.M))


class TestHelp(unittest.TestCase):
    def test_help_on_every_subcommand(self):
        for sub in ("record", "report", "diff", "tune"):
            for flag in ("-h", "--help"):
                with self.subTest(sub=sub, flag=flag):
                    p = infertrace(sub, flag)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn(f"infertrace {sub}", p.stdout)
                    self.assertEqual(p.stderr, "")

    def test_top_level(self):
        p = infertrace("--help")
        self.assertEqual(p.returncode, 0)
        for code in range(7):
            self.assertRegex(p.stdout, rf"\n  {code}  \w")
        self.assertRegex(infertrace("--version").stdout, r"^infertrace \d+\.\d+\.\d+\n$")
        self.assertRegex(infertrace("record", "--version").stdout, r"^infertrace \d+\.\d+\.\d+\n$")
        p = infertrace("nosuch")
        self.assertEqual(p.returncode, USAGE)
        self.assertEqual(infertrace().returncode, USAGE)


class TestUsageErrors(unittest.TestCase):
    """Bad options: one line "infertrace SUB: ...", exit 2, nothing written."""

    def check(self, args, needle, sub="record"):
        out = tempfile.mkdtemp(prefix="it-cli-")
        p = infertrace(sub, *[a.replace("OUT", out) for a in args])
        self.assertEqual(p.returncode, USAGE, p.stderr)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith(f"infertrace {sub}: "), lines[0])
        self.assertIn(needle, lines[0])
        self.assertEqual(os.listdir(out), [])
        shutil.rmtree(out)

    def test_bad_values(self):
        for args, needle in ((["-d", "nan"], "nan"), (["-d", "inf"], "inf"), (["-d", "-3"], "-3"),
                             (["--side-period", "nan"], "side-period"), (["-o", ""], "empty"),
                             (["--phase", "../x=f"], "letters, digits"), (["--count", ".x=f"], "'.'"),
                             (["--phase", "a" * 65 + "=f"], "64"), (["-F", "0"], "frequency"),
                             (["--threshold", "inference_pct=nan"], "threshold")):
            with self.subTest(args=args):
                self.check(["-o", "OUT"] + args + ["--", "true"] if "-o" not in args else args + ["--", "true"],
                           needle)

    def test_config_errors(self):
        d = tempfile.mkdtemp(prefix="it-cli-")
        for text, needle in (('{"frequncy": 3}', '"frequncy"'), ('{"duration": -1}', "duration"),
                             ('{"phases": {"a/b": "f"}}', "a/b")):
            cfg = os.path.join(d, "c.json")
            with open(cfg, "w") as f:
                f.write(text)
            with self.subTest(text=text):
                self.check(["-o", "OUT", "--config", cfg, "--", "true"], needle)
        shutil.rmtree(d)

    def test_report_and_diff(self):
        self.check(["--threshold", "nan", "a", "b"], "threshold", sub="diff")
        p = infertrace("diff", "onlyone")
        self.assertEqual(p.returncode, USAGE)
        p = infertrace("report", "/nonexistent/x")
        self.assertEqual(p.returncode, TARGET)
        self.assertTrue(p.stderr.startswith("infertrace report: "), p.stderr)

    def test_tune(self):
        """tune's own mistakes and record's options checked before any run."""
        self.check(["--", "x"], "nothing to tune", sub="tune")
        self.check(["--param", "t=1,1", "--", "x", "{t}"], "given twice", sub="tune")
        self.check(["--param", "t=1,2", "-F", "abc", "--", "x", "{t}"], "frequency", sub="tune")
        self.check(["--param", "t=1,2", "-p", "1", "--", "x", "{t}"], "-p PID", sub="tune")
        self.check(["--param", "t=1,2", "--metric", "speed", "--", "x", "{t}"], "metric", sub="tune")
        self.check(["--param", "t=1,2", "-o", "OUT", "--", "x"], "appears nowhere", sub="tune")


class TestExitClasses(unittest.TestCase):
    def test_privilege(self):
        if os.geteuid() != 0:
            self.skipTest("runs as root to drop privileges")
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            INFERTRACE, "record", "-o", "/tmp/it-cli-never", "--", "true"],
                           text=True, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, PRIVILEGE, p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("infertrace record: "), p.stderr)

    @need_root
    def test_target(self):
        out = tempfile.mkdtemp(prefix="it-cli-")
        for args in (["-p", "999999999"], ["--", "/nonexistent/cmd"],
                     ["--phase", "x=definitely_not_in_true", "--", "true"]):
            with self.subTest(args=args):
                p = infertrace("record", "-o", out, *args)
                self.assertEqual(p.returncode, TARGET, p.stderr)
                self.assertTrue(p.stderr.startswith("infertrace record: "), p.stderr)
        shutil.rmtree(out)

    @need_root
    def test_output(self):
        p = infertrace("record", "-o", "/proc/infertrace-out", "--", "true")
        self.assertEqual(p.returncode, OUTPUT, p.stderr)
        self.assertIn("output directory", p.stderr)


@need_root
@unittest.skipUnless(shutil.which("script"), "needs script (util-linux)")
class TestProgress(unittest.TestCase):
    """The progress line: on a terminal (script's pty) only, not with -q."""
    LINE = re.compile(r"infertrace record: \d\d:\d\d:\d\d  cycles \d+  samples \d+  lost \d+")

    def under_script(self, extra):
        out = tempfile.mkdtemp(prefix="it-cli-")
        cmd = f"{INFERTRACE} record -o {out} {extra} -d 2.5 -- sleep 10"
        p = subprocess.run(["script", "-qec", cmd, "/dev/null"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        text = p.stdout.decode(errors="replace")  # bytes: text mode would turn \r into \n
        self.assertEqual(p.returncode, 0, text)
        self.assertTrue(os.path.exists(os.path.join(out, "profile.json")))
        shutil.rmtree(out)
        return text

    def test_terminal(self):
        text = self.under_script("")
        lines = self.LINE.findall(text)
        # drawn at the start, then about once a second: at least 2 in 2.5 s
        self.assertGreaterEqual(len(lines), 2, text)
        self.assertIn("\r", text)
        # redrawn in place, and cleared before the next message, which starts at column 0
        self.assertRegex(text, r"\rinfertrace record: 00:00:0\d  cycles")
        self.assertRegex(text, r"lost \d+\x1b\[K\r\x1b\[Kinfertrace record: \S")

    def test_quiet(self):
        text = self.under_script("-q")
        self.assertIsNone(self.LINE.search(text), text)
        self.assertNotIn("Ctrl-C to stop", text)

    def test_pipe(self):
        out = tempfile.mkdtemp(prefix="it-cli-")
        p = infertrace("record", "-o", out, "-d", "2.5", "--", "sleep", "10")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIsNone(self.LINE.search(p.stderr), p.stderr)
        self.assertNotIn("\r", p.stderr)
        shutil.rmtree(out)


class TestGenerated(unittest.TestCase):
    """The man page and the completion list every option of `record --help`."""

    def test_man_page(self):
        p = infertrace("--man")
        self.assertEqual(p.returncode, 0)
        opts = record_options()
        self.assertGreater(len(opts), 15)
        if shutil.which("groff"):
            g = subprocess.run(["groff", "-man", "-Tutf8", "-ww"], input=p.stdout, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, LC_ALL="C"))
            self.assertEqual(g.stderr, "", "groff warnings")
            text = re.sub(r".\x08", "", g.stdout)
        else:
            text = p.stdout.replace("\\-", "-")
        for o in opts:
            self.assertIn(f"--{o}", text)
        self.assertIn("EXIT STATUS", text)

    def test_tune_options_everywhere(self):
        """tune's options, from its table, in its help, the man page and the completion."""
        opts = set(re.findall(r"^\s+(?:-\w, )?--([a-z][a-z-]*)", infertrace("tune", "--help").stdout, re.M))
        self.assertGreaterEqual(len(opts), 12)
        man = infertrace("--man").stdout.replace("\\-", "-")
        words = {w.strip("'") for w in infertrace("--completion", "bash").stdout.split()}
        for o in opts:
            self.assertIn(f"--{o}", man)
            self.assertIn(f"--{o}", words)

    def test_bash_completion(self):
        p = infertrace("--completion", "bash")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(subprocess.run(["bash", "-n"], input=p.stdout, text=True).returncode, 0)
        words = set(p.stdout.split())
        for o in record_options():
            self.assertIn(f"--{o}", words)
        # completing `infertrace record --gpu ` offers the choices
        script = p.stdout + "\nCOMP_WORDS=(infertrace record --gpu ''); COMP_CWORD=3; _infertrace; " \
                            "echo \"${COMPREPLY[*]}\"\n"
        r = subprocess.run(["bash", "-c", script], text=True, stdout=subprocess.PIPE)
        self.assertEqual(r.stdout.split(), ["auto", "nvml", "jetson", "none"])
        self.assertEqual(infertrace("--completion", "zsh").returncode, USAGE)


if __name__ == "__main__":
    unittest.main()
