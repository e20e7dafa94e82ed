// SPDX-License-Identifier: BSD-2-Clause
/* report.html's charts: inline SVG drawn from the model (no script, no
 * network), so the page stays one self-contained file. */
#ifndef INFERTRACE_REPORT_CHARTS_H
#define INFERTRACE_REPORT_CHARTS_H

#include <stdio.h>

#include "model.h"

/* More cycles than this: one bar per group of consecutive cycles (their
 * mean), so the cycle chart stays readable and small. */
#define REPORT_CHARTS_MAX_BARS 600
/* Linear bins of a phase's histogram of per-cycle times. */
#define REPORT_CHARTS_HIST_BINS 24
/* Channels drawn in one side-data chart at most (one line each). */
#define REPORT_CHARTS_MAX_LINES 16

/* The charts section: cycle times with their phases stacked and the tail
 * cycles marked, each phase's distribution and scheduler split, the side
 * data over time with the cycles shaded. Nothing without cycles or side
 * readings to draw. */
void report_charts__write(FILE *f, const struct model *m);

#endif
