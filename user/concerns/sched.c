// SPDX-License-Identifier: BSD-2-Clause
/* Scheduler concern: attaches the sched tracepoint programs of
 * bpf/sched.bpf.c, then reads their in-kernel aggregates into the model:
 * the off-CPU stacks (all and per phase), the `sched` and `offcpu`
 * figures (model_sched.h), and each cycle's and phase's on-CPU / run-queue / blocked split.
 * Longer than 600 lines: attach, the map readers and the blocked-time
 * classification share one private view of the maps (struct view). */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "map_dump.h"
#include "sched.h"
#include "sched_logic.h"
#include "spool.h"
#include "stacks.h"
#include "stats.h"
#include "syms.h"
#include "unwind.h"
#include "ustack_table.h"
#include "vec.h"

#define TOP_STACKS 10
/* blocked intervals kept with their times for trace.json (10 MiB) */
#define MAX_OFFCPU_INTERVALS (1u << 18)

/* An unwound stack a thread's later records may reuse (struct
 * it_ustack_check's ref), its frames not yet named. */
struct reuse_slot {
	uint64_t ref; /* 0: free */
	int n;
	__u64 *ips;
	/* its check in BPF's ustack_checks, at (tid, check_pc, check_slot),
	 * while check_gen is the state's checks_gen */
	uint64_t check_pc, check_gen;
	__u32 check_slot;
};

/* The stacks of a thread's last copies kept for reuse: a record may name
 * one that a newer copy has replaced in BPF's check meanwhile. */
#define REUSE_SLOTS 16

/* A thread's off-CPU stack state: the candidate of its window of short
 * blocks (the record of the last block elected, bpf/sched.bpf.c,
 * sched_on_sys_exit, with its stack unwound, weighed when a window
 * closes) and its stacks kept for reuse. */
struct offcpu_thread {
	__u32 tid; /* 0: free slot */
	bool has_cand;
	/* the candidate's record without its stack, as bytes: a struct ending
	 * in a flexible array may not sit inside another */
	unsigned char cand[sizeof(struct it_ustack_event)];
	int cand_n;
	__u64 cand_ips[IT_MAX_STACK_DEPTH]; /* its frames, not yet named */
	struct reuse_slot reuse[REUSE_SLOTS];
	unsigned int reuse_next;
};

/* Threads kept at once: threads come and go, so at this many the table
 * starts again (the windows then open close without a candidate, counted
 * in unweighed_ns, and BPF's checks are dropped with the stacks they
 * name). The table, open addressing by tid, is never more than half full. */
#define OFFCPU_THREADS_MAX 512
#define OFFCPU_THREAD_SLOTS ((size_t)2 * OFFCPU_THREADS_MAX)

struct sched_state {
	bool enabled;
	char missing[256]; /* tracepoints this kernel lacks, for the profile */
	/* --call-graph dwarf: off-CPU user stacks of blocking system calls,
	 * copied at the call's exit and unwound here, weighted by blocked ns */
	bool offcpu_dwarf;
	struct ustack_table offcpu_stacks;
	/* short blocks' candidates and reusable stacks, by tid */
	struct offcpu_thread thr[OFFCPU_THREAD_SLOTS];
	size_t nthr;
	uint64_t next_ref;
	uint64_t reused;       /* records that named an earlier stack */
	uint64_t reuse_missed; /* ... one no longer kept: counted without a user stack */
	uint64_t rebuilds_seen; /* the unwinder's module rebuilds when checks were last dropped */
	uint64_t checks_gen;   /* counts the drops of BPF's checks: reuse slots' checks of another are gone */
	uint64_t sampled_ns;   /* short blocks' time weighed on their windows' candidates */
	uint64_t unweighed_ns; /* a window's time without its candidate (record lost) */
	uint64_t candidates;
	uint64_t labels_not_kept; /* off-CPU records counted without labels at --max-memory */
};

/* One program's tracepoint; the program is sched_programs' row of the same
 * index, attached to this tracepoint by name (one program may serve two). */
struct sched_prog {
	const char *category, *event;
	bool required;
};

static const struct sched_prog progs[] = {
	{ "sched", "sched_switch", true },
	{ "sched", "sched_wakeup", true },
	{ "sched", "sched_wakeup_new", true },
	{ "sched", "sched_stat_runtime", false },
	{ "sched", "sched_process_exec", false },
	{ "sched", "sched_waking", false },
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))
/* The first rows make the on/off-CPU split: loaded together, or not at all
 * when a required tracepoint is missing. */
#define SPLIT_PROGS 4

static void sched_programs(struct infertrace_bpf *s, struct bpf_program *out[NPROGS])
{
	struct bpf_program *const t[NPROGS] = {
		s->progs.sched_on_switch, s->progs.sched_on_wakeup, s->progs.sched_on_wakeup,
		s->progs.sched_on_runtime, s->progs.sched_on_exec, s->progs.sched_on_waking,
	};

	memcpy(out, t, sizeof(t));
}

static int sched_configure(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	struct sched_state *ss = calloc(1, sizeof(*ss));
	struct bpf_program *p[NPROGS];
	bool all_required = true;

	if (!ss)
		return -ENOMEM;
	rec->sched = ss;
	ss->checks_gen = 1; /* a reuse slot's zeroed check_gen names no check */
	for (size_t i = 0; i < NPROGS; i++) {
		if (!tracer__have_tracepoint(progs[i].category, progs[i].event) && progs[i].required)
			all_required = false;
	}
	sched_programs(s, p);
	for (size_t i = 0; i < NPROGS; i++) {
		bool have = tracer__have_tracepoint(progs[i].category, progs[i].event);

		if (!have) {
			size_t n = strlen(ss->missing);

			snprintf(ss->missing + n, sizeof(ss->missing) - n, "%s%s:%s", n ? " " : "",
				 progs[i].category, progs[i].event);
		}
		if (!have || (!all_required && i < SPLIT_PROGS))
			bpf_program__set_autoload(p[i], false);
	}
	ss->enabled = all_required;
	if (!all_required)
		fprintf(stderr, "infertrace: warning: this kernel lacks %s: no on/off-CPU split, "
			"run-queue waits or off-CPU stacks\n", ss->missing);
	else if (ss->missing[0])
		fprintf(stderr, "infertrace: note: this kernel lacks %s; the rest of the scheduler, "
			"memory and crash tracing works\n", ss->missing);
	s->rodata->cfg_min_block_ns = (__u64)rec->opts.min_block_us * 1000;
	/* the probes settle threads at cycle and phase edges only when the
	 * switches are traced too */
	s->rodata->cfg_sched_edges = all_required;
	/* blocking system calls' user stacks unwound like on-CPU samples, from
	 * a copy taken when the call returns; other blocks (page faults) keep
	 * the frame-pointer stack taken at the switch */
	ss->offcpu_dwarf = all_required && rec->opts.call_graph == CALL_GRAPH_DWARF &&
			   tracer__have_tracepoint("raw_syscalls", "sys_exit");
	s->rodata->cfg_offcpu_dwarf = ss->offcpu_dwarf;
	s->rodata->cfg_offcpu_sample_ns = (__u64)rec->opts.offcpu_sample_us * 1000;
	bpf_program__set_autoload(s->progs.sched_on_sys_exit, ss->offcpu_dwarf);
	return 0;
}

