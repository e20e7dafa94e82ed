// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Cycles, phases and counts from uprobes, uretprobes and USDT probes. One
 * generic program per kind, attached once per probed function with a cookie
 * naming the probe, its role and its phase/count id (IT_COOKIE).
 *
 * Each thread keeps a small stack of open calls (struct it_thread_state).
 * Frames whose stack pointer lies below a new entry's are gone (longjmp,
 * exceptions): they are dropped and counted, so a call that never returns
 * cannot corrupt later cycles. Phase time is inclusive and counted once per
 * thread: a call of a phase already open below it (recursion, nesting) adds
 * no time.
 *
 * Every cycle and phase edge, entry and exit, first settles the thread's
 * on-CPU / run-queue / blocked accounting at the edge's own timestamp
 * (sched_edge_settle, bpf/sched.bpf.h), then retags it with the new cycle
 * and phase. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "sched.bpf.h"
#include "python.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_phase_key);
	__type(value, struct it_phase_total);
} phase_totals SEC(".maps");

/* The scheduler's edge settle and retag as global functions: the verifier
 * checks each once, not on every path of the entry and return programs
 * that reach them. With frame_end global too, it_uretprobe went from
 * 659,000 verified instructions to 41,000 and it_uprobe from 156,000 to
 * 34,000: start-up CPU with --preset llama.cpp 2.0 -> 0.6 s. A pointer
 * passed to a global function may be NULL to it. edge_unseen_in settles a
 * thread that the edge finds off its CPU (sched_edge_unseen_in). */
__noinline int edge_unseen_in(struct it_sched_thread *st, __u32 tid, __u64 now)
{
	if (st)
		sched_edge_unseen_in(st, tid, now);
	return 0;
}

__noinline int edge_settle(struct it_sched_thread *st, __u32 tgid, __u32 tid, __u64 now, int lost)
{
	if (cfg_sched_edges && st && st->state != IT_SCHED_ONCPU)
		edge_unseen_in(st, tid, now);
	else
		sched_edge_settle(st, tgid, tid, now, lost);
	return 0;
}

__noinline int edge_retag(struct it_sched_thread *st, __u32 tgid, __u32 tid)
{
	sched_edge_retag(st, tgid, tid);
	return 0;
}

/* The thread's state after edge_settle, which follows a thread first seen
 * at the edge. */
static __always_inline struct it_sched_thread *settle_edge(struct it_sched_thread *st, __u32 tgid, __u32 tid,
							   __u64 now, bool lost)
{
	if (!cfg_sched_edges)
		return NULL;
	edge_settle(st, tgid, tid, now, lost);
	return st ? st : bpf_map_lookup_elem(&sched_threads, &tid);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_count_key);
	__type(value, __u64);
} call_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct it_probe_hist);
} probe_hists SEC(".maps");

/* Next cycle index per process (cycles are numbered from 0). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} next_cycle SEC(".maps");

/* 1: llama.cpp prompt batches start cycles (no --cycle or --cycle-marker) */
const volatile __u32 cfg_llama_cycles = 0;

/* Per process: the llama.cpp settings its calls passed (IT_ROLE_LLAMA_*). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct it_llama_params);
} llama_params SEC(".maps");

/* The batch event being filled (it is larger than a BPF stack frame). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct it_llama_batch_event);
} llama_batch_scratch SEC(".maps");

static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0;

	while (v > 1 && r < IT_HIST_SLOTS - 1) {
		v >>= 1;
		r++;
	}
	return r;
}

static __always_inline void emit_cycle(__u32 type, __u32 tgid, __u32 tid, __u32 cycle, __u64 ts,
				       __u32 abandoned)
{
	struct it_cycle_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return;
	}
	event_header(&e->hdr, type, tgid, tid, ts);
	e->cycle = cycle;
	e->abandoned = abandoned;
	bpf_ringbuf_submit(e, lazy_wakeup());
}

static __always_inline struct it_proc_state *proc_state(__u32 tgid)
{
	struct it_proc_state *ps = bpf_map_lookup_elem(&procs, &tgid);
	struct it_proc_state init = { .cycle = IT_CYCLE_NONE };

	if (ps)
		return ps;
	bpf_map_update_elem(&procs, &tgid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&procs, &tgid);
}

static __always_inline void cycle_open(__u32 tgid, __u32 tid, __u64 now)
{
	struct it_proc_state *ps = proc_state(tgid);
	__u32 zero = 0, *next;

	if (!ps)
		return;
	next = bpf_map_lookup_elem(&next_cycle, &tgid);
	if (!next) {
		bpf_map_update_elem(&next_cycle, &tgid, &zero, BPF_NOEXIST);
		next = bpf_map_lookup_elem(&next_cycle, &tgid);
		if (!next)
			return;
	}
	ps->cycle = __sync_fetch_and_add(next, 1);
	ps->cycle_start_ns = now;
	emit_cycle(IT_EV_CYCLE_BEGIN, tgid, tid, ps->cycle, now, 0);
}

static __always_inline void cycle_close(__u32 tgid, __u32 tid, __u64 now, __u32 abandoned)
{
	struct it_proc_state *ps = bpf_map_lookup_elem(&procs, &tgid);

	if (!ps || ps->cycle == IT_CYCLE_NONE)
		return;
	emit_cycle(IT_EV_CYCLE_END, tgid, tid, ps->cycle, now, abandoned);
	ps->cycle = IT_CYCLE_NONE;
}

static __always_inline struct it_thread_state *thread_state(__u32 tid)
{
	struct it_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	static const struct it_thread_state init;

	if (ts)
		return ts;
	if (bpf_map_update_elem(&threads, &tid, &init, BPF_NOEXIST) && !bpf_map_lookup_elem(&threads, &tid)) {
		stat_inc(IT_STAT_THREADS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline __u32 innermost_phase(struct it_thread_state *ts)
{
	__u32 phase = IT_PHASE_NONE;

	for (int i = 0; i < IT_PHASE_STACK; i++) {
		if (i >= ts->depth)
			break;
		if (ts->frames[i].phase != IT_PHASE_NONE)
			phase = ts->frames[i].phase;
	}
	return phase;
}

/* A frame ends: account its phase time, its latency, close its cycle. A
 * global function, so the verifier checks it once rather than at each of the
 * IT_PHASE_STACK iterations of the loops that pop frames. */
