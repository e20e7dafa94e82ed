// SPDX-License-Identifier: BSD-2-Clause
/* Opening files a target names (its mapped files, probe objects, its
 * executable): a FIFO, a device or a socket put in place of one must not hang
 * or confuse the tracer. */
#ifndef INFERTRACE_SAFE_OPEN_H
#define INFERTRACE_SAFE_OPEN_H

#include <stdio.h>

/* open(O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY), then fstat: a regular file or
 * -1 with errno EINVAL (ENOENT etc. from open). Never blocks on a FIFO. */
int safe_open_regular(const char *path);
/* The same as a read-only stream. NULL with errno set. */
FILE *safe_fopen_regular(const char *path);

#endif
