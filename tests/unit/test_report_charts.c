// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: report.html's charts on a model whose figures are known by
 * construction: 6 cycles of 10 ms (llm_inference 6 ms, a phase named
 * `<b>x</b>` 3 ms, 1 ms in no phase) but cycle 4, 40 ms (inference 36):
 * the tail. Phase splits are set by hand; the side readings hold a
 * temperature and two CPU clocks, no GPU, no power and no RSS. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config_file.h"
#include "model.h"
#include "test_helpers.h"
#include "report_charts.h"
#include "vec.h"

#define MS 1000000ull
#define INFER 1
#define ODD 2
#define PID 100
#define NCYCLES 6
#define TAIL_CYCLE 4

static const char odd_name[] = "<b>x</b>";

static double infer_ms(uint32_t i)
{
	return i == TAIL_CYCLE ? 36 : 6;
}

static void add_cycle(struct model *m, uint32_t i, uint64_t start)
{
	double dur = infer_ms(i) + 3 + 1;
	struct model_cycle *c = model__add_cycle(m, PID, i, start, start + (uint64_t)llround(dur * 1e6));

	assert_non_null(c);
	c->phases[INFER] = (struct model_cycle_phase){ .present = true, .ms = infer_ms(i), .thread_ms = infer_ms(i),
						      .calls = 1 };
	c->phases[INFER].split = (struct model_split){ .present = true, .oncpu_ms = infer_ms(i) - 1, .runq_ms = 1 };
	c->phases[ODD] = (struct model_cycle_phase){ .present = true, .ms = 3, .thread_ms = 3, .calls = 1 };
	c->phases[ODD].split = (struct model_split){ .present = true, .oncpu_ms = 0.5, .offcpu_ms = 2.5 };
	c->phases[ODD].split.blocked_ms[BLOCKED_SLEEP] = 2.5;
	c->split = (struct model_split){ .present = true, .oncpu_ms = dur - 3.5, .runq_ms = 1, .offcpu_ms = 2.5 };
}

/* The side readings: rows at 0.5 s, 1.5 s, 2.5 s after the start and one
 * baseline before it; temperature (1 zone), cpu clock (2 CPUs). */
static void add_side(struct model *m)
{
	struct side_series *s = &m->side.series;
	static const char *const cols[][2] = { { "temperature (C)", "zone0" }, { "cpu clock (MHz)", "cpu0" },
					       { "cpu clock (MHz)", "cpu1" } };
	static const double v[4][3] = { { 40, 800, 900 }, { 41, 1000, 1100 }, { 45, 1200, 1300 }, { 50, 1400, NAN } };

	for (size_t c = 0; c < 3; c++) {
		assert_int_equal(VEC_RESERVE(s->cols.v, s->cols.cap, s->cols.n, 4), 0);
		snprintf(s->cols.v[c].series, sizeof(s->cols.v[c].series), "%s", cols[c][0]);
		snprintf(s->cols.v[c].name, sizeof(s->cols.v[c].name), "%s", cols[c][1]);
		s->cols.n++;
	}
	s->nrows = 4;
	s->ts = calloc(s->nrows, sizeof(*s->ts));
	s->v = calloc(s->nrows * 3, sizeof(*s->v));
	assert_non_null(s->ts);
	assert_non_null(s->v);
	s->ts[0] = m->run.start_ns - 100 * MS; /* a baseline */
	for (size_t r = 1; r < s->nrows; r++)
		s->ts[r] = m->run.start_ns + (r - 1) * 1000 * MS + 500 * MS;
	memcpy(s->v, v, sizeof(v));
	m->side.run.thermal.present = true;
	snprintf(m->side.run.gpu.unavailable_reason, sizeof(m->side.run.gpu.unavailable_reason),
		 "NVML not available");
}

static void build(struct model *m, uint32_t ncycles)
{
	model__init(m);
	m->run.config = json_pack("{s:i}", "frequency", 1000);
	assert_int_equal(config_file__asked(m->run.config, m), 0);
	m->run.start_ns = 1000 * MS;
	assert_int_equal(model__set_phase_name(m, INFER, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, ODD, odd_name), 0);
	assert_non_null(model__add_process(m, PID));
	m->cycles_source = "cycle";
	for (uint32_t i = 0; i < ncycles; i++)
		add_cycle(m, i, 1000 * MS + 100 * MS + i * 50 * MS);
	m->run.end_ns = 1000 * MS + 100 * MS + ncycles * 50 * MS + 3000 * MS;
	m->run.duration_s = (double)(m->run.end_ns - m->run.start_ns) / 1e9;
	add_side(m);
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
	assert_int_equal(model__derive(m), 0);
}

static char *charts(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	report_charts__write(f, m);
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	return buf;
}

/* The next element at or after *at whose start is `prefix`; *at moves
 * past it. NULL when none is left. */
static const char *next_elem(const char **at, const char *prefix)
{
	const char *e = strstr(*at, prefix);

	if (e)
		*at = e + strlen(prefix);
	return e;
}

