// SPDX-License-Identifier: BSD-2-Clause
/* The recording model: everything a recording learned, typed and in memory.
 *
 * One owner per part:
 *   run, processes ............ the recording (record.c) and `report` loading
 *   cycles (spans, phases, counts) ... the probes concern: cycle and phase
 *                               attribution, the tracer's shared service
 *   cycle and phase splits .... sched          samples per cycle ... sampling
 *   cycle memory .............. memory         cycle side data .... side
 *   stacks .................... sampling (on-CPU), sched (off-CPU)
 *   side, energy, samples, memory, probes, llama facts, self, sched,
 *   offcpu, network, crashes, cuda ... their concern, as typed structs
 *   lost ...................... every concern adds its own counters
 *   derived figures ........... model__derive (analysis/derive.c)
 *   findings .................. rules__evaluate (analysis/rules.c)
 *
 * Order is carried by the data, in stages: concerns fill the cycle spans
 * (MODEL_SPANS), then their figures keyed by cycle (MODEL_COLLECTED); derived
 * figures are computed from that (MODEL_DERIVED), findings from those
 * (MODEL_ANALYSED), and only then may a writer run. Each step checks the
 * stage it needs and refuses (-EINVAL) a model that is not ready, so a wrong
 * order fails loudly, in tests too.
 *
 * Writers (profile.json, folded files, trace.json, SVG, HTML) read only the
 * model; `report` and `diff` load profile.json back into it
 * (model__from_json). profile.json's keys are named once, in the tables of
 * outputs/profile_*.c that both write and load them. A snapshot (model__snapshot) is a deep copy taken at
 * any moment while recording, for the live view, /metrics and checkpoints. */
#ifndef INFERTRACE_MODEL_H
#define INFERTRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include <linux/types.h>

#include "infertrace.h"
#include "folded.h"
#include "rules.h"
#include "sched_logic.h"
#include "power_mode.h"
#include "side_summary.h"
#include "vec.h"
#include "model_gpu.h"
#include "model_sched.h"
#include "model_network.h"
#include "model_cuda.h"
#include "model_requests.h"
#include "model_evidence.h"

enum model_stage {
	MODEL_EMPTY = 0,     /* run facts only */
	MODEL_SPANS = 1,     /* cycle spans, phases and counts are final */
	MODEL_COLLECTED = 2, /* every concern filled its figures */
	MODEL_DERIVED = 3,   /* aggregates, phase summaries, growth */
	MODEL_ANALYSED = 4,  /* findings: ready for the writers */
};

/* Joules by domain, NAN where nothing measures it (energy.h's domains). */
enum model_energy_domain { MODEL_EN_CPU = 0, MODEL_EN_DRAM, MODEL_EN_GPU, MODEL_EN_BOARD, MODEL_EN_NDOMAINS };
extern const char *const model_energy_keys[MODEL_EN_NDOMAINS]; /* "cpu_j", "dram_j", "gpu_j", "board_j" */

struct model_energy {
	bool present;
	double j[MODEL_EN_NDOMAINS];
	double total_j;           /* board_j when measured, else the sum of cpu, dram and gpu */
	double tokens_per_joule;  /* NAN without a tokens count */
};

struct model_cycle_phase {
	bool present;   /* the phase ran in this cycle (calls > 0) */
	double ms;      /* union over the process's threads */
	double thread_ms;
	uint64_t calls;
	bool observed;  /* a `py:` phase: timed from Python stack observations, no kernel split */
	struct model_split split;
};

/* llama.cpp's figures of one cycle (or of all cycles), derived from the
 * llm_prompt / llm_generate phases and the batches' token counts. */
struct model_llama_cycle {
	bool present;
	uint64_t prompt_tokens, generated_tokens;
	uint64_t generation_batches_tokens; /* tokens decoded after the prompt */
	double prefill_ms, decode_ms;
	double prefill_tokens_per_s, decode_tokens_per_s; /* NAN: no time */
	double j_per_generated_token; /* NAN: the cycles' energy was not measured */
};

