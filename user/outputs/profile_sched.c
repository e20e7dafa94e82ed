// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's scheduler figures: the split of a wall interval (cycles,
 * their phases, processes, phases), `sched` (struct model_sched_figures)
 * and `offcpu` (struct model_offcpu_figures), one table each for the
 * writer and the loader. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

/* ---- blocked time by reason: {sleep, io, lock, ...} in ms ---- */

static int blocked_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const double *ms = base;

	(void)key, (void)ctx;
	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		if (json_object_set_new(o, blocked_class_names[i], json_real(ms[i])))
			return -ENOMEM;
	return 0;
}

/* a reason missing (or not a number) reads as 0 */
static int blocked_read(void *base, const char *key, json_t *o, void *ctx)
{
	double *ms = base;

	(void)key, (void)ctx;
	for (int i = 0; i < BLOCKED_NCLASSES; i++) {
		json_t *v = json_object_get(o, blocked_class_names[i]);

		ms[i] = json_is_number(v) ? json_number_value(v) : 0;
	}
	return 0;
}

#define JF_T double[BLOCKED_NCLASSES]
JF_TABLE(blocked_table, JF_FNS(NULL, blocked_write, blocked_read));
#undef JF_T

/* ---- the split ---- */

/* On-CPU, run queue and blocked read as 0 when missing (a hand-written
 * profile may give one of them). */
#define JF_T struct model_split
JF_TABLE(split_fields_table, JF("oncpu_ms", JF_REAL, oncpu_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("runq_wait_ms", JF_REAL, runq_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("runq_wait_others_ms", JF_REAL, runq_others_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("offcpu_ms", JF_REAL, offcpu_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("blocked", JF_OBJ, blocked_ms, .sub = &blocked_table),
	 JF("unattributed_ms", JF_REAL, unattributed_ms, .flags = JF_OMIT, JF_WHEN(has_wall)),
	 JF("unattributed_percent", JF_REAL, unattributed_percent, .flags = JF_OMIT, JF_WHEN(has_wall)));
JF_TABLE_PUBLIC(profile_split_table, JF_GROUP(NULL, split_fields_table, JF_WHEN(present)));
#undef JF_T

/* ---- run-queue waits ---- */

/* [{lo_us, hi_us, count}] up to the last slot that counted a wait */
static int runq_hist_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_runq *r = base;
	json_t *h = json_array();
	int last = -1;

	(void)ctx;
	for (int i = 0; i < IT_HIST_SLOTS; i++)
		if (r->hist_us[i])
			last = i;
	for (int i = 0; h && i <= last; i++)
		if (json_array_append_new(h, json_pack("{s:I,s:I,s:I}", "lo_us", (json_int_t)(i ? 1ll << i : 0),
						       "hi_us", (json_int_t)(1ll << (i + 1)),
						       "count", (json_int_t)r->hist_us[i]))) {
			json_decref(h);
			return -ENOMEM;
		}
	return profile__set(o, key, h);
}

static int runq_hist_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_runq *r = base;
	json_t *b;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(o, key), i, b) {
		json_t *lo = json_object_get(b, "lo_us"), *n = json_object_get(b, "count");
		double from = json_is_number(lo) ? json_number_value(lo) : 0;
		int slot = 0;

		while (slot + 1 < IT_HIST_SLOTS && ldexp(1, slot + 1) <= from)
			slot++;
		r->hist_us[slot] += json_is_integer(n) && json_integer_value(n) > 0 ? (uint64_t)json_integer_value(n) : 0;
	}
	return 0;
}

#define JF_T struct model_runq
JF_TABLE(runq_stats_table, JF_FNS("histogram_us", runq_hist_write, runq_hist_read),
	 JF("p50_us", JF_REAL, p50_us), JF("p95_us", JF_REAL, p95_us), JF("p99_us", JF_REAL, p99_us));
JF_TABLE(runq_table, JF("waits", JF_U64, waits), JF_GROUP(NULL, runq_stats_table));
#undef JF_T

/* ---- sched ---- */

#define JF_T struct model_sched_proc
JF_TABLE(proc_switches_table, JF("voluntary", JF_U64, nvcsw), JF("involuntary", JF_U64, nivcsw));
JF_TABLE(sched_proc_table, JF("pid", JF_INT, pid), JF("comm", JF_CHARS, comm), JF("wall_ms", JF_REAL, wall_ms),
	 JF("oncpu_ms", JF_REAL, oncpu_ms), JF("runq_wait_ms", JF_REAL, runq_wait_ms),
	 JF("runq_wait_others_ms", JF_REAL, runq_wait_others_ms), JF("offcpu_ms", JF_REAL, offcpu_ms),
	 JF("blocked", JF_OBJ, blocked_ms, .sub = &blocked_table),
	 JF("runq_share_percent", JF_REAL, runq_share_percent), JF_GROUP("context_switches", proc_switches_table),
	 JF("main_thread", JF_OBJ, main_thread, .sub = &profile_split_table),
	 JF("runq", JF_OBJ, runq, .sub = &runq_table));
#undef JF_T

#define JF_T struct model_sched_phase
JF_TABLE(sched_phase_table, JF(NULL, JF_OBJ, split, .sub = &profile_split_table),
	 JF("runq", JF_OBJ, runq, .sub = &runq_stats_table));
#undef JF_T

/* {phase name: its split and waits} (ctx: the model, for the names) */
static int per_phase_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_sched_figures *s = base;
	const struct model *m = ctx;
	json_t *phases = json_object();

	for (int ph = 1; phases && ph < IT_MAX_PHASES; ph++)
		if (s->per_phase[ph].present && m->phase_names[ph] &&
		    profile__set(phases, m->phase_names[ph], jf_object(&sched_phase_table, &s->per_phase[ph], ctx)))
			break;
	return profile__set(o, key, phases);
}

