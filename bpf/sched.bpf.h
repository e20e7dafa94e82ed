// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Per-thread on-CPU / run-queue / blocked accounting, shared by the
 * scheduler programs (bpf/sched.bpf.c: switches, wake-ups, ticks) and the
 * probe programs (bpf/probes.bpf.c: cycle and phase edges). A thread's
 * interval is settled at every switch, wake-up and tick, and at every cycle
 * and phase edge of its own, entry and exit: the edge's program runs on the
 * thread, so the time since its last settled instant was on a CPU and ends
 * at the edge's own timestamp, the one the phase's and cycle's wall times
 * are taken from. On-CPU + run-queue + blocked then add up to each phase's
 * and cycle's wall time. An edge that was not seen (frames dropped by a
 * longjmp, a thread not yet followed) leaves its time in the phase
 * IT_PHASE_UNATTRIBUTED of the cycle, counted in IT_STAT_SCHED_UNATTRIBUTED:
 * never spread over phases. The definitions are weak (SHARED) so that the
 * BPF static linker merges each map into one. */
#ifndef INFERTRACE_SCHED_BPF_H
#define INFERTRACE_SCHED_BPF_H

#include "maps.bpf.h"
#include "mm.bpf.h"
#include "python.bpf.h"

SHARED const volatile __u64 cfg_min_block_ns = 1000;
/* 1: the scheduler concern runs (its tracepoints are attached): the probe
 * programs settle threads at their edges */
SHARED const volatile __u32 cfg_sched_edges = 0;
/* 1: off-CPU user stacks of blocking system calls are copied at the call's
 * exit and unwound with DWARF in user space (--call-graph dwarf) */
SHARED const volatile __u32 cfg_offcpu_dwarf = 0;
/* with cfg_offcpu_dwarf: blocks shorter than this share user-stack copies
 * (sched_on_sys_exit); 0: every block has its own */
SHARED const volatile __u64 cfg_offcpu_sample_ns = 0;


/* Threads that blocked in a system call whose exit is awaited (ustack_id
 * SCHED_USTACK_AT_SYSCALL_EXIT), counted by tid modulo the size:
 * sched_on_sys_exit, which runs for every system call on the machine, looks
 * a thread up only when its slot counts one. */
#define SCHED_PEND_SLOTS 4096
SHARED __u32 offcpu_pending[SCHED_PEND_SLOTS];
/* sched_stat_runtime defers a sync that would change nothing for at most this long */
#define SCHED_RUNTIME_DEFER_NS 1000000ULL
/* the scheduler programs read a thread's RSS at most this often */
#define SCHED_MEM_MIN_NS 1000000ULL

/* ustack_id of a thread blocked in a system call with --call-graph dwarf:
 * its user stack is copied when the call returns (sched_on_sys_exit) */
#define SCHED_USTACK_AT_SYSCALL_EXIT (-2)

/* Sets where a thread's block's user stack comes from, keeping
 * offcpu_pending's count of the threads that await a system call's exit. */
static __always_inline void set_ustack(struct it_sched_thread *st, __u32 tid, __s32 id)
{
	bool was = st->ustack_id == SCHED_USTACK_AT_SYSCALL_EXIT, is = id == SCHED_USTACK_AT_SYSCALL_EXIT;

	if (is && !was)
		__sync_fetch_and_add(&offcpu_pending[tid % SCHED_PEND_SLOTS], 1);
	else if (was && !is)
		__sync_fetch_and_add(&offcpu_pending[tid % SCHED_PEND_SLOTS], -1);
	st->ustack_id = id;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct it_sched_thread);
} sched_threads SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_sched_key);
	__type(value, struct it_sched_times);
} sched_times SEC(".maps") SHARED;

