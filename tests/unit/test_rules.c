// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: bottleneck rules on models loaded from profile.json trees
 * built by the test (the same loading `report` and `diff` use). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"
#include "rules.h"

/* Loads p into a model, evaluates the rules and puts the findings back
 * into p, where the assertions read them. */
static void evaluate(json_t *p, const struct rule_thresholds *t)
{
	struct model m;
	json_t *out;

	assert_int_equal(model__from_json(&m, p, "test"), 0);
	assert_int_equal(rules__evaluate(&m, t), 0);
	out = model__to_json(&m);
	assert_non_null(out);
	json_object_set(p, "bottlenecks", json_object_get(out, "bottlenecks"));
	json_object_set(p, "recommendations", json_object_get(out, "recommendations"));
	json_decref(out);
	model__free(&m);
}

static json_t *profile_with_phases(double inference, double database, double mode)
{
	return json_pack("{s:{s:{s:f,s:f},s:{s:f,s:f},s:{s:f,s:f}},s:[],s:[],s:{s:f},s:{},s:[],s:{},s:[]}",
			 "phases",
			 "llm_inference", "percent_of_cycle", inference, "total_ms", inference * 10,
			 "database", "percent_of_cycle", database, "total_ms", database * 10,
			 "mode", "percent_of_cycle", mode, "total_ms", mode * 10,
			 "bottlenecks", "recommendations", "system", "mem_total_mb", 1000.0,
			 "memory", "crashes", "aggregate_metrics", "cycles");
}

static json_t *find(json_t *profile, const char *type)
{
	json_t *b;
	size_t i;

	json_array_foreach(json_object_get(profile, "bottlenecks"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "type")), type))
			return b;
	return NULL;
}

static const char *sev(json_t *b)
{
	return json_string_value(json_object_get(b, "severity"));
}

static void test_phase_thresholds(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_with_phases(70, 20, 5);

	(void)state;
	rule_thresholds__defaults(&t);
	evaluate(p, &t);
	assert_non_null(find(p, "llm_inference"));
	assert_string_equal(sev(find(p, "llm_inference")), "medium");   /* 70 / 60 < 1.25 */
	assert_non_null(find(p, "database"));
	assert_string_equal(sev(find(p, "database")), "high");          /* 20 / 15 = 1.33 */
	assert_null(find(p, "mode_overhead"));                          /* 5 <= 10 */
	assert_in_range(json_array_size(json_object_get(p, "recommendations")), 7, 7);
	assert_float_equal(json_real_value(json_object_get(find(p, "database"), "percentage_of_cycle")), 20, 1e-9);
	json_decref(p);
	/* at the threshold nothing fires; raised thresholds silence the rule */
	p = profile_with_phases(60, 15, 10);
	evaluate(p, &t);
	assert_int_equal(json_array_size(json_object_get(p, "bottlenecks")), 0);
	json_decref(p);
	p = profile_with_phases(95, 1, 1);
	assert_int_equal(rule_thresholds__set(&t, "inference_pct", 96), 0);
	assert_int_equal(rule_thresholds__set(&t, "nonsense", 1), -22);
	evaluate(p, &t);
	assert_null(find(p, "llm_inference"));
	json_decref(p);
}

static void test_memory_and_leak(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_with_phases(1, 1, 1);

	(void)state;
	rule_thresholds__defaults(&t);
	json_object_set_new(p, "memory", json_pack("{s:f,s:f}", "peak_mb", 900.0, "growth_mb_per_cycle", 10.0));
	json_object_set_new(p, "aggregate_metrics", json_pack("{s:i}", "total_cycles", 5));
	evaluate(p, &t);
	assert_non_null(find(p, "memory_pressure"));   /* 90% of 1000 MB */
	assert_non_null(find(p, "memory_leak"));
	assert_string_equal(sev(find(p, "memory_leak")), "critical");
	json_decref(p);

	p = profile_with_phases(1, 1, 1);
	json_object_set_new(p, "memory", json_pack("{s:f}", "peak_mb", 100.0));
	json_array_append_new(json_object_get(p, "crashes"), json_pack("{s:s}", "cause", "oom_kill"));
	evaluate(p, &t);
	assert_string_equal(sev(find(p, "memory_pressure")), "critical");
	json_decref(p);
}

static void test_contention_offcpu_thermal_gpu(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_with_phases(80, 1, 1);

	(void)state;
	rule_thresholds__defaults(&t);
	json_object_set_new(p, "sched", json_pack("{s:f,s:f,s:i}", "runq_share_percent", 45.0,
						  "avg_runnable_threads", 3.5, "cpus", 2));
	json_array_append_new(json_object_get(p, "cycles"),
			      json_pack("{s:{s:{s:f,s:f,s:{s:f}}}}", "phases", "database", "ms", 10.0,
					"offcpu_ms", 9.0, "blocked", "io", 8.0));
	json_object_set_new(p, "thermal", json_pack("{s:b,s:f,s:[{}]}", "throttled", 1, "max_temp_c", 88.0, "throttling"));
	json_object_set_new(p, "gpu", json_pack("{s:b,s:{s:f}}", "available", 1, "util_pct", "avg", 30.0));
	evaluate(p, &t);
	assert_non_null(find(p, "cpu_contention"));
	assert_string_equal(sev(find(p, "cpu_contention")), "critical"); /* 45 / 20 */
	assert_non_null(find(p, "io_wait"));                              /* 90% blocked, mostly I/O */
	assert_non_null(find(p, "thermal_throttling"));
	assert_non_null(find(p, "gpu_underutilized"));
	assert_null(find(p, "gpu_bound"));
	json_decref(p);
}

/* Rules need derived figures: a model still collecting is refused. */
static void test_rules_refuse_unfinished_model(void **state)
{
	struct rule_thresholds t;
	struct model m;

	(void)state;
	rule_thresholds__defaults(&t);
	model__init(&m);
	assert_int_equal(rules__evaluate(&m, &t), -EINVAL);
	assert_int_equal(m.nfindings, 0);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_thresholds),
		cmocka_unit_test(test_memory_and_leak),
		cmocka_unit_test(test_contention_offcpu_thermal_gpu),
		cmocka_unit_test(test_rules_refuse_unfinished_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
