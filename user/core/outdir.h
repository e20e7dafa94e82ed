// SPDX-License-Identifier: BSD-2-Clause
/* The output directory: resolved one component at a time (no symbolic link
 * another user owns is followed), created if missing (0700, or 0755 with
 * --share-outputs; handed to the sudo user), refused when others could plant
 * files in it, locked for one recording, emptied of an earlier run's
 * outputs so a run owns its whole output set, and every output name checked
 * free at the start (claimed by an empty file in a sticky shared directory). */
#ifndef INFERTRACE_OUTDIR_H
#define INFERTRACE_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct output_claim {
	char *name;
	dev_t dev;
	ino_t ino;
};

struct output_dir {
	int fd; /* held open for the recording: its flock is the lock */
	struct output_claim *claims;
	size_t nclaims;
};

/* Prepares DIR for a recording whose phases are PHASES (their folded stacks'
 * names are checked too). Prints a one-line error and returns -errno on
 * failure: -EBUSY when another recording holds it. */
int output_dir__prepare(struct output_dir *od, const char *dir, const char *const *phases, size_t nphases);
/* Removes the claims no output replaced and drops the lock. Accepts a zeroed
 * od with fd -1. */
void output_dir__release(struct output_dir *od);
/* True for a name this tool writes into an output directory (or a temp file
 * of one): only those are removed as stale. */
bool output_dir__is_ours(const char *name);

#endif
