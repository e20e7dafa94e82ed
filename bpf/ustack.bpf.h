// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* User registers and a raw copy of the user stack, for unwinding in user
 * space with the target's .eh_frame (--call-graph dwarf): the on-CPU samples
 * (bpf/sampling.bpf.c) and the off-CPU stacks of blocking system calls
 * (bpf/sched.bpf.c) build their records the same way. */
#ifndef INFERTRACE_USTACK_BPF_H
#define INFERTRACE_USTACK_BPF_H

#include "maps.bpf.h"

#define PAGE 4096

/* The stacks of the on-CPU samples and, with --call-graph fp, of the CUDA
 * launches (bpf/cuda.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, IT_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384); /* resized at run time */
} stackmap SEC(".maps") SHARED;

/* Bytes of user stack to copy per record; 0: frame-pointer stacks only. */
SHARED const volatile __u32 cfg_ustack_size = 0;

/* Scratch records, three per CPU: a sample's perf_event program may
 * interrupt an off-CPU record or a CUDA launch's (bpf/cuda.bpf.c) being
 * built on the same CPU, so each has its own slot (index
 * IT_USTACK_SCRATCH_USERS * cpu + user). The record is larger than a
 * per-CPU array value may be (32 KiB). Sized to the CPU count at run time. */
enum { USTACK_SCRATCH_SAMPLE = 0, USTACK_SCRATCH_OFFCPU = 1, USTACK_SCRATCH_LAUNCH = 2 };
#define USTACK_SCRATCH_USERS IT_USTACK_SCRATCH_USERS

struct ustack_scratch {
	/* a struct it_ustack_event; room for a chunk starting at any offset below the max */
	__u8 buf[sizeof(struct it_ustack_event) + IT_USTACK_MAX + PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* USTACK_SCRATCH_USERS per CPU, set at run time */
	__type(key, __u32);
	__type(value, struct ustack_scratch);
} ustack_scratch SEC(".maps") SHARED;

static __always_inline struct ustack_scratch *ustack_scratch_of(__u32 user)
{
	__u32 idx = bpf_get_smp_processor_id() * USTACK_SCRATCH_USERS + user;

	return bpf_map_lookup_elem(&ustack_scratch, &idx);
}

/* The record's link register (IT_UREG_LR), 0 where there is none. */
#ifdef IT_UREG_LR
#define USTACK_LR(e) ((e)->regs[IT_UREG_LR])
#else
#define USTACK_LR(e) 0
#endif

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

/* Return addresses replaced by uretprobes, put back: at most this many
 * probed calls open on the stack, innermost first. */
#define USTACK_MAX_URETPROBES 4
#if defined(__TARGET_ARCH_arm64)
/* arm64 saves the link register in the callee's frame, below the stack
 * pointer at its entry: words looked at below it */
#define USTACK_LR_SEARCH_WORDS 32
#endif

/* The copy's word at user address addr, when it lies in the copy. */
static __always_inline __u64 *ustack_word(struct it_ustack_event *e, __u32 got, __u64 addr)
{
	__u64 off = addr - e->sp;

	if (addr < e->sp || off + sizeof(__u64) > got)
		return NULL;
	return (__u64 *)&e->stack[off & (IT_USTACK_MAX - 1)];
}

/* A uretprobe (ours on a --cycle or phase function, or another tool's)
 * replaces each probed call's return address with the kernel's trampoline
 * in the [uprobes] page, which no .eh_frame describes: unwound as it is, the
 * caller is lost ([unknown] in place of main under a --cycle function). The
 * kernel keeps each such call's real return address and its stack pointer
 * at entry (struct return_instance, innermost first): the copy gets the real
 * ones back. */
static __always_inline void restore_uretprobe_returns(struct it_ustack_event *e, __u32 got)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u64 tramp, *w;

	if (!ri)
		return;
	tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if (!tramp)
		return;
	for (int i = 0; i < USTACK_MAX_URETPROBES && ri; i++) {
		__u64 entry_sp = BPF_CORE_READ(ri, stack), ret = BPF_CORE_READ(ri, orig_ret_vaddr);

#if defined(__TARGET_ARCH_x86)
		/* x86-64: the return address is the word at the entry's sp */
		w = ustack_word(e, got, entry_sp);
		if (w && *w == tramp)
			*w = ret;
#elif defined(__TARGET_ARCH_arm64)
		if (e->regs[30] == tramp) {
			e->regs[30] = ret; /* the innermost call has not saved it yet */
		} else {
			for (int j = 1; j <= USTACK_LR_SEARCH_WORDS; j++) {
				w = ustack_word(e, got, entry_sp - j * sizeof(__u64));
				if (w && *w == tramp) {
					*w = ret;
					break;
				}
			}
		}
#endif
		ri = BPF_CORE_READ(ri, next);
	}
}

/* Copies up to cfg_ustack_size bytes from sp, one page at a time, so that a
 * stack ending (top of its mapping) before the asked size still copies what
 * there is, with the return addresses uretprobes replaced put back. Returns
 * the bytes copied. */
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
	if (got > IT_USTACK_MAX)
		got = IT_USTACK_MAX;
	restore_uretprobe_returns(e, got);
	return got;
}

#endif
