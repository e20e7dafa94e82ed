// SPDX-License-Identifier: BSD-2-Clause
/* report.html's requests section (requests_html.h). */
#include <math.h>

#include "html_text.h"
#include "requests_html.h"
#include "requests_view.h"

static void dist_row(FILE *f, const char *name, const struct model_request_dist *d)
{
	fprintf(f, "<tr><th>%s</th><td>%llu</td>", name, (unsigned long long)d->n);
	html_text__num_cell(f, d->p50, "%.2f");
	html_text__num_cell(f, d->p95, "%.2f");
	html_text__num_cell(f, d->p99, "%.2f");
	html_text__num_cell(f, d->max, "%.2f");
	fprintf(f, "</tr>\n");
}

void requests_html__write(FILE *f, const struct model *m)
{
	const struct model_requests *r = &m->requests;
	const struct model_context_cost *c = &r->context;
	struct requests_medians md;
	char why[256];

	if (!r->present)
		return;
	fprintf(f, "<h2 id=\"requests\">Requests</h2>\n<p>%zu requests (llama.cpp sequences, from the batches: "
		"infertrace's <code>docs/servers.md</code>), "
		"%llu prompt and %llu generated tokens; %llu of %llu batches shared, %u sequences in one at most. "
		"A batch's time is shared among its sequences by their tokens in it; time queued before a "
		"request's first batch is not seen.</p>\n",
		r->list.n, (unsigned long long)r->prompt_tokens, (unsigned long long)r->generated_tokens,
		(unsigned long long)r->shared_batches, (unsigned long long)r->batches_seen, r->max_concurrent);
	fprintf(f, "<table><tr><th></th><th>n</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>\n");
	dist_row(f, "time to first token (ms)", &r->ttft);
	dist_row(f, "inter-token gap (ms)", &r->itl);
	dist_row(f, "duration (ms)", &r->duration);
	dist_row(f, "prefill, batch share (ms)", &r->prefill);
	dist_row(f, "tokens/s per request", &r->tokens_per_s);
	fprintf(f, "</table>\n");
	if (c->present)
		fprintf(f, "<p>Context: a single-token step takes %.3f ms more per 1,000 positions, its wait for a "
			"CPU taken out (r&sup2; %.2f, %llu steps over positions %d&ndash;%d).</p>\n",
			c->slope_ms_per_1k, c->r2, (unsigned long long)c->steps, c->pos_min, c->pos_max);
	fprintf(f, "<table><tr><th>start s</th><th>seq</th><th>prompt</th><th>cached</th><th>generated</th>"
		"<th>ttft ms</th><th>prefill ms</th><th>decode ms</th><th>duration ms</th><th>tok/s</th>"
		"<th>gap p95 ms</th><th>sharers avg</th><th>run queue ms</th><th>ended</th><th>rate</th>"
		"<th>stands out</th></tr>\n");
	requests_view__medians(m, &md);
	for (size_t i = 0; i < r->list.n && i < REQUESTS_HTML_ROWS; i++) {
		const struct model_request *q = &r->list.v[i];

		fprintf(f, "<tr><td>%.3f</td><td>%d</td><td>%llu</td><td>%llu</td><td>%llu</td>", q->start_ms / 1000,
			q->seq, (unsigned long long)q->prompt_tokens, (unsigned long long)q->cached_tokens,
			(unsigned long long)q->generated_tokens);
		html_text__num_cell(f, q->ttft_ms, "%.1f");
		html_text__num_cell(f, q->prefill_ms, "%.1f");
		html_text__num_cell(f, q->decode_ms, "%.1f");
		html_text__num_cell(f, q->duration_ms, "%.1f");
		html_text__num_cell(f, q->tokens_per_s, "%.1f");
		html_text__num_cell(f, q->itl_p95_ms, "%.2f");
		html_text__num_cell(f, q->sharers_avg, "%.1f");
		html_text__num_cell(f, q->runq_ms, "%.1f");
		fprintf(f, "<td>%s</td><td>%s</td><td>", model_request__end_name(q->ended),
			q->has_rate ? model_request__rate_cause_name(q->rate_cause) : "");
		html_text__escape(f, requests_view__causes(m, &md, q, why, sizeof(why)));
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	if (r->list.n > REQUESTS_HTML_ROWS)
		fprintf(f, "<p>The first %d of %zu requests; all are in profile.json's requests[].</p>\n",
			REQUESTS_HTML_ROWS, r->list.n);
}
