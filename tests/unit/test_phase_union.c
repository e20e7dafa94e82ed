// SPDX-License-Identifier: BSD-2-Clause
/* Wall-clock union of phase calls over threads (phase_calls__union_ns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probes.h"

#define C(s, e) { .tgid = 1, .tid = 1, .entry_ns = (s), .exit_ns = (e) }

static void test_disjoint(void **st)
{
	struct phase_call c[] = { C(30, 40), C(0, 10) };

	(void)st;
	assert_int_equal(phase_calls__union_ns(c, 2, 0, UINT64_MAX), 20);
}

static void test_overlapping_threads(void **st)
{
	/* two workers overlapping, a third inside the first */
	struct phase_call c[] = { C(0, 100), C(50, 150), C(10, 20) };

	(void)st;
	assert_int_equal(phase_calls__union_ns(c, 3, 0, UINT64_MAX), 150);
}

static void test_touching_and_nested(void **st)
{
	struct phase_call c[] = { C(0, 10), C(10, 20), C(5, 8), C(25, 30) };

	(void)st;
	assert_int_equal(phase_calls__union_ns(c, 4, 0, UINT64_MAX), 25);
}

static void test_clipping(void **st)
{
	struct phase_call c[] = { C(0, 100), C(150, 250) };

	(void)st;
	assert_int_equal(phase_calls__union_ns(c, 2, 50, 200), 100);
	assert_int_equal(phase_calls__union_ns(c, 2, 100, 150), 0);
}

static void test_empty_and_zero_length(void **st)
{
	struct phase_call c[] = { C(5, 5) };

	(void)st;
	assert_int_equal(phase_calls__union_ns(NULL, 0, 0, UINT64_MAX), 0);
	assert_int_equal(phase_calls__union_ns(c, 1, 0, UINT64_MAX), 0);
}

static void test_many_threads(void **st)
{
	struct phase_call c[64];

	(void)st;
	/* 64 calls of 10 ns starting every 5 ns: one span from 0 to 325 */
	for (int i = 0; i < 64; i++)
		c[i] = (struct phase_call)C(5 * (63 - i), 5 * (63 - i) + 10);
	assert_int_equal(phase_calls__union_ns(c, 64, 0, UINT64_MAX), 325);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disjoint),
		cmocka_unit_test(test_overlapping_threads),
		cmocka_unit_test(test_touching_and_nested),
		cmocka_unit_test(test_clipping),
		cmocka_unit_test(test_empty_and_zero_length),
		cmocka_unit_test(test_many_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