/* Blocked nanoseconds by (process, cycle, phase, main thread, kernel stack). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_sched_key);
	__type(value, __u64);
} blocked_kstacks SEC(".maps") SHARED;

/* Blocked nanoseconds that another thread of the process ended, by
 * (process, the waker's phase, the waker's user and kernel stacks at the
 * wake-up): wakeup.folded. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_stack_key);
	__type(value, __u64);
} wakeup_counts SEC(".maps") SHARED;

/* Blocked nanoseconds by (process, phase, user stack, kernel stack). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct it_stack_key);
	__type(value, __u64);
} offcpu_counts SEC(".maps") SHARED;

/* The same by thread and cycle (at the block) as well, for profile.pb.gz. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct it_label_key);
	__type(value, __u64);
} offcpu_label_counts SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, IT_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} offcpu_stackmap SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_hist_key);
	__type(value, struct it_hist);
} runq_hist SEC(".maps") SHARED;

/* Context switches of followed threads that no program saw, found when the
 * thread's state disagrees with what the kernel does with it next. */
enum { SCHED_UNSEEN_SWITCH_IN = 0, SCHED_UNSEEN_SWITCH_OUT = 1, SCHED_UNSEEN_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCHED_UNSEEN_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sched_unseen SEC(".maps") SHARED;

static __always_inline void unseen_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&sched_unseen, &idx);

	if (v)
		*v += 1;
}

static __always_inline __u32 log2_us(__u64 ns)
{
	__u64 v = ns / 1000;
	__u32 r = 0;

	while (v > 1 && r < IT_HIST_SLOTS - 1) {
		v >>= 1;
		r++;
	}
	return r;
}

static __always_inline struct it_sched_times *times_of(struct it_sched_key *k)
{
	static const struct it_sched_times zero;
	struct it_sched_times *v = bpf_map_lookup_elem(&sched_times, k);

	if (v)
		return v;
	bpf_map_update_elem(&sched_times, k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&sched_times, k);
	if (!v)
		stat_inc(IT_STAT_SCHED_LOST);
	return v;
}

static __always_inline void add_u64_or(void *map, void *key, __u64 n, __u32 lost_stat)
{
	__u64 *v = bpf_map_lookup_elem(map, key);

	if (!v) {
		if (!bpf_map_update_elem(map, key, &n, BPF_NOEXIST))
			return;
		v = bpf_map_lookup_elem(map, key);
		if (!v) {
			stat_inc(lost_stat);
			return;
		}
	}
	__sync_fetch_and_add(v, n);
}

static __always_inline void add_u64(void *map, void *key, __u64 n)
{
	add_u64_or(map, key, n, IT_STAT_SCHED_LOST);
}

static __always_inline void key_of(struct it_sched_key *k, __u32 tid, const struct it_sched_thread *st,
				   __u32 cycle, __u32 phase)
{
	k->tgid = st->tgid;
	k->cycle = cycle;
	k->phase = phase;
	k->flags = tid == st->tgid ? IT_SCHED_MAIN_THREAD : 0;
	k->kstack_id = -1;
	k->waker_phase = 0;
	k->waker_kstack_id = -1;
	k->pad = 0;
}

/* The start of the process's open cycle when it lies inside (from, to) and
 * the cycle changed since `from`: a cycle edge of another thread of the
 * process, at its known timestamp; `to` when none. (A cycle that another
 * thread closed leaves no timestamp: its time stays with the cycle.) */
static __always_inline __u64 cycle_edge_in(const struct it_sched_thread *st, __u64 from, __u64 to, __u32 cyc)
{
	struct it_proc_state *ps;
	__u64 t;

	if (!cfg_cycles_from_probes || cyc == st->cycle)
		return to;
	ps = bpf_map_lookup_elem(&procs, &st->tgid);
	t = ps ? ps->cycle_start_ns : 0;
	return t > from && t < to ? t : to;
}

static __always_inline __u64 overlap(__u64 lo, __u64 hi, __u64 from, __u64 to)
{
	if (from < lo)
		from = lo;
	if (to > hi)
		to = hi;
	return to > from ? to - from : 0;
}

static __always_inline void flush_faults(struct it_sched_thread *st, struct task_struct *task,
					 struct it_sched_times *v)
{
	/* faults happen on the CPU: the deltas go with the on-CPU time */
	__u64 minflt = BPF_CORE_READ(task, min_flt), majflt = BPF_CORE_READ(task, maj_flt);

	if (v && minflt >= st->minflt && majflt >= st->majflt) {
		__sync_fetch_and_add(&v->minflt, minflt - st->minflt);
		__sync_fetch_and_add(&v->majflt, majflt - st->majflt);
	}
	st->minflt = minflt;
	st->majflt = majflt;
}

