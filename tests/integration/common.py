# SPDX-License-Identifier: BSD-2-Clause
"""The one helper module of the integration tests: build fixtures (each by
its rule in FIXTURE_RULES), run infertrace, read its outputs, compare them
with a fixture's own figures. Tests run as root with real BPF against real
processes; test modules import from here, never from one another."""
import base64
import functools
import glob
import html
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import tempfile
import unittest
import urllib.parse
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("INFERTRACE_BUILD", os.path.join(ROOT, "build"))
INFERTRACE = os.path.join(BUILD, "infertrace")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
FIXTURE_BUILD = os.path.join(BUILD, "fixtures")
# speedscope, as tools/install-deps.sh test installs it (npm, pinned)
SPEEDSCOPE = os.path.join(ROOT, "tests", "peers", "node_modules", "speedscope", "dist", "release", "index.html")
SCHEMA = os.path.join(ROOT, "docs", "profile.schema.json")



# a run after a switch-in that no program saw is the kernel's count of it
# (docs/sched-memory.md), which can miss part of it (0.22 ms of a 0.32 ms
# run measured at a switch): test_sched, test_crashes
UNSEEN_RUN_MS = 0.25

def need_root(test):
    """Skips a test that needs root (BPF, perf events) when not root."""
    return unittest.skipUnless(os.geteuid() == 0, "needs root: loads BPF programs")(test)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw).stdout


# ---- fixtures: one rule per binary ----

@dataclass(frozen=True)
class Rule:
    """How one fixture binary is built: `CC SOURCES FLAGS -o build/fixtures/NAME`.
    sources lie in tests/fixtures (their own "..." headers beside them);
    {build} in flags is build/fixtures; deps are fixtures built first (the
    libraries flags link). redefine renames symbols of the compiled object
    (objcopy --redefine-sym OLD=NEW, NEW bytes) before it is linked alone."""
    sources: tuple
    flags: str = ""
    cc: str = "gcc"
    deps: tuple = ()
    redefine: tuple = ()


# odd_syms's odd_spin renamed: escape sequences, and bytes that are not UTF-8
ESC_NAME = b"evil\x1b[31m\x1b]0;owned\x07"
BAD_UTF8_NAME = b"bad\xff\xfename"

