// SPDX-License-Identifier: BSD-2-Clause
/* Requests from llama.cpp's batches (docs/servers.md). Each llama_decode
 * batch says, per sequence, how many tokens it fed, at which positions, and
 * which of them took an output (logits). A request is a sequence from its
 * first prompt batch to its end:
 *   - it starts at position 0, or at the first batch after its sequence was
 *     removed (a server keeping a common prefix removes only the tail: the
 *     positions before are its cached tokens);
 *   - its prompt ends with the batch whose last token of the sequence takes
 *     an output: that output is its first generated token;
 *   - every later output is one more generated token, and the time between
 *     two outputs is an inter-token gap;
 *   - it ends when the sequence is removed whole or from a position on
 *     (llama_memory_seq_rm, a memory clear), starts again at position 0,
 *     or its process ends; a tail removed while it generates, followed by
 *     a batch whose every token takes an output, is a speculative draft
 *     rejected: the request goes on.
 * A batch's time is shared among its sequences by their tokens in it. What
 * a server does before a request's first batch (queueing, tokenizing) is
 * not seen from libllama and is not counted. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "infertrace.h"
#include "model.h"
#include "requests.h"
#include "stats.h"

#define NS_PER_MS 1e6

/* A sequence of a process while the batches are replayed. */
struct seq_state {
	pid_t pid;
	int32_t seq;
	int64_t req;       /* index in the list; -1: no request open */
	int32_t next_pos;  /* where its next token goes, for batches without positions */
	bool prefill;      /* its open request has not taken an output yet */
	bool cut;          /* its tail was removed: its next batch says whether the request goes on */
	uint64_t cut_ns;   /* when */
	uint64_t last_out_ns;
	double sharers_sum;
};

/* One output's gap with what the steps then showed. */
struct gap_rec {
	double ms;        /* since the previous output */
	double pos;       /* the position of the token that gave it */
	double runq_ms;   /* its batch's threads' run-queue wait during the call */
	double majflt;    /* the thread's major faults from that call to its next */
	uint64_t end_ns;
};

struct replay {
	struct model_requests *r;
	const struct model *m;
	const double *call_runq_ms;  /* per recorded batch: run-queue wait in the call */
	const double *majflt_after;  /* per recorded batch: the thread's faults until its next batch */
	VEC_OF(struct seq_state) seqs;
	VEC_OF(VEC_OF(struct gap_rec)) gaps; /* per request, in list order */
	VEC_OF(double) xs;           /* context fit: mean position, */
	VEC_OF(double) ys;           /* and step time per sequence (ms) */
	int err;
};

static struct seq_state *seq_state(struct replay *rp, pid_t pid, int32_t seq)
{
	for (size_t i = 0; i < rp->seqs.n; i++)
		if (rp->seqs.v[i].pid == pid && rp->seqs.v[i].seq == seq)
			return &rp->seqs.v[i];
	if (VEC_RESERVE(rp->seqs.v, rp->seqs.cap, rp->seqs.n, 16)) {
		rp->err = -ENOMEM;
		return NULL;
	}
	rp->seqs.v[rp->seqs.n] = (struct seq_state){ .pid = pid, .seq = seq, .req = -1 };
	return &rp->seqs.v[rp->seqs.n++];
}

#define PUSH(rp, vec, x)                                                                  \
	do {                                                                               \
		if (VEC_RESERVE((vec).v, (vec).cap, (vec).n, 64))                           \
			(rp)->err = -ENOMEM;                                               \
		else                                                                       \
			(vec).v[(vec).n++] = (x);                                          \
	} while (0)

/* The mean CPU clock the side sampler read over [from, to]; NAN none. */
static double clock_mhz(const struct model *m, uint64_t from, uint64_t to)
{
	const struct side_series *s = &m->side.series;
	double sum = 0;
	size_t n = 0;

	for (size_t c = 0; c < s->cols.n; c++) {
		if (strcmp(s->cols.v[c].series, "cpu clock (MHz)"))
			continue;
		for (size_t row = 0; row < s->nrows; row++) {
			double v = s->v[row * s->cols.n + c];

			if (s->ts[row] >= from && s->ts[row] <= to && isfinite(v)) {
				sum += v;
				n++;
			}
		}
	}
	return n ? sum / n : NAN;
}

