// SPDX-License-Identifier: BSD-2-Clause
/* The recording model without BPF: filled from a synthetic event sequence
 * whose figures are known by construction, then derived, analysed and
 * written; a snapshot taken half-way holds the figures of the events seen so
 * far; and every step refuses a model that is not at its stage. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model.h"
#include "outputs.h"
#include "rules.h"

#define MS 1000000ull
#define INFER 1
#define DB 2
#define TOKENS 1

/* Cycle i of pid 100: 100 ms long, inference 60 + i ms (one call), database
 * 20 ms (two calls of 10), 8 tokens; on-CPU samples in both phases. */
static void add_cycle(struct model *m, int i)
{
	uint64_t start = 1000 * MS + i * 100 * MS;
	struct model_cycle *c = model__add_cycle(m, 100, i, start, start + 100 * MS);
	struct model_phase_call call = { .tgid = 100, .tid = 100, .bpf_cycle = i, .phase = INFER,
					 .entry_ns = start, .exit_ns = start + (60 + i) * MS };

	assert_non_null(c);
	c->phases[INFER] = (struct model_cycle_phase){ .present = true, .ms = 60 + i, .thread_ms = 60 + i, .calls = 1 };
	c->phases[DB] = (struct model_cycle_phase){ .present = true, .ms = 20, .thread_ms = 20, .calls = 2 };
	c->has_count[TOKENS] = true;
	c->counts[TOKENS] = 8;
	c->samples = 10;
	c->has_rss = true;
	c->rss_peak_mb = c->rss_end_mb = 100 + 2.0 * i; /* grows 2 MB per cycle */
	assert_int_equal(model__add_call_ms(m, INFER, 60 + i), 0);
	assert_int_equal(model__add_call_ms(m, DB, 10), 0);
	assert_int_equal(model__add_call_ms(m, DB, 10), 0);
	assert_int_equal(model__add_phase_call(m, &call), 0);
	assert_int_equal(folded__add(&m->oncpu, "exp;main;run_cycle;infer", 6), 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[INFER], "exp;main;run_cycle;infer", 6), 0);
	assert_int_equal(folded__add(&m->oncpu, "exp;main;run_cycle;db_write", 4), 0);
	assert_int_equal(folded__add(&m->oncpu_by_phase[DB], "exp;main;run_cycle;db_write", 4), 0);
}

static void start(struct model *m)
{
	char *argv[] = { "exp", "--cycles", "5", NULL };
	struct model_process *p;

	model__init(m);
	assert_int_equal(model__set_command(m, argv), 0);
	m->run.start_ns = 1000 * MS;
	m->run.start_wall_s = 1.7e9;
	m->run.system = (struct model_system){ .present = true, .kernel = "6.1", .cpus = 2, .mem_total_mb = 1000.0,
					       .hostname = "test" };
	power_mode__init(&m->run.system.power);
	m->run.config = json_object();
	assert_int_equal(model__set_phase_name(m, INFER, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, DB, "database"), 0);
	assert_int_equal(model__set_count_name(m, TOKENS, "tokens"), 0);
	p = model__add_process(m, 100);
	assert_non_null(p);
	p->root = true;
	strcpy(p->comm, "exp");
	m->run.pids = calloc(1, sizeof(pid_t));
	m->run.pids[m->run.npids++] = 100;
	m->cycles_source = "cycle";
	m->memory.available = true;
	m->memory.peak_mb = 110;
}

/* The collect/derive/analyse steps the recording runs, on a copy. */
static void finish(struct model *m, uint64_t end_ns)
{
	struct rule_thresholds t;

	m->run.end_ns = end_ns;
	m->run.duration_s = (end_ns - m->run.start_ns) / 1e9;
	m->run.stop_reason = strdup("target exited");
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
	assert_int_equal(model__derive(m), 0);
	rule_thresholds__defaults(&t);
	assert_int_equal(rules__evaluate(m, &t), 0);
	assert_int_equal(m->stage, MODEL_ANALYSED);
}

static const struct model_finding *finding(const struct model *m, const char *type)
{
	for (size_t i = 0; i < m->nfindings; i++)
		if (!strcmp(m->findings[i].type, type))
			return &m->findings[i];
	return NULL;
}

