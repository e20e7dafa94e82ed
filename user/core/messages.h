// SPDX-License-Identifier: BSD-2-Clause
/* Every message names the program and its subcommand, as perf's do
 * ("infertrace record: ..."). Modules print "infertrace: ..." to stderr and
 * know nothing of the subcommand they run under; messages__init() puts a
 * filter on stderr that adds it at the start of each line, once, here. The
 * same filter owns the terminal's status line (the record progress): any
 * other output clears it first, so messages never run into it. */
#ifndef INFERTRACE_MESSAGES_H
#define INFERTRACE_MESSAGES_H

#include <stdbool.h>
#include <stddef.h>

/* "infertrace" alone, or "infertrace SUBCOMMAND". */
const char *messages__prog(void);
/* Names the subcommand and installs the stderr filter (once). */
void messages__init(const char *subcommand);
/* Shows line as the terminal's status line (replacing the previous one);
 * NULL clears it. Written straight to fd 2, unbuffered. */
void messages__status(const char *line);

/* The filter's rewrite, for tests: copies in[0..n) into out (size cap),
 * replacing "infertrace: " at the start of each line by "PROG: ";
 * *at_line_start carries across calls. Returns the length of the whole
 * result, as snprintf: when it is >= cap, out holds only its first cap bytes. */
size_t messages__rewrite(const char *prog, const char *in, size_t n, char *out, size_t cap,
			 bool *at_line_start);

#endif
