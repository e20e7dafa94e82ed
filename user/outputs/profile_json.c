// SPDX-License-Identifier: BSD-2-Clause
/* profile.json ↔ the model: one table (profile_table, at the end) names
 * every top-level key with its writer and its reader, the sections' own
 * tables name their fields (json_fields.h): here the run, cycles, phases,
 * findings and gpu.cuda, still kept as JSON; side data, samples, tail,
 * probes, system, self, llama, sched, offcpu, network and crashes in
 * profile_*.c (profile_tables.h). model__to_json walks it to
 * write; model__from_json walks the same table to load a profile back
 * (for `report` and `diff`), so that they read the same typed figures the
 * recording computed. The contract: docs/profile-json.md and
 * docs/profile.schema.json. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json_fields.h"
#include "json_num.h"
#include "json_text.h"
#include "model.h"
#include "config_file.h"
#include "profile.h"
#include "profile_tables.h"
#include "profile_side.h"
#include "stats.h"

/* The id of a phase or count name, added when new; -E2BIG past the
 * IT_MAX_PHASES - 1 names the model holds (the kernel's per-thread slots). */
static int name_id(char **names, const char *name)
{
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (!names[i])
			return (names[i] = strdup(name)) ? i : -ENOMEM;
	return -E2BIG;
}

/* A count: 0 when missing, negative or out of range (as in a hand-edited
 * or corrupt file). */
static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	/* a real out of uint64_t's range would make the cast undefined */
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) :
	       json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 0x1p64 ?
	       (uint64_t)json_real_value(v) : 0;
}


/* ---- cycles ---- */

#define JF_T struct model_cycle_phase
JF_TABLE(cycle_phase_table, JF("ms", JF_REAL, ms, .flags = JF_OMIT), JF("calls", JF_U64, calls),
	 JF("thread_ms", JF_REAL, thread_ms, .flags = JF_OMIT), JF(NULL, JF_OBJ, split, .sub = &profile_split_table));
#undef JF_T

static int cycle_end_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)ctx;
	return ((const struct model_cycle *)base)->ended_at_last_phase ? profile__set(o, key, json_string("last_phase_call")) : 0;
}

static int cycle_end_read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)ctx;
	((struct model_cycle *)base)->ended_at_last_phase = json_is_string(json_object_get(o, key));
	return 0;
}

/* {phase name: its calls in this cycle} (ctx: the model, for the names) */
static int cycle_phases_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_cycle *c = base;
	const struct model *m = ctx;
	json_t *phases = json_object();

	for (int ph = 1; phases && ph < IT_MAX_PHASES; ph++)
		if (c->phases[ph].present && m->phase_names[ph] &&
		    profile__set(phases, m->phase_names[ph], jf_object(&cycle_phase_table, &c->phases[ph], ctx)))
			break;
	return profile__set(o, key, phases);
}

static int cycle_phases_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_cycle *c = base;
	struct model *m = ctx;
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(o, key), k, v) {
		int ph = name_id(m->phase_names, k);

		if (ph < 0)
			return ph;
		jf_read_into(&cycle_phase_table, &c->phases[ph], v, ctx);
		c->phases[ph].present = true;
	}
	return 0;
}

/* tokens_per_second and _wall: where tokens are counted or llama.cpp runs */
static int cycle_tps_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_cycle *c = base;
	int tok = model__count_id(ctx, "tokens");
	double v = strcmp(key, "tokens_per_second") ? c->tokens_per_second_wall : c->tokens_per_second;

	if (!(tok > 0 && c->has_count[tok]) && !c->llama.present)
		return 0;
	return profile__set(o, key, isfinite(v) ? json_real(v) : json_null());
}

static int cycle_tps_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_cycle *c = base;

	(void)ctx;
	*(strcmp(key, "tokens_per_second") ? &c->tokens_per_second_wall : &c->tokens_per_second) = json_num(o, key);
	return 0;
}

static int cycle_counts_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_cycle *c = base;
	const struct model *m = ctx;
	json_t *counts = json_object();

	for (int id = 1; counts && id < IT_MAX_PHASES; id++)
		if (m->count_names[id] && c->has_count[id])
			json_object_set_new(counts, m->count_names[id], json_integer((json_int_t)c->counts[id]));
	return profile__set(o, key, counts);
}

