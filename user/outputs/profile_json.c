// SPDX-License-Identifier: BSD-2-Clause
/* profile.json ↔ the model. model__to_json is the profile.json writer: it
 * reads only the model. model__from_json loads a profile.json back into a
 * model (for `report` and `diff`), so that they read the same typed figures
 * the recording computed. The contract: docs/profile-json.md and
 * docs/profile.schema.json. Longer than 600 lines: the writer and the loader
 * are each other's inverse, kept side by side so that a key changes in both. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json_num.h"
#include "json_text.h"
#include "model.h"
#include "profile.h"
#include "profile_side.h"
#include "stats.h"

static uint64_t u64(json_t *o, const char *key);

/* NAN and infinities are never written: they become null. */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *blocked_json(const double *ms)
{
	json_t *o = json_object();

	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		json_object_set_new(o, blocked_class_names[i], json_real(ms[i]));
	return o;
}

void model__split_json(json_t *o, const struct model_split *s)
{
	if (!s->present)
		return;
	json_object_set_new(o, "oncpu_ms", json_real(s->oncpu_ms));
	json_object_set_new(o, "runq_wait_ms", json_real(s->runq_ms));
	json_object_set_new(o, "offcpu_ms", json_real(s->offcpu_ms));
	json_object_set_new(o, "blocked", blocked_json(s->blocked_ms));
	if (s->has_wall) {
		json_object_set_new(o, "unattributed_ms", json_real(s->unattributed_ms));
		json_object_set_new(o, "unattributed_percent", json_real(s->unattributed_percent));
	}
}

static json_t *cycle_json(const struct model *m, const struct model_cycle *c)
{
	json_t *o = json_object(), *phases = json_object(), *counts = json_object(), *v;
	int tok = model__count_id(m, "tokens");
	const char *k;

	json_object_set_new(o, "index", json_integer(c->index));
	json_object_set_new(o, "bpf_cycle", json_integer(c->bpf_cycle));
	json_object_set_new(o, "pid", json_integer(c->pid));
	json_object_set_new(o, "start_ns", json_integer(c->start_ns));
	json_object_set_new(o, "end_ns", json_integer(c->end_ns));
	json_object_set_new(o, "duration_ms", json_real(c->duration_ms));
	if (c->open_at_end)
		json_object_set_new(o, "open_at_end", json_true());
	if (c->abandoned)
		json_object_set_new(o, "abandoned", json_true());
	if (c->ended_at_last_phase)
		json_object_set_new(o, "end", json_string("last_phase_call"));
	json_object_set_new(o, "samples", json_integer(c->samples));
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		const struct model_cycle_phase *p = &c->phases[ph];
		json_t *po;

		if (!p->present || !m->phase_names[ph])
			continue;
		po = json_object();
		json_object_set_new(po, "ms", json_real(p->ms));
		json_object_set_new(po, "calls", json_integer(p->calls));
		json_object_set_new(po, "thread_ms", json_real(p->thread_ms));
		model__split_json(po, &p->split);
		json_object_set_new(phases, m->phase_names[ph], po);
	}
	json_object_set_new(o, "phases", phases);
	if ((tok > 0 && c->has_count[tok]) || c->llama.present) {
		json_object_set_new(o, "tokens_per_second", real_or_null(c->tokens_per_second));
		json_object_set_new(o, "tokens_per_second_wall", real_or_null(c->tokens_per_second_wall));
	}
	for (int id = 1; id < IT_MAX_PHASES; id++)
		if (m->count_names[id] && c->has_count[id])
			json_object_set_new(counts, m->count_names[id], json_integer(c->counts[id]));
	json_object_set_new(o, "counts", counts);
	if (c->llama.present)
		json_object_set_new(o, "llama", llama__cycle_json(&c->llama));
	model__split_json(o, &c->split);
	if (c->has_all_threads) {
		json_object_set_new(o, "all_threads", json_pack("{s:f,s:f,s:f}", "oncpu_ms", c->all_oncpu_ms,
								"runq_wait_ms", c->all_runq_ms, "offcpu_ms", c->all_offcpu_ms));
		json_object_set_new(o, "page_faults", json_pack("{s:I,s:I}", "minor", (json_int_t)c->minflt,
								"major", (json_int_t)c->majflt));
		json_object_set_new(o, "context_switches", json_pack("{s:I,s:I}", "voluntary", (json_int_t)c->nvcsw,
								     "involuntary", (json_int_t)c->nivcsw));
	}
	if (c->has_rss) {
		json_object_set_new(o, "rss_peak_mb", json_real(c->rss_peak_mb));
		json_object_set_new(o, "rss_end_mb", json_real(c->rss_end_mb));
	}
	profile_side__cycle_write(c, o);
	json_object_foreach(c->detail, k, v)
		json_object_set(o, k, v);
	return o;
}

