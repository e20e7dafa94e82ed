// SPDX-License-Identifier: BSD-2-Clause
/* Derived figures: plain functions of a collected model. Cycle durations
 * and tokens/s, phase summaries (totals, share of the cycles, percentiles),
 * the aggregates, RSS growth across cycles and the probes' share of each
 * phase. Nothing here reads BPF, files or another concern's state. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "stats.h"
#include "tail.h"

/* The phase whose time tokens/s is measured against: `llm_inference`, else
 * the first phase whose name contains "inference"; 0 = the whole cycle. */
static int inference_phase(const struct model *m)
{
	int id = model__phase_id(m, "llm_inference");

	if (id > 0)
		return id;
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (m->phase_names[i] && strstr(m->phase_names[i], "inference"))
			return i;
	return 0;
}

static void derive_cycle(const struct model *m, struct model_cycle *c, uint32_t index)
{
	int tok = model__count_id(m, "tokens"), inf = m->inference_phase;

	c->index = index;
	c->duration_ms = c->end_ns > c->start_ns ? (c->end_ns - c->start_ns) / 1e6 : 0;
	c->tokens_per_second = c->tokens_per_second_wall = NAN;
	if (tok > 0 && c->has_count[tok]) {
		double base_ms = inf ? (c->phases[inf].present ? c->phases[inf].ms : -1) : c->duration_ms;

		c->tokens_per_second = base_ms > 0 ? c->counts[tok] / (base_ms / 1000.0) : NAN;
		/* the experiment's view: tokens over the whole cycle */
		c->tokens_per_second_wall = c->duration_ms > 0 ? c->counts[tok] / (c->duration_ms / 1000.0) : NAN;
	}
}

static void derive_phase(struct model *m, int ph, double cycles_ms)
{
	struct model_phase_summary *s = &m->phases[ph];

	memset(s, 0, sizeof(*s));
	s->present = m->phase_names[ph] != NULL;
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle_phase *p = &m->cycles[i].phases[ph];

		if (!p->present)
			continue;
		s->total_ms += p->ms;
		s->thread_ms += p->thread_ms;
		s->calls += p->calls;
	}
	s->percent_of_cycle = cycles_ms > 0 ? 100.0 * s->total_ms / cycles_ms : 0;
	memcpy(s->hist_us, m->phase_hist_us[ph], sizeof(s->hist_us));
	s->outside_thread_ms = m->phase_outside_thread_ms[ph];
	s->outside_calls = m->phase_outside_calls[ph];
	s->samples = m->phase_samples[ph];
	if (m->ncall_ms[ph]) {
		s->p50_ms = stats__percentile(m->call_ms[ph], m->ncall_ms[ph], 50);
		s->p95_ms = stats__percentile(m->call_ms[ph], m->ncall_ms[ph], 95);
		s->p99_ms = stats__percentile(m->call_ms[ph], m->ncall_ms[ph], 99);
		s->percentiles_from = "calls";
	} else if (!s->calls) {
		s->p50_ms = s->p95_ms = s->p99_ms = NAN;
		s->percentiles_from = NULL;
	} else {
		/* events lost: estimate from the log2 histogram (µs) */
		s->p50_ms = stats__log2_hist_percentile(s->hist_us, IT_HIST_SLOTS, 50) / 1000;
		s->p95_ms = stats__log2_hist_percentile(s->hist_us, IT_HIST_SLOTS, 95) / 1000;
		s->p99_ms = stats__log2_hist_percentile(s->hist_us, IT_HIST_SLOTS, 99) / 1000;
		s->percentiles_from = "histogram";
	}
}

/* The steepest RSS growth per cycle among the processes, from each cycle's
 * RSS at its end; NAN when no process has two cycles with RSS. */
static double rss_growth(const struct model *m)
{
	double best = NAN, *ys = calloc(m->ncycles + 1, sizeof(double));

	if (!ys)
		return NAN;
	for (size_t pi = 0; pi < m->nprocs; pi++) {
		size_t ny = 0;

		for (size_t i = 0; i < m->ncycles; i++)
			if (m->cycles[i].pid == m->procs[pi].pid && m->cycles[i].has_rss)
				ys[ny++] = m->cycles[i].rss_end_mb;
		if (ny >= 2) {
			double s = stats__slope(ys, ny);

			if (isnan(best) || s > best)
				best = s;
		}
	}
	free(ys);
	return best;
}

static json_t *estimate(double hits, double cost_ns, double base_ms, double *max_pct)
{
	double ms = hits * cost_ns / 1e6, pct = base_ms > 0 ? 100.0 * ms / base_ms : 0;

	if (pct > *max_pct)
		*max_pct = pct;
	return json_pack("{s:f,s:f,s:f}", "hits", hits, "estimated_ms", ms, "percent", pct);
}

/* A preset must not hurt what it measures: each of its probes' hits times
 * the cost per hit, as a share of its phase (issue 11: at most 2%). */
#define PRESET_PROBE_MAX_PERCENT 2.0

