// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "model.h"
#include "stats.h"
#include "tune_stats.h"
#include "vec.h"

/* ---- the metric ---- */

int tune_metric__parse(const char *s, struct tune_metric *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (!strcmp(s, "tokens_per_s") || !strcmp(s, "tokens/s")) {
		m->kind = TUNE_M_TOKENS_PER_S;
		m->unit = "tokens/s";
		m->higher_is_better = true;
		snprintf(m->name, sizeof(m->name), "tokens_per_s");
	} else if (!strcmp(s, "cycle_ms") || !strcmp(s, "cycle_time")) {
		m->kind = TUNE_M_CYCLE_MS;
		m->unit = "ms";
		snprintf(m->name, sizeof(m->name), "cycle_ms");
	} else if (!strcmp(s, "joules_per_token") || !strcmp(s, "J/token")) {
		m->kind = TUNE_M_J_PER_TOKEN;
		m->unit = "J/token";
		snprintf(m->name, sizeof(m->name), "joules_per_token");
	} else if (!strncmp(s, "phase:", 6) && s[6] && strlen(s + 6) < sizeof(m->phase)) {
		m->kind = TUNE_M_PHASE_MS;
		m->unit = "ms";
		snprintf(m->phase, sizeof(m->phase), "%s", s + 6);
		snprintf(m->name, sizeof(m->name), "phase:%s", m->phase);
	} else {
		snprintf(err, errlen, "invalid --metric '%s': expected tokens_per_s, cycle_ms, joules_per_token or "
			 "phase:NAME", s);
		return -EINVAL;
	}
	return 0;
}

void tune_metric__default(const struct model *m, struct tune_metric *out)
{
	char err[8];

	for (size_t i = 0; i < m->ncycles; i++)
		if (isfinite(m->cycles[i].tokens_per_second)) {
			tune_metric__parse("tokens_per_s", out, err, sizeof(err));
			return;
		}
	tune_metric__parse("cycle_ms", out, err, sizeof(err));
}

bool tune_metric__cycle(const struct model *m, const struct tune_metric *mt, const struct model_cycle *c, double *x)
{
	int ph;

	switch (mt->kind) {
	case TUNE_M_TOKENS_PER_S:
		*x = c->tokens_per_second;
		break;
	case TUNE_M_CYCLE_MS:
		*x = c->duration_ms;
		break;
	case TUNE_M_J_PER_TOKEN:
		/* llama.cpp's generated tokens where it runs, else the tokens count */
		*x = c->llama.present ? c->llama.j_per_generated_token :
		     c->energy.present && c->energy.tokens_per_joule > 0 ? 1.0 / c->energy.tokens_per_joule : NAN;
		break;
	case TUNE_M_PHASE_MS:
		ph = model__phase_id(m, mt->phase);
		if (ph <= 0 || ph >= IT_MAX_PHASES || !c->phases[ph].present)
			return false;
		*x = c->phases[ph].ms;
		break;
	default:
		return false;
	}
	return isfinite(*x);
}

/* The part of `ms` that the threads behind it spent waiting behind other
 * processes, by their split: all their run-queue wait behind others over
 * all their time. */
static double others_share(double ms, double on, double runq, double off, double others)
{
	double t = on + runq + off;

	return t > 0 && isfinite(others) && others > 0 ? ms * others / t : 0;
}

double tune_metric__own(const struct tune_metric *mt, const struct model_cycle *c, int phase, double x)
{
	double wall = c->duration_ms, d = 0, all;
	const struct model_split *s;

	if (!isfinite(x))
		return x;
	switch (mt->kind) {
	case TUNE_M_CYCLE_MS:
	case TUNE_M_TOKENS_PER_S:
		if (c->split.present && isfinite(c->split.runq_others_ms))
			d = c->split.runq_others_ms;
		if (c->has_all_threads) {
			all = others_share(wall, c->all_oncpu_ms, c->all_runq_ms, c->all_offcpu_ms, c->all_runq_others_ms);
			if (all > d)
				d = all;
		}
		break;
	case TUNE_M_PHASE_MS:
		if (phase <= 0 || phase >= IT_MAX_PHASES || !c->phases[phase].present)
			return x;
		s = &c->phases[phase].split;
		wall = c->phases[phase].ms;
		if (s->present)
			d = others_share(wall, s->oncpu_ms, s->runq_ms, s->offcpu_ms, s->runq_others_ms);
		break;
	default:
		return x;
	}
	if (!(d > 0) || !(wall > d))
		return x;
	/* a rate over the cycle's time is that much higher without the wait */
	return mt->kind == TUNE_M_TOKENS_PER_S ? x * wall / (wall - d) : x - d;
}

