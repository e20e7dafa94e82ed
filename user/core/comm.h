// SPDX-License-Identifier: BSD-2-Clause
/* Process names as read from the kernel are any bytes a process chose
 * (prctl(PR_SET_NAME)): made valid UTF-8 where they are read, so every
 * writer (JSON, SVG, folded) may trust them. */
#ifndef INFERTRACE_COMM_H
#define INFERTRACE_COMM_H

/* In place, NUL-terminated: each byte of an invalid UTF-8 sequence, and each
 * control character, becomes '?'. */
void comm__sanitize(char *s);

#endif
