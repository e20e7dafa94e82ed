// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Scheduler concern: per thread of a followed process, the time on a CPU,
 * waiting in a run queue (woken or preempted, until it runs) and blocked
 * (voluntarily off the CPU, until woken), attributed in the kernel to the
 * (process, cycle, phase) current when the interval began. Blocked time is
 * also kept by kernel stack (user space classifies it: sleep, I/O, lock) and,
 * for blocks of at least cfg_min_block_ns, by user+kernel stack for
 * offcpu.folded. Also: --comm matching at exec, abnormal exits, OOM victims
 * and fatal signals of the targets. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "mm.bpf.h"
#include "python.bpf.h"

const volatile __u64 cfg_min_block_ns = 1000;
const volatile char cfg_comm[IT_COMM_LEN] = {};  /* --comm; empty: off */

struct sched_thread {
	__u64 ts;          /* start of the current interval */
	__u64 sum_exec;    /* the task's se.sum_exec_runtime at ts */
	__u64 minflt, majflt; /* the task's fault counters at the last flush */
	__u32 state;       /* enum it_sched_state */
	__u32 tgid;
	__u32 cycle, phase; /* attribution of the current interval */
	__s32 kstack_id, ustack_id; /* IT_SCHED_BLOCKED: where it blocked */
	__u32 resync;      /* sum_exec is stale (read between updates, at exec):
			    * the first flush takes the interval as run time */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct sched_thread);
} sched_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_sched_key);
	__type(value, struct it_sched_times);
} sched_times SEC(".maps");

/* Blocked nanoseconds by (process, cycle, phase, main thread, kernel stack). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_sched_key);
	__type(value, __u64);
} blocked_kstacks SEC(".maps");

/* Blocked nanoseconds by (process, phase, user stack, kernel stack). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct it_stack_key);
	__type(value, __u64);
} offcpu_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, IT_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} offcpu_stackmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_hist_key);
	__type(value, struct it_hist);
} runq_hist SEC(".maps");

/* Context switches of followed threads that no program saw, found when the
 * thread's state disagrees with what the kernel does with it next. */
enum { SCHED_UNSEEN_SWITCH_IN = 0, SCHED_UNSEEN_SWITCH_OUT = 1, SCHED_UNSEEN_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCHED_UNSEEN_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sched_unseen SEC(".maps");

static __always_inline void unseen_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&sched_unseen, &idx);

	if (v)
		*v += 1;
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

static __always_inline void add_u64(void *map, void *key, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(map, key);

	if (!v) {
		if (!bpf_map_update_elem(map, key, &n, BPF_NOEXIST))
			return;
		v = bpf_map_lookup_elem(map, key);
		if (!v) {
			stat_inc(IT_STAT_SCHED_LOST);
			return;
		}
	}
	__sync_fetch_and_add(v, n);
}

static __always_inline void key_of(struct it_sched_key *k, __u32 tid, const struct sched_thread *st,
				   __u32 cycle, __u32 phase)
{
	k->tgid = st->tgid;
	k->cycle = cycle;
	k->phase = phase;
	k->flags = tid == st->tgid ? IT_SCHED_MAIN_THREAD : 0;
	k->kstack_id = -1;
	k->pad = 0;
}

/* The latest cycle or phase edge inside (from, to), or `from` when none is
 * known: a cycle that began (the process's open cycle changed) or, for a
 * running thread, a phase that was entered. */
static __always_inline __u64 edge_in(__u32 tid, const struct sched_thread *st, __u64 from, __u64 to,
				     __u32 cyc, __u32 ph, bool ran)
{
	struct it_proc_state *ps;
	struct it_thread_state *ts;
	__u64 edge = from, t;
	__u32 d;

	if (cfg_cycles_from_probes && cyc != st->cycle) {
		ps = bpf_map_lookup_elem(&procs, &st->tgid);
		t = ps ? ps->cycle_start_ns : 0;
		if (t > edge && t < to)
			edge = t;
	}
	if (ran && ph != st->phase) {
		ts = bpf_map_lookup_elem(&threads, &tid);
		d = ts ? ts->depth : 0;
		if (d > 0 && d <= IT_PHASE_STACK) {
			t = ts->frames[d - 1].entry_ns;
			if (t > edge && t < to)
				edge = t;
		}
	}
	return edge;
}