static json_t *processes_json(const struct model *m)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct model_process *p = &m->procs[i];
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "parent", json_integer(p->ppid));
		json_object_set_new(o, "comm", json_string(p->comm));
		json_object_set_new(o, "root", json_boolean(p->root));
		json_object_set_new(o, "cpu_seconds", real_or_null(p->cpu_s));
		if (p->exited) {
			if (WIFSIGNALED(p->exit_status))
				json_object_set_new(o, "killed_by_signal", json_integer(WTERMSIG(p->exit_status)));
			else
				json_object_set_new(o, "exit_code", json_integer(WEXITSTATUS(p->exit_status)));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *phase_json(const struct model_phase_summary *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "total_ms", json_real(s->total_ms));
	json_object_set_new(o, "thread_ms", json_real(s->thread_ms));
	json_object_set_new(o, "calls", json_integer(s->calls));
	json_object_set_new(o, "percent_of_cycle", json_real(s->percent_of_cycle));
	json_object_set_new(o, "outside_cycles", json_pack("{s:f,s:I}", "thread_ms", s->outside_thread_ms,
							   "calls", (json_int_t)s->outside_calls));
	json_object_set_new(o, "p50_ms", real_or_null(s->p50_ms));
	json_object_set_new(o, "p95_ms", real_or_null(s->p95_ms));
	json_object_set_new(o, "p99_ms", real_or_null(s->p99_ms));
	if (s->percentiles_from)
		json_object_set_new(o, "percentiles_from", json_string(s->percentiles_from));
	json_object_set_new(o, "histogram", stats__log2_hist_json(s->hist_us, IT_HIST_SLOTS, "us"));
	return o;
}

static json_t *aggregates_json(const struct model *m)
{
	const struct model_aggregates *a = &m->agg;
	json_t *o = json_object();

	json_object_set_new(o, "total_cycles", json_integer(a->total_cycles));
	if (a->cycles_source)
		json_object_set_new(o, "cycles_source", json_string(a->cycles_source));
	if (a->empty_marker_cycles_dropped)
		json_object_set_new(o, "empty_marker_cycles_dropped", json_integer(a->empty_marker_cycles_dropped));
	json_object_set_new(o, "avg_cycle_ms", real_or_null(a->avg_cycle_ms));
	json_object_set_new(o, "max_cycle_ms", real_or_null(a->max_cycle_ms));
	json_object_set_new(o, "p50_cycle_ms", real_or_null(a->p50_cycle_ms));
	json_object_set_new(o, "p95_cycle_ms", real_or_null(a->p95_cycle_ms));
	json_object_set_new(o, "p99_cycle_ms", real_or_null(a->p99_cycle_ms));
	json_object_set_new(o, "avg_tokens_per_second", real_or_null(a->avg_tokens_per_second));
	json_object_set_new(o, "avg_tokens_per_second_wall", real_or_null(a->avg_tokens_per_second_wall));
	if (isfinite(a->peak_memory_mb))
		json_object_set_new(o, "peak_memory_mb", json_real(a->peak_memory_mb));
	return o;
}

