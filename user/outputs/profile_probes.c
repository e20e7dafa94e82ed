// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's probes (every spec, where it was placed, its hits) and
 * probes_overhead (what the probes cost per phase and cycle): their tables. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T int32_t
JF_TABLE(name_list_table, { .kind = JF_NAME, .names = &profile_model_names });
#undef JF_T

static int method_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)ctx;
	return ((const struct model_probe *)base)->sampled ? profile__set(o, key, json_string("sampled")) : 0;
}

static int method_read(void *base, const char *key, json_t *o, void *ctx)
{
	const char *v = json_string_value(json_object_get(o, key));

	(void)ctx;
	((struct model_probe *)base)->sampled = v && !strcmp(v, "sampled");
	return 0;
}

#define JF_T struct model_probe_python
JF_TABLE(probe_python_table, JF("observations", JF_U64, observations),
	 JF("edges_between_observations", JF_U64, edges_between_observations),
	 JF("resolution_ms_mean", JF_REAL, resolution_ms_mean, .flags = JF_OMIT),
	 JF("resolution_ms_max", JF_REAL, resolution_ms_max, .flags = JF_OMIT),
	 JF("deferred", JF_U64, deferred, JF_WHEN(has_edges)), JF("lost", JF_U64, lost, JF_WHEN(has_edges)));
#undef JF_T

/* a probe of the probes concern; py: and js: specs too (ctx: the model) */
#define JF_T struct model_probe
JF_TABLE(probe_table, JF("spec", JF_NAME, spec, .names = &profile_model_names), JF("role", JF_CHARS, role, .flags = JF_OMIT),
	 JF("phase", JF_NAME, phase, .names = &profile_model_names, .flags = JF_OMIT),
	 JF("count", JF_NAME, count, .names = &profile_model_names, .flags = JF_OMIT),
	 JF("placed_in", JF_VEC, placed_in, .sub = &name_list_table), JF("hits", JF_U64, hits),
	 JF("from_preset", JF_BOOL, from_preset),
	 JF("not_placed", JF_NAME, not_placed, .names = &profile_model_names, .flags = JF_OMIT),
	 JF_FNS("method", method_write, method_read), JF("samples", JF_U64, samples, JF_WHEN(sampled)),
	 JF("warning", JF_NAME, warning, .names = &profile_model_names, .flags = JF_OMIT),
	 JF("callers", JF_VEC, callers, .sub = &name_list_table, JF_WHEN(has_callers)),
	 JF("timed_by", JF_CHARS, timed_by, .flags = JF_OMIT),
	 JF("native_because", JF_NAME, native_because, .names = &profile_model_names, .flags = JF_OMIT),
	 JF("fallback", JF_BOOL, fallback, JF_WHEN(fallback)),
	 JF("python", JF_OBJ, python, .sub = &probe_python_table, JF_WHEN(has_python)));
#undef JF_T

#define JF_T struct model_probe_estimate
JF_TABLE(estimate_table, JF("hits", JF_REAL, hits, .flags = JF_OMIT),
	 JF("estimated_ms", JF_REAL, estimated_ms, .flags = JF_OMIT), JF("percent", JF_REAL, percent, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_preset_probe_cost
JF_TABLE(preset_cost_table, JF("spec", JF_NAME, spec, .names = &profile_model_names),
	 JF("phase", JF_NAME, phase, .names = &profile_model_names), JF("hits", JF_REAL, hits, .flags = JF_OMIT),
	 JF("estimated_ms", JF_REAL, estimated_ms, .flags = JF_OMIT),
	 JF("percent_of_phase", JF_REAL, percent_of_phase, .flags = JF_OMIT), JF("over_limit", JF_BOOL, over_limit));
#undef JF_T

/* {phase name: its estimate} */
static int estimates_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = ctx;
	const struct model_probe_cost *pc = base;
	json_t *per = json_object();

	for (int ph = 1; per && ph < IT_MAX_PHASES; ph++)
		if (pc->phases[ph].present && m->phase_names[ph] &&
		    profile__set(per, m->phase_names[ph], jf_object(&estimate_table, &pc->phases[ph], ctx)))
			break;
	return profile__set(o, key, per);
}

static int estimates_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_probe_cost *pc = base;
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(o, key), k, v) {
		int ph = model__phase_id(ctx, k);

		if (ph > 0) {
			jf_read(&estimate_table, &pc->phases[ph], v, ctx);
			pc->phases[ph].present = true;
		}
	}
	return 0;
}

#define JF_T struct model_probe_cost
JF_TABLE(probe_cost_table, JF("cost_ns_per_hit", JF_REAL, cost_ns),
	 JF("calibration_calls", JF_INT, calibration_calls), JF("error", JF_CHARS, error, .flags = JF_OMIT),
	 JF_FNS("phases", estimates_write, estimates_read),
	 JF("cycles", JF_OBJ, cycles, .sub = &estimate_table, JF_WHEN(cycles.present)),
	 JF("preset_probes", JF_VEC, preset_probes, .sub = &preset_cost_table),
	 JF("max_percent", JF_REAL, max_percent, .flags = JF_OMIT), JF("warning", JF_BOOL, warning));
#undef JF_T

int profile_probes__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *arr;

	(void)ctx;
	if (!m->have_probes)
		return 0;
	arr = json_array();
	for (size_t i = 0; arr && i < m->probes.n; i++)
		json_array_append_new(arr, jf_object(&probe_table, &m->probes.v[i], m));
	return profile__set(o, key, arr);
}

int profile_probes__read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v;
	size_t i;

	(void)ctx;
	if (!json_is_array(json_object_get(o, key)))
		return 0;
	m->have_probes = true;
	json_array_foreach(json_object_get(o, key), i, v) {
		struct model_probe *p = model__add_probe(m);

		if (!p || jf_read(&probe_table, p, v, m))
			return -ENOMEM;
	}
	return 0;
}

int profile_overhead__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;

	(void)ctx;
	return m->probe_cost.derived ? profile__set(o, key, jf_object(&probe_cost_table, &m->probe_cost, m)) : 0;
}

int profile_overhead__read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v = json_object_get(o, key);

	(void)ctx;
	if (!json_is_object(v))
		return 0;
	m->probe_cost.derived = true;
	return jf_read_into(&probe_cost_table, &m->probe_cost, v, m);
}
