// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CUDA host side (--preset cuda): one generic uprobe/uretprobe pair placed
 * on libcudart and libcuda functions; the cookie names the counter, the
 * argument whose value is summed (memcpy sizes) and whether the function
 * is a runtime (libcudart) one. Per (process, cycle, counter): calls and
 * the sum, bytes for copies, nanoseconds from entry to return for
 * synchronizations. The runtime implements its calls with the driver's,
 * so driver functions called inside a runtime call are not counted again,
 * and nested synchronizations are timed once (outermost). At an outermost
 * kernel or graph launch, the thread's stack goes to user space: its Python
 * stack when it runs Python, else its native user stack, taken as the
 * samples take theirs (IT_EV_CUDA_LAUNCH with a `stackmap` id with
 * --call-graph fp, a copy to unwind, IT_EV_CUDA_LAUNCH_USTACK, with dwarf):
 * the launch stack the GPU join puts that launch's kernels under. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "python.bpf.h"
#include "ustack.bpf.h"

struct cuda_thread {
	__u32 rt_depth;    /* open runtime calls */
	__u32 sync_depth;  /* open synchronizations */
	__u64 sync_entry_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_cuda_key);
	__type(value, struct it_cuda_total);
} cuda_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct cuda_thread);
} cuda_threads SEC(".maps");

static __always_inline void cuda_add(__u32 tgid, __u32 counter, __u64 calls, __u64 v)
{
	struct it_cuda_key k = { .tgid = tgid, .cycle = current_cycle(tgid), .counter = counter };
	struct it_cuda_total zero = {}, *t = bpf_map_lookup_elem(&cuda_counts, &k);

	if (!t) {
		bpf_map_update_elem(&cuda_counts, &k, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&cuda_counts, &k);
		if (!t) {
			stat_inc(IT_STAT_CUDA_LOST);
			return;
		}
	}
	__sync_fetch_and_add(&t->calls, calls);
	__sync_fetch_and_add(&t->sum, v);
}

/* At a probed function's entry (before its first instruction): where it
 * returns to, in its caller. */
static __always_inline __u64 entry_return_address(struct pt_regs *ctx)
{
	__u64 ret = 0;

#if defined(__TARGET_ARCH_x86)
	/* the call pushed it: the word at the stack pointer */
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP_CORE(ctx)))
		ret = 0;
#elif defined(__TARGET_ARCH_arm64)
	ret = PT_REGS_RET_CORE(ctx); /* the link register, x30 */
#endif
	return ret;
}

#define EEXIST 17

/* Per thread, launch call site (the call's return address) and slot (the
 * key's pad), what the user-space unwinding of a launch stack copy there
 * read (struct it_ustack_check, pc: the launch function's entry): written
 * by user space, as sched's ustack_checks are for off-CPU stacks. A launch
 * loop launches from the same few sites with the same stacks over and
 * over; one site reached by several paths (a helper called from each
 * layer's code) keeps up to IT_CUDA_CHECK_SLOTS of them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096); /* 1 when unused (user/concerns/cuda.c) */
	__type(key, struct it_ustack_check_key);
	__type(value, struct it_ustack_check);
} cuda_ustack_checks SEC(".maps");

/* The return addresses uretprobes replaced on the live stack (the
 * copies hold the real ones: restore_uretprobe_returns), innermost first. */
struct cuda_hijacked {
	__u64 tramp;
	__u64 at[USTACK_MAX_URETPROBES], ret[USTACK_MAX_URETPROBES];
};

static __always_inline void hijacked_returns(struct cuda_hijacked *h)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);

	__builtin_memset(h, 0, sizeof(*h));
	h->tramp = ri ? BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr) : 0;