__noinline int frame_end(struct it_frame *f, __u32 tgid, __u32 tid, __u64 now, int abandoned)
{
	if (!f)
		return 0;

	__u64 d = now - f->entry_ns;
	__u32 probe = f->probe;
	struct it_probe_hist *h;

	if (abandoned) {
		stat_inc(IT_STAT_PROBE_ABANDONED);
		if (f->role == IT_ROLE_CYCLE || f->role == IT_ROLE_CYCLE_BEGIN)
			cycle_close(tgid, tid, now, 1);
		return 0;
	}
	h = bpf_map_lookup_elem(&probe_hists, &probe);
	if (h)
		__sync_fetch_and_add(&h->slots[log2_slot(d / 1000) & (IT_HIST_SLOTS - 1)], 1);
	if (f->role == IT_ROLE_CYCLE || f->role == IT_ROLE_CYCLE_BEGIN) {
		cycle_close(tgid, tid, now, 0);
		return 0;
	}
	if (f->nested || f->phase == IT_PHASE_NONE)
		return 0;

	struct it_phase_key key = { .tgid = tgid, .cycle = f->cycle, .phase = f->phase };
	struct it_phase_total *tot = bpf_map_lookup_elem(&phase_totals, &key), init = {};

	if (!tot) {
		bpf_map_update_elem(&phase_totals, &key, &init, BPF_NOEXIST);
		tot = bpf_map_lookup_elem(&phase_totals, &key);
	}
	if (tot) {
		__sync_fetch_and_add(&tot->ns, d);
		__sync_fetch_and_add(&tot->calls, 1);
	} else {
		stat_inc(IT_STAT_LOST_EVENTS);
	}

	struct it_phase_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return 0;
	}
	event_header(&e->hdr, IT_EV_PHASE_END, tgid, tid, now);
	e->entry_ns = f->entry_ns;
	e->cycle = f->cycle;
	e->phase = f->phase;
	e->probe = probe;
	e->pad = 0;
	e->run_delay_ns = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), sched_info.run_delay);
	bpf_ringbuf_submit(e, lazy_wakeup());
	return 0;
}

static __always_inline void count_add(__u32 tgid, __u32 id, __u64 n)
{
	struct it_count_key key = { .tgid = tgid, .cycle = current_cycle(tgid), .count = id };
	__u64 zero = 0, *v = bpf_map_lookup_elem(&call_counts, &key);

	if (!v) {
		/* threads of a process may create the key at the same time: the
		 * loser's -EEXIST is not a loss, its count goes to the winner's entry */
		bpf_map_update_elem(&call_counts, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&call_counts, &key);
	}
	if (v)
		__sync_fetch_and_add(v, n);
	else
		stat_inc(IT_STAT_LOST_EVENTS);
}

static __always_inline void count_call(__u32 tgid, __u32 id)
{
	count_add(tgid, id, 1);
}

static __always_inline struct it_llama_params *llama_state(__u32 tgid)
{
	struct it_llama_params *lp = bpf_map_lookup_elem(&llama_params, &tgid);
	static const struct it_llama_params init;

	if (lp)
		return lp;
	bpf_map_update_elem(&llama_params, &tgid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&llama_params, &tgid);
}

/* The address of a by-value struct passed as the second argument: larger
 * than 16 bytes, it is on the stack above the return address on x86-64
 * (System V: class MEMORY) and passed by reference in x1 on arm64 (AAPCS64:
 * the caller's copy). */
static __always_inline const void *struct_arg2(struct pt_regs *ctx, __u64 sp)
{
#if defined(__TARGET_ARCH_x86)
	return (const void *)(sp + 8);
#else
	return (const void *)PT_REGS_PARM2(ctx);
#endif
}

/* llama_context_params, llama_set_n_threads' counts, the model's path,
 * the thread counts ggml's CPU backend is given (by the caller's phase). */
