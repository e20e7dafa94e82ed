// SPDX-License-Identifier: BSD-2-Clause
/* The side sampler thread against a fixture sysfs tree whose values the
 * test changes while it runs: per-window averages, run summaries, the
 * throttling episode of a scripted temperature rise with a clock drop, the
 * Jetson GPU path, and the GPU-unavailable paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../fixtures/sysfs_fixture.h"
#include "test_helpers.h"
#include "outputs.h"
#include "profile_side.h"
#include "side_sampler.h"
#include "sampler_rows.h"

#define PERIOD_MS 20
#define EPS 1e-6

/* The sampler's typed results in their profile.json and trace.json shapes,
 * as the assertions read them. */
static json_t *summary_json(struct side_sampler *s)
{
	struct side_summary sum;
	json_t *o;

	assert_int_equal(side_sampler__summary(s, &sum), 0);
	o = profile_side__summary_json(&sum);
	side_summary__free(&sum);
	return o;
}

static json_t *window_json(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns)
{
	struct side_window w;
	json_t *o;

	assert_int_equal(side_sampler__window(s, start_ns, end_ns, &w), 0);
	o = profile_side__window_json(&w);
	side_window__free(&w);
	return o;
}

static int trace_counters(struct side_sampler *s, json_t *events, int pid, uint64_t base_ns)
{
	struct side_series sr;
	int n;

	assert_int_equal(side_sampler__series(s, &sr), 0);
	n = outputs__side_counters(&sr, pid, base_ns, events);
	side_series__free(&sr);
	return n;
}

static char *root;

static int setup(void **state)
{
	(void)state;
	root = fx_root_new();
	if (!root)
		return -1;
	setenv("INFERTRACE_SYSFS_ROOT", root, 1);
	/* never pick up a real GPU on the machine running the tests */
	setenv("INFERTRACE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fx_rm(root);
	free(root);
	root = NULL;
	return 0;
}

static struct side_sampler *start(enum side_gpu_mode gpu, const char *const *disks, int ndisks)
{
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = gpu, .disk_paths = disks,
				   .ndisk_paths = ndisks };
	struct side_sampler *s = side_sampler__start(&cfg);

	assert_non_null(s);
	return s;
}

static void set_cpu_mhz(int cpu, int mhz)
{
	char p[128];

	snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
	fx_write(root, p, "%d", mhz * 1000);
}

