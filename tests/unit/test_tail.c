// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: tail-cycle forensics on a model whose cycles are known by
 * construction: 14 cycles of 10 ms (inference 5, database 3 asleep, mode 2
 * on the CPU) but cycle 7, which sleeps 30 ms more in database, cycle 12,
 * which spins 25 ms more in mode (with 5 major faults), and cycles 3 and 5,
 * 10.9 and 10.4 ms: above median + 3 MAD (MAD 0) but less than 10% above the
 * median, so not in the tail. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"
#include "test_helpers.h"
#include "profile_tables.h"
#include "config_file.h"
#include "tail.h"

#define MS 1000000ull
#define INFER 1
#define DB 2
#define MODE 3
#define PID 100

static void stack(struct model *m, uint32_t cycle, uint32_t phase, const char *const *leaf_first, int n,
		  uint64_t samples, uint64_t offcpu_ns)
{
	struct model_frame f[16];
	struct model_lstack s = { .pid = PID, .tid = PID, .bpf_cycle = cycle, .has_cycle = true, .phase = phase,
				  .comm = model__intern(m, "exp"), .samples = samples, .offcpu_ns = offcpu_ns };

	for (int i = 0; i < n; i++)
		f[i] = (struct model_frame){ .name = model__intern(m, leaf_first[i]), .mapping = -1 };
	assert_int_equal(model__add_lstack(m, &s, f, (uint32_t)n), 0);
}

static const char *spin_leaf = "spin"; /* the leaf of the stack that grows in cycle 12 */

static void add_cycle(struct model *m, uint32_t i, double extra_infer, double extra_db, double extra_mode)
{
	static const char *const infer[] = { "infer", "run_cycle", "main" };
	static const char *const mode[] = { "mode", "run_cycle", "main" };
	const char *const spin[] = { spin_leaf, "mode", "run_cycle", "main" };
	static const char *const sleep[] = { "do_nanosleep_[k]", "hrtimer_nanosleep_[k]", "nanosleep", "database",
					     "run_cycle", "main" };
	uint64_t start = 1000 * MS + i * 100 * MS;
	double infer_ms = 5 + extra_infer, db_ms = 3 + extra_db, mode_ms = 2 + extra_mode;
	double dur = infer_ms + db_ms + mode_ms;
	struct model_cycle *c = model__add_cycle(m, PID, i, start, start + (uint64_t)llround(dur * 1e6));

	assert_non_null(c);
	c->phases[INFER] = (struct model_cycle_phase){ .present = true, .ms = infer_ms, .thread_ms = infer_ms, .calls = 1 };
	c->phases[DB] = (struct model_cycle_phase){ .present = true, .ms = db_ms, .thread_ms = db_ms, .calls = 1 };
	c->phases[MODE] = (struct model_cycle_phase){ .present = true, .ms = mode_ms, .thread_ms = mode_ms, .calls = 1 };
	c->split.present = true;
	c->split.oncpu_ms = infer_ms + mode_ms;
	c->split.offcpu_ms = c->split.blocked_ms[BLOCKED_SLEEP] = db_ms;
	c->has_all_threads = true;
	c->all_oncpu_ms = c->split.oncpu_ms;
	c->all_offcpu_ms = db_ms;
	c->majflt = extra_mode > 0 ? 5 : 0;
	c->minflt = 100;
	/* 1 kHz sampling: one sample per ms on the CPU */
	stack(m, i, INFER, infer, 3, (uint64_t)infer_ms, 0);
	stack(m, i, MODE, mode, 3, 2, 0);
	if (extra_mode > 0)
		stack(m, i, MODE, spin, 4, (uint64_t)extra_mode, 0);
	stack(m, i, DB, sleep, 6, 0, (uint64_t)(db_ms * 1e6));
}

