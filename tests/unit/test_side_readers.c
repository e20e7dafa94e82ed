// SPDX-License-Identifier: BSD-2-Clause
/* sysfs/procfs readers, Jetson discovery and the throttling tracker,
 * against fixture trees whose values are known by construction. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <cmocka.h>

#include "../fixtures/sysfs_fixture.h"
#include "gpu_jetson.h"
#include "gpu_nvml.h"
#include "sysfs_readers.h"
#include "profile_side.h"
#include "throttle.h"

#define EPS 1e-6

struct fx {
	char *root;
	struct channels cs;
	double row[256];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || !(f->root = fx_root_new()))
		return -1;
	setenv("INFERTRACE_SYSFS_ROOT", f->root, 1);
	channels__init(&f->cs);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	channels__free(&f->cs);
	fx_rm(f->root);
	free(f->root);
	free(f);
	unsetenv("INFERTRACE_SYSFS_ROOT");
	return 0;
}

static void read_row(struct fx *f)
{
	assert_true(f->cs.n <= 256);
	for (int i = 0; i < 256; i++)
		f->row[i] = NAN;
	channels__read_all(&f->cs, f->row);
}

/* value of the channel (metric, name); fails the test when absent */
static double val(struct fx *f, enum side_metric m, const char *name)
{
	for (int i = 0; i < f->cs.n; i++)
		if (f->cs.v[i].metric == m && strcmp(f->cs.v[i].name, name) == 0)
			return f->row[i];
	fail_msg("no channel %d '%s'", (int)m, name);
	return NAN;
}

static bool has(struct fx *f, enum side_metric m, const char *name)
{
	for (int i = 0; i < f->cs.n; i++)
		if (f->cs.v[i].metric == m && strcmp(f->cs.v[i].name, name) == 0)
			return true;
	return false;
}

static void test_root_default_and_override(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];

	assert_string_equal(sysfs_root(), f->root);
	assert_int_equal(sysfs_path(p, sizeof(p), "sys/class/%s", "thermal"), 0);
	assert_true(strncmp(p, f->root, strlen(f->root)) == 0);
	assert_string_equal(p + strlen(f->root), "/sys/class/thermal");
	unsetenv("INFERTRACE_SYSFS_ROOT");
	assert_string_equal(sysfs_root(), "");
	assert_int_equal(sysfs_path(p, sizeof(p), "proc/stat"), 0);
	assert_string_equal(p, "/proc/stat");
	setenv("INFERTRACE_SYSFS_ROOT", f->root, 1);
}

static void test_thermal_zones(void **state)
{
	struct fx *f = *state;

	fx_board_pc(f->root);
	fx_write(f->root, "sys/class/thermal/thermal_zone2/type", "acpitz");
	fx_write(f->root, "sys/class/thermal/thermal_zone2/temp", "-5000");
	fx_write(f->root, "sys/class/thermal/thermal_zone10/type", "iwlwifi_1");
	fx_write(f->root, "sys/class/thermal/thermal_zone10/temp", "37500");
	/* a zone whose sensor is absent: temp unreadable, so skipped */
	fx_write(f->root, "sys/class/thermal/thermal_zone3/type", "broken");
	assert_int_equal(sysfs_discover_thermal(&f->cs), 4);
	/* natural order: zone2 before zone10 */
	assert_string_equal(f->cs.v[0].name, "x86_pkg_temp");
	assert_string_equal(f->cs.v[1].name, "acpitz");
	assert_string_equal(f->cs.v[2].name, "acpitz.2");
	assert_string_equal(f->cs.v[3].name, "iwlwifi_1");
	read_row(f);
	assert_float_equal(val(f, SM_ZONE_TEMP_C, "x86_pkg_temp"), 50.0, EPS);
	assert_float_equal(val(f, SM_ZONE_TEMP_C, "acpitz"), 40.0, EPS);
	assert_float_equal(val(f, SM_ZONE_TEMP_C, "acpitz.2"), -5.0, EPS);
	assert_float_equal(val(f, SM_ZONE_TEMP_C, "iwlwifi_1"), 37.5, EPS);
	fx_write(f->root, "sys/class/thermal/thermal_zone0/temp", "81250");
	read_row(f);
	assert_float_equal(val(f, SM_ZONE_TEMP_C, "x86_pkg_temp"), 81.25, EPS);
}

