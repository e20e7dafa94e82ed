# SPDX-License-Identifier: BSD-2-Clause
"""The CUPTI injection library (build/libinfertrace-cupti.so) without the
tracer: the test is the tracer's end of the channel (a unix socket server
reading include/gpu_channel.h records) and runs tests/fixtures/gpu_exp.c,
whose fake libcuda loads the library at cuInit and simulates the GPU in the
fake libcupti (tests/fixtures/fake_cupti.c). The fake CUPTI writes every op
it simulated to FAKE_CUPTI_TRUTH: the records must match it one to one, and
CUPTI times mapped to CLOCK_MONOTONIC through the calibration pairs must
recover its times. No BPF: no root needed."""
import json
import math
import os
import socket
import statistics
import struct
import subprocess
import tempfile
import threading
import unittest

import common

LIB = os.path.join(common.BUILD, "libinfertrace-cupti.so")

# include/gpu_channel.h
HELLO, CALIB, KERNEL, COPY, SET, API, DROPPED, NOTICE, BYE, WINDOW = range(1, 11)
MAGIC, WIRE_VERSION = 0x50475449, 2  # the layout decoded below
DIR_HTOD, DIR_DTOH, DIR_PTOP = 1, 2, 5
DOMAIN_DRIVER = 2
# CUPTI's copy kinds (the truth's "dir") → enum it_gpu_copy_dir
CUPTI_DIR = {1: DIR_HTOD, 2: DIR_DTOH, 10: DIR_PTOP}
CBID_LAUNCH, CBID_LAUNCH_EX = 307, 652
CBID_CTX_SYNC, CBID_STREAM_SYNC = 17, 126


def parse(data):
    """The records of one connection, as dicts; asserts they tile the bytes."""
    out, at = [], 0
    while at < len(data):
        kind, size, pid = struct.unpack_from("<HHI", data, at)
        assert size >= 8 and at + size <= len(data), (kind, size, at, len(data))
        b = data[at:at + size]
        r = {"kind": kind, "pid": pid}
        if kind == HELLO:
            r["magic"], r["wire"], r["version"], r["every"] = struct.unpack_from("<4I", b, 8)
            r["path"] = b[24:280].split(b"\0")[0].decode()
        elif kind == CALIB:
            r["cupti"], r["mono"] = struct.unpack_from("<QQ", b, 8)
        elif kind == KERNEL:
            r["start"], r["end"], r["device"], r["context"], r["stream"], r["corr"] = \
                struct.unpack_from("<QQ4I", b, 8)
            r["grid"] = struct.unpack_from("<3I", b, 40)
            r["block"] = struct.unpack_from("<3I", b, 52)
            (n,) = struct.unpack_from("<H", b, 64)
            assert size == 66 + n, (size, n)
            r["name"] = b[66:66 + n].decode()
        elif kind in (COPY, SET):
            (r["start"], r["end"], r["bytes"], r["device"], r["context"], r["stream"], r["corr"], r["dir"],
             r["src"], r["dst"]) = struct.unpack_from("<QQQ7I", b, 8)
        elif kind == API:
            r["start"], r["end"], r["tid"], r["corr"], r["cbid"], r["domain"] = struct.unpack_from("<QQ4I", b, 8)
        elif kind == DROPPED:
            (r["records"],) = struct.unpack_from("<Q", b, 8)
        elif kind == WINDOW:
            r["mono"], r["on"], r["every"], r["kernels"], r["from"] = struct.unpack_from("<QIIQQ", b, 8)
        elif kind == NOTICE:
            (r["fatal"],) = struct.unpack_from("<I", b, 8)
            r["text"] = b[12:252].split(b"\0")[0].decode()
        out.append(r)
        at += size
    return out


