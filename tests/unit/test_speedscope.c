// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: timeline.speedscope.json from a model's timed samples (one
 * profile per thread in time order, named by the thread's comm, frames
 * shared, each sample at its time from the recording's start) and the
 * model's thread names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_helpers.h"

#include "model.h"
#include "speedscope.h"

#define MS 1000000ull
#define T0 (5000 * MS)

static void name_thread(struct model *m, pid_t pid, pid_t tid, const char *name)
{
	char comm[IT_COMM_LEN] = {};

	memcpy(comm, name, strlen(name) < IT_COMM_LEN ? strlen(name) : IT_COMM_LEN);
	assert_int_equal(model__name_thread(m, pid, tid, comm), 0);
}

static void sample(struct model *m, pid_t pid, pid_t tid, uint64_t ms, const char *stack)
{
	struct model_trace_sample s = { .ts_ns = T0 + ms * MS, .tgid = pid, .tid = tid, .frame = -1 };

	s.stack = stack ? model__intern(m, stack) : -1;
	assert_int_equal(model__add_trace_sample(m, &s), 0);
}

/* The file, parsed. */
static json_t *encode(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_error_t e;
	json_t *doc;

	assert_non_null(f);
	assert_int_equal(speedscope__encode(m, f), 0);
	fclose(f);
	doc = json_loads(buf, 0, &e);
	if (!doc)
		fail_msg("not JSON: %s: %s", e.text, buf);
	free(buf);
	return doc;
}

/* Profile p's stack i as "frame;frame", "" for an empty one. */
static void stack_of(json_t *doc, json_t *p, size_t i, char *out, size_t len)
{
	json_t *frames = th_jget(doc, "shared", "frames", NULL), *id;
	size_t k;

	out[0] = 0;
	json_array_foreach(json_array_get(json_object_get(p, "samples"), i), k, id)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", k ? ";" : "",
			 json_string_value(json_object_get(json_array_get(frames, json_integer_value(id)), "name")));
}

static uint64_t weight(json_t *p, size_t i)
{
	return json_integer_value(json_array_get(json_object_get(p, "weights"), i));
}

static void test_profiles_per_thread_in_time_order(void **state)
{
	struct model m;
	json_t *doc, *profiles, *p;
	char st[256];

	(void)state;
	model__init(&m);
	m.run.start_ns = T0;
	m.run.end_ns = T0 + 1000 * MS;
	m.run.config = json_pack("{s:i}", "frequency", 100); /* a period of 10 ms */
	strcpy(model__add_process(&m, 20)->comm, "proc20");
	name_thread(&m, 10, 10, "app");
	name_thread(&m, 10, 11, "early name");
	name_thread(&m, 10, 11, "worker\xff"); /* renamed; bytes made valid */
	/* out of order, as several CPUs' records arrive */
	sample(&m, 10, 11, 120, "app;main;work");
	sample(&m, 10, 11, 100, "app;main;work");
	sample(&m, 10, 10, 50, "app;main;idle_[k]");
	sample(&m, 10, 11, 110, "app;main;work");
	sample(&m, 10, 11, 300, "app;main;say \"hi\"");
	sample(&m, 10, 11, 302, "app;main;work");    /* another CPU's timer, 2 ms on */
	sample(&m, 20, 21, 400, NULL);                /* no stack, no name */
	doc = encode(&m);
	assert_string_equal(json_string_value(json_object_get(doc, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	profiles = json_object_get(doc, "profiles");
	assert_int_equal(json_array_size(profiles), 3);
	assert_int_equal(json_integer_value(json_object_get(doc, "activeProfileIndex")), 1); /* the busiest */
	/* by process then thread; named by the thread's comm */
	assert_string_equal(json_string_value(th_jget(json_array_get(profiles, 0), "name", NULL)), "app (tid 10)");
	assert_string_equal(json_string_value(th_jget(json_array_get(profiles, 1), "name", NULL)), "worker? (tid 11)");
	assert_string_equal(json_string_value(th_jget(json_array_get(profiles, 2), "name", NULL)), "proc20 (tid 21)");
	/* tid 11: idle until its first period (90 ms); 90, 100, 110 one run;
	 * then idle to 290; 290 lasts until 292, where the next begins */
	p = json_array_get(profiles, 1);
	assert_string_equal(json_string_value(json_object_get(p, "unit")), "nanoseconds");
	assert_int_equal(json_integer_value(json_object_get(p, "endValue")), 1000 * MS);
	assert_int_equal(json_array_size(json_object_get(p, "samples")), 7);
	assert_int_equal(json_array_size(json_object_get(p, "weights")), 7);
	static const struct {
		const char *stack;
		uint64_t w;
	} want[] = {
		{ "", 90 * MS }, { "app;main;work", 10 * MS }, { "app;main;work", 10 * MS },
		{ "app;main;work", 10 * MS }, { "", 170 * MS }, { "app;main;say \"hi\"", 2 * MS },
		{ "app;main;work", 10 * MS },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		stack_of(doc, p, i, st, sizeof(st));
		assert_string_equal(st, want[i].stack);
		assert_int_equal(weight(p, i), want[i].w);
	}
	/* the frames are shared: one "app" for every thread */
	size_t apps = 0, k;
	json_t *fr;

	json_array_foreach(th_jget(doc, "shared", "frames", NULL), k, fr)
		apps += !strcmp(json_string_value(json_object_get(fr, "name")), "app");
	assert_int_equal(apps, 1);
	/* a sample with no stack is [unknown], at its time */
	p = json_array_get(profiles, 2);
	stack_of(doc, p, 1, st, sizeof(st));
	assert_string_equal(st, "[unknown]");
	assert_int_equal(weight(p, 0), 390 * MS);
	json_decref(doc);
	model__free(&m);
}

static void test_thread_names_kept_in_copies(void **state)
{
	struct model m, c;

	(void)state;
	model__init(&m);
	for (pid_t t = 40; t > 30; t--)
		name_thread(&m, 30, t, t % 2 ? "odd" : "even");
	name_thread(&m, 5, 5, "first");
	assert_int_equal(m.nthreads, 11);
	assert_string_equal(model__thread_name(&m, 30, 33), "odd");
	assert_string_equal(model__thread_name(&m, 5, 5), "first");
	assert_null(model__thread_name(&m, 30, 41));
	assert_int_equal(model__copy(&c, &m), 0);
	assert_string_equal(model__thread_name(&c, 30, 40), "even");
	model__free(&c);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles_per_thread_in_time_order),
		cmocka_unit_test(test_thread_names_kept_in_copies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
