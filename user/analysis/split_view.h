// SPDX-License-Identifier: BSD-2-Clause
/* The scheduler's split (on-CPU / run queue / blocked) of the phases and
 * the cycles as the text report, report.html and `top` show it, from the
 * model's per-cycle splits (cycles[].split, cycles[].phases[].split). */
#ifndef INFERTRACE_SPLIT_VIEW_H
#define INFERTRACE_SPLIT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model.h"

/* A phase's split summed over the cycles that have one (all threads, as
 * cycles[].phases[NAME] in profile.json); out->present false when none. */
void split_view__phase(const struct model *m, int phase, struct model_split *out);

/* Any cycle or phase of m has a split. */
bool split_view__any(const struct model *m);

/* part's share of on-CPU + run queue + blocked, in percent; NAN when 0. */
double split_view__percent(const struct model_split *s, double part);

/* "sleep 3.1, io 0.4": the blocked classes of at least 0.05 ms, largest
 * first; "" when none. */
const char *split_view__blocked(const struct model_split *s, char *buf, size_t len);

/* The text report's section: the split per phase, the median cycle's,
 * each cycle's (up to 30 cycles; beyond, where to read them). */
void split_view__print(FILE *f, const struct model *m);

/* One line for a cycle: "on-CPU 7.0 ms, run queue 0.0, blocked 3.0 (sleep 3.0)";
 * "" without a split. */
const char *split_view__line(const struct model_split *s, char *buf, size_t len);

/* report.html's table of the split per phase. */
void split_view__html_phases(FILE *f, const struct model *m);

#endif
