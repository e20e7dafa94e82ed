// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Scheduler concern: per thread of a followed process, the time on a CPU,
 * waiting in a run queue (woken or preempted, until it runs) and blocked
 * (voluntarily off the CPU, until woken), attributed in the kernel to the
 * (process, cycle, phase) current when the interval began. Blocked time is
 * also kept by kernel stack (user space classifies it: sleep, I/O, lock),
 * apart when another thread of the process ended it (waiting for a thread:
 * by the waker's phase, and by the waker's stacks for wakeup.folded) and,
 * for blocks of at least cfg_min_block_ns, by user+kernel stack for
 * offcpu.folded. (--comm matching at exec, abnormal exits, OOM victims and
 * fatal signals are the crash concern's: bpf/crash.bpf.c.) */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#define SCHED_ACCOUNT_GLOBAL
#include "sched.bpf.h"
#include "ustack.bpf.h"

/* A sync's accounting (account_body, bpf/sched.bpf.h), verified once per
 * program: sched_on_switch 220,000 -> 117,000 verified instructions,
 * sched_on_wakeup 47,000 -> 28,000, sched_on_runtime 39,000 -> 28,000.
 * task: the task_struct's address, read through BPF_CORE_READ only. how:
 * SCHED_HOW(run_first, sched_path, dwarf, csw, others). */
__noinline int sched_account(__u32 tid, struct it_sched_thread *st, __u64 now, __u64 task, __u32 how)
{
	if (st)
		account_body(tid, st, now, (struct task_struct *)task, how & 1, how & 2, (int)(how >> 2) & 3,
			     (int)(how >> 4) & 3, how & 64);
	return 0;
}

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

/* A site's stack is taken again once it is this old. */
#define SCHED_KSTACK_REFRESH_NS 100000000ULL

/* The kernel stack of a thread blocking now. Unwinding it costs 1.5 to 3.5
 * microseconds, more than a short block: a block in a system call reuses
 * the stack its thread took at the same call site (system call number,
 * user pc and sp, and the first two arguments: a file descriptor or a futex
 * operation may lead one site down different kernel paths) within
 * SCHED_KSTACK_REFRESH_NS. On the llama.cpp demo 97% of such blocks come
 * from a site seen before, and 99.8% of those had the very stack taken
 * there last (BENCHMARKS.md). Other blocks (page faults), and every block
 * with --offcpu-sample-us 0, take their own. */
static __always_inline __s32 offcpu_kstack(void *ctx, struct it_sched_thread *st, bool syscall, __u64 nr,
					   __u64 pc, __u64 sp, const __u64 *args, __u64 now)
{
	bool cache = syscall && cfg_offcpu_sample_ns;
	__u64 site = 0;
	__u32 slot;
	__s32 id;

	if (cache) {
		site = ((nr * 0x9e3779b97f4a7c15ULL ^ pc) * 0xbf58476d1ce4e5b9ULL ^ sp) * 0x94d049bb133111ebULL ^
		       (args[0] * 0x9e3779b97f4a7c15ULL + args[1]);
		site |= 1; /* never 0, a free slot */
		for (int i = 0; i < IT_KSTACK_SLOTS; i++) {
			if (st->ks[i].site == site && st->ks[i].id >= 0 && now - st->ks[i].ts < SCHED_KSTACK_REFRESH_NS)
				return st->ks[i].id;
		}
	}
	id = bpf_get_stackid(ctx, &offcpu_stackmap, 0);
	if (id < 0)
		stat_inc(IT_STAT_OFFCPU_KSTACK_ERR);
	if (!cache)
		return id;
	slot = IT_KSTACK_SLOTS;
	for (int i = 0; i < IT_KSTACK_SLOTS; i++) {
		if (st->ks[i].site == site)
			slot = i;
	}
	if (slot >= IT_KSTACK_SLOTS)
		slot = st->ks_next++ % IT_KSTACK_SLOTS;
	st->ks[slot].site = site;
	st->ks[slot].ts = now;
	st->ks[slot].id = id;
	return id;
}

/* Per CPU, the task on it known not to be followed, as of a generation of
 * the followed set: sched_stat_runtime fires tens of thousands of times a
 * second system-wide (every update_curr), and almost all of them are for
 * other processes. Set at each switch-in, so it never names a task that has
 * left the CPU (a freed task's address reused by a new one is switched in
 * first). */
struct runtime_skip {
	__u64 task;
	__u32 gen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct runtime_skip);
} runtime_skip SEC(".maps");

