# SPDX-License-Identifier: BSD-2-Clause
"""Test driver: cmocka unit binaries (TAP output) + Python unittest integration
tests. Prints a summary line the CI reads: `N passed, N failed, N skipped`."""
import os
import subprocess
import sys
import unittest

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


def main():
    build, which, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    totals = [0, 0, 0]
    if which in ("all", "unit"):
        for i, n in enumerate(run_unit(build)):
            totals[i] += n
        for i, n in enumerate(run_unit_arm64() if not build.endswith("-asan") else (0, 0, 0)):
            totals[i] += n
    if which in ("all", "integration"):
        for i, n in enumerate(run_integration(build, modules)):
            totals[i] += n
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    sys.exit(1 if totals[1] else 0)


if __name__ == "__main__":
    main()
