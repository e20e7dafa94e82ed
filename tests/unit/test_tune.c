// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace tune`'s logic on inputs whose figures are known by
 * construction: the two-level bootstrap, the warm-up rule and the cycles
 * measured, the metric of a cycle, the table's medians, intervals, changes
 * and verdicts, the choice ("no significant difference" where the
 * intervals overlap), the platform check, --from's mapping of advice to a
 * runner's options, and the command line. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bootstrap.h"
#include "model.h"
#include "settings_json.h"
#include "tune.h"
#include "tune_from.h"
#include "tune_options.h"
#include "tune_run.h"
#include "tune_stats.h"

static const struct boot_stat MEDIAN = { true, 50 };

/* n values alternating mid - d and mid + d: median mid */
static void alternate(double *v, size_t n, double mid, double d)
{
	for (size_t i = 0; i < n; i++)
		v[i] = mid + (i % 2 ? d : -d);
}

/* ---- the bootstrap ---- */

/* Three runs of 10 cycles at 100, 101 and 102 ms (+-0.1): the spread is
 * between the runs. Drawing runs first gives an interval that reaches
 * from one run's level to another's; drawing only cycles, as if all 30
 * were independent, gives a narrower one around 101. */
static void test_groups_hold_the_spread_between_runs(void **state)
{
	double x[30], glo, ghi, flo, fhi;
	size_t ends[3] = { 10, 20, 30 };
	struct boot_sample grouped = { .x = x, .n = 30, .group_end = ends, .ngroups = 3 };
	struct boot_sample flat = { .x = x, .n = 30 };

	(void)state;
	for (int r = 0; r < 3; r++)
		alternate(x + 10 * r, 10, 100 + r, 0.1);
	assert_float_equal(bootstrap__estimate(&grouped, MEDIAN), 101.0, 0.1);
	assert_true(bootstrap__interval(&grouped, MEDIAN, 95, 2000, 1, &glo, &ghi));
	assert_true(bootstrap__interval(&flat, MEDIAN, 95, 2000, 1, &flo, &fhi));
	assert_true(glo <= 100.1 && ghi >= 101.9);
	assert_true(fhi - flo < ghi - glo);
	/* the same seed, the same interval */
	assert_true(bootstrap__interval(&grouped, MEDIAN, 95, 2000, 1, &flo, &fhi));
	assert_true(flo == glo && fhi == ghi);
}

/* A median needs BOOT_TAIL_MIN cycles on each side: 10 in all */
static void test_median_needs_ten_cycles(void **state)
{
	double x[10], lo, hi;
	struct boot_sample s = { .x = x, .n = 9 };

	(void)state;
	alternate(x, 10, 50, 1);
	assert_false(bootstrap__interval(&s, MEDIAN, 95, 500, 1, &lo, &hi));
	assert_true(isnan(lo) && isnan(hi));
	s.n = 10;
	assert_true(bootstrap__interval(&s, MEDIAN, 95, 500, 1, &lo, &hi));
	assert_true(lo >= 49 && hi <= 51);
}

/* ---- warm-up and the cycles measured ---- */

static void test_warmup_rule(void **state)
{
	static const size_t n[] = { 0, 1, 2, 9, 10, 19, 20, 35, 100 };
	static const size_t w[] = { 0, 0, 1, 1, 1, 1, 2, 3, 10 };

	(void)state;
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		assert_int_equal(tune__warmup(n[i]), w[i]);
}

/* A model of n cycles of duration ms[i], the last open_at_end when asked;
 * cycle i's tokens_per_second is 1000/ms[i] * tokens when tokens > 0. */
static void load_cycles(struct model *m, const double *ms, size_t n, bool last_open, int tokens, json_t *recs)
{
	json_t *p = json_pack("{s:s,s:[],s:{},s:{s:i,s:s}}", "schema_version", "1.0", "cycles", "phases", "system",
			      "cpus", 2, "hostname", "h");

	for (size_t i = 0; i < n; i++) {
		json_t *c = json_pack("{s:I,s:f,s:{s:{s:f,s:i}}}", "index", (json_int_t)i, "duration_ms", ms[i], "phases",
				      "infer", "ms", ms[i] / 2, "calls", 1);

		if (tokens > 0)
			json_object_set_new(c, "tokens_per_second", json_real(1000.0 * tokens / ms[i]));
		if (last_open && i + 1 == n)
			json_object_set_new(c, "open_at_end", json_true());
		json_array_append_new(json_object_get(p, "cycles"), c);
	}
	json_object_set_new(json_object_get(p, "phases"), "infer", json_pack("{s:f,s:i}", "total_ms", 1.0, "calls", 1));
	if (recs)
		json_object_set_new(p, "recommendations", recs);
	assert_int_equal(model__from_json(m, p, "test"), 0);
	json_decref(p);
}

