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
	/* a phase named database that shows no database work: no verdict */
	assert_null(find(p, "database"));
	assert_null(find(p, "mode_overhead"));                          /* 5 <= 10 */
	/* none: this run shows no model, context, GPU or database work that a
	 * recommendation could be computed from */
	assert_int_equal(json_array_size(json_object_get(p, "recommendations")), 0);
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

static json_t *find_rec(json_t *profile, const char *title)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(profile, "recommendations"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "title")), title))
			return r;
	return NULL;
}

/* Inference advice only from this run's figures, each with its evidence
 * and a computed value. */
static void test_advice_from_evidence(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_with_phases(80, 1, 1), *r;
	size_t i;

	(void)state;
	rule_thresholds__defaults(&t);
	json_array_append_new(json_object_get(p, "cycles"),
			      json_pack("{s:f,s:{},s:{s:i,s:i,s:f,s:f}}", "duration_ms", 100.0, "phases", "llama",
					"prompt_tokens", 36, "generated_tokens", 16, "prefill_ms", 20.0, "decode_ms", 70.0));
	json_object_set_new(p, "llama", json_pack("{s:{s:s,s:i,s:f,s:f},s:{s:i}}", "model", "file_type", "F32",
						  "file_type_id", 0, "n_params", 1e9, "size_bytes", 4e9,
						  "context", "n_ctx", 4096));
	evaluate(p, &t);
	r = find_rec(p, "Reduce the context window");
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "recommended_value")), "n_ctx 256"); /* 52 tokens */
	r = find_rec(p, "Quantize the model");
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "recommended_value")), "Q4_K_M (about 611 MB)");
	assert_null(find_rec(p, "Offload layers to the GPU")); /* no GPU seen */
	json_array_foreach(json_object_get(p, "recommendations"), i, r)
		assert_true(json_object_size(json_object_get(r, "evidence")) > 0);
	json_decref(p);

	/* a Q4_K_M model and a context the cycles fill: nothing to recommend */
	p = profile_with_phases(80, 1, 1);
	json_array_append_new(json_object_get(p, "cycles"),
			      json_pack("{s:f,s:{},s:{s:i,s:i,s:f,s:f}}", "duration_ms", 100.0, "phases", "llama",
					"prompt_tokens", 300, "generated_tokens", 100, "prefill_ms", 20.0, "decode_ms", 70.0));
	json_object_set_new(p, "llama", json_pack("{s:{s:s,s:i,s:f},s:{s:i}}", "model", "file_type", "Q4_K_M",
						  "file_type_id", 15, "n_params", 1e9, "context", "n_ctx", 512));
	evaluate(p, &t);
	assert_non_null(find(p, "llm_inference"));
	assert_int_equal(json_array_size(json_object_get(p, "recommendations")), 0);
	json_decref(p);
}

/* Joules per generated token: each cycle's measured energy over its
 * generated tokens, and over the cycles whose energy was measured; a cycle
 * without energy gets no figure (not a zero). */
static void test_joules_per_generated_token(void **state)
{
	json_t *p = profile_with_phases(80, 1, 1), *cycles = json_object_get(p, "cycles"), *out, *c;
	struct model m;

	(void)state;
	json_array_append_new(cycles, json_pack("{s:f,s:{},s:{s:i,s:i,s:f,s:f},s:{s:f,s:f}}", "duration_ms", 100.0,
						"phases", "llama", "prompt_tokens", 10, "generated_tokens", 8,
						"prefill_ms", 20.0, "decode_ms", 70.0, "energy", "cpu_j", 2.0,
						"total_j", 2.0));
	json_array_append_new(cycles, json_pack("{s:f,s:{},s:{s:i,s:i,s:f,s:f},s:{s:f,s:f}}", "duration_ms", 100.0,
						"phases", "llama", "prompt_tokens", 10, "generated_tokens", 4,
						"prefill_ms", 20.0, "decode_ms", 70.0, "energy", "cpu_j", 1.0,
						"total_j", 1.0));
	json_array_append_new(cycles, json_pack("{s:f,s:{},s:{s:i,s:i,s:f,s:f}}", "duration_ms", 100.0, "phases",
						"llama", "prompt_tokens", 10, "generated_tokens", 6, "prefill_ms", 20.0,
						"decode_ms", 70.0));
	json_object_set_new(p, "llama", json_pack("{s:i,s:i,s:f,s:f}", "prompt_tokens", 30, "generated_tokens", 18,
						  "prefill_ms", 60.0, "decode_ms", 210.0));
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	llama__energy(&m);
	assert_float_equal(m.cycles[0].llama.j_per_generated_token, 0.25, 1e-12);
	assert_float_equal(m.cycles[1].llama.j_per_generated_token, 0.25, 1e-12);
	assert_true(isnan(m.cycles[2].llama.j_per_generated_token));
	assert_float_equal(m.llama.j_per_generated_token, 3.0 / 12, 1e-12); /* measured cycles only */
	m.stage = MODEL_ANALYSED;
	out = model__to_json(&m);
	c = json_array_get(json_object_get(out, "cycles"), 2);
	assert_null(json_object_get(json_object_get(c, "llama"), "j_per_generated_token"));
	assert_float_equal(json_real_value(json_object_get(json_object_get(out, "llama"), "j_per_generated_token")),
			   0.25, 1e-12);
	json_decref(out);
	model__free(&m);
	json_decref(p);
}

