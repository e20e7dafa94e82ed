// SPDX-License-Identifier: BSD-2-Clause
/* A server's requests in the text report: their time to first token,
 * inter-token gaps and durations, one row per request, the slowest with
 * what stands out about them, and how a step's cost grows with context. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "requests_view.h"
#include "stats.h"
#include "text.h"

#define NUM(v, w, p) text__figure((char[40]){ 0 }, 40, (v), (w), (p))

static void dist_row(FILE *out, const char *name, const struct model_request_dist *d, const char *unit)
{
	if (!d->n)
		return;
	fprintf(out, "  %-22s p50 %s  p95 %s  p99 %s  max %s %s (%llu)\n", name, NUM(d->p50, 0, 2), NUM(d->p95, 0, 2),
		NUM(d->p99, 0, 2), NUM(d->max, 0, 2), unit, (unsigned long long)d->n);
}

static double median_of(const struct model *m, double (*get)(const struct model_request *))
{
	size_t n = m->requests.list.n;
	double *v = n ? malloc(n * sizeof(double)) : NULL, r;

	if (!v)
		return NAN;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[k] = get(&m->requests.list.v[i])))
			k++;
	r = stats__percentile(v, k, 50);
	free(v);
	return r;
}

static double get_prompt(const struct model_request *q)
{
	return (double)q->prompt_tokens;
}

static double get_generated(const struct model_request *q)
{
	return (double)q->generated_tokens;
}

static double get_sharers(const struct model_request *q)
{
	return isnan(q->sharers_avg) ? 0 : q->sharers_avg;
}

static double get_ttft(const struct model_request *q)
{
	return q->ttft_ms;
}

static double get_clock(const struct model_request *q)
{
	return q->clock_mhz;
}

static double get_itl(const struct model_request *q)
{
	return q->itl_p50_ms;
}

void requests_view__medians(const struct model *m, struct requests_medians *md)
{
	md->prompt = median_of(m, get_prompt);
	md->generated = median_of(m, get_generated);
	md->sharers = median_of(m, get_sharers);
	md->itl = median_of(m, get_itl);
	md->ttft = median_of(m, get_ttft);
	md->clock = median_of(m, get_clock);
}

const char *requests_view__causes(const struct model *m, const struct requests_medians *md,
				  const struct model_request *q, char *buf, size_t len)
{
	double prompt = md->prompt, gen = md->generated, sharers = md->sharers, itl = md->itl, ttft = md->ttft;
	double clock = md->clock;
	bool first = true;
	size_t used = 0;

	for (size_t i = 0; i < m->requests.list.n; i++)
		if (m->requests.list.v[i].pid == q->pid && m->requests.list.v[i].start_ms < q->start_ms)
			first = false;

	buf[0] = 0;
#define CAUSE(...)                                                                                       \
	do {                                                                                             \
		if (used < len)                                                                          \
			used += (size_t)snprintf(buf + used, len - used, "%s", used ? "; " : "");        \
		if (used < len)                                                                          \
			used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);                   \
	} while (0)
	if (q->prompt_tokens > 1.5 * prompt && q->prompt_tokens > prompt + 8)
		CAUSE("long prompt (%llu tokens, median %.0f)", (unsigned long long)q->prompt_tokens, prompt);
	if (q->generated_tokens > 1.5 * gen && q->generated_tokens > gen + 8)
		CAUSE("long generation (%llu tokens, median %.0f)", (unsigned long long)q->generated_tokens, gen);
	if (q->sharers_avg >= sharers + 0.5 && q->sharers_max > 0)
		CAUSE("shared its batches with %.1f other sequences on average (median %.1f)", q->sharers_avg, sharers);
	if (isfinite(q->itl_p50_ms) && isfinite(itl) && q->itl_p50_ms > 1.5 * itl)
		CAUSE("slow steps (gap p50 %.2f ms, median %.2f)", q->itl_p50_ms, itl);
	if (isfinite(q->runq_ms) && isfinite(q->duration_ms) && q->runq_ms > 0.1 * q->duration_ms)
		CAUSE("CPU contention (its threads waited %.1f ms for a CPU, %.0f%% of it)", q->runq_ms,
		      100 * q->runq_ms / q->duration_ms);
	if (isfinite(q->clock_mhz) && isfinite(clock) && q->clock_mhz < 0.9 * clock)
		CAUSE("a slower CPU clock (%.0f MHz, median %.0f: a thermal or power limit)", q->clock_mhz, clock);
	if (first && isfinite(q->ttft_ms) && q->ttft_ms > 1.5 * ttft)
		CAUSE("its process's first prompt (first token %.1f ms, median %.1f: caches and pages still cold)",
		      q->ttft_ms, ttft);
#undef CAUSE
	return buf;
}

static int by_duration_desc(const void *a, const void *b, void *list)
{
	const struct model_request *x = &((const struct model_request *)list)[*(const size_t *)a];
	const struct model_request *y = &((const struct model_request *)list)[*(const size_t *)b];
	double dx = isnan(x->duration_ms) ? -1 : x->duration_ms, dy = isnan(y->duration_ms) ? -1 : y->duration_ms;

	return (dx < dy) - (dx > dy);
}

static int by_start(const void *a, const void *b, void *list)
{
	const struct model_request *x = &((const struct model_request *)list)[*(const size_t *)a];
	const struct model_request *y = &((const struct model_request *)list)[*(const size_t *)b];

	if (x->start_ms != y->start_ms)
		return x->start_ms < y->start_ms ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Why its token rate fell, with the evidence; into buf. */
