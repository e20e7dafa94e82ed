// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Scheduler concern: per thread of a followed process, the time on a CPU,
 * waiting in a run queue (woken or preempted, until it runs) and blocked
 * (voluntarily off the CPU, until woken), attributed in the kernel to the
 * (process, cycle, phase) current when the interval began. Blocked time is
 * also kept by kernel stack (user space classifies it: sleep, I/O, lock) and,
 * for blocks of at least cfg_min_block_ns, by user+kernel stack for
 * offcpu.folded. (--comm matching at exec, abnormal exits, OOM victims and
 * fatal signals are the crash concern's: bpf/crash.bpf.c.) */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "sched.bpf.h"
#include "ustack.bpf.h"


/* task_struct::state was renamed __state in 5.14 (2f064a59a11f). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* Whether the current task entered the kernel by a system call (not an
 * interrupt or a fault): only then does a system call's exit follow. */
static __always_inline bool in_syscall(void)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (!r)
		return false;
#if defined(__TARGET_ARCH_x86)
	return (long)BPF_CORE_READ(r, orig_ax) >= 0;
#elif defined(__TARGET_ARCH_arm64)
	return (int)BPF_CORE_READ(r, syscallno) >= 0;
#else
	return false;
#endif
}

SEC("raw_tp/sched_switch")
int sched_on_switch(struct bpf_raw_tracepoint_args *ctx)
{
	bool preempt = ctx->args[0];
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 ptid = BPF_CORE_READ(prev, pid), ptgid = BPF_CORE_READ(prev, tgid);
	__u32 ntid = BPF_CORE_READ(next, pid), ntgid = BPF_CORE_READ(next, tgid);
	__u64 now = bpf_ktime_get_ns();
	struct sched_thread *st;

	if (ptgid && target_of(ptgid) && (st = thread_of(ptid, ptgid, prev, now, true))) {
		long state = task_state(prev);
		bool voluntary = !preempt && state != 0;
		struct it_sched_key k;
		struct it_sched_times *v;

		/* not on a CPU by its state: its switch-in was not seen (it ran at
		 * the end of the interval, which account() takes from the kernel) */
		if (st->state != IT_SCHED_ONCPU && st->state != IT_SCHED_UNKNOWN)
			unseen_inc(SCHED_UNSEEN_SWITCH_IN);
		account(ptid, st, now, prev, false, false, false);
		key_of(&k, ptid, st, st->cycle, st->phase);
		v = times_of(&k);
		if (v)
			__sync_fetch_and_add(voluntary ? &v->nvcsw : &v->nivcsw, 1);
		if (BPF_CORE_READ(prev, exit_state)) {
			/* the last switch of a dead thread */
			if (st->dwarf_pend_ns)
				stat_add(IT_STAT_OFFCPU_DWARF_DROPPED, st->dwarf_pend_ns);
			bpf_map_delete_elem(&sched_threads, &ptid);
		} else if (voluntary) {
			st->state = IT_SCHED_BLOCKED;
			/* prev is still current here: these are its stacks */
			st->kstack_id = bpf_get_stackid(ctx, &offcpu_stackmap, 0);
			if (st->kstack_id < 0)
				stat_inc(IT_STAT_OFFCPU_KSTACK_ERR);
			if (cfg_offcpu_dwarf && in_syscall()) {
				/* copied at the call's exit, if it blocked long enough */
				st->ustack_id = SCHED_USTACK_AT_SYSCALL_EXIT;
			} else {
				st->ustack_id = bpf_get_stackid(ctx, &offcpu_stackmap, BPF_F_USER_STACK);
				if (st->ustack_id < 0)
					stat_inc(IT_STAT_OFFCPU_USTACK_ERR);
			}
			/* the same walk is the switch-out's observation */
			py_observe_emit(ptgid, ptid, IT_PY_OBS_OUT, py_offcpu_capture(ptgid, ptid), now);
		} else {
			st->state = IT_SCHED_RUNQ;
			py_observe_out(ptgid, ptid, now);
		}
	}
	if (ntgid && target_of(ntgid)) {
		st = thread_of(ntid, ntgid, next, now, false);
		if (!st) {
			st = thread_of(ntid, ntgid, next, now, true);
		} else {
			bool run_first = false;

			if (st->state == IT_SCHED_ONCPU) {
				/* its switch-out was not seen: it ran, then waited */
				unseen_inc(SCHED_UNSEEN_SWITCH_OUT);
				st->state = IT_SCHED_RUNQ;
				run_first = true;
			}
			/* BLOCKED here: its wake-up was not seen, all of it counts as blocked */
			account(ntid, st, now, next, run_first, false, false);
		}
		if (st) {
			st->state = IT_SCHED_ONCPU;
			st->ts = now;
		}
		py_observe_in(ntid, now);
	}
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	__u64 now = bpf_ktime_get_ns();
	struct sched_thread *st;

	if (!tgid || !target_of(tgid))
		return 0;
	st = thread_of(tid, tgid, task, now, false);
	if (!st) {
		st = thread_of(tid, tgid, task, now, true);
		if (st)
			st->state = IT_SCHED_RUNQ;
		return 0;
	}
	if (st->state == IT_SCHED_ONCPU && !BPF_CORE_READ(task, on_cpu)) {
		/* woken, and off its CPU: its switch-out was not seen; it ran,
		 * then blocked somewhere unknown */
		unseen_inc(SCHED_UNSEEN_SWITCH_OUT);
		st->state = IT_SCHED_BLOCKED;
		st->kstack_id = st->ustack_id = -1;
		account(tid, st, now, task, true, true, true);
		st->state = IT_SCHED_RUNQ;
	} else if (st->state == IT_SCHED_BLOCKED || st->state == IT_SCHED_UNKNOWN) {
		if (st->state == IT_SCHED_BLOCKED)
			account(tid, st, now, task, false, true, true);
		st->state = IT_SCHED_RUNQ;
		st->ts = now;
	}
	return 0;
}

