// SPDX-License-Identifier: BSD-2-Clause
/* The requests a llama.cpp server (or any program on libllama) serves, in
 * the model: what each llama_decode batch held of each sequence and when
 * sequences were removed (the llama concern fills these from
 * IT_EV_LLAMA_BATCH and IT_EV_LLAMA_SEQ_END), and the requests derived
 * from them (analysis/requests.c): per request its prompt, prefill, first
 * token, generated tokens and the gaps between them, and the batches it
 * shared; over the run their percentiles and how a token's cost grows with
 * the context. A part of model.h: include model.h. */
#ifndef INFERTRACE_MODEL_REQUESTS_H
#define INFERTRACE_MODEL_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vec.h"

/* One sequence's part of a batch (struct it_llama_seq_part). */
struct model_llama_part {
	int32_t seq;
	uint32_t tokens, outputs;
	int32_t pos_min, pos_max; /* -1: the batch had no positions */
	bool last_output;
};

/* One llama_decode call. */
struct model_llama_batch {
	pid_t pid, tid;
	uint64_t start_ns, end_ns;  /* end_ns 0: its return was not seen */
	uint32_t n_tokens, flags;   /* IT_LLAMA_BATCH_* */
	uint32_t unread_tokens;     /* tokens whose sequence was not read */
	uint32_t other_seq_tokens, multi_seq_tokens;
	uint32_t first_part, nparts; /* in model_requests.parts */
	uint64_t run_delay_ns, majflt; /* the calling thread's, so far, at the call */
	uint64_t end_run_delay_ns;     /* and at its return */
};

/* A removal of a sequence's positions [p0, p1) (seq -1: every sequence). */
struct model_llama_seq_end {
	pid_t pid;
	uint64_t ts_ns;
	int32_t seq, p0, p1;
};

/* How a request ended. */
enum model_request_end {
	MODEL_REQUEST_OPEN,     /* still going when the recording ended */
	MODEL_REQUEST_REMOVED,  /* its sequence was removed (llama_memory_seq_rm, a memory clear) */
	MODEL_REQUEST_RESTART,  /* its sequence started again at position 0 */
	MODEL_REQUEST_EXIT,     /* the process ended */
	MODEL_REQUEST_ENDS,
};

/* One request: a sequence from its first prompt batch to its end. Times in
 * ms; the batch shares split each batch's time among its sequences by
 * their tokens in it. */
struct model_request {
	pid_t pid, tid;             /* tid: the thread of its first batch */
	int32_t seq;
	uint64_t start_ns, first_token_ns, end_ns; /* tracer clock; first_token_ns 0: none */
	uint64_t ended_ns;          /* when its end was seen (a removal, a restart, the data's end) */
	double start_ms;            /* from the recording's (period's) start; below 0: before it */
	uint64_t prompt_tokens;     /* tokens it fed without taking an output */
	uint64_t cached_tokens;     /* positions before its first batch (a kept prefix) */
	uint64_t generated_tokens;  /* outputs it took: the first from its prompt's last batch */
	uint64_t batches, prefill_batches;
	double prefill_ms;          /* its share of its prompt batches */
	double ttft_ms;             /* first prompt batch's start to the end of the batch giving its first token */
	double decode_ms;           /* its share of the batches after */
	double duration_ms;         /* first batch's start to last batch's end */
	double tokens_per_s;        /* outputs after the first over the time from the first to the last */
	double itl_p50_ms, itl_p95_ms, itl_p99_ms, itl_max_ms; /* gaps between its outputs */
	double sharers_avg;         /* other sequences in its batches, on average */
	uint32_t sharers_max;
	int32_t pos_max;            /* the last position it reached; -1 unknown */
	uint8_t ended;              /* enum model_request_end */
	uint64_t first_gap, ngaps;  /* its gaps in model_requests.gaps */
	double runq_ms;             /* its batches' threads waited for a CPU during its calls */
	double clock_mhz;           /* the mean CPU clock the side sampler read during it; NAN none */
	uint64_t majflt;            /* major faults of those threads from its first batch on */
	/* its token rate in the first and the last quarter of its gaps
	 * (MODEL_RATE_MIN_GAPS or more; NAN otherwise), and when it fell by
	 * MODEL_RATE_FALL or more, which cause the evidence fits */
	bool has_rate;
	double rate_first, rate_last;
	uint8_t rate_cause;         /* enum model_rate_cause */
	double added_ms;            /* time per token added from the first quarter to the last */
	double context_ms, runq_added_ms, clock_drop_pct; /* the evidence, per token */
	double majflt_first, majflt_last; /* major faults per token in those quarters */
};