static void test_measured_cycles(void **state)
{
	double ms[25];
	struct model m;
	size_t *idx, n, left;

	(void)state;
	for (int i = 0; i < 25; i++)
		ms[i] = 10 + i;
	/* 25 cycles, the last open: 24 complete, 2 of warm-up, 22 measured */
	load_cycles(&m, ms, 25, true, 0, NULL);
	n = tune__measured(&m, -1, 0, &idx, &left);
	assert_int_equal(left, 2);
	assert_int_equal(n, 22);
	assert_int_equal(idx[0], 2);
	assert_int_equal(idx[21], 23);
	free(idx);
	/* --warmup 5 --cycles 4: cycles 5..8 */
	n = tune__measured(&m, 5, 4, &idx, &left);
	assert_int_equal(left, 5);
	assert_int_equal(n, 4);
	assert_int_equal(idx[0], 5);
	assert_int_equal(idx[3], 8);
	free(idx);
	model__free(&m);
}

static void test_metric_of_a_cycle(void **state)
{
	double ms[3] = { 20, 40, 80 }, x;
	struct tune_metric mt;
	struct model m;
	char err[160];

	(void)state;
	load_cycles(&m, ms, 3, false, 10, NULL);
	tune_metric__default(&m, &mt);
	assert_string_equal(mt.name, "tokens_per_s");
	assert_true(mt.higher_is_better);
	assert_true(tune_metric__cycle(&m, &mt, &m.cycles[1], &x));
	assert_float_equal(x, 250.0, 1e-9); /* 10 tokens in 40 ms */
	assert_int_equal(tune_metric__parse("phase:infer", &mt, err, sizeof(err)), 0);
	assert_false(mt.higher_is_better);
	assert_true(tune_metric__cycle(&m, &mt, &m.cycles[2], &x));
	assert_float_equal(x, 40.0, 1e-9);
	assert_int_equal(tune_metric__parse("phase:nothere", &mt, err, sizeof(err)), 0);
	assert_false(tune_metric__cycle(&m, &mt, &m.cycles[0], &x));
	/* no energy measured: no joules per token */
	assert_int_equal(tune_metric__parse("joules_per_token", &mt, err, sizeof(err)), 0);
	assert_false(tune_metric__cycle(&m, &mt, &m.cycles[0], &x));
	assert_int_equal(tune_metric__parse("speed", &mt, err, sizeof(err)), -EINVAL);
	model__free(&m);
	/* without tokens the default is the cycle time */
	load_cycles(&m, ms, 3, false, 0, NULL);
	tune_metric__default(&m, &mt);
	assert_string_equal(mt.name, "cycle_ms");
	model__free(&m);
}

/* ---- the table ---- */

/* A row of R runs of n cycles each alternating around mid by d */
static void fill_row(struct tune_row *r, int runs, size_t n, double mid, double d)
{
	double x[64];

	memset(r, 0, sizeof(*r));
	for (int k = 0; k < runs; k++) {
		alternate(x, n, mid, d);
		assert_int_equal(tune_row__add_run(r, x, NULL, n), 0);
	}
	tune_row__figures(r);
}

