# SPDX-License-Identifier: BSD-2-Clause
"""Python frames in stacks.folded and offcpu.folded, on every CPython found
on the machine (pyenv builds, /usr/bin/python3.X): the fixture's functions
appear as `qualname (py_stacks.py)`, in call order, in place of the
eval-loop frames; recursion, threads, an asyncio task and a C function
calling back into Python keep their real stacks. An interpreter of an
unsupported version gets a warning and native stacks."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from common import FIXTURES, INFERTRACE, PYTHONS, fixture, need_root, record

FIXTURE = os.path.join(FIXTURES, "py_stacks.py")
EVAL = "_PyEval_EvalFrameDefault"
PYFRAME = re.compile(r"^(.*) \(([^()]*)\)$")


def fixture_frames(stack):
    """The frames of py_stacks.py in a folded stack, as (index, qualname)."""
    out = []
    for i, f in enumerate(stack.split(";")):
        m = PYFRAME.match(f)
        if m and m.group(2) == "py_stacks.py":
            out.append((i, m.group(1)))
    return out


def has_python(stack):
    return any(PYFRAME.match(f) and f.endswith(".py)") or f.endswith(">)") for f in stack.split(";"))


@need_root
@unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
class TestPythonFrames(unittest.TestCase):
    def run_mode(self, python, mode, cycles):
        return record(["-F", "199"], [python, FIXTURE, mode, str(cycles)])

    def samples_with(self, folded, seq):
        """Samples whose py_stacks.py frames start with seq (root first)."""
        return sum(c for s, c in folded.items() if [n for _, n in fixture_frames(s)][:len(seq)] == seq)

    def test_loop_order_and_coverage(self):
        cycles = 15
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "loop", cycles)
                self.assertNotIn("not supported", rec.stderr)
                on = rec.folded()
                spin = self.samples_with(on, ["<module>", "main", "run_cycle", "phase_spin", "spin"])
                # 30 ms of CPU per cycle at 199 Hz: about 6 samples a cycle
                self.assertGreater(spin, cycles, label)
                for s in on:
                    names = [n for _, n in fixture_frames(s)]
                    if "phase_spin" in names:
                        self.assertEqual(names[:4], ["<module>", "main", "run_cycle", "phase_spin"], s)
                        self.assertNotIn(EVAL, s.split(";"), s)
                # samples in the interpreter (Python frames, or the eval loop
                # left native) that carry Python frames
                interp = sum(c for s, c in on.items() if has_python(s) or EVAL in s.split(";"))
                with_py = sum(c for s, c in on.items() if has_python(s))
                print(f"\n{label}: {with_py}/{interp} samples in the interpreter carry Python frames "
                      f"({100.0 * with_py / interp:.1f}%)")
                bare = sorted(((c, s) for s, c in on.items() if EVAL in s.split(";") and not has_python(s)),
                              reverse=True)[:5]
                self.assertGreaterEqual(with_py / interp, 0.9,
                                        f"{label}: lost {rec.profile['lost']}, without Python frames: {bare}")
                # held at its exec (and at libpython's mapping) until found
                me = rec.profile["self"]
                self.assertGreaterEqual(me["target_stops"], 1, label)
                # each stop lasted from its record to the SIGCONT: some time,
                # the longest no more than all, all within the recording
                self.assertGreater(me["target_stopped_ms"], 0, label)
                self.assertLessEqual(me["target_stop_max_ms"], me["target_stopped_ms"], label)
                self.assertLess(me["target_stopped_ms"], rec.profile["duration_s"] * 1000, label)
                off = rec.folded("offcpu.folded")
                slept_us = self.samples_with(off, ["<module>", "main", "run_cycle", "phase_sleep"])
                # each cycle sleeps 20 ms (at least that, as nanosleep guarantees)
                self.assertGreaterEqual(slept_us, cycles * 20000 * 0.95, label)
                for s in off:
                    names = [n for _, n in fixture_frames(s)]
                    if "phase_sleep" in names:
                        self.assertEqual(names, ["<module>", "main", "run_cycle", "phase_sleep"], s)

    def test_recursion_50(self):
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "recurse", 10)
                deepest = 0
                for s, c in rec.folded().items():
                    names = [n for _, n in fixture_frames(s)]
                    if names[-1:] != ["spin"]:
                        continue
                    self.assertEqual(names[:2], ["<module>", "main"], s)
                    body = names[2:-1]
                    self.assertEqual(set(body), {"recurse"}, s)
                    deepest = max(deepest, len(body))
                # recurse(50) .. recurse(0): 51 frames
                self.assertEqual(deepest, 51, label)

    def test_two_threads(self):
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "threads", 15)
                on, off = rec.folded(), rec.folded("offcpu.folded")
                for me, other in (("worker_a", "worker_b"), ("worker_b", "worker_a")):
                    mine = {s: c for s, c in on.items() if me in [n for _, n in fixture_frames(s)]}
                    self.assertGreater(sum(mine.values()), 0, f"{label}: no sample in {me}")
                    for s in mine:
                        names = [n for _, n in fixture_frames(s)]
                        self.assertNotIn(other, names, s)
                        # spinning, or taking the GIL back after its sleep
                        self.assertIn(names, ([me, "spin"], [me]), s)
                        self.assertNotIn("main", names, s)  # a thread's own stack, not the main one
                    slept = sum(c for s, c in off.items() if [n for _, n in fixture_frames(s)] == [me])
                    self.assertGreater(slept, 0, f"{label}: {me} blocked nowhere")

    def test_asyncio_task(self):
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "asyncio", 15)
                task = {s: c for s, c in rec.folded().items()
                        if [n for _, n in fixture_frames(s)][-2:] == ["task_coro", "spin"]}
                self.assertGreater(sum(task.values()), 0, label)
                for s in task:
                    frames = s.split(";")
                    # the task runs under the event loop's Python frames (3.10
                    # names carry no class: co_name)
                    self.assertTrue(any(re.fullmatch(r"(BaseEventLoop\.)?run_forever \(base_events\.py\)", f)
                                        for f in frames), s)

    def test_c_calls_back_into_python(self):
        vdso = vdso_functions()
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "callback", 10)
                n = cut_in_vdso = 0
                for s, c in rec.folded().items():
                    ff = fixture_frames(s)
                    names = [x for _, x in ff]
                    if "sort_key" not in names:
                        continue
                    n += c
                    # sorted() (native) lies between its caller and the key function
                    if (names[:4] != ["<module>", "main", "sort_cycle", "sort_key"] or
                            ff[3][0] - ff[2][0] <= 1) and unwound_short_in_vdso(s, ff[-1][0], vdso):
                        cut_in_vdso += c
                        continue
                    self.assertEqual(names[:4], ["<module>", "main", "sort_cycle", "sort_key"], s)
                    i_cycle, i_key = ff[2][0], ff[3][0]
                    self.assertGreater(i_key - i_cycle, 1, s)
                self.assertGreater(n, 0, label)
                # measured: none in 3,700 samples of this loop at 199 and 999 Hz
                self.assertLessEqual(cut_in_vdso, max(1, n // 100), (label, cut_in_vdso, n))


    def test_python_view(self):
        """stacks.python.folded, py-spy's default view: the same samples as
        stacks.folded, each Python stack's frames in the same order, with
        nothing root-ward of the first Python frame and none of the
        interpreter's own native frames (its executable's or libpython's)
        below it; libc's and the kernel's frames stay."""
        # the interpreter's own functions (an extension module's PyInit_*
        # lives in its own .so and stays)
        interp = re.compile(r"^(?!PyInit_)(_?Py[A-Z_a-z]|python3|libpython|_PyEval)")
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec = self.run_mode(python, "loop", 10)
                full = rec.folded()
                view = rec.folded("stacks.python.folded")
                self.assertEqual(sum(view.values()), sum(full.values()), label)

                def by_python(folded):
                    out = {}
                    for s, c in folded.items():
                        key = tuple(n for _, n in fixture_frames(s))
                        out[key] = out.get(key, 0) + c
                    return out
                self.assertEqual(by_python(view), by_python(full), label)
                # the full stacks hold the interpreter's frames; the view does not
                self.assertTrue(any(interp.match(f) for s in full for f in s.split(";")[1:]), label)
                for s in view:
                    frames = s.split(";")
                    if not fixture_frames(s):
                        continue
                    self.assertTrue(PYFRAME.match(frames[1]), s)
                    self.assertFalse([f for f in frames[1:] if interp.match(f)], s)


def vdso_functions():
    """The names of the vDSO's functions (the kernel maps one image into
    every process: this one's names the fixture's)."""
    with open("/proc/self/maps") as f:
        span = [l.split()[0] for l in f if l.rstrip().endswith("[vdso]")]
    if not span:
        return set()
    start, end = (int(x, 16) for x in span[0].split("-"))
    with open("/proc/self/mem", "rb") as f:
        f.seek(start)
        image = f.read(end - start)
    with tempfile.NamedTemporaryFile(suffix=".so") as tmp:
        tmp.write(image)
        tmp.flush()
        out = subprocess.run(["nm", "-D", "--defined-only", tmp.name], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    return {w[2].split("@")[0] for w in (l.split() for l in out.splitlines()) if len(w) == 3}


def unwound_short_in_vdso(stack, last_py, vdso):
    """A sample whose native unwinding stopped at its first step out of the
    vDSO: its user frames after the last Python frame are [unknown] and a
    vDSO function (kernel frames after them). The vDSO is unwound by frame
    pointer (docs/limits.md, Stacks and unwinding): at the first two instructions of
    its clock_gettime and after the `pop %rbp` of its return, the frame
    pointer is still or again the caller's (glibc's, built without frame
    pointers), and the return address read through it is no code. Python's
    time.thread_time() reaches the vDSO's clock_gettime at every call of the
    fixture's spin loop."""
    user = [f for f in stack.split(";")[last_py + 1:] if not f.endswith("_[k]")]
    return len(user) == 2 and user[0] == "[unknown]" and (user[1] in vdso or user[1].startswith("[vdso]"))


