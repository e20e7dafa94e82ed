// SPDX-License-Identifier: BSD-2-Clause
/* What the side sampler reports, typed: the run's summary (thermal, GPU,
 * disk, host), the side data of one window (a cycle), and the energy
 * sources with their totals. The model holds these as they are; the
 * profile.json tables (outputs/profile_side.c) name their keys.
 *
 * Readings the sampler averages are kept to three decimals (below every
 * sensor's resolution); NAN where nothing was read. Names are the side
 * channels' (zones, rails, CPUs, disk paths), cut to SIDE_NAME_LEN - 1. */
#ifndef INFERTRACE_SIDE_SUMMARY_H
#define INFERTRACE_SIDE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttle.h"

#define SIDE_NAME_LEN 96

/* A growing array (lib/vec.h's VEC_RESERVE grows it). */
#define SIDE_VEC(T) struct { T *v; size_t n, cap; }

/* The thermal and power tracepoints the side concern counts, by name: the
 * keys of thermal.kernel_events.counts and of a cycle's kernel_power. */
#define SIDE_POWER_EVENTS(X) X(thermal_temperature) X(cdev_update) X(cpu_frequency) X(cpu_frequency_limits)
#define SIDE_PE_ENUM(name) SIDE_PE_##name,
enum side_power_event { SIDE_POWER_EVENTS(SIDE_PE_ENUM) SIDE_NPOWER };
#undef SIDE_PE_ENUM

struct side_mam {
	double min, avg, max;
};

struct side_am {
	double avg, max;
};

struct side_named_mam {
	char name[SIDE_NAME_LEN];
	struct side_mam v;
};

struct side_named_am {
	char name[SIDE_NAME_LEN];
	struct side_am v;
};

struct side_named_value {
	char name[SIDE_NAME_LEN];
	double v;
};

struct side_name {
	char name[SIDE_NAME_LEN];
};

struct side_cpufreq {
	char name[SIDE_NAME_LEN];
	double min_mhz, avg_mhz, max_mhz, hw_max_mhz, lowest_scaling_max_mhz;
};

/* One thermal or power tracepoint record (thermal.kernel_events.timeline);
 * the flags say which of its fields its type has. */
struct side_power_record {
	double t_s;
	char type[32];
	bool thermal, cdev, has_cpu, freq, limits;
	char name[32];        /* zone or cooling device */
	int64_t id;           /* zone id or CPU */
	double temp_c, prev_temp_c;
	int64_t state;
	double mhz, min_mhz, max_mhz;
};

struct side_power_counts {
	uint64_t n[SIDE_NPOWER];
};

/* The tracepoints attached, their counts, and the first records. */
struct side_kernel_events {
	bool present;
	SIDE_VEC(struct side_name) attached, missing;
	struct side_power_counts counts;
	SIDE_VEC(struct side_power_record) timeline;
	uint64_t timeline_max_points, not_kept;
};

struct side_thermal {
	bool present;                         /* the sampler ran */
	SIDE_VEC(struct side_named_mam) zones, hwmon, power_w;
	SIDE_VEC(struct side_cpufreq) cpufreq;
	double max_temp_c, temp_threshold_c, clock_drop_pct;
	bool throttled;
	SIDE_VEC(struct throttle_episode) throttling;
	uint64_t samples, period_ms;
	struct side_kernel_events kernel_events; /* the side concern's, not the sampler's */
};

/* A GPU's figures over the run: avg and max of each reading. */
struct side_gpu_device {
	int index;
	char name[SIDE_NAME_LEN];
	struct side_am util_pct, mem_util_pct, mem_used_mb, temp_c, power_w, sm_clock_mhz, mem_clock_mhz,
		target_mem_mb;
	double mem_total_mb, max_sm_clock_mhz;
	bool has_reasons;
	uint64_t throttle_reasons;            /* NVML reason bits seen */
	SIDE_VEC(struct side_named_value) process_mem_mb; /* by pid: the most each target held */
};

struct side_gpu {
	bool present;
	bool available;
	char source[16];                      /* "nvml", "jetson"; "" when none */
	char device[SIDE_NAME_LEN];           /* device 0's name; "" when none */
	char unavailable_reason[384];         /* "" when a GPU is sampled */
	SIDE_VEC(struct side_gpu_device) devices;
};

