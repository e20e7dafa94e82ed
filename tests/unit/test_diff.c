// SPDX-License-Identifier: BSD-2-Clause
/* diff's interval and verdict on cycle samples whose spread is known by
 * construction: no spread gives the change exactly, a known spread gives
 * the width the normal approximation predicts, the same inputs give the
 * same interval, one cycle gives none. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diff.h"

static const struct diff_stat MEAN = { false, 0 }, P50 = { true, 50 }, P95 = { true, 95 };

/* n cycles alternating mid - d and mid + d: mean mid, population sd d */
static void alternate(double *v, size_t n, double mid, double d)
{
	for (size_t i = 0; i < n; i++)
		v[i] = mid + (i % 2 ? d : -d);
}

static void test_no_spread_is_the_change(void **state)
{
	double b[10], n[10], lo, hi;

	(void)state;
	alternate(b, 10, 100, 0);
	alternate(n, 10, 110, 0);
	assert_true(diff__interval(b, NULL, 10, n, NULL, 10, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_float_equal(lo, 10.0, 1e-9);
	assert_float_equal(hi, 10.0, 1e-9);
	assert_true(diff__interval(b, NULL, 10, n, NULL, 10, P50, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_float_equal(lo, 10.0, 1e-9);
	assert_float_equal(hi, 10.0, 1e-9);
}

/* p95 of 10 cycles: half a cycle beyond it, no interval; of 100: 5 */
static void test_thin_tail_has_no_interval(void **state)
{
	const struct diff_stat max = { true, 100 };
	double b[100], n[100], lo, hi;

	(void)state;
	alternate(b, 100, 100, 30);
	alternate(n, 100, 106, 30);
	assert_false(diff__interval(b, NULL, 10, n, NULL, 10, P95, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_false(diff__interval(b, NULL, 99, n, NULL, 100, P95, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_true(diff__interval(b, NULL, 100, n, NULL, 100, P95, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_false(diff__interval(b, NULL, 100, n, NULL, 100, max, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
}

/* 100 cycles of 90 and 110 ms on both sides: each mean's standard error is
 * 10 / sqrt(100) = 1 ms, the difference's sqrt(2) ms, so the 95% interval of
 * the change is about +-1.96 * 1.414 = +-2.77% of 100 ms. */
static void test_known_spread_gives_its_width(void **state)
{
	double b[100], n[100], lo, hi, lo2, hi2;

	(void)state;
	alternate(b, 100, 100, 10);
	alternate(n, 100, 100, 10);
	assert_true(diff__interval(b, NULL, 100, n, NULL, 100, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_in_range((long)(lo * 100), -330, -220);
	assert_in_range((long)(hi * 100), 220, 330);
	/* reproducible: a fixed seed */
	assert_true(diff__interval(b, NULL, 100, n, NULL, 100, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo2, &hi2));
	assert_true(lo == lo2 && hi == hi2);
	/* 20% slower, same spread: the interval moves with it and excludes zero */
	alternate(n, 100, 120, 10);
	assert_true(diff__interval(b, NULL, 100, n, NULL, 100, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_true(lo > 16.5 && lo < 18.0);
	assert_true(hi > 22.0 && hi < 23.5);
	assert_int_equal(diff__verdict(20.0, lo, hi, false, 5.0), -1);
	/* the median of 100 cycles spread evenly over 80..120 ms, and of the
	 * same 20% slower: an interval around +20% that excludes zero */
	for (int i = 0; i < 100; i++) {
		b[i] = 80 + 0.4 * i;
		n[i] = 1.2 * b[i];
	}
	assert_true(diff__interval(b, NULL, 100, n, NULL, 100, P50, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_true(lo > 5.0 && lo <= 20.0 && hi >= 20.0 && hi < 35.0);
}

/* 10 cycles of 50 and 150 ms against the same +10 ms: the change (+10%)
 * exceeds a 5% threshold but the interval holds zero: no regression. */
static void test_noise_is_no_regression(void **state)
{
	double b[10], n[10], lo, hi;

	(void)state;
	alternate(b, 10, 100, 50);
	alternate(n, 10, 110, 50);
	assert_true(diff__interval(b, NULL, 10, n, NULL, 10, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_true(lo < 0 && hi > 10.0);
	assert_int_equal(diff__verdict(10.0, lo, hi, false, 5.0), 0);
}

/* ms per call: sum of ms over sum of calls, resampled by cycle */
static void test_weighted_ratio(void **state)
{
	double bx[4] = { 10, 20, 30, 40 }, bw[4] = { 1, 2, 3, 4 };
	double nx[4] = { 20, 40, 60, 80 }, nw[4] = { 1, 2, 3, 4 }, lo, hi;

	(void)state;
	/* every cycle 10 ms a call, then 20 */
	assert_true(diff__interval(bx, bw, 4, nx, nw, 4, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_float_equal(lo, 100.0, 1e-9);
	assert_float_equal(hi, 100.0, 1e-9);
}

static void test_one_cycle_has_no_interval(void **state)
{
	double b[10], n[1] = { 1230 }, lo, hi;

	(void)state;
	alternate(b, 10, 100, 10);
	assert_false(diff__interval(b, NULL, 10, n, NULL, 1, MEAN, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi));
	assert_true(isnan(lo) && isnan(hi));
	/* no interval, no verdict, however large the change */
	assert_int_equal(diff__verdict(1130.0, lo, hi, false, 5.0), 0);
}

/* Lower-is-better times and higher-is-better rates, both ways. */
static void test_verdict(void **state)
{
	(void)state;
	assert_int_equal(diff__verdict(24.0, 10.0, 38.0, false, 5.0), -1);
	assert_int_equal(diff__verdict(24.0, -3.0, 51.0, false, 5.0), 0);  /* interval holds zero */
	assert_int_equal(diff__verdict(4.0, 2.0, 6.0, false, 5.0), 0);     /* real, under the threshold */
	assert_int_equal(diff__verdict(-20.0, -30.0, -10.0, false, 5.0), 1);
	assert_int_equal(diff__verdict(-20.0, -30.0, -10.0, true, 5.0), -1); /* tokens/s fell */
	assert_int_equal(diff__verdict(20.0, 10.0, 30.0, true, 5.0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_spread_is_the_change),
		cmocka_unit_test(test_thin_tail_has_no_interval),
		cmocka_unit_test(test_known_spread_gives_its_width),
		cmocka_unit_test(test_noise_is_no_regression),
		cmocka_unit_test(test_weighted_ratio),
		cmocka_unit_test(test_one_cycle_has_no_interval),
		cmocka_unit_test(test_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