static __always_inline void llama_args(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 sp, __u32 id)
{
	struct it_llama_params *lp = llama_state(tgid);
	__u32 which = id & 0xff, cp[4];

	if (!lp) {
		stat_inc(IT_STAT_LOST_EVENTS);
		return;
	}
	if (which == IT_LLAMA_ARG_CONTEXT_PARAMS) {
		/* n_ctx, n_batch, n_ubatch, n_seq_max: the struct's first fields in
		 * every llama.cpp release since 2023 (the thread counts after them
		 * moved in some builds: they come from llama_set_n_threads only) */
		if (bpf_probe_read_user(cp, sizeof(cp), struct_arg2(ctx, sp)))
			return;
		lp->n_ctx = cp[0];
		lp->n_batch = cp[1];
		lp->n_ubatch = cp[2];
		lp->n_seq_max = cp[3];
		lp->have_context = 1;
	} else if (which == IT_LLAMA_ARG_THREADS) {
		lp->n_threads = (__s32)PT_REGS_PARM2(ctx);
		lp->n_threads_batch = (__s32)PT_REGS_PARM3(ctx);
		lp->have_threads = 1;
	} else if (which == IT_LLAMA_ARG_MODEL_PATH) {
		bpf_probe_read_user_str(lp->model_path, sizeof(lp->model_path), (const void *)PT_REGS_PARM1(ctx));
	} else if (which == IT_LLAMA_ARG_SEQ_RM || which == IT_LLAMA_ARG_MEMORY_CLEAR) {
		struct it_llama_seq_end_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

		if (!e) {
			stat_inc(IT_STAT_RINGBUF_LOST);
			return;
		}
		event_header(&e->hdr, IT_EV_LLAMA_SEQ_END, tgid, tid, bpf_ktime_get_ns());
		e->mem = PT_REGS_PARM1(ctx);
		e->seq = which == IT_LLAMA_ARG_SEQ_RM ? (__s32)PT_REGS_PARM2(ctx) : -1;
		e->p0 = which == IT_LLAMA_ARG_SEQ_RM ? (__s32)PT_REGS_PARM3(ctx) : -1;
		e->p1 = which == IT_LLAMA_ARG_SEQ_RM ? (__s32)PT_REGS_PARM4(ctx) : -1;
		e->pad = 0;
		bpf_ringbuf_submit(e, lazy_wakeup());
	} else if (which == IT_LLAMA_ARG_BACKEND_THREADS) {
		struct it_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
		__u32 pp = (id >> 8) & 0xff, ph = ts ? ts->phase : IT_PHASE_NONE, row, slot;
		__s32 n = (__s32)PT_REGS_PARM2(ctx);

		if (n <= 0)
			return;
		row = pp && ph == pp ? IT_LLAMA_USED_PROMPT : pp && ph == pp + 1 ? IT_LLAMA_USED_GENERATION
										  : IT_LLAMA_USED_OTHER;
		/* slots are a power of two: the mask bounds the index for the verifier */
		slot = n < IT_LLAMA_THREADS_SLOTS ? (__u32)n & (IT_LLAMA_THREADS_SLOTS - 1) : 0;
		__sync_fetch_and_add(&lp->threads_used[row][slot], 1);
	}
}

/* struct llama_batch (llama.h since the batch API began; the all_pos_0,
 * all_pos_1 and all_seq_id fields that older releases had after logits
 * are not read). */
struct llama_batch_head {
	__s32 n_tokens;
	__u32 pad;
	__u64 token, embd, pos, n_seq_id, seq_id, logits;
};

/* One chunk of a batch's tokens into the scratch event: positions,
 * sequence-id pointers and logits flags IT_LLAMA_BATCH_CHUNK at a time,
 * then each token's first sequence id. */
struct llama_batch_walk {
	struct llama_batch_head b;
	__u32 n; /* tokens to read */
};

static long llama_batch_step(__u64 idx, void *data)
{
	struct llama_batch_walk *w = data;
	__u32 zero = 0, base = (__u32)idx * IT_LLAMA_BATCH_CHUNK, n;
	struct it_llama_batch_event *e = bpf_map_lookup_elem(&llama_batch_scratch, &zero);
	__s32 pos[IT_LLAMA_BATCH_CHUNK], nseq[IT_LLAMA_BATCH_CHUNK];
	__u64 sid[IT_LLAMA_BATCH_CHUNK];
	__s8 lg[IT_LLAMA_BATCH_CHUNK];
	bool have_pos, have_seq, have_lg;

	if (!e || base >= w->n)
		return 1;
	n = w->n - base;
	if (n > IT_LLAMA_BATCH_CHUNK)
		n = IT_LLAMA_BATCH_CHUNK;
	have_pos = w->b.pos && !bpf_probe_read_user(pos, n * sizeof(pos[0]), (void *)(w->b.pos + base * 4));
	have_seq = w->b.seq_id && w->b.n_seq_id &&
		   !bpf_probe_read_user(sid, n * sizeof(sid[0]), (void *)(w->b.seq_id + base * 8)) &&
		   !bpf_probe_read_user(nseq, n * sizeof(nseq[0]), (void *)(w->b.n_seq_id + base * 4));
	have_lg = w->b.logits && !bpf_probe_read_user(lg, n * sizeof(lg[0]), (void *)(w->b.logits + base));
	if ((w->b.seq_id && !have_seq) || (w->b.pos && !have_pos))
		return 0; /* unread: these tokens are not counted in tokens_read */
	for (__u32 j = 0; j < IT_LLAMA_BATCH_CHUNK; j++) {
		__s32 seq = 0, p = have_pos ? pos[j] : -1;
		__u32 out;

		if (j >= n)
			break;
		if (have_seq) {
			if (nseq[j] < 1 || bpf_probe_read_user(&seq, sizeof(seq), (void *)sid[j]))
				continue;
			if (nseq[j] > 1)
				e->multi_seq_tokens++;
		}
		e->tokens_read++;
		if (seq < 0 || seq >= IT_LLAMA_SEQS) {
			e->other_seq_tokens++;
			continue;
		}
		/* without logits flags llama.cpp outputs the batch's last token */
		out = have_lg ? lg[j] != 0 : base + j + 1 == (__u32)w->b.n_tokens;
		struct it_llama_seq_part *sp = &e->seq[seq & (IT_LLAMA_SEQS - 1)];

		if (!sp->tokens) {
			sp->pos_min = p;
			sp->pos_max = p;
		} else if (p < sp->pos_min) {
			sp->pos_min = p;
		} else if (p > sp->pos_max) {
			sp->pos_max = p;
		}
		sp->tokens++;
		sp->outputs += out;
		sp->last_output = out;
	}
	return 0;
}

