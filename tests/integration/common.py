# SPDX-License-Identifier: BSD-2-Clause
"""Shared helpers of the integration tests: build fixtures, run infertrace,
read its outputs. Tests run as root with real BPF against real processes."""
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("INFERTRACE_BUILD", os.path.join(ROOT, "build"))
INFERTRACE = os.path.join(BUILD, "infertrace")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
FIXTURE_BUILD = os.path.join(BUILD, "fixtures")
# speedscope, as tools/install-deps.sh test installs it (npm, pinned)
SPEEDSCOPE = os.path.join(ROOT, "tests", "peers", "node_modules", "speedscope", "dist", "release", "index.html")


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


def record(args, cmd=None, timeout=180, check=True, env=None, outdir=None, wall_split="phases"):
    """Runs `infertrace record ARGS [-- CMD]` into a fresh directory. The
    recording's cycles and phases must hold the wall-time invariant
    (check_wall_split; wall_split="cycles": cycles only, None: not checked)."""
    outdir = outdir or tempfile.mkdtemp(prefix="it-out-")
    argv = [INFERTRACE, "record", "-o", outdir] + list(args)
    if cmd:
        argv += ["--"] + list(cmd)
    p = subprocess.run(argv, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"infertrace failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    rec = Recording(outdir, p)
    remove_perf_maps(rec)
    if wall_split:
        rec.split_checks = check_wall_split(rec.profile, phases=wall_split == "phases")
    return rec


def remove_perf_maps(rec):
    """The perf maps the recording's processes left in /tmp (node runs with
    --perf-basic-prof-only-functions): PIDs are recycled, so they would meet
    later processes as stale maps."""
    for proc in (rec.profile or {}).get("processes") or []:
        path = f"/tmp/perf-{proc.get('pid')}.map"
        if os.path.exists(path):
            os.unlink(path)


def split_tolerance_ms(wall_ms):
    """The wall-time invariant's bound: 1%, or 20 µs for a wall under 1 ms."""
    return 0.02 if wall_ms < 1.0 else 0.01 * wall_ms


def check_wall_split(profile, phases=True):
    """The invariant of the scheduler split (docs/sched-memory.md): on every
    cycle, on-CPU + run-queue + blocked of its main thread equals the cycle's
    wall time, and in every phase the same sums over its threads equal the
    phase's per-thread wall time (thread_ms; ms when one thread ran it), within
    split_tolerance_ms. phases=False: cycles only (a phase called inside
    another phase takes its time from the outer one). A cycle's own split is
    checked when probes begin and end it: a whole-run cycle spans the process's
    life (its threads are followed from their first event), and a cycle still
    open at the end ends at the process's exit, neither at an edge. Raises
    AssertionError; returns the number of checks. record() runs it on every
    recording."""
    if not profile or not profile.get("sched", {}).get("available"):
        return 0
    whole_run = profile.get("aggregate_metrics", {}).get("cycles_source") == "whole_run"
    checks = 0
    for c in profile.get("cycles", []):
        if "oncpu_ms" not in c:
            continue
        items = []
        if not whole_run and not c.get("open_at_end"):
            items.append((f"cycle {c['index']} (pid {c.get('pid')})", c, c["duration_ms"]))
        if phases:
            items += [(f"cycle {c['index']} phase {name}", ph, ph.get("thread_ms", ph["ms"]))
                      for name, ph in c.get("phases", {}).items() if "oncpu_ms" in ph]
        for what, o, wall in items:
            parts = o["oncpu_ms"] + o["runq_wait_ms"] + o["offcpu_ms"]
            if abs(parts - wall) > split_tolerance_ms(wall):
                raise AssertionError(
                    f"{what}: on-CPU {o['oncpu_ms']:.4f} + run queue {o['runq_wait_ms']:.4f} + blocked "
                    f"{o['offcpu_ms']:.4f} = {parts:.4f} ms against wall {wall:.4f} ms")
            checks += 1
    return checks


def speedscope_run(profile, script, budget_s=120, size=(1600, 900)):
    """Opens the file profile in real speedscope in headless Chromium, as
    its command line opens a local file (#localProfilePath: a script that
    hands speedscope the file), then runs script, JavaScript in the page
    that sees the file loaded and reports with console.log. Returns
    Chromium's console messages once one is "DONE" (or at budget_s), the
    window size px wide and high (rendering costs about its area). Skips
    the test without chromium-headless-shell or speedscope (make deps
    installs both)."""
    browser = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if not browser:
        raise unittest.SkipTest("no chromium-headless-shell (make deps installs it)")
    if not os.path.exists(SPEEDSCOPE):
        raise unittest.SkipTest("no speedscope in tests/peers (tools/install-deps.sh test installs it)")
    tmp = tempfile.mkdtemp(prefix="it-speedscope-")
    try:
        with open(profile, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        loader = os.path.join(tmp, "load.js")
        with open(loader, "w") as f:
            f.write("speedscope.loadFileFromBase64(%s, %s);\n%s" %
                    (json.dumps(os.path.basename(profile)), json.dumps(data), script))
        url = "file://" + SPEEDSCOPE + "#localProfilePath=" + loader
        p = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                              "--v=0", "--window-size=%d,%d" % size, f"--virtual-time-budget={budget_s * 1000}",
                              "--dump-dom", url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        console = []
        try:
            for line in p.stderr:
                m = re.search(r'CONSOLE[^\]]*\] "(.*)", source: ', line)
                if m:
                    console.append(m.group(1))
                    if m.group(1) == "DONE":
                        break
        finally:
            p.kill()
            p.wait()
        return console
    finally:
        shutil.rmtree(tmp, True)