static void test_windows_and_summary(void **state)
{
	const char *disks[] = { root };
	uint64_t a0, w1, w2, c0, end;
	size_t j1, j2, nrows;
	struct side_series sr;
	struct side_sampler *s;
	json_t *w, *sum, *z, *ev;
	int n;

	(void)state;
	fx_board_pc(root);
	s = start(SIDE_GPU_NONE, disks, 1);
	wait_rows(s, 1);
	a0 = fx_now_ns();
	wait_rows(s, 5);
	w1 = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone0/temp", "70000");
	set_cpu_mhz(0, 1000);
	wait_rows(s, 5);
	w2 = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone0/temp", "60000");
	set_cpu_mhz(0, 2000);
	wait_rows(s, 5);
	side_sampler__stop(s);
	end = fx_now_ns();
	side_sampler__stop(s); /* idempotent */

	/* each state's window from the rows' own start times (a row reads its
	 * values before the next row begins): each holds one value, so its
	 * average is that value exactly */
	assert_int_equal(side_sampler__series(s, &sr), 0);
	j1 = first_row_from(&sr, w1);
	j2 = first_row_from(&sr, w2);
	assert_true(j1 >= 5 && j2 >= j1 + 4 && sr.nrows >= j2 + 4);
	w = window_json(s, a0, sr.ts[j1 - 2]);
	assert_int_equal(json_integer_value(th_jget(w, "side_samples", NULL)), rows_in(&sr, a0, sr.ts[j1 - 2]));
	assert_true(json_integer_value(th_jget(w, "side_samples", NULL)) >= 3);
	assert_float_equal(th_jnum(th_jget(w, "temp_c", "x86_pkg_temp", NULL)), 50.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "temp_c", "acpitz", NULL)), 40.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "temp_max_c", NULL)), 50.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "cpu_mhz", NULL)), 2000.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "mem_available_mb", NULL)), 8000.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "power_w", "power_meter/power1", NULL)), 35.5, EPS);
	assert_float_equal(th_jnum(th_jget(w, "throttled_ms", NULL)), 0.0, EPS);
	assert_null(th_jget(w, "gpu", NULL));
	json_decref(w);
	w = window_json(s, sr.ts[j1], sr.ts[j2 - 2]);
	assert_int_equal(json_integer_value(th_jget(w, "side_samples", NULL)), rows_in(&sr, sr.ts[j1], sr.ts[j2 - 2]));
	assert_true(json_integer_value(th_jget(w, "side_samples", NULL)) >= 3);
	assert_float_equal(th_jnum(th_jget(w, "temp_c", "x86_pkg_temp", NULL)), 70.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "cpu_mhz", NULL)), 1500.0, EPS);
	json_decref(w);
	c0 = sr.ts[j2];
	nrows = sr.nrows;
	side_series__free(&sr);
	w = window_json(s, c0, end);
	assert_float_equal(th_jnum(th_jget(w, "temp_c", "x86_pkg_temp", NULL)), 60.0, EPS);
	json_decref(w);
	/* a window with no sample inside: the last sample stands for it */
	w = window_json(s, end + 1000000000ULL, end + 2000000000ULL);
	assert_int_equal(json_integer_value(th_jget(w, "side_samples", NULL)), 0);
	assert_float_equal(th_jnum(th_jget(w, "temp_c", "x86_pkg_temp", NULL)), 60.0, EPS);
	json_decref(w);

	sum = summary_json(s);
	z = th_jget(sum, "thermal", "zones", "x86_pkg_temp", NULL);
	assert_float_equal(th_jnum(th_jget(z, "min", NULL)), 50.0, EPS);
	assert_float_equal(th_jnum(th_jget(z, "max", NULL)), 70.0, EPS);
	assert_true(th_jnum(th_jget(z, "avg", NULL)) > 50.0 && th_jnum(th_jget(z, "avg", NULL)) < 70.0);
	z = th_jget(sum, "thermal", "zones", "acpitz", NULL);
	assert_float_equal(th_jnum(th_jget(z, "min", NULL)), 40.0, EPS);
	assert_float_equal(th_jnum(th_jget(z, "avg", NULL)), 40.0, EPS);
	assert_float_equal(th_jnum(th_jget(z, "max", NULL)), 40.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "max_temp_c", NULL)), 70.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "hwmon", "coretemp/Package id 0", "avg", NULL)), 52.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "cpufreq", "cpu0", "min_mhz", NULL)), 1000.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "cpufreq", "cpu0", "max_mhz", NULL)), 2000.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "cpufreq", "cpu0", "hw_max_mhz", NULL)), 2000.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "cpufreq", "cpu1", "avg_mhz", NULL)), 2000.0, EPS);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "power_w", "power_meter/power1", "max", NULL)), 35.5, EPS);
	assert_int_equal(json_array_size(th_jget(sum, "thermal", "throttling", NULL)), 0);
	assert_false(json_boolean_value(th_jget(sum, "thermal", "throttled", NULL)));
	assert_int_equal(json_integer_value(th_jget(sum, "thermal", "samples", NULL)), nrows);
	assert_true(nrows >= 16); /* 1 + 3 x 5 waited for */
	assert_int_equal(side_sampler__sample_count(s), json_integer_value(th_jget(sum, "thermal", "samples", NULL)));
	assert_float_equal(th_jnum(th_jget(sum, "host", "mem_available_mb", "avg", NULL)), 8000.0, EPS);
	z = th_jget(sum, "disk", "paths", root, NULL);
	assert_non_null(z);
	assert_true(th_jnum(th_jget(z, "total_mb", NULL)) > 0);
	assert_true(th_jnum(th_jget(z, "percent_free", NULL)) >= 0 && th_jnum(th_jget(z, "percent_free", NULL)) <= 100);
	assert_true(json_is_boolean(th_jget(z, "alert", NULL)));
	assert_false(json_boolean_value(th_jget(sum, "gpu", "available", NULL)));
	json_decref(sum);

	ev = json_array();
	n = trace_counters(s, ev, 42, a0);
	assert_true(n > 0);
	assert_int_equal(json_array_size(ev), n);
	w = json_array_get(ev, 0);
	assert_string_equal(json_string_value(th_jget(w, "ph", NULL)), "C");
	assert_string_equal(json_string_value(th_jget(w, "name", NULL)), "temperature (C)");
	assert_int_equal(json_integer_value(th_jget(w, "pid", NULL)), 42);
	assert_float_equal(th_jnum(th_jget(w, "args", "x86_pkg_temp", NULL)), 50.0, EPS);
	json_decref(ev);
	side_sampler__free(s);
}