static void test_rows_verdicts_and_choice(void **state)
{
	struct tune_row rows[3];
	bool sig;

	(void)state;
	/* cycle time: 100 ms at the baseline, 50 ms, 200 ms; 2 runs of 12 */
	fill_row(&rows[0], 2, 12, 100, 1);
	fill_row(&rows[1], 2, 12, 50, 1);
	fill_row(&rows[2], 2, 12, 200, 1);
	assert_float_equal(rows[1].median, 50.0, 1e-9);
	assert_true(rows[1].lo >= 49 && rows[1].hi <= 51);
	tune_rows__compare(rows, 3, 0, false);
	assert_int_equal(rows[0].verdict, TUNE_V_BASELINE);
	assert_int_equal(rows[1].verdict, TUNE_V_BETTER);
	assert_int_equal(rows[2].verdict, TUNE_V_WORSE);
	assert_float_equal(rows[1].change_pct, -50.0, 1e-9);
	assert_true(rows[1].change_lo >= -52 && rows[1].change_hi <= -48);
	assert_float_equal(rows[2].change_pct, 100.0, 1e-9);
	assert_int_equal(tune_rows__best(rows, 3, false), 1);
	assert_int_equal(tune_rows__choose(rows, 3, 0, false, &sig), 1);
	assert_true(sig);
	/* the same figures as tokens/s: higher is better, 200 wins */
	tune_rows__compare(rows, 3, 0, true);
	assert_int_equal(rows[1].verdict, TUNE_V_WORSE);
	assert_int_equal(tune_rows__choose(rows, 3, 0, true, &sig), 2);
	assert_true(sig);
	for (int i = 0; i < 3; i++)
		tune_row__free(&rows[i]);
}

/* Two identical settings: overlapping intervals, no significant
 * difference, the baseline kept whatever the medians' order. */
static void test_identical_settings_differ_not(void **state)
{
	struct tune_row rows[2];
	bool sig;

	(void)state;
	fill_row(&rows[0], 2, 12, 100, 3);
	fill_row(&rows[1], 2, 12, 100, 3);
	rows[1].x[0] -= 0.5; /* a hair faster: the best, not the choice */
	tune_row__figures(&rows[1]);
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_SAME);
	assert_true(tune_row__overlap(&rows[0], &rows[1]));
	assert_int_equal(tune_rows__choose(rows, 2, 0, false, &sig), 0);
	assert_false(sig);
	for (int i = 0; i < 2; i++)
		tune_row__free(&rows[i]);
}

/* Two runs each whose cycles are alike but whose runs drifted: the
 * bootstrap's intervals lie apart (the runs' 104, 105 against 100, 101),
 * yet the runs differ by 4 where their spread (s = 0.71, 2 degrees of
 * freedom) asks for 7.0 at the 1% level: no significant difference. A
 * difference of 50 is one. */
static void test_run_drift_is_no_difference(void **state)
{
	struct tune_row rows[2];
	double x[12];
	bool sig;

	(void)state;
	memset(rows, 0, sizeof(rows));
	for (int k = 0; k < 2; k++) {
		alternate(x, 12, 104 + k, 0.1);
		assert_int_equal(tune_row__add_run(&rows[0], x, NULL, 12), 0);
		alternate(x, 12, 100 + k, 0.1);
		assert_int_equal(tune_row__add_run(&rows[1], x, NULL, 12), 0);
	}
	tune_row__figures(&rows[0]);
	tune_row__figures(&rows[1]);
	assert_false(tune_row__overlap(&rows[0], &rows[1]));
	assert_false(tune_rows__runs_differ(&rows[0], &rows[1]));
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_SAME);
	assert_int_equal(tune_rows__choose(rows, 2, 0, false, &sig), 0);
	assert_false(sig);
	tune_row__free(&rows[1]);
	memset(&rows[1], 0, sizeof(rows[1]));
	for (int k = 0; k < 2; k++) {
		alternate(x, 12, 50 + k, 0.1);
		assert_int_equal(tune_row__add_run(&rows[1], x, NULL, 12), 0);
	}
	tune_row__figures(&rows[1]);
	assert_true(tune_rows__runs_differ(&rows[0], &rows[1]));
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_BETTER);
	assert_int_equal(tune_rows__choose(rows, 2, 0, false, &sig), 1);
	assert_true(sig);
	for (int i = 0; i < 2; i++)
		tune_row__free(&rows[i]);
}

/* A cycle's own time: its time less the wait behind other processes, the
 * larger of the main thread's and the cycle's share of all its threads'. */