static json_t *preset_probe_costs(const struct model *m, double cost)
{
	json_t *out = json_array(), *p;
	size_t i;

	json_array_foreach(model__section(m, MODEL_SEC_PROBES), i, p) {
		const char *phase = json_string_value(json_object_get(p, "phase"));
		double hits = json_number_value(json_object_get(p, "hits")), phase_ms = 0, ms, pct;

		if (!json_is_true(json_object_get(p, "from_preset")) || !phase || !json_array_size(json_object_get(p, "placed_in")))
			continue;
		for (int ph = 1; ph < IT_MAX_PHASES; ph++)
			if (m->phases[ph].present && m->phase_names[ph] && !strcmp(m->phase_names[ph], phase))
				phase_ms = m->phases[ph].total_ms;
		ms = hits * cost / 1e6;
		pct = phase_ms > 0 ? 100.0 * ms / phase_ms : 0;
		json_array_append_new(out, json_pack("{s:O,s:s,s:f,s:f,s:f,s:b}", "spec", json_object_get(p, "spec"),
						     "phase", phase, "hits", hits, "estimated_ms", ms,
						     "percent_of_phase", pct, "over_limit", pct > PRESET_PROBE_MAX_PERCENT));
	}
	return out;
}

void model__warn_preset_probes(const struct model *m)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(model__section(m, MODEL_SEC_PROBES_OVERHEAD), "preset_probes"), i, v)
		if (json_is_true(json_object_get(v, "over_limit")))
			fprintf(stderr, "infertrace: warning: preset probe %s costs ~%.1f%% of phase %s (%.0f hits, over "
				"a preset's 2%%); its phase times are inflated\n", json_string_value(json_object_get(v, "spec")),
				json_number_value(json_object_get(v, "percent_of_phase")),
				json_string_value(json_object_get(v, "phase")), json_number_value(json_object_get(v, "hits")));
}

/* profile.json's `probes_overhead`: a phase's own entry and return probes
 * fall about half inside the interval each, so one hit per call; nested
 * probes are not added. Every hit inside a cycle lengthens the cycle. */
static void derive_probe_cost(struct model *m)
{
	struct model_probe_cost *pc = &m->probe_cost;
	double cost = isnan(pc->cost_ns) ? 0 : pc->cost_ns;
	json_t *o, *per = json_object();

	pc->max_percent = 0;
	o = json_object();
	json_object_set_new(o, "cost_ns_per_hit", isnan(pc->cost_ns) ? json_null() : json_real(pc->cost_ns));
	json_object_set_new(o, "calibration_calls", json_integer(pc->calibration_calls));
	if (pc->error)
		json_object_set_new(o, "error", json_string(pc->error));
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		if (m->phases[ph].present)
			json_object_set_new(per, m->phase_names[ph], estimate((double)m->phases[ph].calls, cost,
									     m->phases[ph].total_ms, &pc->max_percent));
	json_object_set_new(o, "phases", per);
	json_object_set_new(o, "cycles", estimate((double)(pc->timed_hits + pc->point_hits), cost, m->agg.cycles_ms,
						  &pc->max_percent));
	json_object_set_new(o, "preset_probes", preset_probe_costs(m, cost));
	pc->warning = pc->max_percent > pc->warn_percent;
	json_object_set_new(o, "max_percent", json_real(pc->max_percent));
	json_object_set_new(o, "warning", json_boolean(pc->warning));
	model__set_section(m, MODEL_SEC_PROBES_OVERHEAD, o);
}

int model__derive(struct model *m)
{
	struct model_aggregates *a = &m->agg;
	double *durs, *tps, wall_tokens = 0, wall_ms = 0;
	size_t ntps = 0;
	int err = model__require(m, MODEL_COLLECTED, "model__derive");

	if (err)
		return err;
	m->inference_phase = inference_phase(m);
	durs = calloc(m->ncycles + 1, sizeof(double));
	tps = calloc(m->ncycles + 1, sizeof(double));
	if (!durs || !tps) {
		err = -ENOMEM;
		goto out;
	}
	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		derive_cycle(m, c, i);
		durs[i] = c->duration_ms;
		a->cycles_ms += c->duration_ms;
	}
	/* llama.cpp cycles: tokens/s from the batches' tokens */
	llama__derive(m);
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		if (!isnan(c->tokens_per_second) && !isnan(c->tokens_per_second_wall)) {
			tps[ntps++] = c->tokens_per_second;
			wall_tokens += c->tokens_per_second_wall * c->duration_ms / 1000.0;
			wall_ms += c->duration_ms;
		}
	}
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		derive_phase(m, ph, a->cycles_ms);
	a->total_cycles = m->ncycles;
	a->cycles_source = m->cycles_source;
	a->empty_marker_cycles_dropped = m->empty_marker_cycles_dropped;
	a->avg_cycle_ms = m->ncycles ? stats__mean(durs, m->ncycles) : NAN;
	a->max_cycle_ms = m->ncycles ? stats__percentile(durs, m->ncycles, 100) : NAN;
	a->p50_cycle_ms = m->ncycles ? stats__percentile(durs, m->ncycles, 50) : NAN;
	a->p95_cycle_ms = m->ncycles ? stats__percentile(durs, m->ncycles, 95) : NAN;
	a->p99_cycle_ms = m->ncycles ? stats__percentile(durs, m->ncycles, 99) : NAN;
	a->avg_tokens_per_second = ntps ? stats__mean(tps, ntps) : NAN;
	/* all tokens over all the cycles' time, as a driver timing its loop says */
	a->avg_tokens_per_second_wall = ntps && wall_ms > 0 ? wall_tokens / (wall_ms / 1000.0) : NAN;
	a->peak_memory_mb = m->memory.available ? m->memory.peak_mb : NAN;
	if (m->memory.available)
		m->memory.growth_mb_per_cycle = rss_growth(m);
	if (m->probe_cost.present)
		derive_probe_cost(m);
	tail__derive(m);
	edges__derive(m);
	err = model__advance(m, MODEL_DERIVED, "model__derive");
out:
	free(durs);
	free(tps);
	return err;
}