# One rule per name: the same sources with other flags are another fixture
# (experiment_fp, offcpu_calls_fp and _nofp). gcc omits frame pointers from
# -O1 on unless a rule says -fno-omit-frame-pointer.
FIXTURE_RULES = {
    # tests/fixtures/experiment.c: cycles, phases and tokens by construction
    "experiment": Rule(("experiment.c",), "-O1 -g -lpthread"),
    # for test_pprof's --call-graph fp run; a test that reads the command's
    # name (test_live's metrics labels) needs "experiment" itself
    "experiment_fp": Rule(("experiment.c",), "-O1 -g -fno-omit-frame-pointer -lpthread"),
    "exp_recurse": Rule(("exp_recurse.c",), "-O2 -g -lpthread"),
    "exp_abandon": Rule(("exp_abandon.c",), "-O2 -g -lpthread"),
    # probes in libraries, dlopen, dlclose
    "libexpfix.so": Rule(("exp_lib.c",), "-O2 -g -shared -fPIC"),
    "libexpdl.so": Rule(("exp_dl.c",), "-O2 -g -shared -fPIC"),
    "libexpdl_alt.so": Rule(("exp_dl.c",), "-O2 -g -shared -fPIC -DDL_ALT"),
    "exp_shared": Rule(("exp_shared.c",), "-O2 -g -L{build} -lexpfix -Wl,-rpath,$ORIGIN -ldl",
                       deps=("libexpfix.so",)),
    "libexpvar-first.so": Rule(("exp_variant.c",), "-O1 -g -shared -fPIC -DVARIANT=1"),
    "libexpvar-second.so": Rule(("exp_variant.c",), "-O1 -g -shared -fPIC -DVARIANT=2"),
    "dl_variants": Rule(("dl_variants.c",), "-O1 -g -ldl"),
    # -O0: each round's caller stays a frame of its own (no tail calls)
    "dl_reload": Rule(("dl_reload.c",), "-O0 -g -ldl"),
    "libexppy.so": Rule(("exp_pylib.c",), "-O2 -g -shared -fPIC"),
    # sampling and symbolization
    "libhotfix.so": Rule(("hot_lib.c",), "-shared -fPIC -O1 -g -fno-omit-frame-pointer"),
    "hot_pie": Rule(("hot_main.c",), "-fPIE -pie -O1 -g -fno-omit-frame-pointer "
                    "-L{build} -lhotfix -Wl,-rpath,{build}", deps=("libhotfix.so",)),
    "hot_nopie": Rule(("hot_main.c",), "-fno-pie -no-pie -O1 -g -fno-omit-frame-pointer "
                      "-L{build} -lhotfix -Wl,-rpath,{build}", deps=("libhotfix.so",)),
    "syscall_heavy": Rule(("syscall_heavy.c",), "-O1 -g -fno-omit-frame-pointer"),
    "cxx_hot": Rule(("cxx_hot.cpp",), "-O1 -g -fno-omit-frame-pointer", cc="g++"),
    "threads": Rule(("threads.c",), "-O1 -g -fno-omit-frame-pointer -pthread"),
    # unwinding without frame pointers; a stripped program with its own _start
    # and its unstripped twin (-s changes no address), which names its frames
    "deep_chain": Rule(("deep_chain.c",), "-O2 -fomit-frame-pointer -g0"),
    "nostart": Rule(("nostart.c",), "-O1 -nostartfiles -g0 -s"),
    "nostart_syms": Rule(("nostart.c",), "-O1 -nostartfiles -g0"),
    # robustness
    "fifo_swap": Rule(("fifo_swap.c",), "-O1 -g -fno-omit-frame-pointer -ldl"),
    "bad_usdt_note": Rule(("bad_usdt_note.c",)),
    "fork_storm": Rule(("fork_storm.c",), "-O1 -g -fno-omit-frame-pointer"),
    "churn": Rule(("churn.c",), "-O1 -g -fno-omit-frame-pointer -lpthread"),
    "probe_bench": Rule(("probe_bench.c",), "-O2"),
    "nest12": Rule(("nest12.c",), "-O1 -g -fno-omit-frame-pointer"),
    "odd_comm": Rule(("odd_comm.c",), "-O1 -g -fno-omit-frame-pointer -pthread"),
    "odd_syms_esc": Rule(("odd_syms.c",), "-O1 -fno-omit-frame-pointer", redefine=(("odd_spin", ESC_NAME),)),
    "odd_syms_utf8": Rule(("odd_syms.c",), "-O1 -fno-omit-frame-pointer", redefine=(("odd_spin", BAD_UTF8_NAME),)),
    "jit_exp": Rule(("jit_exp.c",), "-O1 -fno-omit-frame-pointer -g"),
    # ticks: each cycle's index printed as it ends
    "tick_cycles": Rule(("tick_cycles.c",), "-O1 -g"),
    # tune's fixture: fixed work split over T threads with a barrier
    "tune_threads": Rule(("tune_threads.c",), "-O1 -g -lpthread"),
    # three threads named by the fixture, known functions in known windows
    "timeline_exp": Rule(("timeline_exp.c",), "-O1 -g -lpthread"),
    "many_cycles": Rule(("many_cycles.c",), "-O1 -g -fno-omit-frame-pointer"),
    # fake CUDA runtime and driver with the real names, and their caller
    "libcuda.so.1": Rule(("fake_cuda.c",), "-shared -fPIC -O1 -Wl,-soname,libcuda.so.1"),
    "libcudart.so.12": Rule(("fake_cudart.c",), "-shared -fPIC -O1 -Wl,-soname,libcudart.so.12 {build}/libcuda.so.1",
                            deps=("libcuda.so.1",)),
    "cuda_exp": Rule(("cuda_exp.c",), "-O1 -g -L{build} -l:libcudart.so.12 -l:libcuda.so.1 -Wl,-rpath,{build}",
                     deps=("libcudart.so.12", "libcuda.so.1")),
    # the CUPTI path: a fake libcupti simulating GPUs, driven by the fake
    # libcuda's calls, and the experiment that makes them
    "libfake_cupti.so": Rule(("fake_cupti.c",), "-shared -fPIC -O1 -lpthread"),
    "gpu_exp": Rule(("gpu_exp.c",), "-O1 -g -L{build} -l:libcuda.so.1 -Wl,-rpath,{build}",
                    deps=("libcuda.so.1",)),
    # native launch stacks under --call-graph fp
    "gpu_exp_fp": Rule(("gpu_exp.c",), "-O1 -g -fno-omit-frame-pointer -L{build} -l:libcuda.so.1 -Wl,-rpath,{build}",
                       deps=("libcuda.so.1",)),
    # scheduler, off-CPU, wake-ups, network
    "sched_fix": Rule(("sched_fix.c",), "-O1 -g -fno-omit-frame-pointer -pthread"),
    "edges": Rule(("edges.c",), "-O1 -g -pthread"),
    "pingpong": Rule(("pingpong.c",), "-O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls"),
    "offcpu_calls_fp": Rule(("offcpu_calls.c",),
                            "-O2 -g -fno-optimize-sibling-calls -lpthread -fno-omit-frame-pointer"),
    "offcpu_calls_nofp": Rule(("offcpu_calls.c",),
                              "-O2 -g -fno-optimize-sibling-calls -lpthread -fomit-frame-pointer"),
    "wakeup_exp": Rule(("wakeup_exp.c",), "-O1 -g -fno-omit-frame-pointer -pthread"),
    "tail_exp": Rule(("tail_exp.c",), "-O1 -g -fno-omit-frame-pointer"),
    "startup_storm": Rule(("startup_storm.c",), "-O1 -g -fno-omit-frame-pointer -pthread"),
    "tcp_exp": Rule(("tcp_exp.c",), "-O1 -g"),
    # side data: a fixture sysfs tree, a fake NVML, a powercap feeder
    "side_exp": Rule(("side_exp.c",), "-O1 -g"),
    "libfake_nvml.so": Rule(("fake_nvml.c",), "-shared -fPIC -O1"),
    "energy_feeder": Rule(("energy_feeder.c",), "-O1 -pthread"),
    # Python and SQLite
    "py_fake": Rule(("py_fake.c",), "-O1 -g -fno-omit-frame-pointer"),
    "sqlite_rows": Rule(("sqlite_rows.c",), "-O1 -g -fno-omit-frame-pointer -lsqlite3"),
}

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _local_headers(path, seen):
    """The "..." headers path includes, resolved beside the including file."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return seen
    for name in _INCLUDE.findall(text):
        h = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if h not in seen and os.path.exists(h):
            seen.add(h)
            _local_headers(h, seen)
    return seen


def fixture_commands(name):
    """The commands that build fixture NAME into build/fixtures: [argv]."""
    rule = FIXTURE_RULES[name]
    out = os.path.join(FIXTURE_BUILD, name)
    srcs = [os.path.join(FIXTURES, s) for s in rule.sources]
    flags = [w.replace("{build}", FIXTURE_BUILD) for w in shlex.split(rule.flags)]
    if not rule.redefine:
        return [[rule.cc] + srcs + flags + ["-o", out]]
    obj = out + ".o"
    return ([[rule.cc, "-c"] + flags + srcs + ["-o", obj]] +
            [[b"objcopy", b"--redefine-sym", old.encode() + b"=" + new, os.fsencode(obj)]
             for old, new in rule.redefine] +
            [[rule.cc, obj, "-o", out]])


def _words(cmd):
    return [a if isinstance(a, str) else a.decode("latin-1") for a in cmd]


def _stamp(cmds):
    return json.dumps([_words(c) for c in cmds])


def fixture(name):
    """The path of fixture NAME, built by its rule in FIXTURE_RULES (its deps
    first). Built again when the rule's commands differ from those that made
    it (the stamp NAME.rule beside it) or a source, a header it includes or a
    dep is newer than it."""
    rule = FIXTURE_RULES[name]
    deps = [fixture(d) for d in rule.deps]
    out = os.path.join(FIXTURE_BUILD, name)
    stamp = out + ".rule"
    cmds = fixture_commands(name)
    inputs = [os.path.join(FIXTURES, s) for s in rule.sources]
    for s in list(inputs):
        inputs += sorted(_local_headers(s, set()))
    try:
        with open(stamp) as f:
            fresh = f.read() == _stamp(cmds)
        built = os.path.getmtime(out)
        fresh = fresh and not any(os.path.getmtime(p) > built for p in inputs + deps)
    except OSError:
        fresh = False
    if fresh:
        return out
    os.makedirs(FIXTURE_BUILD, exist_ok=True)
    if os.path.exists(stamp):
        os.unlink(stamp)
    for c in cmds:
        p = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise AssertionError(f"fixture {name}: {shlex.join(_words(c))} failed ({p.returncode}):\n"
                                 f"{p.stdout.decode(errors='replace')}")
    with open(stamp, "w") as f:
        f.write(_stamp(cmds))
    return out


def compile_object(source, obj, include):
    """Compiles a C file a test wrote (not a fixture: tools' test trees) into
    obj, with include on the include path."""
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    subprocess.run(["cc", "-c", "-I", include, "-o", obj, source], check=True)
    return obj


# ---- running infertrace ----

def infertrace(*argv, timeout=120, **kw):
    """`infertrace ARGV...`, its output captured as text."""
    return subprocess.run([INFERTRACE] + list(argv), text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_folded(path):
    """{stack: count} of a folded file."""
    stacks = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            stack, _, count = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks


def frame_share(folded, frame):
    """The share of a folded file's samples whose stack holds frame."""
    total = sum(folded.values())
    return sum(c for s, c in folded.items() if frame in s.split(";")) / total if total else 0.0


def offcpu_ms(folded, frame, prefix=""):
    """Milliseconds of an off-CPU folded file (counts in µs) in the stacks
    that hold frame and start with prefix (a process name)."""
    return sum(v for k, v in folded.items() if frame in k.split(";") and k.startswith(prefix)) / 1e3


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


def start_record(args, cmd=(), outdir=None, stdout=subprocess.DEVNULL):
    """Starts `infertrace record -o OUTDIR ARGS [-- CMD]` in the background,
    its stderr a pipe: (process, outdir)."""
    outdir = outdir or tempfile.mkdtemp(prefix="it-out-")
    argv = [INFERTRACE, "record", "-o", outdir] + list(args) + (["--"] + list(cmd) if cmd else [])
    return subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, text=True), outdir


