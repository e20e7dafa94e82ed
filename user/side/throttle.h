// SPDX-License-Identifier: BSD-2-Clause
/* Throttling episodes from periodic side samples.
 *
 * A source (the CPU package, a GPU) is throttled at a sample when its
 * temperature is above the threshold and its clock is more than the drop
 * threshold below its maximum, or, for NVML GPUs, when the driver reports a
 * throttle reason that is not "idle" (see throttle_nvml_active). An episode
 * starts at the first throttled sample and ends at the first sample that is
 * not, so each boundary is within one sampling period of the truth. */
#ifndef INFERTRACE_THROTTLE_H
#define INFERTRACE_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct throttle_episode {
	char source[64];      /* "cpu", "gpu0" */
	char zone[96];        /* hottest zone or GPU name when the episode began */
	char reason[128];     /* "thermal" or NVML reason names */
	uint64_t start_ns;    /* CLOCK_MONOTONIC */
	uint64_t end_ns;
	double peak_temp_c;   /* NAN when unknown */
	double min_clock_pct; /* lowest clock in % of maximum, NAN when unknown */
	bool open;            /* still throttled when sampling stopped */
};

struct throttle_tracker;

struct throttle_tracker *throttle_tracker__new(void);
void throttle_tracker__free(struct throttle_tracker *t); /* accepts NULL */
/* One observation of one source, its values read between read_begin and
 * read_end. An episode is stated only over time it is known to cover: it
 * opens at the read_end of its first active reading (the state may have
 * changed just before a read a busy sampler was late for) and closes at
 * the read_begin of the first inactive one. zone and reason are recorded
 * when an episode opens; temp_c/clock_pct (NAN when unknown) update its
 * extremes. */
int throttle_tracker__observe(struct throttle_tracker *t, const char *source, uint64_t read_begin,
			      uint64_t read_end, bool active, const char *zone, const char *reason, double temp_c,
			      double clock_pct);
/* Ends every open episode at ts (marked open). */
void throttle_tracker__finish(struct throttle_tracker *t, uint64_t ts);
size_t throttle_tracker__count(const struct throttle_tracker *t);
const struct throttle_episode *throttle_tracker__get(const struct throttle_tracker *t, size_t i);
/* Nanoseconds of [start, end) covered by episodes (an open one up to its
 * latest throttled sample). */
uint64_t throttle_tracker__overlap_ns(const struct throttle_tracker *t, uint64_t start, uint64_t end);

/* temp above temp_threshold_c and cur below (100 - drop_pct)% of max. */
bool throttle_thermal_active(double temp_c, double cur, double max, double temp_threshold_c, double drop_pct);
/* NVML reasons that mean the clocks are being held down. Idle is not
 * throttling; neither are the application- and display-clock settings,
 * which are user-set limits present on idle servers all the time. */
bool throttle_nvml_active(uint64_t reasons);
/* "sw_thermal,hw_slowdown" ("" for none). */
void throttle_nvml_reason_names(uint64_t reasons, char *buf, size_t len);
/* The name of NVML reason i (0, 1, ...) and its bit; NULL past the last. */
const char *throttle_nvml_reason(size_t i, uint64_t *bit);

#endif