static void test_throttling_episode(void **state)
{
	struct side_sampler *s;
	uint64_t t1a, t1b, t2a, t2b;
	size_t j1, j2a, j2b;
	struct side_series sr;
	json_t *sum, *eps, *e, *w;

	(void)state;
	fx_board_pc(root);
	s = start(SIDE_GPU_NONE, NULL, 0);
	wait_rows(s, 5);
	t1a = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone0/temp", "85000");
	set_cpu_mhz(0, 1200);
	set_cpu_mhz(1, 1200);
	t1b = fx_now_ns();
	wait_rows(s, 8);
	/* cooling ends it even while the clock stays low */
	t2a = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone0/temp", "60000");
	t2b = fx_now_ns();
	wait_rows(s, 5);
	side_sampler__stop(s);

	/* bounds from the rows' own start times: an episode starts where the
	 * first row that read the heat ended its reads (after the write, by
	 * the start of the row after the first one begun after it) and ends
	 * where the first row that read the cool began (no earlier than the
	 * last row begun before the write, no later than the first after) */
	assert_int_equal(side_sampler__series(s, &sr), 0);
	j1 = first_row_from(&sr, t1b);
	j2a = first_row_from(&sr, t2a);
	j2b = first_row_from(&sr, t2b);
	assert_true(j1 >= 1 && j2a >= j1 + 5 && sr.nrows > j2b);
	sum = summary_json(s);
	eps = th_jget(sum, "thermal", "throttling", NULL);
	assert_int_equal(json_array_size(eps), 1);
	assert_true(json_boolean_value(th_jget(sum, "thermal", "throttled", NULL)));
	e = json_array_get(eps, 0);
	assert_string_equal(json_string_value(th_jget(e, "source", NULL)), "cpu");
	assert_string_equal(json_string_value(th_jget(e, "zone", NULL)), "x86_pkg_temp");
	assert_true((uint64_t)json_integer_value(th_jget(e, "start_ns", NULL)) >= t1a);
	assert_true((uint64_t)json_integer_value(th_jget(e, "start_ns", NULL)) <= sr.ts[j1 + 1]);
	assert_true((uint64_t)json_integer_value(th_jget(e, "end_ns", NULL)) >= sr.ts[j2a - 1]);
	assert_true((uint64_t)json_integer_value(th_jget(e, "end_ns", NULL)) <= sr.ts[j2b]);
	assert_float_equal(th_jnum(th_jget(e, "peak_temp_c", NULL)), 85.0, EPS);
	assert_float_equal(th_jnum(th_jget(e, "min_clock_pct", NULL)), 60.0, EPS);
	assert_false(json_boolean_value(th_jget(e, "open", NULL)));
	json_decref(sum);

	w = window_json(s, 0, t1a);
	assert_float_equal(th_jnum(th_jget(w, "throttled_ms", NULL)), 0.0, EPS);
	json_decref(w);
	/* throttled throughout: the episode holds it */
	w = window_json(s, sr.ts[j1 + 1], sr.ts[j2a - 2]);
	assert_float_equal(th_jnum(th_jget(w, "throttled_ms", NULL)), (sr.ts[j2a - 2] - sr.ts[j1 + 1]) / 1e6, 0.01);
	json_decref(w);
	side_series__free(&sr);
	side_sampler__free(s);
}

static void test_throttled_at_stop_is_open(void **state)
{
	struct side_sampler *s;
	json_t *sum, *e;
	uint64_t t0;

	(void)state;
	fx_board_pc(root);
	fx_write(root, "sys/class/thermal/thermal_zone1/temp", "90000");
	set_cpu_mhz(0, 500);
	set_cpu_mhz(1, 500);
	t0 = fx_now_ns();
	s = start(SIDE_GPU_NONE, NULL, 0);
	fx_sleep_ms(100);
	side_sampler__stop(s);
	sum = summary_json(s);
	assert_int_equal(json_array_size(th_jget(sum, "thermal", "throttling", NULL)), 1);
	e = json_array_get(th_jget(sum, "thermal", "throttling", NULL), 0);
	assert_true(json_boolean_value(th_jget(e, "open", NULL)));
	assert_string_equal(json_string_value(th_jget(e, "zone", NULL)), "acpitz");
	assert_true((uint64_t)json_integer_value(th_jget(e, "start_ns", NULL)) >= t0);
	assert_true(json_integer_value(th_jget(e, "end_ns", NULL)) > json_integer_value(th_jget(e, "start_ns", NULL)));
	json_decref(sum);
	side_sampler__free(s);
}