static json_t *findings_json(const struct model *m)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < m->nfindings; i++) {
		const struct model_finding *f = &m->findings[i];

		json_array_append_new(arr, json_pack("{s:s,s:s,s:o,s:O}", "type", f->type, "severity", f->severity,
						     "percentage_of_cycle", real_or_null(f->percentage_of_cycle),
						     "evidence", f->evidence ? f->evidence : json_object()));
	}
	return arr;
}

static json_t *recs_json(const struct model *m)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < m->nrecs; i++) {
		const struct model_recommendation *r = &m->recs[i];
		json_t *o = json_object();

		json_object_set_new(o, "title", json_string(r->title ? r->title : ""));
		json_object_set_new(o, "priority", json_string(r->priority ? r->priority : "medium"));
		json_object_set_new(o, "description", json_string(r->description ? r->description : ""));
		json_object_set_new(o, "current_value", json_string(r->current_value ? r->current_value : ""));
		json_object_set_new(o, "recommended_value", json_string(r->recommended_value ? r->recommended_value : ""));
		if (r->bottleneck)
			json_object_set_new(o, "bottleneck", json_string(r->bottleneck));
		if (r->evidence)
			json_object_set(o, "evidence", r->evidence);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *thresholds_json(const struct rule_thresholds *t)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
		"inference_pct", t->inference_pct, "database_pct", t->database_pct, "mode_pct", t->mode_pct,
		"memory_pct", t->memory_pct, "runq_pct", t->runq_pct, "offcpu_pct", t->offcpu_pct,
		"gpu_util_pct", t->gpu_util_pct, "gpu_sync_pct", t->gpu_sync_pct,
		"leak_mb_per_cycle", t->leak_mb_per_cycle, "spin_pct", t->spin_pct, "power_mw", t->power_mw,
		"power_capped_pct", t->power_capped_pct);
}

/* A detail section, or an empty object/array where the contract wants one. */
static json_t *section_or(const struct model *m, enum model_section s, bool array)
{
	json_t *v = model__section(m, s);

	return v ? json_deep_copy(v) : array ? json_array() : json_object();
}

