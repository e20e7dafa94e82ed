// SPDX-License-Identifier: BSD-2-Clause
/* Scheduler concern's readers, shared with the memory concern (page faults
 * travel with on-CPU time in `sched_times`). */
#ifndef INFERTRACE_SCHED_H
#define INFERTRACE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "infertrace.h"

struct tracer;
struct model_sched_figures;

struct sched_entry {
	struct it_sched_key key;
	struct it_sched_times v;
};

/* Reads the whole `sched_times` map. 0 or -errno; *out malloc'd. */
int sched__read_times(struct tracer *t, struct sched_entry **out, size_t *n);
/* sf->unattributed, profile.json's sched.phase_unattributed
 * (user/concerns/sched_edges.c): the time whose phase edge no probe saw;
 * it still counts in its cycle's split, in no phase's. e: the n entries
 * sched__read_times read. */
void sched__unattributed(struct tracer *t, const struct sched_entry *e, size_t n, struct model_sched_figures *sf);

#endif