static __always_inline void runtime_skip_set(struct task_struct *task, __u32 gen, bool skip)
{
	__u32 zero = 0;
	struct runtime_skip *c = bpf_map_lookup_elem(&runtime_skip, &zero);

	if (c) {
		c->task = skip ? (__u64)task : 0;
		c->gen = gen;
	}
}

/* Python's stack at a thread's switch-out (bpf/python.bpf.h): its
 * off-CPU frames when it blocks, an observation either way. A global
 * function: the verifier checks it once, not inlined into each path of
 * sched_on_switch, where its frame walk made most of the program's
 * verification (about 480,000 of 615,000 instructions, ~0.9 s of start-up). */
__noinline int sched_py_switch_out(__u32 tgid, __u32 tid, __u64 now, int blocked)
{
	if (blocked)
		py_observe_emit(tgid, tid, IT_PY_OBS_OUT, py_offcpu_capture(tgid, tid), now);
	else
		py_observe_out(tgid, tid, now);
	return 0;
}

/* The wait for a CPU of a thread switched in now whose wake-up no program
 * saw (ftrace recorded sched_waking and sched_wakeup that these programs
 * did not see, with no recursion miss counted: about one wake-up in 500 on
 * a loaded 2-vCPU VM): since the kernel queued it, by the run queue's
 * clock, at most `most` ns; 0 where the kernel keeps no such time. */
static __always_inline __u64 unseen_wakeup_wait(struct task_struct *next, __u64 most)
{
	__u64 queued, clock, wait;

	if (!bpf_core_field_exists(next->sched_info) || !bpf_core_field_exists(next->se.cfs_rq))
		return 0;
	queued = BPF_CORE_READ(next, sched_info.last_queued);
	clock = BPF_CORE_READ(next, se.cfs_rq, rq, clock);
	wait = queued && clock > queued ? clock - queued : 0;
	return wait < most ? wait : most;
}

/* Per CPU: the time it ran tasks of no traced process (neither idle nor
 * of a target), from the switches; since when its current task runs, and
 * whether that task is one. A followed thread's wait on that CPU's run
 * queue is behind other processes for the growth of `ns` (with the current
 * task's run so far) over the wait: the marks below. Indexed by CPU; each
 * entry is written by its own CPU's switches only. */
#define SCHED_MAX_CPUS 1024

struct cpu_others {
	__u64 ns;
	__u64 since;
	__u32 foreign;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SCHED_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct cpu_others);
} cpu_others SEC(".maps");

/* That CPU's time running other processes up to now. */
static __always_inline __u64 cpu_others_now(const struct cpu_others *co, __u64 now)
{
	return co->ns + (co->foreign && now > co->since ? now - co->since : 0);
}

/* A followed thread begins to wait on `cpu`'s run queue now. */
static __always_inline void wait_mark(struct it_sched_thread *st, __u32 cpu, __u64 now)
{
	struct cpu_others *co = bpf_map_lookup_elem(&cpu_others, &cpu);

	st->wait_marked = co != NULL;
	if (co) {
		st->wait_cpu = cpu;
		st->others_mark = cpu_others_now(co, now);
	}
}

/* below, with sched_on_sys_exit, its other caller */
static __noinline int offcpu_record(struct it_sched_thread *st, __u32 cycle, __u32 phase, __u64 weight,
				    __u64 block);

