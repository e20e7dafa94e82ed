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
static void edge_of(struct model *m, uint64_t from, uint64_t to, uint64_t *counts, struct model_edge *e)
{
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
	*e = (struct model_edge){ .ms = (double)(to - from) / 1e6, .samples = n };
	lc = calloc(m->nnames + 1, sizeof(*lc));
	if (!lc)
		return;
	for (size_t i = 0; i <= m->nnames; i++)
		if (counts[i])
			lc[nl++] = (struct leaf_count){ (int32_t)i, counts[i] };
	qsort(lc, nl, sizeof(*lc), by_count);
	for (size_t i = 0; i < nl && i < MODEL_EDGE_TOP; i++) {
		int32_t name = (size_t)lc[i].frame < m->nnames ? lc[i].frame : model__intern(m, "[unknown]");

		e->top[e->ntop++] = (struct model_edge_top){ name, lc[i].n, 100.0 * (double)lc[i].n / (double)n };
	}
	free(lc);
}

void edges__derive(struct model *m)
{
	uint64_t first = UINT64_MAX, last = 0, *counts;

	if (m->edges.present || !m->ncycles || !m->run.end_ns)
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
	edge_of(m, m->run.start_ns, first, counts, &m->edges.startup);
	if (m->sched.has_startup) {
		struct model_edge *e = &m->edges.startup;
		double on = m->sched.startup_oncpu_ms, rq = m->sched.startup_runq_ms;

		e->has_split = true;
		e->oncpu_ms = on;
		e->runq_wait_ms = rq;
		e->runq_share_percent = on + rq > 0 ? 100 * rq / (on + rq) : 0;
	}
	edge_of(m, last, m->run.end_ns, counts, &m->edges.teardown);
	free(counts);
	m->edges.present = true;
}
