// SPDX-License-Identifier: BSD-2-Clause
/* The recording's spool: finished cycles, phase calls and trace events
 * (samples and off-CPU intervals for trace.json) appended, as they complete,
 * to one file in the output directory, `records.spool`, so that the tracer's
 * memory stays flat however long the run; the model is built from it at
 * every snapshot and at the end. The file is the tracer's own, native-endian
 * and versionless: each record is a header {kind, size} and the struct of
 * its kind (spool_kind below), in the order they arrived. It is removed
 * once the outputs are written; a killed tracer leaves it, and the next
 * recording into the directory removes it with the other stale outputs. */
#ifndef INFERTRACE_SPOOL_H
#define INFERTRACE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_NAME "records.spool"

enum spool_kind {
	SPOOL_CYCLE = 1,        /* struct cycle_span (probes.h): a closed cycle */
	SPOOL_PHASE_CALL = 2,   /* struct phase_call (probes.h) */
	SPOOL_TRACE_SAMPLE = 3, /* struct model_trace_sample */
	SPOOL_OFFCPU = 4,       /* struct model_offcpu_interval */
	SPOOL_NKINDS
};

struct spool;
struct model;

/* Creates DIRFD/records.spool (0600; one left there must have been removed
 * as stale: a file there now is refused). 0 or -errno. */
int spool__open(struct spool **out, int dirfd);
/* Removes the file (when remove) and frees; accepts NULL. */
void spool__close(struct spool *s, bool remove);
/* Appends one record. 0, or -errno (a write error: the disk is full): the
 * record is not kept, and the caller counts it as lost. */
int spool__append(struct spool *s, enum spool_kind kind, const void *rec, uint32_t size);
/* Records of this kind appended so far (and still kept). */
uint64_t spool__count(const struct spool *s, enum spool_kind kind);
/* Calls fn for every record of `kind`, in the order appended; a non-zero
 * return stops the walk and is returned. 0 or -errno. */
int spool__each(struct spool *s, enum spool_kind kind, int (*fn)(void *ctx, const void *rec, uint32_t size),
		void *ctx);
/* Rewrites the spool keeping the records for which keep returns true (every
 * record of a kind keep does not decide: it returns true for them). Used by
 * --rotate once a period is written. 0 or -errno (the spool is unchanged). */
int spool__filter(struct spool *s, bool (*keep)(void *ctx, enum spool_kind kind, const void *rec, uint32_t size),
		  void *ctx);
/* Appends the spooled trace samples and off-CPU intervals to m's (a
 * snapshot's or the final model). 0 or -ENOMEM. */
int spool__load_trace(struct spool *s, struct model *m);

#endif