static void test_jetson_gpu(void **state)
{
	struct side_sampler *s;
	struct side_series sr;
	uint64_t a0, w1, w2, w3, a[2], b[2], c[2];
	size_t j1, j2, j3;
	json_t *w, *sum, *g, *eps;

	(void)state;
	fx_board_orin(root);
	fx_write(root, "sys/class/devfreq/17000000.ga10b/device/load", "200");
	s = start(SIDE_GPU_JETSON, NULL, 0);
	wait_rows(s, 1); /* the first load read opens the busy series */
	a0 = fx_now_ns();
	wait_rows(s, 4);
	w1 = fx_now_ns();
	fx_write(root, "sys/class/devfreq/17000000.ga10b/device/load", "800");
	wait_rows(s, 4);
	/* hot GPU at 23.5% of its maximum clock: a GPU throttling episode */
	w2 = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone1/temp", "88000");
	fx_write(root, "sys/class/devfreq/17000000.ga10b/cur_freq", "306000000");
	wait_rows(s, 4);
	w3 = fx_now_ns();
	fx_write(root, "sys/class/thermal/thermal_zone1/temp", "50000");
	fx_write(root, "sys/class/devfreq/17000000.ga10b/cur_freq", "1300500000");
	wait_rows(s, 2);
	side_sampler__stop(s);
	assert_null(side_sampler__gpu_notice(s));

	/* Each state's window, from the rows' own start times: a row read its
	 * values in [its start, the next row's start), so the rows that began
	 * after a write, up to the one before the last that began before the
	 * next write, read that state; and so did the load's periods, each
	 * ending where its row read the load. */
	assert_int_equal(side_sampler__series(s, &sr), 0);
	j1 = first_row_from(&sr, w1);
	j2 = first_row_from(&sr, w2);
	j3 = first_row_from(&sr, w3);
	assert_true(j1 >= 2 && j2 >= j1 + 3 && j3 >= j2 + 3 && sr.nrows >= j3 + 2);
	a[0] = a0, a[1] = sr.ts[j1 - 2];
	b[0] = sr.ts[j1], b[1] = sr.ts[j2 - 2];
	c[0] = sr.ts[j2], c[1] = sr.ts[j3 - 2];
	assert_true(a[1] > a[0]);

	w = window_json(s, a[0], a[1]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "util_pct", NULL)), 20.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "sm_clock_mhz", NULL)), 612.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "power_w", NULL)), 4.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "temp_c", NULL)), 47.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "power_w", "VDD_CPU_CV", NULL)), 2.0, EPS);
	json_decref(w);
	w = window_json(s, b[0], b[1]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "util_pct", NULL)), 80.0, EPS);
	json_decref(w);
	/* the GPU's busy time over a window, from the load read each period:
	 * load times the time the reads cover, which is the whole window */
	{
		double busy, covered;

		assert_int_equal(side_sampler__gpu_count(s), 1);
		assert_int_equal(side_sampler__gpu_busy(s, 0, a[0], a[1], &busy, &covered), 0);
		assert_float_equal(covered, (a[1] - a[0]) / 1e6, 1e-6);
		assert_float_equal(busy, 0.2 * covered, 1e-6);
		assert_int_equal(side_sampler__gpu_busy(s, 0, b[0], b[1], &busy, &covered), 0);
		assert_float_equal(covered, (b[1] - b[0]) / 1e6, 1e-6);
		assert_float_equal(busy, 0.8 * covered, 1e-6);
	}
	w = window_json(s, c[0], c[1]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "sm_clock_mhz", NULL)), 306.0, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "temp_c", NULL)), 88.0, EPS);
	json_decref(w);

	sum = summary_json(s);
	g = th_jget(sum, "gpu", NULL);
	assert_true(json_boolean_value(th_jget(g, "available", NULL)));
	assert_string_equal(json_string_value(th_jget(g, "source", NULL)), "jetson");
	assert_string_equal(json_string_value(th_jget(g, "device", NULL)), "ga10b");
	assert_true(json_is_null(th_jget(g, "unavailable_reason", NULL)));
	assert_float_equal(th_jnum(th_jget(g, "util_pct", "max", NULL)), 80.0, EPS);
	assert_float_equal(th_jnum(th_jget(g, "max_sm_clock_mhz", NULL)), 1300.5, EPS);
	assert_float_equal(th_jnum(th_jget(g, "temp_c", "max", NULL)), 88.0, EPS);
	assert_int_equal(json_array_size(th_jget(g, "devices", NULL)), 1);
	assert_float_equal(th_jnum(th_jget(sum, "thermal", "power_w", "VDD_GPU_SOC", "avg", NULL)), 4.0, EPS);
	eps = th_jget(sum, "thermal", "throttling", NULL);
	assert_int_equal(json_array_size(eps), 1);
	assert_string_equal(json_string_value(th_jget(json_array_get(eps, 0), "source", NULL)), "gpu0");
	assert_string_equal(json_string_value(th_jget(json_array_get(eps, 0), "zone", NULL)), "ga10b");
	/* it starts where the first row that read the hot values ended its
	 * reads: after the write, by the end of the first row begun after it */
	assert_true((uint64_t)json_integer_value(th_jget(json_array_get(eps, 0), "start_ns", NULL)) >= w2);
	assert_true((uint64_t)json_integer_value(th_jget(json_array_get(eps, 0), "start_ns", NULL)) <=
		    sr.ts[j2 + 1]);
	json_decref(sum);
	side_series__free(&sr);
	side_sampler__free(s);
}