static int sched_attach(struct recording *rec)
{
	struct bpf_program *p[NPROGS];
	int err = 0;

	sched_programs(rec->tracer.skel, p);
	for (size_t i = 0; i < NPROGS && !err; i++) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p[i]))
			continue;
		l = bpf_program__attach_raw_tracepoint(p[i], progs[i].event);
		err = l ? tracer__keep_link(&rec->tracer, l) : -errno;
		if (err)
			fprintf(stderr, "infertrace: attaching %s to %s failed: %s\n", bpf_program__name(p[i]),
				progs[i].event, strerror(-err));
	}
	if (!err && rec->sched->offcpu_dwarf)
		err = tracer__attach_program(&rec->tracer, rec->tracer.skel->progs.sched_on_sys_exit);
	return err;
}

/* Each copied blocking system call's interval, for trace.json's timeline:
 * it ends at the call's return (the record's time) and lasts the time the
 * call blocked (its own: without the short blocks its copy also weighs). */
static void log_interval(struct recording *rec, const struct it_event_header *h, __u64 block_ns, uint32_t phase,
			 __s32 kstack_id, uint32_t entry)
{
	struct model_offcpu_interval iv = {
		.start_ns = h->ts_ns > block_ns ? h->ts_ns - block_ns : 0, .end_ns = h->ts_ns,
		.tgid = h->tgid, .tid = h->tid, .phase = phase, .kstack_id = kstack_id,
		.entry = entry, .stack = -1, .reason = BLOCKED_OTHER,
	};

	if (spool__count(rec->spool, SPOOL_OFFCPU) >= MAX_OFFCPU_INTERVALS ||
	    spool__append(rec->spool, SPOOL_OFFCPU, &iv, sizeof(iv)))
		model__add_lost(&rec->model, "offcpu_intervals_not_kept", 1);
}

static void thread_free(struct offcpu_thread *t)
{
	for (int i = 0; i < REUSE_SLOTS; i++)
		free(t->reuse[i].ips);
}

/* Starts the table again; BPF's checks name stacks no longer kept, so
 * they go too. */
static void threads_clear(struct sched_state *ss, int checks_fd)
{
	ustack__checks_drop(checks_fd);
	ss->checks_gen++;
	for (size_t i = 0; i < OFFCPU_THREAD_SLOTS; i++)
		thread_free(&ss->thr[i]);
	memset(ss->thr, 0, sizeof(ss->thr));
	ss->nthr = 0;
}

static struct offcpu_thread *thread_probe(struct sched_state *ss, __u32 tid)
{
	size_t j = tid % OFFCPU_THREAD_SLOTS;

	while (ss->thr[j].tid && ss->thr[j].tid != tid)
		j = (j + 1) % OFFCPU_THREAD_SLOTS;
	return &ss->thr[j];
}

/* The thread's slot in ss->thr (a free one, taken, when it has none; a
 * full table starts again first). */
static struct offcpu_thread *thread_of(struct recording *rec, __u32 tid)
{
	struct sched_state *ss = rec->sched;
	struct offcpu_thread *t = thread_probe(ss, tid);

	if (t->tid)
		return t;
	if (ss->nthr >= OFFCPU_THREADS_MAX) {
		threads_clear(ss, bpf_map__fd(rec->tracer.skel->maps.ustack_checks));
		t = thread_probe(ss, tid);
	}
	t->tid = tid;
	ss->nthr++;
	return t;
}

/* The check slot at pc for the thread's reuse slot r: the one its stack
 * has there already, else one no other stack of the thread holds at pc,
 * else the oldest stack's, which loses its check. */
static __u32 check_slot_at(const struct sched_state *ss, struct offcpu_thread *t, const struct reuse_slot *r,
			   uint64_t pc)
{
	struct reuse_slot *holder[IT_OFFCPU_CHECK_SLOTS] = { 0 };
	__u32 oldest = 0;

	if (r->check_gen == ss->checks_gen && r->check_pc == pc)
		return r->check_slot;
	for (int i = 0; i < REUSE_SLOTS; i++) {
		struct reuse_slot *o = &t->reuse[i];

		if (o != r && o->ref && o->check_gen == ss->checks_gen && o->check_pc == pc &&
		    o->check_slot < IT_OFFCPU_CHECK_SLOTS)
			holder[o->check_slot] = o;
	}
	for (__u32 j = 0; j < IT_OFFCPU_CHECK_SLOTS; j++) {
		if (!holder[j])
			return j;
		if (holder[j]->ref < holder[oldest]->ref)
			oldest = j;
	}
	holder[oldest]->check_gen = 0;
	return oldest;
}

/* After unwinding a copy: keeps the stack under a new ref and tells BPF
 * what it depended on, so that the thread's next blocks with the same
 * registers and words send the ref, not a copy. The check goes to one of
 * the call site's slots: stacks that reach one pc by different paths in
 * turn each keep theirs. */
static void publish_check(struct recording *rec, const struct it_ustack_event *e, const __u64 *ips, int n,
			  const struct unwind_reads *reads)
{
	struct sched_state *ss = rec->sched;
	struct offcpu_thread *t = thread_of(rec, e->hdr.tid);
	int checks_fd = bpf_map__fd(rec->tracer.skel->maps.ustack_checks);
	struct reuse_slot *slot = NULL;
	struct it_ustack_check c = { 0 };
	struct it_ustack_check_key k = { .tid = e->hdr.tid };

	if (n <= 0)
		return;
	/* a stack kept already keeps its ref: records sent before this copy
	 * was read may name it, however many copies came between */
	for (int i = 0; i < REUSE_SLOTS && !slot; i++)
		if (t->reuse[i].ref && t->reuse[i].n == n && !memcmp(t->reuse[i].ips, ips, (size_t)n * sizeof(*ips)))
			slot = &t->reuse[i];
	if (!slot) {
		__u64 *copy = malloc((size_t)n * sizeof(*copy));

		if (!copy)
			return;
		memcpy(copy, ips, (size_t)n * sizeof(*copy));
		slot = &t->reuse[t->reuse_next++ % REUSE_SLOTS];
		/* the stack it held goes: so does its check, which names it */
		if (slot->ref && slot->check_gen == ss->checks_gen) {
			struct it_ustack_check_key old = { .tid = e->hdr.tid, .pad = slot->check_slot,
							   .pc = slot->check_pc };

			bpf_map_delete_elem(checks_fd, &old);
		}
		free(slot->ips);
		*slot = (struct reuse_slot){ .ref = ++ss->next_ref, .n = n, .ips = copy };
	}
	c.ref = slot->ref;
	ustack__check_fill(&c, e, reads);
	k.pc = c.pc;
	k.pad = check_slot_at(ss, t, slot, k.pc);
	if (bpf_map_update_elem(checks_fd, &k, &c, BPF_ANY))
		return;
	slot->check_pc = k.pc;
	slot->check_slot = k.pad;
	slot->check_gen = ss->checks_gen;
}

