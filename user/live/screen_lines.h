// SPDX-License-Identifier: BSD-2-Clause
/* The lines of a live screen (top's view and its /proc view while the
 * programs load), each formatted, cleaned of escape sequences and cut at
 * the terminal's width. */
#ifndef INFERTRACE_SCREEN_LINES_H
#define INFERTRACE_SCREEN_LINES_H

#define SCREEN_LINE_MAX 256

/* Appends a line to lines[*n] when *n < nlines (else drops it), cut at
 * width (< 0: not cut). Names come from the targets: no escape sequence
 * reaches the terminal. */
void screen__line(char lines[][SCREEN_LINE_MAX], int *n, int nlines, int width, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
