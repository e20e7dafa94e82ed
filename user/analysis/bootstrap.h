// SPDX-License-Identifier: BSD-2-Clause
/* The percentile bootstrap of the whole tool, in one place so that `diff`
 * and `tune` state their intervals the same way: a fixed seed (the same
 * inputs give the same interval), a statistic that is a ratio of sums or a
 * percentile, and a sample that may come in groups.
 *
 * Groups are the runs of one setting: a resample draws as many runs as
 * there are, with replacement, then inside each drawn run as many cycles as
 * it has, with replacement (a two-level bootstrap). The interval then holds
 * the spread between runs (a slow start, a busy neighbour) as well as the
 * spread between cycles; with one group it is the plain cycle bootstrap. */
#ifndef INFERTRACE_BOOTSTRAP_H
#define INFERTRACE_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A percentile's interval needs this many values beyond it on each side
 * (a resample of 10 values has the same p95 nearly always: a bootstrap
 * there claims a certainty the data do not hold); the maximum gets none. */
#define BOOT_TAIL_MIN 5

/* The statistic: sum(x)/sum(w) (w = 1: the mean), or percentile pct
 * (0..100) of x as stats__percentile takes it. */
struct boot_stat {
	bool percentile;
	double pct;
};

/* x[0..n) with weights w (NULL: all 1). group_end: NULL for one group,
 * else ngroups ascending ends, group g being [group_end[g-1], group_end[g])
 * (the last end is n; no group is empty). */
struct boot_sample {
	const double *x, *w;
	size_t n;
	const size_t *group_end;
	size_t ngroups;
};

/* Whether the sample can have an interval of st: 2 values or more and, for
 * a percentile, BOOT_TAIL_MIN beyond it. */
bool bootstrap__enough(const struct boot_sample *s, struct boot_stat st);
/* The statistic of the sample itself; NAN for an empty one. */
double bootstrap__estimate(const struct boot_sample *s, struct boot_stat st);
/* The level_pct interval of the statistic, into lo and hi. false (both
 * NAN) when !bootstrap__enough or out of memory. */
bool bootstrap__interval(const struct boot_sample *s, struct boot_stat st, double level_pct, unsigned int reps,
			 uint64_t seed, double *lo, double *hi);
/* The level_pct interval of the change of the statistic from base to new,
 * in percent of base's. false when either side is not enough, or a
 * resample's base statistic is not positive. */
bool bootstrap__change(const struct boot_sample *base, const struct boot_sample *new_s, struct boot_stat st,
		       double level_pct, unsigned int reps, uint64_t seed, double *lo, double *hi);

#endif