/* The batch's tokens per sequence, sent as IT_EV_LLAMA_BATCH. Global, so
 * verified once on its own: inlined, it multiplied it_uprobe's states. */
__noinline int llama_batch_send(const struct llama_batch_head *b, __u64 now, __u64 lctx, int starts)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tgid = id >> 32, tid = (__u32)id;
	struct it_llama_batch_event *e = bpf_map_lookup_elem(&llama_batch_scratch, &zero);
	struct llama_batch_walk w = {};

	if (!e || !b)
		return 0;
	w.b = *b;
	__builtin_memset(e, 0, sizeof(*e));
	event_header(&e->hdr, IT_EV_LLAMA_BATCH, tgid, tid, now);
	e->ctx = lctx;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	e->run_delay_ns = BPF_CORE_READ(task, sched_info.run_delay);
	e->majflt = BPF_CORE_READ(task, maj_flt);
	e->n_tokens = (__u32)b->n_tokens;
	e->flags = (b->pos ? 0 : IT_LLAMA_BATCH_NO_POS) | (b->seq_id ? 0 : IT_LLAMA_BATCH_NO_SEQ) |
		   (starts ? IT_LLAMA_BATCH_STARTS : 0);
	w.n = e->n_tokens < IT_LLAMA_BATCH_READ ? e->n_tokens : IT_LLAMA_BATCH_READ;
	if (!b->pos && !b->seq_id && !b->logits) {
		/* llama_batch_get_one: one sequence, positions after the memory's
		 * last, the last token's logits: nothing to read per token */
		e->tokens_read = e->n_tokens;
		e->seq[0].tokens = e->n_tokens;
		e->seq[0].pos_min = e->seq[0].pos_max = -1;
		e->seq[0].outputs = e->seq[0].last_output = 1;
	} else {
		bpf_loop((w.n + IT_LLAMA_BATCH_CHUNK - 1) / IT_LLAMA_BATCH_CHUNK, llama_batch_step, &w, 0);
	}
	if (bpf_ringbuf_output(&events, e, sizeof(*e), lazy_wakeup()))
		stat_inc(IT_STAT_RINGBUF_LOST);
	return 0;
}

/* Whether every token of a batch of 2-64 asks for its logits: past
 * position 0, a decode step of several sequences (one token each), which
 * is generation, where a prompt asks only for its last token's. Global,
 * verified once on its own. */
__noinline int llama_batch_all_outputs(const struct llama_batch_head *b)
{
	__u64 w[IT_LLAMA_DECODE_MAX / 8] = {};
	__u32 n;

	if (!b || !b->logits)
		return 0;
	n = (__u32)b->n_tokens;
	if (n < 2 || n > IT_LLAMA_DECODE_MAX)
		return 0;
	if (bpf_probe_read_user(w, n, (const void *)b->logits))
		return 0;
	for (__u32 i = 0; i < IT_LLAMA_DECODE_MAX / 8; i++) {
		__u64 x = w[i];

		if (i * 8 >= n)
			break;
		if (n - i * 8 < 8)
			x |= ~0ULL << ((n - i * 8) * 8); /* the bytes past the batch: not zero */
		if ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL)
			return 0; /* a zero byte: a token without logits */
	}
	return 1;
}

/* A llama_decode: its batch's tokens go to the prompt or generation count
 * and phase (several tokens are a prompt, unless past position 0 each
 * asks for its logits);
 * a prompt at position 0 (or, without positions, a batch of
 * several tokens after a single-token one) starts a cycle. Returns the
 * phase the call is timed in. */
static __always_inline __u32 llama_decode(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 sp, __u32 id,
					  struct it_sched_thread **st, __u64 now)
{
	struct it_llama_params *lp = llama_state(tgid);
	struct llama_batch_head b = {};
	__u32 prompt_phase = id & 0xff, prompt_count = (id >> 8) & 0xff;
	__s32 pos0 = -1;
	bool prompt, start;

	if (bpf_probe_read_user(&b, sizeof(b), struct_arg2(ctx, sp)) || b.n_tokens <= 0)
		return prompt_phase + 1;
	if (b.pos && bpf_probe_read_user(&pos0, sizeof(pos0), (const void *)b.pos))
		pos0 = -1;
	prompt = b.n_tokens > 1 && (pos0 == 0 || !llama_batch_all_outputs(&b));
	if (b.pos)
		start = prompt && pos0 == 0;
	else
		start = prompt && (!lp || lp->last_batch_tokens <= 1);
	if (lp)
		lp->last_batch_tokens = b.n_tokens;
	if (start && cfg_llama_cycles) {
		*st = settle_edge(*st, tgid, tid, now, false);
		cycle_close(tgid, tid, now, 0);
		cycle_open(tgid, tid, now);
	}
	count_add(tgid, prompt ? prompt_count : prompt_count + 1, (__u64)b.n_tokens);
	llama_batch_send(&b, now, PT_REGS_PARM1(ctx), start && !b.pos);
	return prompt ? prompt_phase : prompt_phase + 1;
}

