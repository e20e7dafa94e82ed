// SPDX-License-Identifier: BSD-2-Clause
/* llama.cpp's figures where people compare runs: report.html's section and
 * diff's rows. Tokens per second are better higher, joules per token lower;
 * llama-bench's pp and tg are read apart, so are prefill and decode here. */
#include <math.h>
#include <string.h>

#include "json_num.h"
#include "llama_view.h"
#include "outputs.h"

/* A fact's row: a string, a number, or an object of numbers (n_threads_used). */
static void fact_row(FILE *f, const char *prefix, const char *k, json_t *v)
{
	const char *kk;
	json_t *vv;
	bool first = true;

	if (!strcmp(k, "n_threads_used_calls")) /* the distribution: in profile.json */
		return;
	fprintf(f, "<tr><th>%s", prefix);
	outputs__xml_escape(f, k);
	fprintf(f, "</th><td>");
	if (json_is_string(v)) {
		outputs__xml_escape(f, json_string_value(v));
	} else if (json_is_integer(v)) {
		fprintf(f, "%lld", (long long)json_integer_value(v));
	} else if (json_is_number(v)) {
		fprintf(f, "%g", json_number_value(v));
	} else if (json_is_object(v)) {
		json_object_foreach(v, kk, vv) {
			if (!json_is_number(vv))
				continue;
			fprintf(f, "%s", first ? "" : ", ");
			outputs__xml_escape(f, kk);
			fprintf(f, " %g", json_number_value(vv));
			first = false;
		}
	}
	fprintf(f, "</td></tr>\n");
}

static void figures_cells(FILE *f, const struct model_llama_cycle *l)
{
	fprintf(f, "<td>%llu</td><td>%llu</td>", (unsigned long long)l->prompt_tokens,
		(unsigned long long)l->generated_tokens);
	outputs__html_num_cell(f, l->prefill_ms, "%.2f");
	outputs__html_num_cell(f, l->decode_ms, "%.2f");
	outputs__html_num_cell(f, l->prefill_tokens_per_s, "%.1f");
	outputs__html_num_cell(f, l->decode_tokens_per_s, "%.1f");
	outputs__html_num_cell(f, l->j_per_generated_token, "%.4f");
}

void llama__html(FILE *f, const struct model *m)
{
	static const char *const heads = "<th>prompt tokens</th><th>generated tokens</th><th>prefill ms</th>"
					 "<th>decode ms</th><th>prefill tok/s</th><th>decode tok/s</th>"
					 "<th>J per generated token</th>";
	json_t *model = json_object_get(m->llama_facts, "model"), *ctx = json_object_get(m->llama_facts, "context"), *v;
	const char *k;

	if (!m->llama.present && !json_object_size(model) && !json_object_size(ctx))
		return;
	fprintf(f, "<h2>llama.cpp</h2>\n");
	if (json_object_size(model) || json_object_size(ctx)) {
		fprintf(f, "<table>\n");
		json_object_foreach(model, k, v)
			fact_row(f, "model ", k, v);
		json_object_foreach(ctx, k, v)
			fact_row(f, "context ", k, v);
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