/* A kernel sync (switch, wake-up, tick): adds [st->ts, now) to the thread's
 * attribution, its state from then on being the caller's to set. Every
 * part of it is by the tracer's clock, the one the edges and the walls use.
 * In the on-CPU state (its switch-in seen, or repaired) the whole interval
 * is on-CPU. Outside it, the thread ran only where a switch was not seen:
 * for that run the kernel's count is taken (the delta of se.sum_exec_runtime
 * since the last sync, less what edges gave as on-CPU meanwhile, at most the
 * interval), placed at the end of the interval (its switch-in was not seen)
 * or, with run_first, at its start (its switch-out was not seen); in the
 * blocked state the kernel's wait for a CPU next to that run (the delta of
 * sched_info.run_delay: its wake-up was not seen either) is run-queue wait;
 * the rest is of the thread's state. The kernel's count is not used for a
 * run whose switches were seen: the run queue's clock, which it follows, is
 * not updated at a switch that a wake-up's preemption asked for (the
 * wake-up updated it), so the thread switched in is counted from the
 * wake-up, and the one switched out loses as much: up to milliseconds where
 * the CPU ran kernel code that could not be preempted (measured: 1.94 ms
 * counted for 0.15 ms run since a switch-in), which no interval of that run
 * can hold.
 * The interval belongs to the attribution it began with: the thread's own
 * edges settle it, so a phase that differs now changed at an edge that was
 * not seen, and the interval goes to IT_PHASE_UNATTRIBUTED. A cycle begun by
 * another thread splits it at the cycle's start. sched_path: called by the
 * scheduler programs (labelled off-CPU counts); dwarf: whether a block in a
 * system call defers its stack to the call's exit: SCHED_DWARF_DEFER from
 * the wake-up, which ends a block, and from a switch-in whose wake-up was
 * not seen (the thread has not run since it blocked); SCHED_DWARF_AT_SITE
 * from a tick or switch-out of the current thread whose wake-up and
 * switch-in were not seen, when it is still in the system call it blocked
 * in (the same number, user pc and sp). Both are constant per call site,
 * so the programs whose verification is near the kernel's 1M-instruction
 * limit (the probes) get none of that code; a block settled there is
 * counted without a user stack. */
#define SCHED_DWARF_NO 0
#define SCHED_DWARF_DEFER 1
#define SCHED_DWARF_AT_SITE 2

/* Whether the current task entered the kernel by a system call (not an
 * interrupt or a fault): only then does a system call's exit follow. Then
 * also where it was called from: its number, user pc and sp, and, when
 * args is not NULL, its first two arguments (a file descriptor, a futex
 * operation: what may send one call site down different kernel paths). */
static __always_inline bool syscall_site(__u64 *nr, __u64 *pc, __u64 *sp, __u64 *args)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	if (!r)
		return false;
#if defined(__TARGET_ARCH_x86)
	*nr = BPF_CORE_READ(r, orig_ax);
	*pc = BPF_CORE_READ(r, ip);
	*sp = BPF_CORE_READ(r, sp);
	if (args) {
		args[0] = BPF_CORE_READ(r, di);
		args[1] = BPF_CORE_READ(r, si);
	}
	return (long)*nr >= 0;
#elif defined(__TARGET_ARCH_arm64)
	*nr = (__u64)(int)BPF_CORE_READ(r, syscallno);
	*pc = BPF_CORE_READ(r, pc);
	*sp = BPF_CORE_READ(r, sp);
	if (args) {
		args[0] = BPF_CORE_READ(r, orig_x0); /* x0 becomes the return value */
		args[1] = BPF_CORE_READ(r, regs[1]);
	}
	return (int)*nr >= 0;
#else
	return false;
#endif
}

/* The current thread is still in the system call it blocked in. */
static __always_inline bool at_block_site(const struct it_sched_thread *st)
{
	__u64 nr = 0, pc = 0, sp = 0;

	return syscall_site(&nr, &pc, &sp, NULL) && nr == st->kc_nr && pc == st->kc_pc && sp == st->kc_sp;
}

/* csw: a switch-out to count with the interval's attribution, as it stands
 * after the sync (SCHED_CSW_*). others: a switch-in: st->others_pend ns
 * of the interval's run-queue wait (at most all of it) were behind tasks
 * of no traced process, also counted in runq_others_ns. */