static const char *rate_why(const struct model_request *q, char *buf, size_t len)
{
	switch (q->rate_cause) {
	case MODEL_RATE_CONTEXT:
		snprintf(buf, len, "growing attention cost: the context fit adds %.2f ms per token over its positions "
			 "(of %.2f ms added)", q->context_ms, q->added_ms);
		break;
	case MODEL_RATE_CONTENTION:
		snprintf(buf, len, "CPU contention: its run-queue wait per token grew by %.2f ms (of %.2f ms added)",
			 q->runq_added_ms, q->added_ms);
		break;
	case MODEL_RATE_MEMORY:
		snprintf(buf, len, "memory pressure: major faults per token %.1f -> %.1f", q->majflt_first,
			 q->majflt_last);
		break;
	case MODEL_RATE_THERMAL:
		snprintf(buf, len, "a thermal or power limit: the CPU clock fell %.0f%%", q->clock_drop_pct);
		break;
	default:
		snprintf(buf, len, "no measured cause explains it (context %s ms, run queue %.2f ms of %.2f ms added "
			 "per token)", NUM(q->context_ms, 0, 2), q->runq_added_ms, q->added_ms);
	}
	return buf;
}

static void rate_lines(FILE *out, const struct model_requests *r)
{
	char why[256];
	size_t shown = 0, fell = 0;

	for (size_t i = 0; i < r->list.n; i++) {
		const struct model_request *q = &r->list.v[i];

		if (!q->has_rate || q->rate_cause == MODEL_RATE_STEADY)
			continue;
		if (shown++ < 5)
			fprintf(out, "  token rate fell: seq %d at %.3f s, %.1f -> %.1f tok/s over its generation: %s\n",
				q->seq, q->start_ms / 1000, q->rate_first, q->rate_last, rate_why(q, why, sizeof(why)));
		fell++;
	}
	if (fell > 5)
		fprintf(out, "  ... and %zu more requests whose token rate fell (profile.json requests[].rate)\n", fell - 5);
}

static void context_line(FILE *out, const struct model_context_cost *c)
{
	if (c->present)
		fprintf(out, "  context: a single-token step takes %s ms more per 1,000 positions, its wait for a CPU taken out "
			"(r\u00b2 %s, %llu steps over positions %d-%d; %s ms in the first tenth, %s ms in the last)\n",
			NUM(c->slope_ms_per_1k, 0, 3), NUM(c->r2, 0, 2), (unsigned long long)c->steps, c->pos_min,
			c->pos_max, NUM(c->first_ms, 0, 2), NUM(c->last_ms, 0, 2));
	else
		fprintf(out, "  context: no fit (%llu single-token steps; %d needed over %d positions or more)\n",
			(unsigned long long)c->steps, MODEL_CONTEXT_MIN_STEPS, MODEL_CONTEXT_MIN_SPAN);
	if (c->pos_reached >= 0 && c->n_ctx)
		fprintf(out, "  positions reached: %d of n_ctx %u (%.0f%%)\n", c->pos_reached + 1, c->n_ctx,
			100 * c->occupancy);
}