/* Attribute key's value in the element starting at e, as a number; NAN
 * when the element has none. */
static double attr(const char *e, const char *key)
{
	char pat[64];
	const char *end = strchr(e, '>'), *a;

	snprintf(pat, sizeof(pat), " %s=\"", key);
	a = strstr(e, pat);
	return a && a < end ? strtod(a + strlen(pat), NULL) : NAN;
}

/* The element's attribute key as text (in buf). */
static const char *attr_text(const char *e, const char *key, char *buf, size_t len)
{
	char pat[64];
	const char *end = strchr(e, '>'), *a, *q;

	snprintf(pat, sizeof(pat), " %s=\"", key);
	a = strstr(e, pat);
	buf[0] = 0;
	if (a && a < end && (q = strchr(a + strlen(pat), '"')))
		snprintf(buf, len, "%.*s", (int)(q - a - strlen(pat)), a + strlen(pat));
	return buf;
}

/* The next cycle bar: class "cycle" or "cycle tail" (not "cycle-span"). */
static const char *next_cycle_bar(const char **at)
{
	const char *e;

	while ((e = next_elem(at, "<rect class=\"cycle")) && **at == '-')
		;
	return e;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *at = s; next_elem(&at, what);)
		n++;
	return n;
}

static void test_cycle_bars(void **state)
{
	struct model m;
	char *out;
	const char *at, *e;
	size_t n = 0;

	(void)state;
	build(&m, NCYCLES);
	assert_int_equal(m.tail.n, 1);
	assert_int_equal(m.tail.v[0].cycle, TAIL_CYCLE);
	out = charts(&m);
	assert_non_null(strstr(out, "role=\"img\""));
	assert_non_null(strstr(out, "One bar per cycle (6)"));
	/* one outline per cycle, its data-ms the cycle's; only the tail's is class tail */
	at = out;
	while ((e = next_cycle_bar(&at))) {
		bool tail = !strncmp(e, "<rect class=\"cycle tail\"", 24);
		double cycle = attr(e, "data-cycle");

		assert_true(n < m.ncycles);
		assert_near(cycle, m.cycles[n].index, 0);
		assert_near(attr(e, "data-ms"), m.cycles[n].duration_ms, 0.0005);
		assert_int_equal(tail, m.cycles[n].index == TAIL_CYCLE);
		n++;
	}
	assert_int_equal(n, NCYCLES);
	assert_int_equal(count(out, "class=\"cycle tail\""), 1);
	/* the phase segments: their heights in proportion to their ms, one
	 * scale for every cycle; the rest of each cycle 1 ms */
	double scale = NAN;
	size_t segs = 0;

	at = out;
	while ((e = next_elem(&at, "<rect class=\"seg\""))) {
		char phase[64];
		int c = (int)attr(e, "data-cycle");
		double ms = attr(e, "data-ms");

		attr_text(e, "data-phase", phase, sizeof(phase));
		assert_near(ms, !strcmp(phase, "llm_inference") ? infer_ms((uint32_t)c) : 3, 0.0005);
		if (isnan(scale))
			scale = attr(e, "height") / ms;
		assert_near(attr(e, "height") / ms, scale, 0.01);
		segs++;
	}
	assert_int_equal(segs, 2 * NCYCLES);
	at = out;
	while ((e = next_elem(&at, "<rect class=\"rest\"")))
		assert_near(attr(e, "data-ms"), 1, 0.0005);
	assert_int_equal(count(out, "<rect class=\"rest\""), NCYCLES);
	free(out);
	model__free(&m);
}

static void test_phase_split_and_histogram(void **state)
{
	struct model m;
	char *out, part[16];
	const char *at, *e;
	size_t n = 0;
	uint64_t in_bins = 0;

	(void)state;
	build(&m, NCYCLES);
	out = charts(&m);
	/* llm_inference: on-CPU 5 x 5 + 35, run queue 6 x 1; the odd phase
	 * 6 x 0.5 on the CPU and 6 x 2.5 blocked */
	static const struct {
		const char *phase, *part;
		double ms;
	} want[] = {
		{ "llm_inference", "oncpu", 60 }, { "llm_inference", "runq", 6 }, { "llm_inference", "blocked", 0 },
		{ "&lt;b&gt;x&lt;/b&gt;", "oncpu", 3 }, { "&lt;b&gt;x&lt;/b&gt;", "runq", 0 },
		{ "&lt;b&gt;x&lt;/b&gt;", "blocked", 15 },
	};
	at = out;
	while ((e = next_elem(&at, "<rect class=\"part\""))) {
		char phase[64];

		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(attr_text(e, "data-phase", phase, sizeof(phase)), want[n].phase);
		assert_string_equal(attr_text(e, "data-part", part, sizeof(part)), want[n].part);
		assert_near(attr(e, "data-ms"), want[n].ms, 0.0005);
		n++;
	}
	assert_int_equal(n, 6);
	/* llm_inference's histogram: 5 cycles at 6 ms in the first bin, 1 at 36 in the last */
	at = out;
	while ((e = next_elem(&at, "<rect class=\"bin\" "))) {
		char phase[64];

		if (strcmp(attr_text(e, "data-phase", phase, sizeof(phase)), "llm_inference"))
			continue;
		in_bins += (uint64_t)attr(e, "data-count");
		assert_true(attr(e, "data-lo") == 6 || attr(e, "data-hi") == 36);
	}
	assert_int_equal(in_bins, NCYCLES);
	/* the odd phase: all 3 ms, one bin */
	assert_non_null(strstr(out, "data-phase=\"&lt;b&gt;x&lt;/b&gt;\" data-lo=\"3.000\" data-hi=\"3.000\" "
				    "data-count=\"6\""));
	free(out);
	model__free(&m);
}

