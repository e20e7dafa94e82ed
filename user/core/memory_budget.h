// SPDX-License-Identifier: BSD-2-Clause
/* --max-memory: a bound on what a recording holds.
 *
 * A recording keeps its labelled stacks, timelines and process maps until
 * it writes them (cycles, phase calls and trace events are spooled to disk:
 * spool.h). Every tick the tracer reads its own
 * RSS; once it reaches the budget, the concerns keep no more of that
 * detail (recording__may_hold) and count what they leave out in `lost`,
 * while what the kernel totals (stacks, per-phase sums, histograms) goes on.
 * Below 90% of the budget (a rotated period freed its cycles) they keep
 * detail again. */
#ifndef INFERTRACE_MEMORY_BUDGET_H
#define INFERTRACE_MEMORY_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct recording;

/* The tracer's resident set in bytes (/proc/self/statm); 0 when unreadable. */
uint64_t memory_budget__rss_bytes(void);
/* The run loop's tick: compares the RSS with opts.max_memory_mb. */
void memory_budget__tick(struct recording *rec);
/* The budget, when it was first reached (seconds since the start; NAN:
 * never), how often, and the highest RSS read while recording: the
 * model's self.memory_budget. */
void memory_budget__figures(const struct recording *rec, int *max_mb, double *reached_at_s, uint64_t *times_reached,
			    double *peak_rss_mb);

#endif
