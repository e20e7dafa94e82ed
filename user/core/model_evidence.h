// SPDX-License-Identifier: BSD-2-Clause
/* The evidence of a finding or a recommendation: the figures a rule
 * (analysis/rules.c) based it on. One struct for every kind of finding:
 * each field is optional and written only when set, so each rule fills
 * the few it has. Written and loaded by outputs/profile_evidence.c, whose
 * table takes each scalar's key from MODEL_EVIDENCE_SCALARS. A part of
 * model.h (which gives it BLOCKED_NCLASSES): include model.h. */
#ifndef INFERTRACE_MODEL_EVIDENCE_H
#define INFERTRACE_MODEL_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "infertrace.h"
#include "throttle.h"
#include "vec.h"

/* The scalar figures, each named as its key: R a double (NAN: left
 * out), I an int64_t (below 0: left out), N a string in model.names (-1:
 * left out). */
#define MODEL_EVIDENCE_SCALARS(R, I, N)                                                                  \
	N(phase) R(percent_of_cycle) R(threshold_percent) R(total_ms)                                   \
	R(sqlite_percent_of_samples) R(sqlite_blocked_ms) R(sqlite_calls_per_cycle) R(fsyncs_per_cycle) \
	R(fsync_ms_per_cycle) R(io_ms_per_cycle) R(phase_ms_per_cycle) R(scan_percent_of_samples)       \
	R(oncpu_percent_of_phase) R(p50_ms) R(p95_ms) R(string_percent_of_samples) I(samples)           \
	R(n_ctx) I(max_tokens_per_cycle) N(file_type) R(bits_per_weight) R(n_params) R(size_bytes)      \
	R(inference_percent_of_cycle) R(mem_total_mb) I(oom_kills) R(growth_mb_per_cycle) R(cycles)     \
	R(threshold_mb_per_cycle) R(spin_percent_of_samples) I(n_threads_used) I(n_threads)             \
	R(runq_share_percent) R(avg_runnable_threads) R(runq_wait_ms) N(scope)                          \
	R(offcpu_percent_of_phase) R(offcpu_ms) R(io_ms) N(blocked_from) R(offcpu_percent_of_cycle)     \
	R(io_percent_of_cycle) R(fsync_ms) R(max_temp_c) R(gpu_util_avg_pct) N(from) I(device)          \
	N(window) R(window_ms) R(busy_ms) R(idle_ms) R(kernels_per_cycle) R(busy_percent)               \
	R(idle_host_ms) R(idle_host_percent) R(copy_ms) R(copy_percent) R(sync_ms) R(sync_percent)      \
	R(syncs_per_cycle) R(capped_ms) R(capped_percent)

#define MODEL_EV_REAL(name) double name;
#define MODEL_EV_INT(name) int64_t name;
#define MODEL_EV_NAME(name) int32_t name;

/* A function, or a stack, with its share (top_functions, top_stacks,
 * top_idle_stack). */
struct model_ev_share {
	int32_t name;   /* in model.names */
	double ms;      /* NAN: not shown */
	double percent; /* NAN: not shown */
};

/* The kernel with most time (top_kernel). */
struct model_ev_kernel {
	int32_t name; /* in model.names */
	int64_t count;
	double ms;
};

/* The copies of one direction (copies). */
struct model_ev_copy {
	uint64_t count, bytes;
	double ms;
};

/* How many a rule lists (a profile loaded may hold more). */
#define MODEL_EV_TOP_FUNCTIONS 5
#define MODEL_EV_TOP_STACKS 3

struct model_evidence {
	bool present; /* a recommendation's: it has evidence */
	MODEL_EVIDENCE_SCALARS(MODEL_EV_REAL, MODEL_EV_INT, MODEL_EV_NAME)
	/* memory_pressure: both written, null when unknown */
	bool has_memory;
	double peak_mb, percent_of_ram;
	/* an integer where the rule counted CPUs (cpu_oversubscribed), a real
	 * where it took the scheduler's figure (cpu_contention); NAN: none */
	double cpus;
	bool cpus_integer;
	bool gpu_available; /* written only when true */
	bool has_top_functions, has_top_stacks, has_top_kernel, has_top_idle_stack;
	VEC_OF(struct model_ev_share) top_functions;
	VEC_OF(struct model_ev_share) top_stacks;
	struct model_ev_share top_idle_stack;
	struct model_ev_kernel top_kernel;
	/* off_cpu, io_wait: blocked time by class, those above 0 written */
	bool has_blocked_ms;
	double blocked_ms[BLOCKED_NCLASSES];
	/* transfer_bound: copies by direction, those with a count written */
	bool has_copies;
	struct model_ev_copy copies[IT_GPU_DIR_MAX];
	/* thermal_throttling's or power_capped's (capped: no temperature) */
	bool has_episodes, episodes_capped;
	VEC_OF(struct throttle_episode) episodes;
};

/* No figure: present false, every field left out. */
void model_evidence__init(struct model_evidence *e);
/* Frees what e owns (its lists); e is then empty (init). */
void model_evidence__free(struct model_evidence *e);
/* dst (owning nothing) a copy of src. 0 or -ENOMEM (dst then empty). */
int model_evidence__copy(struct model_evidence *dst, const struct model_evidence *src);

#endif
