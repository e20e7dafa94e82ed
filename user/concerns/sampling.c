// SPDX-License-Identifier: BSD-2-Clause
/* On-CPU sampling concern: reads the stack counts from BPF and gives the
 * model its on-CPU stacks (all and per phase), the `samples` section and the
 * sampling's lost counters. (The perf_event programs are attached by tracer.c.)
 * With --call-graph dwarf, samples arrive as IT_EV_USTACK records during
 * the run; each is unwound at once (the copy is too large to keep) and its
 * stack counted here, beside the kernel's counts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "jsphase.h"
#include "map_dump.h"
#include "perfmap.h"
#include "probes.h"
#include "spool.h"
#include "stacks.h"
#include "suggest.h"
#include "syms.h"
#include "unwind.h"
#include "ustack_table.h"

/* Ring buffer in dwarf mode: room for about 500 stack copies of 64 KiB,
 * seconds of samples at 99 Hz on many CPUs should unwinding fall behind. */
#define DWARF_RINGBUF_BYTES (32u << 20)
/* samples kept with their time for trace.json (16 MiB of marks) */
#define MAX_TRACE_SAMPLES (1u << 20)

struct sampling_state {
	struct ustack_table stacks; /* unwound samples */
	uint64_t leaf_callers_restored; /* JIT callers of frameless native leaves (restore_jit_caller) */
	struct suggest *suggest;        /* no cycle spec: the native samples' timeline */
};

/* A sample's native stack, root first, for the cycle suggestion: return
 * addresses are named by their call (ip - 1); unnamed frames are left out.
 * A stack the unwinder did not follow to its root (as stacks.folded
 * counts them complete) is left out too: its frames stand at other depths
 * under other parents, so it would end every burst it fell in, and its
 * own frames would burst at the root (V8's sin under a lost JIT caller,
 * 2-3% of a Node loop's samples, once made the suggestion). */
static void suggest_sample(struct recording *rec, pid_t tgid, pid_t tid, uint64_t ts, const __u64 *ips, int n)
{
	const char *frames[IT_MAX_STACK_DEPTH];
	bool complete = false;
	int k = 0;

	for (int i = n - 1; i >= 0; i--) {
		struct sym_info si;

		if (syms_cache__resolve(rec->syms, tgid, i ? ips[i] - 1 : ips[i], &si))
			continue;
		complete = complete || si.root || stacks__is_root_symbol(si.name);
		if (si.name)
			frames[k++] = si.name;
	}
	if (complete)
		suggest__observe(rec->sampling->suggest, tid, ts, frames, k);
}

bool sampling__suggest(const struct recording *rec, struct suggestion *out)
{
	return rec->sampling && rec->sampling->suggest && suggest__result(rec->sampling->suggest, out);
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
	if (probes__whole_run(rec)) {
		rec->sampling->suggest = suggest__new();
		if (!rec->sampling->suggest)
			return -ENOMEM;
	}
	skel->rodata->cfg_ustack_size = rec->opts.dwarf_stack_size & ~7u;
	/* slots per CPU: samples, off-CPU records and CUDA launches (bpf/ustack.bpf.h) */
	bpf_map__set_max_entries(skel->maps.ustack_scratch,
				 ncpus > 0 ? IT_USTACK_SCRATCH_USERS * ncpus : IT_USTACK_SCRATCH_USERS);
	if (bpf_map__max_entries(skel->maps.events) < DWARF_RINGBUF_BYTES)
		bpf_map__set_max_entries(skel->maps.events, DWARF_RINGBUF_BYTES);
	return 0;
}

/* Each streamed sample's time and place, for trace.json's timeline; ip is
 * the pc, or its JIT token (the perf-map entry valid at the sample's time). */
static void log_trace_sample(struct recording *rec, const struct it_ustack_event *e, uint64_t ip, uint32_t phase,
			     uint32_t entry)
{
	struct model_trace_sample ts = {
		.ts_ns = e->hdr.ts_ns, .tgid = e->hdr.tgid, .tid = e->hdr.tid, .phase = phase, .frame = -1,
		.ip = ip, .entry = entry, .stack = -1,
	};

	/* spooled: on disk, not in memory, so --max-memory does not stop it */
	if (spool__count(rec->spool, SPOOL_TRACE_SAMPLE) >= MAX_TRACE_SAMPLES ||
	    spool__append(rec->spool, SPOOL_TRACE_SAMPLE, &ts, sizeof(ts)))
		model__add_lost(&rec->model, "trace_samples_not_kept", 1);
}

