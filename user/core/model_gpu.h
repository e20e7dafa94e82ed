// SPDX-License-Identifier: BSD-2-Clause
/* GPU time in the model: the kernels, copies and memsets a CUPTI injection
 * library reported (include/gpu_channel.h), on the tracer's clock, each
 * joined to the cycle and phase of the thread that launched it; and the
 * figures derived from them per device over each cycle, each phase and the
 * run. Without CUPTI, NVML's utilization samples give the busy figure alone
 * (source "nvml"). Filled by the gpu concern (collect) and
 * analysis/gpu_join.c (derive); read by the outputs and the rules.
 * A part of model.h (which includes folded.h first): include model.h. */
#ifndef INFERTRACE_MODEL_GPU_H
#define INFERTRACE_MODEL_GPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu_channel.h"
#include "vec.h"

enum model_gpu_what {
	MODEL_GPU_KERNEL,
	MODEL_GPU_COPY,
	MODEL_GPU_SET,
};

/* One kernel, copy or memset as the GPU ran it. */
struct model_gpu_op {
	uint8_t what;               /* enum model_gpu_what */
	uint8_t dir;                /* copies: enum it_gpu_copy_dir */
	uint32_t device, stream, correlation;
	uint64_t start_ns, end_ns;  /* tracer clock (CLOCK_MONOTONIC) */
	uint64_t bytes;             /* copies and memsets */
	int32_t name;               /* kernels: demangled name in model.names; -1 */
	pid_t tgid, tid;            /* the launching thread; tid 0: no API record matched */
	uint64_t launch_ns;         /* the launch call's entry, tracer clock; 0 unknown */
	uint32_t launch_cbid;       /* CUPTI's id of the launching call */
	int32_t cycle;              /* index in model.cycles at launch; -1 outside them */
	uint32_t phase;             /* the launching thread's phase at launch; 0 none */
	int32_t launch_stack;       /* folded launch stack in model.names; -1 none */
	/* as received, before the join maps them (analysis/gpu_join.c) */
	uint64_t cupti_start_ns, cupti_end_ns; /* CUPTI clock */
	int32_t mangled;            /* kernels: the name CUPTI gave, in model.names; -1 */
};

struct model_gpu_kernel_total {
	int32_t name;               /* model.names */
	uint64_t count;
	double ms;                  /* summed durations */
};

struct model_gpu_dir_total {
	uint64_t count, bytes;
	double ms;                  /* summed durations */
};

/* A host stack that ran on the launching thread while the GPU sat idle. */
struct model_gpu_idle_stack {
	int32_t stack;              /* folded stack in model.names */
	uint64_t samples;
	double ms;                  /* samples × the sampling period */
};

/* One device over one window: a cycle, a phase (its calls) or the run. */
struct model_gpu_figures {
	uint32_t device;
	uint32_t phase;             /* 0: the whole window (cycle or run) */
	double window_ms;           /* wall of the window (phase: its calls' time) */
	double busy_ms;             /* union of the kernels launched in the window */
	double active_ms;           /* union of all GPU work inside the window */
	double idle_ms;             /* window_ms - active_ms */
	double idle_host_ms;        /* idle while the launching thread ran on a CPU */
	double sync_ms;             /* launching thread waiting in synchronize calls */
	uint64_t kernels;
	struct model_gpu_dir_total copies[IT_GPU_DIR_MAX];
	struct model_gpu_dir_total sets;
	VEC_OF(struct model_gpu_kernel_total) top;       /* by ms, descending, at most 10 */
	VEC_OF(struct model_gpu_idle_stack) idle_stacks; /* by samples, at most 5 */
	double covered_ms;          /* nvml: the part of the window its samples cover */
};

/* A cycle's GPU figures: per (device, phase). */
struct model_gpu_cycle {
	bool present;
	bool sampled;               /* activity recorded for this cycle (1 in N mode) */
	bool nvml_only;             /* busy_ms from NVML samples alone */
	VEC_OF(struct model_gpu_figures) figures;
};