/* A record's user stack, frames not yet named (-1: a malformed record):
 * unwound from its copy, or the earlier stack it names. */
static int resolve_stack(struct recording *rec, const struct it_ustack_event *e, size_t size,
			 __u64 ips[IT_MAX_STACK_DEPTH])
{
	struct sched_state *ss = rec->sched;
	/* callee-saved registers restored on the way are read too, and
	 * dropped after (see unwind.c) */
	uint32_t off[4 * IT_USTACK_CHECK_WORDS];
	struct unwind_reads reads = { .off = off, .max = 4 * IT_USTACK_CHECK_WORDS };
	int n;

	if (size < sizeof(*e) || e->stack_size > size - sizeof(*e))
		return -1;
	if (!e->stack_size && e->reuse) {
		struct offcpu_thread *t = thread_probe(ss, e->hdr.tid);

		ss->reused++;
		for (int i = 0; t->tid && i < REUSE_SLOTS; i++) {
			if (t->reuse[i].ref == e->reuse) {
				memcpy(ips, t->reuse[i].ips, (size_t)t->reuse[i].n * sizeof(*ips));
				return t->reuse[i].n;
			}
		}
		ss->reuse_missed++;
		return 0;
	}
	n = ustack__unwind_raw(rec->unwinder, rec->syms, e, size, ips, e->stack_size ? &reads : NULL);
	if (!e->stack_size)
		return n;
	if (unwinder__stats(rec->unwinder)->rebuilds != ss->rebuilds_seen) {
		/* a process's mappings changed: the stacks kept were unwound
		 * with other modules, so blocks copy again */
		ss->rebuilds_seen = unwinder__stats(rec->unwinder)->rebuilds;
		ustack__checks_drop(bpf_map__fd(rec->tracer.skel->maps.ustack_checks));
		ss->checks_gen++;
	}
	/* a stack that ends without its outermost frame is one too: that
	 * depends on the same words and the copy's extent. Not without
	 * modules (the process's mappings not read yet) or cut at the depth
	 * limit. */
	if (n > 0 && reads.status != UNWIND_NO_MODULES && reads.status != UNWIND_TOO_DEEP && !reads.overflow &&
	    reads.n <= IT_USTACK_CHECK_WORDS && recording__may_hold(rec))
		publish_check(rec, e, ips, n, &reads);
	return n;
}

/* Names a record's stack (ips from resolve_stack, named in place) and adds
 * it to the off-CPU stacks with weight ns; the stack's entry, or -1. */
static int64_t add_offcpu_stack(struct recording *rec, const struct it_ustack_event *e, __u64 *ips, int n,
				uint64_t ns)
{
	struct sched_state *ss = rec->sched;
	struct it_label_key key;
	uint32_t entry;

	ustack__label_event(rec->syms, e, ips, n, &key);
	if (!recording__may_hold(rec) && (key.tid || key.cycle != IT_CYCLE_NONE)) {
		ustack_table__strip_labels(&ss->offcpu_stacks, &key, ns);
		ss->labels_not_kept++;
	}
	if (ustack_table__add_id(&ss->offcpu_stacks, &key, ips, n, ns, &entry)) {
		ss->offcpu_stacks.bad_records++;
		return -1;
	}
	ss->offcpu_stacks.unwound_frames += n;
	return entry;
}

/* A window of short blocks closed: its blocked time is weighed on its
 * candidate's stack. */
static void weigh_window(struct recording *rec, __u32 tid, __u32 cycle, __u32 phase, uint64_t ns)
{
	struct sched_state *ss = rec->sched;
	struct offcpu_thread *t = thread_of(rec, tid);
	__u64 ips[IT_MAX_STACK_DEPTH];
	struct it_ustack_event cand;

	/* kept after: a run's last, partial window that did not reach its
	 * point is weighed on the candidate of the window before */
	memcpy(&cand, t->cand, sizeof(cand));
	if (t->has_cand && cand.cycle == cycle && cand.phase == phase) {
		memcpy(ips, t->cand_ips, (size_t)t->cand_n * sizeof(*ips));
		if (add_offcpu_stack(rec, &cand, ips, t->cand_n, ns) >= 0) {
			ss->sampled_ns += ns;
			return;
		}
	}
	ss->unweighed_ns += ns;
}

static void sched_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_ustack_event *e = data;
	struct sched_state *ss = rec->sched;
	__u64 ips[IT_MAX_STACK_DEPTH];
	struct offcpu_thread *t;
	int64_t entry;
	int n;

	if (ss && e->hdr.type == IT_EV_OFFCPU_SLICE && size >= sizeof(struct it_offcpu_slice_event)) {
		const struct it_offcpu_slice_event *sl = data;

		/* a sampled block's interval: its stack is its window's */
		log_interval(rec, &sl->hdr, sl->block_ns, sl->phase, sl->kstack_id, UINT32_MAX);
		return;
	}
	if (!ss || !ss->offcpu_dwarf || e->hdr.type != IT_EV_OFFCPU_USTACK)
		return;
	ss->offcpu_stacks.records++;
	if (size < sizeof(*e)) {
		ss->offcpu_stacks.bad_records++;
		return;
	}
	(void)model__name_thread(&rec->model, e->hdr.tgid, e->hdr.tid, e->thread_comm);
	if (!e->block_ns && !e->stack_size) {
		weigh_window(rec, e->hdr.tid, e->cycle, e->phase, e->blocked_ns);
		return;
	}
	n = resolve_stack(rec, e, size, ips);
	if (n < 0) {
		ss->offcpu_stacks.bad_records++;
		return;
	}
	if (!e->blocked_ns) {
		/* a window's candidate: kept until the window closes */
		ss->candidates++;
		t = thread_of(rec, e->hdr.tid);
		t->has_cand = true;
		memcpy(t->cand, e, sizeof(t->cand));
		memcpy(t->cand_ips, ips, (size_t)n * sizeof(*ips));
		t->cand_n = n;
		return;
	}
	entry = add_offcpu_stack(rec, e, ips, n, e->blocked_ns);
	if (entry >= 0)
		log_interval(rec, &e->hdr, e->block_ns, e->phase, e->kstack_id, (uint32_t)entry);
}

