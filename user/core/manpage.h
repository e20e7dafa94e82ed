// SPDX-License-Identifier: BSD-2-Clause
/* The manual page and the bash completion, generated from the option table
 * (options.h) and the exit codes (exit_codes.h), so that neither can miss an
 * option: `infertrace --man`, `infertrace --completion bash`. */
#ifndef INFERTRACE_MANPAGE_H
#define INFERTRACE_MANPAGE_H

#include <stdio.h>

/* Each returns 0, or -EIO when writing failed. */
int manpage__write(FILE *f);
int completion__write_bash(FILE *f);

#endif
