// SPDX-License-Identifier: BSD-2-Clause
/* GPU concern: kernel, copy and memset timing from CUPTI activity records.
 *
 * For a command record launches (--cupti auto, --gpu other than none), it
 * opens the channel (core/gpu_reader.c) and puts two variables in the
 * command's environment: IT_GPU_CHANNEL_ENV, the channel's socket, and
 * CUDA_INJECTION64_PATH, infertrace's injection library, which the CUDA
 * driver loads at cuInit in every process of the command. A command whose
 * environment already names an injection library keeps it. Collect copies
 * the records into the model; analysis/gpu_join.c joins them to the
 * cycles and phases at derive. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "concerns.h"
#include "gpu_reader.h"
#include "procfs.h"

#define INJECTION_ENV "CUDA_INJECTION64_PATH"
#define INJECTION_LIB "libinfertrace-cupti.so"
#define BYE_WAIT_MS 1000 /* after the target's end, for every process's last flush */

struct gpu_state {
	struct gpu_reader *reader;
	char *env_channel, *env_injection;  /* "NAME=VALUE", in rec->child_env */
	char *env_sample;
	char notice[240];                   /* said at configure: model.gpu_activity.notice */
};

/* The injection library beside the executable; NULL when missing. */
static char *find_library(void)
{
	char exe[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	if (asprintf(&path, "%s/%s", exe, INJECTION_LIB) < 0)
		return NULL;
	if (access(path, R_OK)) {
		free(path);
		return NULL;
	}
	return path;
}

/* Whether the process has libcuda mapped: a GPU process worth the -p line. */
static bool maps_libcuda(pid_t pid)
{
	char path[64], *buf = malloc(1 << 20);
	ssize_t n;
	bool found;

	if (!buf)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	n = procfs__read(path, buf, 1 << 20);
	found = n > 0 && strstr(buf, "libcuda.so");
	free(buf);
	return found;
}

static int gpu_configure(struct recording *rec)
{
	const struct record_opts *o = &rec->opts;
	struct gpu_state *st;
	char *lib;
	int err;

	if ((o->cupti && !strcmp(o->cupti, "off")) || (o->gpu_mode && !strcmp(o->gpu_mode, "none")))
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	rec->gpu = st;
	if (!o->command) {
		for (int i = 0; i < o->npids; i++)
			if (maps_libcuda(o->pids[i])) {
				snprintf(st->notice, sizeof(st->notice),
					 "kernel timing needs the process to be started by record (or with %s and %s set)",
					 INJECTION_ENV, IT_GPU_CHANNEL_ENV);
				fprintf(stderr, "infertrace: PID %d: GPU %s; NVML data is kept\n", o->pids[i], st->notice);
				break;
			}
		return 0;
	}
	err = gpu_reader__open(&st->reader, &o->run_as);
	if (err) {
		fprintf(stderr, "infertrace: warning: no GPU kernel timing: cannot open its channel: %s\n",
			strerror(-err));
		snprintf(st->notice, sizeof(st->notice), "the tracer could not open the channel: %s", strerror(-err));
		return 0;
	}
	if (asprintf(&st->env_channel, "%s=%s", IT_GPU_CHANNEL_ENV, gpu_reader__path(st->reader)) < 0) {
		st->env_channel = NULL;
		return -ENOMEM;
	}
	err = recording__add_child_env(rec, st->env_channel);
	if (err)
		return err;
	/* auto (the default) when not asked: the library's own default is full */
	if (asprintf(&st->env_sample, "%s=%s", IT_GPU_SAMPLE_ENV, o->cupti ? o->cupti : "auto") < 0) {
		st->env_sample = NULL;
		return -ENOMEM;
	}
	err = recording__add_child_env(rec, st->env_sample);
	if (err)
		return err;
	if (getenv(INJECTION_ENV)) {
		/* the command's own injection library (Nsight, a profiler): left alone */
		snprintf(st->notice, sizeof(st->notice), "the command sets %s=%.160s: left as it is", INJECTION_ENV,
			 getenv(INJECTION_ENV));
		fprintf(stderr, "infertrace: GPU kernel timing: %s\n", st->notice);
		return 0;
	}
	lib = find_library();
	if (!lib) {
		snprintf(st->notice, sizeof(st->notice), "%s not found beside the infertrace executable", INJECTION_LIB);
		fprintf(stderr, "infertrace: warning: no GPU kernel timing: %s\n", st->notice);
		return 0;
	}
	err = asprintf(&st->env_injection, "%s=%s", INJECTION_ENV, lib) < 0 ? -ENOMEM : 0;
	free(lib);
	if (err) {
		st->env_injection = NULL;
		return err;
	}
	return recording__add_child_env(rec, st->env_injection);
}

static void gpu_tick(struct recording *rec)
{
	if (rec->gpu && rec->gpu->reader)
		gpu_reader__set_hold(rec->gpu->reader, recording__may_hold(rec));
}

static void gpu_stop(struct recording *rec)
{
	if (rec->gpu && rec->gpu->reader)
		gpu_reader__stop(rec->gpu->reader, rec->launched && rec->cmd.exited ? BYE_WAIT_MS : 0);
}

static int gpu_collect(struct recording *rec, struct model *m)
{
	struct gpu_state *st = rec->gpu;
	struct model_gpu_activity *a = &m->gpu_activity;
	int err;

	if (!st)
		return 0;
	if (st->notice[0]) {
		a->present = true;
		snprintf(a->notice, sizeof(a->notice), "%s", st->notice);
	}
	if (!st->reader)
		return 0;
	snprintf(a->sample_mode, sizeof(a->sample_mode), "%s", rec->opts.cupti ? rec->opts.cupti : "auto");
	err = gpu_reader__collect(st->reader, m);
	if (!err && a->dropped)
		err = model__add_lost(m, "gpu_records", a->dropped);
	if (!err && a->channel_errors)
		err = model__add_lost(m, "gpu_connections_malformed", a->channel_errors);
	if (!err && !m->snapshot && a->dropped_budget)
		fprintf(stderr, "infertrace: warning: %llu GPU activity records not kept (--max-memory reached; "
			"lost.gpu_records)\n", (unsigned long long)a->dropped_budget);
	return err;
}

static void gpu_cleanup(struct recording *rec)
{
	struct gpu_state *st = rec->gpu;

	if (!st)
		return;
	gpu_reader__free(st->reader);
	for (size_t i = 0; i < RECORDING_CHILD_ENV_MAX; i++)
		if (rec->child_env[i] && (rec->child_env[i] == st->env_channel || rec->child_env[i] == st->env_injection ||
					  rec->child_env[i] == st->env_sample))
			rec->child_env[i] = NULL;
	free(st->env_channel);
	free(st->env_injection);
	free(st->env_sample);
	free(st);
	rec->gpu = NULL;
}

const struct concern gpu_concern = {
	.name = "gpu",
	.configure = gpu_configure,
	.tick = gpu_tick,
	.collect = gpu_collect,
	.stop = gpu_stop,
	.cleanup = gpu_cleanup,
};
