// SPDX-License-Identifier: BSD-2-Clause
/* Text that came from a target (symbol names, perf-map names, argv, paths)
 * is any bytes. One escaping rule makes it valid UTF-8 for every format and
 * safe for a terminal, and keeps the bytes recoverable:
 *
 *   each byte of an invalid UTF-8 sequence, and each backslash followed by
 *   `x`, is written as \xHH (two upper-case hex digits).
 *
 * Replacing every \xHH by its byte gives the original back (docs/outputs.md).
 * Text already escaped so (a frame name from a folded file or profile.json)
 * is shown on a terminal or in SVG with TEXT_CONTROLS and without
 * TEXT_BACKSLASH: control characters become \xHH, backslashes stay. */
#ifndef INFERTRACE_TEXT_H
#define INFERTRACE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

enum text_flags {
	TEXT_CONTROLS = 1,     /* escape control characters too (for a terminal) */
	TEXT_KEEP_NEWLINE = 2, /* with TEXT_CONTROLS: leave '\n' and '\t' as they are */
	TEXT_BACKSLASH = 4,    /* escape a backslash followed by 'x' (raw text in) */
};

/* Length of the valid UTF-8 sequence at s, of at most n bytes (1-4), or 0. */
int text__utf8_len(const unsigned char *s, size_t n);
/* Whether in (n bytes) would change under text__escape. */
bool text__needs_escape(const char *in, size_t n, unsigned flags);
/* Escapes in (n bytes) into out, NUL-terminated, at most cap - 1 bytes, never
 * cutting an escape or a character; returns the length the whole needs. */
size_t text__escape(const char *in, size_t n, unsigned flags, char *out, size_t cap);
/* The escaped copy of a NUL-terminated string (malloc'd), or NULL. */
char *text__escaped(const char *in, unsigned flags);
/* For a terminal: s's escaped copy in buf (cut to len), control characters
 * included; returns buf. */
const char *text__term(const char *s, char *buf, size_t len);
/* The leaf end of a folded stack ("a;b;c") in at most `keep` characters,
 * whole frames only: a pointer into `stack` at the first frame kept (the
 * leaf alone when it is longer than keep: a name is never cut). */
const char *text__leaf_frames(const char *stack, size_t keep);
/* v in width.prec into buf, or a dash as wide for a figure that does not
 * exist: never `nan`. Returns buf. */
const char *text__figure(char *buf, size_t len, double v, int width, int prec);

#endif