json_t *model__to_json(const struct model *m)
{
	json_t *p, *tool, *cycles, *phases, *lost, *v, *cmd, *pids;
	char when[64];

	if (model__require(m, MODEL_ANALYSED, "the profile.json writer"))
		return NULL;
	p = json_object();
	tool = json_object();
	json_object_set_new(p, "schema_version", json_string(PROFILE_SCHEMA_VERSION));
	json_object_set_new(tool, "name", json_string("infertrace"));
	json_object_set_new(tool, "version", json_string(m->run.tool_version ? m->run.tool_version : INFERTRACE_VERSION));
	json_object_set_new(p, "tool", tool);
	json_object_set_new(p, "system", m->run.system ? json_deep_copy(m->run.system) : profile__system_json());

	phases = json_object();
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		if (m->phases[ph].present)
			json_object_set_new(phases, m->phase_names[ph], phase_json(&m->phases[ph]));
	json_object_set_new(p, "phases", phases);
	json_object_set_new(p, "aggregate_metrics", aggregates_json(m));
	json_object_set_new(p, "samples", section_or(m, MODEL_SEC_SAMPLES, false));
	json_object_set_new(p, "offcpu", section_or(m, MODEL_SEC_OFFCPU, false));
	json_object_set_new(p, "sched", section_or(m, MODEL_SEC_SCHED, false));
	v = section_or(m, MODEL_SEC_MEMORY, false);
	if (m->memory.available) {
		json_object_set_new(v, "growth_mb_per_cycle", real_or_null(m->memory.growth_mb_per_cycle));
		if (m->sched.has_faults)
			json_object_set_new(v, "faults", json_pack("{s:I,s:I}", "minor", (json_int_t)m->sched.minflt,
								   "major", (json_int_t)m->sched.majflt));
	}
	json_object_set_new(p, "memory", v);
	profile_side__write(m, p);
	json_object_set_new(p, "network", section_or(m, MODEL_SEC_NETWORK, false));
	lost = json_object();
	for (size_t i = 0; i < m->nlost; i++)
		json_object_set_new(lost, m->lost[i].name, json_integer(m->lost[i].value));
	json_object_set_new(p, "lost", lost);

	cycles = json_array();
	for (size_t i = 0; i < m->ncycles; i++)
		json_array_append_new(cycles, cycle_json(m, &m->cycles[i]));
	json_object_set_new(p, "cycles", cycles);
	json_object_set_new(p, "crashes", section_or(m, MODEL_SEC_CRASHES, true));
	json_object_set_new(p, "bottlenecks", findings_json(m));
	json_object_set_new(p, "recommendations", recs_json(m));
	json_object_set_new(p, "alerts", m->alerts ? json_deep_copy(m->alerts) : json_array());

	if (m->run.command) {
		cmd = json_array();
		for (char **a = m->run.command; *a; a++)
			json_array_append_new(cmd, json_text(*a));
	} else {
		cmd = json_null();
	}
	json_object_set_new(p, "command", cmd);
	pids = json_array();
	for (size_t i = 0; i < m->run.npids; i++)
		json_array_append_new(pids, json_integer(m->run.pids[i]));
	json_object_set_new(p, "pids", pids);
	json_object_set_new(p, "processes", processes_json(m));
	json_object_set_new(p, "started_at", json_string(m->run.started_at ? m->run.started_at :
							 profile__iso_time(m->run.start_wall_s, when, sizeof(when))));
	json_object_set_new(p, "duration_s", json_real(m->run.duration_s));
	json_object_set_new(p, "stop_reason", json_string(m->run.stop_reason ? m->run.stop_reason : "unknown"));
	v = m->run.config ? json_deep_copy(m->run.config) : json_object();
	if (m->have_thresholds)
		json_object_set_new(v, "thresholds", thresholds_json(&m->thresholds));
	json_object_set_new(p, "config", v);
	if (model__section(m, MODEL_SEC_PROBES))
		json_object_set_new(p, "probes", section_or(m, MODEL_SEC_PROBES, true));
	if (model__section(m, MODEL_SEC_PROBES_OVERHEAD))
		json_object_set_new(p, "probes_overhead", section_or(m, MODEL_SEC_PROBES_OVERHEAD, false));
	if (model__section(m, MODEL_SEC_SUGGESTED_CYCLE))
		json_object_set_new(p, "suggested_cycle", section_or(m, MODEL_SEC_SUGGESTED_CYCLE, false));
	if (m->self) {
		v = json_deep_copy(m->self);
		/* the probes' measured cost per hit belongs with the tracer's own */
		if (m->probe_cost.present && isfinite(m->probe_cost.cost_ns))
			json_object_set_new(v, "probe_cost_ns_per_hit", json_real(m->probe_cost.cost_ns));
		json_object_set_new(p, "self", v);
	}
	if (m->tail_cycles)
		json_object_set(p, "tail_cycles", m->tail_cycles);
	if (m->llama.present || m->llama_facts)
		json_object_set_new(p, "llama", llama__json(m));
	if (m->run_edges) {
		json_object_set(p, "startup", json_object_get(m->run_edges, "startup"));
		json_object_set(p, "teardown", json_object_get(m->run_edges, "teardown"));
	}
	return p;
}

/* ---- loading --------------------------------------------------------- */

static uint64_t u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	/* a real out of uint64_t's range would make the cast undefined */
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) :
	       json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 0x1p64 ?
	       (uint64_t)json_real_value(v) : 0;
}

/* A pid or a count that must fit an int: 0 when absent, NaN or out of range
 * (as in a hand-edited or corrupt file). */
static int int_of(json_t *o, const char *key)
{
	double d = json_num(o, key);

	return d >= INT_MIN && d <= INT_MAX ? (int)d : 0;
}

static char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

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

