// SPDX-License-Identifier: BSD-2-Clause
/* The scheduler's figures in the model: the split of a wall interval,
 * profile.json's `sched` (the run, each process, each phase) and `offcpu`
 * (blocked time, its stacks, who ended it). Filled by the sched concern
 * (collect); written and loaded by outputs/profile_sched.c; the rules read
 * the run's figures. A part of model.h (which includes sched_logic.h, the
 * blocked reasons, first): include model.h. */
#ifndef INFERTRACE_MODEL_SCHED_H
#define INFERTRACE_MODEL_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "infertrace.h"
#include "vec.h"

/* A wall interval split by the scheduler: on-CPU, waiting for a CPU, blocked
 * (by reason), and what no accounting covered. */
struct model_split {
	bool present;
	double oncpu_ms, runq_ms, offcpu_ms;
	double runq_others_ms; /* the part of runq_ms waited behind other processes */
	double blocked_ms[BLOCKED_NCLASSES];
	bool has_wall; /* unattributed_* computed against a wall time */
	double unattributed_ms, unattributed_percent;
};

/* Run-queue waits: a log2 histogram (slot i holds [2^i, 2^(i+1)) µs, slot
 * 0 from 0) and its percentiles. */
struct model_runq {
	uint64_t waits;        /* not counted per phase */
	uint64_t hist_us[IT_HIST_SLOTS];
	double p50_us, p95_us, p99_us;
};

/* One process over the recording, all its threads. */
struct model_sched_proc {
	pid_t pid;
	char comm[IT_COMM_LEN];
	double wall_ms, oncpu_ms, runq_wait_ms, runq_wait_others_ms, offcpu_ms;
	double blocked_ms[BLOCKED_NCLASSES];
	double runq_share_percent;
	uint64_t nvcsw, nivcsw;
	struct model_split main_thread; /* against the process's wall time */
	struct model_runq runq;
};

/* One phase over the recording (no wall time to split against). */
struct model_sched_phase {
	bool present;
	struct model_split split;
	struct model_runq runq;
};

/* profile.json's sched; the rules read the run's figures. */
struct model_sched_figures {
	bool present;              /* the concern ran: the section has its keys */
	bool available;            /* every tracepoint it needs was there */
	char missing_tracepoints[256];
	bool has_totals;           /* the maps were read: the figures below (a profile
				    * written by hand may give some of them only) */
	struct {
		uint64_t threads_not_tracked, updates, offcpu_kernel_stacks, offcpu_user_stacks;
	} lost;
	uint64_t unseen_in, unseen_out; /* switches recovered from the kernel's own counters */
	/* time whose phase edge no probe saw (concerns/sched_edges.c) */
	struct {
		double ms, oncpu_ms, runq_wait_ms, offcpu_ms;
		uint64_t intervals;
	} unattributed;
	int cpus;
	uint64_t nvcsw, nivcsw;
	double runq_share_percent, avg_runnable_threads, runq_wait_ms, oncpu_ms, offcpu_ms;
	double runq_wait_others_ms; /* the part of runq_wait_ms waited behind other processes */
	struct model_runq runq;
	VEC_OF(struct model_sched_proc) per_process;
	struct model_sched_phase per_phase[IT_MAX_PHASES];
	double max_cycle_unattributed_percent;
	/* not in the section: the faults memory shows, start-up for edges.c */
	bool has_faults;          /* page faults travel with on-CPU time */
	bool has_startup;         /* the threads' time while no cycle was open yet */
	double startup_oncpu_ms, startup_runq_ms;
	uint64_t minflt, majflt;
};

/* A folded stack's share of a total. */
struct model_top_stack {
	int32_t stack;             /* in model.names; -1 none */
	double ms, percent;
};

/* the heaviest stacks, heaviest first (a VEC_OF of a name both users share) */
struct model_top_stacks {
	struct model_top_stack *v;
	size_t n, cap;
};

/* --call-graph dwarf's off-CPU user stacks: what was copied and weighed. */
struct model_offcpu_dwarf {
	uint64_t records, bad_records, sent, lost, copy_failed;
	double dropped_ms;
	uint64_t sample_us, candidates, reused, reuse_missed;
	double sampled_ms, unweighed_ms, short_exited_ms;
};

/* profile.json's offcpu: blocked time, its stacks and their quality, and
 * the time spent waiting for another thread with the wakers' stacks. */
struct model_offcpu_figures {
	bool present;
	double total_ms, in_stacks_ms;
	uint64_t min_block_us;
	double blocked_ms[BLOCKED_NCLASSES];
	struct model_top_stacks top_stacks;
	struct {
		char method[160];
		double blocked_in_stacks_ms, complete_ms, complete_percent, user_stack_missing_ms;
		bool has_dwarf;
		struct model_offcpu_dwarf dwarf;
	} stack_quality;
	struct {
		double total_ms;
		double by_waker_phase_ms[IT_MAX_PHASES]; /* NAN: none (left out) */
		double outside_phases_ms, in_stacks_ms;
		struct model_top_stacks top_stacks;
	} waiting;
};

#endif