struct model_cycle {
	/* spans (probes concern) */
	pid_t pid;
	uint32_t bpf_cycle;     /* the cycle number the kernel tagged its data with */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	bool open_at_end, abandoned, ended_at_last_phase;
	bool observed;          /* a `py:` cycle: the kernel tagged nothing with it */
	struct model_cycle_phase phases[IT_MAX_PHASES];
	bool has_count[IT_MAX_PHASES];
	uint64_t counts[IT_MAX_PHASES];
	/* collected by other concerns, keyed by (pid, bpf_cycle) */
	uint64_t samples;
	struct model_split split;      /* the main thread, against the cycle's wall */
	bool has_all_threads;
	double all_oncpu_ms, all_runq_ms, all_offcpu_ms;
	double all_runq_others_ms; /* the part of all_runq_ms waited behind other processes */
	uint64_t minflt, majflt, nvcsw, nivcsw;
	bool has_rss;
	double rss_peak_mb, rss_end_mb;
	struct model_net_cycle network; /* network: the cycle's TCP bytes */
	struct model_cuda_totals cuda;  /* cuda: the cycle's CUDA calls */
	struct side_window side;       /* side: the sampler's averages over the cycle */
	struct side_cycle_power kernel_power; /* side: thermal/power tracepoints in the cycle */
	struct model_energy energy;    /* side: absent below the sampling period */
	/* derived */
	uint32_t index;
	double duration_ms;
	double tokens_per_second, tokens_per_second_wall; /* NAN without tokens */
	struct model_llama_cycle llama;
	struct model_gpu_cycle gpu;    /* gpu: GPU time per device and phase */
};

struct model_phase_summary {
	bool present;
	double total_ms, thread_ms, percent_of_cycle;
	uint64_t calls;
	double p50_ms, p95_ms, p99_ms; /* NAN when never called */
	const char *percentiles_from;  /* "calls" or "histogram" */
	uint64_t hist_us[IT_HIST_SLOTS]; /* log2 histogram of call durations, µs */
	double outside_thread_ms;      /* time of the phase outside every cycle */
	uint64_t outside_calls;
	uint64_t samples;              /* on-CPU samples whose innermost phase this is */
};

struct model_aggregates {
	uint64_t total_cycles;
	const char *cycles_source;     /* "cycle", "cycle_marker", "whole_run" */
	uint64_t empty_marker_cycles_dropped;
	double avg_cycle_ms, p50_cycle_ms, p95_cycle_ms, p99_cycle_ms, max_cycle_ms;
	double avg_tokens_per_second, avg_tokens_per_second_wall;
	double peak_memory_mb;
	double cycles_ms;              /* sum of cycle durations */
};

struct model_process {
	pid_t pid, ppid;
	char comm[IT_COMM_LEN];
	bool root, exited;
	int exit_status;
	uint64_t start_ns, exit_ns;
	double cpu_s;
};

/* A process that died of a signal, an OOM kill or a non-zero exit (crash
 * concern). */
struct model_crash {
	pid_t pid;
	char comm[IT_COMM_LEN + 1];
	char role[8];              /* "target": asked for; "helper": one a target ran */
	uint64_t time_ns;
	double time_s;             /* after the recording started */
	int64_t cycle;             /* -1: no cycle was open */
	int32_t phase;             /* in model.names; -1: none */
	char cause[16];            /* "oom_kill", "signal", "exit_status" */
	int64_t signal;            /* 0: none */
	bool has_signal;           /* killed by a signal: its name, a core dump */
	char signal_name[16];
	bool core_dumped;
	bool has_exit_code;
	int exit_code;
	bool has_sender;           /* who sent the signal */
	int sender_pid, si_code;
	double rss_mb;
};

/* A thread's name as the kernel last showed it in a record of it (its
 * comm: pthread_setname_np's, the process's until it sets one). */
struct model_thread {
	pid_t pid, tid;
	char comm[IT_COMM_LEN];
};

/* A named counter of something lost or dropped; `samples` and `events` are
 * always present (the contract), others only when non-zero. */
struct model_counter {
	char *name;
	uint64_t value;
};