/* ---- which cycles ---- */

size_t tune__warmup(size_t n)
{
	if (n < 2)
		return 0;
	return n / 10 > 1 ? n / 10 : 1;
}

size_t tune__measured(const struct model *m, int warmup, unsigned int cap, size_t **idx, size_t *left_out)
{
	size_t complete = 0, skip, k = 0, seen = 0;

	*idx = NULL;
	for (size_t i = 0; i < m->ncycles; i++)
		if (!m->cycles[i].open_at_end && !m->cycles[i].abandoned)
			complete++;
	skip = warmup < 0 ? tune__warmup(complete) : (size_t)warmup;
	if (skip > complete)
		skip = complete;
	*left_out = skip;
	*idx = calloc(complete - skip + 1, sizeof(**idx));
	if (!*idx)
		return (size_t)-1;
	for (size_t i = 0; i < m->ncycles && (!cap || k < cap); i++) {
		if (m->cycles[i].open_at_end || m->cycles[i].abandoned)
			continue;
		if (seen++ < skip)
			continue;
		(*idx)[k++] = i;
	}
	return k;
}

/* ---- the evidence ---- */

void tune_evidence__init(struct tune_evidence *e)
{
	memset(e, 0, sizeof(*e));
	e->runq_share_pct = e->oncpu_ms_per_cycle = e->cpus_busy = e->gpu_busy_pct = e->max_temp_c = NAN;
	e->runq_others_ms_per_cycle = NAN;
}

void tune_evidence__add_run(struct tune_evidence *e, const struct model *m, const size_t *idx, size_t n)
{
	e->runs++;
	e->cycles += n;
	for (size_t k = 0; k < n; k++) {
		const struct model_cycle *c = &m->cycles[idx[k]];

		if (c->split.present && isfinite(c->split.runq_others_ms)) {
			e->others_ms += c->split.runq_others_ms;
			e->others_cycles++;
		}
		if (!c->has_all_threads || !isfinite(c->all_oncpu_ms) || !isfinite(c->all_runq_ms))
			continue;
		e->on_ms += c->all_oncpu_ms;
		e->runq_ms += c->all_runq_ms;
		e->wall_ms += c->duration_ms;
		e->split_cycles++;
	}
	/* the GPU's busy share: device 0's average utilisation */
	const struct side_gpu *gpu = &m->side.run.gpu;
	const struct side_thermal *th = &m->side.run.thermal;

	if (gpu->available && gpu->devices.n && isfinite(gpu->devices.v[0].util_pct.avg)) {
		e->gpu_sum += gpu->devices.v[0].util_pct.avg;
		e->gpu_runs++;
	}
	if (th->throttled)
		e->throttled_runs++;
	if (isfinite(th->max_temp_c) && !(e->max_temp_c >= th->max_temp_c))
		e->max_temp_c = th->max_temp_c;
}

void tune_evidence__finish(struct tune_evidence *e)
{
	if (e->split_cycles) {
		e->runq_share_pct = e->on_ms + e->runq_ms > 0 ? 100.0 * e->runq_ms / (e->on_ms + e->runq_ms) : 0;
		e->oncpu_ms_per_cycle = e->on_ms / e->split_cycles;
		e->cpus_busy = e->wall_ms > 0 ? e->on_ms / e->wall_ms : NAN;
	}
	if (e->gpu_runs)
		e->gpu_busy_pct = e->gpu_sum / e->gpu_runs;
	if (e->others_cycles)
		e->runq_others_ms_per_cycle = e->others_ms / e->others_cycles;
}