static void test_replay_aggregates_and_findings(void **state)
{
	struct model m;

	(void)state;
	start(&m);
	for (int i = 0; i < 5; i++)
		add_cycle(&m, i);
	finish(&m, 1600 * MS);
	assert_int_equal(m.agg.total_cycles, 5);
	assert_float_equal(m.agg.avg_cycle_ms, 100, 1e-9);
	/* inference 60..64 ms: 310 of 500 ms; database 100 of 500 */
	assert_float_equal(m.phases[INFER].total_ms, 310, 1e-9);
	assert_float_equal(m.phases[INFER].percent_of_cycle, 62, 1e-9);
	assert_int_equal(m.phases[DB].calls, 10);
	assert_float_equal(m.phases[DB].percent_of_cycle, 20, 1e-9);
	assert_float_equal(m.phases[INFER].p50_ms, 62, 1e-9);
	assert_string_equal(m.phases[INFER].percentiles_from, "calls");
	/* tokens/s over the inference phase of cycle 0: 8 / 0.060 s */
	assert_float_equal(m.cycles[0].tokens_per_second, 8 / 0.060, 1e-6);
	assert_float_equal(m.cycles[0].tokens_per_second_wall, 80, 1e-9);
	assert_float_equal(m.memory.growth_mb_per_cycle, 2, 1e-9);
	/* inference 62% > 60, RSS +2 MB/cycle > 1; database 20% > 15 but its
	 * stacks show no database work (db_write only): no verdict by name */
	assert_non_null(finding(&m, "llm_inference"));
	assert_null(finding(&m, "database"));
	assert_non_null(finding(&m, "memory_leak"));
	assert_null(finding(&m, "mode_overhead"));
	assert_null(finding(&m, "cpu_contention"));
	/* the evidence names the phase's hottest function, from the model's stacks */
	const struct model_evidence *ev = &finding(&m, "llm_inference")->evidence;
	assert_true(ev->top_functions.n > 0);
	assert_string_equal(model__name(&m, ev->top_functions.v[0].name), "infer");
	model__free(&m);
}

/* A snapshot taken after three cycles has the figures of three cycles; the
 * recording goes on to five, unaffected. */
static void test_snapshot_midway(void **state)
{
	struct model live, snap;

	(void)state;
	start(&live);
	for (int i = 0; i < 3; i++)
		add_cycle(&live, i);
	assert_int_equal(model__copy(&snap, &live), 0);
	finish(&snap, 1300 * MS);
	assert_int_equal(snap.agg.total_cycles, 3);
	assert_float_equal(snap.phases[INFER].total_ms, 60 + 61 + 62, 1e-9);
	assert_float_equal(snap.phases[INFER].p50_ms, 61, 1e-9);
	assert_int_equal(snap.oncpu.n, 6); /* 3 cycles x 2 stacks, not yet merged */
	for (int i = 3; i < 5; i++)
		add_cycle(&live, i);
	assert_int_equal(live.stage, MODEL_EMPTY);
	finish(&live, 1600 * MS);
	assert_int_equal(live.agg.total_cycles, 5);
	assert_int_equal(snap.agg.total_cycles, 3);
	model__free(&snap);
	model__free(&live);
}