/* the phases' names are known: profile.json's phases come first */
static int per_phase_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_sched_figures *s = base;
	const char *name;
	json_t *v;

	json_object_foreach(json_object_get(o, key), name, v) {
		int ph = model__phase_id(ctx, name);
		int err;

		if (ph <= 0)
			continue;
		err = jf_read(&sched_phase_table, &s->per_phase[ph], v, ctx);
		if (err)
			return err;
		s->per_phase[ph].present = true;
	}
	return 0;
}

#define JF_T struct model_sched_figures
JF_TABLE(sched_lost_table, JF("threads_not_tracked", JF_U64, lost.threads_not_tracked),
	 JF("updates", JF_U64, lost.updates), JF("offcpu_kernel_stacks", JF_U64, lost.offcpu_kernel_stacks),
	 JF("offcpu_user_stacks", JF_U64, lost.offcpu_user_stacks));
JF_TABLE(unseen_table, JF("in", JF_U64, unseen_in), JF("out", JF_U64, unseen_out));
JF_TABLE(unattributed_table, JF("ms", JF_REAL, unattributed.ms), JF("oncpu_ms", JF_REAL, unattributed.oncpu_ms),
	 JF("runq_wait_ms", JF_REAL, unattributed.runq_wait_ms), JF("offcpu_ms", JF_REAL, unattributed.offcpu_ms),
	 JF("intervals", JF_U64, unattributed.intervals));
JF_TABLE(sched_switches_table, JF("voluntary", JF_U64, nvcsw), JF("involuntary", JF_U64, nivcsw));
JF_TABLE(sched_totals_table, JF_GROUP("lost", sched_lost_table), JF_GROUP("unseen_switches", unseen_table),
	 JF_GROUP("phase_unattributed", unattributed_table), JF("cpus", JF_INT, cpus),
	 JF_GROUP("context_switches", sched_switches_table), JF("oncpu_ms", JF_REAL, oncpu_ms),
	 JF("offcpu_ms", JF_REAL, offcpu_ms), JF("runq_wait_ms", JF_REAL, runq_wait_ms),
	 JF("runq_wait_others_ms", JF_REAL, runq_wait_others_ms),
	 JF("runq_share_percent", JF_REAL, runq_share_percent),
	 JF("avg_runnable_threads", JF_REAL, avg_runnable_threads), JF("runq", JF_OBJ, runq, .sub = &runq_table),
	 JF("per_process", JF_VEC, per_process, .sub = &sched_proc_table),
	 JF_FNS("per_phase", per_phase_write, per_phase_read),
	 JF("max_cycle_unattributed_percent", JF_REAL, max_cycle_unattributed_percent));
