// SPDX-License-Identifier: BSD-2-Clause
/* Percentiles, means, slopes and log2 histograms (user/analysis/stats.c), the
 * one estimator of each the whole tool uses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stats.h"

static void test_percentile_numpy_linear(void **st)
{
	double v[] = { 40, 10, 30, 20 }; /* sorted: 10 20 30 40 */

	(void)st;
	assert_float_equal(stats__percentile(v, 4, 0), 10, 1e-9);
	assert_float_equal(stats__percentile(v, 4, 50), 25, 1e-9);
	assert_float_equal(stats__percentile(v, 4, 95), 38.5, 1e-9);
	assert_float_equal(stats__percentile(v, 4, 99), 39.7, 1e-9);
	assert_float_equal(stats__percentile(v, 4, 100), 40, 1e-9);
}

static void test_percentile_edges(void **st)
{
	double one[] = { 7.5 };

	(void)st;
	assert_true(isnan(stats__percentile(NULL, 0, 50)));
	assert_float_equal(stats__percentile(one, 1, 50), 7.5, 1e-12);
	assert_float_equal(stats__percentile(one, 1, 99), 7.5, 1e-12);
}

static void test_percentile_many(void **st)
{
	double v[101];

	(void)st;
	for (int i = 0; i <= 100; i++)
		v[i] = 100 - i; /* reversed 0..100 */
	assert_float_equal(stats__percentile(v, 101, 50), 50, 1e-9);
	assert_float_equal(stats__percentile(v, 101, 95), 95, 1e-9);
	assert_float_equal(stats__percentile(v, 101, 99), 99, 1e-9);
}

static void test_mean(void **st)
{
	double v[] = { 1, 2, 3, 4 };

	(void)st;
	assert_float_equal(stats__mean(v, 4), 2.5, 1e-12);
	assert_true(isnan(stats__mean(v, 0)));
}

static void test_log2_hist_percentile(void **st)
{
	uint64_t slots[32] = {};

	(void)st;
	slots[3] = 90; /* [8, 16) */
	slots[10] = 10; /* [1024, 2048) */
	/* rank 50 of 100 lies 50/90 into [8, 16); rank 95 lies 5/10 into [1024, 2048) */
	assert_float_equal(stats__log2_hist_percentile(slots, 32, 50), 8 + 8 * 50.0 / 90, 1e-9);
	assert_float_equal(stats__log2_hist_percentile(slots, 32, 95), 1536, 1e-9);
	uint64_t empty[32] = {};

	assert_true(isnan(stats__log2_hist_percentile(empty, 32, 50)));
}

/* The cases the run-queue figures were checked with before they shared this
 * estimator (p as a fraction then). */
static void test_log2_hist_percentile_interpolates(void **st)
{
	uint64_t slots[32] = {};

	(void)st;
	slots[10] = 100; /* all in [1024, 2048) */
	assert_in_range((int)stats__log2_hist_percentile(slots, 32, 50), 1530, 1540);
	assert_in_range((int)stats__log2_hist_percentile(slots, 32, 99), 2030, 2048);
	slots[0] = 900; /* 90% in [0, 2) */
	assert_true(stats__log2_hist_percentile(slots, 32, 50) < 2);
	assert_true(stats__log2_hist_percentile(slots, 32, 95) >= 1024);
	assert_float_equal(stats__log2_hist_percentile(slots, 32, -5), 0, 1e-12); /* clamped */
	assert_float_equal(stats__log2_hist_percentile(slots, 32, 500), 2048, 1e-9);
}

/* The top slot's edges do not overflow (values near 2^64). */
static void test_log2_hist_percentile_top_slot(void **st)
{
	uint64_t slots[64] = {};

	(void)st;
	slots[63] = 4;
	assert_float_equal(stats__log2_hist_percentile(slots, 64, 50), ldexp(1, 63) * 1.5, ldexp(1, 20));
}

/* log2 slot of a value, as bpf/sched.bpf.c and bpf/probes.bpf.c count them */
static unsigned slot_of(uint64_t v)
{
	unsigned s = 0;

	while (v >>= 1)
		s++;
	return s;
}

/* One estimator: the same durations, kept as samples (cycles, phases with
 * their calls) or counted in a log2 histogram (run-queue waits, phases past
 * their call limit), give the same p50/p95/p99 up to the histogram's
 * resolution: the histogram's figure lies in the slot of the samples' one,
 * and on data spread evenly inside the slots the two agree closely. */
static void test_one_estimator_samples_and_histogram(void **st)
{
	enum { N = 4096 };
	static double v[N];
	uint64_t slots[32] = {};
	const double ps[] = { 50, 95, 99 };

	(void)st;
	for (int i = 0; i < N; i++) {
		/* even in [64, 128) for 3/4 of the values, even in [1024, 2048) for the rest */
		double x = i < 3 * N / 4 ? 64 + 64.0 * i / (3 * N / 4) : 1024 + 1024.0 * (i - 3 * N / 4) / (N / 4);

		v[i] = x;
		slots[slot_of((uint64_t)x)]++;
	}
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		double s = stats__percentile(v, N, ps[k]);
		double h = stats__log2_hist_percentile(slots, 32, ps[k]);

		assert_int_equal(slot_of((uint64_t)h), slot_of((uint64_t)s));
		assert_float_equal(h, s, s * 0.01);
	}
}

static void test_slope(void **st)
{
	double y[] = { 5, 15, 25, 35, 45 }, noisy[] = { 1, 12, 20, 31, 40, 52 }, flat[] = { 3, 3, 3 };

	(void)st;
	assert_float_equal(stats__slope(y, 5), 10, 1e-9);
	assert_true(stats__slope(noisy, 6) > 9.5 && stats__slope(noisy, 6) < 10.5);
	assert_float_equal(stats__slope(flat, 3), 0, 1e-12);
	assert_true(isnan(stats__slope(y, 1)));
	assert_true(isnan(stats__slope(y, 0)));
}

static void test_log2_hist_json(void **st)
{
	uint64_t slots[32] = {};
	json_t *h, *b;

	(void)st;
	slots[0] = 2;
	slots[5] = 3;
	h = stats__log2_hist_json(slots, 32, "us");
	assert_string_equal(json_string_value(json_object_get(h, "unit")), "us");
	b = json_object_get(h, "buckets");
	assert_int_equal(json_array_size(b), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(b, 1), "count")), 3);
	json_decref(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_numpy_linear),
		cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_percentile_many),
		cmocka_unit_test(test_mean),
		cmocka_unit_test(test_log2_hist_percentile),
		cmocka_unit_test(test_log2_hist_percentile_interpolates),
		cmocka_unit_test(test_log2_hist_percentile_top_slot),
		cmocka_unit_test(test_one_estimator_samples_and_histogram),
		cmocka_unit_test(test_slope),
		cmocka_unit_test(test_log2_hist_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