def read_stderr_until(p, pattern):
    """Reads p's stderr up to the first line pattern (a regex) matches, or
    its end: (the lines read, the match or None)."""
    lines = []
    for line in iter(p.stderr.readline, ""):
        lines.append(line)
        m = re.search(pattern, line)
        if m:
            return "".join(lines), m
    return "".join(lines), None


def remove_perf_maps(rec):
    """The perf maps the recording's processes left in /tmp (node runs with
    --perf-basic-prof-only-functions): PIDs are recycled, so they would meet
    later processes as stale maps."""
    for proc in (rec.profile or {}).get("processes") or []:
        path = f"/tmp/perf-{proc.get('pid')}.map"
        if os.path.exists(path):
            os.unlink(path)


def write_profile(profile, folded=None):
    """A directory holding profile (a dict) as profile.json and, where given,
    folded ({stack: count}) as stacks.folded, as report and diff read them."""
    d = tempfile.mkdtemp(prefix="it-profile-")
    with open(os.path.join(d, "profile.json"), "w") as f:
        json.dump(profile, f)
    if folded is not None:
        with open(os.path.join(d, "stacks.folded"), "w") as f:
            for s, c in folded.items():
                f.write(f"{s} {c}\n")
    return d


def sticky_world_dir():
    """A fresh directory anyone may write to, with the sticky bit (/tmp's mode)."""
    d = tempfile.mkdtemp(prefix="it-sticky-")
    os.chmod(d, 0o1777)
    return d


# ---- what the recording must agree with ----

def truth_of(rec):
    """The fixture's own measurements: the last JSON line of its stdout."""
    lines = [l for l in rec.stdout.splitlines() if l.startswith("{")]
    assert lines, f"fixture printed no measurements:\n{rec.stdout}\n{rec.stderr}"
    return json.loads(lines[-1])


def strict_schema(schema):
    """The schema with additionalProperties false wherever an object lists
    its properties and says nothing of others."""
    if isinstance(schema, dict):
        if "properties" in schema and schema.get("additionalProperties", True) is True:
            schema["additionalProperties"] = False
        for v in schema.values():
            strict_schema(v)
    elif isinstance(schema, list):
        for v in schema:
            strict_schema(v)
    return schema


