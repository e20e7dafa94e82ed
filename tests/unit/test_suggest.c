// SPDX-License-Identifier: BSD-2-Clause
/* The cycle suggestion from stack timelines whose loop is set by the test
 * (timestamps in ns, stacks root first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* A loop written inline in main(): its steps' caller runs once; --cycle
 * main would give one cycle, the first step as a marker gives them all. */
static void test_loop_inline_in_main_gives_a_marker(void **state)
{
	const char *a[] = { "<module> (loop.py)", "main (loop.py)", "generate (loop.py)" };
	const char *b[] = { "<module> (loop.py)", "main (loop.py)", "save (loop.py)" };
	const char *na[] = { "_start", "__libc_start_main", "main", "inference" };
	const char *nb[] = { "_start", "__libc_start_main", "main", "database" };
	struct suggest *s = suggest__new();
	struct suggestion g;
	char line[512];

	(void)state;
	feed(s, 7, 12, 100, 60, a, 3, b, 3);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "generate (loop.py)");
	assert_true(g.marker);
	assert_int_equal(g.bursts, 12);
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle-marker py:generate (seen in 12 periodic bursts, period 100 ms)");
	suggest__free(s);
	/* a native loop in main() likewise */
	s = suggest__new();
	feed(s, 7, 12, 100, 60, na, 4, nb, 4);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "inference");
	assert_true(g.marker);
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

/* BURSTS regular bursts of parse_cert (20 ms apart), then SERVE
 * observations of one long call, 10 ms apart: whether a loop is found. */
static bool start_up_then_serve(int bursts, int serve, struct suggestion *g)
{
	const char *a[] = { "_start", "main", "init", "parse_cert" };
	const char *b[] = { "_start", "main", "init" };
	const char *w[] = { "_start", "main", "serve" };
	struct suggest *s = suggest__new();
	uint64_t t = 0;
	bool found;

	for (int c = 0; c < bursts; c++)
		for (int k = 0; k < 2; k++, t += 10 * MS)
			assert_int_equal(suggest__observe(s, 7, t, k ? b : a, k ? 3 : 4), 0);
	for (int k = 0; k < serve; k++, t += 10 * MS)
		assert_int_equal(suggest__observe(s, 7, t, w, 3), 0);
	found = suggest__result(s, g);
	suggest__free(s);
	return found;
}

/* Regular bursts in the first 10% of a thread's time (start-up work) and a
 * module's top level seen in bursts are no loop. */
static void test_start_up_bursts_and_module_level_are_no_loop(void **state)
{
	const char *w[] = { "_start", "main", "serve" };
	const char *mod[] = { "<module> (run.py)" };
	const char *idle[] = { "<module> (run.py)", "step (run.py)" };
	struct suggest *s;
	struct suggestion g;
	uint64_t t = 0;

	(void)state;
	/* 5 regular bursts of parse_cert in 100 ms, then 900 ms of one call */
	assert_false(start_up_then_serve(5, 90, &g));
	/* the same bursts over 30% of the time: a loop */
	assert_true(start_up_then_serve(15, 70, &g));
	assert_string_equal(g.name, "parse_cert");
	/* a module-level loop of one step: the step */
	s = suggest__new();
	feed(s, 7, 10, 20, 10, mod, 1, idle, 2);
	assert_true(suggest__result(s, &g));
	assert_string_equal(g.name, "step (run.py)");
	suggest__free(s);
	/* <module> itself in regular bursts (every 6 observations, runs of 1
	 * and 5) between native stacks without it (irregular): not py:<module> */
	s = suggest__new();
	for (int c = 0; c < 10; c++) {
		int run = c % 2 ? 5 : 1;

		for (int k = 0; k < 6; k++, t += 10 * MS)
			assert_int_equal(k < run ? suggest__observe(s, 7, t, mod, 1) : suggest__observe(s, 7, t, w, 3), 0);
	}
	assert_false(suggest__result(s, &g));
	suggest__free(s);
}

static void test_format_by_frame_kind(void **state)
{
	struct suggestion g = { .bursts = 9, .period_ms = 80 };
	char line[512];

	(void)state;
	snprintf(g.name, sizeof(g.name), "runCycle (jsloop.js:38)");
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(suggest__option(&g), "--phase");
	assert_non_null(strstr(line, "--phase loop=js:runCycle (a JavaScript loop, seen in 9 periodic bursts"));
	snprintf(g.name, sizeof(g.name), "step (run.py)");
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle py:step (seen in 9 periodic bursts, period 80 ms)");
	g.marker = true;
	assert_string_equal(suggest__option(&g), "--cycle-marker");
	/* C++ with parameters is native */
	snprintf(g.name, sizeof(g.name), "ns::run_cycle(int)");
	g.marker = false;
	suggest__format(&g, line, sizeof(line));
	assert_string_equal(line, "--cycle ns::run_cycle(int) (seen in 9 periodic bursts, period 80 ms)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_under_the_cycle_function),
		cmocka_unit_test(test_the_cycle_function_seen_leaving),
		cmocka_unit_test(test_an_irregular_step_beside_a_regular_one),
		cmocka_unit_test(test_loop_inline_in_main_gives_a_marker),
		cmocka_unit_test(test_module_level_loop_gives_a_marker),
		cmocka_unit_test(test_no_loop_no_suggestion),
		cmocka_unit_test(test_start_up_bursts_and_module_level_are_no_loop),
		cmocka_unit_test(test_format_by_frame_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
