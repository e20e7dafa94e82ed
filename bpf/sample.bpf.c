// SPDX-License-Identifier: GPL-2.0
/* On-CPU sampling: a perf_event program on every CPU (software cpu-clock).
 * Samples of followed processes are counted per (process, phase, user stack,
 * kernel stack) in `stack_counts`, and per (process, cycle, phase) in
 * `cycle_samples`; nothing is streamed per sample. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"

#define EEXIST 17

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, IT_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384); /* resized at run time */
} stackmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768); /* resized at run time */
	__type(key, struct it_stack_key);
	__type(value, __u64);
} stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_cycle_key);
	__type(value, __u64);
} cycle_samples SEC(".maps");

static __always_inline void count(void *map, void *key)
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
			stat_inc(IT_STAT_LOST_SAMPLES);
	}
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
	if (tgid == 0 || !target_of(tgid))
		return 0;
	stat_inc(IT_STAT_SAMPLES_TARGET);

	key.tgid = tgid;
	key.phase = current_phase(tid);
	key.kstack_id = bpf_get_stackid(ctx, &stackmap, 0);
	key.ustack_id = bpf_get_stackid(ctx, &stackmap, BPF_F_USER_STACK);
	if (key.kstack_id < 0) {
		/* -EFAULT is normal for samples taken in user mode */
		if (key.kstack_id == -EEXIST)
			stat_inc(IT_STAT_KSTACK_COLLISION);
	}
	if (key.ustack_id < 0) {
		stat_inc(IT_STAT_USTACK_ERR);
		if (key.ustack_id == -EEXIST)
			stat_inc(IT_STAT_USTACK_COLLISION);
	}
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&key.comm, task, group_leader, comm);
	count(&stack_counts, &key);

	ckey.tgid = tgid;
	ckey.cycle = current_cycle(tgid);
	ckey.phase = key.phase;
	count(&cycle_samples, &ckey);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