SEC("raw_tp/sched_switch")
int sched_on_switch(struct bpf_raw_tracepoint_args *ctx)
{
	bool preempt = ctx->args[0];
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 ptid = BPF_CORE_READ(prev, pid), ptgid = BPF_CORE_READ(prev, tgid);
	__u32 ntid = BPF_CORE_READ(next, pid), ntgid = BPF_CORE_READ(next, tgid);
	__u64 now = bpf_ktime_get_ns();
	__u32 gen = targets_gen; /* before the lookups it vouches for */
	struct it_sched_thread *st;
	bool prev_followed = ptgid && target_of(ptgid), next_followed = ntgid && target_of(ntgid);
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_others *co = bpf_map_lookup_elem(&cpu_others, &cpu);
	__u64 behind = 0;

	if (co) {
		/* prev's run ends: counted when it was another process's */
		behind = cpu_others_now(co, now);
		co->ns = behind;
		co->since = now;
		co->foreign = ntgid && !next_followed;
	}
	if (prev_followed && (st = thread_of(ptid, ptgid, prev, now, true))) {
		long state = task_state(prev);
		bool voluntary = !preempt && state != 0;

		/* not on a CPU by its state: its switch-in was not seen (it ran at
		 * the end of the interval, which account() takes from the kernel) */
		if (st->state != IT_SCHED_ONCPU && st->state != IT_SCHED_UNKNOWN)
			unseen_inc(SCHED_UNSEEN_SWITCH_IN);
		/* the switch-out's observation of Python first: a `py:` edge it
		 * finds is settled before the interval that ends here */
		if (!BPF_CORE_READ(prev, exit_state))
			sched_py_switch_out(ptgid, ptid, now, voluntary);
		account_switch_out(ptid, st, now, prev, voluntary);
		if (BPF_CORE_READ(prev, exit_state)) {
			/* the last switch of a dead thread */
			if (st->dwarf_pend_ns)
				stat_add(IT_STAT_OFFCPU_DWARF_DROPPED, st->dwarf_pend_ns);
			set_ustack(st, ptid, -1);
			/* its `py:` calls end with it: a new thread given its
			 * tid begins with none */
			if (cfg_py_edges)
				bpf_map_delete_elem(&py_edge_threads, &ptid);
			/* its open window of short blocks, weighed on its
			 * candidate as when a window closes: with a period of
			 * 10 ms a short-lived thread often ends inside one */
			if (st->win_ns && offcpu_record(st, st->short_cycle, st->short_phase, st->win_ns, 0))
				stat_add(IT_STAT_OFFCPU_SHORT_EXITED, st->win_ns);
			bpf_map_delete_elem(&sched_threads, &ptid);
		} else if (voluntary) {
			__u64 nr = 0, pc = 0, sp = 0, args[2] = {};
			bool syscall = syscall_site(&nr, &pc, &sp, args);

			st->state = IT_SCHED_BLOCKED;
			st->waker_tid = 0;
			st->kc_nr = nr;
			st->kc_pc = pc;
			st->kc_sp = sp;
			/* prev is still current here: these are its stacks */
			st->kstack_id = offcpu_kstack(ctx, st, syscall, nr, pc, sp, args, now);
			if (cfg_offcpu_dwarf && syscall) {
				/* copied at the call's exit, if it blocked long enough */
				set_ustack(st, ptid, SCHED_USTACK_AT_SYSCALL_EXIT);
			} else {
				set_ustack(st, ptid, bpf_get_stackid(ctx, &offcpu_stackmap, BPF_F_USER_STACK));
				if (st->ustack_id < 0)
					stat_inc(IT_STAT_OFFCPU_USTACK_ERR);
			}
		} else {
			st->state = IT_SCHED_RUNQ;
			/* preempted: it waits on this CPU from here */
			st->wait_marked = co != NULL;
			st->wait_cpu = cpu;
			st->others_mark = behind;
		}
	}
	runtime_skip_set(next, gen, !next_followed);
	if (next_followed) {
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
			if (st->state == IT_SCHED_BLOCKED) {
				/* its wake-up was not seen: blocked until the
				 * kernel queued it (sched_info.last_queued, by the
				 * run queue's clock), then waiting */
				__u64 wait = unseen_wakeup_wait(next, now - st->ts);

				account(ntid, st, now - wait, next, false, false, SCHED_DWARF_DEFER);
				st->state = IT_SCHED_RUNQ;
			}
			/* the wait ends here: behind other processes for the
			 * time this CPU ran them since the wait began on it;
			 * where the wait began elsewhere, or unseen, all of it
			 * when the task leaving the CPU is neither idle (tgid
			 * 0) nor of a traced process */
			if (st->wait_marked && st->wait_cpu == cpu && co)
				st->others_pend = behind > st->others_mark ? behind - st->others_mark : 0;
			else
				st->others_pend = ptgid && !prev_followed ? (__u64)-1 : 0;
			st->wait_marked = 0;
			account_switch_in(ntid, st, now, next, run_first, true);
			st->others_pend = 0;
		}
		if (st) {
			st->state = IT_SCHED_ONCPU;
			st->ts = now;
		}
		py_observe_in(ntid, now);
	}
	return 0;
}