/* The recording ended (the kernel side frozen, the ring buffer read): the
 * windows of short blocks still open are weighed on their candidates. */
static void sched_stop(struct recording *rec)
{
	struct sched_state *ss = rec->sched;
	int fd = bpf_map__fd(rec->tracer.skel->maps.sched_threads);
	struct map_dump d = { 0 };

	if (!ss || !ss->offcpu_dwarf || fd < 0 ||
	    map_dump__read(&d, fd, sizeof(__u32), sizeof(struct it_sched_thread), 0))
		return;
	for (size_t i = 0; i < d.n; i++) {
		__u32 key = *(const __u32 *)map_dump__key(&d, i);
		struct it_sched_thread st = *(const struct it_sched_thread *)map_dump__value(&d, i);

		if (!st.win_ns || !st.short_open)
			continue;
		weigh_window(rec, key, st.short_cycle, st.short_phase, st.win_ns);
		/* weighed once, should the outputs be built again */
		st.win_ns = 0;
		bpf_map_update_elem(fd, &key, &st, BPF_EXIST);
	}
	map_dump__free(&d);
}

int sched__read_times(struct tracer *t, struct sched_entry **out, size_t *n)
{
	struct map_dump d = { 0 };
	struct sched_entry *v = NULL;
	int err = map_dump__read(&d, bpf_map__fd(t->skel->maps.sched_times), sizeof(struct it_sched_key),
				 sizeof(struct it_sched_times), 0);

	*n = 0;
	if (err)
		return err;
	if (d.n && !(v = malloc(d.n * sizeof(*v)))) {
		map_dump__free(&d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d.n; i++) {
		v[i].key = *(const struct it_sched_key *)map_dump__key(&d, i);
		v[i].v = *(const struct it_sched_times *)map_dump__value(&d, i);
	}
	*n = d.n;
	*out = v;
	map_dump__free(&d);
	return 0;
}

/* Context switches of followed threads that no BPF program saw (0: into a
 * thread, 1: out of it), summed over CPUs. */
static uint64_t unseen_sum(struct recording *rec, __u32 idx)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.sched_unseen), n = libbpf_num_possible_cpus();
	uint64_t sum = 0;
	__u64 *v;

	if (fd < 0 || n <= 0 || !(v = calloc(n, sizeof(*v))))
		return 0;
	if (!bpf_map_lookup_elem(fd, &idx, v))
		for (int i = 0; i < n; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* Sums of one selection of sched_times entries. */
struct acc {
	uint64_t oncpu, runq, runq_others, blocked, nvcsw, nivcsw, waits, minflt, majflt;
	uint64_t cls[BLOCKED_NCLASSES];
};

static void acc_add(struct acc *a, const struct it_sched_times *v)
{
	a->oncpu += v->oncpu_ns;
	a->runq += v->runq_ns;
	a->runq_others += v->runq_others_ns;
	a->blocked += v->blocked_ns;
	a->nvcsw += v->nvcsw;
	a->nivcsw += v->nivcsw;
	a->waits += v->runq_waits;
	a->minflt += v->minflt;
	a->majflt += v->majflt;
}

/* Classified blocked time: (key with kstack_id) → ns, and the class of each
 * kernel stack id. */
struct blocked_entry {
	struct it_sched_key key;
	uint64_t ns;
	int cls;
};

struct view {
	struct sched_entry *times;
	size_t ntimes;
	struct blocked_entry *blocked;
	size_t nblocked;
	uint64_t cls_total[BLOCKED_NCLASSES];
	/* waiting for a thread, by the waker's phase (0: none) */
	uint64_t waker_phase_ns[IT_MAX_PHASES];
};

/* A kernel stack's frame names, leaf first; -1: none. */
static int kstack_frames(struct recording *rec, int stack_fd, __s32 id, const char **frames)
{
	__u64 ips[IT_MAX_STACK_DEPTH] = {};
	int n = 0;

	if (id < 0 || bpf_map_lookup_elem(stack_fd, &id, ips))
		return -1;
	for (; n < IT_MAX_STACK_DEPTH && ips[n]; n++) {
		uint64_t off;

		frames[n] = rec->ksyms ? ksyms__map_addr(rec->ksyms, ips[n], &off) : NULL;
	}
	return n;
}

static int classify_kstack(struct recording *rec, int stack_fd, __s32 id)
{
	const char *frames[IT_MAX_STACK_DEPTH];
	int n = kstack_frames(rec, stack_fd, id, frames);

	return n < 0 ? BLOCKED_OTHER : blocked_classify(frames, n);
}

/* Whether a wake-up by another thread of the process came from an
 * interrupt that thread merely ran under (its kernel stack there says so;
 * without one, the thread's doing). */
static bool waker_interrupted(struct recording *rec, int stack_fd, __s32 id)
{
	const char *frames[IT_MAX_STACK_DEPTH];
	int n = kstack_frames(rec, stack_fd, id, frames);

	return n > 0 && blocked_waker_is_interrupt(frames, n);
}

/* The cuda preset's gpu_sync phase: blocked in it, the host waits on the
 * GPU, whatever the kernel stack says. -1: none. */
static int gpu_phase(const struct recording *rec)
{
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (rec->phase_names[i] && !strcmp(rec->phase_names[i], "gpu_sync"))
			return i;
	return -1;
}

/* A stack id's class, computed once per id. */
struct stack_memo {
	__s32 id;
	int cls;
};

static int memo_find(const struct stack_memo *memo, size_t n, __s32 id)
{
	for (size_t i = 0; i < n; i++)
		if (memo[i].id == id)
			return memo[i].cls;
	return -1;
}

static int read_blocked(struct recording *rec, struct view *vw)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	int fd = bpf_map__fd(s->maps.blocked_kstacks), stack_fd = bpf_map__fd(s->maps.offcpu_stackmap);
	struct it_sched_key key, next, *prev = NULL;
	size_t cap = 0;
	/* class per stack id, computed once; the same for the wakers' stacks:
	 * 1 for an interrupt's */
	struct stack_memo *memo = NULL, *wmemo = NULL;
	size_t nmemo = 0, nwmemo = 0;
	int gpu = gpu_phase(rec);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct blocked_entry *e;
		int cls;

		key = next;
		prev = &key;
		if (vw->nblocked >= cap || !memo) {
			/* blocked, memo and wmemo share one capacity */
			size_t c = vec_grown(cap, vw->nblocked, sizeof(*vw->blocked), 256);

			if (!c || VEC_RESIZE(vw->blocked, c) || VEC_RESIZE(memo, c) || VEC_RESIZE(wmemo, c))
				goto nomem;
			cap = c;
		}
		e = &vw->blocked[vw->nblocked];
		if (bpf_map_lookup_elem(fd, &key, &e->ns))
			continue;
		e->key = key;
		cls = memo_find(memo, nmemo, key.kstack_id);
		if (cls < 0) {
			cls = classify_kstack(rec, stack_fd, key.kstack_id);
			memo[nmemo].id = key.kstack_id;
			memo[nmemo++].cls = cls;
		}
		if (key.flags & IT_SCHED_WOKEN_BY_THREAD) {
			/* ended by another thread of the process: waiting for that
			 * thread (an epoll_wait or a condition variable is then
			 * not I/O or a lock), unless an interrupt woke it there */
			int irq = memo_find(wmemo, nwmemo, key.waker_kstack_id);

			if (irq < 0) {
				irq = waker_interrupted(rec, stack_fd, key.waker_kstack_id);
				wmemo[nwmemo].id = key.waker_kstack_id;
				wmemo[nwmemo++].cls = irq;
			}
			if (!irq)
				cls = BLOCKED_THREAD;
		}
		/* blocked inside CUDA synchronisation (the cuda preset's gpu_sync
		 * phase): the host waits on the GPU, whatever the kernel stack says */
		if (gpu > 0 && key.phase == (__u32)gpu)
			cls = BLOCKED_GPU;
		e->cls = cls;
		vw->cls_total[cls] += e->ns;
		if (cls == BLOCKED_THREAD && key.waker_phase < IT_MAX_PHASES)
			vw->waker_phase_ns[key.waker_phase] += e->ns;
		vw->nblocked++;
	}
	free(memo);
	free(wmemo);
	return 0;
