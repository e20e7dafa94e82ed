// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's samples: the tables of the sampling concern's account of
 * its samples (struct model_samples): per process and phase, the stacks'
 * quality and, with --call-graph dwarf, the unwinding. */
#include <errno.h>
#include <math.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T struct model_samples_proc
JF_TABLE(samples_proc_table, JF("pid", JF_INT, pid), JF("comm", JF_CHARS, comm), JF("samples", JF_U64, samples));
#undef JF_T

#define JF_T struct model_leaf_object
JF_TABLE(leaf_object_table, JF(NULL, JF_KEY, name), JF("samples", JF_U64, samples),
	 JF("complete", JF_U64, complete), JF("truncated", JF_U64, truncated),
	 JF("truncated_percent", JF_REAL, truncated_percent, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_unwind
JF_TABLE(unwind_table, JF("method", JF_CHARS, method), JF("stack_bytes", JF_U64, stack_bytes),
	 JF("records", JF_U64, records), JF("copy_failed", JF_U64, copy_failed), JF("copy_short", JF_U64, copy_short),
	 JF("lost", JF_U64, lost), JF("bad_records", JF_U64, bad_records),
	 JF("unwind_ended_with_error", JF_U64, unwind_ended_with_error), JF("unwind_too_deep", JF_U64, unwind_too_deep),
	 JF("unwind_no_modules", JF_U64, unwind_no_modules), JF("unwind_failed", JF_U64, unwind_failed),
	 JF("module_rebuilds", JF_U64, module_rebuilds),
	 JF("jit_leaf_callers_restored", JF_U64, jit_leaf_callers_restored),
	 JF("avg_frames", JF_REAL, avg_frames, .flags = JF_OMIT),
	 JF("avg_unwind_us", JF_REAL, avg_unwind_us, .flags = JF_OMIT),
	 JF("max_unwind_us", JF_REAL, max_unwind_us, .flags = JF_OMIT));
#undef JF_T

/* {phase name: {samples, percent}} (ctx: the model, for the names) */
static int by_phase_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_samples *s = base;
	const struct model *m = ctx;
	json_t *ph = json_object();

	for (int i = 1; ph && i < IT_MAX_PHASES; i++)
		if (s->by_phase[i].present && m->phase_names[i])
			json_object_set_new(ph, m->phase_names[i],
					    json_pack("{s:I,s:f}", "samples", (json_int_t)s->by_phase[i].samples, "percent",
						      s->by_phase[i].percent));
	return ph && !json_object_set_new(o, key, ph) ? 0 : -ENOMEM;
}

static int by_phase_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_samples *s = base;
	const char *name;
	json_t *v;

	json_object_foreach(json_object_get(o, key), name, v) {
		int i = model__phase_id(ctx, name);
		json_t *n = json_object_get(v, "samples"), *p = json_object_get(v, "percent");

		if (i <= 0)
			continue;
		s->by_phase[i].present = true;
		s->by_phase[i].samples = json_is_integer(n) && json_integer_value(n) > 0 ? (uint64_t)json_integer_value(n) : 0;
		s->by_phase[i].percent = json_is_number(p) ? json_number_value(p) : NAN;
	}
	return 0;
}

#define JF_T struct model_samples
JF_TABLE(quality_table, JF("stacks", JF_U64, stack_quality.stacks), JF("complete", JF_U64, stack_quality.complete),
	 JF("complete_percent", JF_REAL, stack_quality.complete_percent, .flags = JF_OMIT),
	 JF("user_stack_missing", JF_U64, stack_quality.user_stack_missing),
	 JF("distinct_stacks", JF_U64, stack_quality.distinct_stacks),
	 JF("by_leaf_object", JF_MAP, stack_quality.by_leaf_object, .sub = &leaf_object_table));
JF_TABLE(samples_fields_table, JF("total", JF_U64, total), JF("event", JF_CHARS, event),
	 JF("requested_hz", JF_INT, requested_hz),
	 JF("target_cpu_seconds", JF_REAL, target_cpu_seconds, .flags = JF_OMIT), JF("achieved_hz", JF_REAL, achieved_hz),
	 JF("sampling_cpus", JF_INT, sampling_cpus), JF("call_graph", JF_CHARS, call_graph),
	 JF("per_process", JF_VEC, per_process, .sub = &samples_proc_table),
	 JF_FNS("by_phase", by_phase_write, by_phase_read), JF_GROUP("stack_quality", quality_table),
	 JF("unwind", JF_OBJ, unwind, .sub = &unwind_table, JF_WHEN(has_unwind)),
	 JF("stack_collisions", JF_U64, stack_collisions));
JF_TABLE_PUBLIC(profile_samples_table, JF_GROUP(NULL, samples_fields_table, JF_WHEN(present)));
#undef JF_T