/* ---- the rows ---- */

const char *tune_verdict__name(enum tune_verdict v)
{
	switch (v) {
	case TUNE_V_BASELINE:
		return "baseline";
	case TUNE_V_BETTER:
		return "better";
	case TUNE_V_WORSE:
		return "worse";
	case TUNE_V_SAME:
		return "no significant difference";
	case TUNE_V_NO_INTERVAL:
		return "no interval";
	case TUNE_V_WITHHELD:
		return "withheld: wait behind other processes";
	default:
		return "not measured";
	}
}

int tune_row__add_run(struct tune_row *r, const double *x, const double *own, size_t n)
{
	if (!n)
		return 0;
	/* room for n more */
	if (VEC_RESERVE(r->x, r->cap, r->n + n - 1, 64) || VEC_RESERVE(r->own, r->capown, r->n + n - 1, 64) ||
	    VEC_RESERVE(r->run_end, r->capruns, r->nruns, 8))
		return -ENOMEM;
	memcpy(r->x + r->n, x, n * sizeof(*x));
	memcpy(r->own + r->n, own ? own : x, n * sizeof(*x));
	r->n += n;
	r->run_end[r->nruns++] = r->n;
	return 0;
}

void tune_row__free(struct tune_row *r)
{
	free(r->x);
	free(r->own);
	free(r->run_end);
	memset(r, 0, sizeof(*r));
}

static const struct boot_stat median = { true, 50 };

static struct boot_sample sample_of(const struct tune_row *r)
{
	return (struct boot_sample){ .x = r->x, .n = r->n, .group_end = r->run_end, .ngroups = r->nruns };
}

void tune_row__figures(struct tune_row *r)
{
	struct boot_sample s = sample_of(r);

	r->median = bootstrap__estimate(&s, median);
	if (!bootstrap__interval(&s, median, TUNE_LEVEL_PCT, TUNE_BOOT_REPS, TUNE_BOOT_SEED, &r->lo, &r->hi))
		r->lo = r->hi = NAN;
	r->own_median = r->own_lo = r->own_hi = NAN;
	if (r->own) {
		s.x = r->own;
		r->own_median = bootstrap__estimate(&s, median);
		if (!bootstrap__interval(&s, median, TUNE_LEVEL_PCT, TUNE_BOOT_REPS, TUNE_BOOT_SEED, &r->own_lo,
					 &r->own_hi))
			r->own_lo = r->own_hi = NAN;
	}
	r->change_pct = r->change_lo = r->change_hi = NAN;
	r->verdict = r->n ? TUNE_V_NO_INTERVAL : TUNE_V_NONE;
}

/* Two-sided 99% points of Student's t for 1..30 degrees of freedom; above,
 * those of 30, 40, 60 and 120 for the brackets they begin: the larger, so
 * the test errs towards "no difference". */
static double t_995(size_t df)
{
	static const double t[] = { 63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
				    3.106,  3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
				    2.831,  2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750 };

	if (df >= 1 && df <= 30)
		return t[df - 1];
	return df <= 40 ? 2.750 : df <= 60 ? 2.704 : df <= 120 ? 2.660 : 2.617;
}

/* The median of run j's values; NAN when it has none. */
static double run_median(const struct tune_row *r, size_t j)
{
	size_t from = j ? r->run_end[j - 1] : 0, n = r->run_end[j] - from;
	double *v = n ? malloc(n * sizeof(*v)) : NULL, med;

	if (!v)
		return NAN;
	memcpy(v, r->x + from, n * sizeof(*v));
	med = stats__percentile(v, n, 50);
	free(v);
	return med;
}

/* Sum of squares of r's run medians about their mean, and that mean;
 * NAN without memory. */