nomem:
	free(memo);
	free(wmemo);
	return -ENOMEM;
}

/* The view's entries are sorted by (process, cycle), so that one cycle's
 * entries are a range found by bisection: summing each cycle by a walk of
 * every entry made a long run's end quadratic in its cycles. */
static int key_cmp(const struct it_sched_key *x, const struct it_sched_key *y)
{
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

static int times_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct sched_entry *)a)->key, &((const struct sched_entry *)b)->key);
}

static int blocked_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct blocked_entry *)a)->key, &((const struct blocked_entry *)b)->key);
}

static void view_sort(struct view *vw)
{
	if (vw->ntimes)
		qsort(vw->times, vw->ntimes, sizeof(*vw->times), times_cmp);
	if (vw->nblocked)
		qsort(vw->blocked, vw->nblocked, sizeof(*vw->blocked), blocked_cmp);
}

/* [*lo, *hi) of the entries of (tgid, cycle); the whole array when either is -1. */
static void key_range(const void *base, size_t n, size_t size, size_t key_off, long tgid, long cycle,
		      size_t *lo, size_t *hi)
{
	struct it_sched_key want = { .tgid = (__u32)tgid, .cycle = (__u32)cycle };
	size_t l = 0, h = n;

	*lo = 0, *hi = base ? n : 0;
	if (!base || tgid < 0 || cycle < 0)
		return;
#define KEY_AT(i) ((const struct it_sched_key *)((const char *)base + (i) * size + key_off))
	while (l < h) { /* first entry not below want */
		size_t mid = l + (h - l) / 2;

		if (key_cmp(KEY_AT(mid), &want) < 0)
			l = mid + 1;
		else
			h = mid;
	}
	*lo = l;
	for (h = n; l < h;) { /* first entry above want */
		size_t mid = l + (h - l) / 2;

		if (key_cmp(KEY_AT(mid), &want) <= 0)
			l = mid + 1;
		else
			h = mid;
	}
#undef KEY_AT
	*hi = l;
}

/* Sums entries matching (tgid or -1, cycle or -1, phase or -1, main-thread-only). */
static void select_sum(const struct view *vw, long tgid, long cycle, long phase, bool main_only,
		       struct acc *a)
{
	size_t lo, hi;

	memset(a, 0, sizeof(*a));
	key_range(vw->times, vw->ntimes, sizeof(*vw->times), offsetof(struct sched_entry, key), tgid, cycle,
		  &lo, &hi);
	for (size_t i = lo; vw->times && i < hi; i++) {
		const struct it_sched_key *k = &vw->times[i].key;

		if ((tgid >= 0 && k->tgid != tgid) || (cycle >= 0 && k->cycle != cycle) ||
		    (phase >= 0 && k->phase != phase) || (main_only && !(k->flags & IT_SCHED_MAIN_THREAD)))
			continue;
		acc_add(a, &vw->times[i].v);
	}
	key_range(vw->blocked, vw->nblocked, sizeof(*vw->blocked), offsetof(struct blocked_entry, key), tgid,
		  cycle, &lo, &hi);
	for (size_t i = lo; vw->blocked && i < hi; i++) {
		const struct it_sched_key *k = &vw->blocked[i].key;

		if ((tgid >= 0 && k->tgid != tgid) || (cycle >= 0 && k->cycle != cycle) ||
		    (phase >= 0 && k->phase != phase) || (main_only && !(k->flags & IT_SCHED_MAIN_THREAD)))
			continue;
		a->cls[vw->blocked[i].cls] += vw->blocked[i].ns;
	}
}

static void blocked_fill(double *ms, const uint64_t *cls)
{
	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		ms[i] = cls[i] / 1e6;
}

/* Percentile p of a run-queue histogram; an empty one reads 0. */
static double runq_percentile(const uint64_t *slots, double p)
{
	double v = stats__log2_hist_percentile(slots, IT_HIST_SLOTS, p);

	return isnan(v) ? 0 : v;
}

static void runq_fill(struct model_runq *r, uint64_t waits, const uint64_t *slots)
{
	r->waits = waits;
	memcpy(r->hist_us, slots, sizeof(r->hist_us));
	r->p50_us = runq_percentile(slots, 50);
	r->p95_us = runq_percentile(slots, 95);
	r->p99_us = runq_percentile(slots, 99);
}

static void split_fill(struct model_split *o, const struct acc *a, uint64_t wall_ns)
{
	struct wall_split w;

	wall_split(&w, wall_ns, a->oncpu, a->runq, a->blocked);
	o->present = true;
	o->oncpu_ms = w.oncpu_ms;
	o->runq_ms = w.runq_ms;
	o->runq_others_ms = a->runq_others / 1e6;
	o->offcpu_ms = w.blocked_ms;
	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		o->blocked_ms[i] = a->cls[i] / 1e6;
	o->has_wall = wall_ns != 0;
	o->unattributed_ms = w.unattributed_ms;
	o->unattributed_percent = w.unattributed_percent;
}

