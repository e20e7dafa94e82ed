// SPDX-License-Identifier: BSD-2-Clause
/* The state of one `record` run, shared by the concerns that make it up
 * (sampling, probes and cycles, scheduler and memory, side data, rules,
 * outputs). Each concern plugs into the run through `struct concern`. */
#ifndef INFERTRACE_RECORDING_H
#define INFERTRACE_RECORDING_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "model.h"
#include "options.h"
#include "processes.h"
#include "target.h"
#include "tracer.h"

struct syms_cache;
struct ksyms;
struct unwinder;
struct probes;
struct sched_state;
struct side_state;
struct sampling_state;
struct mem_state;
struct net_state;
struct cuda_state;
struct gpu_state;
struct crash_state;
struct overhead_state;
struct jsphase_state;
struct live_state;
struct py_state;
struct rotation;
struct spool;

#define RECORDING_CHILD_ENV_MAX 8

/* Adds "NAME=VALUE" (kept, not copied) to the launched command's environment. 0 or -ENOSPC. */
struct recording;
int recording__add_child_env(struct recording *rec, char *name_value);

struct recording {
	struct record_opts opts;
	struct tracer tracer;
	struct syms_cache *syms;
	struct ksyms *ksyms;
	/* --call-graph dwarf: unwinds the user stacks BPF copies (samples,
	 * blocking system calls); NULL otherwise */
	struct unwinder *unwinder;
	struct launched cmd;
	bool launched;
	/* "NAME=VALUE" added to the launched command's environment, set by
	 * the concerns' configure (before the fork); NULL-terminated, owned by
	 * the concern that set each */
	char *child_env[RECORDING_CHILD_ENV_MAX + 1];
	/* times BPF stopped a target until its new code was handled, and for
	 * how long (the record's kernel time to the SIGCONT), in all and at most */
	uint64_t target_stops;
	uint64_t target_stopped_ns, target_stop_max_ns;
	struct process_table procs;
	double start_wall_s;
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC, as bpf_ktime_get_ns */
	double build_cpu_s;        /* this process's CPU when the last model build began */
	const char *stop_reason;
	const char *stop_request;  /* set by a concern (top's `q`): ends the run */
	int late_exit;             /* recording__fail_late; 0: none */
	/* phase and count ids (1..IT_MAX_PHASES-1) → names; NULL when unused */
	const char *phase_names[IT_MAX_PHASES];
	const char *count_names[IT_MAX_PHASES];
	/* the live model: run facts and what arrives as events; the figures
	 * kept in BPF maps join it at collect time (recording__build) */
	struct model model;
	/* per-concern state: each concern allocates its own in configure (or
	 * attach) and frees it in cleanup; no concern keeps state in statics */
	struct probes *probes;
	struct sched_state *sched;
	struct side_state *side;
	struct sampling_state *sampling;
	struct mem_state *memory;
	struct net_state *network;
	struct cuda_state *cuda;
	struct gpu_state *gpu;
	struct crash_state *crash;
	struct overhead_state *overhead;
	struct self_cost_state *self_cost;
	struct jsphase_state *jsphase;
	struct live_state *live;
	struct py_state *python;
	struct rotation *rotation; /* --rotate; NULL without */
	/* finished cycles, phase calls and trace events, on disk (spool.h) */
	struct spool *spool;
	/* --max-memory (memory_budget.c): full while the RSS is over it */
	struct {
		bool full;
		uint64_t first_reached_ns, peak_rss;
		unsigned int times_reached;
	} budget;
};

/* Whether a concern may keep more detail (cycles, calls, trace events,
 * timeline points, process maps): false while --max-memory is reached.
 * What is not kept is counted in lost. */
static inline bool recording__may_hold(const struct recording *rec)
{
	return !rec->budget.full;
}

/* A concern's stop found the run failed (an exit_codes.h status): the
 * outputs are still written; the lowest status asked for is the exit's. */
static inline void recording__fail_late(struct recording *rec, int status)
{
	if (!rec->late_exit || status < rec->late_exit)
		rec->late_exit = status;
}

/* One concern of a recording. Every hook is optional. */
struct concern {
	const char *name;
	/* after the skeleton is opened, before load: autoload choices, rodata,
	 * map sizes; also validates its options (a one-line error, non-zero) */
	int (*configure)(struct recording *rec);
	/* after load, targets known, before the command is released */
	int (*attach)(struct recording *rec);
	/* every ring-buffer record is delivered to every concern that has this
	 * hook (after the tracer's own process tracking); each acts on the
	 * types it knows. Events that make the model are added to rec->model. */
	void (*on_event)(struct recording *rec, const void *data, size_t size);
	/* about every 100 ms in the run loop */
	void (*tick)(struct recording *rec);
	/* model MODEL_EMPTY -> MODEL_SPANS: the cycles, their phases and counts
	 * (the probes concern: cycle and phase attribution) */
	int (*spans)(struct recording *rec, struct model *m);
	/* at MODEL_SPANS: this concern's figures, keyed by cycle, and its
	 * sections. Reads its own state and maps only, never changes them:
	 * it runs for every snapshot as well as at the end. */
	int (*collect)(struct recording *rec, struct model *m);
	/* the recording ended: stop what runs on its own (sampler threads) */
	void (*stop)(struct recording *rec);
	void (*cleanup)(struct recording *rec);
};

uint64_t recording__now_ns(void);
/* A model of the recording so far, at MODEL_ANALYSED: a copy of the live
 * model, joined with what every concern collects now, derived and
 * analysed. The recording goes on untouched. 0 or -errno. */
int recording__build(struct recording *rec, struct model *out, bool final);

#endif