static void split_load(struct model_split *s, json_t *o)
{
	if (!json_is_number(json_object_get(o, "oncpu_ms")) && !json_is_number(json_object_get(o, "offcpu_ms")))
		return;
	s->present = true;
	s->oncpu_ms = isnan(json_num(o, "oncpu_ms")) ? 0 : json_num(o, "oncpu_ms");
	s->runq_ms = isnan(json_num(o, "runq_wait_ms")) ? 0 : json_num(o, "runq_wait_ms");
	s->offcpu_ms = isnan(json_num(o, "offcpu_ms")) ? 0 : json_num(o, "offcpu_ms");
	for (int i = 0; i < BLOCKED_NCLASSES; i++) {
		double v = json_num(json_object_get(o, "blocked"), blocked_class_names[i]);

		s->blocked_ms[i] = isnan(v) ? 0 : v;
	}
	s->has_wall = json_is_number(json_object_get(o, "unattributed_ms"));
	s->unattributed_ms = json_num(o, "unattributed_ms");
	s->unattributed_percent = json_num(o, "unattributed_percent");
}

/* Keys of a cycle the model types; the rest is detail, kept as written. */
static bool typed_cycle_key(const char *k)
{
	static const char *const keys[] = {
		"index", "bpf_cycle", "pid", "start_ns", "end_ns", "duration_ms", "open_at_end", "abandoned",
		"end", "samples", "phases", "tokens_per_second", "tokens_per_second_wall", "counts", "oncpu_ms",
		"runq_wait_ms", "offcpu_ms", "blocked", "unattributed_ms", "unattributed_percent", "all_threads",
		"page_faults", "context_switches", "rss_peak_mb", "rss_end_mb", "llama",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i], k))
			return true;
	return profile_side__cycle_key(k);
}

static int cycle_load(struct model *m, json_t *c, size_t index)
{
	struct model_cycle *mc;
	json_t *phases = json_object_get(c, "phases"), *counts = json_object_get(c, "counts"), *v;
	const char *k;

	if (!json_is_object(c))
		return -EINVAL;
	mc = model__add_cycle(m, int_of(c, "pid"), (uint32_t)u64(c, "bpf_cycle"), u64(c, "start_ns"),
			      u64(c, "end_ns"));
	if (!mc)
		return -ENOMEM;
	mc->index = index;
	mc->duration_ms = json_num(c, "duration_ms");
	if (isnan(mc->duration_ms))
		mc->duration_ms = mc->end_ns > mc->start_ns ? (mc->end_ns - mc->start_ns) / 1e6 : 0;
	mc->open_at_end = json_is_true(json_object_get(c, "open_at_end"));
	mc->abandoned = json_is_true(json_object_get(c, "abandoned"));
	mc->ended_at_last_phase = json_is_string(json_object_get(c, "end"));
	mc->samples = u64(c, "samples");
	if (json_is_object(json_object_get(c, "llama")))
		llama__cycle_load(&mc->llama, json_object_get(c, "llama"));
	json_object_foreach(phases, k, v) {
		int ph = name_id(m->phase_names, k);

		if (ph < 0)
			return ph;
		mc->phases[ph].present = true;
		mc->phases[ph].ms = json_num(v, "ms");
		mc->phases[ph].thread_ms = json_num(v, "thread_ms");
		mc->phases[ph].calls = u64(v, "calls");
		split_load(&mc->phases[ph].split, v);
	}
	json_object_foreach(counts, k, v) {
		int id = name_id(m->count_names, k);

		if (id < 0)
			return id;
		mc->has_count[id] = true;
		mc->counts[id] = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	}
	mc->tokens_per_second = json_num(c, "tokens_per_second");
	mc->tokens_per_second_wall = json_num(c, "tokens_per_second_wall");
	split_load(&mc->split, c);
	if (json_is_object(json_object_get(c, "all_threads"))) {
		json_t *a = json_object_get(c, "all_threads");

		mc->has_all_threads = true;
		mc->all_oncpu_ms = json_num(a, "oncpu_ms");
		mc->all_runq_ms = json_num(a, "runq_wait_ms");
		mc->all_offcpu_ms = json_num(a, "offcpu_ms");
		mc->minflt = u64(json_object_get(c, "page_faults"), "minor");
		mc->majflt = u64(json_object_get(c, "page_faults"), "major");
		mc->nvcsw = u64(json_object_get(c, "context_switches"), "voluntary");
		mc->nivcsw = u64(json_object_get(c, "context_switches"), "involuntary");
	}
	if (json_is_number(json_object_get(c, "rss_peak_mb"))) {
		mc->has_rss = true;
		mc->rss_peak_mb = json_num(c, "rss_peak_mb");
		mc->rss_end_mb = json_num(c, "rss_end_mb");
	}
	if (profile_side__cycle_load(mc, c))
		return -ENOMEM;
	json_object_foreach(c, k, v)
		if (!typed_cycle_key(k))
			model__cycle_detail(mc, k, json_incref(v));
	return 0;
}