/* Run-queue histogram of (tgid or -1, phase or -1), summed. */
static void hist_sum(struct recording *rec, long tgid, long phase, uint64_t *slots)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.runq_hist);
	struct it_hist_key key, next, *prev = NULL;
	struct it_hist h;

	memset(slots, 0, sizeof(__u64) * IT_HIST_SLOTS);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if ((tgid >= 0 && key.tgid != tgid) || (phase >= 0 && key.phase != phase))
			continue;
		if (bpf_map_lookup_elem(fd, &key, &h))
			continue;
		for (int i = 0; i < IT_HIST_SLOTS; i++)
			slots[i] += h.slots[i];
	}
}

/* Each cycle's split: the main thread against the cycle's wall time, all
 * threads' sums beside it, and each phase against the phase's wall time. */
static double fill_cycles(const struct view *vw, struct model *m)
{
	double worst = 0;

	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		uint64_t wall = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
		struct acc a, all;

		if (c->observed)
			continue; /* no kernel figures carry a `py:` cycle's number */
		select_sum(vw, c->pid, c->bpf_cycle, -1, true, &a);
		split_fill(&c->split, &a, wall);
		select_sum(vw, c->pid, c->bpf_cycle, -1, false, &all);
		c->has_all_threads = true;
		c->all_oncpu_ms = all.oncpu / 1e6;
		c->all_runq_ms = all.runq / 1e6;
		c->all_runq_others_ms = all.runq_others / 1e6;
		c->all_offcpu_ms = all.blocked / 1e6;
		c->minflt = all.minflt;
		c->majflt = all.majflt;
		c->nvcsw = all.nvcsw;
		c->nivcsw = all.nivcsw;
		if (wall && c->split.unattributed_percent > worst)
			worst = c->split.unattributed_percent;
		for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
			struct acc p;

			if (!c->phases[ph].present || c->phases[ph].observed)
				continue;
			select_sum(vw, c->pid, c->bpf_cycle, ph, false, &p);
			split_fill(&c->phases[ph].split, &p, (uint64_t)(c->phases[ph].ms * 1e6));
		}
	}
	return worst;
}

static int per_process_fill(struct recording *rec, const struct view *vw, uint64_t now,
			    struct model_sched_figures *sf)
{
	sf->per_process.n = 0;
	for (size_t i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];
		uint64_t start = p->start_ns > rec->start_ns ? p->start_ns : rec->start_ns;
		uint64_t end = p->exited && p->exit_ns ? p->exit_ns : now;
		uint64_t slots[IT_HIST_SLOTS];
		struct model_sched_proc *o;
		struct acc a, m;

		if (VEC_RESERVE(sf->per_process.v, sf->per_process.cap, sf->per_process.n, 8))
			return -ENOMEM;
		o = &sf->per_process.v[sf->per_process.n++];
		memset(o, 0, sizeof(*o));
		select_sum(vw, p->pid, -1, -1, false, &a);
		select_sum(vw, p->pid, -1, -1, true, &m);
		o->pid = p->pid;
		snprintf(o->comm, sizeof(o->comm), "%s", p->comm);
		o->wall_ms = end > start ? (end - start) / 1e6 : 0;
		o->oncpu_ms = a.oncpu / 1e6;
		o->runq_wait_ms = a.runq / 1e6;
		o->runq_wait_others_ms = a.runq_others / 1e6;
		o->offcpu_ms = a.blocked / 1e6;
		blocked_fill(o->blocked_ms, a.cls);
		o->runq_share_percent = a.oncpu + a.runq ? 100.0 * a.runq / (a.oncpu + a.runq) : 0;
		o->nvcsw = a.nvcsw;
		o->nivcsw = a.nivcsw;
		split_fill(&o->main_thread, &m, end > start ? end - start : 0);
		hist_sum(rec, p->pid, -1, slots);
		runq_fill(&o->runq, a.waits, slots);
	}
	return 0;
}

static void per_phase_fill(struct recording *rec, const struct view *vw, struct model_sched_figures *sf)
{
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		struct model_sched_phase *p = &sf->per_phase[ph];
		uint64_t slots[IT_HIST_SLOTS];
		struct acc a;

		memset(p, 0, sizeof(*p));
		if (!rec->phase_names[ph])
			continue;
		p->present = true;
		select_sum(vw, -1, -1, ph, false, &a);
		split_fill(&p->split, &a, 0);
		hist_sum(rec, -1, ph, slots);
		runq_fill(&p->runq, 0, slots);
	}
}

/* How complete the off-CPU user stacks are, weighted by blocked time (the
 * report's weights are nanoseconds), and how they were taken. */
static void offcpu_quality_fill(struct recording *rec, const struct stack_report *sr, struct model_offcpu_figures *f)
{
	const struct sched_state *ss = rec->sched;
	struct model_offcpu_dwarf *d = &f->stack_quality.dwarf;
	__u64 st[IT_STAT_MAX];

	snprintf(f->stack_quality.method, sizeof(f->stack_quality.method), "%s",
		 ss->offcpu_dwarf ? "dwarf: user stack copied at the blocking system call's exit, unwound with "
		 "libdwfl; frame pointers for other blocks" : "frame pointers");
	f->stack_quality.blocked_in_stacks_ms = sr->total / 1e6;
	f->stack_quality.complete_ms = sr->complete / 1e6;
	f->stack_quality.complete_percent = sr->total ? 100.0 * sr->complete / sr->total : 0.0;
	f->stack_quality.user_stack_missing_ms = sr->user_stack_missing / 1e6;
	f->stack_quality.has_dwarf = ss->offcpu_dwarf;
	if (!ss->offcpu_dwarf)
		return;
	tracer__stats(&rec->tracer, st);
	*d = (struct model_offcpu_dwarf){
		.records = ss->offcpu_stacks.records,
		.bad_records = ss->offcpu_stacks.bad_records,
		.sent = st[IT_STAT_OFFCPU_DWARF_SENT],
		.lost = st[IT_STAT_OFFCPU_DWARF_LOST],
		.copy_failed = st[IT_STAT_OFFCPU_DWARF_COPY_ERR],
		.dropped_ms = st[IT_STAT_OFFCPU_DWARF_DROPPED] / 1e6,
		.sample_us = rec->opts.offcpu_sample_us,
		.candidates = ss->candidates,
		.reused = ss->reused,
		.reuse_missed = ss->reuse_missed,
		.sampled_ms = ss->sampled_ns / 1e6,
		.unweighed_ms = ss->unweighed_ns / 1e6,
		.short_exited_ms = st[IT_STAT_OFFCPU_SHORT_EXITED] / 1e6,
	};
}