/* V8's builtins (Builtins_StringAdd_CheckNone, ...) have no CFI and often
 * set up no frame: the frame pointer still points at their JIT caller's
 * frame, so the unwinder's next frame is the caller's caller and the JS
 * function that called the builtin is lost. Its return address is then the
 * word at sp. Put it back when it names JIT code at the sample's time other
 * than the next frame's. Only for those leaves: under a leaf with CFI the
 * word at sp may be a stale return address. Returns the new depth. */
static int restore_jit_caller(struct recording *rec, const struct it_ustack_event *e, __u64 *ips, int n)
{
	struct sym_info si;
	uint64_t ra, tok;

	if (n < 2 || n >= IT_MAX_STACK_DEPTH || perfmap__is_token(ips[0]) || !perfmap__is_token(ips[1]) ||
	    e->stack_size < sizeof(ra))
		return n;
	if (syms_cache__resolve(rec->syms, e->hdr.tgid, ips[0], &si) || !si.name ||
	    strncmp(si.name, "Builtins_", 9))
		return n;
	memcpy(&ra, e->stack, sizeof(ra));
	tok = ra - 1; /* a return address: the call lies just before it */
	if (ra < 2 || syms_cache__jit_tokenize(rec->syms, e->hdr.tgid, &tok, 1, e->hdr.ts_ns) != 1 ||
	    perfmap__token_id(tok) == perfmap__token_id(ips[1]))
		return n;
	memmove(ips + 2, ips + 1, (n - 1) * sizeof(*ips));
	ips[1] = tok;
	rec->sampling->leaf_callers_restored++;
	return n + 1;
}

static void sampling_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;
	const struct it_ustack_event *e = data;
	struct sampling_state *s = rec->sampling;
	__u64 ips[IT_MAX_STACK_DEPTH];
	struct it_label_key key;
	uint64_t ip;
	uint32_t jp, entry;
	int n;

	if (h->type == IT_EV_EXIT && rec->unwinder)
		unwinder__forget(rec->unwinder, h->tgid);
	if (h->type != IT_EV_USTACK || !s)
		return;
	s->stacks.records++;
	/* a name is a convenience: without memory the thread stays numbered */
	if (size >= sizeof(*e))
		(void)model__name_thread(&rec->model, h->tgid, h->tid, e->thread_comm);
	n = ustack__unwind_event(rec->unwinder, rec->syms, e, size, ips, &key);
	if (n < 0) {
		s->stacks.bad_records++;
		return;
	}
	n = restore_jit_caller(rec, e, ips, n);
	/* js: phases: the stack says which; a probed phase (BPF's) wins */
	jp = jsphase__observe(rec, h->tgid, h->tid, e->cycle, h->ts_ns, (const uint64_t *)ips, n);
	if (!key.stack.phase && jp)
		key.stack.phase = jp;
	/* the trace's leaf: the unwound leaf is the pc, tokenized or not */
	ip = ustack__event_ip(e);
	if (n > 0 && (perfmap__is_token(ips[0]) || syms__is_file_token(ips[0])))
		ip = ips[0];
	else if (!n)
		syms_cache__jit_tokenize(rec->syms, h->tgid, &ip, 1, h->ts_ns);
	if (s->suggest && !key.stack.pystack)
		suggest_sample(rec, h->tgid, h->tid, h->ts_ns, ips, n);
	s->stacks.unwound_frames += n;
	if (!recording__may_hold(rec))
		ustack_table__strip_labels(&s->stacks, &key, 1);
	if (ustack_table__add_id(&s->stacks, &key, ips, n, 1, &entry)) {
		s->stacks.bad_records++;
		entry = UINT32_MAX;
	}
	log_trace_sample(rec, e, ip, key.stack.phase, entry);
}