/* Whether a function entry at sp was reached by a tail call (a jump) from a
 * probed function whose uretprobe still holds its return address: the word at
 * sp is then the uretprobe trampoline (the first slot of the process's XOL
 * area), as the kernel's own return-instance bookkeeping tells "chained"
 * calls apart. Such a call shares its caller's sp; the caller is not gone. */
static __always_inline bool tail_called(struct pt_regs *ctx, __u64 sp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	unsigned long tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	__u64 ret = 0;

	if (!tramp)
		return false;
#if defined(__TARGET_ARCH_x86)
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		return false;
#else
	ret = PT_REGS_RET(ctx);
#endif
	return ret == tramp;
}

/* Stack pointer a function returns with, from its entry sp: x86 pops the
 * return address, arm64 keeps it in a register. */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_DELTA 8
#else
#define RET_SP_DELTA 0
#endif
#define SP_NONE (~0ull) /* USDT frames: never gone by the stack pointer */

/* ---- `py:` specs as kernel edges ------------------------------------- */

/* FNV-1a over buf[0, to), restarted after each '/' when `base`: the name
 * as pyspans__name_hash hashes it, or the file's basename. */
static __always_inline __u64 py_fnv(const char *buf, __u32 to, bool base)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (__u32 i = 0; i < IT_PY_STR; i++) {
		if (i >= to)
			break;
		if (base && buf[i] == '/')
			h = 0xcbf29ce484222325ull;
		else
			h = (h ^ (__u8)buf[i]) * 0x100000001b3ull;
	}
	return h;
}

/* A code object seen for the first time (its names in py_names_scratch):
 * watched when its qualname is a spec's, in any file or in the spec's
 * module (the file's basename without `.py`; file_bytes 0: not ASCII).
 * User space checks the whole name when it arrives. */
__noinline int py_watch_first_sight(__u32 tgid, __u64 code, __u32 name_bytes, __u32 file_bytes)
{
	struct py_code_key ck = { .tgid = tgid, .code = code };
	struct it_py_watch_name key = {};
	__u32 zero = 0, end = file_bytes, specs = 0, *v;
	struct py_names *nm = bpf_map_lookup_elem(&py_names_scratch, &zero);

	if (!nm)
		return 0;
	key.name = py_fnv(nm->name, name_bytes, false);
	v = bpf_map_lookup_elem(&py_watch_names, &key);
	if (v)
		specs |= *v;
	if (end >= 3 && end <= IT_PY_STR) {
		if (nm->file[(end - 3) & (IT_PY_STR - 1)] == '.' && nm->file[(end - 2) & (IT_PY_STR - 1)] == 'p' &&
		    nm->file[(end - 1) & (IT_PY_STR - 1)] == 'y')
			end -= 3;
		key.module = py_fnv(nm->file, end, true);
		v = bpf_map_lookup_elem(&py_watch_names, &key);
		if (v)
			specs |= *v;
	}
	if (specs)
		bpf_map_update_elem(&py_watch, &ck, &specs, BPF_ANY);
	return 0;
}


/* A `py:` phase call begins: a frame like a probe's, with no stack pointer
 * (never dropped by one). */
static __always_inline void py_phase_begin(struct it_thread_state *ts, __u32 tgid, __u32 spec, __u32 phase,
					   __u64 now)
{
	__u32 d = ts->depth;
	__u16 nested = 0;

	if (d >= IT_PHASE_STACK) {
		stat_inc(IT_STAT_PROBE_STACK_FULL);
		return;
	}
	for (int i = 0; i < IT_PHASE_STACK; i++) {
		if (i >= d)
			break;
		if (ts->frames[i].phase == phase)
			nested = 1;
	}
	struct it_frame *f = &ts->frames[d & (IT_PHASE_STACK - 1)];

	f->entry_ns = now;
	f->entry_sp = SP_NONE;
	f->cycle = current_cycle(tgid);
	f->phase = phase;
	f->probe = IT_PY_PROBE_BASE + spec;
	f->recursion = 0;
	f->role = IT_ROLE_PHASE;
	f->nested = nested;
	ts->depth = d + 1;
	ts->phase = phase;
}

/* A `py:` phase call ends: its frame wherever it is on the thread's stack
 * (probes' frames opened after it stay: their returns come later). */
static __always_inline void py_phase_end(struct it_thread_state *ts, __u32 tgid, __u32 tid, __u32 spec, __u64 now)
{
	__u32 d = ts->depth, probe = IT_PY_PROBE_BASE + spec, match = IT_PHASE_STACK;

	if (d > IT_PHASE_STACK)
		return;
	for (__u32 j = 0; j < IT_PHASE_STACK; j++) {
		if (j >= d)
			break;
		if (ts->frames[j].probe == probe)
			match = j;
	}
	if (match >= IT_PHASE_STACK)
		return; /* its begin found the stack full */
	frame_end(&ts->frames[match], tgid, tid, now, 0);
	for (__u32 j = 0; j < IT_PHASE_STACK - 1; j++) {
		if (j < match)
			continue;
		if (j + 1 >= d)
			break;
		ts->frames[j] = ts->frames[j + 1];
	}
	ts->depth = d - 1;
	ts->phase = innermost_phase(ts);
}

/* Watched frame k of the observation py_stack_capture just made
 * (py_obs_scratch, leaf first): the call of each spec it is, the root-most
 * frame winning. A bpf_loop callback, verified once; branch-free inside. */
