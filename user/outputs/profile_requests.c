// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's requests[] (one per request a llama.cpp server served),
 * llama.requests (their distributions) and llama.context_slope. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T struct model_request_dist
JF_TABLE(dist_table, JF("n", JF_U64, n), JF("mean", JF_REAL, mean), JF("p50", JF_REAL, p50),
	 JF("p95", JF_REAL, p95), JF("p99", JF_REAL, p99), JF("max", JF_REAL, max));
#undef JF_T

#define JF_T struct model_request
static int ended_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_request *q = base;

	(void)ctx;
	return profile__set(o, key, json_string(model_request__end_name(q->ended)));
}

static int ended_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_request *q = base;
	const char *s = json_string_value(json_object_get(o, key));

	(void)ctx;
	for (int e = 0; s && e < MODEL_REQUEST_ENDS; e++)
		if (!strcmp(s, model_request__end_name(e)))
			q->ended = (uint8_t)e;
	return 0;
}

static int cause_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_request *q = base;

	(void)ctx;
	return profile__set(o, key, json_string(model_request__rate_cause_name(q->rate_cause)));
}

static int cause_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_request *q = base;
	const char *s = json_string_value(json_object_get(o, key));

	(void)ctx;
	for (int c = 0; s && c < MODEL_RATE_CAUSES; c++)
		if (!strcmp(s, model_request__rate_cause_name(c)))
			q->rate_cause = (uint8_t)c;
	return 0;
}

JF_TABLE(rate_table, JF("first_tokens_per_s", JF_REAL, rate_first), JF("last_tokens_per_s", JF_REAL, rate_last),
	 JF_FNS("cause", cause_write, cause_read), JF("added_ms", JF_REAL, added_ms),
	 JF("context_ms", JF_REAL, context_ms), JF("runq_added_ms", JF_REAL, runq_added_ms),
	 JF("clock_drop_pct", JF_REAL, clock_drop_pct), JF("majflt_first", JF_REAL, majflt_first),
	 JF("majflt_last", JF_REAL, majflt_last));
JF_TABLE(itl_table, JF("p50", JF_REAL, itl_p50_ms), JF("p95", JF_REAL, itl_p95_ms), JF("p99", JF_REAL, itl_p99_ms),
	 JF("max", JF_REAL, itl_max_ms));
JF_TABLE(sharers_table, JF("avg", JF_REAL, sharers_avg), JF("max", JF_U32, sharers_max));
JF_TABLE(profile_request_table, JF("pid", JF_INT, pid), JF("tid", JF_INT, tid), JF("seq", JF_INT, seq),
	 JF("start_ms", JF_REAL, start_ms), JF("prompt_tokens", JF_U64, prompt_tokens),
	 JF("cached_tokens", JF_U64, cached_tokens), JF("generated_tokens", JF_U64, generated_tokens),
	 JF("batches", JF_U64, batches), JF("prefill_batches", JF_U64, prefill_batches),
	 JF("prefill_ms", JF_REAL, prefill_ms), JF("ttft_ms", JF_REAL, ttft_ms), JF("decode_ms", JF_REAL, decode_ms),
	 JF("duration_ms", JF_REAL, duration_ms), JF("tokens_per_s", JF_REAL, tokens_per_s),
	 JF_GROUP("itl_ms", itl_table), JF_GROUP("sharers", sharers_table), JF("pos_max", JF_INT, pos_max),
	 JF_FNS("ended_by", ended_write, ended_read), JF("runq_ms", JF_REAL, runq_ms),
	 JF("clock_mhz", JF_REAL, clock_mhz, .flags = JF_OMIT),
	 JF("majflt", JF_U64, majflt), JF_GROUP("rate", rate_table, JF_WHEN(has_rate)));
#undef JF_T

/* requests[]: each with each gap between two outputs, in order (the model
 * pools them) */
int profile_requests__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	const struct model_requests *r = &m->requests;
	json_t *list, *q, *g;

	if (!r->present)
		return 0;
	list = json_array();
	for (size_t i = 0; list && i < r->list.n; i++) {
		const struct model_request *e = &r->list.v[i];

		q = jf_object(&profile_request_table, e, ctx);
		g = json_array();
		for (uint64_t k = 0; g && k < e->ngaps && e->first_gap + k < r->gaps.n; k++)
			if (json_array_append_new(g, json_real(round(r->gaps.v[e->first_gap + k] * 1000) / 1000)))
				json_decref(g), g = NULL;
		if (!q || !g || json_object_set_new(q, "token_gaps_ms", g) || json_array_append_new(list, q)) {
			json_decref(g);
			json_decref(q);
			json_decref(list);
			list = NULL;
		}
	}
	return profile__set(o, key, list);
}

