# SPDX-License-Identifier: BSD-2-Clause
"""The live outputs while recording: `--metrics` (Prometheus text at /metrics,
checked by promtool and scraped by a real Prometheus server on loopback) and
`infertrace top` (in a real terminal: tmux, send-keys and capture-pane). The
peers, tmux and Debian's prometheus (with promtool), are installed by the
deps step (`tools/install-deps.sh test`, run by `make test`)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

from common import FIXTURES, INFERTRACE, PYTHONS, fixture, load_json, need, need_root, read_folded, read_stderr_until, \
    start_record

PROBES = ["--cycle", "run_cycle", "--phase", "inference=inference", "--phase", "database=database",
          "--count", "tokens=token"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_recording(args, cycles=400):
    """A recording with --metrics on a free port; returns (process, url, outdir)."""
    p, out = start_record(["--metrics", "127.0.0.1:0"] + PROBES + list(args),
                          [fixture("experiment"), str(cycles), "20", "4", "5", "2"])
    _, m = read_stderr_until(p, r"serving metrics at (http://\S+)")
    if not m:
        p.kill()
        raise AssertionError(f"no metrics URL announced:\n{p.stderr.read()}")
    return p, m.group(1), out


def stop_recording(test, p):
    """Ends the recording with SIGINT; returns what it wrote on stderr since start_recording."""
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    test.assertEqual(p.returncode, 0, err)
    return err


class SlowClients(threading.Thread):
    """Holds `conns` loopback connections to url's port that send a request
    head one byte every 0.2 s and never finish it, reopening each one the
    server closes, for `seconds` or until stop is set (both bounded: this is
    one test process). closed: how many the server closed; refused: connects
    that failed."""

    HEAD = b"GET /metrics HTTP/1.1\r\nHost: slow\r\n" + b"X-Slow: " + b"a" * 4000

    def __init__(self, url, conns=24, seconds=8.0):
        super().__init__(daemon=True)
        self.addr = (urllib.parse.urlparse(url).hostname, urllib.parse.urlparse(url).port)
        self.conns, self.seconds = min(conns, 64), min(seconds, 30.0)
        self.closed = self.refused = 0
        self.stop = threading.Event()

    def open(self):
        s = socket.socket()
        s.settimeout(1)
        try:
            s.connect(self.addr)
        except OSError:
            s.close()
            self.refused += 1
            return None
        s.setblocking(False)
        return [s, 0]

    def run(self):
        socks = []
        end = time.time() + self.seconds
        try:
            while time.time() < end and not self.stop.is_set():
                socks = [c for c in socks if c] + [c for c in (self.open() for _ in range(self.conns - len(socks))) if c]
                for c in socks:
                    try:
                        if c[0].recv(4096, socket.MSG_DONTWAIT) == b"":
                            raise ConnectionResetError
                    except BlockingIOError:
                        pass
                    except OSError:
                        c[0].close()
                        self.closed += 1
                        socks[socks.index(c)] = None
                        continue
                    try:
                        c[0].send(self.HEAD[c[1] % len(self.HEAD):][:1])
                        c[1] += 1
                    except OSError:
                        c[0].close()
                        self.closed += 1
                        socks[socks.index(c)] = None
                socks = [c for c in socks if c]
                time.sleep(0.2)
        finally:
            for c in socks:
                c[0].close()


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.headers.get("Content-Type"), r.read().decode()


def series(text, name):
    """{labels-string: value} of the samples of metric name."""
    out = {}
    for line in text.splitlines():
        m = re.match(re.escape(name) + r"\{([^}]*)\} (\S+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


@need_root
class MetricsTest(unittest.TestCase):
    def test_promtool_accepts_and_figures_match_the_recording(self):
        promtool = need("promtool")
        p, url, out = start_recording([], cycles=80)
        try:
            ctype, text = "", ""
            # until at least one cycle has ended
            for _ in range(300):
                try:
                    ctype, text = scrape(url)
                except urllib.error.HTTPError as e:
                    # 503 until the first snapshot, while the probes are placed
                    self.assertEqual(e.code, 503)
                    time.sleep(0.2)
                    continue
                if series(text, "infertrace_cycles_total") and \
                        list(series(text, "infertrace_cycles_total").values())[0] > 0:
                    break
                time.sleep(0.2)
            self.assertTrue(ctype.startswith("text/plain; version=0.0.4"), ctype)
            chk = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.assertEqual(chk.returncode, 0, chk.stdout + "\n" + text)
            cycles = series(text, "infertrace_cycles_total")
            (labels, n), = cycles.items()
            self.assertGreater(n, 0)
            self.assertIn('command="experiment"', labels)
            self.assertRegex(labels, r'pid="\d+"')
            phases = series(text, "infertrace_phase_seconds_total")
            self.assertEqual({re.search(r'phase="([^"]*)"', k).group(1) for k in phases},
                             {"inference", "database"})
            # every ended cycle is in the histogram, and a cycle spins 20 ms of CPU
            hist = series(text, "infertrace_cycle_duration_seconds_count")
            self.assertEqual(list(hist.values())[0], n)
            total = list(series(text, "infertrace_cycle_duration_seconds_sum").values())[0]
            self.assertGreater(total / n, 0.02)
            # 4 token() calls per cycle
            self.assertEqual(list(series(text, "infertrace_tokens_total").values())[0], 4 * n)
            for name in ("infertrace_samples_total", "infertrace_rss_bytes"):
                self.assertTrue(series(text, name), name)
            lost = series(text, "infertrace_lost_total")
            self.assertTrue(any('kind="samples"' in k for k in lost))
            self.assertTrue(any('kind="events"' in k for k in lost))
            # anything but /metrics is not served
            with self.assertRaises(urllib.error.HTTPError) as e:
                scrape(url.replace("/metrics", "/other"))
            self.assertEqual(e.exception.code, 404)
        finally:
            stop_recording(self, p)
        # the counter never exceeds what the recording then wrote
        prof = load_json(os.path.join(out, "profile.json"))
        self.assertGreaterEqual(len(prof["cycles"]), n)

    def test_slow_clients_do_not_block_scrapes_or_flood_stderr(self):
        """24 connections that trickle a request head and never end it (the
        server used to hold 16 connections for 10 s each, refuse every
        scrape, and print a line per refusal): scrapes succeed throughout,
        promtool accepts them, the slow connections are closed, and stderr
        holds a few lines."""
        promtool = need("promtool")
        p, url, _ = start_recording([], cycles=600)
        slow = SlowClients(url, conns=24, seconds=8.0)
        err = ""
        try:
            for _ in range(150):  # the first snapshot
                try:
                    scrape(url)
                    break
                except urllib.error.HTTPError:
                    time.sleep(0.2)
            slow.start()
            time.sleep(1.0)  # the slow connections are in place
            ok, failed = 0, []
            while slow.is_alive():
                t0 = time.time()
                try:
                    _, text = scrape(url)
                    ok += 1
                except OSError as e:
                    failed.append(repr(e))
                self.assertLess(time.time() - t0, 5.0)
                time.sleep(0.3)
            self.assertEqual(failed, [], f"{ok} scrapes succeeded during the slow clients")
            self.assertGreaterEqual(ok, 5)
            chk = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.assertEqual(chk.returncode, 0, chk.stdout)
            # each slow connection closed within its 2 s to send a request: 24 open
            # ones over 7 s and more, however the sweep and the room-making split them
            self.assertGreaterEqual(slow.closed, 24, (slow.closed, slow.refused))
        finally:
            slow.join()
            err = stop_recording(self, p)
        said = [ln for ln in err.splitlines() if "metrics server" in ln]
        self.assertGreaterEqual(len(said), 1, err)
        self.assertLessEqual(len(said), 3, err)
        self.assertRegex(said[0], r"closed .*connection")

    def test_a_real_prometheus_scrapes_the_recording(self):
        prometheus = need("prometheus")
        p, url, _ = start_recording([], cycles=600)
        tmp = tempfile.mkdtemp(prefix="it-prom-")
        target = urllib.parse.urlparse(url).netloc
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: infertrace\n"
                    f"    static_configs:\n      - targets: ['{target}']\n")
        port = free_port()
        # scraped while slow clients hold connections open (at most 30 s)
        slow = SlowClients(url, conns=24, seconds=30.0)
        slow.start()
        with open(os.path.join(tmp, "log"), "w") as log:
            prom = subprocess.Popen([prometheus, f"--config.file={tmp}/prometheus.yml",
                                     f"--storage.tsdb.path={tmp}/data", f"--web.listen-address=127.0.0.1:{port}"],
                                    cwd=tmp, stdout=subprocess.DEVNULL, stderr=log)
        api = f"http://127.0.0.1:{port}/api/v1/query?query="

        def query(q):
            try:
                with urllib.request.urlopen(api + urllib.parse.quote(q), timeout=5) as r:
                    return json.load(r)["data"]["result"]
            except (OSError, ValueError, KeyError):
                return []
        try:
            seen = []
            deadline = time.time() + 90
            while time.time() < deadline and p.poll() is None:
                res = query("infertrace_cycles_total")
                if res:
                    v = float(res[0]["value"][1])
                    if not seen or v != seen[-1]:
                        seen.append(v)
                    # three counts past 0 (a loaded machine can be scraped
                    # before its first cycle ends), growing
                    counted = [x for x in seen if x > 0]
                    if len(counted) >= 3 and counted[-1] > counted[0]:
                        break
                time.sleep(0.5)
            attacked = slow.is_alive()
            with open(os.path.join(tmp, "log")) as f:
                log = f.read()[-3000:]
            self.assertGreaterEqual(len(seen), 3, f"Prometheus saw {seen}; its log:\n{log}")
            self.assertTrue(attacked, f"the slow clients ended before Prometheus saw {seen}")
            self.assertEqual(seen, sorted(seen), "the counter went back")
            self.assertGreater(seen[-1], seen[0])
            phases = {r["metric"].get("phase") for r in query("infertrace_phase_seconds_total")}
            self.assertEqual(phases, {"inference", "database"})
            res = query("infertrace_cycles_total")
            self.assertEqual(res[0]["metric"].get("command"), "experiment")
            self.assertEqual(query('up{job="infertrace"}')[0]["value"][1], "1")
        finally:
            prom.terminate()
            prom.wait(timeout=30)
            slow.stop.set()
            slow.join()
            stop_recording(self, p)
            shutil.rmtree(tmp, ignore_errors=True)

    def run_refused(self, addr):
        """record --metrics ADDR on a command that would leave a file: the
        error comes before the command starts."""
        tmp = tempfile.mkdtemp(prefix="it-live-")
        flag = os.path.join(tmp, "started")
        p = subprocess.run([INFERTRACE, "record", "-o", os.path.join(tmp, "out"), "--metrics", addr,
                            "--", "sh", "-c", f"touch {flag}"], text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertFalse(os.path.exists(flag), "the target ran")
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        return p.returncode, lines

    def test_bad_address_is_a_usage_error(self):
        for addr in ("999.1.1.1:9100", "127.0.0.1:70000", "localhost:", "[::1]9100", "host.example:80"):
            rc, lines = self.run_refused(addr)
            self.assertEqual(rc, 2, (addr, lines))  # IT_EXIT_USAGE
            self.assertEqual(len(lines), 1, lines)
            self.assertRegex(lines[0], r"^infertrace record: invalid --metrics '.*': expected \[ADDR:\]PORT")

    def test_port_in_use_fails_before_the_target_starts(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            rc, lines = self.run_refused(f"127.0.0.1:{port}")
        self.assertEqual(rc, 5, lines)  # IT_EXIT_RUNTIME
        self.assertTrue(any(re.match(rf"infertrace record: cannot serve --metrics on 127.0.0.1:{port}: "
                                     r"Address already in use", ln) for ln in lines), lines)

    def test_address_of_no_interface_fails_before_the_target_starts(self):
        rc, lines = self.run_refused("192.0.2.1:9100")  # TEST-NET-1: on no interface here
        self.assertEqual(rc, 5, lines)
        self.assertTrue(any("Cannot assign requested address" in ln for ln in lines), lines)


@need_root
class TopTest(unittest.TestCase):
    def test_top_in_tmux_shows_cycles_growing_and_phases_and_ends_on_q(self):
        tmux = need("tmux")
        out = tempfile.mkdtemp(prefix="it-top-")
        status = os.path.join(out, "status")
        sock = f"infertrace-test-{os.getpid()}"
        cmd = " ".join([INFERTRACE, "top", "-o", os.path.join(out, "rec")] + PROBES +
                       ["--", fixture("experiment"), "2000", "20", "4", "5", "2"])
        subprocess.run([tmux, "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30",
                        f"{cmd}; echo $? > {status}; sleep 600"], check=True)

        def screen():
            return subprocess.run([tmux, "-L", sock, "capture-pane", "-p"], text=True,
                                  stdout=subprocess.PIPE).stdout
        try:
            counts, text = [], ""
            deadline = time.time() + 90
            while time.time() < deadline:
                text = screen()
                m = re.search(r"^cycles (\d+)  last [\d.]+ ms", text, re.M)
                if m and (not counts or int(m.group(1)) != counts[-1]):
                    counts.append(int(m.group(1)))
                if len(counts) >= 3 and counts[-1] > counts[0] > 0:
                    break
                time.sleep(0.3)
            self.assertGreaterEqual(len(counts), 3, f"cycles seen {counts}; screen:\n{text}")
            self.assertEqual(counts, sorted(counts))
            self.assertRegex(text, r"(?m)^inference +\d+\.\d%")
            self.assertRegex(text, r"(?m)^database +\d+\.\d%")
            # each phase's split: inference spins, database sleeps
            self.assertRegex(text, r"(?m)^PHASE .* ON-CPU +RUNQ +BLOCKED$")
            split = r" +[\d.]+% +[\d.]+ +\d+ +([\d.]+)% +([\d.]+)% +([\d.]+)%$"
            inf = re.search(r"(?m)^inference" + split, text)
            db = re.search(r"(?m)^database" + split, text)
            self.assertIsNotNone(inf, text)
            self.assertIsNotNone(db, text)
            # inference never blocks: its time is on a CPU or waiting for one
            # (how much of each depends on what else the machine runs)
            self.assertLess(float(inf.group(3)), float(inf.group(1)) + float(inf.group(2)), inf.group(0))
            self.assertGreater(float(db.group(3)), float(db.group(1)), db.group(0))
            for m in (inf, db):
                self.assertAlmostEqual(sum(float(m.group(i)) for i in (1, 2, 3)), 100, delta=0.2, msg=m.group(0))
            self.assertIn("TOP FUNCTIONS", text)
            self.assertRegex(text, r"lost: samples \d+  events \d+")
            subprocess.run([tmux, "-L", sock, "send-keys", "q"], check=True)
            deadline = time.time() + 120
            while time.time() < deadline and not os.path.exists(status):
                time.sleep(0.3)
            with open(status) as f:
                self.assertEqual(f.read().strip(), "0", screen())
            after = screen()
            # the terminal is given back; the closing messages are printed on it
            self.assertIn("recording ended (q)", after)
            prof = load_json(os.path.join(out, "rec", "profile.json"))
            self.assertEqual(prof["stop_reason"], "q")
            self.assertGreaterEqual(len(prof["cycles"]), counts[-1])
            self.assertLess(len(prof["cycles"]), 2000)  # q ended it, not the fixture
            # the command's output goes to a file, not over the view
            self.assertTrue(os.path.exists(os.path.join(out, "rec", "command.log")))
        finally:
            subprocess.run([tmux, "-L", sock, "kill-server"], stderr=subprocess.DEVNULL)

    @unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
    def test_top_on_a_python_loop_keeps_its_last_screen(self):
        """A Python loop (py_loop_main.py: generate spins 30 ms, pause sleeps
        10 ms, save commits) until it exits by itself: the first screen
        comes within 1 s of the command, and until the BPF programs are
        attached it shows figures read from /proc (the machine's CPUs and
        memory, the command held); the last screen stays on the terminal,
        and its inclusive row for generate, the share of the on-CPU samples
        with generate on the stack, is the recording's own share in
        stacks.folded within 5 points."""
        tmux = need("tmux")
        python = PYTHONS.get("system-python3.11") or sorted(PYTHONS.values())[-1]
        out = tempfile.mkdtemp(prefix="it-top-")
        status = os.path.join(out, "status")
        sock = f"infertrace-test-py-{os.getpid()}"
        cmd = " ".join([INFERTRACE, "top", "-o", os.path.join(out, "rec"), "--cycle-marker", "py:generate",
                        "--phase", "inference=py:generate", "--phase", "rest=py:pause", "--phase", "database=py:save",
                        "--", python, os.path.join(FIXTURES, "py_loop_main.py"), "60", os.path.join(out, "truth.json"),
                        os.path.join(out, "db.sqlite")])
        subprocess.run([tmux, "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "60",
                        f"{cmd}; echo $? > {status}; sleep 600"], check=True)
        started = time.time()
        try:
            # the view's first screen within 1 s of the command, while the
            # programs still load, with figures read from /proc; the
            # recording's figures once the programs are attached
            first = proc = figures = None
            proc_text = ""
            while time.time() - started < 30 and figures is None:
                text = subprocess.run([tmux, "-L", sock, "capture-pane", "-p"], text=True,
                                      stdout=subprocess.PIPE).stdout
                if first is None and ("infertrace top" in text or "q: quit" in text or "loading" in text):
                    first = time.time() - started
                if proc is None and re.search(r"(?m)^machine: \d+ CPUs", text):
                    proc, proc_text = time.time() - started, text
                if re.search(r"(?m)^\d\d:\d\d:\d\d  q: quit", text):
                    figures = time.time() - started
                time.sleep(0.05)
            self.assertIsNotNone(figures, text)
            print(f"\ntop: first screen after {first:.2f} s, figures from /proc after "
                  f"{proc if proc is None else round(proc, 2)} s, the recording's first figures after {figures:.2f} s")
            self.assertLess(first, 1.0)
            # before the programs are attached: what /proc says, so labelled
            self.assertIsNotNone(proc, "no figures from /proc before the recording's")
            self.assertRegex(proc_text, r"(?m)^\d\d:\d\d:\d\d  loading and verifying the BPF programs "
                                        r"\([\d.]+ s\); until they run, figures read from /proc")
            self.assertIn(f"command: {python}, held at its start until the programs are attached", proc_text)
            m = re.search(r"(?m)^machine: (\d+) CPUs.*  memory available (\d+) MB of (\d+) MB", proc_text)
            self.assertIsNotNone(m, proc_text)
            self.assertEqual(int(m.group(1)), os.sysconf("SC_NPROCESSORS_ONLN"))
            with open("/proc/meminfo") as f:
                total_mb = int(re.search(r"MemTotal:\s+(\d+) kB", f.read()).group(1)) / 1024
            self.assertAlmostEqual(int(m.group(3)), total_mb, delta=1)
            self.assertLessEqual(int(m.group(2)), int(m.group(3)))
            self.assertRegex(proc_text, r"(?m)^tracer \(PID \d+\):  RSS [\d.]+ MB.*  CPU time [\d.]+ s$")
            deadline = time.time() + 120
            while time.time() < deadline and not os.path.exists(status):
                time.sleep(0.3)
            after = subprocess.run([tmux, "-L", sock, "capture-pane", "-p", "-S", "-100"], text=True,
                                   stdout=subprocess.PIPE).stdout
            with open(status) as f:
                self.assertEqual(f.read().strip(), "0", after)
            self.assertIn("recording ended (target exited)", after)
            # the last screen, after the view ended
            self.assertRegex(after, r"(?m)^cycles \d+  last [\d.]+ ms")
            # the last cycle's own split: its three parts make its wall time
            last = re.search(r"(?m)^last cycle: on-CPU ([\d.]+)%  run queue ([\d.]+)%  blocked ([\d.]+)%$", after)
            self.assertIsNotNone(last, after)
            self.assertAlmostEqual(sum(float(v) for v in last.groups()), 100, delta=0.2, msg=last.group(0))
            self.assertRegex(after, r"(?m)^inference +\d+\.\d%")
            self.assertIn("PYTHON FUNCTIONS", after)
            row = re.search(r"(?m)^ *(\d+) +([\d.]+)%  generate \(py_loop_main\.py\)$", after)
            self.assertIsNotNone(row, after)
            stacks = read_folded(os.path.join(out, "rec", "stacks.folded"))
            total = sum(stacks.values())
            mine = sum(c for s, c in stacks.items() if "generate (py_loop_main.py)" in s.split(";"))
            self.assertGreater(total, 0)
            self.assertAlmostEqual(float(row.group(2)), 100.0 * mine / total, delta=5,
                                   msg=f"top {row.group(0)!r}; stacks.folded {mine}/{total}")
        finally:
            subprocess.run([tmux, "-L", sock, "kill-server"], stderr=subprocess.DEVNULL)

    @unittest.skipUnless(PYTHONS, "no CPython 3.10..3.13 on this machine")
    def test_top_on_a_running_process_shows_its_threads_from_proc_until_attached(self):
        """top -p on a running Python process with two threads: while the
        programs load, its RSS (against the test's own read of VmRSS) and
        each of its threads by TID and name, read from /proc; then the
        recording's figures, and -d ends it."""
        tmux = need("tmux")
        python = PYTHONS.get("system-python3.11") or sorted(PYTHONS.values())[-1]
        out = tempfile.mkdtemp(prefix="it-top-")
        status = os.path.join(out, "status")
        sock = f"infertrace-test-p-{os.getpid()}"
        target = subprocess.Popen([python, "-c", "import threading, time\n"
                                   "threading.Thread(target=time.sleep, args=(120,), daemon=True).start()\n"
                                   "print('ready', flush=True)\ntime.sleep(120)\n"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(target.stdout.readline().strip(), "ready")
            tids = sorted(int(t) for t in os.listdir(f"/proc/{target.pid}/task"))
            self.assertEqual(len(tids), 2)
            cmd = " ".join([INFERTRACE, "top", "-o", os.path.join(out, "rec"), "-d", "3", "-p", str(target.pid)])
            subprocess.run([tmux, "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40",
                            f"{cmd}; echo $? > {status}; sleep 600"], check=True)
            started = time.time()
            proc_text = ""
            while time.time() - started < 60 and not os.path.exists(status):
                text = subprocess.run([tmux, "-L", sock, "capture-pane", "-p"], text=True,
                                      stdout=subprocess.PIPE).stdout
                if not proc_text and re.search(r"(?m)^ +\d+ +\S+ +[\d.]+  python", text):
                    proc_text = text
                    with open(f"/proc/{target.pid}/status") as f:
                        rss_mb = int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) / 1024
                time.sleep(0.05)
            self.assertTrue(proc_text, text)
            self.assertIn("TARGETS (read from /proc until the programs are attached)", proc_text)
            m = re.search(rf"(?m)^PID {target.pid} python[\d.]*:  RSS ([\d.]+) MB.*  CPU time ([\d.]+) s$", proc_text)
            self.assertIsNotNone(m, proc_text)
            self.assertAlmostEqual(float(m.group(1)), rss_mb, delta=max(1.0, rss_mb * 0.1))
            rows = [int(r) for r in re.findall(r"(?m)^ +(\d+) +(?:-|[\d.]+%) +[\d.]+  python", proc_text)]
            self.assertEqual(sorted(rows), tids, proc_text)
            with open(status) as f:
                self.assertEqual(f.read().strip(), "0")
            after = subprocess.run([tmux, "-L", sock, "capture-pane", "-p", "-S", "-100"], text=True,
                                   stdout=subprocess.PIPE).stdout
            self.assertIn("recording ended (duration)", after)
            self.assertRegex(after, r"(?m)^\d\d:\d\d:\d\d  q: quit")
        finally:
            target.kill()
            target.wait()
            target.stdout.close()
            subprocess.run([tmux, "-L", sock, "kill-server"], stderr=subprocess.DEVNULL)

    def test_top_without_a_terminal_is_refused_before_the_target_starts(self):
        tmp = tempfile.mkdtemp(prefix="it-top-")
        flag = os.path.join(tmp, "started")
        p = subprocess.run([INFERTRACE, "top", "-o", os.path.join(tmp, "out"), "--", "sh", "-c", f"touch {flag}"],
                           text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(os.path.exists(flag))
        self.assertRegex(p.stderr, r"infertrace top: top needs a terminal")


if __name__ == "__main__":
    unittest.main()