static void build(struct model *m, uint32_t ncycles)
{
	model__init(m);
	m->run.config = json_pack("{s:i}", "frequency", 1000);
	assert_int_equal(config_file__asked(m->run.config, m), 0);
	m->run.system.present = true;
	m->run.system.cpus = 2;
	assert_int_equal(model__set_phase_name(m, INFER, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, DB, "database"), 0);
	assert_int_equal(model__set_phase_name(m, MODE, "mode"), 0);
	assert_non_null(model__add_process(m, PID));
	m->cycles_source = "cycle";
	for (uint32_t i = 0; i < ncycles; i++)
		add_cycle(m, i, i == 3 ? 0.9 : i == 5 ? 0.4 : 0, i == 7 ? 30 : 0, i == 12 ? 25 : 0);
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
	assert_int_equal(model__derive(m), 0);
}

static json_t *cause(json_t *t, const char *kind, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(t, "causes"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "kind")), kind) &&
		    !strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	return NULL;
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_names_the_slow_cycles_and_their_causes(void **state)
{
	struct model m;
	json_t *t7, *t12, *c, *st, *tail_cycles;

	(void)state;
	build(&m, 14);
	tail_cycles = profile_tail__json(&m); /* the typed tail as profile.json shows it */
	assert_true(json_is_array(tail_cycles));
	assert_int_equal(json_array_size(tail_cycles), 2);
	/* worst first */
	t7 = json_array_get(tail_cycles, 0);
	t12 = json_array_get(tail_cycles, 1);
	assert_int_equal(num(t7, "cycle"), 7);
	assert_int_equal(num(t12, "cycle"), 12);
	assert_near(num(t7, "median_ms"), 10, 1e-9);
	assert_near(num(t7, "ms"), 40, 1e-6);
	assert_near(num(t7, "excess_ms"), 30, 1e-6);
	assert_near(num(t12, "excess_ms"), 25, 1e-6);

	/* cycle 7: the database phase and sleeping grew by 30 ms, nothing else */
	assert_int_equal(json_array_size(json_object_get(t7, "causes")), 2);
	c = cause(t7, "phase", "database");
	assert_non_null(c);
	assert_near(num(c, "excess_ms"), 30, 1e-6);
	assert_near(num(c, "median_ms"), 3, 1e-6);
	c = cause(t7, "blocked", "sleep");
	assert_non_null(c);
	assert_near(num(c, "excess_ms"), 30, 1e-6);
	assert_int_equal(json_array_size(json_object_get(c, "stacks")), 1);
	st = json_array_get(json_object_get(c, "stacks"), 0);
	assert_string_equal(json_string_value(json_object_get(st, "stack")),
			    "main;run_cycle;database;nanosleep;hrtimer_nanosleep_[k];do_nanosleep_[k]");
	assert_string_equal(json_string_value(json_object_get(st, "kind")), "offcpu");
	assert_near(num(st, "ms"), 33, 1e-6);
	assert_near(num(st, "excess_ms"), 30, 1e-6);

	/* cycle 12: mode and the main thread's CPU grew by 25 ms, with 5 major
	 * faults; all threads' CPU is the main thread's: not repeated */
	c = cause(t12, "phase", "mode");
	assert_non_null(c);
	assert_near(num(c, "excess_ms"), 25, 1e-6);
	/* the stack that grew is the spin; mode's usual stack did not */
	assert_int_equal(json_array_size(json_object_get(c, "stacks")), 1);
	st = json_array_get(json_object_get(c, "stacks"), 0);
	assert_string_equal(json_string_value(json_object_get(st, "stack")), "main;run_cycle;mode;spin");
	assert_near(num(st, "excess_ms"), 25, 1e-6);
	c = cause(t12, "oncpu", "main_thread");
	assert_non_null(c);
	assert_near(num(c, "excess_ms"), 25, 1e-6);
	assert_null(cause(t12, "oncpu", "all_threads"));
	assert_null(cause(t12, "phase", "database"));
	c = cause(t12, "page_faults", "major");
	assert_non_null(c);
	assert_near(num(c, "excess_count"), 5, 1e-9);
	assert_null(cause(t12, "page_faults", "minor"));
	json_decref(tail_cycles);
	model__free(&m);
}