struct model_finding {
	char *type, *severity;
	double percentage_of_cycle; /* NAN when it does not apply */
	struct model_evidence evidence;
};

struct model_recommendation {
	char *title, *priority, *description, *current_value, *recommended_value, *bottleneck;
	struct model_evidence evidence; /* present: it has some */
};

/* The sampling concern's account of its samples (profile.json's samples). */
struct model_samples_proc {
	pid_t pid;
	char comm[IT_COMM_LEN];
	uint64_t samples;
};

struct model_leaf_object {
	char name[128];           /* the object the leaf frame is in */
	uint64_t samples, complete, truncated;
	double truncated_percent;
};

struct model_unwind {
	char method[64];
	uint64_t stack_bytes, records, copy_failed, copy_short, lost, bad_records, unwind_ended_with_error,
		unwind_too_deep, unwind_no_modules, unwind_failed, module_rebuilds, jit_leaf_callers_restored;
	double avg_frames, avg_unwind_us, max_unwind_us;
};

struct model_samples {
	bool present;
	uint64_t total;
	char event[16];
	int requested_hz, sampling_cpus;
	double target_cpu_seconds, achieved_hz; /* NAN: no CPU time */
	char call_graph[8];                     /* "fp" or "dwarf" */
	VEC_OF(struct model_samples_proc) per_process;
	struct {
		bool present;
		uint64_t samples;
		double percent;
	} by_phase[IT_MAX_PHASES];
	struct {
		uint64_t stacks, complete, user_stack_missing, distinct_stacks;
		double complete_percent;
		VEC_OF(struct model_leaf_object) by_leaf_object;
	} stack_quality;
	bool has_unwind;                        /* --call-graph dwarf */
	struct model_unwind unwind;
	uint64_t stack_collisions;
};

struct model_memory_proc {
	pid_t pid;
	char comm[IT_COMM_LEN];
	double peak_mb, last_mb;
};

struct model_memory_point {
	double t_s, rss_mb;
};

/* The memory concern's RSS figures. */
struct model_memory_figures {
	bool available;
	char source[96];            /* how RSS was read */
	double peak_mb;
	VEC_OF(struct model_memory_proc) per_process;
	VEC_OF(struct model_memory_point) timeline; /* the targets' RSS, reduced */
	uint64_t timeline_max_points;
	double growth_mb_per_cycle; /* derived; NAN: fewer than two cycles with RSS */
};

struct model_side_figures {
	struct side_summary run;   /* thermal, gpu, disk, host over the run */
	struct side_series series; /* every reading, for trace.json */
	/* the last side period or two, for the live view and /metrics (NAN: none) */
	double now_temp_c, now_cpu_mhz, now_gpu_util_pct, now_gpu_temp_c, now_gpu_mhz, now_gpu_power_w;
};

/* A phase's calls merged over threads into intervals; those of at least
 * one sampling period measured, the shorter ones counted. */
struct model_energy_phase {
	bool present;
	double j[MODEL_EN_NDOMAINS];   /* NAN: no source measured the domain */
	uint64_t intervals_measured, intervals_left_out;
	double measured_ms;
};

/* Energy over the cycles (side concern). */
struct model_energy_figures {
	bool present;                  /* a side sampler ran */
	struct model_energy cycles;    /* summed over the cycles measured */
	uint64_t cycles_measured, cycles_left_out;
	struct side_energy side;       /* sources, the run's joules, peak power, power cap */
	struct model_energy_phase phases[IT_MAX_PHASES];
};

/* One outermost phase call on one thread (for trace.json). */
struct model_phase_call {
	pid_t tgid, tid;
	uint32_t bpf_cycle, phase;
	uint64_t entry_ns, exit_ns;
};

/* What the probes cost: measured per hit at start-up (overhead concern),
 * hits counted by the probes concern, shares derived. */
struct model_probe_estimate {
	bool present;
	double hits, estimated_ms, percent;
};

/* A preset's probe: its hits' cost as a share of its phase. */
struct model_preset_probe_cost {
	int32_t spec, phase;       /* in model.names */
	double hits, estimated_ms, percent_of_phase;
	bool over_limit;           /* over a preset's 2% */
};

