// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CUDA host side (--preset cuda): one generic uprobe/uretprobe pair placed
 * on libcudart and libcuda functions; the cookie names the counter, the
 * argument whose value is summed (memcpy sizes) and whether the function
 * is a runtime (libcudart) one. Per (process, cycle, counter): calls and
 * the sum, bytes for copies, nanoseconds from entry to return for
 * synchronizations. The runtime implements its calls with the driver's,
 * so driver functions called inside a runtime call are not counted again,
 * and nested synchronizations are timed once (outermost). At an outermost
 * kernel or graph launch by a thread of a known Python process, its Python
 * stack goes to user space (IT_EV_CUDA_LAUNCH): the launch stack the GPU
 * join puts that launch's kernels under. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "python.bpf.h"

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

/* The thread's Python stack at the entry of an outermost launch, stamped
 * once walked: the closer to the call's own start, the surer the join. A
 * process that is no known Python costs one hash lookup. */
static __always_inline void cuda_launch_stack(__u32 tgid, __u32 tid)
{
	struct it_cuda_launch_event *e;
	__u64 h;

	if (!py_procs_known || !bpf_map_lookup_elem(&py_procs, &tgid))
		return;
	h = py_stack_capture(tgid, tid);
	if (!h)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return;
	}
	event_header(&e->hdr, IT_EV_CUDA_LAUNCH, tgid, tid, bpf_ktime_get_ns());
	e->pystack = h;
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
		cuda_launch_stack(tgid, tid);
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
