// SPDX-License-Identifier: BSD-2-Clause
/* The side sampler: a thread that reads thermal zones, cpufreq, hwmon,
 * MemAvailable, per-CPU load, disk free space, and the GPU (NVML or Jetson
 * sysfs) every period, keeps the timeline, detects throttling episodes, and
 * renders profile.json's `thermal`, `gpu`, `disk` and `host` sections, the
 * side data of one cycle, and trace.json counter events.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, the clock of bpf_ktime_get_ns.
 * sysfs/procfs paths are read under INFERTRACE_SYSFS_ROOT (default "/"); the
 * NVML library is INFERTRACE_NVML_LIB (default "libnvidia-ml.so.1").
 * All functions are thread-safe; the JSON getters may be called while
 * sampling runs and return new references the caller owns. */
#ifndef INFERTRACE_SIDE_SAMPLER_H
#define INFERTRACE_SIDE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

enum side_gpu_mode {
	SIDE_GPU_AUTO = 0,  /* NVML, else Jetson sysfs, else none */
	SIDE_GPU_NVML,
	SIDE_GPU_JETSON,
	SIDE_GPU_NONE,
};

/* Zero fields take the defaults, so `struct side_config c = {0};` works. */
struct side_config {
	unsigned int period_ms;       /* default 1000 */
	enum side_gpu_mode gpu;
	double temp_threshold_c;      /* default 75 */
	double clock_drop_pct;        /* default 20: throttled below 80% of max */
	double disk_alert_pct;        /* default 10: alert when less is free */
	const pid_t *pids;            /* targets whose GPU memory NVML reports */
	int npids;
	const char *const *disk_paths; /* directories for statvfs (real paths) */
	int ndisk_paths;
};

struct side_sampler;

/* "auto", "nvml", "jetson", "none" (NULL means auto). 0 or -EINVAL. */
int side_gpu_mode_parse(const char *s, enum side_gpu_mode *out);

/* Starts the sampling thread; discovery and the first sample happen on that
 * thread, so this returns at once. NULL with errno on failure. */
struct side_sampler *side_sampler__start(const struct side_config *cfg);
/* Takes a last sample, then joins the thread. Idempotent. */
void side_sampler__stop(struct side_sampler *s);
/* Stops if needed and frees. Accepts NULL. */
void side_sampler__free(struct side_sampler *s);

/* Adds a target pid (a child that appeared) for NVML per-process memory. */
int side_sampler__add_pid(struct side_sampler *s, pid_t pid);

/* NULL while the GPU is being probed or when one is sampled; otherwise the
 * one line the caller prints once, e.g. "GPU data unavailable: NVML not
 * available: libnvidia-ml.so.1: cannot open shared object file ...".
 * Always settled after side_sampler__stop(). */
const char *side_sampler__gpu_notice(struct side_sampler *s);

/* Number of samples taken so far. */
size_t side_sampler__sample_count(struct side_sampler *s);
/* --max-memory: while hold is false, readings still feed energy and
 * throttling but their rows are counted (rows_not_kept), not kept. */
void side_sampler__set_hold(struct side_sampler *s, bool hold);
uint64_t side_sampler__rows_not_kept(struct side_sampler *s);

/* {"thermal": {...}, "gpu": {...}, "disk": {...}, "host": {...}}: the
 * sections of profile.json (see docs/side-data.md). */
json_t *side_sampler__summary_json(struct side_sampler *s);

/* Side data averaged over the samples taken in [start_ns, end_ns]; with no
 * sample inside, the latest sample before end_ns stands for the window.
 * Keys are merged into cycles[i] (see docs/side-data.md). */
json_t *side_sampler__cycle_json(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns);

/* Appends Chrome trace counter events ("ph": "C") for every sample to
 * events, ts in microseconds since base_ns. Returns the number appended. */
int side_sampler__trace_counters(struct side_sampler *s, json_t *events, int pid, uint64_t base_ns);

/* Joules per domain (cpu, dram, gpu, board: energy.h's ENERGY_NDOMAINS
 * order) in [start_ns, end_ns], NAN where no source measures it. 0, or
 * -ENODATA with no energy source, -ERANGE when no domain is measured: a
 * window shorter than the reads around its ends are apart (below the
 * resolution) or outside the sampled span. */
int side_sampler__energy(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns, double *j);

/* Energy counters (powercap, NVML) are also read alone between rows, every
 * cycle_ns / 5 (at least SIDE_ENERGY_MIN_NS; not at all when that reaches
 * the side period); SIDE_ENERGY_START_NS until the first pace is given.
 * Called as cycles arrive. */
#define SIDE_ENERGY_MIN_NS 10000000ULL   /* 10 ms */
#define SIDE_ENERGY_START_NS 50000000ULL /* 50 ms */
void side_sampler__energy_pace(struct side_sampler *s, uint64_t cycle_ns);

/* {resolution_ms, sources: [{name, domain, kind, period_ms, joules, seconds,
 * mean_w, wraps, max_range_j, limit_w}], missing: [{domain, reason}],
 * run: {cpu_j.., peak_w}, power_capped: {capped_ms, episodes}} */
json_t *side_sampler__energy_json(struct side_sampler *s);

#endif
