// SPDX-License-Identifier: BSD-2-Clause
/* llama.cpp's figures where people compare runs: report.html's section and
 * diff's rows. Tokens per second are better higher, joules per token lower;
 * llama-bench's pp and tg are read apart, so are prefill and decode here. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "html_text.h"
#include "llama_view.h"
#include "outputs.h"

/* A fact's row: a string, or a number; none for what the process did not show. */
static void fact_str(FILE *f, const char *name, const char *v)
{
	if (!v[0])
		return;
	fprintf(f, "<tr><th>%s</th><td>", name);
	html_text__escape(f, v);
	fprintf(f, "</td></tr>\n");
}

static void fact_num(FILE *f, const char *name, bool shown, long long v)
{
	if (shown)
		fprintf(f, "<tr><th>%s</th><td>%lld</td></tr>\n", name, v);
}

/* The model file and the context, as profile.json lists them (the threads'
 * distribution is in profile.json only). */
static void facts_rows(FILE *f, const struct model_llama_facts *lf)
{
	static const char *const rows[MODEL_LLAMA_ROWS] = { "prompt", "generation", "other" };
	bool first = true;

	if (lf->has_model) {
		fact_str(f, "model path", lf->model.path);
		fact_str(f, "model error", lf->model.error);
		fact_str(f, "model arch", lf->model.arch);
		fact_num(f, "model n_params", lf->model.read, (long long)lf->model.n_params);
		if (lf->model.file_type[0])
			fact_str(f, "model file_type", lf->model.file_type);
		else
			fact_num(f, "model file_type", lf->model.file_type_id >= 0, lf->model.file_type_id);
		fact_num(f, "model file_type_id", lf->model.file_type_id >= 0, lf->model.file_type_id);
		fact_num(f, "model n_layer", lf->model.n_layer >= 0, lf->model.n_layer);
		fact_num(f, "model n_embd", lf->model.n_embd >= 0, lf->model.n_embd);
		fact_num(f, "model n_ctx_train", lf->model.n_ctx_train >= 0, lf->model.n_ctx_train);
		fact_num(f, "model size_bytes", lf->model.read, (long long)lf->model.size_bytes);
	}
	if (!lf->has_context)
		return;
	fact_num(f, "context n_ctx", lf->context.n_ctx >= 0, lf->context.n_ctx);
	fact_num(f, "context n_batch", lf->context.n_batch >= 0, lf->context.n_batch);
	fact_num(f, "context n_ubatch", lf->context.n_ubatch >= 0, lf->context.n_ubatch);
	fact_num(f, "context n_seq_max", lf->context.n_seq_max >= 0, lf->context.n_seq_max);
	fact_num(f, "context n_threads", lf->context.n_threads >= 0, lf->context.n_threads);
	fact_num(f, "context n_threads_batch", lf->context.n_threads_batch >= 0, lf->context.n_threads_batch);
	for (int r = 0; r < MODEL_LLAMA_ROWS; r++) {
		if (lf->context.threads_used[r] < 0)
			continue;
		fprintf(f, "%s%s %lld", first ? "<tr><th>context n_threads_used</th><td>" : ", ", rows[r],
			(long long)lf->context.threads_used[r]);
		first = false;
	}
	if (!first)
		fprintf(f, "</td></tr>\n");
}

static void figures_cells(FILE *f, const struct model_llama_cycle *l)
{
	fprintf(f, "<td>%llu</td><td>%llu</td>", (unsigned long long)l->prompt_tokens,
		(unsigned long long)l->generated_tokens);
	html_text__num_cell(f, l->prefill_ms, "%.2f");
	html_text__num_cell(f, l->decode_ms, "%.2f");
	html_text__num_cell(f, l->prefill_tokens_per_s, "%.1f");
	html_text__num_cell(f, l->decode_tokens_per_s, "%.1f");
	html_text__num_cell(f, l->j_per_generated_token, "%.4f");
}

void llama__html(FILE *f, const struct model *m)
{
	static const char *const heads = "<th>prompt tokens</th><th>generated tokens</th><th>prefill ms</th>"
					 "<th>decode ms</th><th>prefill tok/s</th><th>decode tok/s</th>"
					 "<th>J per generated token</th>";
	const struct model_llama_facts *lf = &m->llama_facts;

	if (!m->llama.present && !lf->has_model && !lf->has_context)
		return;
	fprintf(f, "<h2>llama.cpp</h2>\n");
	if (lf->has_model || lf->has_context) {
		fprintf(f, "<table>\n");
		facts_rows(f, lf);
		fprintf(f, "</table>\n");
	}
	if (!m->llama.present)
		return;
	fprintf(f, "<table><tr><th></th>%s</tr>\n<tr><th>all cycles</th>", heads);
	figures_cells(f, &m->llama);
	fprintf(f, "</tr>\n");
	for (size_t i = 0; i < m->ncycles; i++) {
		if (!m->cycles[i].llama.present)
			continue;
		fprintf(f, "<tr><th>cycle %u</th>", m->cycles[i].index);
		figures_cells(f, &m->cycles[i].llama);
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
}

static void row(struct llama_diff_row *r, const char *name, double b, double n, int higher, double threshold)
{
	double better;

	r->name = name;
	r->base = b;
	r->new_v = n;
	r->higher_is_better = higher;
	r->change_pct = isfinite(b) && isfinite(n) && b > 0 ? 100.0 * (n - b) / b : NAN;
	/* a figure one side lacks fails the gate, as diff's other rows do */
	if (isfinite(b) != isfinite(n)) {
		r->verdict = -1;
		return;
	}
	better = higher ? r->change_pct : -r->change_pct;
	r->verdict = !isfinite(better) ? 0 : better > threshold ? 1 : better < -threshold ? -1 : 0;
}

int llama__diff_rows(const struct model *b, const struct model *n, double threshold,
		     struct llama_diff_row rows[LLAMA_DIFF_ROWS])
{
	const struct model_llama_cycle *bl = &b->llama, *nl = &n->llama;
	struct llama_diff_row all[LLAMA_DIFF_ROWS];
	int k = 0;

	if (!bl->present && !nl->present)
		return 0;
	row(&all[0], "llama decode_tokens_per_s", bl->present ? bl->decode_tokens_per_s : NAN,
	    nl->present ? nl->decode_tokens_per_s : NAN, 1, threshold);
	row(&all[1], "llama prefill_tokens_per_s", bl->present ? bl->prefill_tokens_per_s : NAN,
	    nl->present ? nl->prefill_tokens_per_s : NAN, 1, threshold);
	row(&all[2], "llama j_per_generated_token", bl->present ? bl->j_per_generated_token : NAN,
	    nl->present ? nl->j_per_generated_token : NAN, 0, threshold);
	for (int i = 0; i < LLAMA_DIFF_ROWS; i++)
		if (isfinite(all[i].base) || isfinite(all[i].new_v))
			rows[k++] = all[i];
	return k;
}