static int cycle_counts_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_cycle *c = base;
	struct model *m = ctx;
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(o, key), k, v) {
		int id = name_id(m->count_names, k);

		if (id < 0)
			return id;
		c->has_count[id] = true;
		c->counts[id] = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	}
	return 0;
}

#define JF_T struct model_cycle
JF_TABLE(all_threads_table, JF("oncpu_ms", JF_REAL, all_oncpu_ms, .flags = JF_OMIT),
	 JF("runq_wait_ms", JF_REAL, all_runq_ms, .flags = JF_OMIT),
	 JF("runq_wait_others_ms", JF_REAL, all_runq_others_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("offcpu_ms", JF_REAL, all_offcpu_ms, .flags = JF_OMIT));
JF_TABLE(faults_table, JF("minor", JF_U64, minflt), JF("major", JF_U64, majflt));
JF_TABLE(switches_table, JF("voluntary", JF_U64, nvcsw), JF("involuntary", JF_U64, nivcsw));

/* A cycle (ctx: the model). */
JF_TABLE(cycle_table, JF("index", JF_U32, index), JF("bpf_cycle", JF_U32, bpf_cycle), JF("pid", JF_INT, pid),
	 JF("start_ns", JF_U64, start_ns), JF("end_ns", JF_U64, end_ns),
	 JF("duration_ms", JF_REAL, duration_ms, .flags = JF_OMIT),
	 JF("open_at_end", JF_BOOL, open_at_end, .flags = JF_OMIT), JF("abandoned", JF_BOOL, abandoned, .flags = JF_OMIT),
	 JF_FNS("end", cycle_end_write, cycle_end_read), JF("samples", JF_U64, samples),
	 JF_FNS("phases", cycle_phases_write, cycle_phases_read),
	 JF_FNS("tokens_per_second", cycle_tps_write, cycle_tps_read),
	 JF_FNS("tokens_per_second_wall", cycle_tps_write, cycle_tps_read),
	 JF_FNS("counts", cycle_counts_write, cycle_counts_read),
	 JF("llama", JF_OBJ, llama, .sub = &profile_llama_cycle_table, JF_WHEN(llama.present)),
	 JF(NULL, JF_OBJ, split, .sub = &profile_split_table),
	 JF_GROUP("all_threads", all_threads_table, JF_WHEN(has_all_threads)),
	 JF_GROUP("page_faults", faults_table, JF_WHEN(has_all_threads)),
	 JF_GROUP("context_switches", switches_table, JF_WHEN(has_all_threads)),
	 JF("rss_peak_mb", JF_REAL, rss_peak_mb, .flags = JF_OMIT, JF_WHEN(has_rss)),
	 JF("rss_end_mb", JF_REAL, rss_end_mb, .flags = JF_OMIT, JF_WHEN(has_rss)),
	 JF(NULL, JF_OBJ, side, .sub = &profile_window_table),
	 JF_FNS("gpu", profile_gpu__cycle_write, profile_gpu__cycle_read), /* after side's: adds to its gpu */
	 JF("kernel_power", JF_OBJ, kernel_power, .sub = &profile_cycle_power_table, JF_WHEN(kernel_power.present)),
	 JF("energy", JF_OBJ, energy, .sub = &profile_energy_table, JF_WHEN(energy.present)),
	 JF("network", JF_OBJ, network, .sub = &profile_net_cycle_table, JF_WHEN(network.present)),
	 JF("cuda", JF_OBJ, cuda, .sub = &profile_cuda_totals_table, JF_WHEN(cuda.present)));
#undef JF_T

static int cycles_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *arr = json_array();

	(void)ctx;
	for (size_t i = 0; arr && i < m->ncycles; i++)
		if (json_array_append_new(arr, jf_object(&cycle_table, &m->cycles[i], m))) {
			json_decref(arr);
			return -ENOMEM;
		}
	return profile__set(o, key, arr);
}

static int too_many_names(const char *source)
{
	fprintf(stderr, "infertrace: %s: more than %d phase or count names; this infertrace reads at most %d "
		"of each (a profile edited or merged by hand?)\n", source, IT_MAX_PHASES - 1, IT_MAX_PHASES - 1);
	return -E2BIG;
}