#if defined(__TARGET_ARCH_x86)
	/* x86-64: the return address is the word at the entry's sp; elsewhere
	 * a hijacked word never matches, and the stack is copied */
	for (int i = 0; i < USTACK_MAX_URETPROBES && ri && h->tramp; i++) {
		h->at[i] = BPF_CORE_READ(ri, stack);
		h->ret[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
#endif
}

/* Whether every stack word check c's unwinding used is the same now (a
 * word a uretprobe replaced read as the real one). */
static __always_inline bool words_match(const struct it_ustack_check *c, __u64 sp, const struct cuda_hijacked *h)
{
	__u64 w;

	for (__u32 i = 0; i < IT_USTACK_CHECK_WORDS; i++) {
		__u64 addr;

		if (i >= c->nwords)
			return true;
		addr = sp + c->off[i];
		if (bpf_probe_read_user(&w, sizeof(w), (void *)addr))
			return false;
		if (w == h->tramp && h->tramp) {
			for (int j = 0; j < USTACK_MAX_URETPROBES; j++)
				if (h->at[j] == addr) {
					w = h->ret[j];
					break;
				}
		}
		if (w != c->val[i])
			return false;
	}
	return true;
}

/* The ref of a check of the call site (its slots: the stacks that reach
 * it by different paths) that describes the thread's stack now: same
 * process, launch function, registers (arm64's link register is the
 * caller, the key) and stack words; 0 when none does. Global: verified
 * once. ids: tid | tgid << 32. */
__noinline __u64 cuda_reuse_ref(__u64 ids, __u64 caller, __u64 pc, __u64 sp, __u64 fp)
{
	struct cuda_hijacked h;
	bool have_h = false;

	for (__u32 slot = 0; slot < IT_CUDA_CHECK_SLOTS; slot++) {
		struct it_ustack_check_key k = { .tid = (__u32)ids, .pad = slot, .pc = caller };
		struct it_ustack_check *c = bpf_map_lookup_elem(&cuda_ustack_checks, &k);

		if (!c || !c->ref || c->tgid != ids >> 32 || c->pc != pc || c->sp != sp ||
		    ((c->flags & IT_USTACK_CHECK_FP) && c->fp != fp))
			continue;
		if (!have_h) {
			hijacked_returns(&h);
			have_h = true;
		}
		if (words_match(c, sp, &h))
			return c->ref;
	}
	return 0;
}

/* Whether this CPU's launch scratch record is being built: a uprobe
 * program may be preempted (it only keeps its CPU), and another thread's
 * launch on the CPU meanwhile would overwrite the record half built. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cuda_scratch_busy SEC(".maps");

static __always_inline void launch_copy(struct it_ustack_event *e, __u32 tgid, __u32 tid, __u64 caller);

/* A native launch's stack with --call-graph dwarf: the user registers and
 * a copy of the stack, unwound in user space as a sample's, or only the
 * ref of the check it matched (stack_size 0, reuse). A launch that finds
 * the CPU's record busy keeps no stack. Not inlined: its locals beside
 * cuda_uprobe's. */
static __noinline void cuda_launch_copy(__u32 tgid, __u32 tid, __u64 caller)
{
	struct ustack_scratch *s = ustack_scratch_of(USTACK_SCRATCH_LAUNCH);
	__u32 zero = 0, *busy = bpf_map_lookup_elem(&cuda_scratch_busy, &zero);

	if (!s || !busy || __sync_lock_test_and_set(busy, 1)) {
		stat_inc(IT_STAT_CUDA_STACK_LOST);
		return;
	}
	launch_copy((struct it_ustack_event *)s->buf, tgid, tid, caller);
	*busy = 0;
}

static __always_inline void launch_copy(struct it_ustack_event *e, __u32 tgid, __u32 tid, __u64 caller)
{
	struct task_struct *task;
	__u32 got = 0;

	__builtin_memset(e, 0, sizeof(*e));
	e->kstack_id = -1;
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	bpf_get_current_comm(e->thread_comm, sizeof(e->thread_comm));
	if (user_regs(e) == 0) {
		e->reuse = cuda_reuse_ref(bpf_get_current_pid_tgid(), caller, e->regs[IT_UREG_PC], e->sp,
					  e->regs[IT_UREG_FP]);
		if (!e->reuse)
			got = copy_user_stack(e, e->sp);
	}
	if ((!got && !e->reuse) || got > IT_USTACK_MAX) {
		stat_inc(IT_STAT_CUDA_STACK_LOST);
		return;
	}
	e->stack_size = got;
	event_header(&e->hdr, IT_EV_CUDA_LAUNCH_USTACK, tgid, tid, bpf_ktime_get_ns());
	if (bpf_ringbuf_output(&events, e, sizeof(*e) + got, lazy_wakeup()))
		stat_inc(IT_STAT_CUDA_STACK_LOST);
}

/* The thread's stack at the entry of an outermost launch, stamped once
 * taken: the closer to the call's own start, the surer the join. A thread
 * of a known Python process with Python frames sends those; any other its
 * native user stack, frame-pointer or copied as the samples' are. */
static __always_inline void cuda_launch_stack(struct pt_regs *ctx, __u32 tgid, __u32 tid)
{
	struct it_cuda_launch_event *e;
	__u64 h = 0;
	__s32 id = -1;

	if (py_procs_known && bpf_map_lookup_elem(&py_procs, &tgid))
		h = py_stack_capture(tgid, tid);
	if (!h && cfg_ustack_size) {
		cuda_launch_copy(tgid, tid, entry_return_address(ctx));
		return;
	}
	if (!h) {
		id = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
		if (id < 0) {
			stat_inc(IT_STAT_CUDA_STACK_LOST);
			if (id == -EEXIST)
				stat_inc(IT_STAT_USTACK_COLLISION);
			return;
		}
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(h ? IT_STAT_RINGBUF_LOST : IT_STAT_CUDA_STACK_LOST);
		return;
	}
	event_header(&e->hdr, IT_EV_CUDA_LAUNCH, tgid, tid, bpf_ktime_get_ns());
	e->pystack = h;
	e->ustack_id = id;
	e->pad = 0;
	e->caller = h ? 0 : entry_return_address(ctx);
	bpf_ringbuf_submit(e, lazy_wakeup());
}

/* _CORE reads: the compiler may merge plain ctx loads into one computed
 * offset, which the verifier rejects */
static __always_inline __u64 arg_value(struct pt_regs *ctx, __u32 arg)
{
	switch (arg) {
	case 1: return PT_REGS_PARM1_CORE(ctx);
	case 2: return PT_REGS_PARM2_CORE(ctx);
	case 3: return PT_REGS_PARM3_CORE(ctx);
	case 4: return PT_REGS_PARM4_CORE(ctx);
	case 5: return PT_REGS_PARM5_CORE(ctx);
	default: return 0;
	}
}

SEC("uprobe")
int cuda_uprobe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = id >> 32, tid = (__u32)id, counter = IT_CUDA_COOKIE_COUNTER(cookie);
	bool runtime = cookie & IT_CUDA_COOKIE_RUNTIME;
	struct cuda_thread zero = {}, *st;

	if (!target_of(tgid))
		return 0;
	st = bpf_map_lookup_elem(&cuda_threads, &tid);
	if (!st) {
		bpf_map_update_elem(&cuda_threads, &tid, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&cuda_threads, &tid);
		if (!st) {
			stat_inc(IT_STAT_CUDA_LOST);
			return 0;
		}
	}
	if (!runtime && st->rt_depth)
		return 0; /* the runtime's own use of the driver */
	if (runtime)
		st->rt_depth++;
	if (counter == IT_CUDA_SYNC) {
		if (!st->sync_depth++)
			st->sync_entry_ns = bpf_ktime_get_ns();
		return 0; /* counted at return, with the time waited */
	}
	if (counter == IT_CUDA_LAUNCH || counter == IT_CUDA_GRAPH)
		cuda_launch_stack(ctx, tgid, tid);
	cuda_add(tgid, counter, 1, arg_value(ctx, IT_CUDA_COOKIE_ARG(cookie)));
	return 0;
}

SEC("uretprobe")
int cuda_uretprobe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = id >> 32, tid = (__u32)id;
	bool runtime = cookie & IT_CUDA_COOKIE_RUNTIME;
	struct cuda_thread *st = bpf_map_lookup_elem(&cuda_threads, &tid);

	if (!st || (!runtime && st->rt_depth))
		return 0;
	if (runtime && st->rt_depth)
		st->rt_depth--;
	if (IT_CUDA_COOKIE_COUNTER(cookie) == IT_CUDA_SYNC && st->sync_depth && !--st->sync_depth)
		cuda_add(tgid, IT_CUDA_SYNC, 1, bpf_ktime_get_ns() - st->sync_entry_ns);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