static void test_cpufreq_hwmon_meminfo(void **state)
{
	struct fx *f = *state;

	fx_board_pc(f->root);
	fx_write(f->root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1200000");
	fx_write(f->root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq", "1500000");
	assert_int_equal(sysfs_discover_cpufreq(&f->cs), 6);
	assert_int_equal(sysfs_discover_hwmon(&f->cs), 3);
	assert_int_equal(sysfs_discover_meminfo(&f->cs), 1);
	read_row(f);
	assert_float_equal(val(f, SM_CPU_MHZ, "cpu0"), 2000.0, EPS);
	assert_float_equal(val(f, SM_CPU_MHZ, "cpu1"), 1200.0, EPS);
	assert_float_equal(val(f, SM_CPU_MAX_MHZ, "cpu1"), 2000.0, EPS);
	assert_float_equal(val(f, SM_CPU_SCALING_MAX_MHZ, "cpu1"), 1500.0, EPS);
	assert_float_equal(val(f, SM_HWMON_TEMP_C, "coretemp/Package id 0"), 52.0, EPS);
	assert_float_equal(val(f, SM_HWMON_TEMP_C, "coretemp/temp2"), 48.0, EPS);
	assert_float_equal(val(f, SM_HWMON_POWER_W, "power_meter/power1"), 35.5, EPS);
	assert_float_equal(val(f, SM_MEM_AVAILABLE_MB, "MemAvailable"), 8192000 / 1024.0, EPS);
}

static void test_cpu_load(void **state)
{
	struct fx *f = *state;
	unsigned long long busy[3] = { 1000, 5000, 0 }, idle[3] = { 1000, 100, 0 };

	fx_proc_stat(f->root, 2, busy, idle);
	assert_int_equal(sysfs_discover_cpuload(&f->cs), 2);
	read_row(f);
	/* no previous counters yet */
	assert_true(isnan(val(f, SM_CPU_LOAD_PCT, "cpu0")));
	busy[0] += 30, idle[0] += 70;
	busy[1] += 100;
	fx_proc_stat(f->root, 2, busy, idle);
	read_row(f);
	assert_float_equal(val(f, SM_CPU_LOAD_PCT, "cpu0"), 30.0, EPS);
	assert_float_equal(val(f, SM_CPU_LOAD_PCT, "cpu1"), 100.0, EPS);
	/* nothing elapsed: no load rather than a division by zero */
	read_row(f);
	assert_true(isnan(val(f, SM_CPU_LOAD_PCT, "cpu0")));
}

static void test_disk_statvfs(void **state)
{
	struct fx *f = *state;
	struct statvfs sv;

	assert_int_equal(sysfs_add_disk(&f->cs, f->root), 2);
	assert_int_equal(sysfs_add_disk(&f->cs, "/nonexistent/infertrace"), 2);
	read_row(f);
	assert_int_equal(statvfs(f->root, &sv), 0);
	assert_float_equal(f->row[1], (double)sv.f_blocks * sv.f_frsize / 1048576.0, EPS);
	/* free space moves with other writers: within 64 MiB of this reading */
	assert_float_equal(f->row[0], (double)sv.f_bavail * sv.f_frsize / 1048576.0, 64.0);
	assert_true(isnan(f->row[2]) && isnan(f->row[3]));
}

static void test_jetson_orin(void **state)
{
	struct fx *f = *state;
	char why[256] = "";
	struct gpu_jetson *j;

	fx_board_orin(f->root);
	sysfs_discover_thermal(&f->cs);
	/* NC and the channel-7 shunt sum are not rails */
	assert_int_equal(jetson_discover_rails(&f->cs), 2);
	j = gpu_jetson__probe(why, sizeof(why));
	assert_non_null(j);
	assert_string_equal(gpu_jetson__name(j), "ga10b");
	/* load, clock, max clock, GPU-therm alias, VDD_GPU_SOC alias */
	assert_int_equal(gpu_jetson__add_channels(j, &f->cs), 5);
	read_row(f);
	assert_float_equal(val(f, SM_GPU_UTIL_PCT, "gpu0"), 34.5, EPS);
	assert_float_equal(val(f, SM_GPU_SM_MHZ, "gpu0"), 612.0, EPS);
	assert_float_equal(val(f, SM_GPU_MAX_MHZ, "gpu0"), 1300.5, EPS);
	assert_float_equal(val(f, SM_GPU_TEMP_C, "gpu0"), 47.0, EPS);
	assert_float_equal(val(f, SM_GPU_POWER_W, "gpu0"), 4.0, EPS);
	assert_float_equal(val(f, SM_RAIL_POWER_W, "VDD_GPU_SOC"), 4.0, EPS);
	assert_float_equal(val(f, SM_RAIL_POWER_W, "VDD_CPU_CV"), 2.0, EPS);
	assert_false(has(f, SM_RAIL_POWER_W, "NC"));
	gpu_jetson__free(j);
}

static void test_jetson_orin_l4t36(void **state)
{
	struct fx *f = *state;
	char why[256] = "";
	struct gpu_jetson *j;

	fx_write(f->root, "sys/class/devfreq/17000000.gpu/cur_freq", "306000000");
	fx_write(f->root, "sys/class/devfreq/17000000.gpu/max_freq", "918000000");
	fx_write(f->root, "sys/class/devfreq/17000000.gpu/device/of_node/name", "gpu");
	fx_write(f->root, "sys/class/devfreq/17000000.gpu/device/load", "1000");
	j = gpu_jetson__probe(why, sizeof(why));
	assert_non_null(j);
	assert_string_equal(gpu_jetson__name(j), "17000000.gpu");
	assert_int_equal(gpu_jetson__add_channels(j, &f->cs), 3);
	read_row(f);
	assert_float_equal(val(f, SM_GPU_UTIL_PCT, "gpu0"), 100.0, EPS);
	assert_float_equal(val(f, SM_GPU_SM_MHZ, "gpu0"), 306.0, EPS);
	gpu_jetson__free(j);
}

static void test_jetson_xavier(void **state)
{
	struct fx *f = *state;
	char why[256] = "";
	struct gpu_jetson *j;

	fx_board_xavier(f->root);
	sysfs_discover_thermal(&f->cs);
	assert_int_equal(jetson_discover_rails(&f->cs), 2);
	j = gpu_jetson__probe(why, sizeof(why));
	assert_non_null(j);
	assert_string_equal(gpu_jetson__name(j), "gv11b");
	gpu_jetson__add_channels(j, &f->cs);
	read_row(f);
	assert_float_equal(val(f, SM_GPU_UTIL_PCT, "gpu0"), 99.0, EPS);
	assert_float_equal(val(f, SM_GPU_SM_MHZ, "gpu0"), 1377.0, EPS);
	assert_float_equal(val(f, SM_GPU_TEMP_C, "gpu0"), 41.5, EPS);
	assert_float_equal(val(f, SM_RAIL_POWER_W, "GPU"), 6.12, EPS);
	assert_float_equal(val(f, SM_RAIL_POWER_W, "CPU"), 1.53, EPS);
	assert_float_equal(val(f, SM_GPU_POWER_W, "gpu0"), 6.12, EPS);
	gpu_jetson__free(j);
}

static void test_jetson_nano(void **state)
{
	struct fx *f = *state;
	char why[256] = "";
	struct gpu_jetson *j;

	fx_board_nano(f->root);
	assert_int_equal(jetson_discover_rails(&f->cs), 2);
	j = gpu_jetson__probe(why, sizeof(why));
	assert_non_null(j);
	assert_string_equal(gpu_jetson__name(j), "57000000.gpu");
	gpu_jetson__add_channels(j, &f->cs);
	read_row(f);
	assert_float_equal(val(f, SM_GPU_UTIL_PCT, "gpu0"), 0.0, EPS);
	assert_float_equal(val(f, SM_GPU_SM_MHZ, "gpu0"), 76.8, EPS);
	assert_float_equal(val(f, SM_GPU_MAX_MHZ, "gpu0"), 921.6, EPS);
	assert_float_equal(val(f, SM_RAIL_POWER_W, "POM_5V_IN"), 2.4, EPS);
	/* volts x amps when the driver gives no power file */
	assert_float_equal(val(f, SM_RAIL_POWER_W, "POM_5V_GPU"), 4.968 * 0.25, EPS);
	assert_float_equal(val(f, SM_GPU_POWER_W, "gpu0"), 4.968 * 0.25, EPS);
	gpu_jetson__free(j);
}

static void test_jetson_absent(void **state)
{
	struct fx *f = *state;
	char why[256] = "";

	fx_board_pc(f->root);
	assert_null(gpu_jetson__probe(why, sizeof(why)));
	assert_non_null(strstr(why, "no Jetson GPU"));
	assert_int_equal(jetson_discover_rails(&f->cs), 0);
}

static void test_throttle_rules(void **state)
{
	(void)state;
	/* 76 C at 79% of max: both conditions */
	assert_true(throttle_thermal_active(76, 1580, 2000, 75, 20));
	assert_false(throttle_thermal_active(75, 1000, 2000, 75, 20)); /* not above */
	assert_false(throttle_thermal_active(90, 1600, 2000, 75, 20)); /* exactly 80% */
	assert_false(throttle_thermal_active(NAN, 1000, 2000, 75, 20));
	assert_false(throttle_thermal_active(90, 1000, 0, 75, 20));
	assert_false(throttle_nvml_active(0));
	assert_false(throttle_nvml_active(NVML_REASON_GPU_IDLE));
	assert_false(throttle_nvml_active(NVML_REASON_GPU_IDLE | NVML_REASON_APP_CLOCKS_SETTING));
	assert_true(throttle_nvml_active(NVML_REASON_SW_THERMAL));
	assert_true(throttle_nvml_active(NVML_REASON_HW_SLOWDOWN | NVML_REASON_GPU_IDLE));
	assert_true(throttle_nvml_active(NVML_REASON_SW_POWER_CAP));
}

static void test_throttle_reason_names(void **state)
{
	char buf[256];
	json_t *a;

	(void)state;
	throttle_nvml_reason_names(NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_THERMAL, buf, sizeof(buf));
	assert_string_equal(buf, "sw_power_cap,hw_thermal_slowdown");
	throttle_nvml_reason_names(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	a = profile_side__reasons_json(NVML_REASON_GPU_IDLE | NVML_REASON_DISPLAY_CLOCKS);
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 0)), "gpu_idle");
	assert_string_equal(json_string_value(json_array_get(a, 1)), "display_clock_setting");
	json_decref(a);
}