static void unwind_figures(const struct recording *rec, const struct stack_report *sr, const __u64 *stats,
			   struct model_unwind *o)
{
	const struct ustack_table *s = &rec->sampling->stacks;
	const struct unwind_stats *u = unwinder__stats(rec->unwinder);

	*o = (struct model_unwind){
		.stack_bytes = rec->opts.dwarf_stack_size,
		.records = s->records,
		.copy_failed = stats[IT_STAT_USTACK_COPY_ERR],
		.copy_short = stats[IT_STAT_USTACK_SHORT],
		.lost = stats[IT_STAT_USTACK_LOST],
		.bad_records = s->bad_records,
		/* libdwfl often errs one step past the thread's root frame: what
		 * counts is whether the stack reached a root, i.e. stack_quality */
		.unwind_ended_with_error = u->truncated,
		.unwind_too_deep = u->too_deep,
		.unwind_no_modules = u->no_modules,
		.unwind_failed = sr->total - sr->complete,
		.module_rebuilds = u->rebuilds,
		.jit_leaf_callers_restored = rec->sampling->leaf_callers_restored,
		.avg_frames = s->records ? (double)s->unwound_frames / s->records : 0,
		.avg_unwind_us = u->stacks ? u->total_ns / 1e3 / u->stacks : 0,
		.max_unwind_us = u->max_ns / 1e3,
	};
	snprintf(o->method, sizeof(o->method), "dwarf: user stack copied in BPF, unwound with libdwfl");
}

static int samples_figures(const struct recording *rec, const struct stack_report *sr, const char *const *phase_names,
			   const __u64 *stats, struct model_samples *s)
{
	double cpu_s = process_table__cpu_seconds(&rec->procs);

	if (rec->launched && rec->cmd.exited && rec->cmd.cpu_s > cpu_s)
		cpu_s = rec->cmd.cpu_s; /* rusage also counts children it reaped */
	s->present = true;
	s->total = sr->total;
	snprintf(s->event, sizeof(s->event), "cpu-clock");
	s->requested_hz = rec->opts.frequency;
	s->target_cpu_seconds = cpu_s;
	s->achieved_hz = cpu_s > 0 ? sr->total / cpu_s : NAN;
	s->sampling_cpus = rec->tracer.nsampling_cpus;
	snprintf(s->call_graph, sizeof(s->call_graph), "%s", rec->opts.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp");
	s->per_process.n = 0;
	for (size_t i = 0; i < sr->nprocs; i++) {
		if (VEC_RESERVE(s->per_process.v, s->per_process.cap, s->per_process.n, 8))
			return -ENOMEM;
		s->per_process.v[s->per_process.n] = (struct model_samples_proc){ .pid = sr->procs[i].tgid,
										.samples = sr->procs[i].samples };
		snprintf(s->per_process.v[s->per_process.n++].comm, IT_COMM_LEN, "%s", sr->procs[i].comm);
	}
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		s->by_phase[i].present = phase_names[i] != NULL;
		s->by_phase[i].samples = sr->phase_samples[i];
		s->by_phase[i].percent = sr->total ? 100.0 * sr->phase_samples[i] / sr->total : 0;
	}
	if (stacks__quality(sr, s))
		return -ENOMEM;
	s->has_unwind = rec->sampling != NULL;
	if (rec->sampling)
		unwind_figures(rec, sr, stats, &s->unwind);
	s->stack_collisions = stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION];
	return 0;
}

static void add_lost(struct model *m, const __u64 *stats, uint64_t unlabelled)
{
	model__add_lost(m, "samples", stats[IT_STAT_LOST_SAMPLES] + stats[IT_STAT_USTACK_LOST]);
	model__add_lost(m, "events", stats[IT_STAT_RINGBUF_LOST] + stats[IT_STAT_LOST_EVENTS] +
			stats[IT_STAT_THREADS_FULL]);
	model__add_lost(m, "stack_collisions", stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]);
	model__add_lost(m, "children_not_followed", stats[IT_STAT_TARGETS_FULL]);
	/* probe calls nested deeper than IT_PHASE_STACK: their phases are not timed */
	model__add_lost(m, "probe_stack_overflow", stats[IT_STAT_PROBE_STACK_FULL]);
	/* in profile.pb.gz without their thread and cycle labels, still counted */
	model__add_lost(m, "sample_labels", stats[IT_STAT_LABELS_FULL] + unlabelled);
	model__add_lost(m, "offcpu_labels", stats[IT_STAT_OFFCPU_LABELS_FULL]);
}