def schema_errors(profile, strict=False, schema_path=SCHEMA):
    """profile's departures from docs/profile.schema.json (or the schema at
    schema_path), one line each ("path: message"); strict: from the schema
    made strict (strict_schema), so any key the schema does not list is
    named."""
    import jsonschema
    schema = load_json(schema_path)
    if strict:
        schema = strict_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    return ["/".join(map(str, e.absolute_path)) + ": " + e.message for e in v.iter_errors(profile)]


def unknown_keys(profile):
    """Every key of profile that docs/profile.schema.json does not list (and
    every other departure from it)."""
    return schema_errors(profile, strict=True)


def assert_schema(profile):
    """profile validates against the documented schema."""
    errors = schema_errors(profile)
    if errors:
        raise AssertionError("profile.json against docs/profile.schema.json:\n" + "\n".join(errors))


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


# headless Chromium, as `make deps` installs it (Debian's chromium-headless-shell)
BROWSER = shutil.which("chromium-headless-shell") or shutil.which("chromium")


def load_page(path, fragment=None, width=800):
    """The DOM of the local page path after its scripts ran in headless
    Chromium, a window width px wide (the URL fragment from the dict
    fragment), and Chromium's console lines."""
    url = "file://" + urllib.parse.quote(path) + "#" + urllib.parse.urlencode(fragment or {})
    p = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--virtual-time-budget=3000", f"--window-size={width},700", "--dump-dom", url],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    console = [line for line in p.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    return p.stdout, console


# ---- report.html in headless Chromium ----

PAGE_MS_EPS = 0.0006  # report.html's charts write ms to three decimals


def page_rects(dom, cls):
    """The attributes ({name: value}) of every <rect> of class cls, in order."""
    out = []
    for attrs in re.findall(r'<rect class="%s"([^>]*)>' % re.escape(cls), dom):
        out.append(dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)))
    return out


def page_cycle_bars(dom):
    """{cycle index: (data-ms, tail)} of the cycle chart's bars."""
    bars = {}
    for cls, tail in (("cycle", False), ("cycle tail", True)):
        for a in page_rects(dom, cls):
            bars[int(a["data-cycle"])] = (float(a["data-ms"]), tail)
    return bars


def page_split_table(dom):
    """{phase: (on-CPU ms, run queue ms, blocked ms)} of the split table per phase."""
    m = re.search(r'<table class="split">(.*?)</table>', dom, re.S)
    if not m:
        return {}
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", m.group(1))
    return {html.unescape(r[0]): tuple(float(v) for v in r[1:]) for r in rows}


def phase_split_sums(profile, name):
    """The phase's (on-CPU, run queue, blocked) ms summed over the cycles
    that have its split in profile.json; None when none has."""
    ran = [c["phases"][name] for c in profile["cycles"] if name in c["phases"]]
    with_split = [p for p in ran if {"oncpu_ms", "runq_wait_ms", "offcpu_ms"} & set(p)]
    if not with_split:
        return None
    return tuple(sum(p.get(k, 0) for p in with_split) for k in ("oncpu_ms", "runq_wait_ms", "offcpu_ms"))


def folded_leaves(folded):
    """{leaf frame: samples} of a folded file's {stack: count}."""
    out = {}
    for s, c in folded.items():
        leaf = s.rsplit(";", 1)[-1]
        out[leaf] = out.get(leaf, 0) + c
    return out


def assert_top_rows(test, rows, leaves, n):
    """rows, [(percent, name)] as a report lists its top functions, are the
    n busiest of leaves ({leaf: samples}: none left out has more), each
    with its share (two decimals)."""
    total = sum(leaves.values())
    test.assertEqual(len(rows), min(n, len(leaves)))
    listed = {name for _, name in rows}
    left_out = max([c for k, c in leaves.items() if k not in listed] or [0])
    for pct, name in rows:
        test.assertIn(name, leaves)
        test.assertAlmostEqual(pct, 100.0 * leaves[name] / total, delta=0.006, msg=name)
        test.assertGreaterEqual(leaves[name], left_out, name)


def page_top_functions(dom):
    """(heading, [(percent, name)]) of report.html's top functions table."""
    m = re.search(r'<h3>(Top on-CPU functions[^<]*)</h3><table class="top-functions">(.*?)</table>', dom, re.S)
    if not m:
        return None, []
    return m.group(1), [(float(p), html.unescape(n))
                        for p, n in re.findall(r"<tr><td>([\d.]+)</td><td>([^<]*)</td>", m.group(2))]


def _with_page(check):
    """A check of ReportPageChecks: skipped without a browser."""
    @functools.wraps(check)
    def run(self):
        if self.dom is None:
            self.skipTest("no chromium-headless-shell (make deps installs it)")
        return check(self)
    return run


