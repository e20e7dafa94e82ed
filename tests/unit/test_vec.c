// SPDX-License-Identifier: BSD-2-Clause
/* Growing tables (user/lib/vec.h): one element or many at a time, arrays
 * that share a capacity, exact sizes, and a failure that leaves the array
 * as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "vec.h"

static void test_reserve_one_at_a_time(void **st)
{
	VEC_OF(int) v = { 0 };

	(void)st;
	for (int i = 0; i < 100; i++) {
		assert_int_equal(VEC_RESERVE(v.v, v.cap, v.n, 8), 0);
		v.v[v.n++] = i;
		/* 8, then doubled when full */
		assert_int_equal(v.cap, v.n <= 8 ? 8 : v.n <= 16 ? 16 : v.n <= 32 ? 32 : v.n <= 64 ? 64 : 128);
	}
	for (int i = 0; i < 100; i++)
		assert_int_equal(v.v[i], i);
	/* room already: nothing changes */
	assert_int_equal(VEC_RESERVE(v.v, v.cap, 127, 8), 0);
	assert_int_equal(v.cap, 128);
	free(v.v);
}

static void test_reserve_many_at_once(void **st)
{
	char *buf = NULL;
	size_t cap = 0;

	(void)st;
	/* element 1000 from nothing: 64 doubled until it holds it */
	assert_int_equal(VEC_RESERVE(buf, cap, 1000, 64), 0);
	assert_int_equal(cap, 1024);
	memset(buf, 'x', 1001);
	/* exactly at the capacity: one doubling */
	assert_int_equal(VEC_RESERVE(buf, cap, 1024, 64), 0);
	assert_int_equal(cap, 2048);
	assert_int_equal(buf[1000], 'x');
	free(buf);
}

static void test_shared_capacity(void **st)
{
	uint64_t *ts = NULL;
	double *rows = NULL;
	size_t n = 0, cap = 0, ncols = 3;

	(void)st;
	for (; n < 40; n++) {
		if (n == cap) {
			size_t c = vec_grown(cap, n, ncols * sizeof(*rows), 16);

			assert_true(c > n);
			assert_int_equal(VEC_RESIZE(ts, c), 0);
			assert_int_equal(VEC_RESIZE(rows, c * ncols), 0);
			cap = c;
		}
		ts[n] = n;
		for (size_t k = 0; k < ncols; k++)
			rows[n * ncols + k] = (double)(n + k);
	}
	assert_int_equal(cap, 64);
	assert_int_equal(ts[39], 39);
	assert_true(rows[39 * ncols + 2] == 41.0);
	/* vec_grown is the capacity itself while it holds n */
	assert_int_equal(vec_grown(cap, 63, sizeof(*rows), 16), 64);
	free(ts);
	free(rows);
}

static void test_exact_size_and_failure(void **st)
{
	const char **list = NULL;
	size_t n = 0, cap = 0;
	const char *const words[] = { "a", "b", "c" };

	(void)st;
	/* a NULL-terminated list of exactly n + 1 */
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(VEC_RESIZE(list, n + 2), 0);
		list[n++] = words[i];
		list[n] = NULL;
	}
	assert_string_equal(list[2], "c");
	assert_null(list[3]);
	/* sizes past memory's: -ENOMEM, the array and its capacity untouched */
	assert_int_equal(VEC_RESIZE(list, SIZE_MAX / 2), -ENOMEM);
	assert_int_equal(VEC_RESIZE(list, 0), -ENOMEM);
	assert_string_equal(list[0], "a");
	assert_int_equal(vec_grown(0, SIZE_MAX / 2, 8, 16), 0);
	cap = 4;
	assert_int_equal(VEC_RESERVE(list, cap, SIZE_MAX - 1, 16), -ENOMEM);
	assert_int_equal(cap, 4);
	assert_string_equal(list[1], "b");
	free(list);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_one_at_a_time),
		cmocka_unit_test(test_reserve_many_at_once),
		cmocka_unit_test(test_shared_capacity),
		cmocka_unit_test(test_exact_size_and_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
