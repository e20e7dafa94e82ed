// SPDX-License-Identifier: BSD-2-Clause
#ifndef INFERTRACE_TUNE_H
#define INFERTRACE_TUNE_H

#include <stdio.h>

struct tune_result;

/* `infertrace tune`: runs the command per setting under `record`, then
 * the table and settings.json (docs/tune.md). */
int cmd_tune(int argc, char **argv);
/* The table as tune prints it and writes into table.txt. */
void tune__print_table(FILE *f, const struct tune_result *t);

#endif
