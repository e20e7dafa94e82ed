# SPDX-License-Identifier: BSD-2-Clause
"""--checkpoint SECONDS --rotate N: one output directory per period of
SECONDS, the last N kept. The
fixture (tick_cycles) prints each cycle's index as it ends, so the test knows
by the fixture's own output how many cycles ran; the periods must hold each of
them exactly once."""
import gzip
import os
import subprocess
import unittest

from common import GO, INFERTRACE, fixture, load_json, need_root, pprof, record, unknown_keys

SPIN_MS, SLEEP_MS = 10, 5


def periods(out):
    return sorted(n for n in os.listdir(out) if n.isdigit())


def raw_samples(raw):
    """The sum of the first value of every sample in `pprof -raw` output."""
    total, inside = 0, False
    for line in raw.splitlines():
        if line.startswith("Samples:"):
            inside = True
        elif line.startswith("Locations"):
            inside = False
        elif inside and line.split() and line.split()[0].isdigit():
            total += int(line.split()[0])
    return total


@need_root
class RotateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exe = fixture("tick_cycles")

    def record_ticks(self, ncycles, *opts):
        r = record(["-q", "--cycle", "run_cycle", *opts], [self.exe, str(ncycles), str(SPIN_MS), str(SLEEP_MS)],
                   timeout=300, wall_split=None)
        ticks = [int(x) for x in r.stdout.split()]
        self.assertEqual(ticks, list(range(ncycles)))  # the fixture's own count
        return r.dir, ncycles

    def load(self, out, name):
        return load_json(os.path.join(out, name, "profile.json"))

    def check_periods(self, out, ran):
        names = periods(out)
        self.assertGreaterEqual(len(names), 3, names)
        self.assertEqual(names, [f"{i:04d}" for i in range(len(names))])
        seen, prev_end = set(), 0.0
        for name in names:
            prof = self.load(out, name)
            self.assertEqual(unknown_keys(prof), [], name)
            # the period's time range, stated and contiguous with the last
            m = prof["stop_reason"]
            self.assertIn(f"period {name} of 1 s (--checkpoint, --rotate)", m)
            start, end = (float(x) for x in m.split("recording start + ")[1].split(" s")[0].split(" .. "))
            self.assertAlmostEqual(start, prev_end, places=3)
            self.assertAlmostEqual(end - start, prof["duration_s"], places=2)
            prev_end = end
            keys = {(c["pid"], c["bpf_cycle"]) for c in prof["cycles"]}
            self.assertEqual(len(keys), len(prof["cycles"]))
            self.assertFalse(keys & seen, f"{name}: cycles counted twice")
            seen |= keys
            self.assertEqual(prof["aggregate_metrics"]["total_cycles"], len(prof["cycles"]))
            for f in ("stacks.folded", "profile.pb.gz", "trace.json", "flamegraph.svg", "report.html"):
                self.assertTrue(os.path.exists(os.path.join(out, name, f)), f"{name}/{f}")
            with gzip.open(os.path.join(out, name, "profile.pb.gz")) as f:
                self.assertGreater(len(f.read()), 0)
        self.assertEqual(len(seen), ran, "the periods' cycles are the fixture's cycles")
        self.assertFalse([n for n in os.listdir(out) if n.startswith(".")], "temporary directories left")
        return names

    def test_periods_partition_cycles(self):
        out, ran = self.record_ticks(300, "--checkpoint", "1", "--rotate", "1000")
        names = self.check_periods(out, ran)
        # a period's stacks are that period's samples, not the run's so far
        samples = []
        for name in names:
            with open(os.path.join(out, name, "stacks.folded")) as f:
                samples.append(sum(int(line.rsplit(" ", 1)[1]) for line in f))
        # detail sections cover the run from its start: the last one's total
        # is every sample, each in exactly one period's stacks
        self.assertEqual(sum(samples), self.load(out, names[-1])["samples"]["total"])
        self.assertLess(max(samples), sum(samples))
        # profile.pb.gz: a cycle's samples go whole to its period; over the
        # periods, each sample once
        if GO:
            self.assertEqual(sum(raw_samples(pprof(os.path.join(out, n, "profile.pb.gz"), "-raw",
                                                    "-sample_index=samples")) for n in names), sum(samples))

    def test_keep_bounds_directories(self):
        out, ran = self.record_ticks(400, "--checkpoint", "1", "--rotate", "2")
        names = periods(out)
        self.assertEqual(len(names), 2, names)
        last = self.load(out, names[-1])
        self.assertTrue(last["stop_reason"].startswith("target exited; period "), last["stop_reason"])
        self.assertEqual(int(names[0]) + 1, int(names[1]))
        self.assertGreaterEqual(int(names[0]), 2)  # earlier periods were written, then removed
        for name in names:
            self.assertEqual(unknown_keys(self.load(out, name)), [])

    def test_stale_periods_removed(self):
        out, _ = self.record_ticks(250, "--checkpoint", "1", "--rotate", "10")
        os.makedirs(os.path.join(out, "0099"))
        with open(os.path.join(out, "0099", "profile.json"), "w") as f:
            f.write("{}")
        subprocess.run([INFERTRACE, "record", "-q", "-o", out, "--checkpoint", "1", "--rotate", "10",
                        "--cycle", "run_cycle",
                        "--", self.exe, "20", str(SPIN_MS), str(SLEEP_MS)], capture_output=True, check=True,
                       timeout=120)
        self.assertNotIn("0099", periods(out))

    def test_bad_values(self):
        for opts, want in ((["--checkpoint", "1", "--rotate", "0"], "invalid --rotate '0'"),
                           (["--checkpoint", "1", "--rotate", "abc"], "invalid --rotate 'abc'"),
                           (["--checkpoint", "1", "--rotate", "1.5"], "invalid --rotate '1.5'"),
                           (["--rotate", "3"], "--rotate N needs --checkpoint SECONDS"),
                           (["--checkpoint", "0.5", "--rotate", "3"], "--checkpoint of at least 1 second")):
            r = subprocess.run([INFERTRACE, "record", *opts, "--", "true"], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0, opts)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn(want, lines[0])


if __name__ == "__main__":
    unittest.main()
