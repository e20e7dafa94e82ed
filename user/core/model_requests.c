// SPDX-License-Identifier: BSD-2-Clause
/* Owning the requests' part of the model (model_requests.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_requests.h"

void model_requests__clear_derived(struct model_requests *r)
{
	free(r->list.v);
	free(r->gaps.v);
	memset(&r->list, 0, sizeof(r->list));
	memset(&r->gaps, 0, sizeof(r->gaps));
}

void model_requests__free(struct model_requests *r)
{
	model_requests__clear_derived(r);
	free(r->batches.v);
	free(r->parts.v);
	free(r->ends.v);
	memset(r, 0, sizeof(*r));
}

int model_requests__copy(struct model_requests *dst, const struct model_requests *src)
{
	*dst = *src;
	memset(&dst->batches, 0, sizeof(dst->batches));
	memset(&dst->parts, 0, sizeof(dst->parts));
	memset(&dst->ends, 0, sizeof(dst->ends));
	memset(&dst->list, 0, sizeof(dst->list));
	memset(&dst->gaps, 0, sizeof(dst->gaps));
	if (VEC_DUP(dst->batches, src->batches) || VEC_DUP(dst->parts, src->parts) || VEC_DUP(dst->ends, src->ends) ||
	    VEC_DUP(dst->list, src->list) || VEC_DUP(dst->gaps, src->gaps)) {
		model_requests__free(dst);
		return -ENOMEM;
	}
	return 0;
}

void model_requests__forget_before(struct model_requests *r, uint64_t ns)
{
	size_t w = 0, wp = 0;

	for (size_t i = 0; i < r->batches.n; i++) {
		struct model_llama_batch b = r->batches.v[i];

		if (b.start_ns < ns)
			continue;
		/* parts are in batch order: moving them down keeps them apart */
		memmove(&r->parts.v[wp], &r->parts.v[b.first_part], b.nparts * sizeof(*r->parts.v));
		b.first_part = (uint32_t)wp;
		wp += b.nparts;
		r->batches.v[w++] = b;
	}
	r->batches.n = w;
	r->parts.n = wp;
	w = 0;
	for (size_t i = 0; i < r->ends.n; i++)
		if (r->ends.v[i].ts_ns >= ns)
			r->ends.v[w++] = r->ends.v[i];
	r->ends.n = w;
}

const char *model_request__end_name(enum model_request_end e)
{
	static const char *const names[MODEL_REQUEST_ENDS] = { "open", "removed", "restart", "exit" };

	return (unsigned)e < MODEL_REQUEST_ENDS ? names[e] : "open";
}

const char *model_request__rate_cause_name(enum model_rate_cause c)
{
	static const char *const names[MODEL_RATE_CAUSES] = { "steady", "context", "cpu_contention",
							       "memory_pressure", "thermal_or_power", "unexplained" };

	return (unsigned)c < MODEL_RATE_CAUSES ? names[c] : "steady";
}