struct model_probe_cost {
	bool present;
	double cost_ns;            /* per hit; NAN: not measured */
	int calibration_calls;
	char error[160];           /* why it was not measured */
	double warn_percent;
	uint64_t timed_hits;       /* entry + return of cycle and phase probes */
	uint64_t point_hits;       /* markers and counts */
	/* derived: profile.json's probes_overhead */
	bool derived;
	struct model_probe_estimate phases[IT_MAX_PHASES], cycles;
	VEC_OF(struct model_preset_probe_cost) preset_probes;
	double max_percent;
	bool warning;
};

/* A probe spec as placed and hit (the probes concern; py: and js: specs
 * too). Strings are in model.names; -1: none. */
struct model_probe_python {
	uint64_t observations, edges_between_observations;
	double resolution_ms_mean, resolution_ms_max;
	bool has_edges;            /* a kernel edge: deferred and lost */
	uint64_t deferred, lost;
};

struct model_probe {
	int32_t spec;
	char role[16];             /* "cycle", "phase" ...; "" none */
	int32_t phase, count;
	VEC_OF(int32_t) placed_in; /* the files it was placed in */
	uint64_t hits;
	bool from_preset;
	int32_t not_placed;        /* why not */
	bool sampled;              /* js: observed in the samples' stacks */
	uint64_t samples;
	int32_t warning;
	bool has_callers;          /* py:@callers */
	VEC_OF(int32_t) callers;
	char timed_by[16];         /* py:@callers: "python_callers" or "native_calls" */
	int32_t native_because;    /* py:@callers: why the preset's fallback was placed */
	bool fallback;             /* a preset's fallback probe (placed only when needed) */
	bool has_python;
	struct model_probe_python python;
};

struct model_trace_sample {
	uint64_t ts_ns, ip;
	pid_t tgid, tid;
	uint32_t phase;
	int32_t frame;      /* the leaf's name in model.names; -1 until named */
	uint32_t entry;     /* the sampling concern's stack entry (ustack_table__add_id) */
	int32_t stack;      /* its folded stack (as in stacks.folded) in model.names; -1: none */
	bool jit;           /* the leaf is JIT code named by the perf map */
};

/* One blocked interval of a thread, for trace.json: a system call that
 * blocked at least --min-block-us (--call-graph dwarf's off-CPU records).
 * It ends at the call's return and lasts the time blocked. */
struct model_offcpu_interval {
	uint64_t start_ns, end_ns;
	pid_t tgid, tid;
	uint32_t phase;
	int32_t kstack_id;  /* in offcpu_stackmap; < 0: none */
	uint32_t entry;     /* the sched concern's off-CPU stack entry */
	int32_t stack;      /* its folded stack (as in offcpu.folded) in model.names; -1: none */
	uint8_t reason;     /* enum blocked_class; set by collect */
};

/* Stacks with their labels and addresses, for profile.pb.gz (pprof). A
 * frame has its address (process address; kernel address for kernel
 * frames; 0 when it has none) and its name; mapping indexes model.mappings,
 * -1 when the address is in none. */
struct model_frame {
	uint64_t addr;
	int32_t name;    /* in model.names */
	int32_t mapping;
};

struct model_lstack {
	pid_t pid, tid;       /* tid 0: not known (the thread label is left out) */
	uint32_t bpf_cycle;   /* as the kernel tagged it; has_cycle false: not known */
	bool has_cycle, kernel_only;
	uint32_t phase;
	int32_t comm;         /* in model.names */
	size_t first;         /* frames[first .. first + nframes), leaf first */
	uint32_t nframes;
	uint64_t samples;     /* on-CPU samples */
	uint64_t offcpu_ns;   /* blocked nanoseconds */
};

/* A file mapping of a traced process that a frame fell in. */
struct model_mapping {
	uint64_t start, limit, file_offset;
	int32_t path;         /* in model.names */
	char build_id[132];   /* hex; empty when unknown */
	bool kernel;
};

/* Tail-cycle forensics (analysis/tail.c): a cycle well above typical and
 * what grew in it against the median cycle. Kinds, names and stacks are
 * in model.names. */
