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


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def sysfs_tree():
    # on tmpfs where there is one: a rename on a busy disk can stall the
    # energy feeder for tens of milliseconds
    root = tempfile.mkdtemp(prefix="it-sysfs-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    write(root, "sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n")
    write(root, "sys/class/thermal/thermal_zone0/temp", "40000\n")
    cpu = "sys/devices/system/cpu/cpu0/cpufreq/"
    write(root, cpu + "cpuinfo_max_freq", "2000000\n")
    write(root, cpu + "scaling_max_freq", "2000000\n")
    write(root, cpu + "scaling_cur_freq", "2000000\n")
    write(root, "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 9000000 kB\n")
    return root


def run(env_extra, nvml_script="-", gpu="auto", args=(), tree=None, plan=PLAN, period=PERIOD_S, cycle_ms=CYCLE_MS,
        gap_ms=GAP_MS):
    """tree(root) adds to the fixture sysfs tree and may return a process
    (a feeder) that runs beside the recording and is stopped after it.
    period None: the default side period."""
    root = sysfs_tree()
    feeder = tree(root) if tree else None
    env = dict(os.environ, INFERTRACE_SYSFS_ROOT=root, **env_extra)
    plan = [f"{t}:{m}:{mb}:{u}" for t, m, mb, u in plan]
    try:
        opts = ["--side-period", str(period)] if period else []
        r = common.record(["--cycle", "run_cycle", "--gpu", gpu] + opts + list(args),
                          [common.fixture("side_exp"), root, nvml_script, str(gap_ms), str(cycle_ms)] + plan, env=env)
    finally:
        if feeder:
            feeder.terminate()
            feeder.wait()
            if feeder.stdout:
                feeder.stdout.close()
        shutil.rmtree(root, ignore_errors=True)
    return r


# powercap (named pipes that energy_feeder answers with the value of the
# moment): package at 25 W (its limit 25 W: at the limit) whose counter's
# range is 0.7 s of that, so it wraps several times in any run whenever it
# starts; dram at 5 W with a real range. Both µJ counters.
PKG_W, DRAM_W, PKG_LIMIT_W, RANGE_UJ, PKG_RANGE_UJ = 25.0, 5.0, 25.0, 262143328850, 17500000


def rapl_tree(root):
    base = "sys/class/powercap/"
    zones = [("intel-rapl:0", "package-0", PKG_W, PKG_RANGE_UJ), ("intel-rapl:0:0", "dram", DRAM_W, RANGE_UJ)]
    spec = []
    for d, name, watts, rng in zones:
        write(root, base + d + "/name", name + "\n")
        write(root, base + d + "/energy_uj", "1000\n")
        write(root, base + d + "/max_energy_range_uj", f"{rng}\n")
        spec.append(f"{os.path.join(root, base, d, 'energy_uj')}:{int(watts * 1e6)}:1000:{rng}")
    write(root, base + "intel-rapl:0/constraint_0_power_limit_uw", f"{int(PKG_LIMIT_W * 1e6)}\n")
    # the MMIO interface repeats the package: not counted twice
    write(root, base + "intel-rapl-mmio:0/name", "package-0\n")
    write(root, base + "intel-rapl-mmio:0/energy_uj", "5\n")
    feeder = subprocess.Popen([common.fixture("energy_feeder")] + spec,
                              stdout=subprocess.PIPE, text=True)
    assert feeder.stdout.readline().strip() == "ready"
    return feeder


def jetson_tree(mode):
    def tree(root):
        h = "sys/bus/i2c/devices/1-0040/"
        write(root, h + "name", "ina3221\n")
        # VDD_IN 5 V x 1.6 A = 8 W, CPU 5 V x 0.4 A = 2 W, GPU 5 V x 0.8 A = 4 W
        for ch, (label, ma) in enumerate([("VDD_IN", 1600), ("VDD_CPU_CV", 400), ("VDD_GPU_SOC", 800)], 1):
            write(root, h + f"hwmon/hwmon3/in{ch}_label", label + "\n")
            write(root, h + f"hwmon/hwmon3/in{ch}_input", "5000\n")
            write(root, h + f"hwmon/hwmon3/curr{ch}_input", f"{ma}\n")
        write(root, "sys/class/devfreq/17000000.ga10b/cur_freq", "612000000\n")
        write(root, "sys/class/devfreq/17000000.ga10b/max_freq", "1300500000\n")
        write(root, "sys/class/devfreq/17000000.ga10b/device/of_node/name", "ga10b\n")
        write(root, "var/lib/nvpmodel/status", f"pmode:{mode:04d} fmode:quiet\n")
        write(root, "etc/nvpmodel.conf", "< POWER_MODEL ID=0 NAME=MAXN >\nCPU_ONLINE CORE_0 1\n"
              "< POWER_MODEL ID=2 NAME=15W >\nCPU_ONLINE CORE_0 1\n")
        write(root, "sys/kernel/debug/bpmp/debug/clk/emc/rate", "3199000000\n")
        write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil\n")
        return None
    return tree


def energy_source(p, name):
    return next(s for s in p["energy"]["sources"] if s["name"] == name)


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
        lib = common.fixture("libfake_nvml.so")
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
        # no energy counter in this fake: the power readings (util W per cycle) integrated
        src = energy_source(r.profile, "gpu0")
        self.assertEqual((src["domain"], src["kind"]), ("gpu", "integral"))
        for c, (_, _, _, util) in zip(r.profile["cycles"], PLAN):
            s = c["duration_ms"] / 1e3
            self.assertAlmostEqual(c["energy"]["gpu_j"], util * s, delta=util * s * 0.05, msg=c)

    def test_rapl_energy_with_wrap(self):
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="none", tree=rapl_tree,
                args=["--phase", "work=cycle_body", "--count", "tokens=cycle_body"])
        p = r.profile
        common.assert_schema(p)
        e = p["energy"]
        self.assertEqual(sorted(s["name"] for s in e["sources"]), ["intel-rapl:0:0:dram", "intel-rapl:0:package-0"])
        pkg, dram = energy_source(p, "intel-rapl:0:package-0"), energy_source(p, "intel-rapl:0:0:dram")
        self.assertEqual((pkg["domain"], pkg["kind"]), ("cpu", "counter"))
        self.assertEqual(dram["domain"], "dram")
        # the period the counter was read at (the side period here, shorter than
        # the 50 ms energy reads would be)
        self.assertAlmostEqual(pkg["period_ms"], PERIOD_S * 1000, delta=2)
        self.assertGreaterEqual(pkg["wraps"], 2)  # wraps happened mid-run ...
        self.assertEqual(dram["wraps"], 0)
        self.assertAlmostEqual(pkg["mean_w"], PKG_W, delta=PKG_W * 0.02)  # ... and changed nothing
        self.assertAlmostEqual(dram["mean_w"], DRAM_W, delta=DRAM_W * 0.02)
        self.assertEqual(len(p["cycles"]), len(PLAN))
        for c in p["cycles"]:
            s = c["duration_ms"] / 1e3
            self.assertAlmostEqual(c["energy"]["cpu_j"], PKG_W * s, delta=PKG_W * s * 0.05, msg=c)
            self.assertAlmostEqual(c["energy"]["dram_j"], DRAM_W * s, delta=DRAM_W * s * 0.05, msg=c)
            self.assertNotIn("gpu_j", c["energy"])  # unmeasured: absent, not zero
            self.assertAlmostEqual(c["energy"]["total_j"], c["energy"]["cpu_j"] + c["energy"]["dram_j"], places=6)
            self.assertAlmostEqual(c["energy"]["tokens_per_joule"], 1 / c["energy"]["total_j"], places=6)
        self.assertEqual(e["cycles_measured"], len(PLAN))
        # the phase's intervals (each cycle's call) are measured the same way
        ph = e["phases"]["work"]
        self.assertEqual((ph["intervals_measured"], ph["intervals_left_out"]), (len(PLAN), 0))
        self.assertAlmostEqual(ph["cpu_j"], PKG_W * ph["measured_ms"] / 1e3, delta=PKG_W * ph["measured_ms"] / 1e3 * 0.05)
        self.assertAlmostEqual(e["cpu_j"], sum(c["energy"]["cpu_j"] for c in p["cycles"]), places=6)
        self.assertAlmostEqual(e["tokens_per_joule"], len(PLAN) / e["total_j"], places=6)
        # the peak is over one period: a late feeder write shows as a spike, never as less
        self.assertGreaterEqual(e["peak_w"], (PKG_W + DRAM_W) * 0.98)
        missing = {m["domain"]: m["reason"] for m in e["missing"]}
        self.assertEqual(sorted(missing), ["board", "gpu"])
        self.assertIn("--gpu none", missing["gpu"])
        # at the limit, the clock dropped in cycles 2 and 3 only: power_capped
        capped = [b for b in p["bottlenecks"] if b["type"] == "power_capped"]
        self.assertEqual(len(capped), 1, p["bottlenecks"])
        eps = capped[0]["evidence"]["episodes"]
        self.assertGreaterEqual(len(eps), 1, eps)
        for ep in eps:
            self.assertGreaterEqual(ep["start_ns"], p["cycles"][1]["end_ns"])
            self.assertLessEqual(ep["end_ns"], p["cycles"][4]["start_ns"])
        self.assertAlmostEqual(min(ep["min_clock_pct"] for ep in eps), 55, places=3)
        low_clock_ms = p["cycles"][4]["start_ns"] / 1e6 - p["cycles"][1]["end_ns"] / 1e6
        self.assertGreater(sum(ep["duration_ms"] for ep in eps), 0.5 * low_clock_ms, eps)
        # the power alert: the seeds' 1000 mW default
        alerts = [a for a in p["alerts"] if a["type"] == "power"]
        self.assertEqual(len(alerts), 1)
        self.assertEqual(alerts[0]["threshold_mw"], 1000)
        # RAPL figures are root-only: the files holding them are the owner's alone
        for f in ("profile.json", "report.html"):
            self.assertEqual(os.stat(os.path.join(r.dir, f)).st_mode & 0o077, 0, f)
        rep = subprocess.run([common.INFERTRACE, "report", r.dir], text=True, capture_output=True, check=True)
        self.assertIn("Energy over 6 cycles", rep.stdout)
        self.assertIn("no board energy", rep.stdout)

    def test_resolution_and_power_threshold(self):
        # a 300 ms side period: the energy counters are read alone between the
        # rows, at 1/5 of the cycles' pace (350 ms: 70 ms), so the 250 ms
        # cycles and phase calls are measured all the same
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="none", tree=rapl_tree,
                args=["--threshold", "power_mw=100000", "--side-period", "0.3", "--phase", "work=cycle_body"],
                plan=PLAN[:2])
        p = r.profile
        e = p["energy"]
        self.assertEqual((e["cycles_measured"], e["cycles_left_out"]), (2, 0))
        self.assertEqual((e["phases"]["work"]["intervals_measured"], e["phases"]["work"]["intervals_left_out"]), (2, 0))
        self.assertLess(e["resolution_ms"], 125)
        src = energy_source(p, "intel-rapl:0:package-0")
        self.assertLess(src["period_ms"], 125)
        for c in p["cycles"]:
            s = c["duration_ms"] / 1e3
            self.assertAlmostEqual(c["energy"]["cpu_j"], PKG_W * s, delta=PKG_W * s * 0.05, msg=c)
        # the run as a whole
        self.assertAlmostEqual(e["run"]["cpu_j"], PKG_W * src["seconds"], delta=PKG_W * src["seconds"] * 0.02)
        self.assertEqual(p["config"]["thresholds"]["power_mw"], 100000)
        self.assertEqual([a for a in p["alerts"] if a["type"] == "power"], [])
        self.assertEqual([b for b in p["bottlenecks"] if b["type"] == "power_capped"], [])

    def test_energy_of_short_cycles_at_the_default_period(self):
        # 150 ms cycles every 180 ms and the default 1 s side period: each
        # cycle's joules within 5% of duration x the feeder's 25 W and 5 W
        plan = [PLAN[0]] * 12
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="none", tree=rapl_tree,
                period=None, cycle_ms=150, gap_ms=30, plan=plan)
        p = r.profile
        common.assert_schema(p)
        e = p["energy"]
        self.assertEqual(p["config"]["side_period_s"], 1)
        self.assertEqual(len(p["cycles"]), len(plan))
        self.assertEqual((e["cycles_measured"], e["cycles_left_out"]), (len(plan), 0))
        for c in p["cycles"]:
            s = c["duration_ms"] / 1e3
            self.assertAlmostEqual(c["energy"]["cpu_j"], PKG_W * s, delta=PKG_W * s * 0.05, msg=c)
            self.assertAlmostEqual(c["energy"]["dram_j"], DRAM_W * s, delta=DRAM_W * s * 0.05, msg=c)
        # read at about 180 / 5 = 36 ms (50 ms until the pace was known), and said so
        for src in e["sources"]:
            self.assertGreaterEqual(src["period_ms"], 10, src)
            self.assertLessEqual(src["period_ms"], 60, src)
        self.assertLessEqual(e["resolution_ms"], 60)
        self.assertAlmostEqual(energy_source(p, "intel-rapl:0:package-0")["mean_w"], PKG_W, delta=PKG_W * 0.02)

    def test_nvml_energy_counter(self):
        lib = common.fixture("libfake_nvml.so")
        d = tempfile.mkdtemp(prefix="it-nvml-")
        script = os.path.join(d, "nvml.script")
        with open(script, "w") as f:
            f.write("name=Fake H100\nenergy_rate_mw=40000\n")
        # the driver reports a software power cap with the GPU busy and its
        # clock below its maximum
        extra = "energy_rate_mw=40000\nreasons=0x4\nsm_mhz=1400\nutil=90"
        r = run({"INFERTRACE_NVML_LIB": lib, "FAKE_NVML_SCRIPT": script, "SIDE_EXP_NVML_EXTRA": extra},
                nvml_script=script, gpu="nvml")
        shutil.rmtree(d, ignore_errors=True)
        p = r.profile
        gpu = energy_source(p, "gpu0")
        self.assertEqual((gpu["domain"], gpu["kind"]), ("gpu", "counter"))
        self.assertAlmostEqual(gpu["mean_w"], 40, delta=40 * 0.02)
        for c in p["cycles"]:
            s = c["duration_ms"] / 1e3
            self.assertAlmostEqual(c["energy"]["gpu_j"], 40 * s, delta=40 * s * 0.05, msg=c)
        missing = {m["domain"] for m in p["energy"]["missing"]}
        self.assertEqual(missing, {"cpu", "dram", "board"})
        capped = [b for b in p["bottlenecks"] if b["type"] == "power_capped"]
        self.assertEqual(len(capped), 1, p["bottlenecks"])
        eps = capped[0]["evidence"]["episodes"]
        self.assertEqual({ep["source"] for ep in eps}, {"gpu0"})
        self.assertEqual(eps[0]["reason"], "sw_power_cap")
        self.assertAlmostEqual(eps[0]["min_clock_pct"], 100 * 1400 / 1980, places=2)
        self.assertLessEqual(eps[0]["start_ns"], p["cycles"][0]["start_ns"])
        # no RAPL: nothing root-only, the profile keeps its usual mode
        self.assertFalse(any(s.get("root_only") for s in p["energy"]["sources"]))

    def test_nvml_power_cap_bit_at_low_load_is_no_cap(self):
        """The driver sets sw_power_cap at low load too, its clock low as
        an idle GPU's (seen on an H200): with the GPU 5% busy that is no
        power cap costing time, nor GPU throttling; the same bit and clock
        at 90% busy is both."""
        lib = common.fixture("libfake_nvml.so")
        found = {}
        for busy in (5, 90):
            d = tempfile.mkdtemp(prefix="it-nvml-")
            script = os.path.join(d, "nvml.script")
            with open(script, "w") as f:
                f.write("name=Fake H200\n")
            extra = f"reasons=0x4\nsm_mhz=345\nutil={busy}"
            # temperatures below the thermal rule's 75 C: the power bit alone
            r = run({"INFERTRACE_NVML_LIB": lib, "FAKE_NVML_SCRIPT": script, "SIDE_EXP_NVML_EXTRA": extra},
                    nvml_script=script, gpu="nvml", plan=[(50, 2000, 8000, 10), (55, 2000, 7000, 20), (60, 2000, 6000, 30)])
            shutil.rmtree(d, ignore_errors=True)
            self.assertEqual(len(r.profile["cycles"]), 3)
            found[busy] = [b for b in r.profile["bottlenecks"] if b["type"] == "power_capped"]
            # nor a GPU throttling episode (the CPU's come from the plan's temperatures)
            gpu_throttled = [e for e in r.profile["thermal"]["throttling"] if e["source"].startswith("gpu")]
            self.assertEqual(bool(gpu_throttled), busy == 90, (busy, gpu_throttled))
        self.assertEqual(found[5], [])
        self.assertEqual(len(found[90]), 1, found)
        self.assertEqual(found[90][0]["evidence"]["episodes"][0]["reason"], "sw_power_cap")

    def test_jetson_rails_and_power_mode(self):
        env = {"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}
        a = run(env, gpu="jetson", tree=jetson_tree(2), plan=PLAN[:3])
        p = a.profile
        common.assert_schema(p)
        pw = p["system"]["power"]
        self.assertEqual(pw["nvpmodel"], {"id": 2, "name": "15W", "source": "/var/lib/nvpmodel/status"})
        self.assertAlmostEqual(pw["emc_mhz"], 3199, places=3)
        self.assertAlmostEqual(pw["gpu_max_mhz"], 1300.5, places=3)
        self.assertEqual(pw["governor"], "schedutil")
        kinds = {s["name"]: (s["domain"], s["kind"]) for s in p["energy"]["sources"]}
        self.assertEqual(kinds, {"VDD_IN": ("board", "integral"), "VDD_CPU_CV": ("cpu", "integral"),
                                 "VDD_GPU_SOC": ("gpu", "integral")})
        for c in p["cycles"]:
            s = c["duration_ms"] / 1e3
            for key, watts in (("board_j", 8), ("cpu_j", 2), ("gpu_j", 4)):
                self.assertAlmostEqual(c["energy"][key], watts * s, delta=watts * s * 0.05, msg=c)
            self.assertEqual(c["energy"]["total_j"], c["energy"]["board_j"])  # the board includes the rest
        b = run(env, gpu="jetson", tree=jetson_tree(0), plan=PLAN[:3])
        self.assertEqual(b.profile["system"]["power"]["nvpmodel"]["name"], "MAXN")
        d = subprocess.run([common.INFERTRACE, "diff", "--threshold", "1000", a.dir, b.dir], text=True,
                           capture_output=True)
        self.assertIn("power mode: base nvpmodel 2 (15W), governor schedutil; new nvpmodel 0 (MAXN)", d.stdout)
        self.assertIn("WARNING: the runs were made in different power modes", d.stdout)
        self.assertIn("energy_j_per_cycle", d.stdout)
        with open(os.path.join(a.dir, "report.html")) as f:
            html = f.read()
        self.assertIn("Energy and power mode", html)
        self.assertIn("15W", html)
        same = subprocess.run([common.INFERTRACE, "diff", "--threshold", "1000", a.dir, a.dir], text=True,
                              capture_output=True)
        self.assertNotIn("different power modes", same.stdout)

    def test_no_gpu_library(self):
        r = run({"INFERTRACE_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}, gpu="auto")
        self.assertEqual(r.proc.returncode, 0)
        # no energy source here: each domain named with its reason, no zero anywhere
        common.assert_schema(r.profile)
        e = r.profile["energy"]
        self.assertEqual(e["sources"], [])
        self.assertEqual(e["cycles_measured"], 0)
        missing = {m["domain"]: m["reason"] for m in e["missing"]}
        self.assertEqual(sorted(missing), ["board", "cpu", "dram", "gpu"])
        self.assertIn("powercap", missing["cpu"])
        self.assertIn("NVML not available", missing["gpu"])
        for k in ("cpu_j", "dram_j", "gpu_j", "board_j", "total_j", "tokens_per_joule"):
            self.assertNotIn(k, e)
        self.assertTrue(all("energy" not in c for c in r.profile["cycles"]))
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
