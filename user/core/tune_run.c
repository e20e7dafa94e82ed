// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stop_signals.h"
#include "tune_run.h"

/* ---- the values put in ---- */

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The parameter whose reference starts at s, and the reference's length:
 * {NAME}, and in the environment $NAME (not followed by a name character)
 * or ${NAME}. -1 when none. */
static int reference_at(const char *s, const struct tune_opts *o, bool env, size_t *len)
{
	for (int p = 0; p < o->nparams; p++) {
		const char *name = o->params[p].name;
		size_t n = strlen(name);

		if (s[0] == '{' && !strncmp(s + 1, name, n) && s[n + 1] == '}') {
			*len = n + 2;
			return p;
		}
		if (!env || s[0] != '$')
			continue;
		if (s[1] == '{' && !strncmp(s + 2, name, n) && s[n + 2] == '}') {
			*len = n + 3;
			return p;
		}
		if (!strncmp(s + 1, name, n) && !ident_char(s[n + 1])) {
			*len = n + 1;
			return p;
		}
	}
	return -1;
}

char *tune_subst__string(const char *s, const struct tune_opts *o, const struct tune_values *v, bool env)
{
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);

	if (!f)
		return NULL;
	while (*s) {
		size_t len;
		int p = reference_at(s, o, env, &len);

		if (p >= 0 && v->values[p]) {
			fputs(v->values[p], f);
			s += len;
		} else {
			fputc(*s++, f);
		}
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

void tune_subst__free(char **arr)
{
	for (size_t i = 0; arr && arr[i]; i++)
		free(arr[i]);
	free(arr);
}

static char **subst_all(char *const *in, size_t n, const struct tune_opts *o, const struct tune_values *v, bool env)
{
	char **out = calloc(n + 1, sizeof(*out));

	for (size_t i = 0; out && i < n; i++) {
		out[i] = tune_subst__string(in[i], o, v, env);
		if (!out[i]) {
			tune_subst__free(out);
			return NULL;
		}
	}
	return out;
}

char **tune_subst__argv(const struct tune_opts *o, const struct tune_values *v)
{
	return subst_all(o->command, (size_t)o->ncommand, o, v, false);
}

char **tune_subst__env(char *const *envp, const struct tune_opts *o, const struct tune_values *v)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return subst_all(envp, n, o, v, true);
}

/* Whether s refers to parameter p (as an argument, or env) */
static bool refers(const char *s, const struct tune_opts *o, int p, bool env)
{
	for (; *s; s++) {
		size_t len;

		if (reference_at(s, o, env, &len) == p)
			return true;
	}
	return false;
}

bool tune_subst__where(const struct tune_opts *o, char *const *envp, const char *name, char *as, size_t len)
{
	int p = -1;

	for (int i = 0; i < o->nparams; i++)
		if (!strcmp(o->params[i].name, name))
			p = i;
	if (p < 0)
		return false;
	for (int i = 0; i < o->ncommand; i++) {
		const char *a = o->command[i], *eq = strchr(a, '=');

		if (!refers(a, o, p, false))
			continue;
		if (a[0] == '-' && eq && (size_t)(eq - a) < strcspn(a, "{$"))
			snprintf(as, len, "%.*s", (int)(eq - a), a);
		else if (a[0] == '-' && strcspn(a, "{") > 1) /* -t{threads} */
			snprintf(as, len, "%.*s", (int)strcspn(a, "{"), a);
		else if (i > 0 && o->command[i - 1][0] == '-' && o->command[i - 1][1] && !strchr(o->command[i - 1], '{'))
			snprintf(as, len, "%s", o->command[i - 1]);
		else
			snprintf(as, len, "argument %d", i);
		return true;
	}
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');

		if (eq && refers(eq + 1, o, p, true)) {
			snprintf(as, len, "env %.*s", (int)(eq - envp[i]), envp[i]);
			return true;
		}
	}
	return false;
}

/* ---- signals ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

void tune_run__catch_signals(void)
{
	stop_signals__set(on_stop); /* sigaction without SA_RESTART */
	signal(SIGPIPE, SIG_IGN);
}

int tune_run__stopped(void)
{
	return stop_signal;
}

/* ---- one run ---- */

int tune_run__record(const struct tune_opts *o, char *const *argv, char *const *envp, const char *run_dir,
		     int log_fd)
{
	size_t n = 0, k = 0;
	char **args;
	pid_t pid;
	int status, forwarded = 0;

	while (argv[n])
		n++;
	args = calloc(n + (size_t)o->nrecord_args + 8, sizeof(*args));
	if (!args)
		return -ENOMEM;
	args[k++] = "infertrace";
	args[k++] = "record";
	args[k++] = "-q";
	args[k++] = "-o";
	args[k++] = (char *)run_dir;
	for (int i = 0; i < o->nrecord_args; i++)
		args[k++] = o->record_args[i];
	args[k++] = "--";
	for (size_t i = 0; i < n; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(args);
		return -errno;
	}
	if (!pid) {
		if (dup2(log_fd, STDOUT_FILENO) < 0 || dup2(log_fd, STDERR_FILENO) < 0)
			_exit(127);
		/* its stdin stays the terminal's: a run that reads it still can */
		execve("/proc/self/exe", args, envp);
		dprintf(STDERR_FILENO, "infertrace: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	free(args);
	/* polled, not a blocking wait: a signal that lands between a check
	 * and the wait would otherwise go unseen until the run ends */
	for (;;) {
		pid_t w;

		/* Ctrl-C on a terminal reaches the run too; a kill(1) of the tune
		 * alone does not: pass it on, once, and wait for the outputs */
		if (stop_signal && !forwarded) {
			forwarded = stop_signal;
			kill(pid, forwarded);
		}
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void tune_run__eta(char *buf, size_t len, double mean_run_s, unsigned int runs_left)
{
	double s = mean_run_s * runs_left;
	unsigned long t = s > 0 ? (unsigned long)(s + 0.5) : 0;

	if (!(mean_run_s > 0))
		snprintf(buf, len, "time left unknown until a run ends");
	else if (t >= 3600)
		snprintf(buf, len, "about %luh%02lum left", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "about %lum%02lus left", t / 60, t % 60);
	else
		snprintf(buf, len, "about %lus left", t);
}