SEC("raw_tp/sched_wakeup")
int sched_on_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((struct task_struct *)ctx->args[0]);
}

SEC("raw_tp/sched_wakeup_new")
int sched_on_wakeup_new(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((struct task_struct *)ctx->args[0]);
}

/* Fires on scheduler ticks for the running task: syncs its on-CPU time with
 * the kernel's (time taken from it shows up as run-queue wait within a tick),
 * repairs a switch-in that was not seen, samples RSS. Cycle and phase edges
 * settle themselves (sched_edge_settle). Optional: without it, the sync
 * happens at the next switch. */
SEC("raw_tp/sched_stat_runtime")
int sched_on_runtime(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	struct sched_thread *st;

	/* update_curr also runs for a task from other CPUs (remote wake-ups):
	 * only the task's own CPU flushes, serialised with its switches */
	if (!tgid || task != (struct task_struct *)bpf_get_current_task() || !target_of(tgid))
		return 0;
	st = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!st) {
		/* a thread of a -p target running since before the recording:
		 * followed from this tick on */
		st = thread_of(tid, tgid, task, bpf_ktime_get_ns(), true);
		if (st)
			st->state = IT_SCHED_ONCPU;
		return 0;
	}
	if (st->state == IT_SCHED_RUNQ || st->state == IT_SCHED_BLOCKED) {
		/* running, but its switch-in was not seen: the wait ends here */
		unseen_inc(SCHED_UNSEEN_SWITCH_IN);
		account(tid, st, bpf_ktime_get_ns(), task, false, true, false);
		st->state = IT_SCHED_ONCPU;
	} else if (st->state == IT_SCHED_ONCPU) {
		account(tid, st, bpf_ktime_get_ns(), task, false, true, false);
	}
	return 0;
}

/* A followed process starts its own code at exec. */
SEC("raw_tp/sched_process_exec")
int sched_on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (target_entry(tgid)) {
		/* a followed process starts its own code here (a launched command
		 * becomes visible at exec): account the exec'ing thread from now,
		 * not from its first switch, which may be long after */
		__u32 tid = BPF_CORE_READ(task, pid);
		__u64 now = bpf_ktime_get_ns();
		struct sched_thread *st = thread_of(tid, tgid, task, now, true);

		if (st) {
			st->state = IT_SCHED_ONCPU;
			st->ts = now;
			/* se.sum_exec_runtime lags until the next update_curr: the
			 * first flush resynchronises it */
			st->resync = 1;
			st->cycle = current_cycle(tgid);
			st->phase = current_phase(tid);
		}
		return 0;
	}
	return 0;
}

/* The thread's process as the scheduler programs saw it (the tid itself when
 * they did not: a process's first thread). Global, for bpf/crash.bpf.c. */
__noinline __u32 sched_tgid_of_tid(__u32 tid)
{
	struct sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid);

	return st ? st->tgid : tid;
}

/* A system call returns: if the thread blocked in it (long enough), its
 * user stack is the one it blocked with, since no user code ran meanwhile:
 * copied here, with the blocked time, for DWARF unwinding in user space.
 * Runs for every system call on the machine; a thread not followed costs
 * one hash lookup. */
SEC("raw_tp/sys_exit")
int sched_on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid);
	struct ustack_scratch *s;
	struct it_ustack_event *e;
	struct task_struct *task;
	__u64 ns;
	__u32 got = 0;

	if (!st || !st->dwarf_pend_ns)
		return 0;
	ns = __sync_lock_test_and_set(&st->dwarf_pend_ns, 0);
	st->ustack_id = -1;
	s = ustack_scratch_of(USTACK_SCRATCH_OFFCPU);
	if (!ns)
		return 0;
	if (!s) {
		stat_inc(IT_STAT_OFFCPU_DWARF_LOST);
		return 0;
	}
	e = (struct it_ustack_event *)s->buf;
	event_header(&e->hdr, IT_EV_OFFCPU_USTACK, tgid, tid, bpf_ktime_get_ns());
	e->cycle = st->dwarf_cycle;
	e->phase = st->dwarf_phase;
	e->kstack_id = st->dwarf_kstack_id;
	e->blocked_ns = ns;
	e->pystack = py_offcpu_stack(tid); /* Python frames at the switch-out */
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	if (user_regs(e) == 0)
		got = copy_user_stack(e, e->sp);
	else
		__builtin_memset(e->regs, 0, sizeof(e->regs));
	if (!got)
		stat_inc(IT_STAT_OFFCPU_DWARF_COPY_ERR);
	if (got > IT_USTACK_MAX)
		got = IT_USTACK_MAX;
	e->stack_size = got;
	if (bpf_ringbuf_output(&events, e, sizeof(*e) + got, lazy_wakeup()))
		stat_inc(IT_STAT_OFFCPU_DWARF_LOST);
	else
		stat_inc(IT_STAT_OFFCPU_DWARF_SENT);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
