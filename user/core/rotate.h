// SPDX-License-Identifier: BSD-2-Clause
/* --rotate SECONDS: one output directory per period (OUT/0000, OUT/0001 ...)
 * for runs of days. A period's model is the recording's snapshot sliced to
 * the period: the cycles that ended in it (each cycle in exactly one
 * period), the phase calls and trace samples of its time, and the stacks,
 * phase histograms and lost counters less what the earlier periods held.
 * After a period is written the probes concern forgets its cycles and calls
 * (probes__forget_before), so the model rebuilt each period stays small. */
#ifndef INFERTRACE_ROTATE_H
#define INFERTRACE_ROTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "model.h"

struct rotation_base; /* cumulative figures of the periods written */

struct rotation {
	double period_s;
	unsigned int keep;     /* 0: keep every period directory */
	unsigned int period;   /* number of the period being recorded */
	uint64_t from_ns;      /* its start (CLOCK_MONOTONIC) */
	struct rotation_base *base, *pending;
};

/* Slices m (at MODEL_COLLECTED, the recording's cumulative model) to the
 * period [from, to); final: the recording ended at `to`, and cycles still
 * open belong to this last period. The cumulative figures are kept as
 * pending, for rotation__commit. 0 or -errno. */
int rotation__slice(struct rotation *r, struct model *m, uint64_t from, uint64_t to, bool final);
/* The period just sliced was written: its cumulative figures become the
 * base the next period is measured against. */
void rotation__commit(struct rotation *r);
void rotation__free(struct rotation *r);

/* "OUT/NNNN" for period n. */
void rotation__dir(const char *out, unsigned int n, char *buf, size_t len);
/* Creates OUT/NNNN (atomic_dir__mode(), to the sudo user). 0 or -errno. */
int rotation__mkdir(const char *out, unsigned int n);
/* The same for any path (a period's temporary directory). */
int rotation__mkdir_path(const char *dir);
int rotation__remove_path(const char *dir);
/* True when OUT/NNNN or OUT/.NNNN.tmp is taken by something this run cannot
 * write into (planted by another user in a shared directory); WHY says what. */
bool rotation__taken(const char *out, unsigned int n, char *why, size_t whylen);
/* Removes period directory n: only the files this tool writes, then the
 * directory; a directory that holds anything else is left. 0 or -errno. */
int rotation__remove(const char *out, unsigned int n);
/* Removes period directories of an earlier run (names of four or more
 * digits holding only this tool's files). */
void rotation__remove_stale(const char *out);

#endif