void requests_view__print(FILE *out, const struct model *m)
{
	const struct model_requests *r = &m->requests;
	size_t n = r->list.n, shown, *idx;
	struct requests_medians md;
	char why[256];

	if (!r->present)
		return;
	fprintf(out, "\nREQUESTS (llama.cpp sequences, from the batches; docs/servers.md): %zu requests, "
		"%llu prompt and %llu generated tokens, %llu of %llu batches shared, %u sequences in one at most\n",
		n, (unsigned long long)r->prompt_tokens, (unsigned long long)r->generated_tokens,
		(unsigned long long)r->shared_batches, (unsigned long long)r->batches_seen, r->max_concurrent);
	if (r->unread_tokens || r->other_seq_tokens || r->batches_incomplete)
		fprintf(out, "  not counted: %llu tokens unread, %llu of sequence ids over %d, %llu batches never returned\n",
			(unsigned long long)r->unread_tokens, (unsigned long long)r->other_seq_tokens, IT_LLAMA_SEQS - 1,
			(unsigned long long)r->batches_incomplete);
	dist_row(out, "time to first token", &r->ttft, "ms");
	dist_row(out, "inter-token gap", &r->itl, "ms");
	dist_row(out, "request duration", &r->duration, "ms");
	dist_row(out, "prefill (batch share)", &r->prefill, "ms");
	dist_row(out, "tokens/s per request", &r->tokens_per_s, "tok/s");
	idx = n ? malloc(n * sizeof(*idx)) : NULL;
	if (idx) {
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		qsort_r(idx, n, sizeof(*idx), by_duration_desc, r->list.v);
		shown = n < REQUESTS_VIEW_ROWS ? n : REQUESTS_VIEW_ROWS;
		qsort_r(idx, shown, sizeof(*idx), by_start, r->list.v);
		fprintf(out, "  %s:\n", shown < n ? "the slowest, by start" : "by start");
		fprintf(out, "  %4s %7s %9s %9s %10s %9s %11s %8s %8s %9s %-8s %s\n", "seq", "prompt", "generated",
			"ttft_ms", "prefill_ms", "decode_ms", "duration_ms", "tok/s", "gap_p95", "sharers", "ended",
			"start_s");
		for (size_t k = 0; k < shown; k++) {
			const struct model_request *q = &r->list.v[idx[k]];

			fprintf(out, "  %4d %7llu %9llu %9s %10s %9s %11s %8s %8s %5s/%-3u %-8s %.3f\n", q->seq,
				(unsigned long long)q->prompt_tokens, (unsigned long long)q->generated_tokens,
				NUM(q->ttft_ms, 0, 1), NUM(q->prefill_ms, 0, 1), NUM(q->decode_ms, 0, 1),
				NUM(q->duration_ms, 0, 1), NUM(q->tokens_per_s, 0, 1), NUM(q->itl_p95_ms, 0, 2),
				NUM(q->sharers_avg, 0, 1), q->sharers_max, model_request__end_name(q->ended),
				q->start_ms / 1000);
		}
		/* the three slowest, with what stands out about them */
		requests_view__medians(m, &md);
		qsort_r(idx, n, sizeof(*idx), by_duration_desc, r->list.v);
		for (size_t k = 0; k < n && k < 3 && n > 1; k++) {
			const struct model_request *q = &r->list.v[idx[k]];

			requests_view__causes(m, &md, q, why, sizeof(why));
			fprintf(out, "  slow #%zu: seq %d at %.3f s, %s ms: %s\n", k + 1, q->seq, q->start_ms / 1000,
				NUM(q->duration_ms, 0, 1), why[0] ? why : "nothing stands out against the others");
		}
		free(idx);
	}
	rate_lines(out, r);
	context_line(out, &r->context);
	fprintf(out, "  (a batch's time is shared among its sequences by their tokens in it; time queued before a "
		"request's first batch is not seen)\n");
}

void requests_view__live_line(const struct model *m, char *buf, size_t len)
{
	const struct model_requests *r = &m->requests;
	size_t open = 0, used;

	buf[0] = 0;
	if (!r->present || !len)
		return;
	for (size_t i = 0; i < r->list.n; i++)
		open += r->list.v[i].ended == MODEL_REQUEST_OPEN;
	used = (size_t)snprintf(buf, len, "requests: %zu in flight", open);
	for (size_t i = 0, shown = 0; i < r->list.n && used < len; i++) {
		const struct model_request *q = &r->list.v[i];

		if (q->ended != MODEL_REQUEST_OPEN)
			continue;
		if (shown++ == 8) {
			used += (size_t)snprintf(buf + used, len - used, " ...");
			break;
		}
		used += (size_t)snprintf(buf + used, len - used, "%sseq %d %llu tok", shown == 1 ? " (" : ", ", q->seq,
					 (unsigned long long)q->generated_tokens);
	}
	if (open && used < len)
		used += (size_t)snprintf(buf + used, len - used, ")");
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, ", %zu ended", r->list.n - open);
	if (used < len && r->ttft.n)
		used += (size_t)snprintf(buf + used, len - used, "  first token p50 %.1f ms", r->ttft.p50);
	if (used < len && r->itl.n)
		snprintf(buf + used, len - used, "  gap p50 %.2f ms p95 %.2f ms", r->itl.p50, r->itl.p95);
}