class ReportPageChecks:
    """The checks of one recording's report.html, rendered in headless
    Chromium, against its profile.json: a test class mixes them in and
    calls load_report (test_report_charts on fixtures, test_demo and
    test_demo_python on the demos' recordings). self.dom is the DOM after
    rendering (None without a browser: the checks skip), self.html the
    file's text, self.console Chromium's console lines, self.profile the
    recording's profile.json, CYCLES the cycles it must have (None: not
    checked)."""
    CYCLES = None

    @classmethod
    def load_report(cls, outdir, profile):
        cls.profile = profile
        cls.report_dir = outdir
        cls.report_path = os.path.join(outdir, "report.html")
        cls.dom, cls.console = load_page(cls.report_path) if BROWSER else (None, [])
        with open(cls.report_path) as f:
            cls.html = f.read()

    @_with_page
    def test_page_renders_without_errors(self):
        self.assertEqual(self.console, [])
        self.assertIn('<h2 id="charts">Charts</h2>', self.dom)
        self.assertGreaterEqual(self.dom.count('role="img"'), 3)
        self.assertNotRegex(self.dom.replace("nanosleep", ""), r"\bnan\b")

    @_with_page
    def test_page_one_bar_per_cycle_with_its_duration(self):
        cycles = self.profile["cycles"]
        if self.CYCLES is not None:
            self.assertEqual(len(cycles), self.CYCLES)
        bars = page_cycle_bars(self.dom)
        self.assertEqual(sorted(bars), sorted(c["index"] for c in cycles))
        for c in cycles:
            self.assertAlmostEqual(bars[c["index"]][0], c["duration_ms"], delta=PAGE_MS_EPS, msg=c["index"])

    @_with_page
    def test_page_phase_segments_are_the_cycles_phases(self):
        want = {(c["index"], name): p["ms"] for c in self.profile["cycles"]
                for name, p in c["phases"].items() if p.get("ms")}
        got = {(int(a["data-cycle"]), html.unescape(a["data-phase"])): float(a["data-ms"])
               for a in page_rects(self.dom, "seg")}
        self.assertEqual(set(got), set(want))
        for key, ms in want.items():
            self.assertAlmostEqual(got[key], ms, delta=PAGE_MS_EPS, msg=key)
        # the rest of each cycle: its time in no phase
        for a in page_rects(self.dom, "rest"):
            c = self.profile["cycles"][int(a["data-cycle"])]
            in_phases = sum(p.get("ms", 0) for p in c["phases"].values())
            self.assertAlmostEqual(float(a["data-ms"]), c["duration_ms"] - in_phases, delta=2 * PAGE_MS_EPS)

    @_with_page
    def test_page_phase_histograms_and_splits(self):
        cycles = self.profile["cycles"]
        for name in self.profile["phases"]:
            ran = [c["phases"][name] for c in cycles if name in c["phases"]]
            if not ran:
                continue
            with self.subTest(phase=name):
                bins = [a for a in page_rects(self.dom, "bin") if html.unescape(a["data-phase"]) == name]
                self.assertEqual(sum(int(a["data-count"]) for a in bins), len(ran))
                self.assertAlmostEqual(float(bins[0]["data-lo"]), min(p["ms"] for p in ran), delta=PAGE_MS_EPS)
                self.assertAlmostEqual(float(bins[-1]["data-hi"]), max(p["ms"] for p in ran), delta=PAGE_MS_EPS)
                with_split = [p for p in ran if {"oncpu_ms", "runq_wait_ms", "offcpu_ms"} & set(p)]
                parts = {a["data-part"]: float(a["data-ms"]) for a in page_rects(self.dom, "part")
                         if html.unescape(a["data-phase"]) == name}
                if not with_split:
                    self.assertEqual(parts, {})
                    continue
                for part, key in (("oncpu", "oncpu_ms"), ("runq", "runq_wait_ms"), ("blocked", "offcpu_ms")):
                    self.assertAlmostEqual(parts[part], sum(p.get(key, 0) for p in with_split),
                                           delta=PAGE_MS_EPS * len(with_split), msg=part)

    @_with_page
    def test_page_side_data_measured_or_named(self):
        """Each source has a chart when profile.json has its readings, else
        a name on the one "not measured" line, never both."""
        p = self.profile
        m = re.search(r'<p class="not-measured">not measured: ([^<]*)</p>', self.dom)
        missing = m.group(1) if m else ""
        series = {html.unescape(s)
                  for s in re.findall(r'<polyline class="series"[^>]* data-series="([^"]*)"', self.dom)}
        timeline = p.get("memory", {}).get("timeline", [])
        self.assertEqual("RSS (MB)" in series, bool(timeline))
        self.assertEqual(re.search(r"\bRSS\b", missing) is not None, not timeline)
        if timeline:
            points = re.search(r'data-series="RSS \(MB\)" data-points="(\d+)"', self.dom)
            self.assertEqual(int(points.group(1)), len(timeline))
        zones = p.get("thermal", {}).get("zones", {})
        self.assertEqual("temperature (C)" in series, bool(zones))
        self.assertEqual(missing.startswith("temperature") or ", temperature" in missing,
                         not (series & {"temperature (C)", "hwmon temperature (C)"}))
        gpu = any(s.startswith("gpu ") for s in series)
        self.assertEqual(gpu, bool(p.get("gpu", {}).get("available")))
        self.assertEqual("GPU" in missing, not gpu)
        # a time chart per series, each with the cycles shaded behind
        self.assertEqual(self.dom.count('<g class="cycle-spans">'), self.dom.count('<svg class="chart side"'))

    @_with_page
    def test_page_no_network_request(self):
        urls = re.findall(r'\b(?:src|href)\s*=\s*["\']?([^"\'\s>]+)', self.html)
        urls += re.findall(r'url\(\s*["\']?([^"\')]+)', self.html)
        self.assertTrue(urls)  # the links to the files beside it
        self.assertEqual([u for u in urls if re.match(r"(?i)\s*(https?:)?//", u)], [])
        self.assertNotRegex(self.html, r"(?i)<script[^>]+src=")
        self.assertNotRegex(self.html, r"(?i)<link[^>]+stylesheet")

    @_with_page
    def test_page_split_table_per_phase(self):
        """The table's on-CPU, run queue and blocked ms per phase are the
        sums of profile.json's cycles (two decimals written)."""
        table = page_split_table(self.dom)
        want = {name: phase_split_sums(self.profile, name) for name in self.profile["phases"]}
        want = {k: v for k, v in want.items() if v is not None}
        self.assertTrue(want)
        self.assertEqual(set(table), set(want))
        for name, parts in want.items():
            for got, ms in zip(table[name], parts):
                self.assertAlmostEqual(got, ms, delta=0.006, msg=name)

    @_with_page
    def test_page_energy_only_where_measured(self):
        """The energy section stands where profile.json has energy readings;
        with none and no power mode known it is left out, and the domains
        not measured are no rows before the bottlenecks but the "not
        measured" line's power entry, with the reason."""
        e = self.profile.get("energy") or {}
        measured = bool(e.get("cycles_measured")) or e.get("peak_w") is not None
        mode = any(v is not None for v in (self.profile.get("system", {}).get("power") or {}).values())
        section = "<h2>Energy and power mode</h2>" in self.dom
        if measured:
            self.assertTrue(section)
        elif not mode:
            self.assertFalse(section)
        if not measured:
            self.assertNotRegex(self.dom, r"<th>no \w+ energy</th>")
            cpu = [x["reason"] for x in e.get("missing", []) if x["domain"] == "cpu"]
            line = re.search(r'<p class="not-measured">not measured: ([^<]*)</p>', self.dom)
            if cpu and line:
                self.assertIn("power (" + cpu[0] + ")", html.unescape(line.group(1)))

    @_with_page
    def test_page_top_functions(self):
        """The 15 busiest leaves with their shares: of stacks.python.folded
        where the recording wrote one (a Python target: the interpreter's
        own frames folded into the Python function running them, as the
        heading says), else of stacks.folded."""
        view = os.path.join(self.report_dir, "stacks.python.folded")
        python = os.path.exists(view)
        leaves = folded_leaves(read_folded(view if python else os.path.join(self.report_dir, "stacks.folded")))
        heading, rows = page_top_functions(self.dom)
        self.assertIsNotNone(heading)
        self.assertEqual("folded into the Python function" in heading, python, heading)
        assert_top_rows(self, rows, leaves, 15)


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
# ---- assertions against a fixture's own clock ----