static void test_side_series_and_not_measured(void **state)
{
	struct model m;
	char *out;
	const char *at, *e;
	size_t lines = 0;

	(void)state;
	build(&m, NCYCLES);
	out = charts(&m);
	/* temperature: 3 readings from the start (the baseline left out) */
	assert_non_null(strstr(out, "data-series=\"temperature (C)\" data-channel=\"zone0\" data-points=\"3\" "
				    "data-min=\"41.000\" data-max=\"50.000\""));
	assert_non_null(strstr(out, "data-channel=\"cpu1\" data-points=\"2\" data-min=\"1100.000\" "
				    "data-max=\"1300.000\""));
	at = out;
	while ((e = next_elem(&at, "<polyline class=\"series\"")))
		lines++;
	assert_int_equal(lines, 3);
	/* each time chart shades the cycles, one band each */
	assert_int_equal(count(out, "<rect class=\"cycle-span\""), 2 * NCYCLES);
	at = strstr(out, "<rect class=\"cycle-span\"");
	assert_near(attr(at, "data-start-s"), 0.1, 0.0005);
	assert_near(attr(at, "data-end-s"), 0.11, 0.0005);
	/* nothing measured GPU, power or RSS: one line, and no chart */
	e = strstr(out, "<p class=\"not-measured\">not measured: ");
	assert_non_null(e);
	assert_non_null(strstr(e, "RSS"));
	assert_non_null(strstr(e, "power"));
	assert_non_null(strstr(e, "GPU (NVML not available)"));
	assert_null(strstr(e, "temperature"));
	assert_null(strstr(out, "data-series=\"gpu"));
	assert_null(strstr(out, "data-series=\"RSS"));
	assert_null(strstr(out, "RSS (MB)"));
	free(out);
	model__free(&m);
}

static void test_names_escaped(void **state)
{
	struct model m;
	char *out;

	(void)state;
	build(&m, NCYCLES);
	out = charts(&m);
	assert_null(strstr(out, odd_name));
	assert_null(strstr(out, "<b>"));
	assert_non_null(strstr(out, "<h4 style=\"margin:6px 0\">&lt;b&gt;x&lt;/b&gt;</h4>"));
	assert_non_null(strstr(out, "<title>&lt;b&gt;x&lt;/b&gt;: "));
	free(out);
	model__free(&m);
}

/* Beyond REPORT_CHARTS_MAX_BARS cycles: one bar per group, its mean. */
static void test_many_cycles_grouped(void **state)
{
	struct model m;
	char *out;
	const char *at, *e;
	size_t bars = 0, group = 3, n = 1300;

	(void)state;
	build(&m, (uint32_t)n);
	out = charts(&m);
	assert_non_null(strstr(out, "1300 cycles, one bar per 3 consecutive cycles (their mean)"));
	at = out;
	while ((e = next_cycle_bar(&at))) {
		size_t first = bars * group, k = first + group < n ? group : n - first;
		double mean = 0;

		for (size_t i = first; i < first + k; i++)
			mean += m.cycles[i].duration_ms / (double)k;
		assert_near(attr(e, "data-ms"), mean, 0.0005);
		assert_near(attr(e, "data-cycle"), (double)first, 0);
		bars++;
	}
	assert_int_equal(bars, (n + group - 1) / group);
	assert_true(bars <= REPORT_CHARTS_MAX_BARS);
	/* the group holding cycle 4 is marked */
	assert_non_null(strstr(out, "<rect class=\"cycle tail\""));
	free(out);
	model__free(&m);
}

/* No cycles and nothing over time: no section at all. */
static void test_empty_model_writes_nothing(void **state)
{
	struct model m;
	char *out;

	(void)state;
	model__init(&m);
	out = charts(&m);
	assert_string_equal(out, "");
	free(out);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cycle_bars),
		cmocka_unit_test(test_phase_split_and_histogram),
		cmocka_unit_test(test_side_series_and_not_measured),
		cmocka_unit_test(test_names_escaped),
		cmocka_unit_test(test_many_cycles_grouped),
		cmocka_unit_test(test_empty_model_writes_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