/* The inverse of processes_json: exit statuses back in wait(2) form. */
static int processes_load(struct model *m, json_t *arr)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		struct model_process *p = model__add_process(m, int_of(v, "pid"));
		const char *comm = json_string_value(json_object_get(v, "comm"));

		if (!p)
			return -ENOMEM;
		p->ppid = (pid_t)u64(v, "parent");
		snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
		p->root = json_is_true(json_object_get(v, "root"));
		p->cpu_s = json_num(v, "cpu_seconds");
		if (json_is_integer(json_object_get(v, "killed_by_signal"))) {
			p->exited = true;
			p->exit_status = (int)u64(v, "killed_by_signal") & 0x7f;
		} else if (json_is_integer(json_object_get(v, "exit_code"))) {
			p->exited = true;
			p->exit_status = ((int)u64(v, "exit_code") & 0xff) << 8;
		}
	}
	return 0;
}

static void phase_load(struct model *m, int ph, json_t *v)
{
	struct model_phase_summary *s = &m->phases[ph];
	json_t *buckets = json_object_get(json_object_get(v, "histogram"), "buckets"), *b;
	size_t i;

	s->present = true;
	s->total_ms = json_num(v, "total_ms");
	s->thread_ms = json_num(v, "thread_ms");
	s->calls = u64(v, "calls");
	s->percent_of_cycle = json_num(v, "percent_of_cycle");
	s->p50_ms = json_num(v, "p50_ms");
	s->p95_ms = json_num(v, "p95_ms");
	s->p99_ms = json_num(v, "p99_ms");
	s->percentiles_from = json_is_string(json_object_get(v, "percentiles_from")) &&
			      !strcmp(json_string_value(json_object_get(v, "percentiles_from")), "histogram") ?
			      "histogram" : json_is_string(json_object_get(v, "percentiles_from")) ? "calls" : NULL;
	s->outside_thread_ms = json_num(json_object_get(v, "outside_cycles"), "thread_ms");
	if (isnan(s->outside_thread_ms))
		s->outside_thread_ms = 0;
	s->outside_calls = u64(json_object_get(v, "outside_cycles"), "calls");
	json_array_foreach(buckets, i, b) {
		uint64_t from = u64(b, "from");
		int slot = 0;

		while (slot + 1 < IT_HIST_SLOTS && (1ull << (slot + 1)) <= from)
			slot++;
		s->hist_us[slot] += u64(b, "count");
	}
}

static void aggregates_load(struct model *m, json_t *a)
{
	static const char *const sources[] = { "cycle", "cycle_marker", "llama_prompt", "whole_run" };
	const char *src = json_string_value(json_object_get(a, "cycles_source"));

	m->agg.total_cycles = json_is_number(json_object_get(a, "total_cycles")) ? u64(a, "total_cycles") : m->ncycles;
	for (size_t i = 0; src && i < sizeof(sources) / sizeof(sources[0]); i++)
		if (!strcmp(src, sources[i]))
			m->agg.cycles_source = m->cycles_source = sources[i];
	m->agg.empty_marker_cycles_dropped = u64(a, "empty_marker_cycles_dropped");
	m->agg.avg_cycle_ms = json_num(a, "avg_cycle_ms");
	m->agg.p50_cycle_ms = json_num(a, "p50_cycle_ms");
	m->agg.p95_cycle_ms = json_num(a, "p95_cycle_ms");
	m->agg.p99_cycle_ms = json_num(a, "p99_cycle_ms");
	m->agg.max_cycle_ms = json_num(a, "max_cycle_ms");
	m->agg.avg_tokens_per_second = json_num(a, "avg_tokens_per_second");
	m->agg.avg_tokens_per_second_wall = json_num(a, "avg_tokens_per_second_wall");
	m->agg.peak_memory_mb = json_num(a, "peak_memory_mb");
	for (size_t i = 0; i < m->ncycles; i++)
		m->agg.cycles_ms += isnan(m->cycles[i].duration_ms) ? 0 : m->cycles[i].duration_ms;
}

