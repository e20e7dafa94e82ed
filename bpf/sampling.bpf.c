// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* On-CPU sampling: a perf_event program on every CPU (software cpu-clock).
 * Samples of followed processes are counted per (process, phase, user stack,
 * kernel stack) in `stack_counts`, and per (process, cycle, phase) in
 * `cycle_samples`. With --call-graph fp nothing is streamed per sample; with
 * --call-graph dwarf the user registers and a copy of the user stack go to
 * user space through the ring buffer (IT_EV_USTACK) to be unwound there with
 * the target's .eh_frame, the phase and cycle still tagged here. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "ustack.bpf.h"
#include "python.bpf.h"

#define EEXIST 17

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768); /* resized at run time */
	__type(key, struct it_stack_key);
	__type(value, __u64);
} stack_counts SEC(".maps");

/* The same counts by thread and cycle as well (profile.pb.gz's labels). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768); /* resized at run time */
	__type(key, struct it_label_key);
	__type(value, __u64);
} label_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_cycle_key);
	__type(value, __u64);
} cycle_samples SEC(".maps");

/* --call-graph fp: each sampled thread's name (trace.json's tracks, pprof's
 * thread_name); LRU: a run with more threads keeps the latest ones' */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct it_thread_comm);
} thread_comms SEC(".maps");

static __always_inline void count(void *map, void *key, __u32 lost_stat)
{
	__u64 one = 1, *v = bpf_map_lookup_elem(map, key);

	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	/* BPF_NOEXIST: another CPU may have created it meanwhile */
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(map, key);
		if (v)
			__sync_fetch_and_add(v, 1);
		else
			stat_inc(lost_stat);
	}
}

/* The thread's comm into `thread_comms`, written only when it changed (a
 * thread names itself once, mostly): one lookup per sample. */
static __always_inline void name_thread(__u64 id)
{
	struct it_thread_comm tc __attribute__((aligned(8)));
	const __u64 *have, *now = (const __u64 *)tc.comm;

	if (bpf_get_current_comm(tc.comm, sizeof(tc.comm)))
		return;
	have = bpf_map_lookup_elem(&thread_comms, &id);
	if (have && have[0] == now[0] && have[1] == now[1])
		return;
	bpf_map_update_elem(&thread_comms, &id, &tc, BPF_ANY);
}

static __always_inline void send_user_stack(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid,
					    const struct it_stack_key *key, __u32 cycle)
{
	struct ustack_scratch *s = ustack_scratch_of(USTACK_SCRATCH_SAMPLE);
	struct it_ustack_event *e;
	__u32 got;
	__u64 size;

	if (!s) {
		stat_inc(IT_STAT_USTACK_COPY_ERR);
		return;
	}
	e = (struct it_ustack_event *)s->buf;
	event_header(&e->hdr, IT_EV_USTACK, tgid, tid, bpf_ktime_get_ns());
	e->cycle = cycle;
	e->phase = key->phase;
	e->kstack_id = key->kstack_id;
	e->pystack = key->pystack;
	e->reuse = 0;
	__builtin_memcpy(e->comm, key->comm, IT_COMM_LEN);
	bpf_get_current_comm(e->thread_comm, sizeof(e->thread_comm));
	got = 0;
	if (user_regs(e) == 0)
		got = copy_user_stack(e, e->sp);
	else
		__builtin_memset(e->regs, 0, sizeof(e->regs));
	if (!got)
		stat_inc(IT_STAT_USTACK_COPY_ERR);
	else if (got < cfg_ustack_size)
		stat_inc(IT_STAT_USTACK_SHORT);
	if (got > IT_USTACK_MAX)
		got = IT_USTACK_MAX;
	e->stack_size = got;
	size = sizeof(*e) + got;
	/* no wake-up per sample: a consumer woken at every sample preempts the
	 * sampled task right there and biases which tasks later samples find */
	if (bpf_ringbuf_output(&events, e, size, lazy_wakeup()))
		stat_inc(IT_STAT_USTACK_LOST);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct it_stack_key key = {};
	struct it_cycle_key ckey = {};
	struct task_struct *task;

	stat_inc(IT_STAT_SAMPLES_ALL);

	struct it_target *t = tgid ? target_of(tgid) : NULL;

	if (!t)
		return 0;
	stat_inc(IT_STAT_SAMPLES_TARGET);

	key.tgid = tgid;
	/* the Python stack first: a `py:` edge it shows retags the thread */
	key.pystack = py_stack_capture(tgid, tid);
	py_observe_emit(tgid, tid, IT_PY_OBS_SAMPLE, key.pystack, bpf_ktime_get_ns());
	key.phase = current_phase(tid);
	key.kstack_id = bpf_get_stackid(ctx, &stackmap, 0);
	key.ustack_id = cfg_ustack_size ? -1 : bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
	if (key.kstack_id < 0) {
		/* -EFAULT is normal for samples taken in user mode */
		if (key.kstack_id == -EEXIST)
			stat_inc(IT_STAT_KSTACK_COLLISION);
	}
	if (key.ustack_id < 0 && !cfg_ustack_size) {
		stat_inc(IT_STAT_USTACK_ERR);
		if (key.ustack_id == -EEXIST)
			stat_inc(IT_STAT_USTACK_COLLISION);
	}
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&key.comm, task, group_leader, comm);

	ckey.tgid = tgid;
	ckey.cycle = current_cycle(tgid);
	ckey.phase = key.phase;
	count(&cycle_samples, &ckey, IT_STAT_LOST_SAMPLES);
	/* dwarf: the sample is counted in user space once its stack is unwound */
	if (cfg_ustack_size)
		send_user_stack(ctx, tgid, tid, &key, ckey.cycle);
	else {
		struct it_label_key lkey = { .stack = key, .tid = tid, .cycle = ckey.cycle };

		count(&stack_counts, &key, IT_STAT_LOST_SAMPLES);
		count(&label_counts, &lkey, IT_STAT_LABELS_FULL);
		name_thread(id);
	}
	return 0;
}

/* The `py:` edges' own clock (docs/python.md): each tick on a thread of a
 * Python target observes its Python stack and applies the edges it shows,
 * with no native stack copy; on_cpu_sample copies those at -F's rate. */
SEC("perf_event")
int on_py_tick(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;

	(void)ctx;
	if (!tgid || !py_procs_known || !target_of(tgid) || !bpf_map_lookup_elem(&py_procs, &tgid))
		return 0;
	py_observe_emit(tgid, tid, IT_PY_OBS_TICK, py_stack_capture(tgid, tid), bpf_ktime_get_ns());
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