/* Writers and derived figures refuse a model that is not at their stage. */
static void test_stages_enforced(void **state)
{
	struct model m;
	char dir[] = "/tmp/it-model-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	start(&m);
	add_cycle(&m, 0);
	assert_int_equal(outputs__write_all(&m, dir), -EINVAL);
	assert_null(model__to_json(&m));
	assert_int_equal(model__derive(&m), -EINVAL);        /* not collected */
	assert_int_equal(model__advance(&m, MODEL_COLLECTED, "test"), -EINVAL); /* skips spans */
	assert_int_equal(model__advance(&m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(&m, MODEL_COLLECTED, "test"), 0);
	assert_null(model__to_json(&m));                      /* derived, not analysed */
	assert_int_equal(access(dir, F_OK), 0);
	rmdir(dir);
	model__free(&m);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Every writer's output, from the model alone: profile.json round-trips
 * through model__from_json to the same figures. */
static void add_sample(struct model *m, uint64_t ts, const char *leaf)
{
	struct model_trace_sample s = { .ts_ns = ts, .tgid = 100, .tid = 100, .frame = model__intern(m, leaf) };

	assert_int_equal(model__add_trace_sample(m, &s), 0);
}

/* {startup, teardown} as profile.json shows them. */
static json_t *edges_json(const struct model *m)
{
	return json_pack("{s:o,s:o}", "startup", model__section_json(m, "startup"), "teardown",
			 model__section_json(m, "teardown"));
}

/* Start-up (before the first cycle) and tear-down (after the last) apart:
 * their own wall time, samples and top leaves; start-up's scheduler split;
 * the same after a profile.json round trip. */
static void test_startup_teardown(void **state)
{
	struct model m, back;
	json_t *p, *st, *td, *top;

	(void)state;
	start(&m);
	m.run.start_ns = 900 * MS; /* 100 ms before the first cycle */
	for (int i = 0; i < 5; i++)
		add_cycle(&m, i);
	for (int i = 0; i < 3; i++)
		add_sample(&m, 950 * MS + i, "load_model");
	add_sample(&m, 960 * MS, "dlopen");
	add_sample(&m, 1050 * MS, "infer");      /* in cycle 0: neither */
	add_sample(&m, 1500 * MS, "free_all");   /* the last cycle's end: tear-down */
	add_sample(&m, 1550 * MS, "free_all");
	m.sched.has_startup = true;
	m.sched.startup_oncpu_ms = 40;
	m.sched.startup_runq_ms = 60;
	finish(&m, 1600 * MS);
	st = model__section_json(&m, "startup"); /* as profile.json shows them */
	td = model__section_json(&m, "teardown");
	assert_float_equal(json_real_value(json_object_get(st, "ms")), 100, 1e-9);
	assert_int_equal(json_integer_value(json_object_get(st, "samples")), 4);
	top = json_array_get(json_object_get(st, "top_functions"), 0);
	assert_string_equal(json_string_value(json_object_get(top, "name")), "load_model");
	assert_float_equal(json_real_value(json_object_get(top, "percent")), 75, 1e-9);
	assert_int_equal(json_array_size(json_object_get(st, "top_functions")), 2);
	assert_float_equal(json_real_value(json_object_get(st, "runq_share_percent")), 60, 1e-9);
	assert_float_equal(json_real_value(json_object_get(td, "ms")), 100, 1e-9);
	assert_int_equal(json_integer_value(json_object_get(td, "samples")), 2);
	assert_null(json_object_get(td, "runq_wait_ms"));
	p = model__to_json(&m);
	assert_non_null(p);
	assert_int_equal(model__from_json(&back, p, "test"), 0);
	json_decref(st);
	json_decref(td);
	st = edges_json(&m);
	td = edges_json(&back);
	assert_true(json_equal(td, st));
	json_decref(st);
	json_decref(td);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}

static void test_writers_and_round_trip(void **state)
{
	struct model m, back;
	char dir[] = "/tmp/it-model-XXXXXX", path[256];
	json_t *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	start(&m);
	for (int i = 0; i < 5; i++)
		add_cycle(&m, i);
	m.have_oncpu = true;
	finish(&m, 1600 * MS);
	assert_int_equal(outputs__write_all(&m, dir), 0);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	assert_int_equal(count_lines(path), 2); /* the two distinct stacks, merged */
	snprintf(path, sizeof(path), "%s/stacks.database.folded", dir);
	assert_int_equal(count_lines(path), 1);
	snprintf(path, sizeof(path), "%s/profile.json", dir);
	p = json_load_file(path, 0, NULL);
	assert_non_null(p);
	assert_int_equal(json_array_size(json_object_get(p, "cycles")), 5);
	assert_int_equal(model__from_json(&back, p, path), 0);
	assert_int_equal(back.ncycles, 5);
	assert_float_equal(back.agg.avg_cycle_ms, 100, 1e-9);
	assert_float_equal(back.phases[model__phase_id(&back, "llm_inference")].total_ms, 310, 1e-9);
	assert_int_equal(back.nfindings, m.nfindings);
	assert_float_equal(back.memory.growth_mb_per_cycle, 2, 1e-9);
	model__free(&back);
	json_decref(p);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	p = json_load_file(path, 0, NULL);
	assert_non_null(p); /* valid JSON, with 5 cycle slices and 5 phase slices */
	{
		json_t *ev;
		size_t i, cycles = 0, phases = 0;

		json_array_foreach(json_object_get(p, "traceEvents"), i, ev) {
			const char *cat = json_string_value(json_object_get(ev, "cat"));

			cycles += cat && !strcmp(cat, "cycle");
			phases += cat && !strcmp(cat, "phase");
		}
		assert_int_equal(cycles, 5);
		assert_int_equal(phases, 5);
	}
	json_decref(p);
	model__free(&m);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_aggregates_and_findings),
		cmocka_unit_test(test_snapshot_midway),
		cmocka_unit_test(test_stages_enforced),
		cmocka_unit_test(test_writers_and_round_trip),
		cmocka_unit_test(test_startup_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