JF_TABLE(sched_fields_table, JF("available", JF_BOOL, available),
	 JF("missing_tracepoints", JF_CHARS, missing_tracepoints),
	 JF_GROUP(NULL, sched_totals_table, JF_WHEN(has_totals)));
JF_TABLE_PUBLIC(profile_sched_table, JF_GROUP(NULL, sched_fields_table, JF_WHEN(present)));
#undef JF_T

/* ---- offcpu ---- */

#define JF_T struct model_top_stack
JF_TABLE(top_stack_table, JF("stack", JF_NAME, stack, .names = &profile_model_names), JF("ms", JF_REAL, ms),
	 JF("percent", JF_REAL, percent));
#undef JF_T

#define JF_T struct model_offcpu_dwarf
JF_TABLE(offcpu_dwarf_table, JF("records", JF_U64, records), JF("bad_records", JF_U64, bad_records),
	 JF("sent", JF_U64, sent), JF("lost", JF_U64, lost), JF("copy_failed", JF_U64, copy_failed),
	 JF("dropped_ms", JF_REAL, dropped_ms), JF("sample_us", JF_U64, sample_us),
	 JF("candidates", JF_U64, candidates), JF("reused", JF_U64, reused), JF("reuse_missed", JF_U64, reuse_missed),
	 JF("sampled_ms", JF_REAL, sampled_ms), JF("unweighed_ms", JF_REAL, unweighed_ms),
	 JF("short_exited_ms", JF_REAL, short_exited_ms));
#undef JF_T

/* {phase name: ms} of the wakers' phases (ctx: the model, for the names) */
static int by_waker_phase_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_offcpu_figures *f = base;
	const struct model *m = ctx;
	json_t *by = json_object();

	for (int ph = 1; by && ph < IT_MAX_PHASES; ph++)
		if (m->phase_names[ph] && isfinite(f->waiting.by_waker_phase_ms[ph]) &&
		    profile__set(by, m->phase_names[ph], json_real(f->waiting.by_waker_phase_ms[ph])))
			break;
	return profile__set(o, key, by);
}

static int by_waker_phase_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_offcpu_figures *f = base;
	const char *name;
	json_t *v;

	for (int ph = 0; ph < IT_MAX_PHASES; ph++)
		f->waiting.by_waker_phase_ms[ph] = NAN;
	json_object_foreach(json_object_get(o, key), name, v) {
		int ph = model__phase_id(ctx, name);

		if (ph > 0 && json_is_number(v))
			f->waiting.by_waker_phase_ms[ph] = json_number_value(v);
	}
	return 0;
}

#define JF_T struct model_offcpu_figures
JF_TABLE(offcpu_quality_table, JF("method", JF_CHARS, stack_quality.method),
	 JF("blocked_in_stacks_ms", JF_REAL, stack_quality.blocked_in_stacks_ms),
	 JF("complete_ms", JF_REAL, stack_quality.complete_ms),
	 JF("complete_percent", JF_REAL, stack_quality.complete_percent),
	 JF("user_stack_missing_ms", JF_REAL, stack_quality.user_stack_missing_ms),
	 JF("dwarf", JF_OBJ, stack_quality.dwarf, .sub = &offcpu_dwarf_table, JF_WHEN(stack_quality.has_dwarf)));
JF_TABLE(waiting_table, JF("total_ms", JF_REAL, waiting.total_ms),
	 JF_FNS("by_waker_phase", by_waker_phase_write, by_waker_phase_read),
	 JF("outside_phases_ms", JF_REAL, waiting.outside_phases_ms), JF("in_stacks_ms", JF_REAL, waiting.in_stacks_ms),
	 JF("top_stacks", JF_VEC, waiting.top_stacks, .sub = &top_stack_table));
JF_TABLE(offcpu_fields_table, JF("total_ms", JF_REAL, total_ms), JF("in_stacks_ms", JF_REAL, in_stacks_ms),
	 JF("min_block_us", JF_U64, min_block_us), JF("blocked", JF_OBJ, blocked_ms, .sub = &blocked_table),
	 JF("top_stacks", JF_VEC, top_stacks, .sub = &top_stack_table), JF_GROUP("stack_quality", offcpu_quality_table),
	 JF_GROUP("waiting_for_thread", waiting_table));
JF_TABLE_PUBLIC(profile_offcpu_table, JF_GROUP(NULL, offcpu_fields_table, JF_WHEN(present)));
#undef JF_T
