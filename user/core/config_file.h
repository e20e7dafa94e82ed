// SPDX-License-Identifier: BSD-2-Clause
/* --config FILE: the options of `infertrace record` as a JSON object, read
 * through the same option table as the command line (options.h). */
#ifndef INFERTRACE_CONFIG_FILE_H
#define INFERTRACE_CONFIG_FILE_H

#include <stdbool.h>
#include <jansson.h>

#include "options.h"

/* Applies the JSON object in path to o (after the defaults, before the
 * command line, which wins). cli_target: the command line names a command or
 * PIDs, so the file's "command" is not used. On error prints one line and
 * returns -EINVAL or -errno. */
int config_file__apply(struct record_opts *o, const char *path, bool cli_target);

/* The part of a `config` document (record_opts__json's, or a loaded
 * profile's) the analysis reads, into m->run.asked, its strings into
 * model.names. 0 or -ENOMEM. */
struct model;
int config_file__asked(json_t *config, struct model *m);

#endif
