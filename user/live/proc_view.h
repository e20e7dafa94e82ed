// SPDX-License-Identifier: BSD-2-Clause
/* `top` before the BPF programs are attached: loading and verifying them
 * takes seconds, and until they run the view shows what the tracer reads
 * from /proc itself: the machine's CPUs, load and memory, the tracer's own
 * CPU and RSS, and for targets already running (-p) each one's RSS and CPU
 * time and its threads' CPU.
 * Every figure shown was read; a share over time needs two reads. */
#ifndef INFERTRACE_PROC_VIEW_H
#define INFERTRACE_PROC_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vec.h"

struct proc_thread {
	pid_t pid, tid;
	char comm[16];
	unsigned long long ticks; /* utime + stime */
};

struct proc_target {
	pid_t pid;
	char comm[16];
	bool gone;                /* not readable (exited) */
	long rss_kb;              /* -1: not read */
	unsigned long long ticks; /* the process's, exited threads included */
};

/* One read of /proc. */
struct proc_sample {
	uint64_t ns;              /* CLOCK_MONOTONIC */
	int ncpus;                /* online; 0: not read */
	bool have_cpu;
	unsigned long long cpu_busy, cpu_total; /* /proc/stat's ticks */
	double load1;             /* NAN: not read */
	long mem_total_kb, mem_avail_kb; /* -1: not read */
	struct proc_target self;  /* the tracer itself, loading */
	VEC_OF(struct proc_target) targets;
	VEC_OF(struct proc_thread) threads;
};

struct proc_view {
	long clk_tck;
	/* the running targets (-p); the launched command's name when it is
	 * held at its start instead (NULL with -p) */
	const pid_t *pids;
	int npids;
	const char *held_command;
	struct proc_sample prev, cur; /* cur.ns 0: none yet */
};

/* pids (npids) stay the caller's while v is used. */
void proc_view__init(struct proc_view *v, const pid_t *pids, int npids, const char *held_command);
/* Reads /proc now: the current sample becomes the previous. 0 or -ENOMEM
 * (what cannot be read is left out of the sample). */
int proc_view__read(struct proc_view *v, uint64_t now_ns);
/* Adds s as the newest sample, taking its tables (its threads sorted by
 * id): for tests, and proc_view__read's last step. */
void proc_view__push(struct proc_view *v, struct proc_sample *s);
/* The view's lines: loading_s is how long the tracer has run. At most
 * nlines, each cut at width columns; returns the number of lines. */
int proc_view__format(const struct proc_view *v, double loading_s, char lines[][256], int nlines, int width);
void proc_view__free(struct proc_view *v);

#endif
