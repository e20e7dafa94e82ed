// SPDX-License-Identifier: BSD-2-Clause
/* A finding's or a recommendation's evidence (struct model_evidence) in
 * profile.json: one table, its scalars named by MODEL_EVIDENCE_SCALARS,
 * for the writer and the loader. Every field is left out when not set,
 * except memory_pressure's peak_mb and percent_of_ram, null when unknown. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <jansson.h>

#include "model.h"
#include "gpu_view.h"
#include "profile_side.h"
#include "profile_tables.h"

/* cpus: an integer or a real, as the rule wrote it */
static int cpus_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_evidence *e = base;

	(void)ctx;
	if (!isfinite(e->cpus))
		return 0;
	return profile__set(o, key, e->cpus_integer ? json_integer((json_int_t)e->cpus) : json_real(e->cpus));
}

static int cpus_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_evidence *e = base;
	json_t *v = json_object_get(o, key);

	(void)ctx;
	e->cpus = json_is_number(v) ? json_number_value(v) : NAN;
	e->cpus_integer = json_is_integer(v);
	return 0;
}

/* blocked_ms: the classes above 0 */
static int blocked_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_evidence *e = base;
	json_t *by = json_object();

	(void)ctx;
	for (int k = 0; by && k < BLOCKED_NCLASSES; k++)
		if (e->blocked_ms[k] > 0 && json_object_set_new(by, blocked_class_names[k], json_real(e->blocked_ms[k])))
			goto nomem;
	return profile__set(o, key, by);
nomem:
	json_decref(by);
	return -ENOMEM;
}

static int blocked_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_evidence *e = base;
	json_t *by = json_object_get(o, key);

	(void)ctx;
	for (int k = 0; k < BLOCKED_NCLASSES; k++) {
		json_t *v = json_object_get(by, blocked_class_names[k]);

		e->blocked_ms[k] = json_is_number(v) ? json_number_value(v) : 0;
	}
	return 0;
}

#define JF_T struct model_ev_copy
JF_TABLE(copy_table, JF("count", JF_U64, count), JF("bytes", JF_U64, bytes), JF("ms", JF_REAL, ms));
#undef JF_T

/* copies: the directions with a count, by name */
static int copies_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_evidence *e = base;
	json_t *dirs = json_object();

	for (unsigned int d = 0; dirs && d < IT_GPU_DIR_MAX; d++)
		if (e->copies[d].count && json_object_set_new(dirs, gpu_view__dir_name(d), jf_object(&copy_table, &e->copies[d], ctx)))
			goto nomem;
	return profile__set(o, key, dirs);
nomem:
	json_decref(dirs);
	return -ENOMEM;
}

static int copies_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_evidence *e = base;
	json_t *dirs = json_object_get(o, key);
	int err = 0;

	for (unsigned int d = 0; d < IT_GPU_DIR_MAX && !err; d++)
		err = jf_read(&copy_table, &e->copies[d], json_object_get(dirs, gpu_view__dir_name(d)), ctx);
	return err;
}

/* episodes: a power cap's without a temperature */
static int episodes_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_evidence *e = base;

	(void)ctx;
	return profile__set(o, key, profile_side__episodes_json(e->episodes.v, e->episodes.n, e->episodes_capped));
}

static int episodes_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_evidence *e = base;
	json_t *x, *a = json_object_get(o, key);
	size_t i;

	(void)ctx;
	json_array_foreach(a, i, x) {
		int err;

		if (VEC_RESERVE(e->episodes.v, e->episodes.cap, e->episodes.n, 4))
			return -ENOMEM;
		err = jf_read(&profile_episode_table, &e->episodes.v[e->episodes.n++], x, NULL);
		if (err)
			return err;
	}
	e->episodes_capped = json_array_size(a) && !json_object_get(json_array_get(a, 0), "peak_temp_c");
	return 0;
}

#define JF_T struct model_ev_share
JF_TABLE(function_table, JF("function", JF_NAME, name, .names = &profile_model_names),
	 JF("percent", JF_REAL, percent, .flags = JF_OMIT));
JF_TABLE(stack_table, JF("stack", JF_NAME, name, .names = &profile_model_names),
	 JF("ms", JF_REAL, ms, .flags = JF_OMIT), JF("percent", JF_REAL, percent, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_ev_kernel
JF_TABLE(kernel_table, JF("name", JF_NAME, name, .names = &profile_model_names),
	 JF("count", JF_I64, count), JF("ms", JF_REAL, ms, .flags = JF_OMIT));
#undef JF_T

#define EV_R(name) JF(#name, JF_REAL, name, .flags = JF_OMIT),
#define EV_I(name) JF(#name, JF_I64, name, .flags = JF_OMIT | JF_NEG),
#define EV_N(name) JF(#name, JF_NAME, name, .flags = JF_OMIT, .names = &profile_model_names),
#define JF_T struct model_evidence
JF_TABLE(evidence_table, MODEL_EVIDENCE_SCALARS(EV_R, EV_I, EV_N)
	 JF("peak_mb", JF_REAL, peak_mb, JF_WHEN(has_memory)),
	 JF("percent_of_ram", JF_REAL, percent_of_ram, JF_WHEN(has_memory)),
	 JF_FNS("cpus", cpus_write, cpus_read), JF("gpu_available", JF_BOOL, gpu_available, .flags = JF_OMIT),
	 JF("top_functions", JF_VEC, top_functions, .sub = &function_table, JF_WHEN(has_top_functions)),
	 JF("top_stacks", JF_VEC, top_stacks, .sub = &stack_table, JF_WHEN(has_top_stacks)),
	 JF("top_kernel", JF_OBJ, top_kernel, .sub = &kernel_table, JF_WHEN(has_top_kernel)),
	 JF("top_idle_stack", JF_OBJ, top_idle_stack, .sub = &stack_table, JF_WHEN(has_top_idle_stack)),
	 { .key = "blocked_ms", .kind = JF_FN, .write = blocked_write, .read = blocked_read, JF_WHEN(has_blocked_ms) },
	 { .key = "copies", .kind = JF_FN, .write = copies_write, .read = copies_read, JF_WHEN(has_copies) },
	 { .key = "episodes", .kind = JF_FN, .write = episodes_write, .read = episodes_read, JF_WHEN(has_episodes) });
#undef JF_T
#undef EV_R
#undef EV_I
#undef EV_N

int profile_evidence__write(const struct model_evidence *e, const char *key, json_t *o, const void *ctx)
{
	return profile__set(o, key, jf_object(&evidence_table, e, ctx));
}

int profile_evidence__read(struct model_evidence *e, const char *key, json_t *o, void *ctx)
{
	json_t *v = json_object_get(o, key);

	model_evidence__free(e);
	if (!json_is_object(v))
		return 0;
	e->present = true;
	return jf_read_into(&evidence_table, e, v, ctx);
}
