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

static json_t *model_json(const char *path, pid_t pid)
{
	char full[PATH_MAX + 64], err[PATH_MAX + 128];
	struct gguf_facts f;
	json_t *o = json_object();

	json_object_set_new(o, "path", json_string(path));
	/* a relative path is the process's; through its root and cwd while it lives */
	if (path[0] != '/')
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", pid, path);
	else
		snprintf(full, sizeof(full), "%s", path);
	if (gguf__read(full, &f, err, sizeof(err)) && (path[0] != '/' || gguf__read(path, &f, err, sizeof(err)))) {
		json_object_set_new(o, "error", json_string(err));
		return o;
	}
	if (*f.arch)
		json_object_set_new(o, "arch", json_string(f.arch));
	json_object_set_new(o, "n_params", json_integer((json_int_t)f.n_params));
	if (f.has_file_type) {
		const char *n = gguf__file_type_name(f.file_type);

		json_object_set_new(o, "file_type", n ? json_string(n) : json_integer(f.file_type));
		json_object_set_new(o, "file_type_id", json_integer(f.file_type));
	}
	if (f.n_layer >= 0)
		json_object_set_new(o, "n_layer", json_integer(f.n_layer));
	if (f.n_embd >= 0)
		json_object_set_new(o, "n_embd", json_integer(f.n_embd));
	if (f.n_ctx_train >= 0)
		json_object_set_new(o, "n_ctx_train", json_integer(f.n_ctx_train));
	json_object_set_new(o, "size_bytes", json_integer((json_int_t)f.size_bytes));
	return o;
}

static json_t *context_json(const struct it_llama_params *p)
{
	json_t *o = json_object();

	if (p->have_context) {
		json_object_set_new(o, "n_ctx", json_integer(p->n_ctx));
		json_object_set_new(o, "n_batch", json_integer(p->n_batch));
		json_object_set_new(o, "n_ubatch", json_integer(p->n_ubatch));
		json_object_set_new(o, "n_seq_max", json_integer(p->n_seq_max));
	}
	if (p->have_threads) {
		json_object_set_new(o, "n_threads", json_integer(p->n_threads));
		json_object_set_new(o, "n_threads_batch", json_integer(p->n_threads_batch));
	}
	return o;
}

static bool any_threads_used(const struct it_llama_params *p)
{
	for (int r = 0; r < IT_LLAMA_USED_ROWS; r++)
		for (int n = 0; n < IT_LLAMA_THREADS_SLOTS; n++)
			if (p->threads_used[r][n])
				return true;
	return false;
}

/* n_threads_used: by phase, the count most of ggml's graph computations
 * were given; n_threads_used_calls: every count seen with its calls. A
 * phase without calls is left out; so is a count of 64 or more (one slot
 * holds them all), which shows only in the calls. */
static void threads_used_json(json_t *ctx, const struct it_llama_params *p)
{
	static const char *const rows[IT_LLAMA_USED_ROWS] = { "prompt", "generation", "other" };
	json_t *used = json_object(), *calls = json_object();

	for (int r = 0; r < IT_LLAMA_USED_ROWS; r++) {
		json_t *dist = json_object();
		__u32 best = 0;
		int mode = -1;

		for (int n = 1; n <= IT_LLAMA_THREADS_SLOTS; n++) {
			__u32 c = p->threads_used[r][n % IT_LLAMA_THREADS_SLOTS];
			char key[16];

			if (!c)
				continue;
			snprintf(key, sizeof(key), n < IT_LLAMA_THREADS_SLOTS ? "%d" : ">=%d", n);
			json_object_set_new(dist, key, json_integer(c));
			if (c > best) {
				best = c;
				mode = n;
			}
		}
		if (mode > 0 && mode < IT_LLAMA_THREADS_SLOTS)
			json_object_set_new(used, rows[r], json_integer(mode));
		if (json_object_size(dist))
			json_object_set_new(calls, rows[r], dist);
		else
			json_decref(dist);
	}
	if (json_object_size(used))
		json_object_set_new(ctx, "n_threads_used", used);
	else
		json_decref(used);
	json_object_set_new(ctx, "n_threads_used_calls", calls);
}

/* The first followed process that showed any llama.cpp settings. */
static int llama_collect(struct recording *rec, struct model *m)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.llama_params);
	json_t *facts = NULL;

	for (size_t i = 0; i < m->nprocs && !facts; i++) {
		struct it_llama_params p;
		__u32 k = (__u32)m->procs[i].pid;

		if (bpf_map_lookup_elem(fd, &k, &p))
			continue;
		p.model_path[sizeof(p.model_path) - 1] = 0;
		bool used = any_threads_used(&p);

		if (!p.have_context && !p.have_threads && !p.model_path[0] && !used)
			continue;
		facts = json_object();
		json_object_set_new(facts, "pid", json_integer(k));
		if (p.model_path[0])
			json_object_set_new(facts, "model", model_json(p.model_path, m->procs[i].pid));
		if (p.have_context || p.have_threads || used) {
			json_t *ctx = context_json(&p);

			if (used)
				threads_used_json(ctx, &p);
			json_object_set_new(facts, "context", ctx);
		}
	}
	json_decref(m->llama_facts);
	m->llama_facts = facts;
	return 0;
}

const struct concern llama_concern = {
	.name = "llama",
	.collect = llama_collect,
};