struct side_disk_path {
	char name[SIDE_NAME_LEN];
	char error[32];                       /* "" when statvfs answered */
	bool ok;
	double free_mb, total_mb, percent_free, min_free_mb;
	bool alert;
};

struct side_disk {
	bool present;
	SIDE_VEC(struct side_disk_path) paths;
	bool alert;
	double alert_below_pct;
};

struct side_host {
	bool present;
	struct side_mam mem_available_mb;
	SIDE_VEC(struct side_named_am) cpu_load_pct;
	double cpu_load_avg_pct;
};

struct side_summary {
	struct side_thermal thermal;
	struct side_gpu gpu;
	struct side_disk disk;
	struct side_host host;
};

/* Device 0's averages over a window. */
struct side_gpu_avgs {
	double util_pct, mem_used_mb, temp_c, power_w, sm_clock_mhz, mem_clock_mhz, target_mem_mb;
};

/* Side data averaged over a window (a cycle). */
struct side_window {
	bool present;                         /* the sampler ran */
	uint64_t samples;                     /* rows inside the window */
	bool has_rows;                        /* rows inside, or the last one before it */
	SIDE_VEC(struct side_named_value) temp_c, power_w;
	double temp_max_c, cpu_mhz, cpu_load_pct, mem_available_mb;
	bool has_gpu;
	struct side_gpu_avgs gpu;
	double throttled_ms;
};

/* The tracepoint records inside a cycle (the side concern's). */
struct side_cycle_power {
	bool present;
	struct side_power_counts counts;
	double min_cpu_mhz, max_temp_c;       /* NAN: none seen */
};

struct side_energy_source {
	char name[SIDE_NAME_LEN];
	char domain[8];
	char kind[16];                        /* "counter" or "integral" */
	double period_ms, joules, seconds, mean_w;
	bool counter;                         /* wraps and max_range_j apply */
	uint64_t wraps;
	double max_range_j, limit_w;          /* NAN: none */
	bool root_only;
	uint64_t read_errors;
};

struct side_energy_missing {
	char domain[8];
	char reason[256];
};

/* Energy sources over the run (energy.h's domains: cpu, dram, gpu, board). */
#define SIDE_ENERGY_NDOMAINS 4
struct side_energy {
	double resolution_ms;
	SIDE_VEC(struct side_energy_source) sources;
	SIDE_VEC(struct side_energy_missing) missing;
	double j[SIDE_ENERGY_NDOMAINS];       /* over the run, NAN where unmeasured */
	double peak_w;                        /* highest total power over one period */
	double capped_ms;                     /* power-cap episodes */
	SIDE_VEC(struct throttle_episode) capped;
};

/* Every reading of the run, by column, for trace.json's counter tracks:
 * columns grouped by series ("temperature (C)"), named by channel. */
struct side_series_col {
	char series[32];
	char name[SIDE_NAME_LEN];
};

struct side_series {
	SIDE_VEC(struct side_series_col) cols;
	uint64_t *ts;                         /* CLOCK_MONOTONIC ns of each row */
	double *v;                            /* nrows x cols.n, NAN: not read */
	size_t nrows;
};

/* The empty values: NAN where a number was not read. */
void side_summary__init(struct side_summary *s);
void side_window__init(struct side_window *w);
void side_cycle_power__init(struct side_cycle_power *p);
void side_energy__init(struct side_energy *e);
/* Frees what they own and leaves them empty; accept zeroed structs. */
void side_summary__free(struct side_summary *s);
void side_window__free(struct side_window *w);
void side_energy__free(struct side_energy *e);
void side_series__free(struct side_series *s);
/* Deep copies into dst (which owns nothing yet). 0 or -ENOMEM (dst then
 * owns what was copied; free it). */
int side_summary__copy(struct side_summary *dst, const struct side_summary *src);
int side_window__copy(struct side_window *dst, const struct side_window *src);
int side_energy__copy(struct side_energy *dst, const struct side_energy *src);
int side_series__copy(struct side_series *dst, const struct side_series *src);
/* A source readable by root only (RAPL): the files holding its figures are
 * the owner's alone. */
bool side_energy__root_only(const struct side_energy *e);

#endif
