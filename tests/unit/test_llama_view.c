// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: llama.cpp's rows in `diff` and its section in report.html, on
 * models loaded from profile.json trees built here (as `diff` loads them). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "llama_view.h"
#include "model.h"

/* A profile whose llama aggregate has these rates (NAN: left out). */
static void load(struct model *m, double decode, double prefill, double jpt)
{
	json_t *p = json_pack("{s:{},s:[],s:[],s:{},s:{},s:[],s:{},s:[]}", "phases", "bottlenecks", "recommendations",
			      "system", "memory", "crashes", "aggregate_metrics", "cycles");
	json_t *l = json_pack("{s:i,s:i,s:f,s:f}", "prompt_tokens", 36, "generated_tokens", 16, "prefill_ms", 100.0,
			      "decode_ms", 200.0);

	if (isfinite(decode))
		json_object_set_new(l, "decode_tokens_per_s", json_real(decode));
	if (isfinite(prefill))
		json_object_set_new(l, "prefill_tokens_per_s", json_real(prefill));
	if (isfinite(jpt))
		json_object_set_new(l, "j_per_generated_token", json_real(jpt));
	json_object_set_new(p, "llama", l);
	assert_int_equal(model__from_json(m, p, "test"), 0);
	json_decref(p);
}

static const struct llama_diff_row *find(const struct llama_diff_row *rows, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* How many rows are worse beyond the threshold (or on one side only). */
static int worse(const struct model *b, const struct model *n, double threshold)
{
	struct llama_diff_row rows[LLAMA_DIFF_ROWS];
	int k = llama__diff_rows(b, n, threshold, rows), w = 0;

	for (int i = 0; i < k; i++)
		w += rows[i].verdict < 0;
	return w;
}

/* Rates are better higher, joules per token lower; the change is in percent
 * of the base; a threshold-sized change either way is no verdict. */
static void test_diff_rows(void **state)
{
	struct llama_diff_row rows[LLAMA_DIFF_ROWS];
	const struct llama_diff_row *r;
	struct model b, n;
	int k;

	(void)state;
	load(&b, 10.0, 100.0, 2.0);
	load(&n, 8.0, 120.0, 1.0);
	k = llama__diff_rows(&b, &n, 5.0, rows);
	assert_int_equal(k, 3);
	r = find(rows, k, "llama decode_tokens_per_s");
	assert_non_null(r);
	assert_float_equal(r->change_pct, -20.0, 1e-9);
	assert_int_equal(r->verdict, -1);
	r = find(rows, k, "llama prefill_tokens_per_s");
	assert_float_equal(r->change_pct, 20.0, 1e-9);
	assert_int_equal(r->verdict, 1);
	r = find(rows, k, "llama j_per_generated_token");
	assert_float_equal(r->change_pct, -50.0, 1e-9);
	assert_int_equal(r->verdict, 1);
	/* one worse row (decode) */
	assert_int_equal(worse(&b, &n, 5.0), 1);
	/* the other way round: prefill and energy got worse, decode better */
	assert_int_equal(worse(&n, &b, 5.0), 2);
	/* within the threshold: no verdict */
	assert_int_equal(worse(&b, &n, 60.0), 0);
	model__free(&n);

	/* 3% slower decode under a 5% threshold: no regression */
	load(&n, 9.7, 100.0, 2.0);
	k = llama__diff_rows(&b, &n, 5.0, rows);
	r = find(rows, k, "llama decode_tokens_per_s");
	assert_float_equal(r->change_pct, -3.0, 1e-9);
	assert_int_equal(r->verdict, 0);
	assert_int_equal(worse(&b, &n, 5.0), 0);
	model__free(&n);

	/* energy measured in the base only: the gate cannot see it, it fails */
	load(&n, 10.0, 100.0, NAN);
	k = llama__diff_rows(&b, &n, 5.0, rows);
	r = find(rows, k, "llama j_per_generated_token");
	assert_non_null(r);
	assert_false(isfinite(r->new_v));
	assert_int_equal(r->verdict, -1);
	assert_int_equal(worse(&b, &n, 5.0), 1);
	model__free(&n);
	model__free(&b);

	/* energy on neither side: no row for it, nothing fails */
	load(&b, 10.0, 100.0, NAN);
	load(&n, 10.0, 100.0, NAN);
	k = llama__diff_rows(&b, &n, 5.0, rows);
	assert_int_equal(k, 2);
	assert_null(find(rows, k, "llama j_per_generated_token"));
	model__free(&n);
	model__free(&b);
}

/* Recordings without llama.cpp: no rows, no section. */
static void test_no_llama(void **state)
{
	struct llama_diff_row rows[LLAMA_DIFF_ROWS];
	json_t *p = json_pack("{s:{},s:[],s:[],s:{},s:{},s:[],s:{},s:[]}", "phases", "bottlenecks", "recommendations",
			      "system", "memory", "crashes", "aggregate_metrics", "cycles");
	struct model m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	assert_int_equal(llama__diff_rows(&m, &m, 5.0, rows), 0);
	f = open_memstream(&buf, &len);
	llama__html(f, &m);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
	model__free(&m);
	json_decref(p);
}

/* The section: facts as read, figures over the cycles and per cycle. */
static void test_html(void **state)
{
	json_t *p = json_pack("{s:{},s:[],s:[],s:{},s:{},s:[],s:{},s:[]}", "phases", "bottlenecks", "recommendations",
			      "system", "memory", "crashes", "aggregate_metrics", "cycles");
	struct model m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	json_object_set_new(p, "llama",
			    json_pack("{s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:{s:s,s:s,s:i},s:{s:i,s:{s:i,s:i},s:{s:{s:i}}}}",
				      "prompt_tokens", 72, "generated_tokens", 8, "prefill_ms", 40.0, "decode_ms", 60.0,
				      "prefill_tokens_per_s", 1800.0, "decode_tokens_per_s", 100.0,
				      "j_per_generated_token", 0.25, "model", "path", "/m/<bench>.gguf", "file_type", "F32",
				      "n_layer", 4, "context", "n_ctx", 512, "n_threads_used", "prompt", 2, "generation",
				      3, "n_threads_used_calls", "prompt", "2", 2));
	for (int i = 0; i < 2; i++)
		json_array_append_new(json_object_get(p, "cycles"),
				      json_pack("{s:i,s:f,s:{},s:{s:i,s:i,s:f,s:f,s:f,s:f}}", "index", i, "duration_ms",
						60.0, "phases", "llama", "prompt_tokens", 36, "generated_tokens", 4,
						"prefill_ms", 20.0, "decode_ms", 30.0, "prefill_tokens_per_s", 1800.0,
						"decode_tokens_per_s", 100.0));
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	f = open_memstream(&buf, &len);
	llama__html(f, &m);
	fclose(f);
	assert_non_null(strstr(buf, "<h2>llama.cpp</h2>"));
	assert_non_null(strstr(buf, "/m/&lt;bench&gt;.gguf"));
	assert_non_null(strstr(buf, "<th>model n_layer</th><td>4</td>"));
	assert_non_null(strstr(buf, "<th>context n_threads_used</th><td>prompt 2, generation 3</td>"));
	assert_null(strstr(buf, "n_threads_used_calls"));
	assert_non_null(strstr(buf, "<th>all cycles</th><td>72</td><td>8</td><td>40.00</td><td>60.00</td>"
				    "<td>1800.0</td><td>100.0</td><td>0.2500</td>"));
	assert_non_null(strstr(buf, "<th>cycle 0</th><td>36</td><td>4</td>"));
	assert_non_null(strstr(buf, "<th>cycle 1</th><td>36</td><td>4</td>"));
	/* no energy per cycle: a dash, never nan */
	assert_null(strstr(buf, "nan"));
	free(buf);
	model__free(&m);
	json_decref(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_rows),
		cmocka_unit_test(test_no_llama),
		cmocka_unit_test(test_html),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
