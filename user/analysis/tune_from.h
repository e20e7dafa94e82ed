// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace tune --from RUN_DIR`: the recording's recommendations that
 * carry a value a runner takes (threads, context size, batch sizes, GPU
 * layers) become parameters, each with two values: the run's current one
 * (the baseline) and the recommended one. For runners tune knows
 * (llama.cpp's llama-cli and llama-server, with their documented
 * environment variables) the command is rewritten to take them; for any
 * other command, {NAME} already in it takes them, else the --param lines
 * to fill in are listed. Pure: unit-tested on models and argv. */
#ifndef INFERTRACE_TUNE_FROM_H
#define INFERTRACE_TUNE_FROM_H

#include <stddef.h>

struct model;

#define TUNE_FROM_MAX 8

struct tune_proposal {
	char name[32];         /* threads, ctx, batch, ubatch, gpu_layers */
	char current[32];      /* "" when the run does not show it */
	char recommended[32];
	char title[96];        /* the recommendation's */
	char why[192];         /* its current_value text */
};

struct tune_from_plan {
	struct tune_proposal props[TUNE_FROM_MAX];
	size_t nprops;
	const char *runner;    /* "llama.cpp", or NULL: not one tune knows */
	char **argv;           /* the command, rewritten (NULL-terminated) */
	char **env_set;        /* "NAME=VALUE" entries to put into the environment */
	size_t nenv_set;
	char *params[TUNE_FROM_MAX];   /* NAME=CURRENT,RECOMMENDED, as --param takes it */
	size_t nparams;
	char *unplaced[TUNE_FROM_MAX]; /* the same, for parameters the command has no place for */
	size_t nunplaced;
	char **skipped;        /* recommendations left out, and why (NULL-terminated) */
	size_t nskipped;
};

/* The plan from m's recommendations for argv (NULL-terminated) in envp.
 * names_given (NULL-terminated, may be NULL): parameters given with
 * --param, which are left as given. 0 or -ENOMEM. */
int tune_from__plan(const struct model *m, char *const *argv, char *const *envp, const char *const *names_given,
		    struct tune_from_plan *out);
void tune_from__free(struct tune_from_plan *p);

#endif
