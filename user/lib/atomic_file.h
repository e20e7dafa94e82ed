// SPDX-License-Identifier: BSD-2-Clause
/* Files written atomically: a temporary file in the same directory, renamed
 * over the final name only when everything was written and flushed, so a
 * crash, a full disk or a signal never leaves a half-written output. */
#ifndef INFERTRACE_ATOMIC_FILE_H
#define INFERTRACE_ATOMIC_FILE_H

#include <stdio.h>

struct atomic_file;

/* Opens DIR/NAME.tmp.PID for writing. NULL with errno set on failure. */
struct atomic_file *atomic_file__open(const char *dir, const char *name);
FILE *atomic_file__stream(struct atomic_file *af);
/* Flushes, fsyncs and renames into place; removes the temp file on any error.
 * Frees af in every case. 0 or -errno. */
int atomic_file__commit(struct atomic_file *af);
/* Drops the temp file. Accepts NULL. */
void atomic_file__abort(struct atomic_file *af);

#endif