struct model_tail_stack {
	int32_t stack;         /* frames root first */
	bool oncpu;            /* else off-CPU */
	double ms, excess_ms;
};

struct model_tail_cause {
	int32_t kind, name;    /* "phase" and its name, "blocked" and the reason ... */
	bool timed, count, mhz; /* what it measures: ms, a count, a clock */
	double excess, value, median;
	bool has_stacks;
	VEC_OF(struct model_tail_stack) stacks;
};

struct model_tail_cycle {
	uint32_t cycle;        /* cycles[].index */
	pid_t pid;
	double ms, median_ms, excess_ms;
	VEC_OF(struct model_tail_cause) causes;
};

/* Start-up (before the first cycle) or tear-down (after the last), apart
 * from the cycles and their verdicts (analysis/edges.c). */
#define MODEL_EDGE_TOP 5
struct model_edge_top {
	int32_t name;          /* the leaf function, in model.names */
	uint64_t samples;
	double percent;
};

struct model_edge {
	double ms;
	uint64_t samples;
	bool has_split;        /* start-up: its scheduler split */
	double oncpu_ms, runq_wait_ms, runq_share_percent;
	size_t ntop;
	struct model_edge_top top[MODEL_EDGE_TOP];
};

struct model_edges {
	bool present;
	struct model_edge startup, teardown;
};

/* What the tracer itself cost (self_cost concern). */
struct model_bpf_prog {
	char name[64];
	uint64_t runs;
	double run_time_ms, ns_per_run;
	uint64_t recursion_misses, verified_insns;
};

struct model_self {
	bool present;
	double cpu_s, startup_cpu_s, recording_cpu_s, percent_of_one_cpu, max_rss_mb, wakeups_per_s;
	uint64_t wakeups, involuntary_switches, target_stops;
	double target_stopped_ms, target_stop_max_ms;
	/* of recording_cpu_s, the model's build up to these figures: the
	 * concerns' collection at the end (stacks folded and named) */
	double collect_cpu_s;
	struct {
		bool available;
		char reason[256];          /* why not: the kernel refused the stats */
		double cpu_s, percent_of_one_cpu;
		uint64_t runs, recursion_misses;
		bool stats_were_on;
		VEC_OF(struct model_bpf_prog) programs; /* most run time first */
	} bpf;
	bool has_budget;
	struct {
		int max_mb;
		double reached_at_s;       /* NAN: never */
		uint64_t times_reached;
		double recording_peak_rss_mb;
	} memory_budget;
	double probe_cost_ns_per_hit;  /* as loaded; a recording's is probe_cost's */
	/* where the tracer's CPU went, by part, over the whole run (start-up
	 * included); "other" is the rest of cpu_s */
	bool has_parts;
	struct {
		double maps_s, files_s, symbol_tables_s, unwind_modules_s, unwind_s, other_s;
		uint64_t maps_reads, maps_reads_skipped, files, symbol_tables, symbols;
		uint64_t unwind_module_sets, unwind_modules;
	} parts;
	/* the symbol tables kept across runs by build-id (symcache.h) */
	bool has_symbol_cache;
	struct {
		char dir[256], refused[256]; /* "": none used, not refused */
		uint64_t tables_read, tables_written;
	} symbol_cache;
};

/* llama.cpp: the model file and the context the process showed (llama
 * concern); only what it showed, never guessed. Integers: -1 not shown. */
enum { MODEL_LLAMA_PROMPT = 0, MODEL_LLAMA_GENERATION, MODEL_LLAMA_OTHER, MODEL_LLAMA_ROWS };
#define MODEL_LLAMA_THREAD_SLOTS 64   /* counts 1..63; the last slot holds 64 and more */

