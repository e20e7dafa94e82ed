// SPDX-License-Identifier: BSD-2-Clause
/* --config FILE: the options of `infertrace record` as a JSON object. */
#ifndef INFERTRACE_CONFIG_FILE_H
#define INFERTRACE_CONFIG_FILE_H

#include <stdbool.h>

#include "options.h"

/* Applies the JSON object in path to o (after the defaults, before the
 * command line, which wins). cli_target: the command line names a command or
 * PIDs, so the file's are not used. On error prints one line and returns
 * -EINVAL or -errno. */
int config_file__apply(struct record_opts *o, const char *path, bool cli_target);
/* The FILE of the first --config FILE / --config=FILE in argv before "--". */
const char *config_file__find_arg(int argc, char **argv);

#endif
