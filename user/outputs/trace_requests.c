// SPDX-License-Identifier: BSD-2-Clause
/* trace.json's request tracks (trace_requests.h). */
#include <math.h>
#include <stdlib.h>

#include "trace_requests.h"

static uint64_t us_of(const struct model *m, uint64_t ns)
{
	return ns > m->run.start_ns ? (ns - m->run.start_ns) / 1000 : 0;
}

/* a figure, or null where there is none */
static void num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.3f", key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

static void slice(FILE *f, const struct model_request *q, const char *name, uint64_t b, uint64_t e, const char **sep)
{
	fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"request\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu",
		*sep, name, (int)q->pid, TRACE_REQUESTS_TID_BASE + q->seq, (unsigned long long)b,
		(unsigned long long)(e > b ? e - b : 0));
	*sep = ",\n";
}

void trace_requests__write(const struct model *m, FILE *f, const char **sep)
{
	const struct model_requests *r = &m->requests;

	for (size_t i = 0; i < r->list.n; i++) {
		const struct model_request *q = &r->list.v[i];
		bool named = false;
		uint64_t b = us_of(m, q->start_ns), e = us_of(m, q->end_ns), t = us_of(m, q->first_token_ns);

		if (!q->start_ns || q->seq < 0)
			continue; /* read back from a profile: no times to place it */
		for (size_t k = 0; k < i && !named; k++)
			named = r->list.v[k].pid == q->pid && r->list.v[k].seq == q->seq;
		if (!named) {
			fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
				"\"requests: seq %d\"}}", *sep, (int)q->pid, TRACE_REQUESTS_TID_BASE + q->seq, q->seq);
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,\"args\":"
				"{\"sort_index\":%d}}", (int)q->pid, TRACE_REQUESTS_TID_BASE + q->seq,
				TRACE_REQUESTS_TID_BASE + q->seq);
			*sep = ",\n";
		}
		slice(f, q, "request", b, e, sep);
		fprintf(f, ",\"args\":{\"seq\":%d,\"prompt_tokens\":%llu,\"cached_tokens\":%llu,\"generated_tokens\":%llu",
			q->seq, (unsigned long long)q->prompt_tokens, (unsigned long long)q->cached_tokens,
			(unsigned long long)q->generated_tokens);
		num(f, "ttft_ms", q->ttft_ms);
		num(f, "duration_ms", q->duration_ms);
		num(f, "tokens_per_s", q->tokens_per_s);
		num(f, "itl_p95_ms", q->itl_p95_ms);
		num(f, "sharers_avg", q->sharers_avg);
		fprintf(f, ",\"ended_by\":\"%s\"}}", model_request__end_name(q->ended));
		if (!q->first_token_ns) {
			slice(f, q, "prefill", b, e, sep);
			fputs("}", f);
			continue;
		}
		slice(f, q, "prefill", b, t, sep);
		fputs("}", f);
		if (e > t) {
			slice(f, q, "decode", t, e, sep);
			fputs("}", f);
		}
	}
}