struct model_llama_facts {
	bool present;
	int pid;
	bool has_model;
	struct {
		char path[256];
		char error[512];               /* why the file was not read; "" read */
		char arch[64];
		bool read;                     /* n_params and size_bytes */
		uint64_t n_params, size_bytes;
		char file_type[32];            /* its name, "" unknown */
		int64_t file_type_id;
		int64_t n_layer, n_embd, n_ctx_train;
	} model;
	bool has_context;
	struct {
		int64_t n_ctx, n_batch, n_ubatch, n_seq_max, n_threads, n_threads_batch;
		int64_t threads_used[MODEL_LLAMA_ROWS]; /* the count most graph computations were given */
		bool has_calls;                /* every count seen, with its calls */
		uint32_t calls[MODEL_LLAMA_ROWS][MODEL_LLAMA_THREAD_SLOTS];
	} context;
};

/* An alert of the rules (e.g. power above --threshold power_mw). */
struct model_alert {
	char type[32], severity[16];
	char description[256];     /* "" none */
	double value_mw, threshold_mw; /* NAN: not a power alert */
};

/* A recording without a cycle spec whose stacks show a loop: the likely
 * option (python and sampling concerns). */
struct model_suggestion {
	bool present;
	char option[16];           /* "--cycle", "--cycle-marker", "--phase" */
	char function[256];
	char text[512];
	uint64_t bursts;
	double period_ms;
};

/* What was asked that the analysis reads; run.config holds all of it, as
 * given, and record_opts__asked fills this from it. Strings are in
 * model.names; -1: not asked. */
struct model_spec {
	int32_t name, spec;        /* a phase or count, and one of its specs */
};

struct model_specs {
	struct model_spec *v;
	size_t n, cap;
};

struct model_asked {
	int frequency;             /* Hz; 0: not given */
	int32_t cycle, cycle_marker;
	VEC_OF(int32_t) presets;
	struct model_specs phases, counts;
	bool kernel_addresses;
};

/* The machine the recording ran on. */
struct model_system {
	bool present;
	char kernel[128], arch[72];   /* "" unknown */
	int cpus;
	double mem_total_mb;          /* NAN unknown */
	char hostname[256];
	/* the platform a tuned setting holds for (tune's settings.json): the
	 * CPU's model name and the board's (device tree); "" unknown */
	char cpu_model[256], machine_model[256];
	bool has_power;               /* the side concern read the power mode */
	struct power_mode power;
};

struct model_run {
	char **command;          /* NULL-terminated; NULL for -p */
	pid_t *pids;
	size_t npids;
	double start_wall_s;
	char *started_at;        /* ISO 8601, as loaded from a profile */
	uint64_t start_ns, end_ns;
	double duration_s;
	char *stop_reason;
	json_t *config;          /* what was asked */
	struct model_asked asked; /* the part of it the analysis reads */
	struct model_system system;
	char *tool_version;
	char *schema_version;
	char *output_dir;        /* NULL when loaded from a file */
};

struct model {
	enum model_stage stage;
	bool snapshot;  /* taken while recording: concerns stay quiet */
	const char *loaded_from; /* model__from_json: the file read, for its messages */
	struct model_run run;
	struct model_process *procs;
	size_t nprocs, capprocs;
	struct model_thread *threads; /* sorted by (pid, tid) */
	size_t nthreads, capthreads;
	char *phase_names[IT_MAX_PHASES]; /* id 1..IT_MAX_PHASES-1 → name; NULL unused */
	char *count_names[IT_MAX_PHASES];
	int inference_phase;              /* derived: 0 = the whole cycle */

	struct model_cycle *cycles;
	size_t ncycles, capcycles;
	/* model__find_cycle's index: cycles sorted by (pid, bpf_cycle), built
	 * again when the array moved or its count changed */
	uint32_t *cycle_index;
	size_t ncycle_index;
	const struct model_cycle *cycle_index_of;
	struct model_phase_call *calls;
	size_t ncalls, capcalls;
	/* per-phase call durations (ms) for percentiles */
	double *call_ms[IT_MAX_PHASES];
	size_t ncall_ms[IT_MAX_PHASES], capcall_ms[IT_MAX_PHASES];
	/* pre-derive phase facts from the probes concern */
	uint64_t phase_hist_us[IT_MAX_PHASES][IT_HIST_SLOTS];
	double phase_outside_thread_ms[IT_MAX_PHASES];
	uint64_t phase_outside_calls[IT_MAX_PHASES];
	uint64_t phase_samples[IT_MAX_PHASES];
	const char *cycles_source;
	uint64_t empty_marker_cycles_dropped;