STRICT_CYCLES = []  # (test, what, cycles checked alone, cycles): test_cycles prints them with -v


def experiment_args(cycles, infer, tokens, db, mode, workers=0):
    """The command-line arguments of the experiment fixture (tests/fixtures/experiment.c)."""
    return [str(a) for a in (cycles, infer, tokens, db, mode)] + ([str(workers)] if workers else [])


class ProbeTestCase(unittest.TestCase):
    """Assertions shared by the tests that hold traced times against a
    fixture's own: within REL of the fixture's figure, or ABS_MS."""
    REL, ABS_MS = 0.05, 1.0

    def assertClose(self, got, want, what, rel=None, abs_ms=None):
        rel = self.REL if rel is None else rel
        abs_ms = self.ABS_MS if abs_ms is None else abs_ms
        tol = max(rel * abs(want), abs_ms)
        self.assertLessEqual(abs(got - want), tol,
                             f"{what}: traced {got:.3f} ms, truth {want:.3f} ms (tolerance {tol:.3f} ms)")

    def assertValid(self, rec):
        """profile.json validates against the documented schema."""
        assert_schema(rec.profile)

    def strict(self, truth, i):
        """Whether cycle i is checked on its own: the fixture's thread was not
        preempted in it. On this 2-CPU VM, tests of other suites running at
        the same time can preempt the fixture between its own clock read and
        the probe's timestamp (the uprobe trap is a rescheduling point, and
        uprobe handling waits on locks other tracers take); such a cycle is
        only checked for not exceeding the truth. Run the suite on an idle
        machine (INFERTRACE_TEST_VERBOSE=1 prints how many cycles were checked)."""
        return not truth.get("preempted", [0] * (i + 1))[i]

    def assertPerCycle(self, rec, truth, got, want, what, rel=None, abs_ms=None, upper=None):
        """got[i] vs want[i] for the cycles in which the fixture was not
        preempted; in the others got[i] may not exceed upper[i] (the widest
        window the traced span can hold; want[i] when not given). Where the
        fixture gives its caller's window (upper), a strict cycle lies
        between its own clock reads and its caller's: the probes' traps,
        and the first hit's setup (the uprobe's out-of-line slot, which can
        wait for the mm lock), fall between the two."""
        rel = self.REL if rel is None else rel
        abs_ms = self.ABS_MS if abs_ms is None else abs_ms
        checked = 0
        caller = upper is not None
        upper = want if upper is None else upper
        for i, (g, w) in enumerate(zip(got, want)):
            if self.strict(truth, i) and caller:
                tol = max(rel * w, abs_ms)
                self.assertGreaterEqual(g, w - tol, f"cycle {i} {what}: traced {g:.3f} ms, own clock {w:.3f} ms")
                self.assertLessEqual(g, upper[i] + tol,
                                     f"cycle {i} {what}: traced {g:.3f} ms, caller's window {upper[i]:.3f} ms")
                checked += 1
            elif self.strict(truth, i):
                self.assertClose(g, w, f"cycle {i} {what}", rel, abs_ms)
                checked += 1
            else:
                # preempted (or delayed in the uprobe path): the traced time may
                # miss the delay, never exceed the widest window by much
                u = upper[i]
                self.assertLessEqual(g, u + max(rel * u, abs_ms), f"cycle {i} {what}")
        STRICT_CYCLES.append((self.id(), what, checked, len(got)))

    def assertPhase(self, rec, name, truth, key, calls_per_cycle=1, cycles=None, upper_key=None):
        """Each cycle's phase ms (and calls) against the fixture's per-cycle
        truth[key]; truth[upper_key], where given, is the caller's window
        around the call, which bounds a preempted cycle's phase when the
        fixture times the phase inside its own function."""
        cyc = rec.profile["cycles"]
        cycles = list(range(len(cyc))) if cycles is None else cycles
        got = []
        for i in cycles:
            ph = cyc[i]["phases"].get(name)
            self.assertIsNotNone(ph, f"cycle {i} has no phase {name}: {cyc[i]}")
            got.append(ph["ms"])
            if calls_per_cycle is not None:
                self.assertEqual(ph["calls"], calls_per_cycle, f"cycle {i} phase {name} calls")
        sub = dict(truth, preempted=[truth.get("preempted", [0] * len(cyc))[i] for i in cycles])
        upper = truth[upper_key] if upper_key else truth[key]
        self.assertPerCycle(rec, sub, got, [truth[key][i] for i in cycles], f"phase {name}",
                            upper=[upper[i] for i in cycles])

    def assertCycleTimes(self, rec, truth, cycles=None):
        cyc = rec.profile["cycles"]
        cycles = list(range(len(cyc))) if cycles is None else cycles
        sub = dict(truth, preempted=[truth.get("preempted", [0] * len(cyc))[i] for i in cycles])
        # a cycle's probes fire at the call and the return of its function,
        # outside the function's own clock reads: the caller's window
        # (call_ms, where the fixture gives it) bounds a preempted cycle
        upper = truth.get("call_ms", truth["cycle_ms"])
        self.assertPerCycle(rec, sub, [cyc[i]["duration_ms"] for i in cycles],
                            [truth["cycle_ms"][i] for i in cycles], "duration",
                            upper=[upper[i] for i in cycles])

    def assertConsistent(self, rec, inference="llm_inference"):
        """percent_of_cycle, totals, aggregates and tokens/s agree with the cycles."""
        p = rec.profile
        cyc, agg = p["cycles"], p["aggregate_metrics"]
        total_cycle_ms = sum(c["duration_ms"] for c in cyc)
        self.assertEqual(agg["total_cycles"], len(cyc))
        durs = sorted(c["duration_ms"] for c in cyc)
        self.assertAlmostEqual(agg["avg_cycle_ms"], statistics.mean(durs), places=3)
        self.assertAlmostEqual(agg["max_cycle_ms"], durs[-1], places=3)
        self.assertAlmostEqual(agg["p50_cycle_ms"], statistics.median(durs), places=3)
        self.assertLessEqual(agg["p50_cycle_ms"], agg["p95_cycle_ms"] + 1e-9)
        self.assertLessEqual(agg["p95_cycle_ms"], agg["p99_cycle_ms"] + 1e-9)
        self.assertLessEqual(agg["p99_cycle_ms"], agg["max_cycle_ms"] + 1e-9)
        for name, ph in p["phases"].items():
            total = sum(c["phases"].get(name, {}).get("ms", 0) for c in cyc)
            calls = sum(c["phases"].get(name, {}).get("calls", 0) for c in cyc)
            self.assertAlmostEqual(ph["total_ms"], total, places=3, msg=name)
            self.assertEqual(ph["calls"], calls, name)
            self.assertAlmostEqual(ph["percent_of_cycle"], 100 * total / total_cycle_ms, places=3, msg=name)
            if not calls:
                self.assertIsNone(ph["p50_ms"], name)
                continue
            self.assertLessEqual(ph["p50_ms"], ph["p95_ms"] + 1e-9)
            self.assertLessEqual(ph["p95_ms"], ph["p99_ms"] + 1e-9)
        tps = []
        for c in cyc:
            if "tokens" not in c.get("counts", {}):
                continue
            inf_ms = c["phases"].get(inference, {}).get("ms")
            if not inf_ms:
                continue
            want = c["counts"]["tokens"] / (inf_ms / 1000)
            self.assertAlmostEqual(c["tokens_per_second"], want, delta=want * 1e-6)
            tps.append(want)
        if tps:
            self.assertAlmostEqual(agg["avg_tokens_per_second"], statistics.mean(tps), delta=1e-6 * tps[0])

    def assertNoProbeLoss(self, rec):
        self.assertEqual(rec.profile["lost"].get("events", 0), 0, rec.profile["lost"])


