// SPDX-License-Identifier: BSD-2-Clause
/* The names nearest a misspelt one (user/lib/nearest.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nearest.h"

static unsigned int dist(const char *a, const char *b)
{
	return nearest__distance(a, b, strlen(b), 10);
}

static void test_distance(void **st)
{
	(void)st;
	assert_int_equal(dist("step", "step"), 0);
	assert_int_equal(dist("stpe", "step"), 1); /* a swap is one edit */
	assert_int_equal(dist("infr", "infer"), 1);
	assert_int_equal(dist("", "abc"), 3);
	assert_int_equal(dist("kitten", "sitting"), 3);
	/* past max: max + 1, whatever the distance */
	assert_int_equal(nearest__distance("a", "bcdefgh", 7, 2), 3);
	assert_int_equal(nearest__distance("abcdef", "uvwxyz", 6, 2), 3);
	/* only the n bytes given of b */
	assert_int_equal(nearest__distance("foo", "foo@@V1", 3, 2), 0);
}

static void test_nearest_kept_in_order(void **st)
{
	static const char *const syms[] = {
		"sqlite3_reset", "sqlite3_step", "sqlite3_stmt_busy", "sqlite3_sleep", "sqlite3_open",
		"sqlite3_steps", "sqlite3_stpe", "totally_other", "sqlite3_step",
	};
	struct nearest nr;
	char buf[256];

	(void)st;
	nearest__init(&nr, "sqlite3_stpe");
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		assert_int_equal(nearest__offer(&nr, syms[i], strlen(syms[i])), 0);
	/* the name itself (distance 0) and a repeat are not offered twice */
	assert_int_equal(nr.n, NEAREST_KEEP);
	assert_string_equal(nearest__list(&nr, "", buf, sizeof(buf)),
			    "sqlite3_step, sqlite3_steps, sqlite3_open"); /* ties: name order */
	nearest__free(&nr);
}

static void test_none_near(void **st)
{
	struct nearest nr;
	char buf[64];

	(void)st;
	nearest__init(&nr, "infr");
	nearest__offer(&nr, "run_cycle", 9);
	nearest__offer(&nr, "store", 5);
	assert_string_equal(nearest__list(&nr, "py:", buf, sizeof(buf)), "");
	nearest__offer(&nr, "infer", 5);
	nearest__offer(&nr, "rest@@V2", 4);
	assert_string_equal(nearest__list(&nr, "py:", buf, sizeof(buf)), "py:infer");
	nearest__free(&nr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_nearest_kept_in_order),
		cmocka_unit_test(test_none_near),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