	struct model_phase_summary phases[IT_MAX_PHASES]; /* derived */
	struct model_aggregates agg;                      /* derived */

	struct folded oncpu, offcpu_us;
	/* oncpu's Python view (stacks.python.folded): empty when no stack has
	 * Python frames (symbols/stacks.c) */
	struct folded oncpu_python;
	struct folded oncpu_by_phase[IT_MAX_PHASES], offcpu_us_by_phase[IT_MAX_PHASES];
	bool have_oncpu, have_offcpu;
	/* the stacks of the threads that ended another thread's block, at the
	 * wake-up, in microseconds of the blocked time they ended */
	struct folded wakeup_us;
	bool have_wakeup;
	struct model_lstack *lstacks;
	size_t nlstacks, caplstacks;
	struct model_frame *frames;
	size_t nframes, capframes;
	struct model_mapping *mappings;
	size_t nmappings, capmappings;
	struct model_trace_sample *trace_samples;
	size_t ntrace_samples, captrace_samples;
	struct model_offcpu_interval *offcpu_intervals;
	size_t noffcpu_intervals, capoffcpu_intervals;
	/* interned frame names (trace samples' leaves) */
	char **names;
	size_t nnames, capnames;
	int32_t *name_index;      /* open addressing over names, capacity name_cap */
	size_t name_cap;

	struct model_probe_cost probe_cost;
	bool have_probes;
	VEC_OF(struct model_probe) probes;
	struct model_sched_figures sched;
	struct model_offcpu_figures offcpu;
	struct model_memory_figures memory;
	struct model_samples samples;
	struct model_side_figures side;
	struct model_energy_figures energy;
	struct model_network network;
	VEC_OF(struct model_crash) crashes;

	struct model_cuda cuda;   /* gpu.cuda: the CUDA concern's totals */

	struct model_counter *lost;
	size_t nlost, caplost;
	struct model_self self;   /* the tracer's own cost */

	struct rule_thresholds thresholds; /* the rules' thresholds (config.thresholds) */
	bool have_thresholds;
	struct model_finding *findings;
	size_t nfindings, capfindings;
	struct model_recommendation *recs;
	size_t nrecs, caprecs;
	VEC_OF(struct model_alert) alerts;
	struct model_suggestion suggested_cycle;
	bool have_tail;            /* enough cycles to judge a tail */
	VEC_OF(struct model_tail_cycle) tail;
	struct model_llama_facts llama_facts; /* llama concern */
	struct model_llama_cycle llama;   /* derived: over the cycles */
	struct model_edges edges; /* derived: outside the cycles (edges.c) */
	struct model_gpu_activity gpu_activity; /* gpu concern: CUPTI records, figures */
	struct model_requests requests; /* llama concern: batches by sequence; derived: requests */
};

void model__init(struct model *m);
void model__free(struct model *m);
/* A deep copy: a consistent view that the recording goes on without. */
int model__copy(struct model *dst, const struct model *src);

/* The stage check every step makes; prints the culprit and returns -EINVAL
 * when the model is not at least at `need`. */
int model__require(const struct model *m, enum model_stage need, const char *who);
/* Moves the model to `to`, which must be the next stage. */
int model__advance(struct model *m, enum model_stage to, const char *who);

/* Filling (concerns, `report` loading, tests replaying synthetic events). */
int model__set_phase_name(struct model *m, int id, const char *name);
int model__set_count_name(struct model *m, int id, const char *name);
/* The id of a phase or count by name; -1 when there is none. */
int model__phase_id(const struct model *m, const char *name);
int model__count_id(const struct model *m, const char *name);
struct model_process *model__add_process(struct model *m, pid_t pid);
const struct model_process *model__find_process(const struct model *m, pid_t pid);
/* Thread (pid, tid) is named comm (IT_COMM_LEN bytes as BPF reads them;
 * made valid UTF-8 here); a later name replaces an earlier. 0 or -ENOMEM. */