# ---- peers found on the machine ----

def pythons():
    """{label: path} of the CPython 3.10+ interpreters present (pyenv builds,
    /usr/bin/python3.X)."""
    found = {}
    for p in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3")):
        found["pyenv-" + p.split("/")[-3]] = p
    for p in sorted(glob.glob("/usr/bin/python3.[0-9]*")):
        if re.fullmatch(r"python3\.\d+", os.path.basename(p)):
            found["system-" + os.path.basename(p)] = p
    out = {}
    for label, p in found.items():
        try:
            v = subprocess.run([p, "-c", "import sys; print(sys.version_info[1])"], text=True,
                               stdout=subprocess.PIPE, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        if v.isdigit() and 10 <= int(v) <= 13:
            out[label] = p
    return out


_pythons = None


def __getattr__(name):
    """PYTHONS: pythons(), found once, when a module first asks for it."""
    global _pythons
    if name == "PYTHONS":
        if _pythons is None:
            _pythons = pythons()
        return _pythons
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


GO = shutil.which("go") or ("/usr/lib/go/bin/go" if os.path.exists("/usr/lib/go/bin/go") else None)


def pprof(path, *args):
    """`go tool pprof -symbolize=none ARGS PATH`'s output."""
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), PPROF_TMPDIR="/tmp")
    p = subprocess.run([GO, "tool", "pprof", "-symbolize=none", *args, path], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, env=env)
    if p.returncode != 0:
        raise AssertionError(f"go tool pprof {' '.join(args)} failed: {p.stderr}")
    return p.stdout


def pprof_tags(text):
    """{key: {value: share}} from `pprof -tags` output."""
    out, key = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s*(\w+): Total", line)
        if m:
            key = m.group(1)
            out[key] = {}
            continue
        m = re.match(r"^\s*\S+\s+\(\s*([\d.]+)%\):\s+(.*)$", line)
        if m and key:
            out[key][m.group(2)] = float(m.group(1))
    return out


# ---- the llama.cpp demo (node-llama-cpp's libraries, tools/demo-setup.sh) ----