/* a * b / c for a, b <= c, without overflowing 64 bits */
static __always_inline __u64 scale(__u64 a, __u64 b, __u64 c)
{
	while (c > (1ull << 32)) {
		a >>= 1;
		b >>= 1;
		c >>= 1;
	}
	return c ? a * b / c : 0;
}

static __always_inline __u64 overlap(__u64 lo, __u64 hi, __u64 from, __u64 to)
{
	if (from < lo)
		from = lo;
	if (to > hi)
		to = hi;
	return to > from ? to - from : 0;
}

/* Adds [st->ts, now) to the thread's attribution. The time on a CPU in it is
 * the kernel's own: the delta of se.sum_exec_runtime (what the thread's CPU
 * clock shows), so that a context switch no program saw loses nothing; the
 * rest of the interval is of the thread's state. In the on-CPU state the rest
 * is time the hypervisor gave the vCPU to others (steal, which the kernel
 * leaves out of sum_exec_runtime): the thread waited for a CPU, so it counts
 * as run-queue wait, spread over the interval. Outside the on-CPU state the
 * run is placed at the end of the interval (its switch-in was not seen) or,
 * with run_first, at its start (its switch-out was not seen).
 * The part before a known edge goes to the cycle and phase of the interval's
 * start, the rest to the current ones. (Phases change only while the thread
 * runs; the exit of a phase leaves no timestamp, so it is seen at the next
 * flush: a context switch or a scheduler tick.) */
static __always_inline void account(__u32 tid, struct sched_thread *st, __u64 now,
				    struct task_struct *task, bool run_first)
{
	__u32 cyc = current_cycle(st->tgid), ph = current_phase(tid);
	__u64 sum = BPF_CORE_READ(task, se.sum_exec_runtime);
	struct it_sched_key k;
	struct it_sched_times *v;
	__u64 split, minflt, majflt, wall, run, run_from, run_to, off_total = 0;

	if (now < st->ts)
		now = st->ts;
	wall = now - st->ts;
	if (st->resync && st->state == IT_SCHED_ONCPU) {
		/* current since the exec: on the CPU the whole interval */
		st->resync = 0;
		st->sum_exec = sum > wall ? sum - wall : 0;
	}
	run = sum > st->sum_exec ? sum - st->sum_exec : 0;
	/* The run queue's clock moves in steps (at its updates), not with
	 * ktime: a run longer than the interval keeps its excess for the next
	 * one, so that the sum of the runs is the kernel's, to the nanosecond. */
	if (run > wall)
		run = wall;
	st->sum_exec = sum > st->sum_exec ? st->sum_exec + run : sum;
	if (run_first) {
		run_from = st->ts;
		run_to = st->ts + run;
	} else {
		run_from = now - run;
		run_to = now;
	}
	split = edge_in(tid, st, st->ts, now, cyc, ph, run > 0);
	if (split == st->ts)
		split = now; /* no edge known: all of it to the start's attribution */

