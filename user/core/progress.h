// SPDX-License-Identifier: BSD-2-Clause
/* The one-line progress indicator of `record` on a terminal: elapsed time,
 * cycles, samples and lost events, refreshed about once a second. Silent
 * when stderr is not a terminal or with -q. */
#ifndef INFERTRACE_PROGRESS_H
#define INFERTRACE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recording;

/* Starts it (the clock of "elapsed") unless quiet or stderr is no terminal. */
void progress__start(bool quiet);
/* Called often; redraws the line when a second has passed since the last. */
void progress__tick(struct recording *rec);
/* Clears the line. */
void progress__end(void);

/* The line's text; returns snprintf's length. */
int progress__format(char *buf, size_t len, double elapsed_s, uint64_t cycles, uint64_t samples,
		     uint64_t lost);

#endif
