// SPDX-License-Identifier: BSD-2-Clause
/* The side sampler: a thread that reads thermal zones, cpufreq, hwmon,
 * MemAvailable, per-CPU load, disk free space, and the GPU (NVML or Jetson
 * sysfs) every period, keeps the timeline, detects throttling episodes, and
 * reduces them to typed results (side_summary.h): the run's summary, the
 * side data of one window (a cycle), the readings' series and the energy.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, the clock of bpf_ktime_get_ns.
 * sysfs/procfs paths are read under INFERTRACE_SYSFS_ROOT (default "/"); the
 * NVML library is INFERTRACE_NVML_LIB (default "libnvidia-ml.so.1").
 * All functions are thread-safe; the getters may be called while sampling
 * runs and fill structs the caller owns (and frees with side_summary.h's
 * functions; they are complete even on -ENOMEM). */
#ifndef INFERTRACE_SIDE_SAMPLER_H
#define INFERTRACE_SIDE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "side_summary.h"

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

/* The run's thermal, GPU, disk and host summary (docs/side-data.md).
 * 0 or -ENOMEM. */
int side_sampler__summary(struct side_sampler *s, struct side_summary *out);

/* Side data averaged over the samples taken in [start_ns, end_ns]; with no
 * sample inside, the latest sample before end_ns stands for the window.
 * 0 or -ENOMEM. */
int side_sampler__window(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns, struct side_window *out);

/* Every row kept so far, column by column (trace.json's counter tracks).
 * 0 or -ENOMEM. */
int side_sampler__series(struct side_sampler *s, struct side_series *out);

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

/* The energy sources, what no source measures and why, the run's joules,
 * its peak power and the power-cap episodes. 0 or -ENOMEM. */
/* GPU g's busy ms in [start_ns, end_ns) from NVML's own utilization
 * samples (tens of ms apart), and how much of the window they cover.
 * -ENODATA when there are none (no NVML, a driver without samples, a
 * window before the first). */
int side_sampler__gpu_busy(struct side_sampler *s, int g, uint64_t start_ns, uint64_t end_ns, double *busy_ms,
			   double *covered_ms);
int side_sampler__gpu_count(struct side_sampler *s); /* NVML devices; 0 none */
/* Why NVML gave no utilization samples; NULL when it did. */
const char *side_sampler__gpu_busy_why(struct side_sampler *s);
int side_sampler__energy_summary(struct side_sampler *s, struct side_energy *out);

#endif