static void test_own_time_of_a_cycle(void **state)
{
	struct model_cycle c;
	struct tune_metric mt;
	char err[160];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.duration_ms = 30;
	c.split.present = true;
	c.split.oncpu_ms = 20;
	c.split.runq_ms = 10;
	c.split.runq_others_ms = 10;
	c.has_all_threads = true;
	c.all_oncpu_ms = 20;
	c.all_runq_ms = 10;
	c.all_runq_others_ms = 10;
	assert_int_equal(tune_metric__parse("cycle_ms", &mt, err, sizeof(err)), 0);
	assert_float_equal(tune_metric__own(&mt, &c, -1, 30), 20.0, 1e-9); /* one thread: 30 - 10 */
	/* four threads: the main thread 2 ms behind others, all of them 18 of
	 * their 90 ms (on 50, queued 30, blocked 10): a fifth of the cycle, 6 ms */
	c.split.runq_others_ms = 2;
	c.all_oncpu_ms = 50;
	c.all_runq_ms = 30;
	c.all_offcpu_ms = 10;
	c.all_runq_others_ms = 18;
	assert_float_equal(tune_metric__own(&mt, &c, -1, 30), 24.0, 1e-9);
	/* a rate over the cycle: 30/24 as high without the wait */
	assert_int_equal(tune_metric__parse("tokens_per_s", &mt, err, sizeof(err)), 0);
	assert_float_equal(tune_metric__own(&mt, &c, -1, 100), 125.0, 1e-9);
	/* joules are no time: as they are */
	assert_int_equal(tune_metric__parse("joules_per_token", &mt, err, sizeof(err)), 0);
	assert_float_equal(tune_metric__own(&mt, &c, -1, 0.5), 0.5, 1e-9);
	/* no wait behind others: the value itself */
	memset(&c, 0, sizeof(c));
	c.duration_ms = 30;
	assert_int_equal(tune_metric__parse("cycle_ms", &mt, err, sizeof(err)), 0);
	assert_float_equal(tune_metric__own(&mt, &c, -1, 30), 30.0, 1e-9);
}

/* R runs of 12 cycles each at mid +- 0.1, each of which waited `others`
 * ms behind other processes (own = value - others) */
static void fill_own_row(struct tune_row *r, int runs, double mid, double others)
{
	double x[12], own[12];

	memset(r, 0, sizeof(*r));
	for (int k = 0; k < runs; k++) {
		alternate(x, 12, mid + 0.2 * k, 0.1);
		for (int i = 0; i < 12; i++)
			own[i] = x[i] - others;
		assert_int_equal(tune_row__add_run(r, x, own, 12), 0);
	}
	tune_row__figures(r);
}

/* Two settings alike in their own time, one of whose runs waited 10 ms a
 * cycle behind other processes (a CPU hog on the CPU they ran on): the
 * values differ (30 against 20 ms) but the verdict is withheld and the
 * baseline kept, whichever side waited. A real difference of 10 ms with
 * the same 5 ms wait on both sides keeps its verdict. */
static void test_wait_behind_others_withholds_verdict(void **state)
{
	struct tune_row rows[2];
	bool sig;

	(void)state;
	fill_own_row(&rows[0], 2, 20, 0);
	fill_own_row(&rows[1], 2, 30, 10);
	assert_false(tune_row__overlap(&rows[0], &rows[1]));
	assert_true(tune_rows__runs_differ(&rows[0], &rows[1]));
	assert_false(tune_rows__own_differ(&rows[1], &rows[0], false));
	assert_float_equal(rows[1].own_median, 20.0, 0.15);
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_WITHHELD);
	assert_string_equal(tune_verdict__name(rows[1].verdict), "withheld: wait behind other processes");
	assert_int_equal(tune_rows__choose(rows, 2, 0, false, &sig), 0);
	assert_false(sig);
	/* the baseline the one that waited: the other looks better, is not chosen */
	tune_rows__compare(rows, 2, 1, false);
	assert_int_equal(rows[0].verdict, TUNE_V_WITHHELD);
	assert_int_equal(tune_rows__choose(rows, 2, 1, false, &sig), 1);
	assert_false(sig);
	tune_row__free(&rows[0]);
	tune_row__free(&rows[1]);
	/* 25 against 35 ms, 5 ms behind others on each side: 20 against 30 of their own */
	fill_own_row(&rows[0], 2, 25, 5);
	fill_own_row(&rows[1], 2, 35, 5);
	assert_true(tune_rows__own_differ(&rows[1], &rows[0], false));
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_WORSE);
	tune_rows__compare(rows, 2, 1, false);
	assert_int_equal(rows[0].verdict, TUNE_V_BETTER);
	assert_int_equal(tune_rows__choose(rows, 2, 1, false, &sig), 0);
	assert_true(sig);
	tune_row__free(&rows[0]);
	tune_row__free(&rows[1]);
}

