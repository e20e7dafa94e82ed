// SPDX-License-Identifier: BSD-2-Clause
/* Time whose phase is not known: intervals that an edge no probe saw would
 * have split (bpf/sched.bpf.h keeps them in phase IT_PHASE_UNATTRIBUTED of
 * their cycle). Reported beside the scheduler's figures, never spread over
 * phases. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "sched.h"
#include "tracer.h"

json_t *sched__unattributed_json(struct tracer *t)
{
	struct sched_entry *e = NULL;
	__u64 st[IT_STAT_MAX];
	uint64_t on = 0, runq = 0, blocked = 0;
	size_t n = 0;

	if (!sched__read_times(t, &e, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (e[i].key.phase != IT_PHASE_UNATTRIBUTED)
				continue;
			on += e[i].v.oncpu_ns;
			runq += e[i].v.runq_ns;
			blocked += e[i].v.blocked_ns;
		}
		free(e);
	}
	tracer__stats(t, st);
	return json_pack("{s:f,s:f,s:f,s:f,s:I}", "ms", (on + runq + blocked) / 1e6, "oncpu_ms", on / 1e6,
			 "runq_wait_ms", runq / 1e6, "offcpu_ms", blocked / 1e6,
			 "intervals", (json_int_t)st[IT_STAT_SCHED_UNATTRIBUTED]);
}