/* The blocked time a wake-up by another thread of the process ended, on
 * the waker's stacks at the wake-up (wakeup.folded): a global function,
 * verified once. */
__noinline int sched_wakeup_count(struct it_sched_thread *st, __u64 task, __u64 ns)
{
	struct it_stack_key sk = {};

	if (!st || !st->waker_tid || ns < cfg_min_block_ns)
		return 0;
	sk.tgid = st->tgid;
	sk.phase = st->waker_phase;
	sk.ustack_id = st->waker_ustack_id;
	sk.kstack_id = st->waker_kstack_id;
	BPF_CORE_READ_STR_INTO(&sk.comm, (struct task_struct *)task, group_leader, comm);
	add_u64(&wakeup_counts, &sk, ns);
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	__u64 now = bpf_ktime_get_ns(), from;
	struct it_sched_thread *st;

	if (!tgid || !target_of(tgid))
		return 0;
	st = thread_of(tid, tgid, task, now, false);
	if (!st) {
		st = thread_of(tid, tgid, task, now, true);
		if (st) {
			st->state = IT_SCHED_RUNQ;
			wait_mark(st, BPF_CORE_READ(task, wake_cpu), now);
		}
		return 0;
	}
	if (st->state == IT_SCHED_ONCPU && !BPF_CORE_READ(task, on_cpu)) {
		/* woken, and off its CPU: its switch-out was not seen; it ran,
		 * then blocked somewhere unknown */
		unseen_inc(SCHED_UNSEEN_SWITCH_OUT);
		st->state = IT_SCHED_BLOCKED;
		st->kstack_id = -1;
		st->waker_tid = 0;
		set_ustack(st, tid, -1);
		account(tid, st, now, task, true, true, SCHED_DWARF_DEFER);
		st->state = IT_SCHED_RUNQ;
		wait_mark(st, BPF_CORE_READ(task, wake_cpu), now);
	} else if (st->state == IT_SCHED_BLOCKED || st->state == IT_SCHED_UNKNOWN) {
		if (st->state == IT_SCHED_BLOCKED) {
			from = st->ts;
			account(tid, st, now, task, false, true, SCHED_DWARF_DEFER);
			sched_wakeup_count(st, (__u64)task, now > from ? now - from : 0);
		}
		st->state = IT_SCHED_RUNQ;
		st->ts = now;
		/* enqueued on its CPU's run queue (wake_cpu: set with it) */
		wait_mark(st, BPF_CORE_READ(task, wake_cpu), now);
	}
	return 0;
}

/* Attached to sched_wakeup and sched_wakeup_new alike (same arguments):
 * one program verified once. */
SEC("raw_tp/sched_wakeup")
int sched_on_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	return on_wakeup((struct task_struct *)ctx->args[0]);
}

/* sched_waking fires in the waker's context (sched_wakeup may fire on the
 * wakee's CPU, from an interrupt): a blocked thread of a followed process
 * woken by another thread of the same process waits for that thread. Its
 * tid, phase and stacks here are kept with the wakee until the wake-up
 * settles the block (account: the class; sched_wakeup_count: the stacks).
 * An interrupt (a timer's expiry, a disk's or network's completion) wakes
 * on behalf of no thread, whichever it interrupted: its entry frames are
 * in the waker's kernel stack, which user space reads (the preempt count
 * that says so in the kernel is a per-CPU variable a BPF program can only
 * find through kallsyms, which often lacks data symbols). */
