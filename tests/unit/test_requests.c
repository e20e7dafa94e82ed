// SPDX-License-Identifier: BSD-2-Clause
/* Requests from llama.cpp's batches (analysis/requests.c) on hand-built
 * batch records whose figures are worked out in each test: two sequences
 * sharing batches, batches without positions (llama_batch_get_one), a kept
 * prefix, a context fit on a known line, and a batch whose return was
 * never seen. */
#include <linux/types.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "infertrace.h"
#include "model.h"
#include "requests.h"
#include "requests_view.h"

#define MS 1000000ull
#define T0 5000000000ull /* the recording's start */
#define PID 100

struct part_spec {
	int32_t seq;
	uint32_t tokens, outputs;
	int32_t pos_min; /* -1: none */
	bool last_output;
};

/* A batch of the parts, from..to ms after T0 (to 0: never returned). */
static void batch(struct model *m, double from_ms, double to_ms, uint32_t flags, const struct part_spec *ps, int n)
{
	struct model_requests *r = &m->requests;
	uint32_t tokens = 0;

	assert_int_equal(VEC_RESERVE(r->batches.v, r->batches.cap, r->batches.n, 16), 0);
	assert_int_equal(VEC_RESERVE(r->parts.v, r->parts.cap, r->parts.n + n, 16), 0);
	for (int i = 0; i < n; i++) {
		r->parts.v[r->parts.n + i] = (struct model_llama_part){
			.seq = ps[i].seq, .tokens = ps[i].tokens, .outputs = ps[i].outputs, .pos_min = ps[i].pos_min,
			.pos_max = ps[i].pos_min < 0 ? -1 : ps[i].pos_min + (int32_t)ps[i].tokens - 1,
			.last_output = ps[i].last_output };
		tokens += ps[i].tokens;
	}
	r->batches.v[r->batches.n++] = (struct model_llama_batch){
		.pid = PID, .tid = PID + 1, .start_ns = T0 + (uint64_t)(from_ms * MS),
		.end_ns = to_ms ? T0 + (uint64_t)(to_ms * MS) : 0, .n_tokens = tokens, .flags = flags,
		.first_part = (uint32_t)r->parts.n, .nparts = (uint32_t)n };
	r->parts.n += n;
	r->present = true;
}

static void seq_rm(struct model *m, double at_ms, int32_t seq, int32_t p0, int32_t p1)
{
	struct model_requests *r = &m->requests;

	assert_int_equal(VEC_RESERVE(r->ends.v, r->ends.cap, r->ends.n, 16), 0);
	r->ends.v[r->ends.n++] = (struct model_llama_seq_end){ .pid = PID, .ts_ns = T0 + (uint64_t)(at_ms * MS),
							      .seq = seq, .p0 = p0, .p1 = p1 };
}

static void new_model(struct model *m)
{
	model__init(m);
	m->run.start_ns = T0;
}

/* Two requests in one batch, then sharing single-token steps:
 *   0-10 ms  seq 0 prompt 5 tokens [0,5), seq 1 prompt 3 tokens [0,3), both last outputs
 *   10-14    both one token (pos 5 and 3)      seq 0 gap 4, seq 1 gap 4
 *   15-19    both one token (pos 6 and 4)      gaps 5, 5
 *   20       seq 1 removed whole
 *   20-22    seq 0 alone (pos 7)               gap 3
 *   25       seq 0 removed
 *   30-36    seq 1 again: prompt 6 tokens [0,6), output; still open at the end */