int profile_requests__read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_requests *r = &((struct model *)base)->requests;
	json_t *list = json_object_get(o, key), *q, *v;
	size_t i, k;

	if (!json_is_array(list))
		return 0;
	r->present = true;
	json_array_foreach(list, i, q) {
		struct model_request e;

		if (VEC_RESERVE(r->list.v, r->list.cap, r->list.n, 32) || jf_read(&profile_request_table, &e, q, ctx))
			return -ENOMEM;
		e.first_gap = r->gaps.n;
		e.ngaps = 0;
		json_array_foreach(json_object_get(q, "token_gaps_ms"), k, v) {
			if (!json_is_number(v))
				continue;
			if (VEC_RESERVE(r->gaps.v, r->gaps.cap, r->gaps.n, 64))
				return -ENOMEM;
			r->gaps.v[r->gaps.n++] = json_number_value(v);
			e.ngaps++;
		}
		r->list.v[r->list.n++] = e;
	}
	return 0;
}

#define JF_T struct model_context_cost
JF_TABLE(context_table, JF("steps", JF_U64, steps), JF("ms_per_1k_tokens", JF_REAL, slope_ms_per_1k),
	 JF("intercept_ms", JF_REAL, intercept_ms), JF("r2", JF_REAL, r2), JF("pos_min", JF_INT, pos_min),
	 JF("pos_max", JF_INT, pos_max), JF("first_tenth_ms", JF_REAL, first_ms), JF("last_tenth_ms", JF_REAL, last_ms),
	 JF("pos_reached", JF_INT, pos_reached), JF("n_ctx", JF_U32, n_ctx, .flags = JF_OMIT),
	 JF("occupancy", JF_REAL, occupancy, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_requests
static int count_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)ctx;
	return profile__set(o, key, json_integer((json_int_t)((const struct model_requests *)base)->list.n));
}

JF_TABLE(summary_table, JF_FNS("count", count_write, NULL), JF("prompt_tokens", JF_U64, prompt_tokens),
	 JF("generated_tokens", JF_U64, generated_tokens), JF("batches", JF_U64, batches_seen),
	 JF("batches_incomplete", JF_U64, batches_incomplete), JF("shared_batches", JF_U64, shared_batches),
	 JF("max_concurrent", JF_U32, max_concurrent), JF("other_seq_tokens", JF_U64, other_seq_tokens),
	 JF("multi_seq_tokens", JF_U64, multi_seq_tokens), JF("unread_tokens", JF_U64, unread_tokens),
	 JF("ttft_ms", JF_OBJ, ttft, .sub = &dist_table), JF("itl_ms", JF_OBJ, itl, .sub = &dist_table),
	 JF("duration_ms", JF_OBJ, duration, .sub = &dist_table), JF("prefill_ms", JF_OBJ, prefill, .sub = &dist_table),
	 JF("tokens_per_s", JF_OBJ, tokens_per_s, .sub = &dist_table),
	 JF("prompt", JF_OBJ, prompt, .sub = &dist_table), JF("generated", JF_OBJ, generated, .sub = &dist_table));
#undef JF_T

int profile_requests__summary_write(const struct model *m, json_t *llama)
{
	const struct model_requests *r = &m->requests;
	json_t *v;

	if (!r->present)
		return 0;
	v = jf_object(&summary_table, r, m);
	if (!v || json_object_set_new(llama, "requests", v))
		return -ENOMEM;
	v = jf_object(&context_table, &r->context, m);
	if (!v || json_object_set_new(llama, "context_slope", v))
		return -ENOMEM;
	return 0;
}

int profile_requests__summary_read(struct model *m, json_t *llama)
{
	struct model_requests *r = &m->requests;
	json_t *s = json_object_get(llama, "requests"), *c = json_object_get(llama, "context_slope");

	if (!json_is_object(s))
		return 0;
	r->present = true;
	/* the list (requests[]) is read on its own; its gaps are in it */
	{
		struct model_requests tmp = { 0 };

		jf_read(&summary_table, &tmp, s, m);
		tmp.list = r->list;
		tmp.gaps = r->gaps;
		tmp.present = true;
		*r = tmp;
	}
	jf_read(&context_table, &r->context, c, m);
	r->context.present = json_is_object(c) && json_is_number(json_object_get(c, "ms_per_1k_tokens"));
	return 0;
}
