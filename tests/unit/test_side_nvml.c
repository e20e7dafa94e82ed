// SPDX-License-Identifier: BSD-2-Clause
/* The NVML path against tests/fixtures/fake_nvml.c, built here into a
 * shared library and loaded through INFERTRACE_NVML_LIB, with values the
 * test scripts while the sampler runs; and the ways NVML can be missing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../fixtures/sysfs_fixture.h"
#include "test_helpers.h"
#include "gpu_nvml.h"
#include "gpu_busy.h"
#include "outputs.h"
#include "profile_side.h"
#include "side_sampler.h"
#include "sampler_rows.h"

#define PERIOD_MS 20
#define MARGIN_NS (30 * 1000000ULL)
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

static char *dir;       /* library, script, log, and an empty sysfs root */
static char lib[PATH_MAX + 32];

static const char *base_script =
	"count=2\nname=Fake H100 80GB HBM3\nmem_util=40\nmem_total_mb=81559\nmem_used_mb=20480\n"
	"temp=66\npower_mw=312500\nsm_mhz=1755\nmem_mhz=2619\nmax_sm_mhz=1980\n"
	"procs=4242:1024,777:300,4343:512\n";

static void script(unsigned int util, unsigned long long reasons)
{
	fx_write(dir, "script", "%sutil=%u\nreasons=0x%llx", base_script, util, reasons);
}

