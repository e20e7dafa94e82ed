// SPDX-License-Identifier: BSD-2-Clause
/* On-CPU sampling concern: reads the stack counts from BPF and gives the
 * model its on-CPU stacks (all and per phase), the `samples` section and the
 * sampling's lost counters. (The perf_event programs are attached by tracer.c.)
 * With --call-graph dwarf, samples arrive as IT_EV_USTACK records during
 * the run; each is unwound at once (the copy is too large to keep) and its
 * stack counted here, beside the kernel's counts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "stacks.h"
#include "syms.h"
#include "unwind.h"

/* Ring buffer in dwarf mode: room for about 500 stack copies of 64 KiB,
 * seconds of samples at 99 Hz on many CPUs should unwinding fall behind. */
#define DWARF_RINGBUF_BYTES (32u << 20)
/* samples kept with their time for trace.json (16 MiB of marks) */
#define MAX_TRACE_SAMPLES (1u << 20)

/* One distinct unwound stack. */
struct ustack_ent {
	uint64_t hash;
	struct it_stack_key key;
	uint64_t count;
	int n;
	__u64 ips[]; /* leaf first */
};

struct sampling_state {
	struct unwinder *unwinder;
	struct ustack_ent **tab; /* open addressing, cap a power of two */
	size_t n, cap;
	uint64_t records, bad_records, unwound_frames;
};

