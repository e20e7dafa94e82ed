// SPDX-License-Identifier: BSD-2-Clause
/* llama.cpp concern: the model and the settings a llama.cpp process really
 * used, from what its calls passed (bpf/probes.bpf.c, IT_ROLE_LLAMA_ARGS:
 * llama_init_from_model's context parameters, llama_set_n_threads, the path
 * given to llama_model_load_from_file, the thread counts llama.cpp gives
 * ggml's CPU backend for each graph) and the header of that GGUF file.
 * Only what the process showed is written; nothing is guessed. The per-cycle
 * figures are derived from the preset's phases and counts (analysis/llama.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "gguf.h"
#include "infertrace.skel.h"
#include "target.h"

/* The GGUF file the process opened: its facts, or why they were not read. */
static void model_facts(const char *path, pid_t pid, struct model_llama_facts *lf)
{
	char full[PATH_MAX + 64], err[PATH_MAX + 128];
	struct gguf_facts f;
	const char *name;

	lf->has_model = true;
	snprintf(lf->model.path, sizeof(lf->model.path), "%s", path);
	/* a relative path is the process's; through its root and cwd while it lives */
	if (path[0] != '/')
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", pid, path);
	else
		snprintf(full, sizeof(full), "%s", path);
	if (gguf__read(full, &f, err, sizeof(err)) && (path[0] != '/' || gguf__read(path, &f, err, sizeof(err)))) {
		snprintf(lf->model.error, sizeof(lf->model.error), "%.*s", (int)sizeof(lf->model.error) - 1, err);
		return;
	}
	snprintf(lf->model.arch, sizeof(lf->model.arch), "%s", f.arch);
	lf->model.read = true;
	lf->model.n_params = f.n_params;
	if (f.has_file_type) {
		name = gguf__file_type_name(f.file_type);
		snprintf(lf->model.file_type, sizeof(lf->model.file_type), "%s", name ? name : "");
		lf->model.file_type_id = f.file_type;
	}
	lf->model.n_layer = f.n_layer;
	lf->model.n_embd = f.n_embd;
	lf->model.n_ctx_train = f.n_ctx_train;
	lf->model.size_bytes = f.size_bytes;
}

static void context_facts(const struct it_llama_params *p, struct model_llama_facts *lf)
{
	lf->has_context = true;
	if (p->have_context) {
		lf->context.n_ctx = p->n_ctx;
		lf->context.n_batch = p->n_batch;
		lf->context.n_ubatch = p->n_ubatch;
		lf->context.n_seq_max = p->n_seq_max;
	}
	if (p->have_threads) {
		lf->context.n_threads = p->n_threads;
		lf->context.n_threads_batch = p->n_threads_batch;
	}
}

static bool any_threads_used(const struct it_llama_params *p)
{
	for (int r = 0; r < IT_LLAMA_USED_ROWS; r++)
		for (int n = 0; n < IT_LLAMA_THREADS_SLOTS; n++)
			if (p->threads_used[r][n])
				return true;
	return false;
}

/* threads_used: by phase, the count most of ggml's graph computations
 * were given; calls: every count seen with its calls. A phase without
 * calls has none; neither has a count of 64 or more (one slot holds them
 * all), which shows only in the calls. */
static void threads_used(const struct it_llama_params *p, struct model_llama_facts *lf)
{
	lf->context.has_calls = true;
	for (int r = 0; r < IT_LLAMA_USED_ROWS && r < MODEL_LLAMA_ROWS; r++) {
		__u32 best = 0;
		int mode = -1;

		for (int n = 1; n <= IT_LLAMA_THREADS_SLOTS; n++) {
			__u32 c = p->threads_used[r][n % IT_LLAMA_THREADS_SLOTS];

			lf->context.calls[r][n % IT_LLAMA_THREADS_SLOTS] = c;
			if (c > best) {
				best = c;
				mode = n;
			}
		}
		lf->context.threads_used[r] = mode > 0 && mode < IT_LLAMA_THREADS_SLOTS ? mode : -1;
	}
}

/* The first followed process that showed any llama.cpp settings. */
static int llama_collect(struct recording *rec, struct model *m)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.llama_params);
	struct model_llama_facts *lf = &m->llama_facts;

	model__llama_facts_init(lf);
	for (size_t i = 0; i < m->nprocs && !lf->present; i++) {
		struct it_llama_params p;
		__u32 k = (__u32)m->procs[i].pid;

		if (bpf_map_lookup_elem(fd, &k, &p))
			continue;
		p.model_path[sizeof(p.model_path) - 1] = 0;
		bool used = any_threads_used(&p);

		if (!p.have_context && !p.have_threads && !p.model_path[0] && !used)
			continue;
		lf->present = true;
		lf->pid = (int)k;
		if (p.model_path[0])
			model_facts(p.model_path, m->procs[i].pid, lf);
		if (p.have_context || p.have_threads || used) {
			context_facts(&p, lf);
			if (used)
				threads_used(&p, lf);
		}
	}
	return 0;
}

const struct concern llama_concern = {
	.name = "llama",
	.collect = llama_collect,
};