static void test_two_sequences_share_batches(void **state)
{
	struct model m;
	(void)state;

	new_model(&m);
	batch(&m, 0, 10, 0, (struct part_spec[]){ { 0, 5, 1, 0, true }, { 1, 3, 1, 0, true } }, 2);
	batch(&m, 10, 14, 0, (struct part_spec[]){ { 0, 1, 1, 5, true }, { 1, 1, 1, 3, true } }, 2);
	batch(&m, 15, 19, 0, (struct part_spec[]){ { 0, 1, 1, 6, true }, { 1, 1, 1, 4, true } }, 2);
	seq_rm(&m, 20, 1, -1, -1);
	batch(&m, 20, 22, 0, (struct part_spec[]){ { 0, 1, 1, 7, true } }, 1);
	seq_rm(&m, 25, 0, 0, 8); /* [0, 8): past its last position, 7: the whole sequence */
	batch(&m, 30, 36, 0, (struct part_spec[]){ { 1, 6, 1, 0, true } }, 1);
	assert_int_equal(model__add_process(&m, PID) != NULL, 1);
	assert_int_equal(requests__derive(&m), 0);

	struct model_requests *r = &m.requests;

	assert_int_equal(r->list.n, 3);
	const struct model_request *a = &r->list.v[0], *b = &r->list.v[1], *c = &r->list.v[2];

	assert_int_equal(a->seq, 0);
	assert_int_equal(a->prompt_tokens, 5);
	assert_int_equal(a->generated_tokens, 4); /* the prompt's output and three steps */
	assert_int_equal(a->batches, 4);
	assert_int_equal(a->prefill_batches, 1);
	assert_float_equal(a->prefill_ms, 10.0 * 5 / 8, 1e-9);
	assert_float_equal(a->ttft_ms, 10, 1e-9);
	assert_float_equal(a->decode_ms, 2 + 2 + 2, 1e-9);
	assert_float_equal(a->duration_ms, 22, 1e-9);
	assert_int_equal(a->ngaps, 3);
	assert_float_equal(r->gaps.v[a->first_gap], 4, 1e-9);
	assert_float_equal(r->gaps.v[a->first_gap + 1], 5, 1e-9);
	assert_float_equal(r->gaps.v[a->first_gap + 2], 3, 1e-9);
	assert_float_equal(a->itl_p50_ms, 4, 1e-9);
	assert_float_equal(a->itl_max_ms, 5, 1e-9);
	assert_float_equal(a->tokens_per_s, 3 / 0.012, 1e-6); /* 3 outputs from 10 to 22 ms */
	assert_float_equal(a->sharers_avg, 3.0 / 4, 1e-9);
	assert_int_equal(a->sharers_max, 1);
	assert_int_equal(a->pos_max, 7);
	assert_int_equal(a->ended, MODEL_REQUEST_REMOVED);
	assert_float_equal(a->start_ms, 0, 1e-9);

	assert_int_equal(b->seq, 1);
	assert_int_equal(b->prompt_tokens, 3);
	assert_int_equal(b->generated_tokens, 3);
	assert_float_equal(b->prefill_ms, 10.0 * 3 / 8, 1e-9);
	assert_float_equal(b->decode_ms, 2 + 2, 1e-9);
	assert_float_equal(b->duration_ms, 19, 1e-9);
	assert_int_equal(b->ended, MODEL_REQUEST_REMOVED);
	assert_float_equal(b->sharers_avg, 1, 1e-9);

	assert_int_equal(c->seq, 1);
	assert_int_equal(c->prompt_tokens, 6);
	assert_int_equal(c->generated_tokens, 1);
	assert_int_equal(c->ngaps, 0);
	assert_true(isnan(c->tokens_per_s));
	assert_float_equal(c->ttft_ms, 6, 1e-9);
	assert_float_equal(c->start_ms, 30, 1e-9);
	assert_int_equal(c->ended, MODEL_REQUEST_OPEN);

	assert_int_equal(r->prompt_tokens, 14);
	assert_int_equal(r->generated_tokens, 8);
	assert_int_equal(r->shared_batches, 3);
	assert_int_equal(r->max_concurrent, 2);
	assert_int_equal(r->ttft.n, 3);
	assert_float_equal(r->ttft.p50, 10, 1e-9);
	assert_int_equal(r->itl.n, 5); /* 4, 5, 3 and 4, 5 */
	assert_float_equal(r->itl.max, 5, 1e-9);
	assert_float_equal(r->itl.p50, 4, 1e-9);

	/* top's line: the open request with its outputs, the ended ones */
	char line[256];

	requests_view__live_line(&m, line, sizeof(line));
	assert_string_equal(line, "requests: 1 in flight (seq 1 1 tok), 2 ended  first token p50 10.0 ms  "
				  "gap p50 4.00 ms p95 5.00 ms");
	model__free(&m);
}