SEC("raw_tp/sched_waking")
int sched_on_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	__u64 cur = bpf_get_current_pid_tgid(), now;
	__u32 wtid = (__u32)cur;
	struct it_sched_thread *st;

	if (!tgid || (__u32)(cur >> 32) != tgid || wtid == tid || !target_of(tgid))
		return 0;
	st = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!st || st->state != IT_SCHED_BLOCKED)
		return 0;
	now = bpf_ktime_get_ns();
	st->waker_tid = wtid;
	st->waker_phase = current_phase(wtid);
	st->waker_kstack_id = bpf_get_stackid(ctx, &offcpu_stackmap, 0);
	st->waker_ustack_id = -1;
	if (now - st->ts >= cfg_min_block_ns) /* only such blocks have stacks */
		st->waker_ustack_id = bpf_get_stackid(ctx, &offcpu_stackmap, BPF_F_USER_STACK);
	return 0;
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
	__u32 gen = targets_gen, zero = 0, tid, tgid;
	struct runtime_skip *skip;
	__u64 id;
	struct it_sched_thread *st;

	/* update_curr also runs for a task from other CPUs (remote wake-ups):
	 * only the task's own CPU flushes, serialised with its switches */
	if (task != (struct task_struct *)bpf_get_current_task())
		return 0;
	skip = bpf_map_lookup_elem(&runtime_skip, &zero);
	if (skip && skip->task == (__u64)task && skip->gen == gen)
		return 0;
	if (recording_stopped)
		return 0;
	/* the task is current: its ids without reading kernel memory */
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	tgid = id >> 32;
	/* a followed thread's state vouches for its process (the followed
	 * set only grows): no targets lookup on the frequent path */
	st = bpf_map_lookup_elem(&sched_threads, &tid);
	if (st && st->tgid != tgid) {
		/* a dead thread's entry, its tid now another's */
		bpf_map_delete_elem(&sched_threads, &tid);
		st = NULL;
	}
	if (!st && (!tgid || !target_of(tgid))) {
		/* running since before the recording, or since the last change */
		runtime_skip_set(task, gen, true);
		return 0;
	}
	if (!st) {
		/* a thread of a -p target running since before the recording:
		 * followed from this tick on */
		st = thread_of(tid, tgid, task, bpf_ktime_get_ns(), true);
		if (st)
			st->state = IT_SCHED_ONCPU;
		return 0;
	}
	if (st->state == IT_SCHED_RUNQ || st->state == IT_SCHED_BLOCKED) {
		settle_unseen_switch_in(tid, st, bpf_ktime_get_ns(), task, true, SCHED_DWARF_AT_SITE);
	} else if (st->state == IT_SCHED_ONCPU) {
		__u64 now = bpf_ktime_get_ns();

		/* On the CPU since the last sync, so a sync would only split
		 * the interval: it is deferred while no edge is open or pending,
		 * for at most SCHED_RUNTIME_DEFER_NS (RSS and page faults of a
		 * thread that never leaves its CPU). A thread reading its CPU
		 * clock in a loop makes this fire at every read (~95,000 times a
		 * second here). */
		if (!st->edge_ns && !st->edge_on && now >= st->ts && now - st->ts < SCHED_RUNTIME_DEFER_NS)
			return 0;
		account(tid, st, now, task, false, true, SCHED_DWARF_NO);
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
		struct it_sched_thread *st = thread_of(tid, tgid, task, now, true);

		if (st) {
			st->state = IT_SCHED_ONCPU;
			st->ts = now;
			st->sum_exec = BPF_CORE_READ(task, se.sum_exec_runtime);
			if (bpf_core_field_exists(task->sched_info))
				st->run_delay = BPF_CORE_READ(task, sched_info.run_delay);
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
	struct it_sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid);

	return st ? st->tgid : tid;
}

/* Per thread, call site (pc) and slot (the key's pad), what the
 * unwinding of an off-CPU stack copy there read (struct it_ustack_check):
 * written by user space. A call site reached by several paths (a libc
 * wrapper under SQLite's writes and syncs) keeps up to
 * IT_OFFCPU_CHECK_SLOTS of them, so that paths taken in turn each reuse
 * their own. LRU: entries of exited threads give way; the process id in
 * each keeps a reused thread id from matching another process's. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_ustack_check_key);
	__type(value, struct it_ustack_check);
} ustack_checks SEC(".maps");

/* The ref of one of the thread's ustack_checks entries at pc that
 * describes the stack now: same process, registers (pc, sp, link
 * register, and the frame pointer when the unwinding used it) and every
 * stack word its unwinding used; 0 when none does. A check costs a map
 * lookup and, when its registers match, up to IT_USTACK_CHECK_WORDS reads
 * of 8 bytes, against a copy of up to 64 KiB, its trip through the ring
 * buffer and its unwinding in user space. A block inside a call probed
 * with a uretprobe never matches (the copy's return addresses were put
 * back). Global: verified once. ids: tid | tgid << 32. */
