// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's tail_cycles: the tables of a tail cycle, its causes and
 * their stacks (docs/profile-json.md, Tail cycles). Kinds, names and stacks
 * are in model.names: written as strings, interned again on loading. */
#include <errno.h>
#include <string.h>

#include "json_fields.h"
#include "json_text.h"
#include "model.h"
#include "profile_tables.h"

static int set_name(json_t *o, const char *key, const struct model *m, int32_t i)
{
	json_t *v = json_text(i >= 0 && (size_t)i < m->nnames ? m->names[i] : "");

	return v && !json_object_set_new(o, key, v) ? 0 : -ENOMEM;
}

static int get_name(json_t *o, const char *key, struct model *m, int32_t *i)
{
	json_t *v = json_object_get(o, key);

	*i = model__intern(m, json_is_string(v) ? json_string_value(v) : "?");
	return *i < 0 ? -ENOMEM : 0;
}

static int stack_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	return set_name(o, key, ctx, ((const struct model_tail_stack *)base)->stack);
}

static int stack_read(void *base, const char *key, json_t *o, void *ctx)
{
	return get_name(o, key, ctx, &((struct model_tail_stack *)base)->stack);
}

static int stack_kind_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)ctx;
	return json_object_set_new(o, key, json_string(((const struct model_tail_stack *)base)->oncpu ? "oncpu" : "offcpu"));
}

static int stack_kind_read(void *base, const char *key, json_t *o, void *ctx)
{
	const char *v = json_string_value(json_object_get(o, key));

	(void)ctx;
	((struct model_tail_stack *)base)->oncpu = v && !strcmp(v, "oncpu");
	return 0;
}

#define JF_T struct model_tail_stack
JF_TABLE(tail_stack_table, JF_FNS("stack", stack_write, stack_read), JF_FNS("kind", stack_kind_write, stack_kind_read),
	 JF("ms", JF_REAL, ms, .flags = JF_OMIT), JF("excess_ms", JF_REAL, excess_ms, .flags = JF_OMIT));
#undef JF_T

static int cause_name_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_tail_cause *c = base;

	return set_name(o, key, ctx, strcmp(key, "kind") ? c->name : c->kind);
}

static int cause_name_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_tail_cause *c = base;

	return get_name(o, key, ctx, strcmp(key, "kind") ? &c->name : &c->kind);
}

/* how far below its median the cycle's mean clock was */
static int clock_drop_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_tail_cause *c = base;

	(void)ctx;
	return json_object_set_new(o, key, json_real(100.0 * (1 - c->value / c->median)));
}

/* the figures of a timed cause, a count or a clock */
#define JF_T struct model_tail_cause
JF_TABLE(tail_cause_table, JF_FNS("kind", cause_name_write, cause_name_read),
	 JF_FNS("name", cause_name_write, cause_name_read),
	 JF("excess_ms", JF_REAL, excess, .flags = JF_OMIT, JF_WHEN(timed)),
	 JF("value_ms", JF_REAL, value, .flags = JF_OMIT, JF_WHEN(timed)),
	 JF("median_ms", JF_REAL, median, .flags = JF_OMIT, JF_WHEN(timed)),
	 JF("stacks", JF_VEC, stacks, .sub = &tail_stack_table, JF_WHEN(has_stacks)),
	 JF("excess_count", JF_REAL, excess, .flags = JF_OMIT, JF_WHEN(count)),
	 JF("value", JF_REAL, value, .flags = JF_OMIT, JF_WHEN(count)),
	 JF("median", JF_REAL, median, .flags = JF_OMIT, JF_WHEN(count)),
	 JF("value_mhz", JF_REAL, value, .flags = JF_OMIT, JF_WHEN(mhz)),
	 JF("median_mhz", JF_REAL, median, .flags = JF_OMIT, JF_WHEN(mhz)),
	 { .key = "clock_drop_percent", .kind = JF_FN, .write = clock_drop_write, JF_WHEN(mhz) });
#undef JF_T

#define JF_T struct model_tail_cycle
JF_TABLE(tail_cycle_table, JF("cycle", JF_U32, cycle), JF("pid", JF_INT, pid), JF("ms", JF_REAL, ms, .flags = JF_OMIT),
	 JF("median_ms", JF_REAL, median_ms, .flags = JF_OMIT), JF("excess_ms", JF_REAL, excess_ms, .flags = JF_OMIT),
	 JF("causes", JF_VEC, causes, .sub = &tail_cause_table));
#undef JF_T

#define JF_T struct model
JF_TABLE(tail_table, JF("tail_cycles", JF_VEC, tail, .sub = &tail_cycle_table, JF_WHEN(have_tail)));
#undef JF_T

int profile_tail__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)key;
	return jf_write(&tail_table, base, o, ctx ? ctx : base);
}

int profile_tail__read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)key, (void)ctx;
	return json_is_array(json_object_get(o, "tail_cycles")) ? jf_read_into(&tail_table, base, o, base) : 0;
}

json_t *profile_tail__json(const struct model *m)
{
	json_t *o = json_object(), *a;

	if (!o || jf_write(&tail_table, m, o, m)) {
		json_decref(o);
		return NULL;
	}
	a = json_incref(json_object_get(o, "tail_cycles"));
	json_decref(o);
	return a;
}