/* llama_batch_get_one: no positions, no sequence ids. A prompt after a
 * single-token batch starts a request (the BPF side's STARTS flag); a
 * memory clear ends one; the process's exit ends the last. */
static void test_batches_without_positions(void **state)
{
	struct model m;
	(void)state;

	new_model(&m);
	for (int round = 0; round < 2; round++) {
		double t = round * 100;

		if (round)
			seq_rm(&m, t - 1, -1, -1, -1); /* llama_memory_clear */
		batch(&m, t, t + 8, IT_LLAMA_BATCH_NO_POS | IT_LLAMA_BATCH_NO_SEQ | IT_LLAMA_BATCH_STARTS,
		      (struct part_spec[]){ { 0, 20, 1, -1, true } }, 1);
		for (int k = 0; k < 4; k++)
			batch(&m, t + 10 + 2 * k, t + 11 + 2 * k, IT_LLAMA_BATCH_NO_POS | IT_LLAMA_BATCH_NO_SEQ,
			      (struct part_spec[]){ { 0, 1, 1, -1, true } }, 1);
	}
	model__add_process(&m, PID)->exited = true;
	assert_int_equal(requests__derive(&m), 0);

	struct model_requests *r = &m.requests;

	assert_int_equal(r->list.n, 2);
	for (int i = 0; i < 2; i++) {
		const struct model_request *q = &r->list.v[i];

		assert_int_equal(q->prompt_tokens, 20);
		assert_int_equal(q->generated_tokens, 5);
		assert_int_equal(q->pos_max, 23); /* 20 prompt positions, then 4 steps */
		assert_float_equal(q->ttft_ms, 8, 1e-9);
		assert_float_equal(q->decode_ms, 4, 1e-9);
		assert_float_equal(r->gaps.v[q->first_gap], 3, 1e-9); /* 8 to 11 ms */
		assert_float_equal(r->gaps.v[q->first_gap + 3], 2, 1e-9);
	}
	assert_int_equal(r->list.v[0].ended, MODEL_REQUEST_REMOVED);
	assert_int_equal(r->list.v[1].ended, MODEL_REQUEST_EXIT);
	model__free(&m);
}

/* A server keeping the common prefix of the next prompt removes only the
 * tail: the request ends there, and the next starts at the kept position
 * with those positions as its cached tokens. A context shift (a range in
 * the middle) and a batch never returned change nothing. */
static void test_kept_prefix_and_context_shift(void **state)
{
	struct model m;
	(void)state;

	new_model(&m);
	batch(&m, 0, 5, 0, (struct part_spec[]){ { 2, 10, 1, 0, true } }, 1);
	batch(&m, 6, 7, 0, (struct part_spec[]){ { 2, 1, 1, 10, true } }, 1);
	seq_rm(&m, 7.5, 2, 4, 8); /* context shift */
	batch(&m, 8, 9, 0, (struct part_spec[]){ { 2, 1, 1, 11, true } }, 1);
	batch(&m, 9.5, 0, 0, (struct part_spec[]){ { 2, 1, 1, 12, true } }, 1); /* never returned */
	seq_rm(&m, 10, 2, 6, -1);
	batch(&m, 20, 23, 0, (struct part_spec[]){ { 2, 4, 1, 6, true } }, 1);
	model__add_process(&m, PID);
	assert_int_equal(requests__derive(&m), 0);

	struct model_requests *r = &m.requests;

	assert_int_equal(r->list.n, 2);
	assert_int_equal(r->list.v[0].generated_tokens, 3);
	assert_int_equal(r->list.v[0].ended, MODEL_REQUEST_REMOVED);
	assert_int_equal(r->list.v[0].cached_tokens, 0);
	assert_int_equal(r->list.v[1].cached_tokens, 6);
	assert_int_equal(r->list.v[1].prompt_tokens, 4);
	assert_float_equal(r->list.v[1].start_ms, 20, 1e-9);
	assert_int_equal(r->batches_seen, 5);
	assert_int_equal(r->batches_incomplete, 1);
	model__free(&m);
}

/* Speculative decoding: a draft of 3 tokens verified in one batch (every
 * token takes an output), 2 rejected and removed from their position on,
 * then the next draft: one request, every output counted. */
