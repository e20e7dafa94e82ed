# SPDX-License-Identifier: BSD-2-Clause
"""Side data through `record`: a fixture sysfs tree (INFERTRACE_SYSFS_ROOT)
and a fake NVML (INFERTRACE_NVML_LIB) whose values the fixture experiment
(tests/fixtures/side_exp.c) rewrites before each cycle, so each cycle's
averages are known by construction; disk free space of a small tmpfs."""
import os
import shutil
import subprocess
import tempfile
import unittest

import common

GAP_MS, CYCLE_MS, PERIOD_S = 100, 250, 0.02
# temp C, CPU MHz, MemAvailable MB, GPU util %: cycles 2 and 3 are hot and slow
PLAN = [(50, 2000, 8000, 10), (55, 2000, 7000, 20), (85, 1200, 6000, 30),
        (86, 1100, 5000, 40), (60, 2000, 4000, 50), (52, 2000, 3000, 60)]


def fixture():
    return common.build("side_exp", ["side_exp.c"], "-O1 -g")


def fake_nvml():
    return common.build("libfake_nvml.so", ["fake_nvml.c"], "-shared -fPIC -O1")


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def sysfs_tree():
    root = tempfile.mkdtemp(prefix="it-sysfs-")
    write(root, "sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n")
    write(root, "sys/class/thermal/thermal_zone0/temp", "40000\n")
    cpu = "sys/devices/system/cpu/cpu0/cpufreq/"
    write(root, cpu + "cpuinfo_max_freq", "2000000\n")
    write(root, cpu + "scaling_max_freq", "2000000\n")
    write(root, cpu + "scaling_cur_freq", "2000000\n")
    write(root, "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 9000000 kB\n")
    return root


def run(env_extra, nvml_script="-", gpu="auto", args=()):
    root = sysfs_tree()
    env = dict(os.environ, INFERTRACE_SYSFS_ROOT=root, **env_extra)
    plan = [f"{t}:{m}:{mb}:{u}" for t, m, mb, u in PLAN]
    r = common.record(["--cycle", "run_cycle", "--side-period", str(PERIOD_S), "--gpu", gpu] + list(args),
                      [fixture(), root, nvml_script, str(GAP_MS), str(CYCLE_MS)] + plan, env=env)
    shutil.rmtree(root, ignore_errors=True)
    return r


