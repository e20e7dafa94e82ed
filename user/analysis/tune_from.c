// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "tune_from.h"
#include "vec.h"

/* The values rules.c recommends, by the name they carry ("n_ctx 512"). */
static const struct {
	const char *key, *param;
} value_keys[] = {
	{ "n_threads", "threads" }, { "n_ctx", "ctx" }, { "n_batch", "batch" },
	{ "n_ubatch", "ubatch" },   { "n_gpu_layers", "gpu_layers" },
};

/* llama.cpp's flags (common/arg.cpp) and the environment variables its
 * README documents for them; OMP_NUM_THREADS is any OpenMP program's. */
static const struct runner_flag {
	const char *param, *shortf, *longf, *env;
} llama_flags[] = {
	{ "threads", "-t", "--threads", "LLAMA_ARG_THREADS" },
	{ "ctx", "-c", "--ctx-size", "LLAMA_ARG_CTX_SIZE" },
	{ "batch", "-b", "--batch-size", "LLAMA_ARG_BATCH" },
	{ "ubatch", "-ub", "--ubatch-size", "LLAMA_ARG_UBATCH" },
	{ "gpu_layers", "-ngl", "--n-gpu-layers", "LLAMA_ARG_N_GPU_LAYERS" },
};

static const char *const llama_runners[] = { "llama-cli", "llama-server", "llama-run", "main", "server" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static bool is_count(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A count of the evidence, by the name a recommendation gives it, as text
 * into buf; false when absent. */
static bool evidence_int(const struct model_evidence *ev, const char *key, char *buf, size_t len)
{
	int64_t n = !strcmp(key, "n_threads_used") ? ev->n_threads_used : !strcmp(key, "n_threads") ? ev->n_threads : -1;
	double r = !strcmp(key, "n_ctx") ? ev->n_ctx : NAN;

	if (n > 0)
		snprintf(buf, len, "%lld", (long long)n);
	else if (r >= 1)
		snprintf(buf, len, "%.0f", r);
	else
		return false;
	return true;
}

/* A recommendation tune can run, as a proposal; false with the reason. */
static bool proposal_of(const struct model_recommendation *r, struct tune_proposal *p, char *why, size_t len)
{
	const char *rv = r->recommended_value ? r->recommended_value : "";

	memset(p, 0, sizeof(*p));
	snprintf(p->title, sizeof(p->title), "%s", r->title ? r->title : "?");
	snprintf(p->why, sizeof(p->why), "%s", r->current_value ? r->current_value : "");
	if (is_count(rv) && r->bottleneck && !strcmp(r->bottleneck, "cpu_oversubscribed")) {
		snprintf(p->name, sizeof(p->name), "threads");
		snprintf(p->recommended, sizeof(p->recommended), "%.31s", rv);
		if (!evidence_int(&r->evidence, "n_threads_used", p->current, sizeof(p->current)))
			evidence_int(&r->evidence, "n_threads", p->current, sizeof(p->current));
		return true;
	}
	for (size_t i = 0; i < NELEM(value_keys); i++) {
		size_t n = strlen(value_keys[i].key);

		if (strncmp(rv, value_keys[i].key, n) || rv[n] != ' ' || !is_count(rv + n + 1))
			continue;
		snprintf(p->name, sizeof(p->name), "%s", value_keys[i].param);
		snprintf(p->recommended, sizeof(p->recommended), "%.31s", rv + n + 1);
		evidence_int(&r->evidence, value_keys[i].key, p->current, sizeof(p->current));
		return true;
	}
	snprintf(why, len, "%s: '%s' is not a value a runner's option takes", p->title, rv);
	return false;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool llama_runner(const char *cmd)
{
	for (size_t i = 0; i < NELEM(llama_runners); i++)
		if (!strcmp(basename_of(cmd), llama_runners[i]))
			return true;
	return false;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

static bool has_reference(char *const *argv, const char *name)
{
	char ref[40];

	snprintf(ref, sizeof(ref), "{%s}", name);
	for (size_t i = 0; argv[i]; i++)
		if (strstr(argv[i], ref))
			return true;
	return false;
}

static int push(char ***arr, size_t *n, char *s)
{
	char **a;

	if (!s)
		return -ENOMEM;
	if (VEC_RESIZE(*arr, *n + 2)) {
		free(s);
		return -ENOMEM;
	}
	a = *arr;
	a[(*n)++] = s;
	a[*n] = NULL;
	return 0;
}

static char *dup_printf(const char *fmt, const char *a, const char *b)
{
	char *s = NULL;

	return asprintf(&s, fmt, a, b) < 0 ? NULL : s;
}

/* Puts {NAME} into the llama.cpp command for flag f: over the flag's value
 * (keeping it as the current one when the run did not show it), else
 * through its environment variable, else as a new flag. */
static int place_llama(struct tune_from_plan *plan, size_t *argc, const struct runner_flag *f,
		       struct tune_proposal *p, char *const *envp)
{
	char ref[40];
	const char *env;

	snprintf(ref, sizeof(ref), "{%s}", p->name);
	for (size_t i = 1; i < *argc; i++) {
		char *a = plan->argv[i];
		size_t ln = strlen(f->longf);

		if ((!strcmp(a, f->shortf) || !strcmp(a, f->longf)) && i + 1 < *argc) {
			if (!*p->current)
				snprintf(p->current, sizeof(p->current), "%.31s", plan->argv[i + 1]);
			free(plan->argv[i + 1]);
			plan->argv[i + 1] = strdup(ref);
			return plan->argv[i + 1] ? 0 : -ENOMEM;
		}
		if (!strncmp(a, f->longf, ln) && a[ln] == '=') {
			if (!*p->current)
				snprintf(p->current, sizeof(p->current), "%.31s", a + ln + 1);
			plan->argv[i] = dup_printf("%s=%s", f->longf, ref);
			free(a);
			return plan->argv[i] ? 0 : -ENOMEM;
		}
	}
	env = env_get(envp, f->env);
	if (env) {
		if (!*p->current)
			snprintf(p->current, sizeof(p->current), "%.31s", env);
		return push(&plan->env_set, &plan->nenv_set, dup_printf("%s=%s", f->env, ref));
	}
	if (push(&plan->argv, argc, strdup(f->longf)))
		return -ENOMEM;
	return push(&plan->argv, argc, strdup(ref));
}

int tune_from__plan(const struct model *m, char *const *argv, char *const *envp, const char *const *names_given,
		    struct tune_from_plan *plan)
{
	size_t argc = 0;
	char why[256];
	int err = 0;

	memset(plan, 0, sizeof(*plan));
	while (argv[argc])
		argc++;
	plan->argv = calloc(argc + 1, sizeof(*plan->argv));
	if (!plan->argv)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++)
		if (!(plan->argv[i] = strdup(argv[i])))
			return -ENOMEM;
	plan->runner = argc && llama_runner(argv[0]) ? "llama.cpp" : NULL;
	for (size_t i = 0; i < m->nrecs && !err; i++) {
		struct tune_proposal p;
		bool dup = false, given = false, placed = false;
		char *line;

		if (!proposal_of(&m->recs[i], &p, why, sizeof(why))) {
			err = push(&plan->skipped, &plan->nskipped, strdup(why));
			continue;
		}
		for (size_t k = 0; k < plan->nprops; k++)
			dup |= !strcmp(plan->props[k].name, p.name);
		for (size_t k = 0; names_given && names_given[k]; k++)
			given |= !strcmp(names_given[k], p.name);
		if (dup || given || plan->nprops >= TUNE_FROM_MAX)
			continue;
		if (has_reference(plan->argv, p.name)) {
			placed = true;
		} else if (plan->runner) {
			for (size_t k = 0; k < NELEM(llama_flags) && !placed; k++)
				if (!strcmp(llama_flags[k].param, p.name)) {
					err = place_llama(plan, &argc, &llama_flags[k], &p, envp);
					placed = true;
				}
		} else if (!strcmp(p.name, "threads") && env_get(envp, "OMP_NUM_THREADS")) {
			if (!*p.current)
				snprintf(p.current, sizeof(p.current), "%.31s", env_get(envp, "OMP_NUM_THREADS"));
			err = push(&plan->env_set, &plan->nenv_set, strdup("OMP_NUM_THREADS={threads}"));
			placed = true;
		}
		if (err)
			break;
		if (*p.current && !strcmp(p.current, p.recommended)) {
			err = push(&plan->skipped, &plan->nskipped,
				   dup_printf("%s: already at the recommended value %s", p.title, p.recommended));
			continue;
		}
		plan->props[plan->nprops++] = p;
		line = *p.current ? dup_printf("%s=%s,", p.name, p.current) : dup_printf("%s=CURRENT,%s", p.name, "");
		if (line) {
			char *full = dup_printf("%s%s", line, p.recommended);

			free(line);
			line = full;
		}
		if (!line)
			return -ENOMEM;
		/* without the current value there is no baseline to run */
		if (placed && *p.current)
			plan->params[plan->nparams++] = line;
		else
			plan->unplaced[plan->nunplaced++] = line;
	}
	return err;
}

void tune_from__free(struct tune_from_plan *p)
{
	for (size_t i = 0; p->argv && p->argv[i]; i++)
		free(p->argv[i]);
	free(p->argv);
	for (size_t i = 0; i < p->nenv_set; i++)
		free(p->env_set[i]);
	free(p->env_set);
	for (size_t i = 0; i < p->nparams; i++)
		free(p->params[i]);
	for (size_t i = 0; i < p->nunplaced; i++)
		free(p->unplaced[i]);
	for (size_t i = 0; i < p->nskipped; i++)
		free(p->skipped[i]);
	free(p->skipped);
	memset(p, 0, sizeof(*p));
}