#define SCHED_CSW_NONE 0
#define SCHED_CSW_VOLUNTARY 1
#define SCHED_CSW_INVOLUNTARY 2

static __always_inline void account_body(__u32 tid, struct it_sched_thread *st, __u64 now,
					 struct task_struct *task, bool run_first, bool sched_path, int dwarf, int csw,
					 bool others)
{
	__u32 cyc = current_cycle(st->tgid), ph = current_phase(tid);
	__u64 sum = BPF_CORE_READ(task, se.sum_exec_runtime);
	struct it_sched_key k, k0;
	/* the times of (st->cycle, kph), where the interval began: looked up
	 * once for the piece before a split, the faults, the wait count and
	 * the switch count (a hash lookup each, several per context switch).
	 * Its key is built where first needed, not once at the top: a key live
	 * through the whole body doubled every scheduler program's verified
	 * instructions (sched_on_switch 55,000 -> 106,000) */
	struct it_sched_times *v, *v0 = NULL;
	__u64 split, wall, run, run_from, run_to, wait = 0, off_total = 0;
	__u64 edge = st->edge_ns;
	__u32 kph = st->phase, cyc0 = st->cycle;

	if (now < st->ts)
		now = st->ts;
	wall = now - st->ts;
	if (st->state == IT_SCHED_ONCPU) {
		run = wall;
	} else {
		run = sum > st->sum_exec ? sum - st->sum_exec : 0;
		run = run > st->edge_on ? run - st->edge_on : 0;
		if (run > wall)
			run = wall;
	}
	if (bpf_core_field_exists(task->sched_info)) {
		__u64 delay = BPF_CORE_READ(task, sched_info.run_delay);

		if (st->state == IT_SCHED_BLOCKED) {
			/* its wake-up was not seen either: the wait for a CPU
			 * next to the run is the kernel's (its run_delay) */
			wait = delay > st->run_delay ? delay - st->run_delay : 0;
			if (wait > wall - run)
				wait = wall - run;
		}
		st->run_delay = delay;
	}
	st->sum_exec = sum;
	st->edge_on = 0;
	if (run_first || st->state == IT_SCHED_ONCPU) {
		run_from = st->ts;
		run_to = st->ts + run;
	} else {
		run_from = now - run;
		run_to = now;
	}
	if (edge) {
		/* inside an edge's program (preempted, or an interrupt): the time
		 * after its timestamp is the edge's new attribution, which the
		 * edge adds when it is done (sched_edge_retag) */
		split = edge > st->ts ? (edge < now ? edge : now) : st->ts;
	} else {
		if (ph != st->phase) {
			kph = IT_PHASE_UNATTRIBUTED;
			stat_inc(IT_STAT_SCHED_UNATTRIBUTED);
		}
		split = cycle_edge_in(st, st->ts, now, cyc);
	}

	for (int part = 0; part < 2; part++) {
		__u64 lo = part ? split : st->ts, hi = part ? now : split, on, w, off;

		if (hi <= lo)
			continue;
		on = overlap(lo, hi, run_from, run_to);
		/* the wait: after a run placed first, before one placed last */
		w = wait ? overlap(lo, hi, run_first ? run_to : run_from - wait, run_first ? run_to + wait : run_from) : 0;
		off = hi - lo - on - w;
		if (part && edge) {
			__sync_fetch_and_add(&st->pend_on, on);
			__sync_fetch_and_add(&st->pend_off, off + w);
			continue;
		}
		key_of(&k, tid, st, part ? cyc : cyc0, kph);
		if (part) {
			v = times_of(&k);
		} else {
			v0 = times_of(&k);
			v = v0;
		}
		if (!v)
			continue;
		if (on)
			__sync_fetch_and_add(&v->oncpu_ns, on);
		if (w)
			__sync_fetch_and_add(&v->runq_ns, w);
		if (!off)
			continue;
		off_total += off;
		if (st->state == IT_SCHED_RUNQ || st->state == IT_SCHED_ONCPU) {
			__sync_fetch_and_add(&v->runq_ns, off);
			if (others && st->state == IT_SCHED_RUNQ && st->others_pend) {
				__u64 o = st->others_pend < off ? st->others_pend : off;

				__sync_fetch_and_add(&v->runq_others_ns, o);
				st->others_pend -= o;
			}
		} else if (st->state == IT_SCHED_BLOCKED) {
			__sync_fetch_and_add(&v->blocked_ns, off);
			k.kstack_id = st->kstack_id;
			if (st->waker_tid) {
				/* ended by another thread of the process: it
				 * waited for that thread, whatever it blocked in */
				k.flags |= IT_SCHED_WOKEN_BY_THREAD;
				k.waker_phase = st->waker_phase;
				k.waker_kstack_id = st->waker_kstack_id;
			}
			add_u64(&blocked_kstacks, &k, off);
		}
	}
	if (dwarf != SCHED_DWARF_NO && st->state == IT_SCHED_BLOCKED && off_total >= cfg_min_block_ns &&
	    st->ustack_id == SCHED_USTACK_AT_SYSCALL_EXIT && (dwarf == SCHED_DWARF_DEFER || at_block_site(st))) {
		/* counted with its user stack when the system call returns */
		if (!st->dwarf_pend_ns) {
			st->dwarf_kstack_id = st->kstack_id;
			st->dwarf_phase = st->phase;
			st->dwarf_cycle = st->cycle;
		}
		__sync_fetch_and_add(&st->dwarf_pend_ns, off_total);
	} else if (st->state == IT_SCHED_BLOCKED && off_total >= cfg_min_block_ns) {
		struct it_stack_key sk = {};

		sk.tgid = st->tgid;
		sk.phase = st->phase;
		sk.ustack_id = st->ustack_id;
		sk.kstack_id = st->kstack_id;
		sk.pystack = py_offcpu_stack(tid);
		BPF_CORE_READ_STR_INTO(&sk.comm, task, group_leader, comm);
		add_u64(&offcpu_counts, &sk, off_total);
		if (sched_path) {
			/* full (or settled at an edge): the interval stays in
			 * offcpu_counts, without these labels */
			struct it_label_key lk = { .stack = sk, .tid = tid, .cycle = st->cycle };

			add_u64_or(&offcpu_label_counts, &lk, off_total, IT_STAT_OFFCPU_LABELS_FULL);
		}
	}
	if (run || st->state == IT_SCHED_ONCPU) {
		/* a switch-out can come every few microseconds: the scheduler
		 * programs read RSS at most once a millisecond per thread (the
		 * edges' programs, near the verifier's limit, as before) */
		if (!sched_path) {
			mem_sample(task, st->tgid, cyc, now);
		} else if (now - st->mem_ts >= SCHED_MEM_MIN_NS) {
			mem_sample(task, st->tgid, cyc, now);
			st->mem_ts = now;
		}
		if (!v0) {
			key_of(&k0, tid, st, cyc0, kph);
			v0 = times_of(&k0);
		}
		flush_faults(st, task, v0);
	}
	if (st->state == IT_SCHED_RUNQ || wait) {
		struct it_hist_key hk = { .tgid = st->tgid, .phase = st->phase };
		struct it_hist *h = bpf_map_lookup_elem(&runq_hist, &hk);

		if (!h) {
			static const struct it_hist zero;

			bpf_map_update_elem(&runq_hist, &hk, &zero, BPF_NOEXIST);
			h = bpf_map_lookup_elem(&runq_hist, &hk);
		}
		if (h) {
			__u32 slot = log2_us(wait ? wait : off_total);

			if (slot < IT_HIST_SLOTS)
				__sync_fetch_and_add(&h->slots[slot], 1);
		}
		if (!v0) {
			key_of(&k0, tid, st, cyc0, kph);
			v0 = times_of(&k0);
		}
		if (v0)
			__sync_fetch_and_add(&v0->runq_waits, 1);
	}
	st->ts = now;
	if (!edge) {
		st->cycle = cyc;
		st->phase = ph;
	}
	if (csw != SCHED_CSW_NONE) {
		v = NULL;
		if (st->cycle == cyc0 && st->phase == kph) {
			if (!v0) {
				key_of(&k0, tid, st, cyc0, kph);
				v0 = times_of(&k0);
			}
			v = v0;
		} else {
			key_of(&k0, tid, st, st->cycle, st->phase);
			v = times_of(&k0);
		}
		if (v)
			__sync_fetch_and_add(csw == SCHED_CSW_VOLUNTARY ? &v->nvcsw : &v->nivcsw, 1);
	}
}