static int group_setup(void **state)
{
	char src[PATH_MAX], cmd[3 * PATH_MAX], path[PATH_MAX + 16];
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *slash = strrchr(__FILE__, '/');

	(void)state;
	dir = fx_root_new();
	if (!dir)
		return -1;
	snprintf(src, sizeof(src), "%.*s/../fixtures/fake_nvml.c", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".");
	snprintf(lib, sizeof(lib), "%s/libfake_nvml.so", dir);
	snprintf(cmd, sizeof(cmd), "%s -shared -fPIC -o '%s' '%s' 2>&1", cc, lib, src);
	if (access(src, R_OK) || system(cmd) != 0)
		lib[0] = '\0'; /* tests skip */
	snprintf(path, sizeof(path), "%s/script", dir);
	setenv("FAKE_NVML_SCRIPT", path, 1);
	snprintf(path, sizeof(path), "%s/log", dir);
	setenv("FAKE_NVML_LOG", path, 1);
	snprintf(path, sizeof(path), "%s/sysfs", dir);
	fx_mkdirs(path);
	setenv("INFERTRACE_SYSFS_ROOT", path, 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	fx_rm(dir);
	free(dir);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	if (!lib[0])
		return 0;
	setenv("INFERTRACE_NVML_LIB", lib, 1);
	script(0, 0x1);
	fx_write(dir, "log", "start");
	return 0;
}

static void need_lib(void)
{
	if (!lib[0]) {
		print_message("no C compiler to build the fake NVML\n");
		skip();
	}
}

static void test_direct_read(void **state)
{
	const pid_t pids[] = { 4242, 4343, 1 };
	struct gpu_proc_mem procs[8];
	struct gpu_reading r;
	struct gpu_nvml *g;
	char why[256] = "";
	int n = 8;

	(void)state;
	need_lib();
	script(87, 0x1);
	g = gpu_nvml__open(why, sizeof(why));
	assert_non_null(g);
	assert_int_equal(gpu_nvml__count(g), 2);
	assert_string_equal(gpu_nvml__name(g, 1), "Fake H100 80GB HBM3");
	assert_null(gpu_nvml__name(g, 2));
	assert_int_equal(gpu_nvml__read(g, 0, pids, 3, &r, procs, &n), 0);
	assert_float_equal(r.util_pct, 87, EPS);
	assert_float_equal(r.mem_util_pct, 40, EPS);
	assert_float_equal(r.mem_used_mb, 20480, EPS);
	assert_float_equal(r.mem_total_mb, 81559, EPS);
	assert_float_equal(r.temp_c, 66, EPS);
	assert_float_equal(r.power_w, 312.5, EPS);
	assert_float_equal(r.sm_mhz, 1755, EPS);
	assert_float_equal(r.mem_mhz, 2619, EPS);
	assert_float_equal(r.max_sm_mhz, 1980, EPS);
	assert_float_equal(r.reasons, 1, EPS);
	assert_float_equal(r.proc_mem_mb, 1024 + 512, EPS);
	assert_int_equal(n, 2);
	assert_int_equal(procs[0].pid, 4242);
	assert_float_equal(procs[0].used_mb, 1024, EPS);
	/* no target pids: no per-process figure */
	n = 8;
	assert_int_equal(gpu_nvml__read(g, 1, NULL, 0, &r, procs, &n), 0);
	assert_true(isnan(r.proc_mem_mb));
	assert_int_equal(n, 0);
	assert_int_equal(gpu_nvml__read(g, 5, NULL, 0, &r, NULL, NULL), -ENODEV);
	gpu_nvml__close(g);
	gpu_nvml__close(NULL);
}

static void test_sampler_nvml(void **state)
{
	const pid_t pids[] = { 4242 };
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = SIDE_GPU_NVML, .pids = pids, .npids = 1 };
	struct side_sampler *s;
	uint64_t a0, w1, w2;
	size_t j1, j2;
	struct side_series sr;
	json_t *w, *sum, *g, *eps, *e;
	char *log, path[PATH_MAX + 8];

	(void)state;
	need_lib();
	script(30, 0x1);
	s = side_sampler__start(&cfg);
	assert_non_null(s);
	assert_int_equal(side_sampler__add_pid(s, 4343), 0);
	wait_rows(s, 1);
	a0 = fx_now_ns();
	wait_rows(s, 5);
	w1 = fx_now_ns();
	script(90, 0x24); /* sw_power_cap | sw_thermal_slowdown */
	wait_rows(s, 6);
	w2 = fx_now_ns();
	script(50, 0x1);
	wait_rows(s, 5);
	side_sampler__stop(s);
	assert_null(side_sampler__gpu_notice(s));

	/* each state's window from the rows' own start times */
	assert_int_equal(side_sampler__series(s, &sr), 0);
	j1 = first_row_from(&sr, w1);
	j2 = first_row_from(&sr, w2);
	assert_true(j1 >= 5 && j2 >= j1 + 5 && sr.nrows >= j2 + 4);
	w = window_json(s, a0, sr.ts[j1 - 2]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "util_pct", NULL)), 30, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "mem_used_mb", NULL)), 20480, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "power_w", NULL)), 312.5, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "temp_c", NULL)), 66, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "sm_clock_mhz", NULL)), 1755, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "mem_clock_mhz", NULL)), 2619, EPS);
	json_decref(w);
	w = window_json(s, sr.ts[j1], sr.ts[j2 - 2]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "util_pct", NULL)), 90, EPS);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "target_mem_mb", NULL)), 1024 + 512, EPS);
	assert_true(th_jnum(th_jget(w, "throttled_ms", NULL)) > 0);
	json_decref(w);
	w = window_json(s, sr.ts[j2], sr.ts[sr.nrows - 1]);
	assert_float_equal(th_jnum(th_jget(w, "gpu", "util_pct", NULL)), 50, EPS);
	json_decref(w);

	sum = summary_json(s);
	g = th_jget(sum, "gpu", NULL);
	assert_true(json_boolean_value(th_jget(g, "available", NULL)));
	assert_string_equal(json_string_value(th_jget(g, "source", NULL)), "nvml");
	assert_string_equal(json_string_value(th_jget(g, "device", NULL)), "Fake H100 80GB HBM3");
	assert_true(json_is_null(th_jget(g, "unavailable_reason", NULL)));
	assert_float_equal(th_jnum(th_jget(g, "util_pct", "max", NULL)), 90, EPS);
	assert_float_equal(th_jnum(th_jget(g, "mem_total_mb", NULL)), 81559, EPS);
	assert_float_equal(th_jnum(th_jget(g, "power_w", "avg", NULL)), 312.5, EPS);
	assert_float_equal(th_jnum(th_jget(g, "max_sm_clock_mhz", NULL)), 1980, EPS);
	assert_int_equal(json_array_size(th_jget(g, "throttle_reasons", NULL)), 3);
	assert_string_equal(json_string_value(json_array_get(th_jget(g, "throttle_reasons", NULL), 0)), "gpu_idle");
	assert_float_equal(th_jnum(th_jget(g, "process_mem_mb", "4242", NULL)), 1024, EPS);
	assert_float_equal(th_jnum(th_jget(g, "process_mem_mb", "4343", NULL)), 512, EPS);
	assert_null(th_jget(g, "process_mem_mb", "777", NULL));
	assert_int_equal(json_array_size(th_jget(g, "devices", NULL)), 2);
	/* both fake devices report the same reasons: one episode each */
	eps = th_jget(sum, "thermal", "throttling", NULL);
	assert_int_equal(json_array_size(eps), 2);
	for (size_t i = 0; i < 2; i++) {
		char src[8];

		e = json_array_get(eps, i);
		snprintf(src, sizeof(src), "gpu%zu", i);
		assert_string_equal(json_string_value(th_jget(e, "source", NULL)), src);
		assert_string_equal(json_string_value(th_jget(e, "reason", NULL)), "sw_power_cap,sw_thermal_slowdown");
		assert_string_equal(json_string_value(th_jget(e, "zone", NULL)), "Fake H100 80GB HBM3");
		/* from the end of the first row's reads that saw the reasons, to
		 * the start of the first row that saw them gone */
		assert_true((uint64_t)json_integer_value(th_jget(e, "start_ns", NULL)) >= w1);
		assert_true((uint64_t)json_integer_value(th_jget(e, "start_ns", NULL)) <= sr.ts[j1 + 1]);
		assert_true((uint64_t)json_integer_value(th_jget(e, "end_ns", NULL)) >= sr.ts[j2 - 1]);
		assert_true((uint64_t)json_integer_value(th_jget(e, "end_ns", NULL)) <= sr.ts[j2]);
	}
	json_decref(sum);
	side_series__free(&sr);
	side_sampler__free(s);
	snprintf(path, sizeof(path), "%s/log", dir);
	log = th_read_file(path);
	assert_non_null(log);
	assert_string_equal(log, "start\ninit\nshutdown\n");
	free(log);
}