/* The request's figures once it ended (how: e). */
static void finish(struct replay *rp, struct seq_state *s, enum model_request_end e, uint64_t at)
{
	struct model_request *q;
	double *sorted;
	size_t n;

	if (s->req < 0)
		return;
	q = &rp->r->list.v[s->req];
	n = rp->gaps.v[s->req].n;
	q->ended = (uint8_t)e;
	q->ended_ns = at;
	q->clock_mhz = clock_mhz(rp->m, q->start_ns, q->end_ns);
	q->duration_ms = (double)(q->end_ns - q->start_ns) / NS_PER_MS;
	q->sharers_avg = q->batches ? s->sharers_sum / (double)q->batches : NAN;
	q->tokens_per_s = n && q->end_ns > q->first_token_ns && q->first_token_ns
				  ? (double)n / ((double)(s->last_out_ns - q->first_token_ns) / 1e9)
				  : NAN;
	q->itl_p50_ms = q->itl_p95_ms = q->itl_p99_ms = q->itl_max_ms = NAN;
	sorted = n ? malloc(n * sizeof(double)) : NULL;
	if (sorted) {
		for (size_t i = 0; i < n; i++)
			sorted[i] = rp->gaps.v[s->req].v[i].ms;
		q->itl_p50_ms = stats__percentile(sorted, n, 50);
		q->itl_p95_ms = stats__percentile(sorted, n, 95);
		q->itl_p99_ms = stats__percentile(sorted, n, 99);
		q->itl_max_ms = stats__percentile(sorted, n, 100);
		free(sorted);
	} else if (n) {
		rp->err = -ENOMEM;
	}
	s->req = -1;
}

static void open_request(struct replay *rp, struct seq_state *s, const struct model_llama_batch *b, int32_t pos)
{
	struct model_requests *r = rp->r;

	if (VEC_RESERVE(r->list.v, r->list.cap, r->list.n, 32) || VEC_RESERVE(rp->gaps.v, rp->gaps.cap, rp->gaps.n, 32)) {
		rp->err = -ENOMEM;
		return;
	}
	memset(&rp->gaps.v[rp->gaps.n++], 0, sizeof(rp->gaps.v[0]));
	r->list.v[r->list.n] = (struct model_request){
		.pid = b->pid, .tid = b->tid, .seq = s->seq, .start_ns = b->start_ns,
		.start_ms = (double)(int64_t)(b->start_ns - rp->m->run.start_ns) / NS_PER_MS,
		.cached_tokens = pos > 0 ? (uint64_t)pos : 0, .pos_max = -1,
		.prefill_ms = 0, .decode_ms = 0, .ttft_ms = NAN };
	s->req = (int64_t)r->list.n++;
	s->prefill = true;
	s->sharers_sum = 0;
}

/* A removal of positions [p0, p1) of sequence seq (-1: all) of pid. */
static void apply_end(struct replay *rp, const struct model_llama_seq_end *e)
{
	for (size_t i = 0; i < rp->seqs.n; i++) {
		struct seq_state *s = &rp->seqs.v[i];

		if (s->pid != e->pid || (e->seq >= 0 && s->seq != e->seq))
			continue;
		/* a range in the middle (a context shift) keeps the request; one
		 * from 0 past its last position (node-llama-cpp's clearHistory)
		 * removes it whole */
		if (e->seq >= 0 && e->p1 >= 0 && !(e->p0 <= 0 && e->p1 >= s->next_pos))
			continue;
		s->next_pos = e->seq >= 0 && e->p0 > 0 ? e->p0 : 0;
		/* a tail removed while generating: a speculative draft rejected,
		 * or the request's end (its next batch tells) */
		if (s->next_pos > 0 && s->req >= 0 && !s->prefill) {
			s->cut = true;
			s->cut_ns = e->ts_ns;
			continue;
		}
		finish(rp, s, MODEL_REQUEST_REMOVED, e->ts_ns);
	}
}

