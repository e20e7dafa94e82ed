// SPDX-License-Identifier: BSD-2-Clause
/* The cycle suggestion from stack timelines whose loop is set by the test
 * (timestamps in ns, stacks root first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "suggest.h"

#define MS 1000000ull

/* CYCLES iterations of PERIOD ms, one observation every 10 ms: the first
 * SPLIT ms show stack a, the rest stack b. */
static void feed(struct suggest *s, pid_t tid, int cycles, int period, int split, const char *const *a, int na,
		 const char *const *b, int nb)
{
	uint64_t t = 0;

	for (int c = 0; c < cycles; c++)
		for (int ms = 0; ms < period; ms += 10, t += 10 * MS)
			assert_int_equal(ms < split ? suggest__observe(s, tid, t, a, na) : suggest__observe(s, tid, t, b, nb), 0);
}

static void test_steps_under_the_cycle_function(void **state)
{
	const char *a[] = { "<module> (loop.py)", "main (loop.py)", "run_cycle (loop.py)", "phase_spin (loop.py)" };
	const char *b[] = { "<module> (loop.py)", "main (loop.py)", "run_cycle (loop.py)", "phase_sleep (loop.py)" };
	struct suggest *s = suggest__new();
	struct suggestion g;
	char line[512];

	(void)state;
	feed(s, 7, 12, 100, 60, a, 4, b, 4);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "run_cycle (loop.py)");
	assert_false(g.marker);
	assert_int_equal(g.bursts, 12);
	assert_true(g.period_ms > 99.0 && g.period_ms < 101.0);
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle py:run_cycle (seen in 12 periodic bursts, period 100 ms)");
	suggest__free(s);
}

static void test_the_cycle_function_seen_leaving(void **state)
{
	const char *a[] = { "_start", "main", "run_cycle", "inference" };
	const char *b[] = { "_start", "main" };
	struct suggest *s = suggest__new();
	struct suggestion g;
	char line[512];

	(void)state;
	feed(s, 7, 8, 50, 40, a, 4, b, 2);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "run_cycle");
	assert_int_equal(g.bursts, 8);
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle run_cycle (seen in 8 periodic bursts, period 50 ms)");
	suggest__free(s);
}

static void test_an_irregular_step_beside_a_regular_one(void **state)
{
	const char *infer[] = { "_start", "main", "run_cycle", "inference" };
	const char *cyc[] = { "_start", "main", "run_cycle" };
	const char *mode[] = { "_start", "main", "run_cycle", "mode" };
	struct suggest *s = suggest__new();
	struct suggestion g;
	uint64_t t = 0;

	(void)state;
	/* 12 cycles of 60 ms: inference for 40 ms, split in every other cycle
	 * by a sample that fell in run_cycle itself, then mode; run_cycle is
	 * in every observation, mode alone is regular */
	for (int c = 0; c < 12; c++) {
		for (int k = 0; k < 5; k++, t += 10 * MS)
			assert_int_equal(suggest__observe(s, 7, t, c % 2 && k == 2 ? cyc : infer, c % 2 && k == 2 ? 3 : 4), 0);
		assert_int_equal(suggest__observe(s, 7, t, mode, 4), 0);
		t += 10 * MS;
	}
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "run_cycle");
	suggest__free(s);
	/* a lone periodic step with no sibling of its kind is the iteration */
	s = suggest__new();
	feed(s, 7, 12, 60, 50, infer, 4, cyc, 3);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "inference");
	suggest__free(s);
}

static void test_module_level_loop_gives_a_marker(void **state)
{
	const char *a[] = { "<module> (loop.py)", "load (loop.py)" };
	const char *b[] = { "<module> (loop.py)", "store (loop.py)" };
	struct suggest *s = suggest__new();
	struct suggestion g;
	char line[512];

	(void)state;
	feed(s, 7, 6, 100, 30, a, 2, b, 2);
	assert_true(suggest__result(s, &g));
	assert_true(g.marker);
	assert_string_equal(g.name, "load (loop.py)");
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle-marker py:load (seen in 6 periodic bursts, period 100 ms)");
	suggest__free(s);
}

static void test_no_loop_no_suggestion(void **state)
{
	const char *a[] = { "_start", "main", "work" };
	const char *b[] = { "_start", "main", "other" };
	struct suggest *s = suggest__new();
	struct suggestion g;

	(void)state;
	/* one long call: nothing recurs */
	feed(s, 7, 1, 500, 500, a, 3, a, 3);
	assert_false(suggest__result(s, &g));
	suggest__free(s);
	/* two iterations are no loop yet */
	s = suggest__new();
	feed(s, 7, 2, 100, 50, a, 3, b, 3);
	assert_false(suggest__result(s, &g));
	suggest__free(s);
	/* bursts at irregular times */
	s = suggest__new();
	uint64_t t = 0;
	const int gaps[] = { 1, 9, 1, 30, 2, 60 };

	for (int i = 0; i < 6; i++) {
		assert_int_equal(suggest__observe(s, 7, t, a, 3), 0);
		t += 10 * MS;
		for (int k = 0; k < gaps[i]; k++, t += 10 * MS)
			assert_int_equal(suggest__observe(s, 7, t, b, 2), 0);
	}
	assert_false(suggest__result(s, &g));
	suggest__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_under_the_cycle_function),
		cmocka_unit_test(test_the_cycle_function_seen_leaving),
		cmocka_unit_test(test_an_irregular_step_beside_a_regular_one),
		cmocka_unit_test(test_module_level_loop_gives_a_marker),
		cmocka_unit_test(test_no_loop_no_suggestion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