static void test_gpu_unavailable(void **state)
{
	struct side_sampler *s;
	const char *notice;
	json_t *sum;

	(void)state;
	fx_board_pc(root);
	s = start(SIDE_GPU_NONE, NULL, 0);
	side_sampler__stop(s);
	assert_null(side_sampler__gpu_notice(s));
	sum = summary_json(s);
	assert_false(json_boolean_value(th_jget(sum, "gpu", "available", NULL)));
	assert_non_null(strstr(json_string_value(th_jget(sum, "gpu", "unavailable_reason", NULL)), "--gpu none"));
	json_decref(sum);
	side_sampler__free(s);

	/* auto, no NVML library and no Jetson GPU: one notice naming both */
	s = start(SIDE_GPU_AUTO, NULL, 0);
	side_sampler__stop(s);
	notice = side_sampler__gpu_notice(s);
	assert_non_null(notice);
	assert_true(strncmp(notice, "GPU data unavailable: ", 22) == 0);
	assert_non_null(strstr(notice, "NVML not available"));
	assert_non_null(strstr(notice, "no Jetson GPU"));
	sum = summary_json(s);
	assert_false(json_boolean_value(th_jget(sum, "gpu", "available", NULL)));
	assert_true(json_is_null(th_jget(sum, "gpu", "source", NULL)));
	assert_non_null(strstr(json_string_value(th_jget(sum, "gpu", "unavailable_reason", NULL)), "NVML"));
	/* the rest of the side data is there regardless */
	assert_non_null(th_jget(sum, "thermal", "zones", "x86_pkg_temp", NULL));
	json_decref(sum);
	side_sampler__free(s);

	/* auto on a Jetson: falls through to sysfs */
	fx_board_orin(root);
	s = start(SIDE_GPU_AUTO, NULL, 0);
	side_sampler__stop(s);
	assert_null(side_sampler__gpu_notice(s));
	sum = summary_json(s);
	assert_string_equal(json_string_value(th_jget(sum, "gpu", "source", NULL)), "jetson");
	json_decref(sum);
	side_sampler__free(s);
}

static void test_lifecycle(void **state)
{
	enum side_gpu_mode m;
	struct side_sampler *s;
	uint64_t t0;
	json_t *w;

	(void)state;
	assert_int_equal(side_gpu_mode_parse("jetson", &m), 0);
	assert_int_equal(m, SIDE_GPU_JETSON);
	assert_int_equal(side_gpu_mode_parse("NVML", &m), 0);
	assert_int_equal(m, SIDE_GPU_NVML);
	assert_int_equal(side_gpu_mode_parse(NULL, &m), 0);
	assert_int_equal(m, SIDE_GPU_AUTO);
	assert_int_equal(side_gpu_mode_parse("cuda", &m), -EINVAL);

	/* default 1 s period: start and stop return at once, stop takes a last sample */
	fx_board_pc(root);
	t0 = fx_now_ns();
	s = side_sampler__start(NULL);
	assert_non_null(s);
	assert_true(fx_now_ns() - t0 < 100000000ULL);
	/* getters wait for discovery, then see the first sample */
	w = window_json(s, 0, UINT64_MAX);
	json_decref(w);
	side_sampler__stop(s);
	assert_true(fx_now_ns() - t0 < 500000000ULL);
	assert_true(side_sampler__sample_count(s) >= 2);
	side_sampler__free(s);
	side_sampler__free(NULL);

	/* an empty root: nothing to read, still no crash and valid JSON */
	fx_rm(root);
	s = start(SIDE_GPU_AUTO, NULL, 0);
	fx_sleep_ms(50);
	side_sampler__stop(s);
	w = summary_json(s);
	assert_int_equal(json_object_size(th_jget(w, "thermal", "zones", NULL)), 0);
	json_decref(w);
	w = window_json(s, 0, UINT64_MAX);
	assert_non_null(w);
	json_decref(w);
	side_sampler__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_windows_and_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttling_episode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttled_at_stop_is_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jetson_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_unavailable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