@need_root
class TestUnsupportedPython(unittest.TestCase):
    def test_warning_and_native_stacks(self):
        fake = fixture("py_fake")
        rec = record([], [fake, "0.3"])
        self.assertEqual(rec.proc.returncode, 0)
        warn = [l for l in rec.stderr.splitlines() if "not supported" in l]
        self.assertEqual(len(warn), 1, rec.stderr)
        self.assertRegex(warn[0], r"^infertrace record: warning: Python 3\.9 .* is not supported")
        self.assertGreater(sum(c for s, c in rec.folded().items() if "fake_spin" in s), 0)


PHASES_FIXTURE = os.path.join(FIXTURES, "py_phases.py")


@need_root
@unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
class TestPySpecs(unittest.TestCase):
    """`py:` specs against py_phases.py's own perf_counter figures: a cycle per
    run_cycle call, and phases infer (spins on the thread's CPU clock), rest
    (sleeps) and store (SQLite inserts and a commit)."""

    CYCLES = 8

    def run_phases(self, python, specs):
        tmp = tempfile.mkdtemp(prefix="it-py-")
        truth_path = os.path.join(tmp, "truth.json")
        rec = record(specs, [python, PHASES_FIXTURE, str(self.CYCLES), truth_path, os.path.join(tmp, "db.sqlite")])
        with open(truth_path) as f:
            truth = json.load(f)
        return rec, truth

    def check_phase_means(self, label, rec, truth, phases):
        cycles = rec.profile["cycles"]
        # each edge lies between two observations of the thread: on a busy
        # machine they can be further apart than usual, and the run reports
        # how far (the mean gap around an edge)
        res = max((p["python"]["resolution_ms_mean"] or 0) for p in rec.profile["probes"] if "python" in p)
        for ph in phases:
            traced = sum(c["phases"][ph]["ms"] for c in cycles) / len(cycles)
            own = sum(t[ph] for t in truth) / len(truth)
            # the method's bound: 5% of the phase, or 1 ms, or the two edges' mean gaps
            self.assertLessEqual(abs(traced - own), max(0.05 * own, 1.0, 2 * res),
                                 f"{label} {ph}: traced {traced:.2f} ms, script {own:.2f} ms, "
                                 f"edges placed within {res:.2f} ms")
            for c in cycles:
                self.assertEqual(c["phases"][ph]["calls"], 1, f"{label} {ph} cycle {c['index']}")

    def test_cycles_and_phases(self):
        specs = ["--cycle", "py:run_cycle", "--phase", "infer=py:infer", "--phase", "rest=py:py_phases:rest",
                 "--phase", "store=py:py_phases.py:store"]
        for label, python in PYTHONS.items():
            with self.subTest(python=label):
                rec, truth = self.run_phases(python, specs)
                self.assertEqual(rec.profile["aggregate_metrics"]["total_cycles"], self.CYCLES, label)
                self.assertEqual(len(rec.profile["cycles"]), len(truth), label)
                self.check_phase_means(label, rec, truth, ["infer", "rest", "store"])
                for c, t in zip(rec.profile["cycles"], truth):
                    self.assertLessEqual(abs(c["duration_ms"] - t["cycle_ms"]), max(0.05 * t["cycle_ms"], 1.0),
                                         f"{label} cycle {c['index']}")
                py = [p for p in rec.profile["probes"] if p["spec"] == "py:run_cycle"][0]
                self.assertEqual(py["hits"], self.CYCLES)
                self.assertGreater(py["python"]["observations"], self.CYCLES)
                res = py["python"]
                self.assertGreater(res["edges_between_observations"], 0)
                self.assertLessEqual(res["resolution_ms_mean"], res["resolution_ms_max"])
                # Python frames in call order, on-CPU (infer spins) and off-CPU (rest sleeps)
                on = [s.split(";") for s in rec.folded() if "spin (py_phases.py)" in s]
                self.assertTrue(on, label)
                for s in on:
                    names = [f for f in s if f.endswith("(py_phases.py)")]
                    self.assertEqual(names[:5], ["<module> (py_phases.py)", "main (py_phases.py)",
                                                 "run_cycle (py_phases.py)", "infer (py_phases.py)",
                                                 "spin (py_phases.py)"], s)
                # per-phase stacks: the stacks with the phase's function on them
                self.assertTrue(rec.folded("stacks.infer.folded"), label)
                for s in rec.folded("stacks.infer.folded"):
                    # infer is on it, as the leaf when a sample fell in its
                    # own bytecode (between two calls of spin)
                    self.assertTrue(";infer (py_phases.py);" in s or s.endswith(";infer (py_phases.py)"), s)
                self.assertTrue(any("rest (py_phases.py)" in s for s in rec.folded("offcpu.rest.folded")), label)
                off = [s.split(";") for s in rec.folded("offcpu.folded") if "rest (py_phases.py)" in s]
                self.assertTrue(off, label)
                for s in off:
                    names = [f for f in s if f.endswith("(py_phases.py)")]
                    self.assertEqual(names[:4], ["<module> (py_phases.py)", "main (py_phases.py)",
                                                 "run_cycle (py_phases.py)", "rest (py_phases.py)"], s)

    def test_cycle_marker(self):
        python = next(iter(PYTHONS.values()))
        rec, truth = self.run_phases(python, ["--cycle-marker", "py:run_cycle", "--phase", "infer=py:infer",
                                              "--count", "stores=py:store"])
        self.assertEqual(rec.profile["aggregate_metrics"]["cycles_source"], "cycle_marker")
        self.assertEqual(rec.profile["aggregate_metrics"]["total_cycles"], self.CYCLES)
        self.assertEqual([c["counts"]["stores"] for c in rec.profile["cycles"]], [1] * self.CYCLES)
        self.check_phase_means("marker", rec, truth, ["infer"])
        report = subprocess.run([INFERTRACE, "report", rec.dir], text=True, stdout=subprocess.PIPE, check=True).stdout
        self.assertRegex(report, r"Python phases \(py: specs\): \d+ observations; edges placed between two "
                                 r"observations within [0-9.]+ ms on average, [0-9.]+ ms at most")

    def test_misspelt_name_offers_the_nearest_and_strict_fails(self):
        """A py: name no stack showed: the warning offers the nearest
        qualnames the run saw; with --strict the run fails with exit 7,
        its outputs written."""
        python = next(iter(PYTHONS.values()))
        tmp = tempfile.mkdtemp(prefix="it-py-")
        cmd = [python, PHASES_FIXTURE, "4", os.path.join(tmp, "truth.json"), os.path.join(tmp, "db.sqlite")]
        specs = ["--cycle-marker", "py:run_cycle", "--phase", "infer=py:infr"]
        rec = record(specs, cmd)
        self.assertRegex(rec.stderr, r"warning: 'py:infr' was never seen on a Python stack \(.*\); "
                                     r"nearest seen: py:infer\b")
        rec = record(["--strict"] + specs, cmd, check=False)
        self.assertEqual(rec.proc.returncode, 7, rec.stderr)
        self.assertRegex(rec.stderr, r"error: 'py:infr' was never seen on a Python stack .*nearest seen: py:infer")
        self.assertIsNotNone(rec.profile)
        self.assertTrue(rec.profile["config"]["strict"])

    def test_not_python(self):
        rec = record(["--cycle", "py:run_cycle"], ["sleep", "0.2"], wall_split=None)
        self.assertIn("infertrace record: warning: 'py:run_cycle' was never seen on a Python stack", rec.stderr)
        self.assertEqual(rec.profile["aggregate_metrics"]["total_cycles"], 0)

    def test_bad_spec(self):
        rec = record(["--phase", "x=py:"], ["true"], check=False, wall_split=None)
        self.assertNotEqual(rec.proc.returncode, 0)
        self.assertRegex(rec.stderr, r"infertrace record: --phase x: 'py:': expected py:QUALNAME")


if __name__ == "__main__":
    unittest.main()
