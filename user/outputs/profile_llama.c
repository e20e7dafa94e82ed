// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's llama: a cycle's figures (and the cycles' over the run),
 * with the model file and context the process showed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T struct model_llama_cycle
static int llama_batches_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_llama_cycle *l = base;

	(void)key, (void)o, (void)ctx;
	l->generation_batches_tokens = l->generated_tokens ? l->generated_tokens - 1 : 0;
	return 0;
}

/* j_per_generated_token only where measured: no zero or null stands for a
 * missing energy */
JF_TABLE_PUBLIC(profile_llama_cycle_table, JF("prompt_tokens", JF_U64, prompt_tokens),
	 JF("generated_tokens", JF_U64, generated_tokens), JF("prefill_ms", JF_REAL, prefill_ms, .flags = JF_OMIT),
	 JF("decode_ms", JF_REAL, decode_ms, .flags = JF_OMIT), JF("prefill_tokens_per_s", JF_REAL, prefill_tokens_per_s),
	 JF("decode_tokens_per_s", JF_REAL, decode_tokens_per_s),
	 JF("j_per_generated_token", JF_REAL, j_per_generated_token, .flags = JF_OMIT),
	 JF_FNS(NULL, NULL, llama_batches_read));
#undef JF_T

static const char *const llama_rows[MODEL_LLAMA_ROWS] = { "prompt", "generation", "other" };

/* its name, or its number where the name is unknown */
static int file_type_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_llama_facts *f = base;

	(void)ctx;
	if (f->model.file_type[0])
		return profile__set(o, key, json_string(f->model.file_type));
	return f->model.file_type_id >= 0 ? profile__set(o, key, json_integer(f->model.file_type_id)) : 0;
}

static int file_type_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_llama_facts *f = base;
	json_t *v = json_object_get(o, key);

	(void)ctx;
	if (json_is_string(v))
		snprintf(f->model.file_type, sizeof(f->model.file_type), "%s", json_string_value(v));
	else if (json_is_integer(v) && f->model.file_type_id < 0)
		f->model.file_type_id = json_integer_value(v);
	return 0;
}

/* {row: {"N": calls, ..., ">=64": calls}} */
static int calls_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_llama_facts *f = base;
	json_t *calls = json_object();

	(void)ctx;
	for (int r = 0; calls && r < MODEL_LLAMA_ROWS; r++) {
		json_t *dist = json_object();

		for (int n = 1; dist && n <= MODEL_LLAMA_THREAD_SLOTS; n++) {
			uint32_t c = f->context.calls[r][n % MODEL_LLAMA_THREAD_SLOTS];
			char k[16];

			if (!c)
				continue;
			snprintf(k, sizeof(k), n < MODEL_LLAMA_THREAD_SLOTS ? "%d" : ">=%d", n);
			json_object_set_new(dist, k, json_integer(c));
		}
		if (json_object_size(dist))
			json_object_set_new(calls, llama_rows[r], dist);
		else
			json_decref(dist);
	}
	return profile__set(o, key, calls);
}

static int calls_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_llama_facts *f = base;
	json_t *calls = json_object_get(o, key), *v;
	const char *k;

	(void)ctx;
	for (int r = 0; r < MODEL_LLAMA_ROWS; r++)
		json_object_foreach(json_object_get(calls, llama_rows[r]), k, v) {
			int n = atoi(k[0] == '>' ? k + 2 : k);

			if (n > 0 && n <= MODEL_LLAMA_THREAD_SLOTS && json_is_integer(v) && json_integer_value(v) > 0)
				f->context.calls[r][n % MODEL_LLAMA_THREAD_SLOTS] = (uint32_t)json_integer_value(v);
		}
	return 0;
}

#define SHOWN(key, member) JF(key, JF_I64, member, .flags = JF_OMIT | JF_NEG)
#define JF_T struct model_llama_facts
JF_TABLE(llama_model_table, JF("path", JF_CHARS, model.path), JF("error", JF_CHARS, model.error, .flags = JF_OMIT),
	 JF("arch", JF_CHARS, model.arch, .flags = JF_OMIT), JF("n_params", JF_U64, model.n_params, JF_WHEN(model.read)),
	 JF_FNS("file_type", file_type_write, file_type_read), SHOWN("file_type_id", model.file_type_id),
	 SHOWN("n_layer", model.n_layer), SHOWN("n_embd", model.n_embd), SHOWN("n_ctx_train", model.n_ctx_train),
	 JF("size_bytes", JF_U64, model.size_bytes, JF_WHEN(model.read)));
JF_TABLE(threads_used_table, SHOWN("prompt", context.threads_used[MODEL_LLAMA_PROMPT]),
	 SHOWN("generation", context.threads_used[MODEL_LLAMA_GENERATION]),
	 SHOWN("other", context.threads_used[MODEL_LLAMA_OTHER]));
JF_TABLE(llama_context_table, SHOWN("n_ctx", context.n_ctx), SHOWN("n_batch", context.n_batch),
	 SHOWN("n_ubatch", context.n_ubatch), SHOWN("n_seq_max", context.n_seq_max),
	 SHOWN("n_threads", context.n_threads), SHOWN("n_threads_batch", context.n_threads_batch),
	 JF_GROUP("n_threads_used", threads_used_table, .flags = JF_OMIT),
	 { .key = "n_threads_used_calls", .kind = JF_FN, .write = calls_write, .read = calls_read,
	   JF_WHEN(context.has_calls) });
JF_TABLE(llama_facts_table, JF("pid", JF_INT, pid), JF_GROUP("model", llama_model_table, JF_WHEN(has_model)),
	 JF_GROUP("context", llama_context_table, JF_WHEN(has_context)));
#undef JF_T
#undef SHOWN

int profile_llama__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *v;

	if (!m->llama.present && !m->llama_facts.present && !m->requests.present)
		return 0;
	v = m->llama.present ? jf_object(&profile_llama_cycle_table, &m->llama, ctx) : json_object();
	if (v && ((m->llama_facts.present && jf_write(&llama_facts_table, &m->llama_facts, v, ctx)) ||
		  profile_requests__summary_write(m, v))) {
		json_decref(v);
		v = NULL;
	}
	return profile__set(o, key, v);
}

int profile_llama__read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	struct model_llama_facts *f = &m->llama_facts;
	json_t *l = json_object_get(o, key);

	if (!json_is_object(l))
		return 0;
	if (json_is_number(json_object_get(l, "prompt_tokens"))) {
		jf_read(&profile_llama_cycle_table, &m->llama, l, ctx);
		m->llama.present = true;
	}
	model__llama_facts_init(f);
	jf_read_into(&llama_facts_table, f, l, ctx);
	f->present = f->has_model || f->has_context;
	return profile_requests__summary_read(m, l);
}