/* One sequence's part of batch b (time d ms, shared by its tokens). */
static void apply_part(struct replay *rp, size_t bi, const struct model_llama_part *p, double d_ms)
{
	const struct model_llama_batch *b = &rp->r->batches.v[bi];
	struct seq_state *s = seq_state(rp, b->pid, p->seq);
	int32_t pos_min = p->pos_min, pos_max = p->pos_max;
	double share = b->n_tokens ? d_ms * p->tokens / b->n_tokens : 0;
	struct model_request *q;

	if (!s)
		return;
	if (pos_min < 0) { /* llama_batch_get_one: after the sequence's last position */
		pos_min = b->flags & IT_LLAMA_BATCH_STARTS ? 0 : s->next_pos;
		pos_max = pos_min + (int32_t)p->tokens - 1;
	}
	s->next_pos = pos_max + 1;
	/* after its tail was removed, a batch whose every token takes an
	 * output goes on generating (draft tokens verified); another is the
	 * next request's prompt on the kept prefix */
	if (s->cut && s->req >= 0 && !(p->outputs == p->tokens && pos_min > 0))
		finish(rp, s, MODEL_REQUEST_REMOVED, s->cut_ns);
	s->cut = false;
	if (s->req >= 0 && pos_min == 0)
		finish(rp, s, MODEL_REQUEST_RESTART, b->start_ns);
	if (s->req < 0)
		open_request(rp, s, b, pos_min);
	if (s->req < 0)
		return;
	q = &rp->r->list.v[s->req];
	q->batches++;
	q->end_ns = b->end_ns;
	q->runq_ms += rp->call_runq_ms[bi];
	q->majflt += (uint64_t)rp->majflt_after[bi];
	if (pos_max > q->pos_max)
		q->pos_max = pos_max;
	s->sharers_sum += b->nparts - 1;
	if (b->nparts - 1 > q->sharers_max)
		q->sharers_max = b->nparts - 1;
	if (s->prefill) {
		q->prefill_batches++;
		q->prefill_ms += share;
		q->prompt_tokens += p->tokens;
		if (p->last_output) {
			s->prefill = false;
			q->first_token_ns = b->end_ns;
			q->ttft_ms = (double)(b->end_ns - q->start_ns) / NS_PER_MS;
			q->generated_tokens = 1;
			s->last_out_ns = b->end_ns;
		}
		return;
	}
	q->decode_ms += share;
	/* tokens fed after the prompt without an output are input too */
	q->prompt_tokens += p->tokens - p->outputs;
	if (p->outputs) {
		struct gap_rec g = { .ms = (double)(b->end_ns - s->last_out_ns) / NS_PER_MS / p->outputs,
				     .pos = pos_max, .runq_ms = rp->call_runq_ms[bi] / p->outputs,
				     .majflt = rp->majflt_after[bi] / p->outputs, .end_ns = b->end_ns };

		for (uint32_t k = 0; k < p->outputs; k++)
			PUSH(rp, rp->gaps.v[s->req], g);
		q->generated_tokens += p->outputs;
		s->last_out_ns = b->end_ns;
	}
}