#define SCHED_HOW(run_first, sched_path, dwarf, csw, others)                                         \
	((__u32)(run_first) | (__u32)(sched_path) << 1 | (__u32)(dwarf) << 2 | (__u32)(csw) << 4 | \
	 (__u32)(others) << 6)

#ifdef SCHED_ACCOUNT_GLOBAL
/* In sched.bpf.c: account_body as a global function, which the verifier
 * checks once per program rather than at each call site and on each path
 * that reaches one (sched_on_switch calls it twice). */
int sched_account(__u32 tid, struct it_sched_thread *st, __u64 now, __u64 task, __u32 how);

static __always_inline void account(__u32 tid, struct it_sched_thread *st, __u64 now, struct task_struct *task,
				    bool run_first, bool sched_path, int dwarf)
{
	sched_account(tid, st, now, (__u64)task, SCHED_HOW(run_first, sched_path, dwarf, SCHED_CSW_NONE, false));
}

/* A switch-in's sync: others, st->others_pend holds the wait's part behind
 * other processes (account_body). */
static __always_inline void account_switch_in(__u32 tid, struct it_sched_thread *st, __u64 now,
					      struct task_struct *task, bool run_first, bool others)
{
	sched_account(tid, st, now, (__u64)task,
		      SCHED_HOW(run_first, false, SCHED_DWARF_DEFER, SCHED_CSW_NONE, others));
}