struct model_gpu_clock {
	bool calibrated;
	double offset_ns;           /* tracer clock − CUPTI clock at the first pair */
	double drift_us;            /* change of that offset from first to last pair */
	double drift_ppm;
	uint64_t pairs;
};

struct model_gpu_process {
	pid_t pid;
	uint32_t cupti_version;
	char cupti_path[256];
	bool said_bye;              /* flushed at exit: nothing lost at the end */
};

/* A calibration pair of one process (CUPTI clock, CLOCK_MONOTONIC). */
struct model_gpu_calib {
	pid_t pid;
	uint64_t cupti_ns, mono_ns;
};

/* A sampling window of one process: its activity on from start_ns to
 * end_ns (tracer clock; end 0: still on at the end). */
struct model_gpu_window {
	pid_t pid;
	uint64_t start_ns, end_ns;
	uint32_t every;             /* the N in effect: this window, then N-1 off */
};

/* A runtime or driver call of a launching thread, CUPTI clock. */
struct model_gpu_api {
	pid_t pid, tid;
	uint32_t correlation, cbid, domain;
	uint64_t start_ns, end_ns;
};

/* A kernel or graph launch by a thread running Python (--preset cuda's
 * uprobe at the launch call's entry): the Python stack that launched it. */
struct model_gpu_launch {
	pid_t tgid, tid;
	uint64_t ts_ns;             /* the call's entry, tracer clock */
	int32_t stack;              /* folded launch stack (Python or native) in model.names, root first */
};

struct model_gpu_activity {
	bool present;               /* records or a notice arrived */
	const char *source;         /* "cupti", "nvml", or NULL: none */
	char notice[240];           /* why kernel timing is off, one line; "" none */
	uint32_t sample_every;      /* the largest N a window used; 1: activity always on */
	char sample_mode[8];        /* --cupti: "auto", "full" or N; "": not said */
	VEC_OF(struct model_gpu_window) windows;    /* none: always on (full) */
	bool sampling;              /* a window closed: cycles outside them not recorded */
	uint64_t cycles_recorded;   /* cycles inside a window (derive) */
	uint64_t nwindows;          /* windows opened (derive; kept when windows are not) */
	double recorded_ms;         /* the windows' time inside the run */
	VEC_OF(struct model_gpu_process) processes;
	struct model_gpu_clock clock;
	uint64_t kernels, copies, sets, api_records;
	uint64_t unattributed;      /* ops with no matching launch record */
	uint64_t dropped;           /* records CUPTI dropped */
	VEC_OF(struct model_gpu_op) ops;            /* sorted by (device, start_ns) */
	VEC_OF(struct model_gpu_figures) figures;   /* the run: per (device, phase) */
	struct folded folded;       /* gpu.folded: kernel µs under launch stacks */
	/* the join's inputs, as the channel received them (gpu concern) */
	VEC_OF(struct model_gpu_calib) calib;
	VEC_OF(struct model_gpu_api) api;
	VEC_OF(struct model_gpu_launch) launches;   /* cuda concern: by (tgid, tid, ts_ns) */
	uint64_t channel_errors;    /* connections dropped for a malformed record */
	uint64_t dropped_budget;    /* records not kept: --max-memory reached */
};

/* What a cycle's and the activity's vectors own (core/model_gpu.c). */
void model_gpu__cycle_free(struct model_gpu_cycle *c);
/* *dst = *src with its own vectors; 0 or -ENOMEM (dst then owns nothing). */
int model_gpu__cycle_copy(struct model_gpu_cycle *dst, const struct model_gpu_cycle *src);
void model_gpu__figures_free(struct model_gpu_figures *f);
int model_gpu__figures_copy(struct model_gpu_figures *dst, const struct model_gpu_figures *src);
void model_gpu__activity_free(struct model_gpu_activity *a);
int model_gpu__activity_copy(struct model_gpu_activity *dst, const struct model_gpu_activity *src);
/* The derived parts emptied (figures, folded), ready to be joined again. */
void model_gpu__activity_clear_derived(struct model_gpu_activity *a);

#endif
