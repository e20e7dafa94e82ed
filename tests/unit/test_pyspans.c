// SPDX-License-Identifier: BSD-2-Clause
/* `py:` specs: parsing, matching, and calls from stack observations whose
 * truth is set by the test (timestamps in ns). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>

#include "infertrace.h"
#include "pyspans.h"

#define MS 1000000ull

static void test_parse_and_match(void **state)
{
	struct pyspans *p = pyspans__new();
	char err[256];

	(void)state;
	assert_false(pyspans__is_spec("libllama:llama_decode"));
	assert_true(pyspans__is_spec("py:run_cycle"));
	assert_int_equal(pyspans__add_spec(p, "py:run_cycle", IT_ROLE_CYCLE, 0, err, sizeof(err)), 0);
	assert_int_equal(pyspans__add_spec(p, "py:train:Model.step", IT_ROLE_PHASE, 1, err, sizeof(err)), 0);
	assert_int_equal(pyspans__add_spec(p, "py:", IT_ROLE_PHASE, 2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "py:QUALNAME"));
	assert_int_equal(pyspans__add_spec(p, "py:a b", IT_ROLE_PHASE, 2, err, sizeof(err)), -EINVAL);
	assert_int_equal(pyspans__nspecs(p), 2);
	assert_true(pyspans__has_role(p, IT_ROLE_CYCLE));
	assert_false(pyspans__has_role(p, IT_ROLE_CYCLE_MARKER));
	assert_int_equal(pyspans__match(p, "run_cycle", "loop.py"), 0);
	assert_int_equal(pyspans__match(p, "Model.step", "train.py"), 1);
	assert_int_equal(pyspans__match(p, "Model.step", "/srv/x/train.py"), 1);
	assert_int_equal(pyspans__match(p, "Model.step", "other.py"), -1);
	assert_int_equal(pyspans__match(p, "step", "train.py"), -1);
	pyspans__free(p);
}

static void obs(struct pyspans *p, pid_t tid, uint64_t ts, int kind, int spec, uint64_t call)
{
	struct pyspan_hit h = { .spec = spec, .depth = 3, .call = call };

	assert_int_equal(pyspans__observe(p, 100, tid, ts, kind, &h, spec >= 0), 0);
}

/* Edges between two on-CPU observations are placed half-way; a switch-out
 * and its switch-in bound an interval in which nothing changed. */
static void test_edges(void **state)
{
	struct pyspans *p = pyspans__new();
	struct pyspans_resolution r;
	struct pyspan_call *c;
	size_t n;
	char err[64];

	(void)state;
	assert_int_equal(pyspans__add_spec(p, "py:f", IT_ROLE_PHASE, 1, err, sizeof(err)), 0);
	obs(p, 7, 10 * MS, IT_PY_OBS_SAMPLE, -1, 0);
	obs(p, 7, 12 * MS, IT_PY_OBS_SAMPLE, 0, 5);   /* f began in (10, 12) */
	obs(p, 7, 20 * MS, IT_PY_OBS_OUT, 0, 5);      /* blocked in f */
	obs(p, 7, 50 * MS, IT_PY_OBS_IN, 0, 5);
	obs(p, 7, 54 * MS, IT_PY_OBS_SAMPLE, -1, 0);  /* f ended in (50, 54) */
	assert_int_equal(pyspans__calls(p, &c, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].start_ns, 11 * MS);
	assert_int_equal(c[0].end_ns, 52 * MS);
	assert_int_equal(c[0].id, 1);
	assert_false(c[0].open);
	free(c);
	pyspans__resolution(p, &r);
	assert_int_equal(r.observations, 5);
	assert_int_equal(r.edges, 2);
	assert_true(r.max_ms > 1.99 && r.max_ms < 2.01);
	pyspans__free(p);
}

/* Two calls with no observation between them are told apart by their call
 * identity; an identity not yet known (0) matches the call it is seen in. */
