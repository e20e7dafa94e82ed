// SPDX-License-Identifier: BSD-2-Clause
/* Percentiles, means and log2 histograms (user/analysis/stats.c). */
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
	assert_float_equal(stats__log2_hist_percentile(slots, 32, 50), 15, 1e-9);
	assert_float_equal(stats__log2_hist_percentile(slots, 32, 95), 2047, 1e-9);
	uint64_t empty[32] = {};

	assert_true(isnan(stats__log2_hist_percentile(empty, 32, 50)));
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
		cmocka_unit_test(test_log2_hist_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
