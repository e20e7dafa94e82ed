// SPDX-License-Identifier: BSD-2-Clause
/* `py:` specs: Python functions as cycles, cycle markers, phases and counts.
 *
 * Uprobes cannot see ordinary Python calls, so a call's time comes from
 * observing the thread's Python stack: at every on-CPU sample and at every
 * switch out and in of the target's threads (IT_EV_PY_OBS). A call is the
 * root-most frame of its function on the stack, told apart from the next
 * call of the same function by its identity (bpf/python.bpf.h: the frame's
 * address, its arguments and its caller's locals) or by an observation
 * without it in between. Between two observations of a thread:
 *   - after a switch-out the thread ran nothing until its switch-in: the
 *     stack did not change, the interval is exact;
 *   - otherwise a call that begins or ends between them is taken to do so
 *     half-way (an unbiased estimate when the edge falls anywhere in the
 *     interval); half the interval is that edge's resolution.
 * Pure logic, fed by the python concern, read by the probes concern's spans. */
#ifndef INFERTRACE_PYSPANS_H
#define INFERTRACE_PYSPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PYSPANS_MAX_SPECS 16 /* IT_PY_EDGE_SPECS: each is a kernel edge */

struct pyspans;

/* One function of a spec found on an observed stack: its root-most frame. */
struct pyspan_hit {
	int spec;
	uint32_t depth;  /* from the root */
	uint64_t call;   /* call identity; 0: not known (a frame seen before it was watched) */
};

/* One call of a spec's function on one thread. */
struct pyspan_call {
	pid_t tgid, tid;
	int spec, role, id;    /* role: IT_ROLE_*; id: phase or count id */
	uint64_t start_ns, end_ns;
	bool open;             /* still running at the thread's last observation */
};

struct pyspans_resolution {
	uint64_t observations;
	uint64_t edges;        /* call edges placed between two observations */
	double mean_ms, max_ms; /* half the interval around those edges */
};

/* FNV-1a of a name's bytes, as bpf/python.bpf.h hashes the names it reads. */
static inline uint64_t pyspans__name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

bool pyspans__is_spec(const char *text);
const char *pyspans__spec_qualname(const struct pyspans *p, int spec);
struct pyspans *pyspans__new(void);
void pyspans__free(struct pyspans *p);
/* Adds `py:QUALNAME` or `py:MODULE:QUALNAME` with its role (IT_ROLE_*) and
 * phase/count id. 0, or -EINVAL / -E2BIG with a one-line reason in err. */
int pyspans__add_spec(struct pyspans *p, const char *text, int role, int id, char *err, size_t errlen);
int pyspans__nspecs(const struct pyspans *p);
/* --max-memory: while hold is false, calls are counted (pyspans__not_kept:
 * phase calls, or cycles when `cycles`) instead of kept. */
void pyspans__set_hold(struct pyspans *p, bool hold);
uint64_t pyspans__not_kept(const struct pyspans *p, bool cycles);
bool pyspans__has_role(const struct pyspans *p, int role);
const char *pyspans__spec_text(const struct pyspans *p, int spec);
void pyspans__spec_role(const struct pyspans *p, int spec, int *role, int *id);
/* The spec a function matches (qualname, file name as recorded); -1: none.
 * MODULE matches the file's basename with or without `.py`. */
int pyspans__match(const struct pyspans *p, const char *qualname, const char *file);
/* Every spec the function matches (bit i: spec i): one function may be a
 * cycle marker and a phase at once. */
uint32_t pyspans__match_mask(const struct pyspans *p, const char *qualname, const char *file);
/* The hash BPF compares a code object's file with (pyspans__name_hash of
 * the module's basename without `.py`); 0 for a spec of any file. */
uint64_t pyspans__spec_module_hash(const struct pyspans *p, int spec);

/* `py:@callers`: a phase's Python callers. The phase's native probes (calls
 * made a few times per transaction, not per row) are observations too
 * (IT_PY_OBS_PROBE); the Python functions found calling them are timed
 * whole from the observations, as `py:` phases are (python concern). */
#define PYSPANS_CALLERS "@callers"
bool pyspans__is_callers(const struct pyspans *p, int spec);
int pyspans__callers_spec(const struct pyspans *p); /* -1: none */
/* Calls found after the fact (the callers' replay), added to pyspans__calls
 * in place of the previous set; 0 or -ENOMEM. */
int pyspans__set_extra(struct pyspans *p, const struct pyspan_call *calls, size_t n);

/* One observation of thread tid at ts (kind: IT_PY_OBS_*); hits: the specs'
 * functions on its stack (none: no Python frames or none of them). */
int pyspans__observe(struct pyspans *p, pid_t tgid, pid_t tid, uint64_t ts, int kind,
		     const struct pyspan_hit *hits, int nhits);
/* Every call so far, calls still open ended at their thread's last
 * observation (a copy: the state goes on). 0 or -ENOMEM. */
int pyspans__calls(const struct pyspans *p, struct pyspan_call **out, size_t *n);
void pyspans__resolution(const struct pyspans *p, struct pyspans_resolution *r);

#endif
