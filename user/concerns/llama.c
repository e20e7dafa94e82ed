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

/* A batch's sequences as the model keeps them: only those in it. */
static void add_batch(struct recording *rec, const struct it_llama_batch_event *e)
{
	struct model_requests *r = &rec->model.requests;
	struct model_llama_batch *b;
	uint32_t nparts = 0;

	r->present = true;
	for (int s = 0; s < IT_LLAMA_SEQS; s++)
		nparts += e->seq[s].tokens > 0;
	if (!recording__may_hold(rec) || VEC_RESERVE(r->batches.v, r->batches.cap, r->batches.n, 256) ||
	    VEC_RESERVE(r->parts.v, r->parts.cap, r->parts.n + nparts, 256)) {
		model__add_lost(&rec->model, "llama_batches_not_kept", 1);
		return;
	}
	b = &r->batches.v[r->batches.n++];
	*b = (struct model_llama_batch){ .pid = (pid_t)e->hdr.tgid, .tid = (pid_t)e->hdr.tid,
					 .start_ns = e->hdr.ts_ns, .n_tokens = e->n_tokens, .flags = e->flags,
					 .unread_tokens = e->n_tokens - (e->tokens_read < e->n_tokens ? e->tokens_read
												       : e->n_tokens),
					 .other_seq_tokens = e->other_seq_tokens,
					 .multi_seq_tokens = e->multi_seq_tokens,
					 .first_part = (uint32_t)r->parts.n, .nparts = nparts,
					 .run_delay_ns = e->run_delay_ns, .majflt = e->majflt };
	for (int s = 0; s < IT_LLAMA_SEQS; s++) {
		const struct it_llama_seq_part *sp = &e->seq[s];

		if (sp->tokens)
			r->parts.v[r->parts.n++] = (struct model_llama_part){
				.seq = s, .tokens = sp->tokens, .outputs = sp->outputs, .pos_min = sp->pos_min,
				.pos_max = sp->pos_max, .last_output = sp->last_output != 0 };
	}
}

/* The decode call's return: its phase frame ends where it began. Looked
 * for among the latest batches (a thread has one call open at a time). */
static void end_batch(struct recording *rec, const struct it_phase_event *e)
{
	struct model_requests *r = &rec->model.requests;

	for (size_t i = r->batches.n, seen = 0; i-- > 0 && seen < 64; seen++) {
		struct model_llama_batch *b = &r->batches.v[i];

		if (b->tid == (pid_t)e->hdr.tid && b->start_ns == e->entry_ns) {
			b->end_ns = e->hdr.ts_ns;
			b->end_run_delay_ns = e->run_delay_ns;
			return;
		}
	}
}

static void llama_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;
	struct model_requests *r = &rec->model.requests;

	if (size < sizeof(*h))
		return;
	if (h->type == IT_EV_LLAMA_BATCH && size >= sizeof(struct it_llama_batch_event)) {
		add_batch(rec, data);
	} else if (h->type == IT_EV_PHASE_END && size >= sizeof(struct it_phase_event) && r->batches.n) {
		end_batch(rec, data);
	} else if (h->type == IT_EV_LLAMA_SEQ_END && size >= sizeof(struct it_llama_seq_end_event)) {
		const struct it_llama_seq_end_event *e = data;

		if (VEC_RESERVE(r->ends.v, r->ends.cap, r->ends.n, 64)) {
			model__add_lost(&rec->model, "llama_seq_ends_not_kept", 1);
			return;
		}
		r->ends.v[r->ends.n++] = (struct model_llama_seq_end){
			.pid = (pid_t)h->tgid, .ts_ns = h->ts_ns, .seq = e->seq, .p0 = e->p0, .p1 = e->p1 };
	}
}

const struct concern llama_concern = {
	.name = "llama",
	.on_event = llama_on_event,
	.collect = llama_collect,
};