static void test_speculative_draft_keeps_the_request(void **state)
{
	struct model m;
	(void)state;

	new_model(&m);
	batch(&m, 0, 4, 0, (struct part_spec[]){ { 0, 8, 1, 0, true } }, 1);
	batch(&m, 5, 8, 0, (struct part_spec[]){ { 0, 3, 3, 8, true } }, 1);
	seq_rm(&m, 8.5, 0, 9, -1); /* 2 of the 3 rejected */
	batch(&m, 9, 12, 0, (struct part_spec[]){ { 0, 3, 3, 9, true } }, 1);
	seq_rm(&m, 20, 0, -1, -1);
	model__add_process(&m, PID);
	assert_int_equal(requests__derive(&m), 0);
	assert_int_equal(m.requests.list.n, 1);
	assert_int_equal(m.requests.list.v[0].generated_tokens, 7);
	assert_int_equal(m.requests.list.v[0].prompt_tokens, 8);
	assert_int_equal(m.requests.list.v[0].pos_max, 11);
	assert_int_equal(m.requests.list.v[0].ended, MODEL_REQUEST_REMOVED);
	model__free(&m);
}

/* Steps whose time is 1 ms + 2 ms per 1,000 positions, exactly: the fit
 * finds the line; a run of few positions has no fit. */
static void test_context_fit(void **state)
{
	struct model_context_cost c;
	double x[200], y[200];
	(void)state;

	for (int i = 0; i < 200; i++) {
		x[i] = 100 + 10 * i;
		y[i] = 1 + 0.002 * x[i];
	}
	requests__fit_context(&c, x, y, 200);
	assert_true(c.present);
	assert_float_equal(c.slope_ms_per_1k, 2, 1e-9);
	assert_float_equal(c.intercept_ms, 1, 1e-9);
	assert_float_equal(c.r2, 1, 1e-9);
	assert_int_equal(c.pos_min, 100);
	assert_int_equal(c.pos_max, 2090);
	assert_true(c.last_ms > c.first_ms);
	requests__fit_context(&c, x, y, MODEL_CONTEXT_MIN_STEPS - 1);
	assert_false(c.present);
	for (int i = 0; i < 20; i++)
		x[i] = 100 + i % 4;
	requests__fit_context(&c, x, y, 20);
	assert_false(c.present);
}

/* The fit from a recording: single-token steps of one sequence whose time
 * grows with the position; shared prompt batches are no points. */
static void test_context_from_steps(void **state)
{
	struct model m;
	double t = 10;
	(void)state;

	new_model(&m);
	batch(&m, 0, 10, 0, (struct part_spec[]){ { 0, 64, 1, 0, true } }, 1);
	for (int pos = 64; pos < 64 + 100; pos++) {
		double d = 1 + 0.004 * pos;

		batch(&m, t, t + d, 0, (struct part_spec[]){ { 0, 1, 1, pos, true } }, 1);
		t += d + 0.5;
	}
	m.llama_facts.present = true;
	m.llama_facts.context.n_ctx = 256;
	assert_int_equal(requests__derive(&m), 0);
	assert_true(m.requests.context.present);
	assert_int_equal(m.requests.context.steps, 100);
	assert_float_equal(m.requests.context.slope_ms_per_1k, 4, 1e-3);
	assert_int_equal(m.requests.context.pos_reached, 163);
	assert_float_equal(m.requests.context.occupancy, 164.0 / 256, 1e-9);
	model__free(&m);
}

/* A generation of 96 steps after a 32-token prompt: each step's call
 * computes for compute(pos) ms and waits runq(i) ms for a CPU inside it;
 * 0.5 ms of sampling between calls. The thread's run_delay counter grows
 * by what it waited. */
static void generation(struct model *m, double (*compute)(int pos), double (*runq)(int i))
{
	struct model_requests *r = &m->requests;
	double t = 5, delay = 0;

	batch(m, 0, 4.5, 0, (struct part_spec[]){ { 0, 32, 1, 0, true } }, 1);
	for (int i = 0; i < 96; i++) {
		double w = runq(i), d = compute(32 + i) + w;

		batch(m, t, t + d, 0, (struct part_spec[]){ { 0, 1, 1, 32 + i, true } }, 1);
		r->batches.v[r->batches.n - 1].run_delay_ns = 1000 + (uint64_t)(delay * MS);
		delay += w;
		r->batches.v[r->batches.n - 1].end_run_delay_ns = 1000 + (uint64_t)(delay * MS);
		t += d + 0.5;
	}
	model__add_process(m, PID);
}