static uint64_t stack_hash(const struct it_stack_key *k, const __u64 *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *b = (const unsigned char *)k;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 0x100000001b3ull; // NOLINT(clang-analyzer-core.UndefinedBinaryOperatorResult): callers zero the key
	for (int i = 0; i < n; i++)
		h = (h ^ ips[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int tab_grow(struct sampling_state *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	struct ustack_ent **t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		struct ustack_ent *e = s->tab[i];
		size_t j;

		if (!e)
			continue;
		for (j = e->hash & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = e;
	}
	free(s->tab);
	s->tab = t;
	s->cap = cap;
	return 0;
}

static int count_stack(struct sampling_state *s, const struct it_stack_key *k, const __u64 *ips, int n)
{
	uint64_t h = stack_hash(k, ips, n);
	struct ustack_ent *e;
	size_t j;

	if ((s->n + 1) * 2 > s->cap && tab_grow(s))
		return -ENOMEM;
	for (j = h & (s->cap - 1); (e = s->tab[j]); j = (j + 1) & (s->cap - 1)) {
		if (e->hash == h && e->n == n && !memcmp(&e->key, k, sizeof(*k)) &&
		    !memcmp(e->ips, ips, n * sizeof(*ips))) {
			e->count++;
			return 0;
		}
	}
	e = malloc(sizeof(*e) + n * sizeof(*ips));
	if (!e)
		return -ENOMEM;
	e->hash = h;
	e->key = *k;
	e->count = 1;
	e->n = n;
	memcpy(e->ips, ips, n * sizeof(*ips));
	s->tab[j] = e;
	s->n++;
	return 0;
}

static int sampling_configure(struct recording *rec)
{
	struct infertrace_bpf *skel = rec->tracer.skel;
	int ncpus = rec->tracer.ncpus;

	if (rec->opts.call_graph != CALL_GRAPH_DWARF) {
		/* no stack copies: the scratch map need not take memory */
		bpf_map__set_max_entries(skel->maps.ustack_scratch, 1);
		return 0;
	}
	rec->sampling = calloc(1, sizeof(*rec->sampling));
	if (!rec->sampling)
		return -ENOMEM;
	rec->sampling->unwinder = unwinder__new(rec->syms);
	if (!rec->sampling->unwinder)
		return -ENOMEM;
	skel->rodata->cfg_ustack_size = rec->opts.dwarf_stack_size & ~7u;
	bpf_map__set_max_entries(skel->maps.ustack_scratch, ncpus > 0 ? ncpus : 1);
	if (bpf_map__max_entries(skel->maps.events) < DWARF_RINGBUF_BYTES)
		bpf_map__set_max_entries(skel->maps.events, DWARF_RINGBUF_BYTES);
	return 0;
}

/* Each streamed sample's time and place, for trace.json's timeline. */
static void log_trace_sample(struct recording *rec, const struct it_ustack_event *e)
{
	struct model_trace_sample ts = {
		.ts_ns = e->hdr.ts_ns, .tgid = e->hdr.tgid, .tid = e->hdr.tid, .phase = e->phase, .frame = -1,
#if defined(__x86_64__)
		.ip = e->regs[16],
#elif defined(__aarch64__)
		.ip = e->regs[32],
#endif
	};

	if (rec->model.ntrace_samples >= MAX_TRACE_SAMPLES || model__add_trace_sample(&rec->model, &ts))
		model__add_lost(&rec->model, "trace_samples_not_kept", 1);
}

static void sampling_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;
	const struct it_ustack_event *e = data;
	struct sampling_state *s = rec->sampling;
	__u64 ips[IT_MAX_STACK_DEPTH];
	struct it_stack_key key = {};
	int n = 0;

	if (h->type == IT_EV_EXIT && s)
		unwinder__forget(s->unwinder, h->tgid);
	if (h->type != IT_EV_USTACK || !s)
		return;
	s->records++;
	if (size < sizeof(*e) || size < sizeof(*e) + e->stack_size) {
		s->bad_records++;
		return;
	}
	log_trace_sample(rec, e);
	key.tgid = h->tgid;
	key.phase = e->phase;
	key.kstack_id = e->kstack_id;
	memcpy(key.comm, e->comm, IT_COMM_LEN);
	/* __u64 and uint64_t: the same 64-bit unsigned type under two names */
	unwinder__unwind(s->unwinder, h->tgid, h->tid, (const uint64_t *)e->regs, IT_UREGS, e->sp, e->stack,
			 e->stack_size, (uint64_t *)ips, IT_MAX_STACK_DEPTH, &n);
	/* no frame at all: folded as [missing_user_stack], like an fp stack id < 0 */
	key.ustack_id = n ? 0 : -1;
	s->unwound_frames += n;
	if (count_stack(s, &key, ips, n))
		s->bad_records++;
}

/* Adds the stacks unwound in user space to the report. */
static int add_unwound(struct recording *rec, struct stack_report *sr)
{
	struct sampling_state *s = rec->sampling;
	int stack_fd = bpf_map__fd(rec->tracer.skel->maps.stackmap);
	__u64 uips[IT_MAX_STACK_DEPTH], kips[IT_MAX_STACK_DEPTH];
	int err = 0;

	for (size_t i = 0; s && i < s->cap && !err; i++) {
		struct ustack_ent *e = s->tab[i];
		bool have_k;

		if (!e)
			continue;
		memset(uips, 0, sizeof(uips));
		memcpy(uips, e->ips, e->n * sizeof(*uips));
		have_k = e->key.kstack_id >= 0 &&
			 bpf_map_lookup_elem(stack_fd, &e->key.kstack_id, kips) == 0;
		err = stacks__add(sr, rec->syms, rec->ksyms, rec->phase_names, &e->key,
				  e->n ? uips : NULL, have_k ? kips : NULL, e->count);
	}
	return err;
}

static json_t *unwind_json(const struct recording *rec, const struct stack_report *sr, const __u64 *stats)
{
	const struct sampling_state *s = rec->sampling;
	const struct unwind_stats *u = unwinder__stats(s->unwinder);
	json_t *o = json_object();

	json_object_set_new(o, "method", json_string("dwarf: user stack copied in BPF, unwound with libdwfl"));
	json_object_set_new(o, "stack_bytes", json_integer(rec->opts.dwarf_stack_size));
	json_object_set_new(o, "records", json_integer(s->records));
	json_object_set_new(o, "copy_failed", json_integer(stats[IT_STAT_USTACK_COPY_ERR]));
	json_object_set_new(o, "copy_short", json_integer(stats[IT_STAT_USTACK_SHORT]));
	json_object_set_new(o, "lost", json_integer(stats[IT_STAT_USTACK_LOST]));
	json_object_set_new(o, "bad_records", json_integer(s->bad_records));
	/* libdwfl often errs one step past the thread's root frame: what
	 * counts is whether the stack reached a root, i.e. stack_quality */
	json_object_set_new(o, "unwind_ended_with_error", json_integer(u->truncated));
	json_object_set_new(o, "unwind_too_deep", json_integer(u->too_deep));
	json_object_set_new(o, "unwind_no_modules", json_integer(u->no_modules));
	json_object_set_new(o, "unwind_failed", json_integer(sr->total - sr->complete));
	json_object_set_new(o, "module_rebuilds", json_integer(u->rebuilds));
	json_object_set_new(o, "avg_frames", json_real(s->records ? (double)s->unwound_frames / s->records : 0));
	json_object_set_new(o, "avg_unwind_us", json_real(u->stacks ? u->total_ns / 1e3 / u->stacks : 0));
	json_object_set_new(o, "max_unwind_us", json_real(u->max_ns / 1e3));
	return o;
}

static json_t *samples_json(const struct recording *rec, const struct stack_report *sr,
			    const char *const *phase_names, const __u64 *stats)
{
	json_t *s = json_object(), *per = json_array(), *by_phase = json_object();
	double cpu_s = process_table__cpu_seconds(&rec->procs);

	if (rec->launched && rec->cmd.exited && rec->cmd.cpu_s > cpu_s)
		cpu_s = rec->cmd.cpu_s; /* rusage also counts children it reaped */
	json_object_set_new(s, "total", json_integer(sr->total));
	json_object_set_new(s, "event", json_string("cpu-clock"));
	json_object_set_new(s, "requested_hz", json_integer(rec->opts.frequency));
	json_object_set_new(s, "target_cpu_seconds", json_real(cpu_s));
	json_object_set_new(s, "achieved_hz", cpu_s > 0 ? json_real(sr->total / cpu_s) : json_null());
	json_object_set_new(s, "sampling_cpus", json_integer(rec->tracer.nsampling_cpus));
	json_object_set_new(s, "call_graph", json_string(rec->opts.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp"));
	for (size_t i = 0; i < sr->nprocs; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(sr->procs[i].tgid));
		json_object_set_new(o, "comm", json_string(sr->procs[i].comm));
		json_object_set_new(o, "samples", json_integer(sr->procs[i].samples));
		json_array_append_new(per, o);
	}
	json_object_set_new(s, "per_process", per);
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		if (!phase_names[i])
			continue;
		json_t *o = json_object();

		json_object_set_new(o, "samples", json_integer(sr->phase_samples[i]));
		json_object_set_new(o, "percent", json_real(sr->total ? 100.0 * sr->phase_samples[i] / sr->total : 0));
		json_object_set_new(by_phase, phase_names[i], o);
	}
	json_object_set_new(s, "by_phase", by_phase);
	json_object_set_new(s, "stack_quality", stacks__quality_json(sr));
	if (rec->sampling)
		json_object_set_new(s, "unwind", unwind_json(rec, sr, stats));
	json_object_set_new(s, "stack_collisions",
			    json_integer(stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]));
	return s;
}

static void add_lost(struct model *m, const __u64 *stats)
{
	model__add_lost(m, "samples", stats[IT_STAT_LOST_SAMPLES] + stats[IT_STAT_USTACK_LOST]);
	model__add_lost(m, "events", stats[IT_STAT_RINGBUF_LOST] + stats[IT_STAT_LOST_EVENTS] +
			stats[IT_STAT_THREADS_FULL]);
	model__add_lost(m, "stack_collisions", stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]);
	model__add_lost(m, "children_not_followed", stats[IT_STAT_TARGETS_FULL]);
	/* probe calls nested deeper than IT_PHASE_STACK: their phases are not timed */
	model__add_lost(m, "probe_stack_overflow", stats[IT_STAT_PROBE_STACK_FULL]);
}