static void test_call_identity(void **state)
{
	struct pyspans *p = pyspans__new();
	struct pyspan_call *c;
	size_t n;
	char err[64];

	(void)state;
	assert_int_equal(pyspans__add_spec(p, "py:run_cycle", IT_ROLE_CYCLE, 0, err, sizeof(err)), 0);
	obs(p, 7, 10 * MS, IT_PY_OBS_SAMPLE, 0, 0);
	obs(p, 7, 20 * MS, IT_PY_OBS_SAMPLE, 0, 11);
	obs(p, 7, 30 * MS, IT_PY_OBS_SAMPLE, 0, 11);
	obs(p, 7, 40 * MS, IT_PY_OBS_SAMPLE, 0, 12);  /* the next call */
	obs(p, 8, 45 * MS, IT_PY_OBS_SAMPLE, 0, 12);  /* another thread: its own call */
	obs(p, 7, 50 * MS, IT_PY_OBS_SAMPLE, 0, 12);
	assert_int_equal(pyspans__calls(p, &c, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].start_ns, 10 * MS);
	assert_int_equal(c[0].end_ns, 35 * MS);
	assert_int_equal(c[1].start_ns, 35 * MS);  /* open: ends at its thread's last observation */
	assert_int_equal(c[1].end_ns, 50 * MS);
	assert_true(c[1].open);
	assert_int_equal(c[2].tid, 8);
	free(c);
	pyspans__free(p);
}

/* A stack caught mid-change lacks the call for one observation: the same
 * call seen again right after goes on; a call that stays away ended at the
 * first observation without it. */
static void test_torn_stack(void **state)
{
	struct pyspans *p = pyspans__new();
	struct pyspan_call *c;
	size_t n;
	char err[64];

	(void)state;
	assert_int_equal(pyspans__add_spec(p, "py:store", IT_ROLE_PHASE, 1, err, sizeof(err)), 0);
	obs(p, 7, 10 * MS, IT_PY_OBS_SAMPLE, 0, 9);
	obs(p, 7, 12 * MS, IT_PY_OBS_OUT, -1, 0);     /* torn */
	obs(p, 7, 20 * MS, IT_PY_OBS_IN, -1, 0);
	obs(p, 7, 22 * MS, IT_PY_OBS_SAMPLE, 0, 9);   /* the same call */
	obs(p, 7, 24 * MS, IT_PY_OBS_SAMPLE, -1, 0);
	obs(p, 7, 26 * MS, IT_PY_OBS_SAMPLE, -1, 0);
	assert_int_equal(pyspans__calls(p, &c, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].start_ns, 10 * MS);
	assert_int_equal(c[0].end_ns, 23 * MS);
	assert_false(c[0].open);
	free(c);
	pyspans__free(p);
}

/* py:@callers: a spec no frame matches; its calls come from the replay */
static void test_callers_extra_calls(void **state)
{
	struct pyspans *p = pyspans__new();
	struct pyspan_call extra[2] = {
		{ .tgid = 1, .tid = 1, .spec = 1, .role = IT_ROLE_PHASE, .id = 2, .start_ns = 10 * MS, .end_ns = 20 * MS },
		{ .tgid = 1, .tid = 1, .spec = 1, .role = IT_ROLE_PHASE, .id = 2, .start_ns = 30 * MS, .end_ns = 45 * MS },
	};
	struct pyspan_call *calls;
	size_t n;
	char err[128];

	(void)state;
	assert_int_equal(pyspans__add_spec(p, "py:run_cycle", IT_ROLE_CYCLE, 0, err, sizeof(err)), 0);
	assert_int_equal(pyspans__add_spec(p, "py:@callers", IT_ROLE_PHASE, 2, err, sizeof(err)), 0);
	assert_int_equal(pyspans__callers_spec(p), 1);
	assert_false(pyspans__is_callers(p, 0));
	assert_int_equal(pyspans__match(p, "@callers", "x.py"), 1); /* no Python name starts with '@' */
	assert_int_equal(pyspans__set_extra(p, extra, 2), 0);
	assert_int_equal(pyspans__calls(p, &calls, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(calls[1].end_ns, 45 * MS);
	free(calls);
	/* a later replay replaces the earlier one */
	assert_int_equal(pyspans__set_extra(p, extra, 1), 0);
	assert_int_equal(pyspans__calls(p, &calls, &n), 0);
	assert_int_equal(n, 1);
	free(calls);
	pyspans__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_match),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_call_identity),
		cmocka_unit_test(test_torn_stack),
		cmocka_unit_test(test_callers_extra_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