static double flat(int pos)
{
	(void)pos;
	return 2;
}

static double growing(int pos)
{
	return 1 + 0.02 * pos; /* 20 ms per 1,000 positions: +1.44 ms over the generation */
}

static double none(int i)
{
	(void)i;
	return 0;
}

static double hog_halfway(int i)
{
	return i < 48 ? 0 : 3; /* a CPU hog from the middle on: 3 ms a step */
}

/* The token rate's fall and its cause, each case built from one cause:
 * growing attention cost names context, a hog halfway names contention
 * (and the context fit, which takes the wait out, stays flat), neither
 * falls when nothing changes. */
static void test_rate_fall_verdicts(void **state)
{
	struct model m;
	const struct model_request *q;
	(void)state;

	new_model(&m);
	generation(&m, growing, none);
	assert_int_equal(requests__derive(&m), 0);
	q = &m.requests.list.v[0];
	assert_true(q->has_rate);
	assert_int_equal(q->rate_cause, MODEL_RATE_CONTEXT);
	assert_float_equal(m.requests.context.slope_ms_per_1k, 20, 1e-6);
	assert_true(q->rate_last < q->rate_first);
	assert_float_equal(q->context_ms, q->added_ms, 1e-6); /* steps 0.02 ms per position more, exactly */
	model__free(&m);

	new_model(&m);
	generation(&m, flat, hog_halfway);
	assert_int_equal(requests__derive(&m), 0);
	q = &m.requests.list.v[0];
	assert_int_equal(q->rate_cause, MODEL_RATE_CONTENTION);
	assert_float_equal(q->runq_added_ms, 3, 1e-6);
	assert_float_equal(q->added_ms, 3, 1e-6);
	assert_float_equal(q->runq_ms, 48 * 3, 1e-6);
	assert_float_equal(m.requests.context.slope_ms_per_1k, 0, 1e-6);
	model__free(&m);

	new_model(&m);
	generation(&m, flat, none);
	assert_int_equal(requests__derive(&m), 0);
	assert_int_equal(m.requests.list.v[0].rate_cause, MODEL_RATE_STEADY);
	assert_float_equal(m.requests.list.v[0].rate_first, 1e3 / 2.5, 1e-6);
	model__free(&m);
}

/* The slowest requests' causes: the one that ran while the CPU clock was
 * down (the side sampler's series) says so, the one in more crowded
 * batches too, and the one whose calls waited for a CPU. */
static void test_slow_request_causes(void **state)
{
	struct model m;
	struct side_series *ss = &m.side.series;
	char why[256];
	(void)state;

	new_model(&m);
	/* three requests one after another, 100 ms each; the second at half clock */
	for (int k = 0; k < 3; k++) {
		double t = 200.0 * k;

		batch(&m, t, t + 50, 0, (struct part_spec[]){ { 0, 16, 1, 0, true } }, 1);
		batch(&m, t + 50, t + 100, 0, (struct part_spec[]){ { 0, 1, 1, 16, true } }, 1);
		if (k == 2) { /* its calls waited 40 of its 100 ms for a CPU */
			m.requests.batches.v[m.requests.batches.n - 1].run_delay_ns = 1;
			m.requests.batches.v[m.requests.batches.n - 1].end_run_delay_ns = 1 + 40 * MS;
		}
		seq_rm(&m, t + 150, 0, -1, -1);
	}
	ss->cols.v = calloc(1, sizeof(*ss->cols.v));
	ss->ts = calloc(6, sizeof(*ss->ts));
	ss->v = calloc(6, sizeof(*ss->v));
	assert_non_null(ss->cols.v);
	assert_non_null(ss->ts);
	assert_non_null(ss->v);
	ss->cols.n = ss->cols.cap = 1;
	snprintf(ss->cols.v[0].series, sizeof(ss->cols.v[0].series), "cpu clock (MHz)");
	for (int row = 0; row < 6; row++) {
		ss->ts[row] = T0 + (uint64_t)(row * 100 + 50) * MS;
		ss->v[row] = row == 2 ? 1000 : 2000; /* 250 ms: inside the second request */
	}
	ss->nrows = 6;
	model__add_process(&m, PID);
	assert_int_equal(requests__derive(&m), 0);
	assert_int_equal(m.requests.list.n, 3);
	assert_float_equal(m.requests.list.v[1].clock_mhz, 1000, 1e-9);
	struct requests_medians md;

	requests_view__medians(&m, &md);
	requests_view__causes(&m, &md, &m.requests.list.v[1], why, sizeof(why));
	assert_non_null(strstr(why, "a slower CPU clock (1000 MHz, median 2000"));
	requests_view__causes(&m, &md, &m.requests.list.v[2], why, sizeof(why));
	assert_non_null(strstr(why, "CPU contention (its threads waited 40.0 ms for a CPU, 40% of it)"));
	requests_view__causes(&m, &md, &m.requests.list.v[0], why, sizeof(why));
	assert_string_equal(why, "");
	model__free(&m);
}