	for (int part = 0; part < 2; part++) {
		__u64 lo = part ? split : st->ts, hi = part ? now : split, on, off;

		if (hi <= lo)
			continue;
		if (st->state == IT_SCHED_ONCPU)
			on = part ? run - scale(split - st->ts, run, wall) : scale(hi - lo, run, wall);
		else
			on = overlap(lo, hi, run_from, run_to);
		if (on > hi - lo)
			on = hi - lo;
		off = hi - lo - on;
		if (part)
			key_of(&k, tid, st, cyc, run ? ph : st->phase);
		else
			key_of(&k, tid, st, st->cycle, st->phase);
		v = times_of(&k);
		if (!v)
			continue;
		if (on)
			__sync_fetch_and_add(&v->oncpu_ns, on);
		if (!off)
			continue;
		off_total += off;
		if (st->state == IT_SCHED_RUNQ || st->state == IT_SCHED_ONCPU) {
			__sync_fetch_and_add(&v->runq_ns, off);
		} else if (st->state == IT_SCHED_BLOCKED) {
			__sync_fetch_and_add(&v->blocked_ns, off);
			k.kstack_id = st->kstack_id;
			add_u64(&blocked_kstacks, &k, off);
		}
	}
	if (st->state == IT_SCHED_BLOCKED && off_total >= cfg_min_block_ns) {
		struct it_stack_key sk = {};

		sk.tgid = st->tgid;
		sk.phase = st->phase;
		sk.ustack_id = st->ustack_id;
		sk.kstack_id = st->kstack_id;
		sk.pystack = py_offcpu_stack(tid);
		BPF_CORE_READ_STR_INTO(&sk.comm, task, group_leader, comm);
		add_u64(&offcpu_counts, &sk, off_total);
	}
	if (run || st->state == IT_SCHED_ONCPU) {
		mem_sample(task, st->tgid, cyc, now);
		/* faults happen on the CPU: the deltas go with the on-CPU time */
		minflt = BPF_CORE_READ(task, min_flt);
		majflt = BPF_CORE_READ(task, maj_flt);
		key_of(&k, tid, st, st->cycle, st->phase);
		v = times_of(&k);
		if (v && minflt >= st->minflt && majflt >= st->majflt) {
			__sync_fetch_and_add(&v->minflt, minflt - st->minflt);
			__sync_fetch_and_add(&v->majflt, majflt - st->majflt);
		}
		st->minflt = minflt;
		st->majflt = majflt;
	}
	if (st->state == IT_SCHED_RUNQ) {
		struct it_hist_key hk = { .tgid = st->tgid, .phase = st->phase };
		struct it_hist *h = bpf_map_lookup_elem(&runq_hist, &hk);

		if (!h) {
			static const struct it_hist zero;

			bpf_map_update_elem(&runq_hist, &hk, &zero, BPF_NOEXIST);
			h = bpf_map_lookup_elem(&runq_hist, &hk);
		}
		if (h) {
			__u32 slot = log2_us(off_total);

			if (slot < IT_HIST_SLOTS)
				__sync_fetch_and_add(&h->slots[slot], 1);
		}
		key_of(&k, tid, st, st->cycle, st->phase);
		v = times_of(&k);
		if (v)
			__sync_fetch_and_add(&v->runq_waits, 1);
	}
	st->ts = now;
	st->cycle = cyc;
	st->phase = ph;
}

static __always_inline struct sched_thread *thread_of(__u32 tid, __u32 tgid, struct task_struct *task,
						       __u64 now, bool create)
{
	struct sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid), init = {};

	if (st || !create)
		return st;
	init.ts = now;
	init.sum_exec = BPF_CORE_READ(task, se.sum_exec_runtime);
	init.tgid = tgid;
	init.cycle = current_cycle(tgid);
	init.phase = current_phase(tid);
	init.minflt = BPF_CORE_READ(task, min_flt);
	init.majflt = BPF_CORE_READ(task, maj_flt);
	init.kstack_id = init.ustack_id = -1;
	if (bpf_map_update_elem(&sched_threads, &tid, &init, BPF_ANY)) {
		stat_inc(IT_STAT_SCHED_THREADS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&sched_threads, &tid);
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
		account(ptid, st, now, prev, false);
		key_of(&k, ptid, st, st->cycle, st->phase);
		v = times_of(&k);
		if (v)
			__sync_fetch_and_add(voluntary ? &v->nvcsw : &v->nivcsw, 1);
		if (BPF_CORE_READ(prev, exit_state)) {
			/* the last switch of a dead thread */
			bpf_map_delete_elem(&sched_threads, &ptid);
		} else if (voluntary) {
			st->state = IT_SCHED_BLOCKED;
			/* prev is still current here: these are its stacks */
			st->kstack_id = bpf_get_stackid(ctx, &offcpu_stackmap, 0);
			st->ustack_id = bpf_get_stackid(ctx, &offcpu_stackmap, BPF_F_USER_STACK);
			if (st->kstack_id < 0)
				stat_inc(IT_STAT_OFFCPU_KSTACK_ERR);
			if (st->ustack_id < 0)
				stat_inc(IT_STAT_OFFCPU_USTACK_ERR);
			py_offcpu_capture(ptgid, ptid);
		} else {
			st->state = IT_SCHED_RUNQ;
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
			account(ntid, st, now, next, run_first);
		}
		if (st) {
			st->state = IT_SCHED_ONCPU;
			st->ts = now;
		}
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
		account(tid, st, now, task, true);
		st->state = IT_SCHED_RUNQ;
	} else if (st->state == IT_SCHED_BLOCKED || st->state == IT_SCHED_UNKNOWN) {
		if (st->state == IT_SCHED_BLOCKED)
			account(tid, st, now, task, false);
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

/* Fires on scheduler ticks for the running task: flushes its on-CPU time so
 * that a long on-CPU stretch is split at cycle and phase edges to within a
 * tick. Optional: without it, the split happens at the next switch. */
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
		account(tid, st, bpf_ktime_get_ns(), task, false);
		st->state = IT_SCHED_ONCPU;
	} else if (st->state == IT_SCHED_ONCPU) {
		account(tid, st, bpf_ktime_get_ns(), task, false);
	}
	return 0;
}

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < IT_COMM_LEN; i++) {
		if (comm[i] != cfg_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline void *reserve(__u32 type, __u32 tgid, __u32 tid)
{
	struct it_crash_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	event_header(&e->hdr, type, tgid, tid, bpf_ktime_get_ns());
	e->cycle = current_cycle(tgid);
	e->phase = current_phase(tid);
	return e;
}

/* --comm: a process that exec's a matching name is followed from now on. */
SEC("raw_tp/sched_process_exec")
int sched_on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct it_target t = {};
	struct it_crash_event *e;
	char comm[IT_COMM_LEN];

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
	if (!cfg_comm[0])
		return 0;
	BPF_CORE_READ_STR_INTO(&comm, task, comm);
	if (!comm_matches(comm))
		return 0;
	t.flags = IT_TARGET_COMM;
	t.parent_tgid = BPF_CORE_READ(task, real_parent, tgid);
	t.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&targets, &tgid, &t, BPF_NOEXIST)) {
		stat_inc(IT_STAT_TARGETS_FULL);
		return 0;
	}
	e = reserve(IT_EV_COMM, tgid, BPF_CORE_READ(task, pid));
	if (!e)
		return 0;
	e->sender_pid = t.parent_tgid;
	__builtin_memcpy(e->comm, comm, IT_COMM_LEN);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* A process (group leader) that dies of a signal or exits non-zero. */