/* 4 cycles per setting: no interval, no verdict, the baseline kept */
static void test_too_few_cycles_no_verdict(void **state)
{
	struct tune_row rows[2];
	bool sig;

	(void)state;
	fill_row(&rows[0], 1, 4, 100, 1);
	fill_row(&rows[1], 1, 4, 50, 1);
	assert_true(isnan(rows[0].lo));
	tune_rows__compare(rows, 2, 0, false);
	assert_int_equal(rows[1].verdict, TUNE_V_NO_INTERVAL);
	assert_float_equal(rows[1].change_pct, -50.0, 1e-9);
	assert_int_equal(tune_rows__choose(rows, 2, 0, false, &sig), 0);
	assert_false(sig);
	for (int i = 0; i < 2; i++)
		tune_row__free(&rows[i]);
}

/* ---- the whole result: table and settings.json ---- */

static void result_of(struct tune_result *t, struct tune_opts *o, const double *mids, int n, double d)
{
	char err[128];
	int value[TUNE_MAX_PARAMS] = { 0 };

	memset(o, 0, sizeof(*o));
	o->runs = 2;
	o->warmup = -1;
	assert_int_equal(tune_opts__add_param(o, "threads=1,2,4,8", err, sizeof(err)), 0);
	memset(t, 0, sizeof(*t));
	t->opts = o;
	t->best = -1;
	snprintf(t->as[0], sizeof(t->as[0]), "--threads");
	tune_metric__parse("cycle_ms", &t->metric, err, sizeof(err));
	t->have_metric = true;
	for (int i = 0; i < n; i++) {
		int si;
		struct tune_row r;

		value[0] = i;
		si = tune_result__setting(t, value);
		assert_int_equal(si, i);
		fill_row(&r, 2, 12, mids[i], d);
		t->settings[si].row = r;
		t->settings[si].runs = calloc(3, sizeof(char *));
		assert_non_null(t->settings[si].runs);
		t->settings[si].runs[0] = strdup("s/run1");
		t->settings[si].runs[1] = strdup("s/run2");
		t->settings[si].nruns = 2;
		t->settings[si].ev.runs = 2;
	}
	t->runs_planned = t->runs_done = (size_t)n * 2;
	t->complete = true;
}

static char *table_of(const struct tune_result *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	tune__print_table(f, t);
	fclose(f);
	return buf;
}

static void test_table_names_the_choice(void **state)
{
	static const double mids[4] = { 100, 50, 70, 400 };
	struct tune_result t;
	struct tune_opts o;
	json_t *doc, *platform, *sys;
	char *text;

	(void)state;
	result_of(&t, &o, mids, 4, 1);
	tune_result__conclude(&t, false);
	assert_int_equal(t.best, 1);
	assert_int_equal(t.chosen, 1);
	assert_true(t.significant);
	text = table_of(&t);
	if (getenv("TEST_TUNE_SHOW"))
		fputs(text, stderr);
	assert_non_null(strstr(text, "threads=2"));
	assert_non_null(strstr(text, "better, best, chosen"));
	assert_non_null(strstr(text, "chosen: threads=2: cycle_ms 50.0 against 100.0 at the baseline threads=1: -50.0%"));
	assert_null(strstr(text, "nan"));
	free(text);
	sys = json_pack("{s:s,s:i}", "arch", "x86_64", "cpus", 2);
	platform = settings__platform(sys, NULL);
	json_decref(sys);
	doc = settings__json(&t, platform, true);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(doc, "chosen"), "values"),
							    "--threads")), 2);
	assert_true(json_is_true(json_object_get(doc, "significant")));
	assert_float_equal(json_real_value(json_object_get(json_object_get(doc, "margin"), "percent")), -50.0, 1e-9);
	assert_int_equal(json_array_size(json_object_get(doc, "settings")), 4);
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "evidence"), "versus")), "threads=2");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(doc, "settings"), 3),
							      "verdict")), "worse");
	json_decref(doc);
	json_decref(platform);
	tune_result__free(&t);
	tune_opts__free(&o);
}

