# SPDX-License-Identifier: BSD-2-Clause
"""Test driver: cmocka unit binaries (TAP output) + Python unittest integration
tests. Prints a summary line the CI reads: `N passed, N failed, N skipped`."""
import os
import subprocess
import sys
import unittest

# The timing-sensitive integration tests: each asserts a time, a rate or a
# share that a busy or slower machine could move. `make test-flaky` runs
# each of them RUNS times beside a CPU hog (tools/run-tests.sh BUILD flaky).
TIMING_SENSITIVE = [
    "test_gpu_inject.GpuInjectTest.test_gpu_mode_every_op_once",
    "test_gpu_inject.GpuInjectTest.test_drift_recovered",
    "test_gpu_inject.GpuInjectTest.test_transfer_copies",
    "test_gpu_inject.GpuInjectTest.test_multi_devices_streams",
    "test_gpu_inject.GpuInjectTest.test_sync_mode",
    "test_gpu_inject.GpuInjectTest.test_fixed_sampling_windows",
    "test_gpu_inject.GpuInjectTest.test_auto_sampling_from_the_launch_rate",
    "test_gpu_activity.GpuActivityTest.test_sampled_windows",
    "test_gpu_launch_stacks.GpuLaunchStacksTest.test_kernels_under_their_python_launcher",
    "test_gpu_launch_stacks.NativeLaunchStacksTest.test_kernels_under_their_native_launcher",
    "test_gpu_launch_stacks.NativeLaunchStacksTest.test_native_launcher_with_frame_pointers",
    "test_jit.NodeLoopTest.test_js_loop_suggested_as_a_phase",
    "test_probes_recursion.TestNeverReturns.test_longjmp_and_thread_exit_inside_phases",
    "test_unwind.UnwindTest.test_dwarf_stacks_complete",
    "test_unwind.UnwindTest.test_unnamed_root_counts_as_complete",
    "test_offcpu_stacks.OffcpuStacksTest.test_usleep_caller_kept_with_dwarf_lost_with_fp",
    "test_offcpu_stacks.OffcpuStacksTest.test_read_without_frame_pointers",
    "test_offcpu_stacks.OffcpuStacksTest.test_one_call_site_two_kernel_paths",
    "test_python.TestPythonFrames.test_loop_order_and_coverage",
    "test_python.TestPythonFrames.test_c_calls_back_into_python",
    "test_python_cycles.TestPythonCycles.test_loop_in_main_whole_analysis",
    "test_python_sqlite.TestSqlitePreset.test_module_level_loop_timed_natively",
    "test_sched.SchedTest.test_sleep_spin_cycles",
    "test_sched.SchedTest.test_sleep_spin_cycles_beside_cpu_hog",
    "test_sched.SchedTest.test_wait_behind_a_hog",
    "test_sched.SchedTest.test_wait_behind_own_threads",
    "test_edges.EdgesTest.test_cpu_bound_phases_back_to_back",
    "test_edges.EdgesTest.test_sleep_inside_each_phase",
    "test_edges.EdgesTest.test_busy_thread_on_the_same_cpu",
    "test_wakeup.WakeupTest.test_blocked_is_waiting_for_thread",
    "test_wakeup.WakeupTest.test_tail_cause_names_the_thread_wait",
    "test_requests.RequestsTest.test_two_sequences_per_batch",
    "test_requests.RequestsTest.test_node_llama_cpp_server",
    "test_requests.RequestsTest.test_context_slope_of_a_long_generation",
    "test_requests.RequestsTest.test_cpu_hog_halfway_is_contention_not_context",
    "test_tune.TuneFixtureTest.test_threads_known_best",
    "test_tune.TuneFixtureTest.test_identical_settings",
    "test_live.TopTest.test_top_in_tmux_shows_cycles_growing_and_phases_and_ends_on_q",
    "test_live.TopTest.test_top_on_a_python_loop_keeps_its_last_screen",
    "test_gpu_activity.GpuActivityTest.test_transfer_bound",
    "test_live.MetricsTest.test_a_real_prometheus_scrapes_the_recording",
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_unit(build):
    passed = failed = skipped = 0
    tdir = os.path.join(build, "tests")
    bins = sorted(f for f in os.listdir(tdir) if f.startswith("test_") and not f.endswith(".d")) \
        if os.path.isdir(tdir) else []
    for b in bins:
        env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")
        p = subprocess.run([os.path.join(tdir, b)], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = bad = 0
        for line in p.stdout.splitlines():
            if line.startswith("ok ") or line.startswith("not ok "):
                seen += 1
                if "# SKIP" in line:
                    skipped += 1
                elif line.startswith("ok "):
                    passed += 1
                else:
                    failed += 1
                    bad += 1
            if line.startswith("not ok") or line.startswith("#") or "SKIP" in line:
                print(f"  [{b}] {line}")
        # a crash, or a sanitizer's report after the last test, with no
        # failing test to show for it
        if p.returncode != 0 and bad == 0:
            failed += 1
            print(f"  [{b}] crashed (exit {p.returncode}):\n{p.stdout[-2000:]}")
        print(f"unit {b}: {seen} tests, exit {p.returncode}")
    return passed, failed, skipped


def run_docs(build):
    """tools/check-docs.py: docs/commands.md against the option table, and
    every relative link and anchor of the Markdown pages (TAP lines)."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "check-docs.py"), build],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    passed = failed = 0
    for line in p.stdout.splitlines():
        if line.startswith("ok "):
            passed += 1
        elif line.startswith("not ok "):
            failed += 1
        if line.startswith("not ok") or line.startswith("#"):
            print(f"  [docs] {line}")
    if p.returncode != 0 and failed == 0:
        failed += 1
        print(f"  [docs] exit {p.returncode}:\n{p.stdout[-2000:]}")
    print(f"docs: {passed + failed} checks, exit {p.returncode}")
    return passed, failed, 0


def run_integration(build, modules=()):
    """All integration tests, or those of the named modules (test_foundation)."""
    os.environ["INFERTRACE_BUILD"] = os.path.abspath(build)
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    if modules:
        suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    else:
        suite = unittest.defaultTestLoader.discover(os.path.join(ROOT, "tests", "integration"),
                                                     pattern="test_*.py",
                                                     top_level_dir=os.path.join(ROOT, "tests", "integration"))
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    for t, why in res.skipped:
        print(f"  skipped {t.id()}: {why}")
    return res.testsRun - failed - skipped, failed, skipped


def run_unit_arm64():
    """The arm64 unit tests under qemu-user (tools/run-tests-arm64.sh), when
    `make test` cross-built them."""
    adir = os.path.join(ROOT, "build", "arm64")
    why = os.path.join(adir, "UNAVAILABLE")
    if os.path.exists(why):
        with open(why) as f:
            print(f"unit-arm64: skipped: {f.read().strip()}")
        return 0, 0, 1
    if not os.path.isdir(os.path.join(adir, "tests")):
        return 0, 0, 0
    p = subprocess.run([os.path.join(ROOT, "tools", "run-tests-arm64.sh"), adir], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = p.stdout.strip().splitlines()
    for line in lines[:-1]:
        print(line)
    try:
        words = lines[-1].replace(",", "").split()
        return int(words[0]), int(words[2]), int(words[4])
    except (IndexError, ValueError):
        print(f"unit-arm64: no summary line (exit {p.returncode}):\n{p.stdout[-2000:]}")
        return 0, 1, 0


def flaky_selection(names):
    """The TIMING_SENSITIVE tests that NAMES select (each a full id, a
    module, a module.Class, or a test method's name); all when none."""
    if not names:
        return list(TIMING_SENSITIVE)
    out = []
    for name in names:
        hit = [t for t in TIMING_SENSITIVE
               if t == name or t.startswith(name + ".") or t.endswith("." + name)]
        if not hit:
            sys.exit(f"run_tests: {name}: not in TIMING_SENSITIVE (tools/run_tests.py)")
        out += [t for t in hit if t not in out]
    return out


def run_flaky(build, names, runs):
    """Each selected timing-sensitive test RUNS times beside a busy loop
    pinned to the last CPU (the machine loaded as a shared CI runner is);
    prints a pass count per test. Returns (passed, failed, skipped) runs."""
    os.environ["INFERTRACE_BUILD"] = os.path.abspath(build)
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    tests = flaky_selection(names)
    cpu = (os.cpu_count() or 1) - 1
    hog = subprocess.Popen(["taskset", "-c", str(cpu), "/bin/sh", "-c", "while :; do :; done"])
    counts = {}
    try:
        for t in tests:
            ok = bad = skip = 0
            for i in range(runs):
                suite = unittest.defaultTestLoader.loadTestsFromName(t)
                res = unittest.TextTestRunner(verbosity=0, stream=sys.stdout).run(suite)
                if res.skipped:
                    skip += 1
                elif res.wasSuccessful():
                    ok += 1
                else:
                    bad += 1
                print(f"flaky {t} run {i + 1}/{runs}: {'skipped' if res.skipped else 'ok' if res.wasSuccessful() else 'FAILED'}",
                      flush=True)
            counts[t] = (ok, bad, skip)
    finally:
        hog.kill()
        hog.wait()
    print(f"\ntiming-sensitive tests, {runs} runs each beside a CPU hog on CPU {cpu}:")
    for t, (ok, bad, skip) in counts.items():
        print(f"  {ok:3d}/{runs} passed  {t}" + (f" ({skip} skipped)" if skip else ""))
    return (sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values()),
            sum(c[2] for c in counts.values()))


def main():
    build, which, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    if which == "flaky":
        totals = run_flaky(build, modules, int(os.environ.get("RUNS") or 10))
        print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
        sys.exit(1 if totals[1] else 0)
    totals = [0, 0, 0]
    if which in ("all", "unit"):
        for i, n in enumerate(run_unit(build)):
            totals[i] += n
        for i, n in enumerate(run_unit_arm64() if not build.endswith("-asan") else (0, 0, 0)):
            totals[i] += n
        # the same binary's --man either way: once, with the plain build
        for i, n in enumerate(run_docs(build) if not build.endswith("-asan") else (0, 0, 0)):
            totals[i] += n
    if which in ("all", "integration"):
        for i, n in enumerate(run_integration(build, modules)):
            totals[i] += n
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    sys.exit(1 if totals[1] else 0)


if __name__ == "__main__":
    main()