static int py_edge_take(__u32 k, void *unused)
{
	__u32 zero = 0;
	struct it_py_obs_event *o = bpf_map_lookup_elem(&py_obs_scratch, &zero);
	struct py_edge_scratch *x = bpf_map_lookup_elem(&py_edge_scratch, &zero);
	__u64 call;
	__u32 specs;

	(void)unused;
	if (!o || !x || k >= o->nwatch || k >= IT_PY_OBS_WATCH)
		return 1;
	call = o->watch[k].call;
	specs = o->watch[k].specs;
	for (int s = 0; s < IT_PY_EDGE_SPECS; s++) {
		__u64 take = -(__u64)((specs >> s) & 1);

		x->next[s] = (call & take) | (x->next[s] & ~take);
	}
	return 0;
}

/* The specs' calls in the observation just made. */
static __always_inline void py_edge_calls(struct py_edge_scratch *x)
{
	for (int s = 0; s < IT_PY_EDGE_SPECS; s++)
		x->next[s] = 0;
	bpf_loop(IT_PY_OBS_WATCH, py_edge_take, NULL, 0);
}

/* One spec's edge in one pass of py_edges_observe (old, next: its call
 * before and now). A global function: verified once, not per spec and pass. */
__noinline int py_edge_spec(__u64 pid_tgid, __u32 spec_pass, __u64 at, __u64 old, __u64 next)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, spec = spec_pass & 0xff, pass = spec_pass >> 8;
	struct it_py_spec *sp = bpf_map_lookup_elem(&py_specs, &spec);
	struct it_thread_state *ts;
	__u32 probe = IT_PY_PROBE_BASE + (spec & (IT_PY_EDGE_SPECS - 1));
	struct it_probe_hist *ph;

	if (!sp || spec >= IT_PY_EDGE_SPECS)
		return 0;
	if (pass == 0 && old && sp->role == IT_ROLE_PHASE) {
		ts = bpf_map_lookup_elem(&threads, &tid);
		if (ts)
			py_phase_end(ts, tgid, tid, spec, at);
	} else if (pass == 1 && old && sp->role == IT_ROLE_CYCLE) {
		cycle_close(tgid, tid, at, 0);
	} else if (pass == 2 && next && (sp->role == IT_ROLE_CYCLE || sp->role == IT_ROLE_CYCLE_MARKER)) {
		/* a cycle still open (another thread's) is left */
		cycle_close(tgid, tid, at, sp->role == IT_ROLE_CYCLE);
		cycle_open(tgid, tid, at);
	} else if (pass == 3 && next) {
		ph = bpf_map_lookup_elem(&probe_hists, &probe);
		if (ph)
			__sync_fetch_and_add(&ph->hits, 1);
		if (sp->role == IT_ROLE_PHASE) {
			ts = thread_state(tid);
			if (ts)
				py_phase_begin(ts, tgid, spec, sp->id, at);
			else
				stat_inc(IT_STAT_PY_EDGE_LOST);
		} else if (sp->role == IT_ROLE_COUNT) {
			count_call(tgid, sp->id);
		}
	}
	return 0;
}

struct py_edge_walk {
	__u64 pid_tgid, at;
	__u32 tid, pad;
};

/* Step i of the edges' passes (i / IT_PY_EDGE_SPECS) over the specs
 * (i % IT_PY_EDGE_SPECS): a bpf_loop callback, verified once rather than
 * for each of the 64 steps. */
static int py_edge_step(__u32 i, struct py_edge_walk *w)
{
	__u32 zero = 0, s = i & (IT_PY_EDGE_SPECS - 1), pass = i / IT_PY_EDGE_SPECS, tid = w->tid;
	struct py_edge_scratch *x = bpf_map_lookup_elem(&py_edge_scratch, &zero);
	struct py_edge_thread *pt = bpf_map_lookup_elem(&py_edge_threads, &tid);

	if (!x || !pt || s >= cfg_py_edges)
		return 0;
	if (x->next[s] != pt->call[s])
		py_edge_spec(w->pid_tgid, s | pass << 8, w->at, pt->call[s], x->next[s]);
	return 0;
}

/* Whether this observation's edges are applied now. A stack read while
 * CPython was pushing or popping a frame can lack its root-side frames,
 * which would end every call below them and begin them again. A thread's
 * root-most frame changes only when its Python work ends and other work
 * begins: a new root is accepted once two observations in a row show it. */
static __always_inline bool py_edge_accept(struct py_edge_thread *pt, __u64 h)
{
	__u32 zero = 0;
	struct it_py_stack *s = bpf_map_lookup_elem(&py_scratch, &zero);
	__u64 root = 0;

	if (h && s) {
		__u32 last = s->depth - 1;

		if (last < IT_PY_MAX_FRAMES)
			root = s->frames[last].code;
	}
	if (h && s && s->incomplete) {
		/* a frame or an identity was not read: the calls it shows may
		 * be missing or look new */
		stat_inc(IT_STAT_PY_EDGE_DEFERRED);
		return false;
	}
	if (h && s && s->truncated)
		return true; /* its root is not on it: nothing to compare */
	if (!pt->last_ns || root == pt->root) {
		pt->root = root;
		pt->cand = 0;
		return true;
	}
	if (root == pt->cand) {
		pt->root = root;
		pt->cand = 0;
		return true;
	}
	pt->cand = root;
	stat_inc(IT_STAT_PY_EDGE_DEFERRED);
	return false;
}

/* An observation of thread tid's Python stack at `now` (a sample or a
 * switch-out; h: its stack, 0 for none). Calls that ended or began since the
 * previous one did so in between: the edge is placed half-way (unbiased,
 * within half the interval), and there the thread's on-CPU time is settled
 * to its old cycle and phase and retagged, as at a probe's edge. Ends
 * before begins; cycles open before phases and counts. */