static void test_table_no_significant_difference(void **state)
{
	static const double mids[2] = { 100, 99.5 };
	struct tune_result t;
	struct tune_opts o;
	char *text;

	(void)state;
	result_of(&t, &o, mids, 2, 5);
	tune_result__conclude(&t, false);
	assert_int_equal(t.best, 1);
	assert_int_equal(t.chosen, 0);
	assert_false(t.significant);
	text = table_of(&t);
	assert_non_null(strstr(text, "no significant difference: the best, threads=2"));
	assert_non_null(strstr(text, "keeping the baseline"));
	assert_non_null(strstr(text, "evidence, baseline threads=1 -> best threads=2: "));
	free(text);
	tune_result__free(&t);
	tune_opts__free(&o);
}

/* The baseline best: kept, and the evidence held against the next best */
static void test_table_baseline_best(void **state)
{
	static const double mids[3] = { 50, 100, 70 };
	struct tune_result t;
	struct tune_opts o;
	char *text;

	(void)state;
	result_of(&t, &o, mids, 3, 1);
	tune_result__conclude(&t, false);
	assert_int_equal(t.best, 0);
	assert_int_equal(t.chosen, 0);
	assert_int_equal(t.versus, 2);
	assert_false(t.significant);
	text = table_of(&t);
	assert_non_null(strstr(text, "the baseline threads=1 is the best setting measured; keeping it"));
	assert_non_null(strstr(text, "evidence, baseline threads=1 -> next best threads=4: "));
	free(text);
	tune_result__free(&t);
	tune_opts__free(&o);
}

/* ---- the platform ---- */

static void test_platform_check(void **state)
{
	json_t *xs = json_pack("{s:s,s:s,s:i,s:s}", "cpu_model", "Intel(R) Xeon(R) CPU @ 2.20GHz", "arch", "x86_64",
			       "cpus", 2, "hostname", "box7");
	json_t *os = json_pack("{s:s,s:s,s:i,s:{s:{s:i,s:s,s:s}}}", "machine_model", "NVIDIA Jetson AGX Orin Developer Kit",
			       "arch", "aarch64", "cpus", 12, "power", "nvpmodel", "id", 0, "name", "MAXN", "source",
			       "nvpmodel -q");
	json_t *og = json_pack("{s:[{s:s}]}", "devices", "name", "Orin (nvgpu)");
	json_t *x86 = settings__platform(xs, NULL), *orin = settings__platform(os, og);
	char why[512];

	(void)state;
	assert_false(settings__platform_is(x86, "jetson_orin", why, sizeof(why)));
	assert_non_null(strstr(why, "Intel(R) Xeon(R) CPU @ 2.20GHz (x86_64, 2 CPUs)"));
	assert_true(settings__platform_is(x86, "x86_64", why, sizeof(why)));
	assert_true(settings__platform_is(x86, "Xeon", why, sizeof(why)));
	assert_true(settings__platform_is(x86, "box7", why, sizeof(why)));
	assert_true(settings__platform_is(orin, "jetson_orin", why, sizeof(why)));
	assert_true(settings__platform_is(orin, "orin-maxn", why, sizeof(why)));
	assert_false(settings__platform_is(orin, "jetson_nano", why, sizeof(why)));
	assert_false(settings__platform_is(orin, "", why, sizeof(why)));
	json_decref(x86);
	json_decref(orin);
	json_decref(xs);
	json_decref(os);
	json_decref(og);
}

/* ---- --from ---- */

static json_t *advice(void)
{
	return json_pack("[{s:s,s:s,s:s,s:s,s:{s:i,s:i}},{s:s,s:s,s:s,s:s,s:{s:f}},{s:s,s:s,s:s,s:s}]",
			 "title", "Run fewer compute threads", "current_value", "8 threads on 4 CPUs; 40% of samples spin",
			 "recommended_value", "3", "bottleneck", "cpu_oversubscribed", "evidence", "n_threads_used", 8,
			 "cpus", 4,
			 "title", "Reduce the context window", "current_value", "n_ctx 4096; at most 120 tokens used",
			 "recommended_value", "n_ctx 256", "bottleneck", "llm_inference", "evidence", "n_ctx", 4096.0,
			 "title", "Quantize the model", "current_value", "F16", "recommended_value",
			 "Q4_K_M (about 16 MB)", "bottleneck", "llm_inference");
}