@common.need_root
class SideTest(unittest.TestCase):
    def test_cycle_averages_and_throttling(self):
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="none")
        p = r.profile
        cycles = p["cycles"]
        self.assertEqual(len(cycles), len(PLAN))
        for c, (temp, mhz, mb, _) in zip(cycles, PLAN):
            self.assertGreaterEqual(c["side_samples"], 5, c)
            self.assertAlmostEqual(c["temp_c"]["x86_pkg_temp"], temp, places=3, msg=c)
            self.assertAlmostEqual(c["temp_max_c"], temp, places=3)
            self.assertAlmostEqual(c["cpu_mhz"], mhz, places=3)
            self.assertAlmostEqual(c["mem_available_mb"], mb, places=2)
        zone = p["thermal"]["zones"]["x86_pkg_temp"]
        self.assertAlmostEqual(zone["max"], 86, places=3)
        # the same samples are counter tracks in trace.json
        trace = common.load_json(os.path.join(r.dir, "trace.json"))
        temps = [e["args"]["x86_pkg_temp"] for e in trace["traceEvents"]
                 if e.get("ph") == "C" and e.get("name") == "temperature (C)"]
        self.assertGreaterEqual(len(temps), len(PLAN) * 5)
        self.assertAlmostEqual(max(temps), 86, places=3)
        self.assertLessEqual(zone["min"], 50)
        # one episode: from the write before cycle 2 to the write before cycle 4
        self.assertTrue(p["thermal"]["throttled"])
        eps = p["thermal"]["throttling"]
        self.assertEqual(len(eps), 1, eps)
        ep = eps[0]
        self.assertEqual(ep["source"], "cpu")
        self.assertEqual(ep["zone"], "x86_pkg_temp")
        self.assertGreaterEqual(ep["start_ns"], cycles[1]["end_ns"])
        self.assertLessEqual(ep["start_ns"], cycles[2]["start_ns"])
        self.assertGreaterEqual(ep["end_ns"], cycles[3]["end_ns"])
        self.assertLessEqual(ep["end_ns"], cycles[4]["start_ns"])
        self.assertAlmostEqual(ep["peak_temp_c"], 86, places=3)
        self.assertAlmostEqual(ep["min_clock_pct"], 55, places=3)
        self.assertFalse(ep["open"])
        throttled = [c["index"] for c in cycles if c["throttled_ms"] > 0]
        self.assertEqual(throttled, [2, 3])
        for i in (2, 3):
            self.assertAlmostEqual(cycles[i]["throttled_ms"], cycles[i]["duration_ms"], delta=1)
        # the kernel's thermal/power tracepoints: attached where present
        ke = p["thermal"]["kernel_events"]
        for tp in ("thermal:thermal_temperature", "power:cpu_frequency"):
            if os.path.exists("/sys/kernel/tracing/events/" + tp.replace(":", "/")):
                self.assertIn(tp, ke["attached"])
        # --gpu none: no notice, GPU not sampled
        self.assertNotIn("GPU data unavailable", r.stderr)
        self.assertFalse(p["gpu"]["available"])
        self.assertIn("x86_pkg_temp", p["thermal"]["zones"])
        self.assertAlmostEqual(p["host"]["mem_available_mb"]["min"], 3000, places=2)

    def test_fake_nvml(self):
        lib = fake_nvml()
        d = tempfile.mkdtemp(prefix="it-nvml-")
        script = os.path.join(d, "nvml.script")
        with open(script, "w") as f:
            f.write("name=Fake H100\nutil=0\n")
        r = run({"INFERTRACE_NVML_LIB": lib, "FAKE_NVML_SCRIPT": script}, nvml_script=script, gpu="nvml")
        shutil.rmtree(d, ignore_errors=True)
        g = r.profile["gpu"]
        self.assertTrue(g["available"], g)
        self.assertEqual(g["source"], "nvml")
        self.assertEqual(g["device"], "Fake H100")
        self.assertAlmostEqual(g["mem_total_mb"], 81559, places=1)
        self.assertAlmostEqual(g["util_pct"]["max"], 60, places=3)
        pid = str(r.profile["pids"][0])
        self.assertAlmostEqual(g["process_mem_mb"][pid], 512, places=1)
        self.assertNotIn("GPU data unavailable", r.stderr)
        for c, (temp, _, _, util) in zip(r.profile["cycles"], PLAN):
            self.assertAlmostEqual(c["gpu"]["util_pct"], util, places=3, msg=c)
            self.assertAlmostEqual(c["gpu"]["mem_used_mb"], util * 100, places=2)
            self.assertAlmostEqual(c["gpu"]["temp_c"], temp, places=3)
            self.assertAlmostEqual(c["gpu"]["power_w"], util, places=3)
            self.assertAlmostEqual(c["gpu"]["target_mem_mb"], 512, places=1)

    def test_no_gpu_library(self):
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="auto")
        self.assertEqual(r.proc.returncode, 0)
        self.assertEqual(r.stderr.count("GPU data unavailable"), 1, r.stderr)
        g = r.profile["gpu"]
        self.assertFalse(g["available"])
        self.assertIn("NVML not available", g["unavailable_reason"])
        self.assertEqual(len(r.profile["cycles"]), len(PLAN))

    def test_disk_free_on_tmpfs(self):
        mnt = tempfile.mkdtemp(prefix="it-tmpfs-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt], check=True)
        try:
            with open(os.path.join(mnt, "fill"), "wb") as f:
                f.write(b"\0" * (15 * 1024 * 1024))
            st = os.statvfs(mnt)
            free_mb = st.f_bavail * st.f_frsize / 2**20
            out = os.path.join(mnt, "out")
            proc = subprocess.run([common.INFERTRACE, "record", "-o", out, "--side-period", "0.05", "--",
                                   "/bin/sleep", "0.5"], cwd=mnt, text=True, timeout=120,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            r = common.Recording(out, proc)
            d = r.profile["disk"]
            self.assertIn(out, d["paths"])
            self.assertIn(mnt, d["paths"])
            info = d["paths"][out]
            self.assertAlmostEqual(info["total_mb"], 16, delta=0.1)
            self.assertAlmostEqual(info["min_free_mb"], free_mb, delta=0.25)
            self.assertLess(info["percent_free"], 10)
            self.assertTrue(info["alert"])
            self.assertTrue(d["alert"])
        finally:
            subprocess.run(["umount", mnt], check=False)
            os.rmdir(mnt)


if __name__ == "__main__":
    unittest.main()