/* The heaviest stacks of f (microseconds) with their share of its total,
 * into top (cleared first). 0 or -ENOMEM. */
static int top_stacks_fill(struct model *m, const struct folded *f, struct model_top_stacks *top)
{
	struct folded sorted = {};
	int err = 0;

	top->n = 0;
	for (size_t i = 0; i < f->n && !err; i++)
		err = folded__add(&sorted, f->entries[i].stack, f->entries[i].count);
	folded__merge(&sorted);
	folded__sort_by_count(&sorted);
	for (size_t i = 0; i < sorted.n && i < TOP_STACKS && !err; i++) {
		int32_t name = model__intern(m, sorted.entries[i].stack);

		if (name < 0 || VEC_RESERVE(top->v, top->cap, top->n, TOP_STACKS)) {
			err = -ENOMEM;
			break;
		}
		top->v[top->n++] = (struct model_top_stack){ .stack = name, .ms = sorted.entries[i].count / 1e3,
			.percent = f->total ? 100.0 * sorted.entries[i].count / f->total : 0.0 };
	}
	folded__free(&sorted);
	return err;
}

static int cmp_s32(const void *a, const void *b)
{
	__s32 x = *(const __s32 *)a, y = *(const __s32 *)b;

	return x < y ? -1 : x > y;
}

/* The blocked intervals' reasons (classified by kernel stack, as the
 * blocked time is) and folded stacks (names[entry]), each kernel stack
 * classified once. */
static int name_intervals(struct recording *rec, struct model *m, const int32_t *names)
{
	int stack_fd = bpf_map__fd(rec->tracer.skel->maps.offcpu_stackmap), gpu = gpu_phase(rec);
	size_t n = m->noffcpu_intervals, nids = 0;
	__s32 *ids;
	int *cls;

	if (!n)
		return 0; /* no interval: nothing to name (qsort/bsearch want an array) */
	ids = malloc(n * sizeof(*ids));
	cls = malloc(n * sizeof(*cls));
	if (!ids || !cls) {
		free(ids);
		free(cls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = m->offcpu_intervals[i].kstack_id;
	qsort(ids, n, sizeof(*ids), cmp_s32);
	for (size_t i = 0; i < n; i++)
		if (!nids || ids[i] != ids[nids - 1])
			ids[nids++] = ids[i];
	for (size_t i = 0; i < nids; i++)
		cls[i] = classify_kstack(rec, stack_fd, ids[i]);
	for (size_t i = 0; i < n; i++) {
		struct model_offcpu_interval *iv = &m->offcpu_intervals[i];
		const __s32 *at = bsearch(&iv->kstack_id, ids, nids, sizeof(*ids), cmp_s32);

		iv->reason = gpu > 0 && iv->phase == (uint32_t)gpu ? BLOCKED_GPU : at ? cls[at - ids] : BLOCKED_OTHER;
		iv->stack = names && iv->entry < rec->sched->offcpu_stacks.n ? names[iv->entry] : -1;
	}
	free(ids);
	free(cls);
	return 0;
}

/* The wakers' stacks into a report (stacks__collect_maps' walk), less
 * those of interrupts: no thread's doing, their blocks are classed by
 * where they blocked (the BPF program can not tell). */
static int collect_wakers(struct recording *rec, int fd, int stack_fd, struct stack_report *r)
{
	struct it_stack_key key, next, *prev = NULL;
	__u64 uips[IT_MAX_STACK_DEPTH], kips[IT_MAX_STACK_DEPTH], count;
	struct {
		__s32 id;
		bool irq;
	} memo[256];
	size_t nmemo = 0;
	int err = 0;

	memset(r, 0, sizeof(*r));
	while (!err && bpf_map_get_next_key(fd, prev, &next) == 0) {
		int irq = -1;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &count))
			continue;
		for (size_t i = 0; i < nmemo && irq < 0; i++)
			if (memo[i].id == key.kstack_id)
				irq = memo[i].irq;
		if (irq < 0) {
			irq = waker_interrupted(rec, stack_fd, key.kstack_id);
			if (nmemo < sizeof(memo) / sizeof(memo[0]))
				memo[nmemo++] = (typeof(memo[0])){ .id = key.kstack_id, .irq = irq };
		}
		if (irq)
			continue;
		bool have_u = key.ustack_id >= 0 && !bpf_map_lookup_elem(stack_fd, &key.ustack_id, uips);
		bool have_k = key.kstack_id >= 0 && !bpf_map_lookup_elem(stack_fd, &key.kstack_id, kips);

		err = stacks__add(r, rec->syms, rec->ksyms, rec->phase_names, &key, have_u ? uips : NULL,
				  have_k ? kips : NULL, count);
	}
	return err;
}

/* wakeup.folded (microseconds of blocked time on the stacks of the threads
 * that ended it) and offcpu.waiting_for_thread. */
static int collect_wakeups(struct recording *rec, struct model *m, const struct view *vw)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	int fd = bpf_map__fd(s->maps.wakeup_counts), stack_fd = bpf_map__fd(s->maps.offcpu_stackmap);
	__typeof__(m->offcpu.waiting) *w = &m->offcpu.waiting;
	struct stack_report sr;
	int err;

	w->top_stacks.n = 0;
	err = collect_wakers(rec, fd, stack_fd, &sr);
	if (err) {
		fprintf(stderr, "infertrace: reading the wakers' stacks failed: %s\n", strerror(-err));
	} else {
		folded__merge(&sr.all);
		sr.all.total = 0;
		for (size_t i = 0; i < sr.all.n; i++) {
			sr.all.entries[i].count /= 1000;
			sr.all.total += sr.all.entries[i].count;
		}
		folded__free(&m->wakeup_us);
		m->wakeup_us = sr.all;
		memset(&sr.all, 0, sizeof(sr.all));
		m->have_wakeup = true;
	}
	stack_report__free(&sr);
	for (int ph = 0; ph < IT_MAX_PHASES; ph++)
		w->by_waker_phase_ms[ph] = ph && rec->phase_names[ph] && vw->waker_phase_ns[ph] ?
					   vw->waker_phase_ns[ph] / 1e6 : NAN;
	w->total_ms = vw->cls_total[BLOCKED_THREAD] / 1e6;
	w->outside_phases_ms = vw->waker_phase_ns[0] / 1e6;
	w->in_stacks_ms = m->wakeup_us.total / 1e3;
	return err ? 0 : top_stacks_fill(m, &m->wakeup_us, &w->top_stacks);
}