static void test_from_llama_cli(void **state)
{
	char *argv[] = { "/opt/llama/llama-cli", "-m", "m.gguf", "-t", "8", "-p", "hi", NULL };
	char *envp[] = { "PATH=/bin", NULL };
	struct tune_from_plan plan;
	struct model m;
	double ms[1] = { 1 };

	(void)state;
	load_cycles(&m, ms, 1, false, 0, advice());
	assert_int_equal(tune_from__plan(&m, argv, envp, NULL, &plan), 0);
	assert_string_equal(plan.runner, "llama.cpp");
	assert_int_equal(plan.nprops, 2);
	assert_int_equal(plan.nparams, 2);
	assert_string_equal(plan.params[0], "threads=8,3");
	assert_string_equal(plan.params[1], "ctx=4096,256");
	assert_string_equal(plan.argv[4], "{threads}");
	assert_string_equal(plan.argv[7], "--ctx-size");
	assert_string_equal(plan.argv[8], "{ctx}");
	assert_null(plan.argv[9]);
	assert_int_equal(plan.nskipped, 1);
	assert_non_null(strstr(plan.skipped[0], "Quantize the model"));
	tune_from__free(&plan);
	model__free(&m);
}

static void test_from_llama_server_env(void **state)
{
	char *argv[] = { "llama-server", "-m", "m.gguf", "--ctx-size=4096", NULL };
	char *envp[] = { "LLAMA_ARG_THREADS=6", NULL };
	const char *given[] = { "ctx", NULL };
	struct tune_from_plan plan;
	struct model m;
	double ms[1] = { 1 };

	(void)state;
	load_cycles(&m, ms, 1, false, 0, advice());
	assert_int_equal(tune_from__plan(&m, argv, envp, given, &plan), 0);
	/* ctx given with --param: left as given; threads through the environment */
	assert_int_equal(plan.nparams, 1);
	assert_string_equal(plan.params[0], "threads=8,3");
	assert_int_equal(plan.nenv_set, 1);
	assert_string_equal(plan.env_set[0], "LLAMA_ARG_THREADS={threads}");
	assert_string_equal(plan.argv[3], "--ctx-size=4096");
	tune_from__free(&plan);
	model__free(&m);
}

/* A command tune does not know: the --param lines to fill in, unless
 * {NAME} already names the place or OMP_NUM_THREADS is set. */
static void test_from_unknown_command(void **state)
{
	char *argv[] = { "node", "driver.mjs", "--threads", "8", NULL };
	char *argv2[] = { "node", "driver.mjs", "--threads", "{threads}", NULL };
	char *envp[] = { NULL };
	char *envp2[] = { "OMP_NUM_THREADS=8", NULL };
	struct tune_from_plan plan;
	struct model m;
	double ms[1] = { 1 };

	(void)state;
	load_cycles(&m, ms, 1, false, 0, advice());
	assert_int_equal(tune_from__plan(&m, argv, envp, NULL, &plan), 0);
	assert_null(plan.runner);
	assert_int_equal(plan.nparams, 0);
	assert_int_equal(plan.nunplaced, 2);
	assert_string_equal(plan.unplaced[0], "threads=8,3");
	assert_string_equal(plan.unplaced[1], "ctx=4096,256");
	tune_from__free(&plan);
	assert_int_equal(tune_from__plan(&m, argv2, envp, NULL, &plan), 0);
	assert_int_equal(plan.nparams, 1);
	assert_string_equal(plan.params[0], "threads=8,3");
	assert_int_equal(plan.nunplaced, 1);
	tune_from__free(&plan);
	assert_int_equal(tune_from__plan(&m, argv, envp2, NULL, &plan), 0);
	assert_int_equal(plan.nparams, 1);
	assert_string_equal(plan.env_set[0], "OMP_NUM_THREADS={threads}");
	tune_from__free(&plan);
	model__free(&m);
}

/* ---- the command line and the values put in ---- */

static void test_options_mix_with_record_options(void **state)
{
	char *argv[] = { "infertrace tune", "--param", "t=1,2", "-F", "199", "--runs=3", "--preset", "llama.cpp",
			 "--baseline", "t=2", "-q", "--", "./loop", "-t", "{t}", NULL };
	struct tune_opts o;

	(void)state;
	assert_int_equal(tune_opts__parse(&o, 15, argv), 0);
	assert_int_equal(o.nparams, 1);
	assert_int_equal(o.params[0].nvalues, 2);
	assert_int_equal(o.params[0].baseline, 1);
	assert_int_equal(o.runs, 3);
	assert_true(o.quiet);
	assert_int_equal(o.nrecord_args, 4);
	assert_string_equal(o.record_args[0], "--frequency");
	assert_string_equal(o.record_args[1], "199");
	assert_string_equal(o.record_args[2], "--preset");
	assert_int_equal(o.ncommand, 3);
	assert_string_equal(o.command[0], "./loop");
	tune_opts__free(&o);
}

