// SPDX-License-Identifier: BSD-2-Clause
/* Memory concern: RSS of the followed processes from kmem:rss_stat (see
 * bpf/memory.bpf.c), sampled for a bounded timeline every tick, peaks per
 * process and per cycle. (Page faults are counted with the scheduler's
 * on-CPU time: the sched concern's.) Fills the model's `memory` section, peak and each cycle's RSS; the
 * growth across cycles is derived from those (analysis/derive.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "sched_logic.h"
#include "stats.h"
#include "vec.h"

#define TIMELINE_MAX 512
#define MB (1024.0 * 1024.0)

struct mem_state {
	bool enabled;
	uint64_t *t;   /* ns since the recording began */
	double *mb;    /* summed RSS of the live followed processes */
	size_t n, cap;
	/* a long run's timeline stays within TIMELINE_HELD points: when full,
	 * pairs of points become one (their peak) and each later point is the
	 * peak of `stride` ticks, so the points stay evenly spaced in time */
	unsigned int stride, pending;
	uint64_t pending_t;
	double pending_mb;
};

#define TIMELINE_HELD 32768

/* True when the tick's point is folded into a later one (not added now). */
static bool fold_point(struct mem_state *ms, uint64_t t, double mb)
{
	if (!ms->stride)
		ms->stride = 1;
	if (ms->n >= TIMELINE_HELD) {
		size_t w = 0;

		for (size_t i = 0; i + 1 < ms->n; i += 2, w++) {
			ms->t[w] = ms->mb[i] >= ms->mb[i + 1] ? ms->t[i] : ms->t[i + 1];
			ms->mb[w] = ms->mb[i] >= ms->mb[i + 1] ? ms->mb[i] : ms->mb[i + 1];
		}
		ms->n = w;
		ms->stride *= 2;
	}
	if (!ms->pending || mb > ms->pending_mb)
		ms->pending_t = t, ms->pending_mb = mb;
	if (++ms->pending < ms->stride)
		return true;
	ms->pending = 0;
	return false;
}


static int memory_configure(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;

	rec->memory = calloc(1, sizeof(*rec->memory));
	if (!rec->memory)
		return -ENOMEM;
	s->rodata->cfg_page_size = sysconf(_SC_PAGESIZE);
	rec->memory->enabled = tracer__have_tracepoint("kmem", "rss_stat");
	if (!rec->memory->enabled) {
		bpf_program__set_autoload(s->progs.mem_on_rss_stat, false);
		fprintf(stderr, "infertrace: note: this kernel lacks kmem:rss_stat; RSS is read at "
			"context switches and scheduler ticks only\n");
	}
	return 0;
}

static int memory_attach(struct recording *rec)
{
	struct bpf_program *p = rec->tracer.skel->progs.mem_on_rss_stat;

	if (!rec->memory->enabled)
		return 0;
	return tracer__attach_loaded(&rec->tracer, &p, 1);
}

static bool mem_lookup(int fd, __u32 tgid, __u32 cycle, struct it_mem_value *v)
{
	struct it_mem_key k = { .tgid = tgid, .cycle = cycle };

	return bpf_map_lookup_elem(fd, &k, v) == 0;
}

/* Summed RSS of the followed processes alive now. */
static void memory_tick(struct recording *rec)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.mem_rss);
	struct it_mem_value v;
	uint64_t sum = 0, now = recording__now_ns();

	if (!rec->memory || !rec->memory->enabled)
		return;
	/* one lookup per live process: the map also holds an entry per cycle
	 * ever recorded, too many to walk at every tick of a long run */
	for (size_t i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];

		if (!p->exited && mem_lookup(fd, (__u32)p->pid, IT_CYCLE_NONE, &v))
			sum += v.rss_bytes;
	}
	if (fold_point(rec->memory, now > rec->start_ns ? now - rec->start_ns : 0, sum / MB))
		return;
	if (rec->memory->n == rec->memory->cap) {
		/* t and mb share one capacity */
		size_t cap = vec_grown(rec->memory->cap, rec->memory->n, sizeof(*rec->memory->t), 1024);

		if (!cap || VEC_RESIZE(rec->memory->t, cap) || VEC_RESIZE(rec->memory->mb, cap))
			return;
		rec->memory->cap = cap;
	}
	rec->memory->t[rec->memory->n] = rec->memory->pending_t;
	rec->memory->mb[rec->memory->n++] = rec->memory->pending_mb;
}

