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

#include "gpu_join.h"
#include "requests.h"
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

static struct model_probe_estimate estimate(double hits, double cost_ns, double base_ms, double *max_pct)
{
	double ms = hits * cost_ns / 1e6, pct = base_ms > 0 ? 100.0 * ms / base_ms : 0;

	if (pct > *max_pct)
		*max_pct = pct;
	return (struct model_probe_estimate){ .present = true, .hits = hits, .estimated_ms = ms, .percent = pct };
}

/* A preset must not hurt what it measures: each of its probes' hits times
 * the cost per hit, as a share of its phase (issue 11: at most 2%). */
#define PRESET_PROBE_MAX_PERCENT 2.0

static void preset_probe_costs(struct model *m, double cost)
{
	struct model_probe_cost *pc = &m->probe_cost;

	pc->preset_probes.n = 0;
	for (size_t i = 0; i < m->probes.n; i++) {
		const struct model_probe *p = &m->probes.v[i];
		double phase_ms = 0, ms, pct;

		if (!p->from_preset || p->phase < 0 || !p->placed_in.n)
			continue;
		for (int ph = 1; ph < IT_MAX_PHASES; ph++)
			if (m->phases[ph].present && m->phase_names[ph] && !strcmp(m->phase_names[ph], m->names[p->phase]))
				phase_ms = m->phases[ph].total_ms;
		ms = p->hits * cost / 1e6;
		pct = phase_ms > 0 ? 100.0 * ms / phase_ms : 0;
		if (VEC_RESERVE(pc->preset_probes.v, pc->preset_probes.cap, pc->preset_probes.n, 8))
			return;
		pc->preset_probes.v[pc->preset_probes.n++] = (struct model_preset_probe_cost){
			.spec = p->spec, .phase = p->phase, .hits = (double)p->hits, .estimated_ms = ms,
			.percent_of_phase = pct, .over_limit = pct > PRESET_PROBE_MAX_PERCENT,
		};
	}
}

void model__warn_preset_probes(const struct model *m)
{
	const struct model_probe_cost *pc = &m->probe_cost;

	for (size_t i = 0; i < pc->preset_probes.n; i++) {
		const struct model_preset_probe_cost *v = &pc->preset_probes.v[i];

		if (v->over_limit)
			fprintf(stderr, "infertrace: warning: preset probe %s costs ~%.1f%% of phase %s (%.0f hits, over "
				"a preset's 2%%); its phase times are inflated\n", m->names[v->spec], v->percent_of_phase,
				m->names[v->phase], v->hits);
	}
}

/* profile.json's `probes_overhead`: a phase's own entry and return probes
 * fall about half inside the interval each, so one hit per call; nested
 * probes are not added. Every hit inside a cycle lengthens the cycle. */
static void derive_probe_cost(struct model *m)
{
	struct model_probe_cost *pc = &m->probe_cost;
	double cost = isnan(pc->cost_ns) ? 0 : pc->cost_ns;

	pc->max_percent = 0;
	pc->derived = true;
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		pc->phases[ph] = m->phases[ph].present ?
				 estimate((double)m->phases[ph].calls, cost, m->phases[ph].total_ms, &pc->max_percent) :
				 (struct model_probe_estimate){ .present = false };
	pc->cycles = estimate((double)(pc->timed_hits + pc->point_hits), cost, m->agg.cycles_ms, &pc->max_percent);
	preset_probe_costs(m, cost);
	pc->warning = pc->max_percent > pc->warn_percent;
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
	/* GPU time per cycle and phase, from CUPTI's records */
	err = gpu_join__derive(m);
	if (err)
		goto out;
	/* a server's requests, from llama.cpp's batches */
	err = requests__derive(m);
	if (err)
		goto out;
	err = model__advance(m, MODEL_DERIVED, "model__derive");
out:
	free(durs);
	free(tps);
	return err;
}