static double run_spread(const struct tune_row *r, double *mean)
{
	double *med = malloc(r->nruns * sizeof(*med)), ss = 0;

	*mean = NAN;
	if (!med)
		return NAN;
	for (size_t j = 0; j < r->nruns; j++)
		med[j] = run_median(r, j);
	*mean = stats__mean(med, r->nruns);
	for (size_t j = 0; j < r->nruns; j++)
		ss += (med[j] - *mean) * (med[j] - *mean);
	free(med);
	return ss;
}

bool tune_rows__runs_differ(const struct tune_row *a, const struct tune_row *b)
{
	size_t df = (a->nruns ? a->nruns - 1 : 0) + (b->nruns ? b->nruns - 1 : 0);
	double ma, mb, s2;

	if (!a->nruns || !b->nruns)
		return false;
	if (!df)
		return true; /* one run each: no run-to-run spread to test against */
	s2 = (run_spread(a, &ma) + run_spread(b, &mb)) / (double)df;
	if (!isfinite(s2) || !isfinite(ma) || !isfinite(mb))
		return false;
	return fabs(ma - mb) > t_995(df) * sqrt(s2 * (1.0 / (double)a->nruns + 1.0 / (double)b->nruns));
}

bool tune_row__overlap(const struct tune_row *a, const struct tune_row *b)
{
	if (!isfinite(a->lo) || !isfinite(a->hi) || !isfinite(b->lo) || !isfinite(b->hi))
		return false;
	return a->lo <= b->hi && b->lo <= a->hi;
}

static bool better(double a, double b, bool higher)
{
	return higher ? a > b : a < b;
}

/* r with its own values in place of its values */
static struct tune_row own_view(const struct tune_row *r)
{
	struct tune_row v = *r;

	v.x = r->own;
	v.median = r->own_median;
	v.lo = r->own_lo;
	v.hi = r->own_hi;
	return v;
}

bool tune_rows__own_differ(const struct tune_row *a, const struct tune_row *b, bool higher)
{
	struct tune_row oa, ob;

	if (!a->own || !b->own)
		return true; /* no own values: nothing to take out */
	oa = own_view(a);
	ob = own_view(b);
	return isfinite(oa.lo) && isfinite(ob.lo) && !tune_row__overlap(&oa, &ob) && tune_rows__runs_differ(&oa, &ob) &&
	       better(oa.median, ob.median, higher) == better(a->median, b->median, higher);
}

void tune_rows__compare(struct tune_row *rows, size_t n, size_t base, bool higher)
{
	const struct tune_row *b = &rows[base];
	struct boot_sample bs = sample_of(b);

	for (size_t i = 0; i < n; i++) {
		struct tune_row *r = &rows[i];
		struct boot_sample rs = sample_of(r);

		r->change_pct = r->change_lo = r->change_hi = NAN;
		if (!r->n) {
			r->verdict = TUNE_V_NONE;
			continue;
		}
		if (i == base) {
			r->verdict = TUNE_V_BASELINE;
			continue;
		}
		if (b->median > 0 && isfinite(r->median))
			r->change_pct = 100.0 * (r->median - b->median) / b->median;
		bootstrap__change(&bs, &rs, median, TUNE_LEVEL_PCT, TUNE_BOOT_REPS, TUNE_BOOT_SEED, &r->change_lo,
				  &r->change_hi);
		if (!isfinite(r->lo) || !isfinite(b->lo))
			r->verdict = TUNE_V_NO_INTERVAL;
		else if (tune_row__overlap(r, b) || !tune_rows__runs_differ(r, b))
			r->verdict = TUNE_V_SAME;
		else if (!tune_rows__own_differ(r, b, higher))
			r->verdict = TUNE_V_WITHHELD;
		else
			r->verdict = better(r->median, b->median, higher) ? TUNE_V_BETTER : TUNE_V_WORSE;
	}
}

int tune_rows__best(const struct tune_row *rows, size_t n, bool higher)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (rows[i].n && isfinite(rows[i].median) && (best < 0 || better(rows[i].median, rows[best].median, higher)))
			best = (int)i;
	return best;
}