/* Each cycle's RSS peak and end: the kernel's per-cycle values, and for a
 * cycle in which RSS never changed, where it stood at the previous one. The
 * cycles are in start order. */
static void fill_cycles(struct model *m, int fd)
{
	for (size_t pi = 0; pi < m->nprocs; pi++) {
		pid_t pid = m->procs[pi].pid;
		uint64_t last = 0;
		bool have_last = false;

		for (size_t i = 0; i < m->ncycles; i++) {
			struct model_cycle *c = &m->cycles[i];
			struct it_mem_value v;

			if (c->pid != pid)
				continue;
			if (!mem_lookup(fd, pid, c->bpf_cycle, &v)) {
				if (!have_last)
					continue;
				v.peak_bytes = v.rss_bytes = last;
			}
			last = v.rss_bytes;
			have_last = true;
			c->has_rss = true;
			c->rss_peak_mb = v.peak_bytes / MB;
			c->rss_end_mb = v.rss_bytes / MB;
		}
	}
}

static int memory_collect(struct recording *rec, struct model *m)
{
	struct model_memory_figures *mf = &m->memory;
	int fd = bpf_map__fd(rec->tracer.skel->maps.mem_rss);
	size_t n;
	uint64_t peak = 0, *t = NULL;
	double *mb = NULL;

	if (!rec->memory)
		return 0;
	mf->per_process.n = mf->timeline.n = 0;
	snprintf(mf->source, sizeof(mf->source), "%s", rec->memory->enabled ?
		 "mm counters (CO-RE) at switches, ticks and kmem:rss_stat" : "mm counters (CO-RE) at switches and ticks");
	for (size_t i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];
		struct it_mem_value v;

		if (!mem_lookup(fd, p->pid, IT_CYCLE_NONE, &v))
			continue;
		if (VEC_RESERVE(mf->per_process.v, mf->per_process.cap, mf->per_process.n, 8))
			return -ENOMEM;
		mf->per_process.v[mf->per_process.n] = (struct model_memory_proc){
			.pid = p->pid, .peak_mb = v.peak_bytes / MB, .last_mb = v.rss_bytes / MB };
		snprintf(mf->per_process.v[mf->per_process.n++].comm, IT_COMM_LEN, "%s", p->comm);
		if (v.peak_bytes > peak)
			peak = v.peak_bytes;
	}
	if (!m->snapshot)
		memory_tick(rec); /* the last point of the timeline */
	/* reduced on a copy: the recording's own timeline keeps every point */
	n = rec->memory->n;
	t = n ? malloc(n * sizeof(*t)) : NULL;
	mb = n ? malloc(n * sizeof(*mb)) : NULL;
	if (n && t && mb) {
		memcpy(t, rec->memory->t, n * sizeof(*t));
		memcpy(mb, rec->memory->mb, n * sizeof(*mb));
		n = timeline_reduce(t, mb, n, TIMELINE_MAX);
		for (size_t i = 0; i < n && !VEC_RESERVE(mf->timeline.v, mf->timeline.cap, mf->timeline.n, 64); i++)
			mf->timeline.v[mf->timeline.n++] = (struct model_memory_point){ t[i] / 1e9, mb[i] };
	}
	free(t);
	free(mb);
	fill_cycles(m, fd);
	mf->available = true;
	mf->peak_mb = peak / MB;
	mf->timeline_max_points = TIMELINE_MAX;
	return 0;
}

static void memory_cleanup(struct recording *rec)
{
	(void)rec;
	if (!rec->memory)
		return;
	free(rec->memory->t);
	free(rec->memory->mb);
	free(rec->memory);
	rec->memory = NULL;
}

const struct concern memory_concern = {
	.name = "memory",
	.configure = memory_configure,
	.attach = memory_attach,
	.tick = memory_tick,
	.collect = memory_collect,
	.cleanup = memory_cleanup,
};