/* A hot GPU whose clock is low because it is idle (the driver's gpu_idle
 * reason) is not throttled; the same heat and clock while busy is. */
static void test_hot_idle_gpu_not_throttled(void **state)
{
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = SIDE_GPU_NVML };
	const char *cases[] = { "util=0\nreasons=0x1", "util=90\nreasons=0x0" };

	(void)state;
	need_lib();
	for (int busy = 0; busy < 2; busy++) {
		struct side_sampler *s;
		json_t *sum, *eps;

		fx_write(dir, "script", "%stemp=85\nsm_mhz=300\n%s", base_script, cases[busy]);
		s = side_sampler__start(&cfg);
		assert_non_null(s);
		wait_rows(s, 3);
		side_sampler__stop(s);
		sum = summary_json(s);
		eps = th_jget(sum, "thermal", "throttling", NULL);
		assert_int_equal(json_array_size(eps), busy ? 2 : 0); /* one per fake device */
		if (busy)
			assert_non_null(strstr(json_string_value(th_jget(json_array_get(eps, 0), "reason", NULL)),
					       "thermal"));
		json_decref(sum);
		side_sampler__free(s);
	}
}

static void expect_unavailable(const char *lib_path, const char *reason_part)
{
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = SIDE_GPU_NVML };
	struct side_sampler *s;
	const char *notice;
	json_t *sum;

	setenv("INFERTRACE_NVML_LIB", lib_path, 1);
	s = side_sampler__start(&cfg);
	assert_non_null(s);
	fx_sleep_ms(30);
	side_sampler__stop(s);
	notice = side_sampler__gpu_notice(s);
	assert_non_null(notice);
	assert_non_null(strstr(notice, reason_part));
	sum = summary_json(s);
	assert_false(json_boolean_value(th_jget(sum, "gpu", "available", NULL)));
	assert_true(json_is_null(th_jget(sum, "gpu", "device", NULL)));
	assert_non_null(strstr(json_string_value(th_jget(sum, "gpu", "unavailable_reason", NULL)), reason_part));
	assert_int_equal(json_array_size(th_jget(sum, "gpu", "devices", NULL)), 0);
	assert_true(side_sampler__sample_count(s) >= 1);
	json_decref(sum);
	side_sampler__free(s);
}

/* Busy time over a window from driver samples, by hand: samples at 1000,
 * 1010, 1020, 1030 µs (realtime) holding 0, 50, 100 and 20 %, the realtime
 * clock 500 µs ahead of the tracer's. */
