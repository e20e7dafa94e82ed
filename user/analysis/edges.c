// SPDX-License-Identifier: BSD-2-Clause
/*
 * Start-up and tear-down: the recording before the first cycle and after the
 * last, reported apart from the cycles (whose figures the verdicts use). Each
 * has its wall time, its on-CPU samples and their top leaf functions; start-up
 * also its scheduler split (time in no cycle, all the processes' threads).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model.h"

#define EDGE_TOP 5

struct leaf_count {
	int32_t frame;
	uint64_t n;
};

static int by_count(const void *a, const void *b)
{
	const struct leaf_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->frame - y->frame;
}

/* Samples in [from, to) and their top leaves; counts[] is scratch, one per name. */
static json_t *edge_json(const struct model *m, uint64_t from, uint64_t to, uint64_t *counts)
{
	json_t *o = json_object(), *top = json_array();
	struct leaf_count *lc;
	uint64_t n = 0;
	size_t nl = 0;

	memset(counts, 0, (m->nnames + 1) * sizeof(*counts));
	for (size_t i = 0; i < m->ntrace_samples; i++) {
		const struct model_trace_sample *s = &m->trace_samples[i];

		if (s->ts_ns < from || s->ts_ns >= to)
			continue;
		n++;
		/* an unnamed leaf counts under the extra last slot */
		counts[s->frame >= 0 && (size_t)s->frame < m->nnames ? (size_t)s->frame : m->nnames]++;
	}
	json_object_set_new(o, "ms", json_real((double)(to - from) / 1e6));
	json_object_set_new(o, "samples", json_integer((json_int_t)n));
	lc = calloc(m->nnames + 1, sizeof(*lc));
	if (lc) {
		for (size_t i = 0; i <= m->nnames; i++)
			if (counts[i])
				lc[nl++] = (struct leaf_count){ (int32_t)i, counts[i] };
		qsort(lc, nl, sizeof(*lc), by_count);
		for (size_t i = 0; i < nl && i < EDGE_TOP; i++)
			json_array_append_new(top, json_pack("{s:s,s:I,s:f}", "name",
				(size_t)lc[i].frame < m->nnames ? m->names[lc[i].frame] : "[unknown]",
				"samples", (json_int_t)lc[i].n, "percent", 100.0 * (double)lc[i].n / (double)n));
		free(lc);
	}
	json_object_set_new(o, "top_functions", top);
	return o;
}

void edges__derive(struct model *m)
{
	uint64_t first = UINT64_MAX, last = 0, *counts;
	json_t *o, *start;

	if (m->run_edges || !m->ncycles || !m->run.end_ns)
		return; /* loaded from a profile, or nothing to split */
	for (size_t i = 0; i < m->ncycles; i++) {
		if (m->cycles[i].start_ns < first)
			first = m->cycles[i].start_ns;
		if (m->cycles[i].end_ns > last)
			last = m->cycles[i].end_ns;
	}
	if (first < m->run.start_ns || last > m->run.end_ns || first > last)
		return;
	counts = calloc(m->nnames + 1, sizeof(*counts));
	if (!counts)
		return;
	o = json_object();
	start = edge_json(m, m->run.start_ns, first, counts);
	if (m->sched.has_startup) {
		double on = m->sched.startup_oncpu_ms, rq = m->sched.startup_runq_ms;

		json_object_set_new(start, "oncpu_ms", json_real(on));
		json_object_set_new(start, "runq_wait_ms", json_real(rq));
		json_object_set_new(start, "runq_share_percent", json_real(on + rq > 0 ? 100 * rq / (on + rq) : 0));
	}
	json_object_set_new(o, "startup", start);
	json_object_set_new(o, "teardown", edge_json(m, last, m->run.end_ns, counts));
	free(counts);
	m->run_edges = o;
}
