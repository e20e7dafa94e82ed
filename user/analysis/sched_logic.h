// SPDX-License-Identifier: BSD-2-Clause
/* Pure logic of the scheduler and memory concerns, unit-tested without BPF:
 * what a blocked kernel stack waited for, the wall-time decomposition and
 * bounded timelines. Percentiles and slopes are in stats.h. */
#ifndef INFERTRACE_SCHED_LOGIC_H
#define INFERTRACE_SCHED_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum blocked_class {
	BLOCKED_SLEEP = 0, /* nanosleep, timers, pause */
	BLOCKED_IO = 1,    /* block I/O, page cache waits, pipes, sockets, poll */
	BLOCKED_LOCK = 2,  /* futex, kernel mutexes and semaphores */
	BLOCKED_OTHER = 3, /* anything else, or no kernel stack */
	BLOCKED_GPU = 4,   /* inside the gpu_sync phase: the host waits on the GPU */
	BLOCKED_THREAD = 5, /* woken by another thread of its process: waiting for it */
	BLOCKED_NCLASSES
};

extern const char *const blocked_class_names[BLOCKED_NCLASSES];

/* Classifies a blocked kernel stack, frames leaf first (as BPF gives them).
 * The innermost recognised frame decides. */
enum blocked_class blocked_classify(const char *const *frames, int n);

/* Whether a waker's kernel stack at a wake-up (frames leaf first) is an
 * interrupt's (a timer's expiry, a device's completion): it then wakes on
 * behalf of no thread, whichever thread it interrupted. */
bool blocked_waker_is_interrupt(const char *const *frames, int n);

/* wall = oncpu + runq + blocked + unattributed: the parts that were seen,
 * and what is left (negative when the seen parts exceed the wall). */
struct wall_split {
	double wall_ms, oncpu_ms, runq_ms, blocked_ms;
	double unattributed_ms;
	double unattributed_percent; /* |unattributed| / wall * 100 */
};

void wall_split(struct wall_split *w, uint64_t wall_ns, uint64_t oncpu_ns, uint64_t runq_ns,
		uint64_t blocked_ns);

/* Reduces (t, v) points in place to at most max points, keeping each
 * bucket's highest v (peaks survive); returns the new count. */
size_t timeline_reduce(uint64_t *t, double *v, size_t n, size_t max);

#endif
