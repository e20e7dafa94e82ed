# SPDX-License-Identifier: BSD-2-Clause
"""TCP traffic per cycle: tests/fixtures/tcp_exp.c forks a loopback server
and each cycle sends REQ bytes and reads RESP bytes back, so the bytes of
each cycle are known exactly (bytes that send/recv returned: payload only,
TCP/IP headers are not counted)."""
import os
import unittest

import common

CYCLES, REQ, RESP = 6, 100000, 250000


@common.need_root
class NetworkTest(unittest.TestCase):
    def check(self, r, source):
        p = r.profile
        out = common.truth_of(r)
        net = p["network"]
        self.assertEqual(net["source"], source)
        cycles = p["cycles"]
        self.assertEqual(len(cycles), CYCLES)
        for c in cycles:
            self.assertEqual(c["network"]["sent_bytes"], REQ, c)
            self.assertEqual(c["network"]["recv_bytes"], RESP, c)
        conns = {c["pid"]: c for c in net["connections"]}
        client = conns[p["pids"][0]]
        server = conns[out["server_pid"]]
        self.assertEqual(client["remote"], f"127.0.0.1:{out['port']}")
        self.assertEqual(server["local"], f"127.0.0.1:{out['port']}")
        self.assertEqual((client["sent_bytes"], client["recv_bytes"]), (CYCLES * REQ, CYCLES * RESP))
        self.assertEqual((server["sent_bytes"], server["recv_bytes"]), (CYCLES * RESP, CYCLES * REQ))
        self.assertTrue(client["closed"])
        self.assertEqual(net["totals"]["connections"], 2)
        self.assertGreaterEqual(client["retransmits"], 0)
        if net["rtt_source"] == "tcp:tcp_probe":
            rtt = client["srtt_us"]
            self.assertGreater(rtt["samples"], 0)
            self.assertGreater(rtt["avg"], 0)
            self.assertLess(rtt["max"], 200000)  # loopback: well under 200 ms

    def test_bytes_per_cycle(self):
        r = common.record(["--cycle", "run_cycle"], [common.fixture("tcp_exp"), str(CYCLES), str(REQ), str(RESP)])
        have = os.path.exists("/sys/kernel/tracing/events/sock/sock_send_length")
        self.check(r, "sock_tracepoints" if have else "syscalls")

    def test_syscalls_fallback(self):
        env = dict(os.environ, INFERTRACE_NET_SOURCE="syscalls")
        r = common.record(["--cycle", "run_cycle"],
                          [common.fixture("tcp_exp"), str(CYCLES), str(REQ), str(RESP), "7000"], env=env)
        self.check(r, "syscalls")


if __name__ == "__main__":
    unittest.main()
