// SPDX-License-Identifier: BSD-2-Clause
/* llama.cpp's figures, per cycle and over the cycles, from what the preset
 * measured: the llm_prompt and llm_generate phases (llama_decode calls by
 * batch size) and the prompt_tokens / generated_tokens counts (tokens of
 * those batches, not calls).
 *
 * prefill_ms is the wall time from the cycle's first prompt batch to its
 * first generation batch (the first token's sampling included), decode_ms
 * from there to the last generation batch's return: together what a driver
 * times as "prompt, then generation". Without per-call times (events lost)
 * they fall back to the phases' summed call times. generated_tokens counts
 * the outputs of the cycle's batches (each sequence's first token from its
 * prompt's batch, then one per sequence and step), read from the batches'
 * events; without them, the prompt's one token plus one per generation
 * batch token: the last token sampled is never decoded. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "requests.h"

#define PROMPT_PHASE "llm_prompt"
#define GENERATE_PHASE "llm_generate"
#define PROMPT_COUNT "prompt_tokens"
#define GENERATE_COUNT "generated_tokens"

static double per_s(double n, double ms)
{
	return ms > 0 ? n / (ms / 1000.0) : NAN;
}

static void rates(struct model_llama_cycle *l)
{
	l->prefill_tokens_per_s = per_s((double)l->prompt_tokens, l->prefill_ms);
	l->decode_tokens_per_s = per_s((double)l->generation_batches_tokens, l->decode_ms);
}

/* First prompt entry, first generation entry, last returns, over the calls
 * the model kept of (pid, cycle). */
static bool windows(const struct model *m, const struct model_cycle *c, int pp, int gp, double *prefill,
		    double *decode)
{
	uint64_t p_in = UINT64_MAX, p_out = 0, g_in = UINT64_MAX, g_out = 0;
	uint64_t np = 0, ng = 0;

	for (size_t i = 0; i < m->ncalls; i++) {
		const struct model_phase_call *k = &m->calls[i];

		if (k->tgid != c->pid || k->bpf_cycle != c->bpf_cycle)
			continue;
		if ((int)k->phase == pp) {
			np++;
			p_in = k->entry_ns < p_in ? k->entry_ns : p_in;
			p_out = k->exit_ns > p_out ? k->exit_ns : p_out;
		} else if ((int)k->phase == gp) {
			ng++;
			g_in = k->entry_ns < g_in ? k->entry_ns : g_in;
			g_out = k->exit_ns > g_out ? k->exit_ns : g_out;
		}
	}
	if (np != c->phases[pp].calls || (gp > 0 && c->phases[gp].present && ng != c->phases[gp].calls))
		return false;
	if (!ng) {
		*prefill = (p_out - p_in) / 1e6;
		*decode = 0;
	} else {
		*prefill = g_in > p_in ? (g_in - p_in) / 1e6 : 0;
		*decode = (g_out - g_in) / 1e6;
	}
	return true;
}

/* The outputs of the batches that pid began in [from, to): false when a
 * batch there had tokens not read (its outputs are not all known) or none
 * began there. order: the batches by start. */
static bool batch_outputs(const struct model_requests *r, const uint32_t *order, pid_t pid, uint64_t from,
			  uint64_t to, uint64_t *outputs)
{
	size_t lo = 0, hi = r->batches.n;
	bool any = false;

	*outputs = 0;
	while (lo < hi) { /* the first batch starting at or after from */
		size_t mid = lo + (hi - lo) / 2;

		if (r->batches.v[order[mid]].start_ns < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < r->batches.n && r->batches.v[order[i]].start_ns < to; i++) {
		const struct model_llama_batch *b = &r->batches.v[order[i]];

		if (b->pid != pid)
			continue;
		if (b->unread_tokens)
			return false;
		for (uint32_t k = 0; k < b->nparts; k++)
			*outputs += r->parts.v[b->first_part + k].outputs;
		any = true;
	}
	return any;
}

void llama__derive(struct model *m)
{
	int pp = model__phase_id(m, PROMPT_PHASE), gp = model__phase_id(m, GENERATE_PHASE);
	int pc = model__count_id(m, PROMPT_COUNT), gc = model__count_id(m, GENERATE_COUNT);
	struct model_llama_cycle *a = &m->llama;

	uint32_t *order;

	memset(a, 0, sizeof(*a));
	if (pp <= 0 || gp <= 0 || pc <= 0 || gc <= 0)
		return;
	order = requests__batch_order(&m->requests); /* NULL: the counts' rule */
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct model_llama_cycle *l = &c->llama;

		memset(l, 0, sizeof(*l));
		if (!c->phases[pp].present) /* no prompt: not a llama.cpp cycle */
			continue;
		l->present = true;
		l->prompt_tokens = c->has_count[pc] ? c->counts[pc] : 0;
		l->generation_batches_tokens = c->has_count[gc] ? c->counts[gc] : 0;
		if (!order || !batch_outputs(&m->requests, order, c->pid, c->start_ns, c->end_ns, &l->generated_tokens))
			l->generated_tokens = l->generation_batches_tokens + 1;
		if (!windows(m, c, pp, gp, &l->prefill_ms, &l->decode_ms)) {
			l->prefill_ms = c->phases[pp].ms;
			l->decode_ms = c->phases[gp].present ? c->phases[gp].ms : 0;
		}
		rates(l);
		/* the cycle's tokens/s: generated tokens over prompt + generation,
		 * and over the whole cycle as the experiment sees it */
		c->tokens_per_second = per_s((double)l->generated_tokens, l->prefill_ms + l->decode_ms);
		c->tokens_per_second_wall = per_s((double)l->generated_tokens, c->duration_ms);
		a->present = true;
		a->prompt_tokens += l->prompt_tokens;
		a->generated_tokens += l->generated_tokens;
		a->generation_batches_tokens += l->generation_batches_tokens;
		a->prefill_ms += l->prefill_ms;
		a->decode_ms += l->decode_ms;
	}
	free(order);
	if (a->present)
		rates(a);
	llama__energy(m);
}

void llama__energy(struct model *m)
{
	double joules = 0;
	uint64_t tokens = 0;

	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct model_llama_cycle *l = &c->llama;

		l->j_per_generated_token = NAN;
		if (!l->present || !l->generated_tokens || !c->energy.present || !isfinite(c->energy.total_j))
			continue;
		l->j_per_generated_token = c->energy.total_j / (double)l->generated_tokens;
		joules += c->energy.total_j;
		tokens += l->generated_tokens;
	}
	m->llama.j_per_generated_token = tokens ? joules / (double)tokens : NAN;
}
