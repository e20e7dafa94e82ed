// SPDX-License-Identifier: BSD-2-Clause
/* Pure logic of the scheduler and memory concerns, unit-tested without BPF:
 * log2 histogram percentiles, what a blocked kernel stack waited for, the
 * wall-time decomposition, least-squares slopes and bounded timelines. */
#ifndef INFERTRACE_SCHED_LOGIC_H
#define INFERTRACE_SCHED_LOGIC_H

#include <stddef.h>
#include <stdint.h>

/* Value at quantile q (0..1) of a log2 histogram whose slot i holds values in
 * [2^i, 2^(i+1)) (slot 0: [0, 2)), interpolated linearly inside the slot.
 * 0 when the histogram is empty. */
double hist_quantile(const uint64_t *slots, int nslots, double q);

enum blocked_class {
	BLOCKED_SLEEP = 0, /* nanosleep, timers, pause */
	BLOCKED_IO = 1,    /* block I/O, page cache waits, pipes, sockets, poll */
	BLOCKED_LOCK = 2,  /* futex, kernel mutexes and semaphores */
	BLOCKED_OTHER = 3, /* anything else, or no kernel stack */
	BLOCKED_GPU = 4,   /* inside the gpu_sync phase: the host waits on the GPU */
	BLOCKED_NCLASSES
};

extern const char *const blocked_class_names[BLOCKED_NCLASSES];

/* Classifies a blocked kernel stack, frames leaf first (as BPF gives them).
 * The innermost recognised frame decides. */
enum blocked_class blocked_classify(const char *const *frames, int n);

/* wall = oncpu + runq + blocked + unattributed: the parts that were seen,
 * and what is left (negative when the seen parts exceed the wall). */
struct wall_split {
	double wall_ms, oncpu_ms, runq_ms, blocked_ms;
	double unattributed_ms;
	double unattributed_percent; /* |unattributed| / wall * 100 */
};

void wall_split(struct wall_split *w, uint64_t wall_ns, uint64_t oncpu_ns, uint64_t runq_ns,
		uint64_t blocked_ns);

/* Least-squares slope of y over x = 0..n-1; 0 with fewer than 2 points. */
double slope_per_index(const double *y, size_t n);

/* Reduces (t, v) points in place to at most max points, keeping each
 * bucket's highest v (peaks survive); returns the new count. */
size_t timeline_reduce(uint64_t *t, double *v, size_t n, size_t max);

#endif