/* Contention is judged over the cycles: a busy start-up does not count. */
static void test_contention_over_cycles(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_with_phases(1, 1, 1);

	(void)state;
	rule_thresholds__defaults(&t);
	json_object_set_new(p, "sched", json_pack("{s:f,s:f,s:i}", "runq_share_percent", 30.0,
						  "avg_runnable_threads", 3.0, "cpus", 2));
	for (int i = 0; i < 3; i++)
		json_array_append_new(json_object_get(p, "cycles"),
				      json_pack("{s:f,s:{},s:{s:f,s:f,s:f}}", "duration_ms", 100.0, "phases", "all_threads",
						"oncpu_ms", 98.0, "runq_wait_ms", 2.0, "offcpu_ms", 0.0));
	evaluate(p, &t);
	assert_null(find(p, "cpu_contention"));
	assert_null(find(p, "cpu_oversubscribed"));
	json_decref(p);

	p = profile_with_phases(1, 1, 1);
	json_object_set_new(p, "sched", json_pack("{s:f,s:f,s:i}", "runq_share_percent", 1.0,
						  "avg_runnable_threads", 1.0, "cpus", 2));
	json_array_append_new(json_object_get(p, "cycles"),
			      json_pack("{s:f,s:{},s:{s:f,s:f,s:f}}", "duration_ms", 100.0, "phases", "all_threads",
					"oncpu_ms", 100.0, "runq_wait_ms", 60.0, "offcpu_ms", 0.0));
	evaluate(p, &t);
	assert_non_null(find(p, "cpu_contention"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(find(p, "cpu_contention"), "evidence"),
							      "scope")), "cycles");
	json_decref(p);
}

/* Threads spinning in ggml's barrier with as many threads as CPUs: the
 * thread count to use is computed; with one thread on two CPUs, none. */
static void test_spin_oversubscribed(void **state)
{
	struct rule_thresholds t;
	struct model m;
	json_t *p = profile_with_phases(1, 1, 1), *out, *b;
	size_t i;
	bool found = false;

	(void)state;
	rule_thresholds__defaults(&t);
	json_object_set_new(p, "sched", json_pack("{s:f,s:f,s:i}", "runq_share_percent", 5.0,
						  "avg_runnable_threads", 2.0, "cpus", 2));
	json_object_set_new(p, "llama", json_pack("{s:{s:i,s:i}}", "context", "n_threads", 2, "n_threads_batch", 2));
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_barrier", 40);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_vec_dot_f32", 60);
	assert_int_equal(rules__evaluate(&m, &t), 0);
	out = model__to_json(&m);
	json_array_foreach(json_object_get(out, "bottlenecks"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "type")), "cpu_oversubscribed"))
			found = true;
	assert_true(found);
	json_array_foreach(json_object_get(out, "recommendations"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "bottleneck")), "cpu_oversubscribed"))
			assert_string_equal(json_string_value(json_object_get(b, "recommended_value")), "1");
	json_decref(out);
	model__free(&m);

	/* one thread on two CPUs, hardly spinning and no waits: no thread advice */
	json_object_set_new(p, "llama", json_pack("{s:{s:i,s:i}}", "context", "n_threads", 1, "n_threads_batch", 1));
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_barrier", 40);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_vec_dot_f32", 60);
	assert_int_equal(rules__evaluate(&m, &t), 0);
	out = model__to_json(&m);
	assert_int_equal(json_array_size(json_object_get(out, "bottlenecks")), 0);
	assert_int_equal(json_array_size(json_object_get(out, "recommendations")), 0);
	json_decref(out);
	model__free(&m);
	json_decref(p);
}

/* The bottleneck's and the recommendation's for a model with these llama
 * facts, 40% of the on-CPU samples in ggml's barrier, the run queue as
 * given, on 2 CPUs; NULL where none. */