static int batch_cmp(const void *a, const void *b, void *batches)
{
	const struct model_llama_batch *x = &((const struct model_llama_batch *)batches)[*(const uint32_t *)a];
	const struct model_llama_batch *y = &((const struct model_llama_batch *)batches)[*(const uint32_t *)b];

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int end_cmp(const void *a, const void *b)
{
	const struct model_llama_seq_end *x = a, *y = b;

	return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* A batch where every sequence fed one token: a point of the context fit. */
static void context_point(struct replay *rp, size_t bi, double d_ms)
{
	const struct model_llama_batch *b = &rp->r->batches.v[bi];
	const struct model_llama_part *parts = rp->r->parts.v;
	double pos = 0;

	for (uint32_t i = 0; i < b->nparts; i++) {
		const struct model_llama_part *p = &parts[b->first_part + i];
		struct seq_state *s = seq_state(rp, b->pid, p->seq);

		if (p->tokens != 1 || !s)
			return;
		pos += p->pos_min >= 0 ? p->pos_min : s->next_pos;
	}
	if (!b->nparts || b->other_seq_tokens || b->unread_tokens)
		return;
	/* what the step computed: the time it waited for a CPU is another cause */
	PUSH(rp, rp->xs, pos / b->nparts);
	PUSH(rp, rp->ys, (d_ms - rp->call_runq_ms[bi]) / b->nparts);
}

static void dist(struct model_request_dist *d, double *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	d->n = k;
	d->mean = k ? stats__mean(v, k) : NAN;
	d->p50 = stats__percentile(v, k, 50);
	d->p95 = stats__percentile(v, k, 95);
	d->p99 = stats__percentile(v, k, 99);
	d->max = stats__percentile(v, k, 100);
}

void requests__fit_context(struct model_context_cost *c, const double *x, const double *y, size_t n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, lo = INFINITY, hi = -INFINITY;
	double first = 0, last = 0;
	size_t nf = 0, nl = 0;

	memset(c, 0, sizeof(*c));
	c->slope_ms_per_1k = c->intercept_ms = c->r2 = c->first_ms = c->last_ms = c->occupancy = NAN;
	c->steps = n;
	for (size_t i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
		syy += y[i] * y[i];
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	if (n < MODEL_CONTEXT_MIN_STEPS || hi - lo < MODEL_CONTEXT_MIN_SPAN)
		return;
	double den = n * sxx - sx * sx, slope = (n * sxy - sx * sy) / den, icpt = (sy - slope * sx) / n;
	double vy = n * syy - sy * sy;

	c->present = true;
	c->pos_min = (int32_t)lo;
	c->pos_max = (int32_t)hi;
	c->slope_ms_per_1k = slope * 1000;
	c->intercept_ms = icpt;
	c->r2 = vy > 0 ? (n * sxy - sx * sy) * (n * sxy - sx * sy) / (den * vy) : NAN;
	for (size_t i = 0; i < n; i++) {
		if (x[i] <= lo + (hi - lo) / 10) {
			first += y[i];
			nf++;
		}
		if (x[i] >= hi - (hi - lo) / 10) {
			last += y[i];
			nl++;
		}
	}
	c->first_ms = nf ? first / nf : NAN;
	c->last_ms = nl ? last / nl : NAN;
}

static bool process_exited(const struct model *m, pid_t pid)
{
	const struct model_process *p = model__find_process(m, pid);

	return p && p->exited;
}

/* Per recorded batch: the run-queue wait of its thread during the call,
 * and the thread's major faults from its entry to its next batch's. */
static int batch_evidence(const struct model_requests *r, const uint32_t *order, struct replay *rp)
{
	double *runq = calloc(r->batches.n + 1, sizeof(double)), *faults = calloc(r->batches.n + 1, sizeof(double));

	rp->call_runq_ms = runq;
	rp->majflt_after = faults;
	if (!runq || !faults)
		return -ENOMEM;
	for (size_t k = 0; k < r->batches.n; k++) {
		const struct model_llama_batch *b = &r->batches.v[order[k]];

		if (b->end_ns && b->end_run_delay_ns >= b->run_delay_ns && b->run_delay_ns)
			runq[order[k]] = (double)(b->end_run_delay_ns - b->run_delay_ns) / NS_PER_MS;
		for (size_t j = k + 1; j < r->batches.n; j++) {
			const struct model_llama_batch *next = &r->batches.v[order[j]];

			if (next->tid != b->tid)
				continue;
			if (next->majflt >= b->majflt)
				faults[order[k]] = (double)(next->majflt - b->majflt);
			break;
		}
	}
	return 0;
}

/* Whether q's token rate fell from the first quarter of its gaps to the
 * last, and which cause the evidence fits: the context fit's growth over
 * the positions gained, the added run-queue wait per token, the major
 * faults, the CPU clock. A cause explains its share of the added time per
 * token; the largest share of MODEL_RATE_EXPLAINS or more names it. */
static void rate_verdict(const struct model *m, struct model_request *q, const struct gap_rec *g, size_t n)
{
	const struct model_context_cost *c = &m->requests.context;
	double t1 = 0, t4 = 0, p1 = 0, p4 = 0, r1 = 0, r4 = 0, f1 = 0, f4 = 0, clk1, clk4;
	size_t k = n / 4;

	q->rate_first = q->rate_last = q->added_ms = q->context_ms = q->runq_added_ms = NAN;
	q->clock_drop_pct = q->majflt_first = q->majflt_last = NAN;
	q->rate_cause = MODEL_RATE_STEADY;
	q->has_rate = n >= MODEL_RATE_MIN_GAPS;
	if (!q->has_rate)
		return;
	for (size_t i = 0; i < k; i++) {
		t1 += g[i].ms, p1 += g[i].pos, r1 += g[i].runq_ms, f1 += g[i].majflt;
		t4 += g[n - k + i].ms, p4 += g[n - k + i].pos, r4 += g[n - k + i].runq_ms, f4 += g[n - k + i].majflt;
	}
	t1 /= k, t4 /= k, p1 /= k, p4 /= k, r1 /= k, r4 /= k;
	q->rate_first = t1 > 0 ? 1e3 / t1 : NAN;
	q->rate_last = t4 > 0 ? 1e3 / t4 : NAN;
	q->added_ms = t4 - t1;
	q->runq_added_ms = r4 - r1;
	q->majflt_first = f1 / k;
	q->majflt_last = f4 / k;
	q->context_ms = c->present && isfinite(c->slope_ms_per_1k) ? c->slope_ms_per_1k * (p4 - p1) / 1000 : NAN;
	clk1 = clock_mhz(m, g[0].end_ns, g[k - 1].end_ns);
	clk4 = clock_mhz(m, g[n - k].end_ns, g[n - 1].end_ns);
	q->clock_drop_pct = isfinite(clk1) && isfinite(clk4) && clk1 > 0 ? 100 * (clk1 - clk4) / clk1 : NAN;
	if (!(t4 >= t1 * (1 + MODEL_RATE_FALL)))
		return;
	{
		double added = t4 - t1, share_ctx = isfinite(q->context_ms) ? q->context_ms / added : 0;
		double share_runq = q->runq_added_ms / added;
		/* a slower clock stretches the first quarter's compute time */
		double share_clk = isfinite(q->clock_drop_pct) && q->clock_drop_pct > 0 && q->clock_drop_pct < 100
					   ? (t1 - r1) * (q->clock_drop_pct / (100 - q->clock_drop_pct)) / added
					   : 0;

		if (share_runq >= MODEL_RATE_EXPLAINS && share_runq >= share_ctx && share_runq >= share_clk)
			q->rate_cause = MODEL_RATE_CONTENTION;
		else if (share_ctx >= MODEL_RATE_EXPLAINS && share_ctx >= share_clk)
			q->rate_cause = MODEL_RATE_CONTEXT;
		else if (share_clk >= MODEL_RATE_EXPLAINS)
			q->rate_cause = MODEL_RATE_THERMAL;
		else if (q->majflt_last >= 1 && q->majflt_last > 2 * q->majflt_first)
			q->rate_cause = MODEL_RATE_MEMORY;
		else
			q->rate_cause = MODEL_RATE_UNEXPLAINED;
	}
}

uint32_t *requests__batch_order(const struct model_requests *r)
{
	uint32_t *order = r->batches.n ? malloc(r->batches.n * sizeof(*order)) : NULL;

	if (!order)
		return NULL;
	for (uint32_t i = 0; i < r->batches.n; i++)
		order[i] = i;
	qsort_r(order, r->batches.n, sizeof(*order), batch_cmp, r->batches.v);
	return order;
}

int requests__derive(struct model *m)
{
	struct model_requests *r = &m->requests;
	struct replay rp = { .r = r, .m = m };
	uint32_t *order;
	size_t e = 0;
	double *v;

	if (!r->batches.n)
		return 0; /* nothing recorded: a profile read back keeps its requests */
	model_requests__clear_derived(r);
	r->prompt_tokens = r->generated_tokens = r->batches_seen = r->batches_incomplete = 0;
	r->shared_batches = r->other_seq_tokens = r->multi_seq_tokens = r->unread_tokens = 0;
	r->max_concurrent = 0;
	order = requests__batch_order(r);
	if (!order)
		return -ENOMEM;
	if (r->ends.n)
		qsort(r->ends.v, r->ends.n, sizeof(*r->ends.v), end_cmp);
	if (batch_evidence(r, order, &rp)) {
		rp.err = -ENOMEM;
		goto nomem;
	}
	for (size_t k = 0; k < r->batches.n && !rp.err; k++) {
		const struct model_llama_batch *b = &r->batches.v[order[k]];
		double d_ms;

		r->batches_seen++;
		if (!b->end_ns || b->end_ns < b->start_ns) {
			r->batches_incomplete++;
			continue;
		}
		for (; e < r->ends.n && r->ends.v[e].ts_ns <= b->start_ns; e++)
			apply_end(&rp, &r->ends.v[e]);
		d_ms = (double)(b->end_ns - b->start_ns) / NS_PER_MS;
		r->shared_batches += b->nparts > 1;
		r->max_concurrent = b->nparts > r->max_concurrent ? b->nparts : r->max_concurrent;
		r->other_seq_tokens += b->other_seq_tokens;
		r->multi_seq_tokens += b->multi_seq_tokens;
		r->unread_tokens += b->unread_tokens;
		context_point(&rp, order[k], d_ms);
		for (uint32_t i = 0; i < b->nparts; i++)
			apply_part(&rp, order[k], &r->parts.v[b->first_part + i], d_ms);
	}
	for (; e < r->ends.n && !rp.err; e++)
		apply_end(&rp, &r->ends.v[e]);
	for (size_t i = 0; i < rp.seqs.n; i++)
		finish(&rp, &rp.seqs.v[i],
		       rp.seqs.v[i].cut			       ? MODEL_REQUEST_REMOVED
		       : process_exited(m, rp.seqs.v[i].pid) ? MODEL_REQUEST_EXIT
							     : MODEL_REQUEST_OPEN,
		       rp.seqs.v[i].cut ? rp.seqs.v[i].cut_ns : m->run.end_ns ? m->run.end_ns : UINT64_MAX);
	/* --rotate: requests that ended before this period were written with it */
	{
		size_t w = 0, n = r->list.n < rp.gaps.n ? r->list.n : rp.gaps.n;

		for (size_t i = 0; i < n; i++) {
			if (r->list.v[i].ended != MODEL_REQUEST_OPEN && r->list.v[i].ended_ns < m->run.start_ns) {
				free(rp.gaps.v[i].v);
				continue;
			}
			r->list.v[w] = r->list.v[i];
			rp.gaps.v[w++] = rp.gaps.v[i];
		}
		r->list.n = rp.gaps.n = w;
	}
	/* the gaps, request by request */
	for (size_t i = 0; i < r->list.n && i < rp.gaps.n && !rp.err; i++) {
		struct model_request *q = &r->list.v[i];

		q->first_gap = r->gaps.n;
		q->ngaps = rp.gaps.v[i].n;
		for (size_t k = 0; k < rp.gaps.v[i].n && !rp.err; k++)
			PUSH(&rp, r->gaps, rp.gaps.v[i].v[k].ms);
		r->prompt_tokens += q->prompt_tokens;
		r->generated_tokens += q->generated_tokens;
	}
	v = rp.err ? NULL : malloc((r->list.n + r->gaps.n + 1) * sizeof(double));
	if (v) {
#define DIST(field, expr)                                        \
	do {                                                     \
		for (size_t i = 0; i < r->list.n; i++)           \
			v[i] = (expr);                           \
		dist(&r->field, v, r->list.n);                   \
	} while (0)
		DIST(ttft, r->list.v[i].ttft_ms);
		DIST(duration, r->list.v[i].duration_ms);
		DIST(prefill, r->list.v[i].prefill_ms);
		DIST(tokens_per_s, r->list.v[i].tokens_per_s);
		DIST(prompt, (double)r->list.v[i].prompt_tokens);
		DIST(generated, (double)r->list.v[i].generated_tokens);
#undef DIST
		if (r->gaps.n)
			memcpy(v, r->gaps.v, r->gaps.n * sizeof(double));
		dist(&r->itl, v, r->gaps.n);
		free(v);
	} else if (!rp.err) {
		rp.err = -ENOMEM;
	}
	requests__fit_context(&r->context, rp.xs.v, rp.ys.v, rp.xs.n);
	r->context.pos_reached = -1;
	for (size_t i = 0; i < r->list.n; i++)
		if (r->list.v[i].pos_max > r->context.pos_reached)
			r->context.pos_reached = r->list.v[i].pos_max;
	if (m->llama_facts.present && m->llama_facts.context.n_ctx) {
		r->context.n_ctx = m->llama_facts.context.n_ctx;
		if (r->context.pos_reached >= 0)
			r->context.occupancy = (r->context.pos_reached + 1.0) / r->context.n_ctx;
	}
	for (size_t i = 0; i < r->list.n && i < rp.gaps.n; i++)
		rate_verdict(m, &r->list.v[i], rp.gaps.v[i].v, rp.gaps.v[i].n);
nomem:
	free(order);
	free((void *)rp.call_runq_ms);
	free((void *)rp.majflt_after);
	for (size_t i = 0; i < rp.gaps.n; i++)
		free(rp.gaps.v[i].v);
	free(rp.gaps.v);
	free(rp.seqs.v);
	free(rp.xs.v);
	free(rp.ys.v);
	return rp.err;
}