static int cycles_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	const char *source = m->loaded_from;
	json_t *c;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(o, key), i, c) {
		struct model_cycle *mc = json_is_object(c) ? model__add_cycle(m, 0, 0, 0, 0) : NULL;
		int err = !json_is_object(c) ? -EINVAL : !mc ? -ENOMEM : jf_read_into(&cycle_table, mc, c, m);

		if (err == -E2BIG)
			return too_many_names(source);
		if (err) {
			fprintf(stderr, "infertrace: %s: cycle %zu is malformed\n", source, i);
			return err;
		}
		mc->index = i;
		if (isnan(mc->duration_ms))
			mc->duration_ms = mc->end_ns > mc->start_ns ? (mc->end_ns - mc->start_ns) / 1e6 : 0;
	}
	return 0;
}

/* ---- phases and aggregates ---- */

static int hist_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)ctx;
	return profile__set(o, key, stats__log2_hist_json(((const struct model_phase_summary *)base)->hist_us,
						     IT_HIST_SLOTS, "us"));
}

static int hist_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_phase_summary *s = base;
	json_t *b;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(json_object_get(o, key), "buckets"), i, b) {
		uint64_t from = u64_of(b, "from");
		int slot = 0;

		while (slot + 1 < IT_HIST_SLOTS && (1ull << (slot + 1)) <= from)
			slot++;
		s->hist_us[slot] += u64_of(b, "count");
	}
	return 0;
}

static int percentiles_from_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const char *from = ((const struct model_phase_summary *)base)->percentiles_from;

	(void)ctx;
	return from ? profile__set(o, key, json_string(from)) : 0;
}

/* "calls" or "histogram": static strings */
static int percentiles_from_read(void *base, const char *key, json_t *o, void *ctx)
{
	const char *v = json_string_value(json_object_get(o, key));

	(void)ctx;
	((struct model_phase_summary *)base)->percentiles_from = !v ? NULL : !strcmp(v, "histogram") ? "histogram" : "calls";
	return 0;
}

#define JF_T struct model_phase_summary
JF_TABLE(outside_table, JF("thread_ms", JF_REAL, outside_thread_ms, .flags = JF_OMIT | JF_ZERO),
	 JF("calls", JF_U64, outside_calls));
JF_TABLE(phase_summary_table, JF("total_ms", JF_REAL, total_ms, .flags = JF_OMIT),
	 JF("thread_ms", JF_REAL, thread_ms, .flags = JF_OMIT), JF("calls", JF_U64, calls),
	 JF("percent_of_cycle", JF_REAL, percent_of_cycle, .flags = JF_OMIT),
	 JF_GROUP("outside_cycles", outside_table), JF("p50_ms", JF_REAL, p50_ms),
	 JF("p95_ms", JF_REAL, p95_ms), JF("p99_ms", JF_REAL, p99_ms),
	 JF_FNS("percentiles_from", percentiles_from_write, percentiles_from_read),
	 JF_FNS("histogram", hist_write, hist_read));
#undef JF_T

static int phases_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *phases = json_object();

	for (int ph = 1; phases && ph < IT_MAX_PHASES; ph++) {
		json_t *p, *gpu;

		if (!m->phases[ph].present)
			continue;
		p = jf_object(&phase_summary_table, &m->phases[ph], ctx);
		if (profile__set(phases, m->phase_names[ph], p))
			break;
		gpu = profile_gpu__phase_json(m, ph);
		if (gpu && json_object_set_new(p, "gpu", gpu))
			break;
	}
	return profile__set(o, key, phases);
}

/* First of the names: the phases' ids follow the summary's order. */
static int phases_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	const char *source = m->loaded_from, *k;
	json_t *v;

	json_object_foreach(json_object_get(o, key), k, v) {
		int ph = name_id(m->phase_names, k);

		if (ph == -E2BIG)
			return too_many_names(source);
		if (ph < 0)
			return ph;
		if (!json_is_object(v)) {
			fprintf(stderr, "infertrace: %s: phase '%s' is not an object\n", source, k);
			return -EINVAL;
		}
		jf_read(&phase_summary_table, &m->phases[ph], v, ctx);
		m->phases[ph].present = true;
		if (json_is_object(json_object_get(v, "gpu"))) {
			int err = profile_gpu__phase_read(m, ph, json_object_get(v, "gpu"));

			if (err)
				return err;
		}
	}
	return 0;
}

static int cycles_source_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const char *src = ((const struct model *)base)->agg.cycles_source;

	(void)ctx;
	return src ? profile__set(o, key, json_string(src)) : 0;
}