DEMO = os.path.join(ROOT, "demo")
LIBDIR = os.path.join(DEMO, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
_setup = None


def setup_demo():
    """Runs tools/demo-setup.sh once; the reason it failed, or None."""
    global _setup
    if _setup is None:
        p = subprocess.run([os.path.join(ROOT, "tools", "demo-setup.sh")], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _setup = "" if p.returncode == 0 else f"demo set-up failed: {p.stdout[-500:]}"
    return _setup or None


def driver_json(stdout):
    """The demo driver's own figures: its JSON line."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{") and '"driver"' in line:
            return json.loads(line)
    raise AssertionError(f"no driver JSON line in:\n{stdout[-2000:]}")


class DemoTestCase(unittest.TestCase):
    """Tests on the llama.cpp demo's libraries and models: skipped, with the
    reason, where tools/demo-setup.sh cannot install them."""

    def setUp(self):
        why = setup_demo()
        if why:
            self.skipTest(why)


def need(tool):
    """The path of a peer the deps step installs; fails (never skips) without it."""
    path = shutil.which(tool)
    if not path:
        raise AssertionError(f"{tool} is missing: run 'tools/install-deps.sh test' as root (make test does)")
    return path


def trace_llama(model, threads, cycles, tokens, driver_args=(), extra=()):
    """Records demo/driver.mjs on demo/models/MODEL with --preset llama.cpp
    (and extra): (recording, the driver's JSON). Skips the test when the demo
    cannot be set up."""
    why = setup_demo()
    if why:
        raise unittest.SkipTest(why)
    cmd = [os.path.join(DEMO, "bin", "node"), os.path.join(DEMO, "driver.mjs"),
           "--model", os.path.join(DEMO, "models", model), "--threads", str(threads),
           "--cycles", str(cycles), "--tokens", str(tokens), "--json"] + list(driver_args)
    # cycles begin on node's worker thread while the main thread may stay
    # blocked across several of them: its time is split only at the last
    # cycle's start (docs/limits.md, Scheduler and memory), so the main-thread wall
    # split is not checked here; the cycles' counts and times are
    r = record(["--preset", "llama.cpp"] + list(extra), cmd, timeout=300, wall_split=None)
    return r, driver_json(r.stdout)


def sanitize(name):
    """A name as the folded files write it: only `;` and newlines change."""
    return name.replace(";", ":").replace("\n", " ")


def library_symbols(path):
    """Function names of an ELF file as the folded stacks show them."""
    out = subprocess.run(["nm", "-C", "--defined-only", path], text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwWiI":
            names.add(sanitize(parts[2].split("@")[0]))
    return names


NAN = re.compile(r"\b(nan|-?inf|-?infinity)\b", re.I)
THREAD_ADVICE = ("cpu_oversubscribed", "Run fewer compute threads", "threads than CPUs")
# Samples inside the cycles needed to judge a 60% share: with 300 the share's
# standard error is under 3 points. A count, not a rate: the cycles' CPU time
# (and so the count at a given rate) depends on the CPU (1,200 at 99 Hz on
# one VM, 750 on a faster one).
MIN_IN_CYCLE = 300


def cpu_busy_s():
    """All CPUs' busy seconds so far (/proc/stat: everything but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


class DemoRun(unittest.TestCase):
    """One run of a demo script (SCRIPT, within TIMEOUT s) into a temporary
    directory; its profile, its driver's own JSON and its printed report.
    Shared by the node demo (test_demo) and the Python one (test_demo_python)."""
    SCRIPT, TIMEOUT, WHAT = "demo.sh", 240, "make demo"

    @classmethod
    def setUpClass(cls):
        why = setup_demo()
        if why:
            raise unittest.SkipTest(why)
        cls.tmp = tempfile.TemporaryDirectory(prefix="it-demo-")
        cls.out = os.path.join(cls.tmp.name, "out")
        busy0 = cpu_busy_s()
        p = subprocess.run([os.path.join(ROOT, "tools", cls.SCRIPT), BUILD], text=True, timeout=cls.TIMEOUT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=dict(os.environ, DEMO_OUT=cls.out))
        cls.busy_s = cpu_busy_s() - busy0
        cls.stdout = p.stdout
        if p.returncode:
            raise AssertionError(f"{cls.WHAT} failed ({p.returncode}):\n{p.stdout[-3000:]}")
        with open(os.path.join(cls.out, "profile.json")) as f:
            cls.profile = json.load(f)
        with open(os.path.join(cls.out, "driver.json")) as f:
            cls.driver = json.loads(f.read().strip().splitlines()[-1])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def in_cycle_samples(self):
        """(samples inside the cycles, those with their leaf in libllama or
        libggml by the libraries' own symbol tables: a lower bound, since a
        libc leaf called from ggml counts against)."""
        names = set()
        for lib in glob.glob(os.path.join(LIBDIR, "lib*.so")):
            if re.match(r"lib(llama|ggml)", os.path.basename(lib)):
                names |= library_symbols(lib)
        self.assertTrue(names)
        with open(os.path.join(self.out, "trace.json")) as f:
            ev = json.load(f)["traceEvents"]
        cycles = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "cycle"]
        self.assertEqual(len(cycles), self.driver["cycles"])
        inside = llama = 0
        for e in ev:
            if e.get("cat") != "sample" or not any(a <= e["ts"] < b for a, b in cycles):
                continue
            inside += 1
            if sanitize(e["name"]) in names:
                llama += 1
        return inside, llama


class DemoPageRun(ReportPageChecks, DemoRun):
    """A demo's run with its report.html rendered for ReportPageChecks: a
    bar per driver cycle. Subclass it as common.DemoPageRun (imported by
    name, its checks would run once more in the importing module)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.CYCLES = cls.driver["cycles"]
        cls.load_report(cls.out, cls.profile)