/* Hands the report's folded sets to the model (the report keeps empty ones). */
static void move_folded(struct folded *to, struct folded *from)
{
	folded__free(to);
	*to = *from;
	memset(from, 0, sizeof(*from));
}

static int sampling_collect(struct recording *rec, struct model *m)
{
	struct stack_report sr;
	__u64 stats[IT_STAT_MAX];
	int err;

	tracer__stats(&rec->tracer, stats);
	add_lost(m, stats);
	err = stacks__collect(&rec->tracer, rec->syms, rec->ksyms, rec->phase_names, &sr);
	if (!err)
		err = add_unwound(rec, &sr);
	if (err) {
		fprintf(stderr, "infertrace: reading the stack counts failed: %s\n", strerror(-err));
		goto out;
	}
	model__set_section(m, MODEL_SEC_SAMPLES, samples_json(rec, &sr, rec->phase_names, stats));
	folded__merge(&sr.all);
	move_folded(&m->oncpu, &sr.all);
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		m->phase_samples[i] = sr.phase_samples[i];
		if (rec->phase_names[i]) {
			folded__merge(&sr.by_phase[i]);
			move_folded(&m->oncpu_by_phase[i], &sr.by_phase[i]);
		}
	}
	m->have_oncpu = true;
	/* each timed sample's leaf, named for the trace */
	for (size_t i = 0; i < m->ntrace_samples; i++) {
		struct model_trace_sample *ts = &m->trace_samples[i];
		char frame[256];

		syms_cache__format(rec->syms, ts->tgid, ts->ip, frame, sizeof(frame));
		ts->frame = model__intern(m, frame);
	}
	if (m->snapshot)
		goto out;
	fprintf(stderr, "infertrace: %llu samples\n", (unsigned long long)sr.total);
	if (stats[IT_STAT_PROBE_STACK_FULL])
		fprintf(stderr, "infertrace: warning: %llu probed calls nested deeper than %d were not timed "
			"(lost.probe_stack_overflow)\n", (unsigned long long)stats[IT_STAT_PROBE_STACK_FULL],
			IT_PHASE_STACK);
	if (stats[IT_STAT_LOST_SAMPLES] || stats[IT_STAT_RINGBUF_LOST] || stats[IT_STAT_USTACK_LOST])
		fprintf(stderr, "infertrace: warning: %llu samples and %llu events lost; numbers are incomplete\n",
			(unsigned long long)(stats[IT_STAT_LOST_SAMPLES] + stats[IT_STAT_USTACK_LOST]),
			(unsigned long long)stats[IT_STAT_RINGBUF_LOST]);
out:
	stack_report__free(&sr);
	return err;
}

static void sampling_cleanup(struct recording *rec)
{
	struct sampling_state *s = rec->sampling;

	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->tab[i]);
	free(s->tab);
	unwinder__free(s->unwinder);
	free(s);
	rec->sampling = NULL;
}

const struct concern sampling_concern = {
	.name = "sampling",
	.configure = sampling_configure,
	.on_event = sampling_on_event,
	.collect = sampling_collect,
	.cleanup = sampling_cleanup,
};