static void test_round_trip_and_report(void **state)
{
	struct model m, back;
	struct rule_thresholds t;
	json_t *p, *tail_m, *tail_back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	build(&m, 14);
	rule_thresholds__defaults(&t);
	assert_int_equal(rules__evaluate(&m, &t), 0);
	p = model__to_json(&m);
	assert_non_null(p);
	assert_int_equal(model__from_json(&back, p, "test"), 0);
	tail_m = profile_tail__json(&m);
	tail_back = profile_tail__json(&back);
	assert_true(json_equal(tail_back, tail_m));
	json_decref(tail_m);
	json_decref(tail_back);
	f = open_memstream(&buf, &len);
	tail__print(f, &back);
	tail__html(f, &back);
	fclose(f);
	assert_non_null(strstr(buf, "cycle 7: 40.0 ms, +30.0 ms over the median 10.0 ms"));
	assert_non_null(strstr(buf, "phase database +30.0 ms"));
	assert_non_null(strstr(buf, "<h2>Tail cycles</h2>"));
	/* off-CPU: the user frames that blocked and the kernel frame that says how */
	assert_non_null(strstr(buf, "offcpu: main;run_cycle;database;nanosleep;do_nanosleep_[k]\n"));
	/* no `nan` but in the sleep's frame names */
	for (const char *q = buf; (q = strstr(q, "nan")); q++)
		assert_true(!strncmp(q, "nanosleep", 9));
	free(buf);
	json_decref(p);
	model__free(&back);
	model__free(&m);
}

/* A frame name longer than the line is shown whole, never cut inside; the
 * frames before it that do not fit are left out at a frame boundary: a
 * 95-character leaf keeps its caller (100 characters, the line's width)
 * and no more. */
static void test_long_frame_names_kept_whole(void **state)
{
	static const char long_name[] =
		"tinyBLAS<8, float __vector(8), float __vector(8), unsigned short, float, float>::gemm<4, 3>(long, long, long, long)";
	static const char name_95[] =
		"ggml_compute_forward_mul_mat<float, (ggml_type)2, 32>(ggml_compute_params const*, ggml_tensor*)";
	static const struct {
		const char *leaf, *line;
	} cases[] = {
		{ long_name, "" },
		{ name_95, "mode;" },
	};
	struct model m;
	struct rule_thresholds t;
	char *buf = NULL, want[512];
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(strlen(name_95), 95);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spin_leaf = cases[i].leaf;
		build(&m, 14);
		spin_leaf = "spin";
		rule_thresholds__defaults(&t);
		assert_int_equal(rules__evaluate(&m, &t), 0);
		f = open_memstream(&buf, &len);
		tail__print(f, &m);
		fclose(f);
		snprintf(want, sizeof(want), "oncpu: %s%s\n", cases[i].line, cases[i].leaf);
		assert_non_null(strstr(buf, want));
		free(buf);
		buf = NULL;
		model__free(&m);
	}
}

static void test_too_few_or_regular_cycles(void **state)
{
	struct model m;
	json_t *tail_cycles;

	(void)state;
	/* 4 cycles, one 9% longer: no tail judged */
	build(&m, TAIL_MIN_CYCLES - 1);
	tail_cycles = profile_tail__json(&m);
	assert_null(tail_cycles);
	model__free(&m);
	/* 7 cycles with only the 10.9 and 10.4 ms ones: judged, none in the tail */
	build(&m, 7);
	tail_cycles = profile_tail__json(&m);
	assert_true(json_is_array(tail_cycles));
	assert_int_equal(json_array_size(tail_cycles), 0);
	json_decref(tail_cycles);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_the_slow_cycles_and_their_causes),
		cmocka_unit_test(test_round_trip_and_report),
		cmocka_unit_test(test_too_few_or_regular_cycles),
		cmocka_unit_test(test_long_frame_names_kept_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