/* A switch-out's sync, the switch counted in the same lookup. */
static __always_inline void account_switch_out(__u32 tid, struct it_sched_thread *st, __u64 now,
					       struct task_struct *task, bool voluntary)
{
	sched_account(tid, st, now, (__u64)task,
		      SCHED_HOW(false, false, SCHED_DWARF_AT_SITE,
				voluntary ? SCHED_CSW_VOLUNTARY : SCHED_CSW_INVOLUNTARY, false));
}
#else
/* The probes' edges (probes.bpf.c) inline it with SCHED_DWARF_NO: their
 * global edge_settle is checked once anyway, without the stack code. */
static __always_inline void account(__u32 tid, struct it_sched_thread *st, __u64 now, struct task_struct *task,
				    bool run_first, bool sched_path, int dwarf)
{
	account_body(tid, st, now, task, run_first, sched_path, dwarf, SCHED_CSW_NONE, false);
}
#endif

/* A thread running now whose switch-in was not seen: its wait ends here
 * (the kernel's run placed at the end of the interval, as a tick would). */
static __always_inline void settle_unseen_switch_in(__u32 tid, struct it_sched_thread *st, __u64 now,
						    struct task_struct *task, bool sched_path, int dwarf)
{
	unseen_inc(SCHED_UNSEEN_SWITCH_IN);
	account(tid, st, now, task, false, sched_path, dwarf);
	st->state = IT_SCHED_ONCPU;
}

static __always_inline struct it_sched_thread *thread_of(__u32 tid, __u32 tgid, struct task_struct *task,
						       __u64 now, bool create)
{
	struct it_sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid), init = {};

	if (st || !create)
		return st;
	init.ts = now;
	init.sum_exec = BPF_CORE_READ(task, se.sum_exec_runtime);
	if (bpf_core_field_exists(task->sched_info))
		init.run_delay = BPF_CORE_READ(task, sched_info.run_delay);
	init.tgid = tgid;
	init.cycle = current_cycle(tgid);
	init.phase = current_phase(tid);
	init.minflt = BPF_CORE_READ(task, min_flt);
	init.majflt = BPF_CORE_READ(task, maj_flt);
	init.kstack_id = init.ustack_id = init.dwarf_kstack_id = -1;
	init.waker_kstack_id = init.waker_ustack_id = -1;
	if (bpf_map_update_elem(&sched_threads, &tid, &init, BPF_ANY)) {
		stat_inc(IT_STAT_SCHED_THREADS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&sched_threads, &tid);
}

