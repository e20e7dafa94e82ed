// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Crash concern: abnormal exits, OOM victims and fatal signals of the
 * followed processes, and --comm matching at exec (a process that exec's a
 * matching name is followed from then on). Read by user/concerns/crash.c. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "mm.bpf.h"

const volatile char cfg_comm[IT_COMM_LEN] = {};  /* --comm; empty: off */

/* vmlinux.h has the kernel's types, not its macros */
#define SIGILL 4
#define SIGABRT 6
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGSEGV 11
#define SIGSYS 31
#define NSIG_STD 32            /* signals below this fit in a 32-bit mask */
#define EXIT_SIGNAL_MASK 0x7f  /* exit_code: the killing signal, else 0 (wait(2) status) */

/* Defined in bpf/sched.bpf.c, which keeps the tid -> tgid of every thread it
 * has seen; the static linker resolves it. */
extern __u32 sched_tgid_of_tid(__u32 tid);

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

/* --comm: a process that exec's a matching name is followed from now on.
 * Attached after sched_on_exec, which thus still sees it as not followed. */
SEC("raw_tp/sched_process_exec")
int crash_on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct it_target t = {};
	struct it_crash_event *e;
	char comm[IT_COMM_LEN];

	if (!cfg_comm[0] || target_entry(tgid))
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
	targets_changed();
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
int crash_on_exit(struct bpf_raw_tracepoint_args *ctx)
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
	e->signal = code & EXIT_SIGNAL_MASK;
	e->rss_bytes = mm_rss_bytes(BPF_CORE_READ(task, mm));
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/oom/mark_victim")
int crash_on_oom_victim(struct trace_event_raw_mark_victim *ctx)
{
	__u32 tid = ctx->pid, tgid = sched_tgid_of_tid(tid);
	struct it_crash_event *e;

	if (!target_of(tgid))
		return 0;
	e = reserve(IT_EV_OOM, tgid, tid);
	if (!e)
		return 0;
	e->signal = SIGKILL;
	e->rss_bytes = ((__u64)ctx->anon_rss + ctx->file_rss + ctx->shmem_rss) * 1024; /* kB */
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* Signals that end a process unless handled; recorded with their sender so
 * that a crash can say who sent it. */
#define FATAL_SIGNALS ((1u << SIGILL) | (1u << SIGABRT) | (1u << SIGBUS) | (1u << SIGFPE) | \
		       (1u << SIGKILL) | (1u << SIGSEGV) | (1u << SIGSYS))

SEC("tracepoint/signal/signal_generate")
int crash_on_signal(struct trace_event_raw_signal_generate *ctx)
{
	__u32 tid = ctx->pid, tgid = sched_tgid_of_tid(tid);
	int sig = ctx->sig;
	struct it_crash_event *e;

	if (sig <= 0 || sig >= NSIG_STD || !(FATAL_SIGNALS & (1u << sig)) || ctx->result != 0)
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