/* Hands the report's folded sets to the model (the report keeps empty ones). */
static void move_folded(struct folded *to, struct folded *from)
{
	folded__free(to);
	*to = *from;
	memset(from, 0, sizeof(*from));
}

/* --call-graph fp: the sampled threads' names, from `thread_comms` (dwarf's
 * come with each record); a name is a convenience, so errors pass. */
static void name_threads(struct recording *rec, struct model *m)
{
	struct map_dump d = { 0 };

	(void)map_dump__read(&d, bpf_map__fd(rec->tracer.skel->maps.thread_comms), sizeof(__u64),
			     sizeof(struct it_thread_comm), 0);
	for (size_t i = 0; i < d.n; i++) {
		__u64 key = *(const __u64 *)map_dump__key(&d, i);
		const struct it_thread_comm *tc = map_dump__value(&d, i);

		(void)model__name_thread(m, (pid_t)(key >> 32), (pid_t)(__u32)key, tc->comm);
	}
	map_dump__free(&d);
}

static int sampling_collect(struct recording *rec, struct model *m)
{
	struct stack_report sr;
	__u64 stats[IT_STAT_MAX];
	int32_t *names = NULL;
	int err;

	tracer__stats(&rec->tracer, stats);
	add_lost(m, stats, rec->sampling ? rec->sampling->stacks.unlabelled : 0);
	err = stacks__collect(&rec->tracer, rec->syms, rec->ksyms, rec->phase_names, &sr);
	/* each entry's folded stack: trace.json's samples refer to theirs */
	if (!err && rec->sampling && rec->sampling->stacks.n)
		names = malloc(rec->sampling->stacks.n * sizeof(*names));
	for (size_t i = 0; names && i < rec->sampling->stacks.n; i++)
		names[i] = -1;
	if (!err && rec->sampling)
		err = ustack_table__report_named(&rec->sampling->stacks, bpf_map__fd(rec->tracer.skel->maps.stackmap),
						 rec->syms, rec->ksyms, rec->phase_names, &sr, m, false, names);
	if (!err)
		err = stacks__to_model(bpf_map__fd(rec->tracer.skel->maps.stack_counts),
				       bpf_map__fd(rec->tracer.skel->maps.label_counts),
				       bpf_map__fd(rec->tracer.skel->maps.stackmap), rec->syms, rec->ksyms, false, m);
	if (err) {
		fprintf(stderr, "infertrace: reading the stack counts failed: %s\n", strerror(-err));
		goto out;
	}
	err = samples_figures(rec, &sr, rec->phase_names, stats, &m->samples);
	if (err)
		goto out;
	folded__merge(&sr.all);
	move_folded(&m->oncpu, &sr.all);
	folded__free(&m->oncpu_python);
	if (sr.python_view_samples) {
		folded__merge(&sr.python);
		move_folded(&m->oncpu_python, &sr.python);
	}
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		m->phase_samples[i] = sr.phase_samples[i];
		if (rec->phase_names[i]) {
			folded__merge(&sr.by_phase[i]);
			move_folded(&m->oncpu_by_phase[i], &sr.by_phase[i]);
		}
	}
	m->have_oncpu = true;
	name_threads(rec, m);
	/* each timed sample's leaf, named for the trace */
	for (size_t i = 0; i < m->ntrace_samples; i++) {
		struct model_trace_sample *ts = &m->trace_samples[i];
		char frame[256];

		syms_cache__format(rec->syms, ts->tgid, ts->ip, frame, sizeof(frame));
		ts->frame = model__intern(m, frame);
		ts->jit = perfmap__is_token(ts->ip);
		ts->stack = names && ts->entry < rec->sampling->stacks.n ? names[ts->entry] : -1;
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
	free(names);
	stack_report__free(&sr);
	return err;
}

static void sampling_cleanup(struct recording *rec)
{
	struct sampling_state *s = rec->sampling;

	if (!s)
		return;
	ustack_table__free(&s->stacks);
	suggest__free(s->suggest);
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