/* The start of a cycle or phase edge's program on the current thread: its
 * timestamp, taken after the thread's state is found, so that a sync that
 * preempts or interrupts the program splits the thread's interval there
 * (account). NULL: the thread is not followed yet, or the scheduler
 * concern is off. */
static __always_inline struct it_sched_thread *sched_edge_begin(__u32 tid, __u64 *now)
{
	struct it_sched_thread *st = cfg_sched_edges ? bpf_map_lookup_elem(&sched_threads, &tid) : NULL;

	*now = bpf_ktime_get_ns();
	if (st)
		st->edge_ns = *now;
	return st;
}

/* An edge that finds its thread off a CPU by its state: a switch-in (and
 * maybe its wake-up) was not seen. The caller runs it from a global
 * function of its own, verified apart: inlined into the edge's settling,
 * account_body's locals passed the 512-byte BPF stack. */
static __always_inline void sched_edge_unseen_in(struct it_sched_thread *st, __u32 tid, __u64 now)
{
	settle_unseen_switch_in(tid, st, now, (struct task_struct *)bpf_get_current_task(), false, SCHED_DWARF_NO);
}

/* The edge at `now`, before it changes the thread's cycle or phase: settles
 * [ts, now) to the attribution it had, as on-CPU time (the thread runs the
 * edge's program; since its last settled instant it ran, or a switch would
 * have settled it). `lost`: the edge also ends calls whose exit was not seen
 * (frames dropped), so where the interval belongs is not known:
 * IT_PHASE_UNATTRIBUTED. A thread off a CPU by its state is the caller's to
 * settle first (sched_edge_unseen_in). Returns the thread's state for
 * sched_edge_retag. */
static __always_inline struct it_sched_thread *sched_edge_settle(struct it_sched_thread *st, __u32 tgid, __u32 tid,
							      __u64 now, bool lost)
{
	struct task_struct *task;
	struct it_sched_key k;
	__u64 from;

	if (!cfg_sched_edges)
		return NULL;
	task = (struct task_struct *)bpf_get_current_task();
	if (!st) {
		/* first seen at this edge (running since before the recording):
		 * followed from here, on the CPU */
		st = thread_of(tid, tgid, task, now, true);
		if (st)
			st->state = IT_SCHED_ONCPU;
		return st;
	}
	if (st->state != IT_SCHED_ONCPU)
		return st;
	/* atomic: a sync interrupting this program may move ts on too */
	from = __sync_lock_test_and_set(&st->ts, now);
	if (from >= now) {
		st->ts = from; /* a sync already settled past the edge */
		return st;
	}
	if (lost || current_phase(tid) != st->phase) {
		key_of(&k, tid, st, st->cycle, IT_PHASE_UNATTRIBUTED);
		stat_inc(IT_STAT_SCHED_UNATTRIBUTED);
	} else {
		key_of(&k, tid, st, st->cycle, st->phase);
	}
	struct it_sched_times *v = times_of(&k);

	if (v)
		__sync_fetch_and_add(&v->oncpu_ns, now - from);
	flush_faults(st, task, v);
	__sync_fetch_and_add(&st->edge_on, now - from);
	return st;
}

/* The thread's cycle and phase from now on: the ones its edges set. */
static __always_inline void sched_edge_tag(struct it_sched_thread *st, __u32 tgid, __u32 tid)
{
	st->cycle = current_cycle(tgid);
	st->phase = current_phase(tid);
}

/* The end of the edge's program: the thread's interval from the edge on is
 * of its new cycle and phase, including what a sync settled after the
 * edge's timestamp meanwhile. */
static __always_inline void sched_edge_retag(struct it_sched_thread *st, __u32 tgid, __u32 tid)
{
	struct it_sched_key k;
	struct it_sched_times *v;
	__u64 on, off;

	if (!st)
		return;
	sched_edge_tag(st, tgid, tid);
	st->edge_ns = 0;
	on = __sync_lock_test_and_set(&st->pend_on, 0);
	off = __sync_lock_test_and_set(&st->pend_off, 0);
	if (!on && !off)
		return;
	key_of(&k, tid, st, st->cycle, st->phase);
	v = times_of(&k);
	if (!v)
		return;
	__sync_fetch_and_add(&v->oncpu_ns, on);
	__sync_fetch_and_add(&v->runq_ns, off);
}

#endif