/* --rotate: a period's model keeps the requests that ended in it or go on;
 * after it is written, the batches before the first open request's start
 * are forgotten, and the next period derives the same open request. */
static void test_rotation_periods(void **state)
{
	struct model m;
	(void)state;

	new_model(&m);
	/* seq 0: a request from 0 to 20 ms, removed at 25; seq 1: 10 ms on, open */
	batch(&m, 0, 10, 0, (struct part_spec[]){ { 0, 4, 1, 0, true } }, 1);
	batch(&m, 10, 20, 0, (struct part_spec[]){ { 0, 1, 1, 4, true }, { 1, 6, 1, 0, true } }, 2);
	seq_rm(&m, 25, 0, -1, -1);
	batch(&m, 30, 40, 0, (struct part_spec[]){ { 1, 1, 1, 6, true } }, 1);
	model__add_process(&m, PID);
	/* the second period, from 28 ms: seq 0's request was written before */
	m.run.start_ns = T0 + 28 * MS;
	assert_int_equal(requests__derive(&m), 0);
	assert_int_equal(m.requests.list.n, 1);
	assert_int_equal(m.requests.list.v[0].seq, 1);
	assert_int_equal(m.requests.list.v[0].generated_tokens, 2);
	assert_int_equal(m.requests.list.v[0].ngaps, 1);
	/* forgetting before seq 1's start keeps its batches, parts in place */
	model_requests__forget_before(&m.requests, T0 + 10 * MS);
	assert_int_equal(m.requests.batches.n, 2);
	assert_int_equal(m.requests.parts.n, 3);
	assert_int_equal(m.requests.ends.n, 1);
	assert_int_equal(m.requests.parts.v[m.requests.batches.v[1].first_part].seq, 1);
	assert_int_equal(requests__derive(&m), 0);
	assert_int_equal(m.requests.list.n, 1);
	assert_int_equal(m.requests.list.v[0].prompt_tokens, 6);
	assert_int_equal(m.requests.list.v[0].generated_tokens, 2);
	model__free(&m);
}

/* requests[] and llama.requests written and read back: what report and
 * diff see is what record derived. */
static void test_profile_read_back(void **state)
{
	struct model m, back;
	json_t *p;
	(void)state;

	new_model(&m);
	batch(&m, 0, 10, 0, (struct part_spec[]){ { 0, 5, 1, 0, true }, { 1, 3, 1, 0, true } }, 2);
	batch(&m, 10, 14, 0, (struct part_spec[]){ { 0, 1, 1, 5, true }, { 1, 1, 1, 3, true } }, 2);
	batch(&m, 15, 19, 0, (struct part_spec[]){ { 0, 1, 1, 6, true } }, 1);
	model__add_process(&m, PID);
	assert_int_equal(requests__derive(&m), 0);
	p = json_pack("{s:o,s:o,s:[],s:[],s:{},s:{},s:[],s:{},s:[]}", "requests", model__section_json(&m, "requests"),
		      "llama", model__section_json(&m, "llama"), "bottlenecks", "recommendations", "system", "memory",
		      "crashes", "aggregate_metrics", "cycles");
	assert_non_null(p);
	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_true(back.requests.present);
	assert_int_equal(back.requests.list.n, 2);
	assert_int_equal(back.requests.list.v[0].generated_tokens, 3);
	assert_int_equal(back.requests.list.v[0].ngaps, 2);
	assert_float_equal(back.requests.gaps.v[back.requests.list.v[0].first_gap + 1], 5, 1e-9);
	assert_int_equal(back.requests.list.v[1].ended, MODEL_REQUEST_OPEN);
	assert_float_equal(back.requests.list.v[1].sharers_avg, 1, 1e-9);
	assert_int_equal(back.requests.generated_tokens, 5);
	assert_int_equal(back.requests.max_concurrent, 2);
	assert_float_equal(back.requests.ttft.p50, 10, 1e-9);
	assert_int_equal(back.requests.itl.n, 3);
	json_decref(p);
	model__free(&back);
	model__free(&m);
}