static json_t *spin_advice(json_t *llama, double runq_pct, json_t **rec)
{
	struct rule_thresholds t;
	struct model m;
	json_t *p = profile_with_phases(1, 1, 1), *out, *b, *found = NULL;
	size_t i;

	rule_thresholds__defaults(&t);
	json_object_set_new(p, "sched", json_pack("{s:f,s:f,s:i}", "runq_share_percent", runq_pct,
						  "avg_runnable_threads", 2.0, "cpus", 2));
	json_object_set_new(p, "llama", llama);
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_barrier", 40);
	folded__add(&m.oncpu, "node;llama_decode;ggml_graph_compute_thread;ggml_vec_dot_f32", 60);
	assert_int_equal(rules__evaluate(&m, &t), 0);
	out = model__to_json(&m);
	*rec = NULL;
	json_array_foreach(json_object_get(out, "bottlenecks"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "type")), "cpu_oversubscribed"))
			found = json_incref(b);
	json_array_foreach(json_object_get(out, "recommendations"), i, b)
		if (!strcmp(json_string_value(json_object_get(b, "bottleneck")), "cpu_oversubscribed"))
			*rec = json_incref(b);
	json_decref(out);
	model__free(&m);
	json_decref(p);
	return found;
}

/* The thread counts ggml's CPU backend was given, when the process never
 * set any (or set others): they decide the advice, and are its evidence. */
static void test_spin_threads_used(void **state)
{
	json_t *b, *r;

	(void)state;
	/* 4 threads used on 2 CPUs, no setter call: 1 thread, n_threads_used 4 */
	b = spin_advice(json_pack("{s:{s:i,s:{s:i,s:i}}}", "context", "n_ctx", 512, "n_threads_used", "prompt", 4,
				  "generation", 4), 5.0, &r);
	assert_non_null(b);
	assert_non_null(r);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "evidence"), "n_threads_used")), 4);
	assert_null(json_object_get(json_object_get(b, "evidence"), "n_threads"));
	assert_string_equal(json_string_value(json_object_get(r, "recommended_value")), "1");
	assert_non_null(strstr(json_string_value(json_object_get(r, "current_value")), "4 threads on 2 CPUs"));
	json_decref(b);
	json_decref(r);

	/* the larger of the two phases counts: generation with 2 on 2 CPUs */
	b = spin_advice(json_pack("{s:{s:{s:i,s:i}}}", "context", "n_threads_used", "prompt", 1, "generation", 2), 5.0,
			&r);
	assert_non_null(b);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "evidence"), "n_threads_used")), 2);
	assert_string_equal(json_string_value(json_object_get(r, "recommended_value")), "1");
	json_decref(b);
	json_decref(r);

	/* used wins over what the setter was given: 1 set, 3 used */
	b = spin_advice(json_pack("{s:{s:i,s:i,s:{s:i}}}", "context", "n_threads", 1, "n_threads_batch", 1,
				  "n_threads_used", "generation", 3), 5.0, &r);
	assert_non_null(b);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "evidence"), "n_threads_used")), 3);
	json_decref(b);
	json_decref(r);

	/* 1 thread used on 2 CPUs, no waits: no thread advice */
	b = spin_advice(json_pack("{s:{s:{s:i,s:i}}}", "context", "n_threads_used", "prompt", 1, "generation", 1), 5.0,
			&r);
	assert_null(b);
	assert_null(r);

	/* nothing observed and no waits: no count to reason from, no advice */
	b = spin_advice(json_pack("{s:{s:i}}", "context", "n_ctx", 512), 5.0, &r);
	assert_null(b);
	assert_null(r);
}

/* Rules need derived figures: a model still collecting is refused. */
/* Loads p, lets add() put stacks into the model (profile.json carries
 * none), evaluates, and puts the findings back into p. */
static void evaluate_with(json_t *p, const struct rule_thresholds *t, void (*add)(struct model *))
{
	struct model m;
	json_t *out;

	assert_int_equal(model__from_json(&m, p, "test"), 0);
	add(&m);
	assert_int_equal(rules__evaluate(&m, t), 0);
	out = model__to_json(&m);
	json_object_set(p, "bottlenecks", json_object_get(out, "bottlenecks"));
	json_object_set(p, "recommendations", json_object_get(out, "recommendations"));
	json_decref(out);
	model__free(&m);
}

