// SPDX-License-Identifier: BSD-2-Clause
/* Energy sources for the side sampler: counters the kernel and drivers keep
 * (powercap RAPL zones' energy_uj, NVML's total-energy counter) and power
 * readings integrated over time (Jetson INA3221 rails, NVML power where the
 * GPU has no counter). Each source accumulates joules since its first
 * reading and keeps the series of (time of the read, running total), so
 * the energy of any window is the difference of two interpolated totals.
 *
 * powercap zones are read under INFERTRACE_SYSFS_ROOT like every sysfs path.
 * Their counters wrap at max_energy_range_uj; every wrap between two reads
 * is handled, as long as two reads are less than one full range apart (a
 * typical range is 262,143 J: at 100 W it wraps every ~44 minutes). */
#ifndef INFERTRACE_ENERGY_H
#define INFERTRACE_ENERGY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENERGY_HIST 16

enum energy_domain {
	ENERGY_CPU = 0,   /* CPU package (RAPL package-N, Jetson CPU rail) */
	ENERGY_DRAM,      /* RAPL dram */
	ENERGY_GPU,       /* NVML device, Jetson GPU rail */
	ENERGY_BOARD,     /* the whole board: Jetson VDD_IN, RAPL psys */
	ENERGY_NDOMAINS,
	ENERGY_OTHER = ENERGY_NDOMAINS, /* listed, never summed (core, uncore, SOC rails) */
};

enum energy_kind {
	ENERGY_COUNTER = 0, /* a counter kept by the hardware or driver */
	ENERGY_INTEGRAL,    /* power readings integrated over the sampling period */
};

enum energy_via {
	ENERGY_VIA_POWERCAP = 0, /* path: energy_uj */
	ENERGY_VIA_NVML,         /* gpu: NVML device index */
	ENERGY_VIA_COLUMN,       /* power_col: a watts column of the side rows */
};

struct energy_source {
	char name[96];
	enum energy_domain domain;
	enum energy_kind kind;
	enum energy_via via;
	char path[PATH_MAX];
	double unit_j;          /* joules per counter unit: 1e-6 (µJ), 1e-3 (mJ) */
	uint64_t max_range;     /* counter units; 0: does not wrap */
	double limit_w;         /* powercap long-term limit, NAN when none */
	int gpu;
	int power_col;
	/* state */
	bool primed;
	uint64_t prev_raw;
	double prev_w;
	uint64_t prev_ts, first_ts;
	double joules;          /* since the first reading */
	double last_w;          /* mean power over the last interval, NAN before two */
	uint32_t wraps, read_errors;
	/* every reading: (CLOCK_MONOTONIC ns of the read, running total J) */
	uint64_t *series_ts;
	double *series_j;
	size_t nseries, capseries;
	/* the latest readings (ts, joules), for power over a window */
	uint64_t hist_ts[ENERGY_HIST];
	double hist_j[ENERGY_HIST];
	unsigned int hist_n;
};

/* "cpu", "dram", "gpu", "board", "other" */
const char *energy_domain_name(enum energy_domain d);

/* cur - prev for a counter that wraps after max_range (0: never wraps);
 * *wrapped is set when cur < prev. */
uint64_t energy_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range, bool *wrapped);

/* Domains by name: powercap zone names ("package-0", "dram", "psys", "core")
 * and Jetson rail labels ("VDD_IN", "POM_5V_GPU", "VDD_CPU_CV", "SOC"). */
enum energy_domain energy_powercap_domain(const char *zone_name);
enum energy_domain energy_rail_domain(const char *label);

/* Feeds one counter reading at ts (CLOCK_MONOTONIC ns). */
void energy_source__counter(struct energy_source *e, uint64_t raw, uint64_t ts);
/* Feeds one power reading (watts, NAN when the read failed): trapezoids. */
void energy_source__power(struct energy_source *e, double w, uint64_t ts);

/* Appends the current running total at ts to the series. 0 or -ENOMEM. */
int energy_source__record(struct energy_source *e, uint64_t ts);
/* The running total at t, interpolated between the readings around it
 * (power constant between two reads); NAN outside the series. */
double energy_source__total_at(const struct energy_source *e, uint64_t t);
void energy_source__free(struct energy_source *e); /* the series */

/* The time between the two reads around t (ns): the resolution of a
 * window's end at t. NAN outside the series. */
double energy_source__gap_at(const struct energy_source *e, uint64_t t);
/* The median time between reads over the series, in ms (NAN: fewer than
 * two reads): the period this source was read at. */
double energy_source__median_gap_ms(const struct energy_source *e);

/* Mean power over the latest readings reaching back at least window_ns
 * (all kept ones when fewer): short intervals jitter with the reads' timing.
 * NAN before two readings. */
double energy_source__recent_w(const struct energy_source *e, uint64_t window_ns);

/* Finds the powercap zones with an energy counter under sysfs_root():
 * top-level zones and their subzones (dram, core, uncore), skipping the
 * intel-rapl-mmio interface that duplicates the package. Appends to *v.
 * Returns the number added, or 0 with why filled in ("no powercap zones",
 * "energy_uj not readable: Permission denied"). */
int energy_discover_powercap(struct energy_source **v, int *n, size_t *cap, char *why, size_t whylen);
/* Appends one source; NULL on ENOMEM. */
struct energy_source *energy_add(struct energy_source **v, int *n, size_t *cap);

#endif