/* Why a request's token rate fell over its generation. */
enum model_rate_cause {
	MODEL_RATE_STEADY,        /* did not fall by MODEL_RATE_FALL (or too few gaps) */
	MODEL_RATE_CONTEXT,       /* the context fit's growth explains most of it */
	MODEL_RATE_CONTENTION,    /* run-queue wait explains most of it */
	MODEL_RATE_MEMORY,        /* major faults grew */
	MODEL_RATE_THERMAL,       /* the CPU clock fell (thermal or power limit) */
	MODEL_RATE_UNEXPLAINED,
	MODEL_RATE_CAUSES,
};

#define MODEL_RATE_MIN_GAPS 32
#define MODEL_RATE_FALL 0.15       /* the last quarter's rate 15% under the first's */
#define MODEL_RATE_EXPLAINS 0.5    /* a cause explains half the added time or more */

/* Percentiles of one figure over the requests (NAN: none). */
struct model_request_dist {
	double p50, p95, p99, max, mean;
	uint64_t n;
};

/* How a single-token step's time grows with the context it attends to:
 * batch time per sequence against the sequences' mean position, fitted
 * over the batches where every sequence fed one token. */
struct model_context_cost {
	bool present;               /* enough steps (MODEL_CONTEXT_MIN_STEPS) over MODEL_CONTEXT_MIN_SPAN positions */
	uint64_t steps;
	double slope_ms_per_1k;     /* ms per token per 1,000 positions of context */
	double intercept_ms;        /* at position 0 */
	double r2;                  /* of the fit */
	int32_t pos_min, pos_max;   /* the positions fitted */
	double first_ms, last_ms;   /* mean step time in the first and last tenth of positions */
	int32_t pos_reached;        /* the highest position a request reached; -1 none */
	uint32_t n_ctx;             /* the context's size (0 unknown) */
	double occupancy;           /* pos_reached + 1 over n_ctx; NAN unknown */
};

#define MODEL_CONTEXT_MIN_STEPS 8
/* positions the fitted steps must span: a few tokens' spread says nothing */
#define MODEL_CONTEXT_MIN_SPAN 16

struct model_requests {
	bool present;               /* llama.cpp batches were seen (or read back) */
	/* as recorded (not written; a profile read back has none) */
	VEC_OF(struct model_llama_batch) batches;
	VEC_OF(struct model_llama_part) parts;
	VEC_OF(struct model_llama_seq_end) ends;
	/* derived */
	VEC_OF(struct model_request) list;
	VEC_OF(double) gaps;        /* every request's output gaps, ms, request by request */
	uint64_t prompt_tokens, generated_tokens;
	uint64_t batches_seen, batches_incomplete; /* incomplete: no return seen */
	uint64_t shared_batches;    /* batches of two or more sequences */
	uint64_t other_seq_tokens, multi_seq_tokens, unread_tokens;
	uint32_t max_concurrent;    /* sequences in one batch, at most */
	struct model_request_dist ttft, itl, duration, prefill, tokens_per_s, prompt, generated;
	struct model_context_cost context;
};

void model_requests__free(struct model_requests *r);
/* Empties what derive computes from the recorded batches. */
void model_requests__clear_derived(struct model_requests *r);
int model_requests__copy(struct model_requests *dst, const struct model_requests *src);
/* Drops the recorded batches that began before ns and the removals before
 * it (--rotate: what earlier periods wrote, once no request open at their
 * end began before ns). */
void model_requests__forget_before(struct model_requests *r, uint64_t ns);
/* "open", "removed", ... */
const char *model_request__end_name(enum model_request_end e);
/* "steady", "context", "cpu_contention", ... */
const char *model_request__rate_cause_name(enum model_rate_cause c);

#endif