/* cycles of 100 ms in which phase NAME takes ms (one call each) */
static json_t *profile_one_phase(const char *name, double ms, int ncycles, json_t *split)
{
	json_t *p = json_pack("{s:{s:{s:f,s:f,s:i}},s:[],s:[],s:{s:f},s:{},s:[],s:{s:i},s:[],s:{}}", "phases", name,
			      "percent_of_cycle", ms, "total_ms", ms * ncycles, "calls", ncycles, "bottlenecks",
			      "recommendations", "system", "mem_total_mb", 1000.0, "memory", "crashes",
			      "aggregate_metrics", "total_cycles", ncycles, "cycles", "config");

	for (int i = 0; i < ncycles; i++) {
		json_t *ph = json_pack("{s:f,s:i}", "ms", ms, "calls", 1);

		if (split)
			json_object_update(ph, split);
		json_array_append_new(json_object_get(p, "cycles"),
				      json_pack("{s:i,s:f,s:{s:o}}", "index", i, "duration_ms", 100.0, "phases", name, ph));
	}
	json_decref(split);
	return p;
}

/* Every printed recommendation carries evidence numbers. */
static void assert_recs_have_evidence(json_t *p)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(p, "recommendations"), i, r)
		assert_true(json_object_size(json_object_get(r, "evidence")) > 0);
}

/* A phase named `save` blocked 39 of its 45 ms per 100 ms cycle in I/O (the
 * scheduler's split): an io_wait verdict, whatever the name. */
static void test_save_blocked_in_io(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_one_phase("save", 45, 5,
				      json_pack("{s:f,s:f,s:{s:f,s:f}}", "oncpu_ms", 6.0, "offcpu_ms", 39.0, "blocked",
						"io", 39.0, "sleep", 0.0)), *b, *ev;

	(void)state;
	rule_thresholds__defaults(&t);
	evaluate(p, &t);
	b = find(p, "io_wait");
	assert_non_null(b);
	ev = json_object_get(b, "evidence");
	assert_string_equal(json_string_value(json_object_get(ev, "phase")), "save");
	assert_string_equal(json_string_value(json_object_get(ev, "blocked_from")), "scheduler");
	assert_float_equal(json_real_value(json_object_get(ev, "io_percent_of_cycle")), 39, 1e-9);
	assert_float_equal(json_real_value(json_object_get(ev, "offcpu_percent_of_phase")), 100.0 * 39 / 45, 1e-9);
	assert_null(find(p, "database")); /* no SQLite seen */
	assert_recs_have_evidence(p);
	json_decref(p);
}

/* 5 cycles; save blocked 39 ms each under fdatasync, 1 ms asleep */
static void add_save_stacks(struct model *m)
{
	int ph = model__phase_id(m, "save");

	assert_true(ph > 0);
	assert_int_equal(folded__add(&m->offcpu_us_by_phase[ph],
				     "python;save (loop.py);fdatasync;entry_SYSCALL_64_[k];__x64_sys_fdatasync_[k];"
				     "do_fsync_[k];ext4_sync_file_[k];jbd2_log_wait_commit_[k];schedule_[k]",
				     5 * 39000), 0);
	assert_int_equal(folded__add(&m->offcpu_us_by_phase[ph],
				     "python;save (loop.py);clock_nanosleep;__x64_sys_clock_nanosleep_[k];"
				     "hrtimer_nanosleep_[k];do_nanosleep_[k];schedule_[k]", 5 * 1000), 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[ph], "python;save (loop.py);spin (loop.py)", 10), 0);
}

/* The same phase timed from Python observations (no split): its off-CPU
 * stacks give the verdict, and fsync's share gives the advice. */
static void test_save_blocked_from_stacks(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_one_phase("save", 45, 5, NULL), *b, *ev, *r;

	(void)state;
	rule_thresholds__defaults(&t);
	evaluate_with(p, &t, add_save_stacks);
	b = find(p, "io_wait");
	assert_non_null(b);
	ev = json_object_get(b, "evidence");
	assert_string_equal(json_string_value(json_object_get(ev, "blocked_from")), "offcpu_stacks");
	assert_float_equal(json_real_value(json_object_get(ev, "io_ms")), 5 * 39, 1e-9);
	assert_float_equal(json_real_value(json_object_get(ev, "fsync_ms")), 5 * 39, 1e-9);
	assert_float_equal(json_real_value(json_object_get(json_object_get(ev, "blocked_ms"), "sleep")), 5, 1e-9);
	assert_float_equal(json_real_value(json_object_get(ev, "io_percent_of_cycle")), 39, 1e-9);
	r = find_rec(p, "Sync to disk less often");
	assert_non_null(r);
	assert_float_equal(json_real_value(json_object_get(json_object_get(r, "evidence"), "fsync_ms_per_cycle")), 39,
			   1e-9);
	assert_string_equal(json_string_value(json_object_get(r, "current_value")),
			    "save waits 39.0 ms per cycle in fsync/fdatasync");
	assert_recs_have_evidence(p);
	json_decref(p);
}