static void findings_load(struct model *m, json_t *bottlenecks, json_t *recs)
{
	json_t *v;
	size_t i;

	json_array_foreach(bottlenecks, i, v) {
		const char *type = json_string_value(json_object_get(v, "type"));
		const char *sev = json_string_value(json_object_get(v, "severity"));
		json_t *ev = json_object_get(v, "evidence");

		if (type)
			model__add_finding(m, type, sev ? sev : "low", json_num(v, "percentage_of_cycle"),
					   ev ? json_deep_copy(ev) : NULL);
	}
	json_array_foreach(recs, i, v) {
		struct model_recommendation r = {
			.title = str(v, "title"), .priority = str(v, "priority"), .description = str(v, "description"),
			.current_value = str(v, "current_value"), .recommended_value = str(v, "recommended_value"),
			.bottleneck = str(v, "bottleneck"),
		};
		json_t *ev = json_object_get(v, "evidence");

		r.evidence = ev ? json_deep_copy(ev) : NULL;
		model__add_recommendation(m, &r);
		free(r.title);
		free(r.priority);
		free(r.description);
		free(r.current_value);
		free(r.recommended_value);
		free(r.bottleneck);
	}
}

/* Typed figures the rules read, from the detail sections. */
static void figures_load(struct model *m)
{
	json_t *sched = model__section(m, MODEL_SEC_SCHED), *mem = model__section(m, MODEL_SEC_MEMORY), *c;
	size_t i;

	m->sched.available = json_is_number(json_object_get(sched, "runq_share_percent"));
	m->sched.runq_share_percent = json_num(sched, "runq_share_percent");
	m->sched.avg_runnable_threads = json_num(sched, "avg_runnable_threads");
	m->sched.runq_wait_ms = json_num(sched, "runq_wait_ms");
	m->sched.oncpu_ms = json_num(sched, "oncpu_ms");
	m->sched.offcpu_ms = json_num(sched, "offcpu_ms");
	m->sched.cpus = int_of(sched, "cpus");
	m->memory.available = json_is_object(mem) && json_object_size(mem);
	m->memory.peak_mb = json_num(mem, "peak_mb");
	m->memory.growth_mb_per_cycle = json_num(mem, "growth_mb_per_cycle");
	if (json_is_object(json_object_get(mem, "faults"))) {
		m->sched.has_faults = true;
		m->sched.minflt = u64(json_object_get(mem, "faults"), "minor");
		m->sched.majflt = u64(json_object_get(mem, "faults"), "major");
	}
	if (json_is_object(mem)) { /* typed: the writer puts them back */
		json_object_del(mem, "growth_mb_per_cycle");
		json_object_del(mem, "faults");
	}
	json_array_foreach(model__section(m, MODEL_SEC_CRASHES), i, c)
		if (json_is_string(json_object_get(c, "cause")) &&
		    !strcmp(json_string_value(json_object_get(c, "cause")), "oom_kill"))
			m->oom_kills++;
}

static int too_many_names(const char *source)
{
	fprintf(stderr, "infertrace: %s: more than %d phase or count names; this infertrace reads at most %d "
		"of each (a profile edited or merged by hand?)\n", source, IT_MAX_PHASES - 1, IT_MAX_PHASES - 1);
	return -E2BIG;
}