__noinline __u64 ustack_reuse_ref(__u64 ids, __u64 pc, __u64 sp, __u64 fp, __u64 lr)
{
	for (__u32 slot = 0; slot < IT_OFFCPU_CHECK_SLOTS; slot++) {
		struct it_ustack_check_key k = { .tid = (__u32)ids, .pad = slot, .pc = pc };
		struct it_ustack_check *c = bpf_map_lookup_elem(&ustack_checks, &k);
		bool same = true;
		__u64 w;

		if (!c || !c->ref || c->tgid != ids >> 32 || c->pc != pc || c->sp != sp || c->lr != lr ||
		    ((c->flags & IT_USTACK_CHECK_FP) && c->fp != fp))
			continue;
		for (__u32 i = 0; i < IT_USTACK_CHECK_WORDS; i++) {
			if (i >= c->nwords)
				break;
			if (bpf_probe_read_user(&w, sizeof(w), (void *)(sp + c->off[i])) || w != c->val[i]) {
				same = false;
				break;
			}
		}
		if (same)
			return c->ref;
	}
	return 0;
}

/* Sends the current thread's blocking call's record (see
 * sched_on_sys_exit): its user stack with the call's own blocked time
 * (block), or with block 0 the weight of a window of short blocks; -1
 * when it could not be sent (counted lost). Not inlined:
 * sched_on_sys_exit sends from three places, sched_on_switch from one,
 * and on arm64 the copies' locals together passed BPF's 512-byte stack. */
static __noinline int offcpu_record(struct it_sched_thread *st, __u32 cycle, __u32 phase, __u64 weight,
				    __u64 block)
{
	struct ustack_scratch *s = ustack_scratch_of(USTACK_SCRATCH_OFFCPU);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	bool stack = block != 0;
	struct it_ustack_event *e;
	struct task_struct *task;
	__u32 got = 0;

	if (!s) {
		stat_inc(IT_STAT_OFFCPU_DWARF_LOST);
		return -1;
	}
	e = (struct it_ustack_event *)s->buf;
	event_header(&e->hdr, IT_EV_OFFCPU_USTACK, tgid, tid, bpf_ktime_get_ns());
	e->cycle = cycle;
	e->phase = phase;
	e->kstack_id = st->dwarf_kstack_id;
	e->blocked_ns = weight;
	e->block_ns = block;
	e->pystack = stack ? py_offcpu_stack(tid) : 0; /* Python frames at the switch-out */
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
	bpf_get_current_comm(e->thread_comm, sizeof(e->thread_comm));
	e->reuse = 0;
	if (stack && user_regs(e) == 0) {
		/* --offcpu-sample-us 0: every block has its own copy */
		if (cfg_offcpu_sample_ns)
			e->reuse = ustack_reuse_ref(id, e->regs[IT_UREG_PC], e->sp, e->regs[IT_UREG_FP], USTACK_LR(e));
		if (!e->reuse)
			got = copy_user_stack(e, e->sp);
	} else {
		__builtin_memset(e->regs, 0, sizeof(e->regs));
	}
	if (stack && !got && !e->reuse)
		stat_inc(IT_STAT_OFFCPU_DWARF_COPY_ERR);
	if (got > IT_USTACK_MAX)
		got = IT_USTACK_MAX;
	e->stack_size = got;
	if (bpf_ringbuf_output(&events, e, sizeof(*e) + got, lazy_wakeup())) {
		stat_inc(IT_STAT_OFFCPU_DWARF_LOST);
		return -1;
	}
	stat_inc(IT_STAT_OFFCPU_DWARF_SENT);
	return 0;
}

/* A sampled block long enough to show in trace.json: its interval alone. */
static __always_inline void offcpu_slice(struct it_sched_thread *st, __u32 cycle, __u32 phase, __u64 ns)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct it_offcpu_slice_event e = {};

	event_header(&e.hdr, IT_EV_OFFCPU_SLICE, id >> 32, (__u32)id, bpf_ktime_get_ns());
	e.cycle = cycle;
	e.phase = phase;
	e.kstack_id = st->dwarf_kstack_id;
	e.block_ns = ns;
	if (bpf_ringbuf_output(&events, &e, sizeof(e), lazy_wakeup()))
		stat_inc(IT_STAT_OFFCPU_DWARF_LOST);
}

