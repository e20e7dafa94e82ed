# SPDX-License-Identifier: BSD-2-Clause
"""Off-CPU user stacks as complete as on-CPU ones (--call-graph dwarf, the
default): a blocking system call's user stack is copied when the call
returns and unwound with .eh_frame, so the frames glibc's wrappers hide from
frame pointers are there. Ground truth by construction: the fixture
(tests/fixtures/offcpu_calls.c) blocks only in usleep() called from db_write,
or in read() called from wait_input, and measures its own time in them."""
import json
import os
import unittest

import common

@common.need_root
class OffcpuStacksTest(unittest.TestCase):
    def check_blocked_total(self, rec, truth, in_frame):
        """All the process's blocked time lies in the fixture's blocking call:
        its stacks hold at most the fixture's own time in the call, plus its
        time in the other calls that can block (other_ms: short blocks are
        sampled by time, a window's whole time weighed on one block's stack,
        so a pthread_join's wait can land on the call's stack; measured: a
        5 ms join under load), and at least the call's time less what the
        process waited for a CPU and the CPU time it ran inside the call (by
        its own thread clock: the system call's entry and exit, the tracer's
        programs there)."""
        p = rec.profile
        comm = os.path.basename(rec.proc.args[-4])[:15]
        blocked = common.offcpu_ms(rec.folded("offcpu.folded"), in_frame, comm)
        self.assertLessEqual(blocked, truth["blocked_ms"] + truth["other_ms"] + 0.5, truth)
        self.assertGreaterEqual(blocked + p["sched"]["runq_wait_ms"] + truth["call_cpu_ms"] +
                                0.1 * truth["cycles"] + 1.0, truth["blocked_ms"])
        return blocked

    def test_usleep_caller_kept_with_dwarf_lost_with_fp(self):
        exe = common.fixture("offcpu_calls_fp")
        rec = common.record([], [exe, "sleep", "30", "5"])
        truth = common.truth_of(rec)
        folded = rec.folded("offcpu.folded")
        top = max(folded, key=folded.get)
        # the whole chain, through glibc's usleep/nanosleep wrappers
        for frame in ("main", "run_cycle", "db_write", "usleep", "do_nanosleep_[k]"):
            self.assertIn(frame, top.split(";"), top)
        q = rec.profile["offcpu"]["stack_quality"]
        self.assertTrue(q["method"].startswith("dwarf"), q)
        self.assertGreaterEqual(q["complete_percent"], 95, q)
        self.assertEqual(q["dwarf"]["sent"], q["dwarf"]["records"])
        self.assertEqual(q["dwarf"]["lost"], 0, q)
        # the 5 ms sleeps are sampled (under the default 10 ms period), yet
        # each call that blocked, by the fixture's own count of its
        # voluntary context switches in the calls, has its trace slice
        self.assertGreater(truth["blocking_calls"], 0, truth)
        with open(os.path.join(rec.dir, "trace.json")) as f:
            slices = [e for e in json.load(f)["traceEvents"]
                      if e.get("cat") == "offcpu" and e.get("ph") == "X" and e["args"]["reason"] == "sleep"]
        self.assertEqual(len(slices), truth["blocking_calls"], (len(slices), truth))
        self.check_blocked_total(rec, truth, "db_write")

        # frame pointers: glibc's usleep keeps none, so its caller is skipped
        rec = common.record(["--call-graph", "fp"], [exe, "sleep", "30", "5"])
        folded = rec.folded("offcpu.folded")
        top = max(folded, key=folded.get)
        self.assertIn("run_cycle", top.split(";"), top)
        self.assertNotIn("db_write", top.split(";"), top)
        self.assertEqual(rec.profile["offcpu"]["stack_quality"]["method"], "frame pointers")

    def test_read_without_frame_pointers(self):
        exe = common.fixture("offcpu_calls_nofp")
        rec = common.record([], [exe, "read", "30", "5"])
        truth = common.truth_of(rec)
        folded = rec.folded("offcpu.folded")
        reads = {k: v for k, v in folded.items() if "ksys_read_[k]" in k}
        top = max(reads, key=reads.get)
        for frame in ("main", "run_cycle", "wait_input", "read"):
            self.assertIn(frame, top.split(";"), top)
        q = rec.profile["offcpu"]["stack_quality"]
        self.assertGreaterEqual(q["complete_percent"], 95, q)
        blocked = self.check_blocked_total(rec, truth, "wait_input")
        self.assertGreater(blocked, 0)

        # frame pointers: the stacks end in read's caller-less frame, and the
        # quality figure says they are incomplete
        rec = common.record(["--call-graph", "fp"], [exe, "read", "30", "5"])
        folded = rec.folded("offcpu.folded")
        self.assertFalse(any("wait_input" in k for k in folded), list(folded)[:3])
        self.assertLess(rec.profile["offcpu"]["stack_quality"]["complete_percent"], 50)

    def test_one_call_site_two_kernel_paths(self):
        """Kernel stacks are reused by call site: the thread, the system call,
        its user pc and sp, and its first two arguments. wait_input reads a
        pipe and a unix socket in turn from one place (same pc and sp, the
        file descriptor differs): each read keeps its own kernel path, with
        the fixture's own time in it."""
        exe = common.fixture("offcpu_calls_nofp")
        # its ~2.5 ms blocks each with its own copy and exact time (under the
        # default 10 ms period they would be sampled)
        rec = common.record(["--offcpu-sample-us", "1000"], [exe, "fds", "40", "5"])
        truth = common.truth_of(rec)
        folded = rec.folded("offcpu.folded")
        comm = os.path.basename(exe)[:15]
        slack = rec.profile["sched"]["runq_wait_ms"] + truth["call_cpu_ms"] + 0.1 * truth["cycles"] + 1.0

        def ms(pred):
            return sum(v for k, v in folded.items() if k.startswith(comm) and "wait_input" in k.split(";")
                       and pred([f for f in k.split(";") if f.endswith("_[k]")])) / 1e3

        pipe = ms(lambda kf: any("pipe_read" in f for f in kf))
        sock = ms(lambda kf: "unix_stream_recvmsg_[k]" in kf)
        both = ms(lambda kf: any("pipe_read" in f for f in kf) and "unix_stream_recvmsg_[k]" in kf)
        self.assertEqual(both, 0)
        for got, want in ((pipe, truth["blocked_ms"]), (sock, truth["log_ms"])):
            self.assertLessEqual(got, want + truth["other_ms"] + 0.5, (pipe, sock, truth))
            self.assertGreaterEqual(got + slack, want, (pipe, sock, truth))

    def test_reused_stacks_keep_twin_callers_apart(self):
        """A block whose registers and the stack words its thread's last
        unwinding at the same pc read are all unchanged sends that stack's
        ref, not a copy (stack_quality.dwarf.reused). db_write and
        log_write have frames of one size and block in runs of 40 at the
        same pc and sp: only their return addresses differ, so a reuse
        across the two would put one's time under the other."""
        exe = common.fixture("offcpu_calls_nofp")
        rec = common.record([], [exe, "twins", "240", "5", "40"])
        truth = common.truth_of(rec)
        q = rec.profile["offcpu"]["stack_quality"]
        d = q["dwarf"]
        self.assertGreater(d["reused"], 0, q)
        self.assertEqual(d["reuse_missed"], 0, q)
        self.assertGreaterEqual(q["complete_percent"], 95, q)
        folded = self.check_callers_blocked(rec, exe, truth, d)

    def check_callers_blocked(self, rec, exe, truth, d):
        """Each caller's blocked time in offcpu.folded is its own: within
        0.5 ms above the fixture's, below it by at most what the run waited
        for a CPU and the calls ran. Returns the folded stacks."""
        folded = rec.folded("offcpu.folded")
        comm = os.path.basename(exe)[:15]
        slack = rec.profile["sched"]["runq_wait_ms"] + truth["call_cpu_ms"] + 0.1 * truth["cycles"] + 1.0
        for frame, want in (("db_write", truth["blocked_ms"]), ("log_write", truth["log_ms"])):
            got = common.offcpu_ms(folded, frame, comm)
            self.assertLessEqual(got, want + 0.5, (frame, got, truth, d))
            self.assertGreaterEqual(got + slack, want, (frame, got, truth, d))
        return folded

    def test_reused_stacks_of_twins_in_turn(self):
        """Two callers that block at the same pc and sp in turn, cycle after
        cycle (RUN 1: db_write, log_write, db_write...), each keep a check of
        their own at that call site (ustack_checks' slots): after the first
        copy of each, every block reuses its caller's stack (measured: 117 of
        120 blocks). With one check per call site each copy replaced the
        other's, and half the blocks (60 of 120) copied their stack. Each
        caller's blocked time stays its own."""
        exe = common.fixture("offcpu_calls_nofp")
        rec = common.record([], [exe, "twins", "120", "12", "1"])
        truth = common.truth_of(rec)
        q = rec.profile["offcpu"]["stack_quality"]
        d = q["dwarf"]
        copies = d["records"] - d["reused"]
        # blocks of 12 ms: each its own record (--offcpu-sample-us 10000).
        # A copy per caller, and a few more sent before user space had
        # published its check
        self.assertGreater(d["reused"], 0, q)
        self.assertLess(copies, d["reused"] / 2, q)
        self.assertEqual(d["reuse_missed"], 0, q)
        folded = self.check_callers_blocked(rec, exe, truth, d)
        both = [k for k in folded if "db_write" in k.split(";") and "log_write" in k.split(";")]
        self.assertEqual(both, [])

        # --offcpu-sample-us 0: a copy for every block, none reused
        rec = common.record(["--offcpu-sample-us", "0"], [exe, "twins", "40", "5", "10"])
        d = rec.profile["offcpu"]["stack_quality"]["dwarf"]
        self.assertEqual(d["reused"], 0, d)
        self.assertGreaterEqual(d["sent"], common.truth_of(rec)["blocking_calls"], d)


if __name__ == "__main__":
    unittest.main()
