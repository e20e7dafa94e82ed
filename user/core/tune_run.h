// SPDX-License-Identifier: BSD-2-Clause
/* The runs of `infertrace tune`: a setting's values put into the command
 * and its environment, and one run of `infertrace record` (this same
 * binary, /proc/self/exe) as a child process into its own output
 * directory, so that every run stays a normal recording. A stop signal
 * (Ctrl-C) is passed to the running record, which writes its outputs; the
 * tune then stops between runs. */
#ifndef INFERTRACE_TUNE_RUN_H
#define INFERTRACE_TUNE_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "tune_options.h"

/* One value per parameter: values[i] for opts->params[i]. */
struct tune_values {
	const char *values[TUNE_MAX_PARAMS];
};

/* s with every {NAME} replaced by its value; for the environment (env
 * true) $NAME and ${NAME} too. A new string (NULL: out of memory). */
char *tune_subst__string(const char *s, const struct tune_opts *o, const struct tune_values *v, bool env);
/* The command's argv and the environment (envp) with the values put in:
 * NULL-terminated arrays of new strings; free with tune_subst__free. */
char **tune_subst__argv(const struct tune_opts *o, const struct tune_values *v);
char **tune_subst__env(char *const *envp, const struct tune_opts *o, const struct tune_values *v);
void tune_subst__free(char **arr);
/* Where parameter NAME goes, under the runner's own name: the option
 * before {NAME} ("-t", "--threads"), the option it is part of
 * ("--threads={NAME}" gives "--threads"), "env OMP_NUM_THREADS", or
 * "argument N". false when NAME appears nowhere. */
bool tune_subst__where(const struct tune_opts *o, char *const *envp, const char *name, char *as, size_t len);

/* Stop signals (stop_signals.h) set the flag tune_run__stopped reads;
 * installed without SA_RESTART so that waiting for a run sees them. */
void tune_run__catch_signals(void);
/* The stop signal received, or 0. */
int tune_run__stopped(void);

/* Runs `/proc/self/exe record -q -o RUN_DIR RECORD_ARGS -- ARGV` with envp,
 * its stdout and stderr appended to log_fd. Returns its exit status
 * (0..255, 128+N when killed by signal N), or -errno when it could not be
 * started. A stop signal that comes meanwhile is passed on to it once. */
int tune_run__record(const struct tune_opts *o, char *const *argv, char *const *envp, const char *run_dir,
		     int log_fd);

/* "about 1m05s left" style: the time left at the mean of the runs done. */
void tune_run__eta(char *buf, size_t len, double mean_run_s, unsigned int runs_left);

#endif
