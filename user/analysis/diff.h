// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace diff BASE NEW`: each compared figure with the change from BASE
 * to NEW and its 95% interval, a percentile bootstrap over the cycles of
 * both runs (bootstrap.h: DIFF_BOOT_REPS resamples, a fixed seed: the same
 * inputs give the same interval). A regression is a change beyond the threshold whose
 * interval lies wholly on the worse side of zero; a figure on one side only
 * fails too. Figures with no interval (whole-run ones, fewer than 2 cycles
 * on a side) are shown without a verdict. */
#ifndef INFERTRACE_DIFF_H
#define INFERTRACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

#define DIFF_BOOT_REPS 2000
#define DIFF_BOOT_SEED 0x1f2e3d4c5b6a7988ull
#define DIFF_LEVEL_PCT 95.0
/* A percentile's interval needs this many cycles beyond it on each side
 * (bootstrap.h); the maximum gets none. */
#define DIFF_TAIL_MIN BOOT_TAIL_MIN

struct model;

/* The statistic of a cycle sample: sum(x)/sum(w) (w = 1: the mean; w =
 * calls: ms per call), or percentile pct (0..100) of x as stats__percentile
 * takes it. */
struct diff_stat {
	bool percentile;
	double pct;
};

/* The DIFF_LEVEL_PCT interval of the change of the statistic from base
 * (bx, bw, nb) to new (nx, nw, nn), in percent of base's, into lo and hi.
 * w may be NULL (all 1; it is ignored for a percentile). true, or false
 * when either side has fewer than 2 cycles (for a percentile, fewer than
 * DIFF_TAIL_MIN beyond it) or the base's statistic of a resample is not
 * positive. */
bool diff__interval(const double *bx, const double *bw, size_t nb, const double *nx, const double *nw, size_t nn,
		    struct diff_stat st, unsigned int reps, uint64_t seed, double *lo, double *hi);

/* A row's verdict: -1 a regression, 1 an improvement, 0 none. change_pct
 * and the interval are of NEW against BASE; for higher-is-better figures a
 * fall is the regression. Without an interval (NAN) there is no verdict. */
int diff__verdict(double change_pct, double lo, double hi, bool higher_is_better, double threshold_pct);

/* Prints diff's header and table; returns the number of regressions (a
 * verdict of -1, or a figure present on one side only). */
int diff__compare(const struct model *base, const struct model *new_m, double threshold_pct);

#endif