/* Per-cycle generated tokens from the batches' outputs (analysis/llama.c):
 * two prompts sharing a batch, then two shared decode steps and one alone
 * in cycle 1 (outputs 2 + 4 + 1 = 7, where one token plus one per
 * generation batch token would say 1 + 5 = 6); cycle 2 has a batch whose
 * tokens were not all read: the count falls back to that rule. */
static void test_cycle_generated_tokens_from_outputs(void **state)
{
	struct model m;
	struct model_cycle *c;
	(void)state;

	new_model(&m);
	m.phase_names[1] = strdup("llm_prompt");
	m.phase_names[2] = strdup("llm_generate");
	m.count_names[1] = strdup("prompt_tokens");
	m.count_names[2] = strdup("generated_tokens");
	batch(&m, 0, 10, 0, (struct part_spec[]){ { 0, 5, 1, 0, true }, { 1, 3, 1, 0, true } }, 2);
	batch(&m, 10, 14, 0, (struct part_spec[]){ { 0, 1, 1, 5, true }, { 1, 1, 1, 3, true } }, 2);
	batch(&m, 15, 19, 0, (struct part_spec[]){ { 0, 1, 1, 6, true }, { 1, 1, 1, 4, true } }, 2);
	batch(&m, 20, 22, 0, (struct part_spec[]){ { 0, 1, 1, 7, true } }, 1);
	batch(&m, 30, 36, 0, (struct part_spec[]){ { 1, 6, 1, 0, true } }, 1);
	batch(&m, 36, 38, 0, (struct part_spec[]){ { 1, 1, 1, 6, true } }, 1);
	m.requests.batches.v[m.requests.batches.n - 1].unread_tokens = 1;
	for (int i = 0; i < 2; i++) {
		c = model__add_cycle(&m, PID, (uint32_t)i + 1, T0 + (i ? 30 : 0) * MS, T0 + (i ? 40 : 25) * MS);
		assert_non_null(c);
		c->phases[1].present = c->phases[2].present = true;
		c->phases[1].calls = 1;
		c->phases[2].calls = i ? 1 : 3;
		c->has_count[1] = c->has_count[2] = true;
		c->counts[1] = i ? 6 : 8;
		c->counts[2] = i ? 1 : 5;
	}
	llama__derive(&m);
	assert_int_equal(m.cycles[0].llama.prompt_tokens, 8);
	assert_int_equal(m.cycles[0].llama.generated_tokens, 7);
	assert_int_equal(m.cycles[0].llama.generation_batches_tokens, 5);
	assert_int_equal(m.cycles[1].llama.generated_tokens, 2); /* 1 + 1: the fallback */
	assert_int_equal(m.llama.generated_tokens, 9);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_sequences_share_batches),
		cmocka_unit_test(test_batches_without_positions),
		cmocka_unit_test(test_kept_prefix_and_context_shift),
		cmocka_unit_test(test_speculative_draft_keeps_the_request),
		cmocka_unit_test(test_context_fit),
		cmocka_unit_test(test_rate_fall_verdicts),
		cmocka_unit_test(test_slow_request_causes),
		cmocka_unit_test(test_rotation_periods),
		cmocka_unit_test(test_context_from_steps),
		cmocka_unit_test(test_profile_read_back),
		cmocka_unit_test(test_cycle_generated_tokens_from_outputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