/* one of the static names the probes concern uses */
static int cycles_source_read(void *base, const char *key, json_t *o, void *ctx)
{
	static const char *const sources[] = { "cycle", "cycle_marker", "llama_prompt", "whole_run" };
	struct model *m = base;
	const char *src = json_string_value(json_object_get(o, key));

	(void)ctx;
	for (size_t i = 0; src && i < sizeof(sources) / sizeof(sources[0]); i++)
		if (!strcmp(src, sources[i]))
			m->agg.cycles_source = m->cycles_source = sources[i];
	return 0;
}

#define JF_T struct model
JF_TABLE(aggregates_table, JF("total_cycles", JF_U64, agg.total_cycles),
	 JF_FNS("cycles_source", cycles_source_write, cycles_source_read),
	 JF("empty_marker_cycles_dropped", JF_U64, agg.empty_marker_cycles_dropped, .flags = JF_OMIT),
	 JF("avg_cycle_ms", JF_REAL, agg.avg_cycle_ms), JF("max_cycle_ms", JF_REAL, agg.max_cycle_ms),
	 JF("p50_cycle_ms", JF_REAL, agg.p50_cycle_ms), JF("p95_cycle_ms", JF_REAL, agg.p95_cycle_ms),
	 JF("p99_cycle_ms", JF_REAL, agg.p99_cycle_ms), JF("avg_tokens_per_second", JF_REAL, agg.avg_tokens_per_second),
	 JF("avg_tokens_per_second_wall", JF_REAL, agg.avg_tokens_per_second_wall),
	 JF("peak_memory_mb", JF_REAL, agg.peak_memory_mb, .flags = JF_OMIT));
#undef JF_T

/* ---- processes, findings, the run ---- */

static int processes_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *arr = json_array();

	(void)ctx;
	for (size_t i = 0; arr && i < m->nprocs; i++) {
		const struct model_process *p = &m->procs[i];
		json_t *po = json_pack("{s:i,s:i,s:s,s:b,s:o}", "pid", p->pid, "parent", p->ppid, "comm", p->comm, "root",
				       p->root, "cpu_seconds", isfinite(p->cpu_s) ? json_real(p->cpu_s) : json_null());

		if (po && p->exited) {
			if (WIFSIGNALED(p->exit_status))
				json_object_set_new(po, "killed_by_signal", json_integer(WTERMSIG(p->exit_status)));
			else
				json_object_set_new(po, "exit_code", json_integer(WEXITSTATUS(p->exit_status)));
		}
		json_array_append_new(arr, po);
	}
	return profile__set(o, key, arr);
}

/* exit statuses back in wait(2) form */
static int processes_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(o, key), i, v) {
		double pid = json_num(v, "pid");
		struct model_process *p = model__add_process(m, pid >= INT_MIN && pid <= INT_MAX ? (pid_t)pid : 0);
		const char *comm = json_string_value(json_object_get(v, "comm"));

		if (!p)
			return -ENOMEM;
		p->ppid = (pid_t)u64_of(v, "parent");
		snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
		p->root = json_is_true(json_object_get(v, "root"));
		p->cpu_s = json_num(v, "cpu_seconds");
		if (json_is_integer(json_object_get(v, "killed_by_signal"))) {
			p->exited = true;
			p->exit_status = (int)u64_of(v, "killed_by_signal") & 0x7f;
		} else if (json_is_integer(json_object_get(v, "exit_code"))) {
			p->exited = true;
			p->exit_status = ((int)u64_of(v, "exit_code") & 0xff) << 8;
		}
	}
	return 0;
}

static int finding_evidence_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	return profile_evidence__write(&((const struct model_finding *)base)->evidence, key, o, ctx);
}

static int finding_evidence_read(void *base, const char *key, json_t *o, void *ctx)
{
	return profile_evidence__read(&((struct model_finding *)base)->evidence, key, o, ctx);
}

static int rec_evidence_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_recommendation *r = base;

	return r->evidence.present ? profile_evidence__write(&r->evidence, key, o, ctx) : 0;
}

static int rec_evidence_read(void *base, const char *key, json_t *o, void *ctx)
{
	return profile_evidence__read(&((struct model_recommendation *)base)->evidence, key, o, ctx);
}

#define JF_T struct model_finding
JF_TABLE(finding_table, JF("type", JF_STR, type), JF("severity", JF_STR, severity),
	 JF("percentage_of_cycle", JF_REAL, percentage_of_cycle),
	 JF_FNS("evidence", finding_evidence_write, finding_evidence_read));
#undef JF_T

