// SPDX-License-Identifier: BSD-2-Clause
/* Time whose phase is not known: intervals that an edge no probe saw would
 * have split (bpf/sched.bpf.h keeps them in phase IT_PHASE_UNATTRIBUTED of
 * their cycle). Reported beside the scheduler's figures, never spread over
 * phases. */
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "sched.h"
#include "tracer.h"

void sched__unattributed(struct tracer *t, const struct sched_entry *e, size_t n, struct model_sched_figures *sf)
{
	__u64 st[IT_STAT_MAX];
	uint64_t on = 0, runq = 0, blocked = 0;

	for (size_t i = 0; i < n; i++) {
		if (e[i].key.phase != IT_PHASE_UNATTRIBUTED)
			continue;
		on += e[i].v.oncpu_ns;
		runq += e[i].v.runq_ns;
		blocked += e[i].v.blocked_ns;
	}
	tracer__stats(t, st);
	sf->unattributed.ms = (on + runq + blocked) / 1e6;
	sf->unattributed.oncpu_ms = on / 1e6;
	sf->unattributed.runq_wait_ms = runq / 1e6;
	sf->unattributed.offcpu_ms = blocked / 1e6;
	sf->unattributed.intervals = st[IT_STAT_SCHED_UNATTRIBUTED];
}
