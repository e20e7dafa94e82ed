// SPDX-License-Identifier: BSD-2-Clause
/* The output directory: created if missing (handed to the sudo user), refused
 * when others could plant files in it, and emptied of an earlier run's outputs
 * so a run owns its whole output set. */
#ifndef INFERTRACE_OUTDIR_H
#define INFERTRACE_OUTDIR_H

#include <stdbool.h>

/* Prints a one-line error and returns -errno on failure. */
int output_dir__prepare(const char *dir);
/* True for a name this tool writes into an output directory (or a temp file
 * of one): only those are removed as stale. */
bool output_dir__is_ours(const char *name);

#endif