/* A thread at its system call's exit whose switch-in (and wake-up) were
 * not seen: its block's stack is deferred to this exit. Not inlined, for
 * the stack (offcpu_record). */
static __noinline void exit_settle(struct it_sched_thread *st, __u32 tid)
{
	settle_unseen_switch_in(tid, st, bpf_ktime_get_ns(), (struct task_struct *)bpf_get_current_task(), true,
				SCHED_DWARF_DEFER);
}

/* A system call returns: if the thread blocked in it (long enough), its
 * user stack is the one it blocked with, since no user code ran meanwhile:
 * copied here, with the blocked time, for DWARF unwinding in user space.
 * Copying and unwinding cost microseconds, as much as a short block: blocks
 * shorter than cfg_offcpu_sample_ns are sampled by time instead. A run of
 * them in one cycle and phase is cut into windows of one period of blocked
 * time; each window elects one candidate, each block with a chance
 * proportional to its blocked time, and the window's whole blocked time is
 * weighed on the candidate's stack when it closes. The run's first window
 * elects by weighted reservoir sampling (a block replaces the candidate
 * with probability ns / the window's ns so far, and is copied then: a few
 * copies, and a candidate however short the run); the next ones at a
 * random point of the window (the block in which the window's time crosses
 * it: one copy). The run's last, partial window is weighed on its own
 * candidate, or the one before when the point was not reached. So every
 * stack's expected weight is its blocked time, and all of a run's time is
 * in stacks. Each longer block has its own copy and exact weight. Runs for
 * every system call on the machine; a call with nothing to copy costs one
 * read of offcpu_pending. */
SEC("raw_tp/sys_exit")
int sched_on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct it_sched_thread *st;
	__u32 cycle, phase;
	__u64 ns, from;

	if (!offcpu_pending[tid % SCHED_PEND_SLOTS])
		return 0;
	st = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!st || st->ustack_id != SCHED_USTACK_AT_SYSCALL_EXIT)
		return 0;
	if (st->state != IT_SCHED_ONCPU)
		exit_settle(st, tid);
	set_ustack(st, tid, -1);
	ns = __sync_lock_test_and_set(&st->dwarf_pend_ns, 0);
	if (!ns)
		return 0;
	cycle = st->dwarf_cycle;
	phase = st->dwarf_phase;
	if (ns >= cfg_offcpu_sample_ns || !st->short_open || st->short_cycle != cycle ||
	    st->short_phase != phase) {
		/* the run before ends with its window */
		if (st->win_ns)
			offcpu_record(st, st->short_cycle, st->short_phase, st->win_ns, 0);
		st->win_ns = 0;
		st->short_open = ns < cfg_offcpu_sample_ns;
		if (!st->short_open) {
			offcpu_record(st, cycle, phase, ns, ns);
			return 0;
		}
		st->short_cycle = cycle;
		st->short_phase = phase;
		st->win_first = 1;
	}
	/* sampled, so without a copy of its own: a block of a millisecond or
	 * more still shows in trace.json (the default period is 10 ms) */
	if (ns >= IT_OFFCPU_SLICE_MIN_NS)
		offcpu_slice(st, cycle, phase, ns);
	from = st->win_ns;
	st->win_ns += ns;
	/* reservoir: chance ns / win_ns; win_ns stays under two periods of at
	 * most 1 s (--offcpu-sample-us), so the product stays under 2^64 */
	if (st->win_first ? (((__u64)bpf_get_prandom_u32() * st->win_ns) >> 32) < ns :
			    from <= st->win_point && st->win_point < st->win_ns)
		offcpu_record(st, cycle, phase, 0, ns);
	if (st->win_ns >= cfg_offcpu_sample_ns) {
		offcpu_record(st, cycle, phase, st->win_ns, 0);
		st->win_ns = 0;
		st->win_first = 0;
		st->win_point = bpf_get_prandom_u32() % cfg_offcpu_sample_ns;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