/* one executemany and one commit per cycle, no query */
static void add_db_stacks(struct model *m)
{
	int ph = model__phase_id(m, "database");

	assert_true(ph > 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[ph],
				     "python;store (db.py);_pysqlite_query_execute;sqlite3_step;sqlite3VdbeExec", 8), 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[ph], "python;store (db.py);PyEval_EvalFrameDefault", 2), 0);
	assert_int_equal(folded__add(&m->offcpu_us_by_phase[ph],
				     "python;store (db.py);pysqlite_connection_commit;sqlite3_step;fdatasync;"
				     "__x64_sys_fdatasync_[k];do_fsync_[k];jbd2_log_wait_commit_[k];schedule_[k]", 5 * 2000),
			 0);
}

/* 20 fsyncs counted per cycle and samples stepping the B-tree */
static void add_db_scan_stacks(struct model *m)
{
	int ph = model__phase_id(m, "writes");

	assert_true(ph > 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[ph], "app;writes;sqlite3_step;sqlite3VdbeExec;sqlite3BtreeNext",
				     6), 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[ph], "app;writes;sqlite3_step;sqlite3VdbeExec", 4), 0);
}

/* A phase named `database` that does one executemany and one commit per
 * cycle and no queries: a database verdict from its SQLite samples, but no
 * batching advice (one commit) and no index advice (no scan). The same
 * advice under any name where the evidence is there. */
static void test_database_advice_from_evidence(void **state)
{
	struct rule_thresholds t;
	json_t *p = profile_one_phase("database", 30, 5,
				      json_pack("{s:f,s:f,s:{s:f}}", "oncpu_ms", 28.0, "offcpu_ms", 2.0, "blocked", "io",
						2.0)), *b, *r;

	(void)state;
	rule_thresholds__defaults(&t);
	evaluate_with(p, &t, add_db_stacks);
	b = find(p, "database");
	assert_non_null(b);
	assert_float_equal(json_real_value(json_object_get(json_object_get(b, "evidence"), "sqlite_percent_of_samples")),
			   80, 1e-9);
	assert_float_equal(json_real_value(json_object_get(json_object_get(b, "evidence"), "fsync_ms_per_cycle")), 2,
			   1e-9);
	assert_null(find_rec(p, "Batch database writes"));
	assert_null(find_rec(p, "Add indexes to the queried columns"));
	assert_null(find(p, "io_wait")); /* 2 of 30 ms blocked */
	assert_int_equal(json_array_size(json_object_get(p, "recommendations")), 0);
	json_decref(p);

	/* `writes`: 20 fdatasyncs counted per cycle, 60% of samples in B-tree steps */
	p = profile_one_phase("writes", 30, 4, NULL);
	json_object_set_new(p, "config", json_pack("{s:{s:s}}", "counts", "syncs", "libc:fdatasync"));
	for (size_t i = 0; i < 4; i++)
		json_object_set_new(json_array_get(json_object_get(p, "cycles"), i), "counts",
				    json_pack("{s:i}", "syncs", 20));
	evaluate_with(p, &t, add_db_scan_stacks);
	assert_non_null(find(p, "database"));
	r = find_rec(p, "Batch database writes");
	assert_non_null(r);
	assert_float_equal(json_real_value(json_object_get(json_object_get(r, "evidence"), "fsyncs_per_cycle")), 20,
			   1e-9);
	assert_string_equal(json_string_value(json_object_get(r, "current_value")), "20.0 fsyncs per cycle in writes");
	r = find_rec(p, "Add indexes to the queried columns");
	assert_non_null(r);
	assert_float_equal(json_real_value(json_object_get(json_object_get(r, "evidence"), "scan_percent_of_samples")),
			   60, 1e-9);
	assert_recs_have_evidence(p);
	json_decref(p);
}

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
		cmocka_unit_test(test_advice_from_evidence),
		cmocka_unit_test(test_contention_over_cycles),
		cmocka_unit_test(test_joules_per_generated_token),
		cmocka_unit_test(test_spin_oversubscribed),
		cmocka_unit_test(test_spin_threads_used),
		cmocka_unit_test(test_save_blocked_in_io),
		cmocka_unit_test(test_save_blocked_from_stacks),
		cmocka_unit_test(test_database_advice_from_evidence),
		cmocka_unit_test(test_rules_refuse_unfinished_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