int model__from_json(struct model *m, json_t *p, const char *source)
{
	json_t *cycles, *phases, *v, *cmd;
	const char *k;
	size_t i;
	int err = 0;

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
	m->run.schema_version = str(p, "schema_version");
	m->run.tool_version = str(json_object_get(p, "tool"), "version");
	m->run.started_at = str(p, "started_at");
	m->run.stop_reason = str(p, "stop_reason");
	m->run.duration_s = json_num(p, "duration_s");
	m->run.config = json_deep_copy(json_object_get(p, "config"));
	m->run.system = json_deep_copy(json_object_get(p, "system"));
	cmd = json_object_get(p, "command");
	if (json_is_array(cmd)) {
		m->run.command = calloc(json_array_size(cmd) + 1, sizeof(char *));
		if (!m->run.command)
			return -ENOMEM;
		json_array_foreach(cmd, i, v)
			m->run.command[i] = strdup(json_is_string(v) ? json_string_value(v) : "?");
	}
	v = json_object_get(p, "pids");
	m->run.pids = calloc(json_array_size(v) + 1, sizeof(pid_t));
	json_array_foreach(v, i, cmd)
		if (m->run.pids && json_is_integer(cmd))
			m->run.pids[m->run.npids++] = (pid_t)json_integer_value(cmd);
	err = processes_load(m, json_object_get(p, "processes"));
	if (err)
		return err;
	/* phases first: their ids follow the summary's order */
	json_object_foreach(phases, k, v) {
		int ph = name_id(m->phase_names, k);

		if (ph == -E2BIG)
			return too_many_names(source);
		if (ph < 0)
			return ph;
		if (!json_is_object(v)) {
			fprintf(stderr, "infertrace: %s: phase '%s' is not an object\n", source, k);
			return -EINVAL;
		}
		phase_load(m, ph, v);
	}
	json_array_foreach(cycles, i, v) {
		err = cycle_load(m, v, i);
		if (err == -E2BIG)
			return too_many_names(source);
		if (err) {
			fprintf(stderr, "infertrace: %s: cycle %zu is malformed\n", source, i);
			return err;
		}
	}
	aggregates_load(m, json_object_get(p, "aggregate_metrics"));
	for (int s = 0; s < MODEL_NSECTIONS; s++) {
		v = json_object_get(p, model_section_names[s]);
		if (v && !json_is_null(v))
			model__set_section(m, s, json_deep_copy(v));
	}
	figures_load(m);
	if (profile_side__load(m, p))
		return -ENOMEM;
	json_object_foreach(json_object_get(p, "lost"), k, v)
		if (json_is_integer(v))
			model__add_lost(m, k, (uint64_t)json_integer_value(v) - model__lost(m, k));
	if (json_is_object(json_object_get(p, "self")))
		m->self = json_deep_copy(json_object_get(p, "self"));
	if (json_is_array(json_object_get(p, "alerts")))
		m->alerts = json_deep_copy(json_object_get(p, "alerts"));
	if (json_is_array(json_object_get(p, "tail_cycles")))
		m->tail_cycles = json_deep_copy(json_object_get(p, "tail_cycles"));
	if (json_is_object(json_object_get(p, "llama")))
		llama__load(m, json_object_get(p, "llama"));
	if (json_is_object(json_object_get(p, "startup")) && json_is_object(json_object_get(p, "teardown")))
		m->run_edges = json_pack("{s:O,s:O}", "startup", json_object_get(p, "startup"), "teardown",
					 json_object_get(p, "teardown"));
	v = json_object_get(json_object_get(p, "config"), "thresholds");
	if (json_is_object(v)) {
		rule_thresholds__defaults(&m->thresholds);
		json_object_foreach(v, k, cmd)
			if (json_is_number(cmd))
				rule_thresholds__set(&m->thresholds, k, json_number_value(cmd));
		m->have_thresholds = true;
	}
	findings_load(m, json_object_get(p, "bottlenecks"), json_object_get(p, "recommendations"));
	m->stage = MODEL_ANALYSED;
	return 0;
}