static void test_throttle_tracker(void **state)
{
	struct throttle_tracker *t = throttle_tracker__new();
	const struct throttle_episode *e;
	json_t *eps, *j;

	(void)state;
	assert_non_null(t);
	throttle_tracker__observe(t, "cpu", 100, 100, false, "z", "r", 50, 100);
	throttle_tracker__observe(t, "cpu", 200, 200, true, "hot", "thermal", 80, 70);
	throttle_tracker__observe(t, "gpu0", 250, 250, true, "gpu", "sw_thermal_slowdown", NAN, NAN);
	throttle_tracker__observe(t, "cpu", 300, 300, true, "other", "x", 85, 60);
	throttle_tracker__observe(t, "cpu", 400, 400, false, "z", "r", 60, 100);
	throttle_tracker__observe(t, "cpu", 500, 500, true, "hot", "thermal", 78, 75);
	throttle_tracker__finish(t, 600);
	assert_int_equal(throttle_tracker__count(t), 3);
	e = throttle_tracker__get(t, 0);
	assert_string_equal(e->source, "cpu");
	assert_string_equal(e->zone, "hot");
	assert_int_equal(e->start_ns, 200);
	assert_int_equal(e->end_ns, 400);
	assert_float_equal(e->peak_temp_c, 85, EPS);
	assert_float_equal(e->min_clock_pct, 60, EPS);
	assert_false(e->open);
	e = throttle_tracker__get(t, 1);
	assert_string_equal(e->source, "gpu0");
	assert_true(e->open);
	assert_int_equal(e->end_ns, 600);
	assert_true(isnan(e->peak_temp_c));
	e = throttle_tracker__get(t, 2);
	assert_int_equal(e->start_ns, 500);
	assert_int_equal(e->end_ns, 600);
	/* cpu covers [200,400)+[500,600) = 300 of [0,1000); gpu0 [250,600) = 350 */
	assert_int_equal(throttle_tracker__overlap_ns(t, 0, 1000), 350);
	assert_int_equal(throttle_tracker__overlap_ns(t, 350, 450), 100);
	assert_int_equal(throttle_tracker__overlap_ns(t, 700, 800), 0);
	eps = profile_side__episodes_json(throttle_tracker__get(t, 0), 1, false); /* as profile.json shows it */
	j = json_array_get(eps, 0);
	assert_int_equal(json_integer_value(json_object_get(j, "start_ns")), 200);
	assert_float_equal(json_real_value(json_object_get(j, "duration_ms")), 200 / 1e6, EPS);
	json_decref(eps);
	throttle_tracker__free(t);
	throttle_tracker__free(NULL);
}

