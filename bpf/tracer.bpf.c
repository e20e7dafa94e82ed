// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Process lifecycle of the targets: children forked by a followed process are
 * followed from their first instruction; exec, exit and executable mmaps are
 * reported so user space can capture mappings while the process lives. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"
#include "python.bpf.h"

#define PROT_EXEC 0x4
#define SIGSTOP 19
#define MAX_ERRNO 4095 /* a syscall's return in [-MAX_ERRNO, 0) is an error */

/* tids inside an mmap(PROT_EXEC) call, between sys_enter and sys_exit,
 * with the mapped file descriptor */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __s32);
} mmap_exec SEC(".maps");

/* "python..." or "libpython...": a file that may hold an interpreter */
static __always_inline bool python_name(const char *b)
{
	if (b[0] == 'l' && b[1] == 'i' && b[2] == 'b')
		return b[3] == 'p' && b[4] == 'y' && b[5] == 't' && b[6] == 'h' && b[7] == 'o' && b[8] == 'n';
	return b[0] == 'p' && b[1] == 'y' && b[2] == 't' && b[3] == 'h' && b[4] == 'o' && b[5] == 'n';
}

/* The name of the file open as fd, up to len - 1 bytes; false when unknown. */
static __always_inline bool fd_name(int fd, char *name, __u32 len)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *f = NULL;

	return fd >= 0 && !bpf_probe_read_kernel(&f, sizeof(f), fds + fd) && f &&
	       bpf_probe_read_kernel_str(name, len, BPF_CORE_READ(f, f_path.dentry, d_name.name)) >= 0;
}

static __always_inline bool python_file(int fd)
{
	char name[16] = {};

	return fd_name(fd, name, sizeof(name)) && python_name(name);
}

/* Whether the file open as fd starts with one of wanted_libs. */
static __always_inline bool wanted_file(int fd)
{
	char name[IT_WANTED_LIB_LEN] = {};
	__u32 n = nwanted_libs;

	if (!n || !fd_name(fd, name, sizeof(name)))
		return false;
	for (__u32 i = 0; i < IT_WANTED_LIBS && i < n; i++) {
		bool match = true;

		for (__u32 j = 0; j < IT_WANTED_LIB_LEN; j++) {
			char w = wanted_libs[i][j];

			if (!w)
				break;
			if (name[j] != w) {
				match = false;
				break;
			}
		}
		if (match)
			return true;
	}
	return false;
}

/* A process that is about to run an interpreter user space has not found
 * yet: stopped until it has (user space continues it after reading the
 * event), so that its first Python frames are already walked. Never once the
 * recording is frozen (its last ring-buffer read follows). */
static __always_inline bool stop_for_python(__u32 tgid, bool named)
{
	return pending_python && named && !recording_stopped && !bpf_map_lookup_elem(&py_procs, &tgid) &&
	       !bpf_send_signal(SIGSTOP);
}

static __always_inline struct it_proc_event *emit_reserve(void)
{
	struct it_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		stat_inc(IT_STAT_RINGBUF_LOST);
	return e;
}

static __always_inline void emit_fill(struct it_proc_event *e, __u32 type, __u32 tgid, __u32 parent,
				      __s32 code, struct task_struct *task)
{
	event_header(&e->hdr, type, tgid, BPF_CORE_READ(task, pid), bpf_ktime_get_ns());
	e->parent_tgid = parent;
	e->exit_code = code;
	e->stopped = 0;
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, task, group_leader, comm);
}

static __always_inline void emit(__u32 type, __u32 tgid, __u32 parent, __s32 code,
				 struct task_struct *task)
{
	struct it_proc_event *e = emit_reserve();

	if (!e)
		return;
	emit_fill(e, type, tgid, parent, code, task);
	bpf_ringbuf_submit(e, 0);
}

SEC("raw_tp/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct it_target t = {};

	/* threads share the tgid and are followed already */
	if (!cfg_follow_children || ctgid != cpid || !target_of(ptgid))
		return 0;
	t.flags = IT_TARGET_CHILD;
	t.parent_tgid = ptgid;
	t.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&targets, &ctgid, &t, BPF_NOEXIST)) {
		stat_inc(IT_STAT_TARGETS_FULL);
		return 0;
	}
	targets_changed();
	emit(IT_EV_FORK, ctgid, ptgid, 0, child);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct it_target *t = target_entry(tgid);

	if (!t)
		return 0;
	if (t->flags & IT_TARGET_AWAIT_EXEC) {
		t->flags &= ~IT_TARGET_AWAIT_EXEC;
		targets_changed();
	}
	struct it_proc_event *e = emit_reserve();

	if (!e)
		return 0;
	emit_fill(e, IT_EV_EXEC, tgid, 0, 0, task);
	/* a statically linked interpreter is found at its exec (the comm is the
	 * executable's name by now) */
	if (stop_for_python(tgid, python_name(e->comm)))
		e->stopped = 1;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u32 pid = BPF_CORE_READ(task, pid);

	bpf_map_delete_elem(&threads, &pid);
	if (pid != tgid || !target_entry(tgid))
		return 0;
	emit(IT_EV_EXIT, tgid, 0, BPF_CORE_READ(task, exit_code), task);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__s32 fd = (__s32)ctx->args[4];

	if (!(ctx->args[2] & PROT_EXEC) || fd < 0 || !target_of(id >> 32))
		return 0;
	bpf_map_update_elem(&mmap_exec, &tid, &fd, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__s32 *fdp = bpf_map_lookup_elem(&mmap_exec, &tid), fd;
	__u64 wake = 0;

	if (!fdp)
		return 0;
	fd = *fdp;
	bpf_map_delete_elem(&mmap_exec, &tid);
	if (ctx->ret < 0 && ctx->ret >= -MAX_ERRNO)
		return 0;
	struct it_proc_event *e = emit_reserve();

	if (!e)
		return 0;
	emit_fill(e, IT_EV_MMAP, id >> 32, 0, 0, (struct task_struct *)bpf_get_current_task());
	/* stop only when user space will hear of it and continue the process:
	 * never once the recording is frozen (its last ring-buffer read follows) */
	if ((pending_probes || wanted_file(fd)) && !recording_stopped && !bpf_send_signal(SIGSTOP)) {
		e->stopped = 1;
		/* woken whatever came before: with lazily submitted records
		 * (samples) unread ahead of it, the ring's default (wake only a
		 * consumer that has read everything) did not, and the process
		 * stayed stopped until the next 100 ms poll (the stops of
		 * --preset llama.cpp's node demo: 1.2 s). Python's stops keep
		 * the default: forced, test_python's py: phase counts split in
		 * 4 of 42 runs (0 of 52 without), for a reason not yet found. */
		wake = BPF_RB_FORCE_WAKEUP;
	} else if (stop_for_python(id >> 32, python_file(fd))) {
		e->stopped = 1; /* libpython, mapped by the loader or dlopen */
	}
	bpf_ringbuf_submit(e, wake);
	return 0;
}
