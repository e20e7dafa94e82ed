# SPDX-License-Identifier: BSD-2-Clause
"""Shared helpers of the integration tests: build fixtures, run infertrace,
read its outputs. Tests run as root with real BPF against real processes."""
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("INFERTRACE_BUILD", os.path.join(ROOT, "build"))
INFERTRACE = os.path.join(BUILD, "infertrace")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
FIXTURE_BUILD = os.path.join(BUILD, "fixtures")


def need_root(test):
    """Skips a test that needs root (BPF, perf events) when not root."""
    return unittest.skipUnless(os.geteuid() == 0, "needs root: loads BPF programs")(test)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw).stdout


def build(name, sources, flags="", out=None, cc="gcc"):
    """Compiles fixture sources (relative to tests/fixtures) into build/fixtures;
    returns the output path. Rebuilds when a source is newer."""
    os.makedirs(FIXTURE_BUILD, exist_ok=True)
    out = out or os.path.join(FIXTURE_BUILD, name)
    srcs = [s if os.path.isabs(s) else os.path.join(FIXTURES, s) for s in sources]
    if not os.path.exists(out) or any(os.path.getmtime(s) > os.path.getmtime(out) for s in srcs):
        sh(f"{cc} {' '.join(srcs)} {flags} -o {out}")
    return out


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_folded(path):
    """{stack: count} of a folded file."""
    stacks = {}
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks


class Recording:
    """The result of one `infertrace record` run."""

    def __init__(self, outdir, proc):
        self.dir = outdir
        self.proc = proc
        self.stderr = proc.stderr
        self.stdout = proc.stdout
        path = os.path.join(outdir, "profile.json")
        self.profile = load_json(path) if os.path.exists(path) else None

    def folded(self, name="stacks.folded"):
        return read_folded(os.path.join(self.dir, name))

    def share(self, pred, name="stacks.folded"):
        """Fraction of samples whose stack satisfies pred."""
        st = self.folded(name)
        total = sum(st.values())
        return sum(c for s, c in st.items() if pred(s)) / total if total else 0.0


def record(args, cmd=None, timeout=180, check=True, env=None, outdir=None):
    """Runs `infertrace record ARGS [-- CMD]` into a fresh directory."""
    outdir = outdir or tempfile.mkdtemp(prefix="it-out-")
    argv = [INFERTRACE, "record", "-o", outdir] + list(args)
    if cmd:
        argv += ["--"] + list(cmd)
    p = subprocess.run(argv, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"infertrace failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    return Recording(outdir, p)