#define JF_T struct model_recommendation
JF_TABLE(rec_table, JF("title", JF_STR, title), JF("priority", JF_STR, priority),
	 JF("description", JF_STR, description), JF("current_value", JF_STR, current_value),
	 JF("recommended_value", JF_STR, recommended_value), JF("bottleneck", JF_STR, bottleneck, .flags = JF_OMIT),
	 JF_FNS("evidence", rec_evidence_write, rec_evidence_read));
#undef JF_T

static int findings_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *arr = json_array();

	(void)ctx;
	for (size_t i = 0; arr && i < m->nfindings; i++)
		json_array_append_new(arr, jf_object(&finding_table, &m->findings[i], m));
	return profile__set(o, key, arr);
}

/* a finding without a type is left out; severity low unless given */
static int findings_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(o, key), i, v) {
		struct model_finding f;
		int err;

		err = jf_read(&finding_table, &f, v, m); /* the model: evidence's names */
		if (!err && f.type)
			err = model__add_finding(m, f.type, f.severity ? f.severity : "low", f.percentage_of_cycle,
						 &f.evidence);
		free(f.type);
		free(f.severity);
		model_evidence__free(&f.evidence);
		if (err)
			return err;
	}
	return 0;
}

/* "medium" where a recommendation has no priority */
static int recs_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *arr = json_array();

	(void)ctx;
	for (size_t i = 0; arr && i < m->nrecs; i++) {
		struct model_recommendation r = m->recs[i];

		r.priority = r.priority ? r.priority : "medium";
		json_array_append_new(arr, jf_object(&rec_table, &r, m));
	}
	return profile__set(o, key, arr);
}

static int recs_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v;
	size_t i;

	(void)ctx;
	json_array_foreach(json_object_get(o, key), i, v) {
		struct model_recommendation r;
		int err;

		err = jf_read(&rec_table, &r, v, m);
		if (!err)
			err = model__add_recommendation(m, &r);
		free(r.title);
		free(r.priority);
		free(r.description);
		free(r.current_value);
		free(r.recommended_value);
		free(r.bottleneck);
		model_evidence__free(&r.evidence);
		if (err)
			return err;
	}
	return 0;
}

static int lost_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *lost = json_object();

	(void)ctx;
	for (size_t i = 0; lost && i < m->nlost; i++)
		json_object_set_new(lost, m->lost[i].name, json_integer((json_int_t)m->lost[i].value));
	return profile__set(o, key, lost);
}

static int lost_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	const char *k;
	json_t *v;

	(void)ctx;
	json_object_foreach(json_object_get(o, key), k, v)
		if (json_is_integer(v) && model__add_lost(m, k, (uint64_t)json_integer_value(v) - model__lost(m, k)))
			return -ENOMEM;
	return 0;
}

/* A string member of the run: NULL when missing. */
static int run_str_read(char **dst, const char *key, json_t *o)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) && !(*dst = strdup(json_string_value(v))) ? -ENOMEM : 0;
}

/* this writer's version, whatever the model was loaded from */
static int schema_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	(void)base, (void)ctx;
	return profile__set(o, key, json_string(PROFILE_SCHEMA_VERSION));
}

static int schema_read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)ctx;
	return run_str_read(&((struct model *)base)->run.schema_version, key, o);
}

static int tool_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;

	(void)ctx;
	return profile__set(o, key, json_pack("{s:s,s:s}", "name", "infertrace", "version",
					 m->run.tool_version ? m->run.tool_version : INFERTRACE_VERSION));
}

static int tool_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	const char *v = json_string_value(json_object_get(json_object_get(o, key), "version"));

	(void)ctx;
	return v && !(m->run.tool_version = strdup(v)) ? -ENOMEM : 0;
}

static int command_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *cmd;

	(void)ctx;
	if (!m->run.command)
		return profile__set(o, key, json_null());
	cmd = json_array();
	for (char **a = m->run.command; cmd && *a; a++)
		json_array_append_new(cmd, json_text(*a));
	return profile__set(o, key, cmd);
}

static int command_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *cmd = json_object_get(o, key), *v;
	size_t i;

	(void)ctx;
	if (!json_is_array(cmd))
		return 0;
	m->run.command = calloc(json_array_size(cmd) + 1, sizeof(char *));
	if (!m->run.command)
		return -ENOMEM;
	json_array_foreach(cmd, i, v)
		if (!(m->run.command[i] = strdup(json_is_string(v) ? json_string_value(v) : "?")))
			return -ENOMEM;
	return 0;
}

