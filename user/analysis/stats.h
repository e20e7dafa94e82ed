// SPDX-License-Identifier: BSD-2-Clause
/* The statistics of the whole tool, each estimator in one place so that the
 * same data gives the same figure whichever concern asks: percentiles of
 * samples, percentiles of log2 histograms, least-squares slope. Pure
 * functions, unit-tested. */
#ifndef INFERTRACE_STATS_H
#define INFERTRACE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Percentile p (0..100) of v[0..n) by linear interpolation between the
 * closest ranks (numpy's default). Sorts v in place. NAN when n == 0. */
double stats__percentile(double *v, size_t n, double p);
double stats__mean(const double *v, size_t n);
/* Least-squares slope of y over x = 0..n-1. NAN when n < 2. */
double stats__slope(const double *y, size_t n);
/* A log2 histogram (slot i counts values in [2^i, 2^(i+1)), slot 0 also 0)
 * as JSON: {"unit": UNIT, "buckets": [{"from": lo, "to": hi, "count": n}...]}
 * listing the non-empty slots. */
json_t *stats__log2_hist_json(const uint64_t *slots, size_t nslots, const char *unit);
/* Percentile p (0..100) of a log2 histogram (slot i holds values in
 * [2^i, 2^(i+1)), slot 0 in [0, 2)): the slot holding rank p/100 * total,
 * interpolated linearly inside it as if its values were spread evenly.
 * NAN when the histogram is empty. */
double stats__log2_hist_percentile(const uint64_t *slots, size_t nslots, double p);

#endif