/* Off-CPU stacks into the model (microseconds), and the `offcpu` figures. */
static int collect_offcpu(struct recording *rec, struct model *m, const struct view *vw)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	struct model_offcpu_figures *off = &m->offcpu;
	struct stack_report sr;
	uint64_t blocked = 0;
	int32_t *names = NULL;
	int err, werr;

	off->present = true;
	off->top_stacks.n = 0;
	off->in_stacks_ms = 0;
	err = stacks__collect_maps(bpf_map__fd(s->maps.offcpu_counts), bpf_map__fd(s->maps.offcpu_stackmap),
				   rec->syms, rec->ksyms, rec->phase_names, &sr);
	/* each entry's folded stack: trace.json's blocked intervals refer to theirs */
	if (!err && rec->sched->offcpu_stacks.n)
		names = malloc(rec->sched->offcpu_stacks.n * sizeof(*names));
	for (size_t i = 0; names && i < rec->sched->offcpu_stacks.n; i++)
		names[i] = -1;
	if (!err)
		err = ustack_table__report_named(&rec->sched->offcpu_stacks, bpf_map__fd(s->maps.offcpu_stackmap),
						 rec->syms, rec->ksyms, rec->phase_names, &sr, m, true, names);
	if (!err)
		err = name_intervals(rec, m, names);
	if (!err)
		err = stacks__to_model(bpf_map__fd(s->maps.offcpu_counts), bpf_map__fd(s->maps.offcpu_label_counts),
				       bpf_map__fd(s->maps.offcpu_stackmap), rec->syms, rec->ksyms, true, m);
	if (err) {
		fprintf(stderr, "infertrace: reading the off-CPU stacks failed: %s\n", strerror(-err));
		goto out;
	}
	/* the map counts nanoseconds; the folded stacks microseconds */
	for (int ph = 0; ph < IT_MAX_PHASES; ph++) {
		struct folded *f = ph ? &sr.by_phase[ph] : &sr.all;
		struct folded *to = ph ? &m->offcpu_us_by_phase[ph] : &m->offcpu_us;

		if (ph && !rec->phase_names[ph])
			continue;
		folded__merge(f);
		f->total = 0;
		for (size_t i = 0; i < f->n; i++) {
			f->entries[i].count /= 1000;
			f->total += f->entries[i].count;
		}
		folded__free(to);
		*to = *f;
		memset(f, 0, sizeof(*f));
	}
	m->have_offcpu = true;
	off->in_stacks_ms = m->offcpu_us.total / 1e3;
	err = top_stacks_fill(m, &m->offcpu_us, &off->top_stacks);
out:
	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		blocked += vw->cls_total[i];
	off->total_ms = blocked / 1e6;
	off->min_block_us = rec->opts.min_block_us;
	blocked_fill(off->blocked_ms, vw->cls_total);
	offcpu_quality_fill(rec, &sr, off);
	werr = collect_wakeups(rec, m, vw);
	stack_report__free(&sr);
	free(names);
	return err ? err : werr;
}

static int sched_collect(struct recording *rec, struct model *m)
{
	struct sched_state *ss = rec->sched;
	struct model_sched_figures *sf = &m->sched;
	struct view vw = {};
	uint64_t slots[IT_HIST_SLOTS];
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct acc a;
	int err;

	if (ss && ss->labels_not_kept)
		model__add_lost(m, "offcpu_labels", ss->labels_not_kept);
	if (!ss)
		return 0;
	sf->present = true;
	sf->available = ss->enabled;
	snprintf(sf->missing_tracepoints, sizeof(sf->missing_tracepoints), "%s", ss->missing);
	if (!ss->enabled)
		return 0;
	err = sched__read_times(&rec->tracer, &vw.times, &vw.ntimes);
	if (!err)
		err = read_blocked(rec, &vw);
	if (!err)
		view_sort(&vw);
	if (err) {
		fprintf(stderr, "infertrace: reading the scheduler maps failed: %s\n", strerror(-err));
		goto out;
	}
	sf->has_totals = true;
	{
		__u64 st[IT_STAT_MAX];

		tracer__stats(&rec->tracer, st);
		sf->lost.threads_not_tracked = st[IT_STAT_SCHED_THREADS_FULL];
		sf->lost.updates = st[IT_STAT_SCHED_LOST];
		sf->lost.offcpu_kernel_stacks = st[IT_STAT_OFFCPU_KSTACK_ERR];
		sf->lost.offcpu_user_stacks = st[IT_STAT_OFFCPU_USTACK_ERR];
	}
	/* recovered, not lost: the time comes from the kernel's own counters */
	sf->unseen_in = unseen_sum(rec, 0);
	sf->unseen_out = unseen_sum(rec, 1);
	sched__unattributed(&rec->tracer, vw.times, vw.ntimes, sf);
	select_sum(&vw, -1, -1, -1, false, &a);
	sf->cpus = (int)ncpus;
	sf->has_faults = true;
	sf->minflt = a.minflt;
	sf->majflt = a.majflt;
	sf->nvcsw = a.nvcsw;
	sf->nivcsw = a.nivcsw;
	sf->oncpu_ms = a.oncpu / 1e6;
	sf->offcpu_ms = a.blocked / 1e6;
	sf->runq_wait_ms = a.runq / 1e6;
	sf->runq_wait_others_ms = a.runq_others / 1e6;
	sf->runq_share_percent = a.oncpu + a.runq ? 100.0 * a.runq / (a.oncpu + a.runq) : 0;
	/* threads that wanted a CPU, on average, against the CPUs there are */
	sf->avg_runnable_threads = m->run.end_ns > m->run.start_ns ?
		(double)(a.oncpu + a.runq) / (m->run.end_ns - m->run.start_ns) : 0;
	hist_sum(rec, -1, -1, slots);
	runq_fill(&sf->runq, a.waits, slots);
	/* start-up: the time no cycle was open yet (after the last, the last stays open) */
	select_sum(&vw, -1, IT_CYCLE_NONE, -1, false, &a);
	sf->has_startup = true;
	sf->startup_oncpu_ms = a.oncpu / 1e6;
	sf->startup_runq_ms = a.runq / 1e6;
	err = per_process_fill(rec, &vw, m->run.end_ns, sf);
	per_phase_fill(rec, &vw, sf);
	sf->max_cycle_unattributed_percent = fill_cycles(&vw, m);
	if (!err)
		err = collect_offcpu(rec, m, &vw);
out:
	free(vw.times);
	free(vw.blocked);
	return err;
}

static void sched_cleanup(struct recording *rec)
{
	if (rec->sched) {
		ustack_table__free(&rec->sched->offcpu_stacks);
		threads_clear(rec->sched, -1);
	}
	free(rec->sched);
	rec->sched = NULL;
}

const struct concern sched_concern = {
	.name = "sched",
	.configure = sched_configure,
	.attach = sched_attach,
	.on_event = sched_on_event,
	.stop = sched_stop,
	.collect = sched_collect,
	.cleanup = sched_cleanup,
};