static void test_values_put_in(void **state)
{
	char *argv[] = { "infertrace tune", "--param", "threads=1,2", "--", "./run", "--threads={threads}", "-x",
			 "{threads}", NULL };
	char *envp[] = { "A=$threads", "B=${threads}x", "C=$threadsx", "D=plain", NULL };
	struct tune_opts o;
	struct tune_values v = { .values = { "4" } };
	char **a, **e, as[64];

	(void)state;
	assert_int_equal(tune_opts__parse(&o, 8, argv), 0);
	a = tune_subst__argv(&o, &v);
	assert_string_equal(a[1], "--threads=4");
	assert_string_equal(a[3], "4");
	e = tune_subst__env(envp, &o, &v);
	assert_string_equal(e[0], "A=4");
	assert_string_equal(e[1], "B=4x");
	assert_string_equal(e[2], "C=$threadsx");
	assert_string_equal(e[3], "D=plain");
	assert_true(tune_subst__where(&o, envp, "threads", as, sizeof(as)));
	assert_string_equal(as, "--threads");
	/* the option glued to its value, an option before it, the environment */
	o.command[1] = "-t{threads}";
	assert_true(tune_subst__where(&o, envp, "threads", as, sizeof(as)));
	assert_string_equal(as, "-t");
	o.command[1] = "x";
	assert_true(tune_subst__where(&o, envp, "threads", as, sizeof(as)));
	assert_string_equal(as, "-x");
	o.command[3] = "y";
	assert_true(tune_subst__where(&o, envp, "threads", as, sizeof(as)));
	assert_string_equal(as, "env A");
	tune_subst__free(a);
	tune_subst__free(e);
	tune_opts__free(&o);
}

static void test_options_refused(void **state)
{
	char *dup[] = { "t", "--param", "a=1,1", "--", "x", NULL };
	char *pid[] = { "t", "--param", "a=1,2", "-p", "1", "--", "x", NULL };
	char *none[] = { "t", "--", "x", NULL };
	char *nocmd[] = { "t", "--param", "a=1,2", NULL };
	struct tune_opts o;

	(void)state;
	assert_int_equal(tune_opts__parse(&o, 5, dup), -EINVAL);
	tune_opts__free(&o);
	assert_int_equal(tune_opts__parse(&o, 7, pid), -EINVAL);
	tune_opts__free(&o);
	assert_int_equal(tune_opts__parse(&o, 3, none), -EINVAL);
	tune_opts__free(&o);
	assert_int_equal(tune_opts__parse(&o, 3, nocmd), -EINVAL);
	tune_opts__free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups_hold_the_spread_between_runs),
		cmocka_unit_test(test_median_needs_ten_cycles),
		cmocka_unit_test(test_warmup_rule),
		cmocka_unit_test(test_measured_cycles),
		cmocka_unit_test(test_metric_of_a_cycle),
		cmocka_unit_test(test_rows_verdicts_and_choice),
		cmocka_unit_test(test_identical_settings_differ_not),
		cmocka_unit_test(test_run_drift_is_no_difference),
		cmocka_unit_test(test_own_time_of_a_cycle),
		cmocka_unit_test(test_wait_behind_others_withholds_verdict),
		cmocka_unit_test(test_too_few_cycles_no_verdict),
		cmocka_unit_test(test_table_names_the_choice),
		cmocka_unit_test(test_table_no_significant_difference),
		cmocka_unit_test(test_table_baseline_best),
		cmocka_unit_test(test_platform_check),
		cmocka_unit_test(test_from_llama_cli),
		cmocka_unit_test(test_from_llama_server_env),
		cmocka_unit_test(test_from_unknown_command),
		cmocka_unit_test(test_options_mix_with_record_options),
		cmocka_unit_test(test_values_put_in),
		cmocka_unit_test(test_options_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