class Channel:
    """The tracer's end: a listening unix socket; each connection's bytes.
    close_after: bytes read before closing a connection (a tracer gone)."""

    def __init__(self, directory, close_after=None):
        self.path = os.path.join(directory, "gpu.sock")
        if os.path.exists(self.path):  # a test's earlier run
            os.unlink(self.path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.conns = []
        self.close_after = close_after
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        readers = []
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            buf = bytearray()
            self.conns.append(buf)
            t = threading.Thread(target=self._read, args=(c, buf), daemon=True)
            t.start()
            readers.append(t)
        for t in readers:
            t.join(10)

    def _read(self, c, buf):
        with c:
            while True:
                d = c.recv(1 << 16)
                if not d:
                    return
                buf += d
                if self.close_after is not None and len(buf) >= self.close_after:
                    return

    def finish(self):
        self.stop = True
        self.thread.join(15)
        self.sock.close()
        if self.close_after is not None:
            return [bytes(b) for b in self.conns]
        return [parse(bytes(b)) for b in self.conns]


def calib_map(recs):
    """CUPTI ns → CLOCK_MONOTONIC ns, a line through the calibration pairs
    (Theil-Sen: robust to a pair whose reads were preempted)."""
    pairs = [(r["cupti"], r["mono"]) for r in recs if r["kind"] == CALIB]
    assert len(pairs) >= 2, pairs
    slopes = [(m2 - m1) / (c2 - c1) for i, (c1, m1) in enumerate(pairs) for (c2, m2) in pairs[i + 1:] if c2 != c1]
    slope = statistics.median(slopes)
    c0 = pairs[0][0]
    icpt = statistics.median(m - slope * (c - c0) for c, m in pairs)
    return lambda c: icpt + slope * (c - c0)


class GpuInjectTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.path.exists(LIB), "run make first: " + LIB)
        self.exe = common.fixture("gpu_exp")
        self.fake = common.fixture("libfake_cupti.so")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.truth_path = os.path.join(self.tmp.name, "truth.jsonl")

    def run_exp(self, mode, cycles, channel=True, close_after=None, **env):
        """Runs gpu_exp; returns (its JSON, [records per connection], truth ops)."""
        e = dict(os.environ, CUDA_INJECTION64_PATH=LIB, INFERTRACE_CUPTI_LIB=self.fake,
                 FAKE_CUPTI_TRUTH=self.truth_path, INFERTRACE_GPU_FLUSH_MS="50")
        e.pop("INFERTRACE_GPU_CHANNEL", None)
        e.update({k: str(v) for k, v in env.items()})
        chan = Channel(self.tmp.name, close_after) if channel else None
        if chan:
            e["INFERTRACE_GPU_CHANNEL"] = chan.path
        try:
            p = subprocess.run([self.exe, mode, str(cycles)], env=e, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=120)
        finally:
            conns = chan.finish() if chan else []
        self.assertEqual(p.returncode, 0, p.stderr)
        truth = []
        if os.path.exists(self.truth_path):
            with open(self.truth_path) as f:
                truth = [json.loads(line) for line in f]
            os.unlink(self.truth_path)
        return json.loads(p.stdout), conns, truth

    def check_ops(self, mode, cycles, **env):
        out, conns, truth = self.run_exp(mode, cycles, **env)
        self.assertEqual(len(conns), 1)
        recs = conns[0]
        kinds = [r["kind"] for r in recs]
        self.assertEqual(kinds[0], HELLO)
        self.assertEqual(kinds[-1], BYE)
        self.assertEqual(kinds.count(HELLO), 1)
        self.assertEqual(kinds.count(BYE), 1)
        self.assertNotIn(NOTICE, kinds, recs)
        hello = recs[0]
        self.assertEqual((hello["magic"], hello["wire"], hello["version"]), (MAGIC, WIRE_VERSION, 130001))
        self.assertEqual(hello["path"], self.fake)
        to_mono = calib_map(recs)
        ops = [t for t in truth if t["what"] != "api"]
        self.assertTrue(ops)
        by_corr = {}
        for r in recs:
            if r["kind"] in (KERNEL, COPY, SET):
                self.assertNotIn(r["corr"], by_corr, "an op sent twice")
                by_corr[r["corr"]] = r
        self.assertEqual(len(by_corr), len(ops))
        for t in ops:
            r = by_corr[t["correlation"]]
            want = {"kernel": KERNEL, "copy": COPY, "set": SET}[t["what"]]
            self.assertEqual(r["kind"], want, (r, t))
            self.assertEqual((r["device"], r["stream"]), (t["device"], t["stream"]))
            if want == KERNEL:
                self.assertEqual(r["name"], t["name"])
            else:
                self.assertEqual(r["bytes"], t["bytes"])
            if want == COPY:
                self.assertEqual(r["dir"], CUPTI_DIR[t["dir"]])
                if r["dir"] == DIR_PTOP:
                    self.assertEqual((r["src"], r["dst"]), (t["src_device"], t["dst_device"]))
            self.assertAlmostEqual(to_mono(r["start"]), t["start_ns"], delta=2000)
            self.assertAlmostEqual(to_mono(r["end"]), t["end_ns"], delta=2000)
        # API records: the calling thread's gettid, the op's correlation
        apis = [r for r in recs if r["kind"] == API]
        tapis = [t for t in truth if t["what"] == "api"]
        self.assertEqual(len(apis), len(tapis))
        for a in apis:
            self.assertEqual(a["tid"], out["tid"])
            self.assertEqual(a["domain"], DOMAIN_DRIVER)
        api_corr = {a["corr"]: a for a in apis}
        for t in ops:
            a = api_corr[t["correlation"]]
            self.assertLessEqual(to_mono(a["start"]), t["launch_ns"] + 2000)
            if t["what"] == "kernel":
                self.assertIn(a["cbid"], (CBID_LAUNCH, CBID_LAUNCH_EX))
                # submitted as the launch call returned
                self.assertAlmostEqual(to_mono(a["end"]), t["launch_ns"], delta=2000)
                self.assertLessEqual(t["launch_ns"], t["start_ns"])
        return out, recs, truth

    def test_gpu_mode_every_op_once(self):
        out, recs, truth = self.check_ops("gpu", 3)
        kernels = [t for t in truth if t["what"] == "kernel"]
        self.assertEqual(len(kernels), 12)
        self.assertEqual({t["name"] for t in kernels}, {"_Z10gemm_largePfS_i"})
        syncs = [r for r in recs if r["kind"] == API and r["cbid"] == CBID_CTX_SYNC]
        self.assertEqual(len(syncs), 3)

    def test_drift_recovered(self):
        self.check_ops("gpu", 2, FAKE_CUPTI_DRIFT_PPM=50)

    def test_transfer_copies(self):
        _, recs, _ = self.check_ops("transfer", 2)
        copies = [r for r in recs if r["kind"] == COPY]
        self.assertEqual(sorted(r["dir"] for r in copies), [DIR_HTOD] * 8 + [DIR_DTOH] * 2)
        self.assertTrue(all(r["bytes"] == 8 << 20 for r in copies))

    def test_multi_devices_streams(self):
        _, recs, truth = self.check_ops("multi", 2)
        kernels = {(r["device"], r["stream"], r["name"]) for r in recs if r["kind"] == KERNEL}
        self.assertEqual(kernels, {(0, 1, "_ZN4attn7forwardEPKfPfi"), (0, 2, "_ZN3mlp7forwardEPKfPfi"),
                                   (1, 1, "_ZN4attn7forwardEPKfPfi"), (1, 2, "_ZN3mlp7forwardEPKfPfi")})
        self.assertEqual(len([r for r in recs if r["kind"] == SET]), 2)
        peer = [r for r in recs if r["kind"] == COPY]
        self.assertEqual([(r["dir"], r["src"], r["dst"]) for r in peer], [(DIR_PTOP, 0, 1)] * 2)

    def test_sync_mode(self):
        out, recs, truth = self.check_ops("sync", 1, FAKE_CUPTI_SYNC_LATENCY_US=400)
        to_mono = calib_map(recs)
        syncs = sorted((r for r in recs if r["kind"] == API and r["cbid"] == CBID_STREAM_SYNC),
                       key=lambda r: r["start"])
        kernels = sorted((t for t in truth if t["what"] == "kernel"), key=lambda t: t["start_ns"])
        self.assertEqual((len(syncs), len(kernels)), (50, 50))
        # each sync returned no sooner than the fake driver's latency after
        # its kernel ended (measured from the kernel, not from the call: a
        # caller preempted past that point returns at once)
        for s, k in zip(syncs, kernels):
            self.assertGreaterEqual(to_mono(s["end"]), k["end_ns"] + 400000 - 2000)

    def windows(self, recs):
        """The WINDOW records as [(on_mono, off_mono or None, every, kernels,
        counted_from or None)];
        asserts they alternate, opening first."""
        out = []
        for r in recs:
            if r["kind"] != WINDOW:
                continue
            if r["on"]:
                self.assertTrue(not out or out[-1][1] is not None, "a window opened twice")
                out.append([r["mono"], None, r["every"], 0, None])
            else:
                self.assertTrue(out and out[-1][1] is None, "a window closed twice")
                self.assertGreaterEqual(r["mono"], out[-1][0])
                self.assertGreaterEqual(r["from"], out[-1][0])
                self.assertLess(r["from"], r["mono"])
                out[-1][1:] = [r["mono"], r["every"], r["kernels"], r["from"]]
        return out

    def test_fixed_sampling_windows(self):
        """--cupti 3: on for a window, off for two, over and over; every op
        launched inside a window is recorded, and only ops the fake saw
        enabled are sent."""
        out, conns, truth = self.run_exp("launch", 10, INFERTRACE_GPU_SAMPLE="3", INFERTRACE_GPU_WINDOW_MS="60")
        recs = conns[0]
        self.assertEqual(recs[0]["every"], 3)  # HELLO: the mode asked
        wins = self.windows(recs)
        self.assertGreaterEqual(len(wins), 2, wins)
        closed = [w for w in wins if w[1] is not None]
        self.assertTrue(closed)
        for w in wins:
            self.assertEqual(w[2], 3)
        for w in closed:
            self.assertGreaterEqual(w[1] - w[0], 60e6, w)
            self.assertEqual(w[4], w[0], w)  # a fixed N counts from the open
        for a, b in zip(wins, wins[1:]):
            self.assertGreaterEqual(b[0] - a[1], 2 * 60e6, (a, b))  # N - 1 windows off
        ops = {t["correlation"]: t for t in truth if t["what"] == "kernel"}
        sent = {r["corr"] for r in recs if r["kind"] == KERNEL}
        # exactly the ops the fake recorded (its kinds enabled at launch)
        self.assertEqual(sent, {c for c, t in ops.items() if t["recorded"]})
        # each op whose check of the enabled kinds fell inside a window (the
        # fake's clock read just before and just after it) is among them;
        # others are not all
        inside = {c for c, t in ops.items()
                  if any(w[0] <= t["seen_lo"] and (w[1] is None or t["seen_hi"] <= w[1]) for w in wins)}
        self.assertLessEqual(inside, sent)
        self.assertLess(len(sent), len(ops))
        # a closing record counts the kernels its window recorded: those the
        # fake made while kernels were on for the window's time (gen), from
        # the window's opening to past its close (until activity went off)
        for i, w in enumerate(wins):
            if w[1] is not None:
                self.assertEqual(w[3], sum(1 for c in sent if ops[c]["gen"] == i + 1), w)

    def test_auto_sampling_from_the_launch_rate(self):
        """auto: N follows the kernels a window recorded and the cost per
        kernel; a light launch rate stays always on (no window closes)."""
        cost = 1000000  # 1 ms a kernel: the launch mode's ~450 kernels/s would cost ~80%
        out, conns, truth = self.run_exp("launch", 3, INFERTRACE_GPU_SAMPLE="auto", INFERTRACE_GPU_WINDOW_MS="50",
                                         INFERTRACE_GPU_KERNEL_COST_NS=str(cost))
        recs = conns[0]
        self.assertEqual(recs[0]["every"], 0)
        wins = self.windows(recs)
        first = wins[0]
        self.assertIsNotNone(first[1], wins)
        # the rate N was measured at: the kernels counted since the count
        # last restarted (auto restarts it each time the rate gives N = 1)
        f = first[3] * cost / (first[1] - first[4])
        want = min(100, max(1, math.ceil(f / (1 - f) * 100 / 2.5))) if f < 0.95 else 100
        self.assertGreater(first[3], 0)
        self.assertAlmostEqual(first[2], want, delta=max(2, want * 0.15), msg=(first, f))
        self.assertGreater(first[2], 1)
        # the default cost (2.8 us): ~450 kernels/s is 0.13%: always on
        out, conns, truth = self.run_exp("launch", 3, INFERTRACE_GPU_SAMPLE="auto", INFERTRACE_GPU_WINDOW_MS="50")
        wins = self.windows(conns[0])
        self.assertEqual(len(wins), 1, wins)
        self.assertIsNone(wins[0][1])
        self.assertEqual(len([r for r in conns[0] if r["kind"] == KERNEL]),
                         len([t for t in truth if t["what"] == "kernel"]))

    def fatal_notice(self, **env):
        out, conns, _ = self.run_exp("gpu", 1, **env)
        self.assertEqual(len(out["cycles"]), 1)
        self.assertEqual(len(conns), 1)
        recs = conns[0]
        self.assertEqual(recs[0]["kind"], HELLO)
        notices = [r for r in recs if r["kind"] == NOTICE]
        self.assertEqual(len(notices), 1, recs)
        self.assertEqual(notices[0]["fatal"], 1)
        self.assertFalse([r for r in recs if r["kind"] in (KERNEL, COPY, SET, API)])
        return recs, notices[0]["text"]

    def test_unknown_version_refused(self):
        recs, text = self.fatal_notice(FAKE_CUPTI_VERSION=31)
        self.assertIn("version 31 ", text)
        self.assertEqual(recs[0]["version"], 31)

    def test_other_cupti_client(self):
        _, text = self.fatal_notice(FAKE_CUPTI_BUSY=1)
        self.assertIn("its own CUPTI client", text)

    def test_cupti_not_found(self):
        missing = os.path.join(self.tmp.name, "no-libcupti.so")
        _, text = self.fatal_notice(INFERTRACE_CUPTI_LIB=missing)
        self.assertTrue(text.startswith("libcupti not found (looked in " + missing), text)

    def test_no_channel(self):
        out, conns, truth = self.run_exp("gpu", 2, channel=False)
        self.assertEqual(len(out["cycles"]), 2)
        self.assertEqual(truth, [])  # the fake CUPTI was never loaded

    def test_tracer_gone(self):
        """A tracer that closes after the first bytes: the target neither
        dies of SIGPIPE nor hangs (run_exp asserts exit status 0)."""
        out, conns, _ = self.run_exp("launch", 2, close_after=1)
        self.assertEqual(len(out["cycles"]), 2)
        self.assertEqual(len(conns), 1)
        self.assertEqual(struct.unpack_from("<H", conns[0])[0], HELLO)


if __name__ == "__main__":
    unittest.main()