__noinline int py_edges_observe(__u32 tgid, __u32 tid, __u64 now, __u64 h)
{
	__u32 zero = 0, changed = 0;
	struct py_edge_scratch *x = bpf_map_lookup_elem(&py_edge_scratch, &zero);
	struct py_edge_thread *pt = bpf_map_lookup_elem(&py_edge_threads, &tid);
	struct py_edge_thread init = {};
	struct it_py_edge_res *res;
	struct it_sched_thread *st;
	__u64 at, inflight;

	if (!x)
		return 0;
	if (!pt) {
		bpf_map_update_elem(&py_edge_threads, &tid, &init, BPF_NOEXIST);
		pt = bpf_map_lookup_elem(&py_edge_threads, &tid);
		if (!pt) {
			stat_inc(IT_STAT_PY_EDGE_LOST);
			return 0;
		}
	}
	if (!py_edge_accept(pt, h))
		return 0;
	py_edge_calls(x);
	for (int s = 0; s < IT_PY_EDGE_SPECS; s++)
		if (s < cfg_py_edges && x->next[s] != pt->call[s])
			changed = 1;
	at = pt->last_ns && pt->last_ns < now ? pt->last_ns + (now - pt->last_ns) / 2 : now;
	res = bpf_map_lookup_elem(&py_edge_res, &zero);
	if (res) {
		res->observations++;
		if (changed) {
			res->edges++;
			res->half_ns_sum += now - at;
			if (now - at > res->half_ns_max)
				res->half_ns_max = now - at;
		}
	}
	pt->last_ns = now;
	if (!changed)
		return 0;
	st = cfg_sched_edges ? bpf_map_lookup_elem(&sched_threads, &tid) : NULL;
	/* a switch-out that preempted a probe's edge program of this thread,
	 * between its timestamp and its retag: the Python stack changed
	 * before that edge */
	inflight = st ? st->edge_ns : 0;
	if (inflight && at > inflight)
		at = inflight;
	/* not before what the scheduler already settled: the edge and the
	 * split stay one instant */
	if (st && st->state == IT_SCHED_ONCPU && st->ts > at && st->ts <= now)
		at = st->ts;
	if (st)
		st->edge_ns = at;
	st = settle_edge(st, tgid, tid, at, false);
	struct py_edge_walk walk = { .pid_tgid = (__u64)tgid << 32 | tid, .at = at, .tid = tid };

	bpf_loop(4 * IT_PY_EDGE_SPECS, py_edge_step, &walk, 0);
	for (int s = 0; s < IT_PY_EDGE_SPECS; s++)
		pt->call[s] = x->next[s];
	if (inflight && st) {
		/* the probe's edge stays in flight: the time from its timestamp
		 * on (pending, and the wait this switch-out begins) is its new
		 * attribution, which its own retag adds */
		sched_edge_tag(st, tgid, tid);
		st->edge_ns = inflight;
	} else {
		edge_retag(st, tgid, tid);
	}
	return 1;
}

static __always_inline int on_entry(struct pt_regs *ctx, __u64 cookie, __u64 sp)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, tid = (__u32)id;
	__u32 role = IT_COOKIE_ROLE(cookie), pid_ = IT_COOKIE_ID(cookie);
	__u32 probe = IT_COOKIE_PROBE(cookie);
	struct it_probe_hist *h;
	struct it_thread_state *ts;
	struct it_sched_thread *st;
	bool dropped = false;
	__u32 d;

	if (!target_of(tgid))
		return 0;
	stat_inc(IT_STAT_PROBE_HITS);
	h = bpf_map_lookup_elem(&probe_hists, &probe);
	if (h)
		__sync_fetch_and_add(&h->hits, 1);
	if (role == IT_ROLE_COUNT) {
		count_call(tgid, pid_);
		return 0;
	}
	if (role == IT_ROLE_LLAMA_ARGS) {
		llama_args(ctx, tgid, tid, sp, pid_);
		return 0;
	}
	/* an edge: its timestamp is taken once the thread's state is found */
	st = sched_edge_begin(tid, &now);
	if (role == IT_ROLE_CYCLE_MARKER) {
		st = settle_edge(st, tgid, tid, now, false);
		cycle_close(tgid, tid, now, 0);
		cycle_open(tgid, tid, now);
		edge_retag(st, tgid, tid);
		return 0;
	}
	if (role == IT_ROLE_LLAMA_DECODE) {
		/* from here on an ordinary phase call */
		pid_ = llama_decode(ctx, tgid, tid, sp, pid_, &st, now);
		role = IT_ROLE_PHASE;
	}
	/* a phase timed by its Python callers (docs/probes.md, the sqlite
	 * preset): its probes, on calls made a few times per transaction,
	 * show which Python function called the library */
	if (cfg_py_locate_phase && role == IT_ROLE_PHASE && pid_ == cfg_py_locate_phase)
		py_observe_emit(tgid, tid, IT_PY_OBS_PROBE, py_stack_capture(tgid, tid), now);
	ts = thread_state(tid);
	if (!ts)
		goto out;
	/* drop frames already unwound: their sp is below ours, or equal (a
	 * sibling call at the same depth) unless we were tail-called from them */
	bool chained = sp != SP_NONE && tail_called(ctx, sp);

	for (int i = 0; sp != SP_NONE && i < IT_PHASE_STACK; i++) {
		d = ts->depth;
		if (d == 0 || d > IT_PHASE_STACK)
			break;
		struct it_frame *top = &ts->frames[(d - 1) & (IT_PHASE_STACK - 1)];

		if (top->entry_sp > sp || (top->entry_sp == sp && chained))
			break;
		frame_end(top, tgid, tid, now, true);
		ts->depth = d - 1;
		dropped = true;
	}
	/* dropped frames left at an unknown time: their attribution is lost */
	st = settle_edge(st, tgid, tid, now, dropped);
	d = ts->depth;
	if (d > 0 && d <= IT_PHASE_STACK) {
		struct it_frame *top = &ts->frames[(d - 1) & (IT_PHASE_STACK - 1)];

		/* direct recursion: fold into the open frame */
		if (top->probe == probe && role != IT_ROLE_PHASE_BEGIN && role != IT_ROLE_CYCLE_BEGIN) {
			top->recursion++;
			goto out;
		}
	}
	if (d >= IT_PHASE_STACK) {
		stat_inc(IT_STAT_PROBE_STACK_FULL);
		goto out;
	}

	struct it_frame *f = &ts->frames[d & (IT_PHASE_STACK - 1)];
	__u32 phase = (role == IT_ROLE_PHASE || role == IT_ROLE_PHASE_BEGIN) ? pid_ : IT_PHASE_NONE;
	__u16 nested = 0;
	bool cycle_nested = false;

	for (int i = 0; i < IT_PHASE_STACK; i++) {
		if (i >= d)
			break;
		if (phase != IT_PHASE_NONE && ts->frames[i].phase == phase)
			nested = 1;
		if (ts->frames[i].role == IT_ROLE_CYCLE || ts->frames[i].role == IT_ROLE_CYCLE_BEGIN)
			cycle_nested = true;
	}
	if ((role == IT_ROLE_CYCLE || role == IT_ROLE_CYCLE_BEGIN) && !cycle_nested) {
		cycle_close(tgid, tid, now, 1); /* a cycle left open by another thread */
		cycle_open(tgid, tid, now);
	}
	f->entry_ns = now;
	f->entry_sp = sp;
	f->cycle = current_cycle(tgid);
	f->phase = phase;
	f->probe = probe;
	f->recursion = 0;
	f->role = role;
	f->nested = nested;
	ts->depth = d + 1;
	if (phase != IT_PHASE_NONE)
		ts->phase = phase;
