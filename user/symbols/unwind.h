// SPDX-License-Identifier: BSD-2-Clause
/* User-space DWARF unwinding of sampled user stacks (--call-graph dwarf),
 * on elfutils libdwfl, as perf's util/unwind-libdw.c does: per process one
 * Dwfl whose modules are the syms cache's captured file mappings at their
 * process addresses, with a thread state whose registers are the sampled
 * ones and whose memory is the stack copied in BPF. .eh_frame gives the
 * rules; where a frame has no CFI (JIT code) libdwfl falls back to the
 * frame pointer. Not thread-safe. */
#ifndef INFERTRACE_UNWIND_H
#define INFERTRACE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct syms_cache;
struct unwinder;

enum unwind_status {
	UNWIND_OK = 0,          /* reached the outermost frame */
	UNWIND_TRUNCATED = 1,   /* stopped early: memory outside the copy, no rule, bad frame */
	UNWIND_TOO_DEEP = 2,    /* max frames reached */
	UNWIND_NO_MODULES = 3,  /* nothing known about the process's mappings */
};

struct unwind_stats {
	uint64_t stacks;        /* unwound */
	uint64_t truncated;     /* UNWIND_TRUNCATED */
	uint64_t too_deep;
	uint64_t no_modules;
	uint64_t rebuilds;      /* per-process module sets (re)built after a mapping change */
	uint64_t total_ns;      /* time spent unwinding */
	uint64_t max_ns;
	uint64_t cpu_ns;        /* CPU time of it (thread clock), module set-up included */
	uint64_t rebuild_ns;    /* CPU time reporting modules (rebuilds) */
	uint64_t modules;       /* modules reported, over all (re)builds */
	uint64_t passes;        /* walks repeated after adding a module */
};

struct unwinder *unwinder__new(struct syms_cache *syms);
void unwinder__free(struct unwinder *u); /* accepts NULL */

/* Unwinds one sample of thread tid of process pid. regs are in DWARF
 * numbering (see struct it_ustack_event), stack holds size bytes copied from
 * address sp. Fills ips (leaf first: the sampled pc, then return addresses)
 * and *n; returns an enum unwind_status. */
int unwinder__unwind(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs, int nregs,
		     uint64_t sp, const void *stack, size_t size, uint64_t *ips, int max, int *n);
/* The stack words an unwinding read, as byte offsets from sp, in the order
 * first read: with the registers it started from, all the unwinding
 * depended on. At most max; overflow is set when there were more. */
struct unwind_reads {
	uint32_t *off;
	int max, n;
	bool overflow;
	int status; /* the unwinding's enum unwind_status */
	bool fp_used; /* the frames change with the frame pointer register */
};
/* unwinder__unwind, recording the words read into *reads (reads->n 0
 * first), then keeping those the frames depend on: each is changed in a
 * copy and the stack unwound again (likewise the frame pointer register,
 * reads->fp_used). Only for stacks unwound with modules (UNWIND_OK or
 * UNWIND_TRUNCATED). */
int unwinder__unwind_reads(struct unwinder *u, pid_t pid, pid_t tid, const uint64_t *regs, int nregs,
			   uint64_t sp, const void *stack, size_t size, uint64_t *ips, int max, int *n,
			   struct unwind_reads *reads);
/* Drops the process's modules (it exited). */
void unwinder__forget(struct unwinder *u, pid_t pid);
const struct unwind_stats *unwinder__stats(const struct unwinder *u);

#endif