static int pids_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *pids = json_array();

	(void)ctx;
	for (size_t i = 0; pids && i < m->run.npids; i++)
		json_array_append_new(pids, json_integer(m->run.pids[i]));
	return profile__set(o, key, pids);
}

static int pids_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *v = json_object_get(o, key), *p;
	size_t i;

	(void)ctx;
	m->run.pids = calloc(json_array_size(v) + 1, sizeof(pid_t));
	if (!m->run.pids)
		return -ENOMEM;
	json_array_foreach(v, i, p)
		if (json_is_integer(p))
			m->run.pids[m->run.npids++] = (pid_t)json_integer_value(p);
	return 0;
}

static int started_at_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	char when[64];

	(void)ctx;
	return profile__set(o, key, json_string(m->run.started_at ? m->run.started_at :
					   profile__iso_time(m->run.start_wall_s, when, sizeof(when))));
}

static int started_at_read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)ctx;
	return run_str_read(&((struct model *)base)->run.started_at, key, o);
}

static int stop_reason_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;

	(void)ctx;
	return profile__set(o, key, json_string(m->run.stop_reason ? m->run.stop_reason : "unknown"));
}

static int stop_reason_read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)ctx;
	return run_str_read(&((struct model *)base)->run.stop_reason, key, o);
}

#define THRESHOLD_FIELD(name, def) JF(#name, JF_REAL, name, .flags = JF_KEEP),
#define JF_T struct rule_thresholds
JF_TABLE(thresholds_table, RULE_THRESHOLDS(THRESHOLD_FIELD));
#undef JF_T
#undef THRESHOLD_FIELD

/* config: what was asked, as given; thresholds: the rules' (every one) */
static int config_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *v = m->run.config ? json_deep_copy(m->run.config) : json_object();

	if (v && m->have_thresholds)
		json_object_set_new(v, "thresholds", jf_object(&thresholds_table, &m->thresholds, ctx));
	return profile__set(o, key, v);
}

static int config_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *cfg = json_object_get(o, key), *t = json_object_get(cfg, "thresholds");

	m->run.config = json_deep_copy(cfg);
	if (config_file__asked(cfg, m))
		return -ENOMEM;
	if (json_is_object(t)) {
		rule_thresholds__defaults(&m->thresholds);
		jf_read_into(&thresholds_table, &m->thresholds, t, ctx);
		m->have_thresholds = true;
	}
	return 0;
}

/* memory: the memory concern's figures, with the growth the derivation
 * computed and the faults the scheduler counted */