out:
	edge_retag(st, tgid, tid);
	return 0;
}

/* A return. A uprobe's frame is the one this probe pushed with the entry sp
 * the return implies (sp - RET_SP_DELTA): calls never pushed (direct
 * recursion folded into its frame, a full stack) match none and are ignored;
 * frames above the match never returned (longjmp out of them) and are
 * dropped. A USDT END matches the innermost frame of its probe. */
static __always_inline int on_return(__u64 cookie, __u64 ret_sp)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, tid = (__u32)id, probe = IT_COOKIE_PROBE(cookie);
	__u64 entry_sp = ret_sp == SP_NONE ? SP_NONE : ret_sp - RET_SP_DELTA;
	struct it_thread_state *ts;
	struct it_sched_thread *st;
	__u32 d, match = 0;
	bool found = false;

	if (!target_of(tgid))
		return 0;
	ts = bpf_map_lookup_elem(&threads, &tid);
	if (!ts)
		return 0;
	d = ts->depth;
	if (d > IT_PHASE_STACK)
		return 0;
	for (__u32 j = 0; j < IT_PHASE_STACK; j++) {
		if (j >= d)
			break;
		if (ts->frames[j].probe == probe && (entry_sp == SP_NONE || ts->frames[j].entry_sp == entry_sp)) {
			match = j;
			found = true;
		}
	}
	if (!found) {
		struct it_frame *top = &ts->frames[(d - 1) & (IT_PHASE_STACK - 1)];

		if (d > 0 && top->probe == probe && top->recursion)
			top->recursion--; /* a folded direct recursion returns */
		else if (d < IT_PHASE_STACK)
			stat_inc(IT_STAT_PROBE_UNMATCHED); /* not a call dropped for a full stack */
		return 0;
	}
	/* frames above the match never returned (a longjmp out of them): when
	 * they left is not known */
	st = sched_edge_begin(tid, &now);
	st = settle_edge(st, tgid, tid, now, d - 1 > match);
	for (int i = 0; i < IT_PHASE_STACK; i++) {
		d = ts->depth;
		if (d == 0 || d > IT_PHASE_STACK || d - 1 < match)
			break;
		struct it_frame *top = &ts->frames[(d - 1) & (IT_PHASE_STACK - 1)];

		if (d - 1 == match && entry_sp == SP_NONE && top->recursion) {
			top->recursion--; /* a USDT pair nested in itself */
			break;
		}
		frame_end(top, tgid, tid, now, d - 1 != match);
		ts->depth = d - 1;
	}
	ts->phase = innermost_phase(ts);
	edge_retag(st, tgid, tid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(it_uprobe)
{
	return on_entry(ctx, bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx));
}

SEC("uretprobe")
int BPF_KRETPROBE(it_uretprobe)
{
	return on_return(bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx));
}

SEC("usdt")
int BPF_USDT(it_usdt)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 role = IT_COOKIE_ROLE(cookie);

	/* a USDT pair may begin and end in different functions: its frame is
	 * never treated as gone by the stack pointer */
	if (role == IT_ROLE_PHASE_END || role == IT_ROLE_CYCLE_END)
		return on_return(cookie, SP_NONE);
	return on_entry(ctx, cookie, SP_NONE);
}