size_t tune_rows__choose(const struct tune_row *rows, size_t n, size_t base, bool higher, bool *significant)
{
	int best = tune_rows__best(rows, n, higher);

	*significant = false;
	if (best < 0 || (size_t)best == base || !isfinite(rows[best].lo) || !isfinite(rows[base].lo) ||
	    tune_row__overlap(&rows[best], &rows[base]) || !tune_rows__runs_differ(&rows[best], &rows[base]) ||
	    !tune_rows__own_differ(&rows[best], &rows[base], higher))
		return base;
	*significant = true;
	return (size_t)best;
}

/* ---- the whole tune ---- */

static bool same_values(const int *a, const int *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

int tune_result__setting(struct tune_result *t, const int *value)
{
	const struct tune_opts *o = t->opts;
	struct tune_setting *s;
	char *label = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < t->nsettings; i++)
		if (same_values(t->settings[i].value, value, o->nparams))
			return (int)i;
	if (vec__reserve((void **)&t->settings, &t->capsettings, t->nsettings, sizeof(*t->settings), 8))
		return -1;
	f = open_memstream(&label, &len);
	if (!f)
		return -1;
	for (int p = 0; p < o->nparams; p++)
		fprintf(f, "%s%s=%s", p ? " " : "", o->params[p].name, o->params[p].values[value[p]]);
	if (fclose(f))
		return -1;
	s = &t->settings[t->nsettings];
	memset(s, 0, sizeof(*s));
	memcpy(s->value, value, sizeof(s->value));
	s->label = label;
	tune_evidence__init(&s->ev);
	return (int)t->nsettings++;
}

void tune_result__conclude(struct tune_result *t, bool one_at_a_time)
{
	size_t n = t->nsettings;
	struct tune_row *rows = calloc(n ? n : 1, sizeof(*rows));

	if (!rows)
		return;
	for (size_t i = 0; i < n; i++) {
		tune_row__figures(&t->settings[i].row);
		tune_evidence__finish(&t->settings[i].ev);
	}
	/* the rows side by side (they share their values with the settings'),
	 * compared, and their figures put back */
	for (size_t i = 0; i < n; i++)
		rows[i] = t->settings[i].row;
	if (n)
		tune_rows__compare(rows, n, t->base, t->metric.higher_is_better);
	for (size_t i = 0; i < n; i++)
		t->settings[i].row = rows[i];
	t->best = n ? tune_rows__best(rows, n, t->metric.higher_is_better) : -1;
	t->versus = t->best;
	if (t->best == (int)t->base) {
		/* the baseline is best: what the runner-up did differently */
		struct tune_row kept = rows[t->base];

		rows[t->base].n = 0;
		t->versus = tune_rows__best(rows, n, t->metric.higher_is_better);
		rows[t->base] = kept;
	}
	if (!n) {
		t->significant = false;
	} else if (one_at_a_time) {
		const struct tune_row *c = &rows[t->chosen], *b = &rows[t->base];

		t->significant = t->chosen != t->base && isfinite(c->lo) && isfinite(b->lo) && !tune_row__overlap(c, b) &&
				 tune_rows__runs_differ(c, b) &&
				 tune_rows__own_differ(c, b, t->metric.higher_is_better);
		if (!t->significant)
			t->chosen = t->base;
	} else {
		t->chosen = tune_rows__choose(rows, n, t->base, t->metric.higher_is_better, &t->significant);
	}
	free(rows);
}

void tune_result__free(struct tune_result *t)
{
	for (size_t i = 0; i < t->nsettings; i++) {
		struct tune_setting *s = &t->settings[i];

		free(s->label);
		free(s->dir);
		for (size_t k = 0; k < s->nruns; k++)
			free(s->runs[k]);
		free(s->runs);
		for (size_t k = 0; k < s->nleft; k++)
			free(s->left[k]);
		free(s->left);
		tune_row__free(&s->row);
	}
	free(t->settings);
	json_decref(t->system);
	json_decref(t->gpu);
	memset(t, 0, sizeof(*t));
}