#define JF_T struct model_memory_proc
JF_TABLE(memory_proc_table, JF("pid", JF_INT, pid), JF("comm", JF_CHARS, comm),
	 JF("peak_mb", JF_REAL, peak_mb, .flags = JF_OMIT), JF("last_mb", JF_REAL, last_mb, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_memory_point
JF_TABLE(memory_point_table, JF("t_s", JF_REAL, t_s, .flags = JF_OMIT), JF("rss_mb", JF_REAL, rss_mb, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model
JF_TABLE(model_faults_table, JF("minor", JF_U64, sched.minflt), JF("major", JF_U64, sched.majflt));
JF_TABLE(memory_fields_table, JF("source", JF_CHARS, memory.source),
	 JF("peak_mb", JF_REAL, memory.peak_mb, .flags = JF_OMIT),
	 JF("per_process", JF_VEC, memory.per_process, .sub = &memory_proc_table),
	 JF("timeline", JF_VEC, memory.timeline, .sub = &memory_point_table),
	 JF("timeline_max_points", JF_U64, memory.timeline_max_points),
	 JF("growth_mb_per_cycle", JF_REAL, memory.growth_mb_per_cycle),
	 JF_GROUP("faults", model_faults_table, JF_WHEN(sched.has_faults)));
JF_TABLE(memory_table, JF_GROUP(NULL, memory_fields_table, JF_WHEN(memory.available)));
#undef JF_T

/* gpu: the side sampler's, with the CUDA concern's totals under `cuda` */
static int gpu_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *gpu = jf_object(&profile_gpu_table, &m->side.run.gpu, ctx);

	if (gpu && profile_cuda__write(m, gpu)) {
		json_decref(gpu);
		return -ENOMEM;
	}
	if (gpu && m->gpu_activity.present) {
		json_t *a = profile_gpu__activity_json(m);

		if (!a || json_object_set_new(gpu, "activity", a)) {
			json_decref(gpu);
			return -ENOMEM;
		}
	}
	return profile__set(o, key, gpu);
}

static int gpu_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *gpu = json_object_get(o, key);

	if (profile_cuda__read(m, gpu))
		return -ENOMEM;
	if (profile_gpu__activity_read(m, json_object_get(gpu, "activity")))
		return -ENOMEM;
	return jf_read(&profile_gpu_table, &m->side.run.gpu, gpu, ctx);
}

#define JF_T struct model_alert
JF_TABLE(alert_table, JF("type", JF_CHARS, type), JF("severity", JF_CHARS, severity, .flags = JF_OMIT),
	 JF("description", JF_CHARS, description, .flags = JF_OMIT), JF("value_mw", JF_REAL, value_mw, .flags = JF_OMIT),
	 JF("threshold_mw", JF_REAL, threshold_mw, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_suggestion
JF_TABLE(suggestion_table, JF("option", JF_CHARS, option), JF("function", JF_CHARS, function),
	 JF("text", JF_CHARS, text), JF("bursts", JF_U64, bursts), JF("period_ms", JF_REAL, period_ms, .flags = JF_OMIT));
#undef JF_T

/* startup and teardown: the run outside its cycles */
static int edge_name_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = ctx;
	int32_t i = ((const struct model_edge_top *)base)->name;

	return profile__set(o, key, json_text(i >= 0 && (size_t)i < m->nnames ? m->names[i] : "[unknown]"));
}

static int edge_name_read(void *base, const char *key, json_t *o, void *ctx)
{
	const char *v = json_string_value(json_object_get(o, key));
	int32_t *i = &((struct model_edge_top *)base)->name;

	return (*i = model__intern(ctx, v ? v : "[unknown]")) < 0 ? -ENOMEM : 0;
}

#define JF_T struct model_edge_top
JF_TABLE(edge_top_table, JF_FNS("name", edge_name_write, edge_name_read), JF("samples", JF_U64, samples),
	 JF("percent", JF_REAL, percent, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_edge
JF_TABLE(edge_table, JF("ms", JF_REAL, ms, .flags = JF_OMIT), JF("samples", JF_U64, samples),
	 JF_ARR("top_functions", top, ntop, edge_top_table),
	 JF("oncpu_ms", JF_REAL, oncpu_ms, .flags = JF_OMIT, JF_WHEN(has_split)),
	 JF("runq_wait_ms", JF_REAL, runq_wait_ms, .flags = JF_OMIT, JF_WHEN(has_split)),
	 JF("runq_share_percent", JF_REAL, runq_share_percent, .flags = JF_OMIT, JF_WHEN(has_split)));
#undef JF_T

static int edge_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;

	(void)ctx;
	if (!m->edges.present)
		return 0;
	return profile__set(o, key, jf_object(&edge_table, strcmp(key, "startup") ? &m->edges.teardown : &m->edges.startup, m));
}

/* both or neither */
static int edges_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	json_t *st = json_object_get(o, "startup"), *td = json_object_get(o, "teardown");

	(void)key, (void)ctx;
	if (!json_is_object(st) || !json_is_object(td))
		return 0;
	m->edges.present = true;
	return jf_read(&edge_table, &m->edges.startup, st, m) || jf_read(&edge_table, &m->edges.teardown, td, m) ?
	       -ENOMEM : 0;
}

/* Figures over what was loaded: the aggregates' cycle time. */
static int loaded_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;

	(void)key, (void)ctx;
	if (!json_is_number(json_object_get(json_object_get(o, "aggregate_metrics"), "total_cycles")))
		m->agg.total_cycles = m->ncycles;
	for (size_t i = 0; i < m->ncycles; i++)
		m->agg.cycles_ms += isnan(m->cycles[i].duration_ms) ? 0 : m->cycles[i].duration_ms;
	return 0;
}

/* ---- the profile ---- */

/* Every top-level key, in the order written; read in the same order (the
 * phases' names first, the cycles before what refers to them). ctx: the
 * model, writing and reading alike, so that a section's table is a plain
 * JF_OBJ or JF_GROUP (its names interned in the model). */
#define JF_T struct model
JF_TABLE(profile_table, JF_FNS("schema_version", schema_write, schema_read), JF_FNS("tool", tool_write, tool_read),
	 JF_FNS("system", profile_system__write, profile_system__read), JF_FNS("phases", phases_write, phases_read),
	 JF_GROUP("aggregate_metrics", aggregates_table),
	 JF("samples", JF_OBJ, samples, .sub = &profile_samples_table), JF("offcpu", JF_OBJ, offcpu, .sub = &profile_offcpu_table),
	 JF("sched", JF_OBJ, sched, .sub = &profile_sched_table),
	 JF_GROUP("memory", memory_table),
	 JF("thermal", JF_OBJ, side.run.thermal, .sub = &profile_thermal_table), JF_FNS("gpu", gpu_write, gpu_read),
	 JF("disk", JF_OBJ, side.run.disk, .sub = &profile_disk_table), JF("network", JF_OBJ, network, .sub = &profile_network_table),
	 JF_GROUP("energy", profile_energy_section_table, JF_WHEN(energy.present)),
	 JF_FNS("lost", lost_write, lost_read), JF_FNS("cycles", cycles_write, cycles_read),
	 JF("crashes", JF_VEC, crashes, .sub = &profile_crash_table), JF_FNS("bottlenecks", findings_write, findings_read),
	 JF_FNS("recommendations", recs_write, recs_read), JF("alerts", JF_VEC, alerts, .sub = &alert_table),
	 JF_FNS("command", command_write, command_read), JF_FNS("pids", pids_write, pids_read),
	 JF_FNS("processes", processes_write, processes_read),
	 JF_FNS("started_at", started_at_write, started_at_read),
	 JF("duration_s", JF_REAL, run.duration_s, .flags = JF_OMIT),
	 JF_FNS("stop_reason", stop_reason_write, stop_reason_read),
	 JF_FNS("config", config_write, config_read), JF_FNS("probes", profile_probes__write, profile_probes__read),
	 JF("host", JF_OBJ, side.run.host, .sub = &profile_host_table, JF_WHEN(side.run.host.present)),
	 JF_FNS("probes_overhead", profile_overhead__write, profile_overhead__read),
	 JF("suggested_cycle", JF_OBJ, suggested_cycle, .sub = &suggestion_table, JF_WHEN(suggested_cycle.present)), JF_GROUP("self", profile_self_table, JF_WHEN(self.present)),
	 JF_FNS("tail_cycles", profile_tail__write, profile_tail__read), JF_FNS("llama", profile_llama__write, profile_llama__read),
	 JF_FNS("requests", profile_requests__write, profile_requests__read),
	 JF_FNS("startup", edge_write, edges_read), JF_FNS("teardown", edge_write, NULL),
	 JF_FNS(NULL, NULL, loaded_read));
#undef JF_T

json_t *model__section_json(const struct model *m, const char *key)
{
	json_t *o = json_object(), *v;

	for (size_t i = 0; o && i < profile_table.n; i++)
		if (profile_table.f[i].key && !strcmp(profile_table.f[i].key, key) &&
		    jf_write(&(struct jf_table){ &profile_table.f[i], 1, profile_table.size }, m, o, m))
			break;
	v = json_incref(json_object_get(o, key));
	json_decref(o);
	return v;
}

json_t *model__to_json(const struct model *m)
{
	if (model__require(m, MODEL_ANALYSED, "the profile.json writer"))
		return NULL;
	return jf_object(&profile_table, m, m);
}

int model__from_json(struct model *m, json_t *p, const char *source)
{
	json_t *v, *cycles, *phases;
	int err;

	model__init(m);
	if (!json_is_object(p)) {
		fprintf(stderr, "infertrace: %s: not a profile (a JSON object is expected)\n", source);
		return -EINVAL;
	}
	v = json_object_get(p, "schema_version");
	if (json_is_string(v) && strncmp(json_string_value(v), "1.", 2)) {
		fprintf(stderr, "infertrace: %s: schema_version %s is not supported (this tool reads 1.x); "
			"use the infertrace that wrote it\n", source, json_string_value(v));
		return -EINVAL;
	}
	cycles = json_object_get(p, "cycles");
	phases = json_object_get(p, "phases");
	if ((cycles && !json_is_array(cycles)) || (phases && !json_is_object(phases))) {
		fprintf(stderr, "infertrace: %s: `cycles` must be an array and `phases` an object\n", source);
		return -EINVAL;
	}
	m->loaded_from = source;
	err = jf_read_into(&profile_table, m, p, m);
	m->loaded_from = NULL;
	if (err)
		return err;
	m->stage = MODEL_ANALYSED;
	return 0;
}
