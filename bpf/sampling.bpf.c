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
#include "python.bpf.h"

#define EEXIST 17
#define PAGE 4096

/* Bytes of user stack to copy per sample; 0: frame-pointer stacks only. */
const volatile __u32 cfg_ustack_size = 0;

/* Scratch record per CPU, indexed by CPU number: the record is larger than
 * a per-CPU array value may be (32 KiB). Sized to the CPU count at run time. */
struct ustack_scratch {
	/* a struct it_ustack_event; room for a chunk starting at any offset below the max */
	__u8 buf[sizeof(struct it_ustack_event) + IT_USTACK_MAX + PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* one per CPU, set at run time */
	__type(key, __u32);
	__type(value, struct ustack_scratch);
} ustack_scratch SEC(".maps");

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

static __always_inline int user_regs(struct it_ustack_event *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(task);
	struct pt_regs regs;

	if (!r || bpf_probe_read_kernel(&regs, sizeof(regs), r))
		return -1;
#if defined(__TARGET_ARCH_x86)
	/* DWARF numbering of x86-64 */
	e->regs[0] = regs.ax;
	e->regs[1] = regs.dx;
	e->regs[2] = regs.cx;
	e->regs[3] = regs.bx;
	e->regs[4] = regs.si;
	e->regs[5] = regs.di;
	e->regs[6] = regs.bp;
	e->regs[7] = regs.sp;
	e->regs[8] = regs.r8;
	e->regs[9] = regs.r9;
	e->regs[10] = regs.r10;
	e->regs[11] = regs.r11;
	e->regs[12] = regs.r12;
	e->regs[13] = regs.r13;
	e->regs[14] = regs.r14;
	e->regs[15] = regs.r15;
	e->regs[16] = regs.ip;
	e->sp = regs.sp;
#elif defined(__TARGET_ARCH_arm64)
	/* x0..x30 = 0..30, sp = 31, pc kept in slot 32 */
	for (int i = 0; i < 31; i++)
		e->regs[i] = regs.regs[i];
	e->regs[31] = regs.sp;
	e->regs[32] = regs.pc;
	e->sp = regs.sp;
#else
	return -1;
#endif
	return 0;
}

/* Copies up to cfg_ustack_size bytes from sp, one page at a time, so that a
 * stack ending (top of its mapping) before the asked size still copies what
 * there is. Returns the bytes copied. */
static __always_inline __u32 copy_user_stack(struct it_ustack_event *e, __u64 sp)
{
	__u32 want = cfg_ustack_size, got = 0;

	for (int i = 0; i < IT_USTACK_MAX / PAGE + 1; i++) {
		__u64 addr = sp + got;
		__u32 len = PAGE - (addr & (PAGE - 1));

		if (got >= want)
			break;
		if (len > want - got)
			len = want - got;
		if (len > PAGE)
			break;
		if (bpf_probe_read_user(&e->stack[got & (IT_USTACK_MAX - 1)], len, (void *)addr))
			break;
		got += len;
	}
	return got;
}

static __always_inline void send_user_stack(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid,
					    const struct it_stack_key *key, __u32 cycle)
{
	__u32 cpu = bpf_get_smp_processor_id(), got;
	struct ustack_scratch *s = bpf_map_lookup_elem(&ustack_scratch, &cpu);
	struct it_ustack_event *e;
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
	__builtin_memcpy(e->comm, key->comm, IT_COMM_LEN);
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
	key.pystack = py_stack_capture(tgid, tid);
	py_observe_emit(tgid, tid, IT_PY_OBS_SAMPLE, key.pystack, bpf_ktime_get_ns());

	ckey.tgid = tgid;
	ckey.cycle = current_cycle(tgid);
	ckey.phase = key.phase;
	count(&cycle_samples, &ckey);
	/* dwarf: the sample is counted in user space once its stack is unwound */
	if (cfg_ustack_size)
		send_user_stack(ctx, tgid, tid, &key, ckey.cycle);
	else
		count(&stack_counts, &key);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