int model__name_thread(struct model *m, pid_t pid, pid_t tid, const char *comm);
/* The thread's name; NULL when no record named it. */
const char *model__thread_name(const struct model *m, pid_t pid, pid_t tid);
struct model_cycle *model__add_cycle(struct model *m, pid_t pid, uint32_t bpf_cycle,
				     uint64_t start_ns, uint64_t end_ns);
/* Frees what a cycle owns (its side data and GPU figures), as a cycle is dropped. */
void model__cycle_release(struct model_cycle *c);
/* The cycle the kernel tagged (pid, bpf_cycle); NULL when none (e.g. a
 * marker cycle dropped as empty). */
struct model_cycle *model__find_cycle(struct model *m, pid_t pid, uint32_t bpf_cycle);
int model__add_call_ms(struct model *m, int phase, double ms);
int model__add_phase_call(struct model *m, const struct model_phase_call *c);
int model__add_lost(struct model *m, const char *name, uint64_t n);
uint64_t model__lost(const struct model *m, const char *name);
/* The processes the OOM killer ended (crashes). */
uint64_t model__oom_kills(const struct model *m);
int model__add_trace_sample(struct model *m, const struct model_trace_sample *s);
int model__add_offcpu_interval(struct model *m, const struct model_offcpu_interval *iv);
/* Adds a labelled stack (frames copied, leaf first); 0 or -ENOMEM. */
int model__add_lstack(struct model *m, const struct model_lstack *s, const struct model_frame *frames, uint32_t n);
/* The index of the mapping equal to mp, added if new; -1 on ENOMEM. */
int32_t model__add_mapping(struct model *m, const struct model_mapping *mp);
/* The index of name in model.names, added if new; -1 on ENOMEM. */
int32_t model__intern(struct model *m, const char *name);
/* Both take the evidence (*evidence, r->evidence), which is then empty. */
int model__add_finding(struct model *m, const char *type, const char *severity, double pct,
		       struct model_evidence *evidence);
int model__add_recommendation(struct model *m, struct model_recommendation *r);
void model__clear_findings(struct model *m);
/* Frees what was asked and leaves nothing asked. */
void model__clear_asked(struct model_asked *a);
/* Name i of model.names; NULL when none. */
const char *model__name(const struct model *m, int32_t i);
/* No facts: integers -1 (not shown). */
void model__llama_facts_init(struct model_llama_facts *f);
/* The targets' RSS last seen, summed (NAN: none read): top and /metrics. */
double model__rss_now_mb(const struct model *m);
/* Frees the tail cycles; none judged. */
void model__clear_tail(struct model *m);
/* Forgets the probes (a collect lists them again). */
void model__clear_probes(struct model *m);
/* A probe with no strings yet (names -1), added; NULL on ENOMEM. */
struct model_probe *model__add_probe(struct model *m);
int model__set_command(struct model *m, char *const *argv);

/* One top-level key of profile.json as its writer writes it (NULL when it
 * writes none): for views and tests that show a part alone. */
json_t *model__section_json(const struct model *m, const char *key);

/* Derived figures (analysis/derive.c): a plain function of the model. */
int model__derive(struct model *m);
/* record's last lines: preset probes over 2% of their phase (probes_overhead.preset_probes). */
void model__warn_preset_probes(const struct model *m);
/* llama.cpp's per-cycle and aggregate figures (analysis/llama.c), part of
 * model__derive. */
void llama__derive(struct model *m);
/* Start-up and tear-down apart from the cycles (user/analysis/edges.c). */
void edges__derive(struct model *m);
/* Joules per generated token, per cycle and over the cycles whose energy
 * was measured (part of llama__derive; NAN where none was). */
void llama__energy(struct model *m);

/* profile.json ↔ model (outputs/profile_json.c). */
json_t *model__to_json(const struct model *m);
/* A model at MODEL_ANALYSED from a parsed profile.json. 0, -EINVAL or
 * -E2BIG with a message naming what is wrong, or -ENOMEM. */
int model__from_json(struct model *m, json_t *profile, const char *source);

#endif