static void test_busy_window_math(void **state)
{
	const struct gpu_util_sample smp[] = { { 1000, 0 }, { 1010, 50 }, { 1020, 100 }, { 1030, 20 } };
	const struct gpu_util_sample again[] = { { 1030, 99 }, { 1040, 40 } };
	struct gpu_busy_series s = { 0 };
	double covered;

	(void)state;
	assert_int_equal(gpu_busy__add(&s, smp, 4, 500000), 0);
	assert_int_equal(s.periods.n, 3); /* the first sample only marks a start */
	assert_int_equal(s.periods.v[0].start_ns, 500000);
	assert_int_equal(s.periods.v[2].end_ns, 530000);
	/* [505, 525) µs: 5 µs at 50% + 10 at 100% + 5 at 20% */
	assert_float_equal(gpu_busy__window(&s, 505000, 525000, &covered), 0.0135, EPS);
	assert_float_equal(covered, 0.020, EPS);
	/* before the first period and after the last: nothing covered */
	assert_float_equal(gpu_busy__window(&s, 100000, 500000, &covered), 0, EPS);
	assert_float_equal(covered, 0, EPS);
	/* a sample already taken is not taken again */
	assert_int_equal(gpu_busy__add(&s, again, 2, 500000), 0);
	assert_int_equal(s.periods.n, 4);
	assert_float_equal(gpu_busy__window(&s, 525000, 540000, &covered), 0.005 * 0.2 + 0.010 * 0.4, EPS);
	assert_float_equal(covered, 0.015, EPS);
	gpu_busy__free(&s);
}

/* The sampler keeps the driver's utilization samples: a window's busy time
 * is the fake's util times the time the samples cover, and they cover the
 * whole window (read every PERIOD_MS, the driver keeps 100 of 10 ms). */
static void test_sampler_util_samples(void **state)
{
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = SIDE_GPU_NVML };
	struct side_sampler *s;
	double busy, covered;
	uint64_t a0, a1;

	(void)state;
	need_lib();
	fx_write(dir, "script", "%sutil=60\nsample_ms=10", base_script);
	s = side_sampler__start(&cfg);
	assert_non_null(s);
	a0 = fx_now_ns();
	fx_sleep_ms(300);
	a1 = fx_now_ns();
	side_sampler__stop(s);
	assert_int_equal(side_sampler__gpu_count(s), 2);
	assert_int_equal(side_sampler__gpu_busy(s, 1, a0 + MARGIN_NS, a1 - MARGIN_NS, &busy, &covered), 0);
	assert_float_equal(covered, (a1 - a0 - 2 * MARGIN_NS) / 1e6, 1e-3);
	assert_float_equal(busy, 0.6 * covered, 1e-6);
	assert_null(side_sampler__gpu_busy_why(s));
	side_sampler__free(s);
}

/* A driver without samples: no busy figure, and why. */
static void test_sampler_no_util_samples(void **state)
{
	struct side_config cfg = { .period_ms = PERIOD_MS, .gpu = SIDE_GPU_NVML };
	struct side_sampler *s;
	double busy, covered;
	uint64_t a0;

	(void)state;
	need_lib();
	fx_write(dir, "script", "%sutil=60\nsample_ms=0", base_script);
	s = side_sampler__start(&cfg);
	assert_non_null(s);
	a0 = fx_now_ns();
	fx_sleep_ms(100);
	side_sampler__stop(s);
	assert_int_equal(side_sampler__gpu_busy(s, 0, a0, fx_now_ns(), &busy, &covered), -ENODATA);
	assert_non_null(side_sampler__gpu_busy_why(s));
	assert_non_null(strstr(side_sampler__gpu_busy_why(s), "nvmlDeviceGetSamples"));
	side_sampler__free(s);
}

static void test_missing_library(void **state)
{
	(void)state;
	expect_unavailable("/nonexistent/libnvidia-ml.so.1", "NVML not available");
	/* a library that is not NVML */
	expect_unavailable("libm.so.6", "lacks nvmlInit");
}

static void test_init_fails(void **state)
{
	(void)state;
	need_lib();
	fx_write(dir, "script", "init_rc=9");
	expect_unavailable(lib, "NVML init failed: Driver Not Loaded (9)");
}

static void test_no_devices(void **state)
{
	(void)state;
	need_lib();
	fx_write(dir, "script", "count=0");
	expect_unavailable(lib, "no NVIDIA GPU");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_direct_read, setup),
		cmocka_unit_test_setup(test_sampler_nvml, setup),
		cmocka_unit_test_setup(test_hot_idle_gpu_not_throttled, setup),
		cmocka_unit_test(test_busy_window_math),
		cmocka_unit_test_setup(test_sampler_util_samples, setup),
		cmocka_unit_test_setup(test_sampler_no_util_samples, setup),
		cmocka_unit_test_setup(test_missing_library, setup),
		cmocka_unit_test_setup(test_init_fails, setup),
		cmocka_unit_test_setup(test_no_devices, setup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