SEC("raw_tp/sched_process_exit")
int sched_on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid), pid = BPF_CORE_READ(task, pid);
	struct it_crash_event *e;
	int code;

	if (pid != tgid || !target_of(tgid))
		return 0;
	code = BPF_CORE_READ(task, exit_code);
	if (!code)
		return 0;
	e = reserve(IT_EV_CRASH, tgid, pid);
	if (!e)
		return 0;
	e->exit_code = code;
	e->signal = code & 0x7f;
	e->rss_bytes = mm_rss_bytes(BPF_CORE_READ(task, mm));
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

static __always_inline __u32 tgid_of_tid(__u32 tid)
{
	struct sched_thread *st = bpf_map_lookup_elem(&sched_threads, &tid);

	return st ? st->tgid : tid;
}

SEC("tracepoint/oom/mark_victim")
int sched_on_oom_victim(struct trace_event_raw_mark_victim *ctx)
{
	__u32 tid = ctx->pid, tgid = tgid_of_tid(tid);
	struct it_crash_event *e;

	if (!target_of(tgid))
		return 0;
	e = reserve(IT_EV_OOM, tgid, tid);
	if (!e)
		return 0;
	e->signal = 9;
	e->rss_bytes = ((__u64)ctx->anon_rss + ctx->file_rss + ctx->shmem_rss) * 1024; /* kB */
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Signals that end a process unless handled; recorded with their sender so
 * that a crash can say who sent it. */
#define FATAL_SIGNALS ((1u << 4) | (1u << 6) | (1u << 7) | (1u << 8) | (1u << 9) | \
		       (1u << 11) | (1u << 31))

SEC("tracepoint/signal/signal_generate")
int sched_on_signal(struct trace_event_raw_signal_generate *ctx)
{
	__u32 tid = ctx->pid, tgid = tgid_of_tid(tid);
	int sig = ctx->sig;
	struct it_crash_event *e;

	if (sig <= 0 || sig >= 32 || !(FATAL_SIGNALS & (1u << sig)) || ctx->result != 0)
		return 0;
	if (!target_of(tgid))
		return 0;
	e = reserve(IT_EV_FATAL_SIGNAL, tgid, tid);
	if (!e)
		return 0;
	e->signal = sig;
	e->si_code = ctx->code;
	e->sender_pid = bpf_get_current_pid_tgid() >> 32;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
