// SPDX-License-Identifier: BSD-2-Clause
/* Probes concern: places the uprobes/uretprobes/USDT probes named by
 * --cycle, --cycle-marker, --phase, --count and --preset, follows cycle and
 * phase edges, and gives the model its cycles, their phases and counts,
 * and the `probes` section. */
#ifndef INFERTRACE_PROBES_H
#define INFERTRACE_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One cycle as the probes saw it (CLOCK_MONOTONIC ns). */
struct cycle_span {
	pid_t tgid;
	uint32_t bpf_index;  /* the cycle number the kernel tagged samples with */
	uint64_t start_ns, end_ns;
	bool open_at_end;    /* still open when the process or the recording ended */
	bool abandoned;      /* closed because its call never returned */
	bool ended_at_last_phase; /* last marker cycle: ends at its last phase call */
};

/* One outermost phase call on one thread. */
struct phase_call {
	pid_t tgid, tid;
	uint32_t cycle, phase, probe;
	uint64_t entry_ns, exit_ns;
};

/* Union of [entry, exit) intervals of calls (any thread), clipped to
 * [from, to): the wall time during which at least one thread was in the
 * phase. Sorts calls by entry. */
uint64_t phase_calls__union_ns(struct phase_call *calls, size_t n, uint64_t from, uint64_t to);

/* qsort order of phase calls: by process, cycle, phase, then entry. */
int phase_call__cmp(const void *a, const void *b);

struct recording;
struct pyspans;
/* The `py:` specs of the recording and the calls seen so far; NULL when none. */
struct pyspans *probes__pyspans(const struct recording *rec);
/* No cycle spec: each process's life is one cycle. */
bool probes__whole_run(const struct recording *rec);
/* `py:@callers`: the Python functions found calling the phase's probes,
 * "qualname (file), ..." ("" for none); python concern. */
const char *python_concern__callers(const struct recording *rec, char *buf, size_t len);
struct pyspans_resolution;
/* How finely the kernel placed the `py:` edges (py_edge_res); python concern. */
void python_concern__edge_resolution(const struct recording *rec, struct pyspans_resolution *r);
/* A preset's fallback probes (presets.h) are placed now; why says why, in
 * words ("its Python caller is module-level code ..."). Once. */
void probes__wake_fallback(struct recording *rec, const char *why);
/* Cycles begun so far (for the live progress line); 0 without cycle probes. */
size_t probes__cycles_seen(const struct recording *rec);
/* --rotate: forgets the cycles that ended before ns (closed ones) and the
 * phase calls that no remaining cycle holds and that ended before ns. */
void probes__forget_before(struct recording *rec, uint64_t ns);

#endif