/* A late sampler: the state changed somewhere in a reading's window; the
 * episode is stated only over the time it is known to cover. */
static void test_throttle_read_window(void **state)
{
	struct throttle_tracker *t = throttle_tracker__new();
	const struct throttle_episode *e;

	(void)state;
	assert_non_null(t);
	throttle_tracker__observe(t, "cpu", 100, 140, true, "hot", "thermal", 80, 70);
	throttle_tracker__observe(t, "cpu", 200, 260, true, "hot", "thermal", 82, 65);
	throttle_tracker__observe(t, "cpu", 300, 390, false, "z", "r", 60, 100);
	/* a reading whose window lies before the episode's start cannot end it earlier */
	throttle_tracker__observe(t, "gpu0", 500, 520, true, "gpu", "x", NAN, NAN);
	throttle_tracker__observe(t, "gpu0", 510, 530, false, "gpu", "x", NAN, NAN);
	e = throttle_tracker__get(t, 0);
	assert_int_equal(e->start_ns, 140);
	assert_int_equal(e->end_ns, 300);
	assert_float_equal(e->min_clock_pct, 65, EPS);
	e = throttle_tracker__get(t, 1);
	assert_int_equal(e->start_ns, 520);
	assert_int_equal(e->end_ns, 520);
	throttle_tracker__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_throttle_read_window),
		cmocka_unit_test_setup_teardown(test_root_default_and_override, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thermal_zones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpufreq_hwmon_meminfo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_statvfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_orin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_orin_l4t36, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_xavier, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_nano, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_absent, setup, teardown),
		cmocka_unit_test(test_throttle_rules),
		cmocka_unit_test(test_throttle_reason_names),
		cmocka_unit_test(test_throttle_tracker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
