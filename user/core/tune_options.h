// SPDX-License-Identifier: BSD-2-Clause
/* Options of `infertrace tune`: its own table (tune_options[]), which the
 * parser, --help, the man page and the shell completion are made from, and
 * record's options (options.h), which it checks and passes to every run. */
#ifndef INFERTRACE_TUNE_OPTIONS_H
#define INFERTRACE_TUNE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TUNE_MAX_PARAMS 8
#define TUNE_MAX_VALUES 32
#define TUNE_MAX_RUNS 100
#define TUNE_DEFAULT_RUNS 2
#define TUNE_DEFAULT_OUTPUT "infertrace-tune"

/* --param NAME=V1,V2,...: {NAME} in the command's arguments, $NAME (or
 * ${NAME}, {NAME}) in its environment, take each value. */
struct tune_param {
	char *name;
	char *values[TUNE_MAX_VALUES];
	int nvalues;
	int baseline; /* the baseline's value: 0 unless --baseline NAME=VALUE */
};

struct tune_opts {
	const char *output_dir;
	struct tune_param params[TUNE_MAX_PARAMS];
	int nparams;
	const char *metric;      /* as given; NULL: the default (tune_stats.h) */
	unsigned int cycles;     /* cycles measured per run after the warm-up; 0: all */
	unsigned int runs;       /* runs of each setting */
	int warmup;              /* cycles left out at each run's start; -1: the rule */
	bool grid;               /* every combination, not one parameter at a time */
	const char *from;        /* --from RUN_DIR */
	const char *target_platform;
	bool force;
	bool quiet;
	/* record's options as given, checked, passed to every run */
	char **record_args;
	int nrecord_args;
	char **command;          /* NULL-terminated, after "--" */
	int ncommand;
};

struct tune_option {
	const char *name;   /* --NAME */
	int key;            /* a short letter, or 0 */
	const char *arg;    /* the argument's name; NULL for a flag */
	const char *doc;
};

/* The table, ending with a row whose name is NULL. */
extern const struct tune_option tune_options[];

/* Parses argv of `tune` (argv[0] is the command's name). 0; 1 when help
 * or the version was printed (exit 0); or -EINVAL after a one-line message. */
int tune_opts__parse(struct tune_opts *o, int argc, char **argv);
void tune_opts__free(struct tune_opts *o);
/* Adds --param NAME=V1,V2 (as the command line does). 0 or -EINVAL with a
 * reason in err. */
int tune_opts__add_param(struct tune_opts *o, const char *arg, char *err, size_t errlen);
/* --help's text. */
void tune_opts__help(FILE *f);

#endif
