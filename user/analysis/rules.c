// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_num.h"
#include "folded.h"
#include "model.h"
#include "rules.h"

void rule_thresholds__defaults(struct rule_thresholds *t)
{
	*t = (struct rule_thresholds){
		.inference_pct = 60, .database_pct = 15, .mode_pct = 10, .memory_pct = 80,
		.runq_pct = 20, .offcpu_pct = 50, .gpu_util_pct = 70, .gpu_sync_pct = 30,
		.leak_mb_per_cycle = 1,
	};
}

int rule_thresholds__set(struct rule_thresholds *t, const char *name, double v)
{
	static const struct { const char *name; size_t off; } fields[] = {
#define F(x) { #x, offsetof(struct rule_thresholds, x) }
		F(inference_pct), F(database_pct), F(mode_pct), F(memory_pct), F(runq_pct),
		F(offcpu_pct), F(gpu_util_pct), F(gpu_sync_pct), F(leak_mb_per_cycle),
#undef F
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!strcmp(fields[i].name, name)) {
			memcpy((char *)t + fields[i].off, &v, sizeof(v));
			return 0;
		}
	}
	return -EINVAL;
}

/* low/medium/high/critical by how far a figure exceeds its threshold. */
static const char *severity(double value, double threshold)
{
	double r = threshold > 0 ? value / threshold : 2;

	return r >= 1.5 ? "critical" : r >= 1.25 ? "high" : r >= 1.0 ? "medium" : "low";
}

static const char *priority_of(const char *sev)
{
	return !strcmp(sev, "critical") || !strcmp(sev, "high") ? "high" : sev;
}

/* The first phase whose name is `exact`, else one containing `part`; 0 if none. */
static int find_phase(const struct model *m, const char *exact, const char *part)
{
	int id = model__phase_id(m, exact);

	if (id > 0 && m->phases[id].present)
		return id;
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (m->phases[i].present && strstr(m->phase_names[i], part))
			return i;
	return 0;
}

/* The leaf functions with most samples in a set of stacks, as evidence. */
static json_t *top_leaves(const struct folded *st, int n)
{
	struct folded leaves = {};
	json_t *arr = json_array();

	if (folded__leaves(st, &leaves))
		return arr;
	for (size_t i = 0; i < leaves.n && (int)i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "function", json_string(leaves.entries[i].stack));
		json_object_set_new(e, "percent", json_real(100.0 * leaves.entries[i].count / leaves.total));
		json_array_append_new(arr, e);
	}
	folded__free(&leaves);
	return arr;
}

struct advice {
	const char *title, *description, *recommended;
};

static const struct advice inference_advice[] = {
	{ "Reduce the context window", "A smaller context makes each decode cheaper.", "halve n_ctx (e.g. 4096 -> 2048)" },
	{ "Quantize more aggressively", "Fewer bits per weight mean less memory traffic per token.", "Q4_0 or Q4_K_M instead of Q8_0/F16" },
	{ "Generate fewer tokens per response", "Inference time grows with every generated token.", "lower max_tokens" },
	{ "Offload layers to the GPU", "On Jetson or a GPU server, GPU layers take the matmuls off the CPU.", "raise n_gpu_layers" },
};
static const struct advice database_advice[] = {
	{ "Batch database writes", "One transaction per batch instead of one per statement.", "wrap each cycle's writes in one transaction" },
	{ "Use an in-memory database with periodic flush", "Avoids a sync to disk per write.", "PRAGMA journal_mode=WAL; synchronous=NORMAL, or :memory: + periodic backup" },
	{ "Add indexes to the queried columns", "Full scans grow with the table.", "CREATE INDEX on the WHERE columns" },
};
static const struct advice mode_advice[] = {
	{ "Cache the mode's state", "Recomputing it every cycle costs the same each time.", "compute once, update incrementally" },
	{ "Simplify prompt generation", "String building per cycle adds up.", "template once, fill per cycle" },
};
static const struct advice memory_advice[] = {
	{ "Use a smaller model or context", "Peak memory is near the machine's RAM; the OOM killer is next.", "a smaller quantization or n_ctx" },
	{ "Lower the memory limit in the experiment's config", "Keep headroom for the OS and page cache.", "peak below 80% of RAM" },
};
static const struct advice leak_advice[] = {
	{ "Find what grows every cycle", "RSS grows steadily across cycles: something is kept per cycle.", "flat RSS across cycles" },
};
static const struct advice thermal_advice[] = {
	{ "Improve cooling or lower the power mode", "The clock dropped while hot: timings are not comparable.", "temperature below the threshold" },
	{ "Reduce GPU layers or batch size", "Less heat per second.", "fewer layers / smaller batch" },
};
static const struct advice contention_advice[] = {
	{ "Run fewer threads than CPUs", "Runnable threads wait for a CPU: time goes to the run queue.", "threads <= CPUs (n_threads)" },
	{ "Stop competing work or use more CPUs", "Other processes take the CPUs the experiment needs.", "an idle machine, or pin with taskset" },
};
static const struct advice offcpu_advice[] = {
	{ "Look at the off-CPU stacks", "The phase is mostly blocked, not computing; offcpu.folded shows where.", "on-CPU most of the phase" },
};
static const struct advice gpu_util_advice[] = {
	{ "Offload more of the model to the GPU", "The GPU idles while inference dominates the cycle.", "GPU utilisation above 70%" },
};
static const struct advice gpu_sync_advice[] = {
	{ "Overlap host work with the GPU", "The host waits on GPU synchronisation a large share of the cycle.", "asynchronous copies and fewer synchronisations" },
};

static void add_finding(struct model *m, const char *type, const char *sev, double pct, json_t *evidence,
			const struct advice *adv, size_t nadv, const char *current)
{
	model__add_finding(m, type, sev, pct, evidence);
	for (size_t i = 0; i < nadv; i++) {
		struct model_recommendation r = {
			.title = (char *)adv[i].title,
			.priority = (char *)(i == 0 ? priority_of(sev) : "medium"),
			.description = (char *)adv[i].description,
			.current_value = (char *)current,
			.recommended_value = (char *)adv[i].recommended,
			.bottleneck = (char *)type,
		};

		model__add_recommendation(m, &r);
	}
}

static void phase_rule(struct model *m, const char *type, const char *exact, const char *part,
		       double threshold, const struct advice *adv, size_t nadv)
{
	int ph = find_phase(m, exact, part);
	double pct;
	char current[128];
	json_t *ev;

	if (!ph)
		return;
	pct = m->phases[ph].percent_of_cycle;
	if (isnan(pct) || pct <= threshold)
		return;
	ev = json_object();
	json_object_set_new(ev, "phase", json_string(m->phase_names[ph]));
	json_object_set_new(ev, "percent_of_cycle", json_real(pct));
	json_object_set_new(ev, "threshold_percent", json_real(threshold));
	json_object_set_new(ev, "total_ms", json_real(m->phases[ph].total_ms));
	json_object_set_new(ev, "top_functions", top_leaves(&m->oncpu_by_phase[ph], 5));
	snprintf(current, sizeof(current), "%s takes %.1f%% of the cycle", m->phase_names[ph], pct);
	add_finding(m, type, severity(pct, threshold), pct, ev, adv, nadv, current);
}

static void memory_rules(struct model *m, const struct rule_thresholds *t)
{
	double peak = m->memory.peak_mb, total = json_num(m->run.system, "mem_total_mb");
	double growth = m->memory.growth_mb_per_cycle;
	uint64_t ooms = m->oom_kills;
	char current[128];

	if ((!isnan(peak) && total > 0 && 100 * peak / total > t->memory_pct) || ooms) {
		json_t *ev = json_object();
		double pct = total > 0 && !isnan(peak) ? 100 * peak / total : NAN;

		json_object_set_new(ev, "peak_mb", isnan(peak) ? json_null() : json_real(peak));
		json_object_set_new(ev, "mem_total_mb", json_real(total));
		json_object_set_new(ev, "percent_of_ram", isnan(pct) ? json_null() : json_real(pct));
		json_object_set_new(ev, "oom_kills", json_integer(ooms));
		snprintf(current, sizeof(current), "peak %.0f MB of %.0f MB%s", peak, total, ooms ? ", OOM kills" : "");
		add_finding(m, "memory_pressure", ooms ? "critical" : severity(pct, t->memory_pct), NAN, ev,
			    memory_advice, 2, current);
	}
	if (!isnan(growth) && m->agg.total_cycles >= 3 && growth > t->leak_mb_per_cycle) {
		json_t *ev = json_object();

		json_object_set_new(ev, "growth_mb_per_cycle", json_real(growth));
		json_object_set_new(ev, "cycles", json_real((double)m->agg.total_cycles));
		json_object_set_new(ev, "threshold_mb_per_cycle", json_real(t->leak_mb_per_cycle));
		snprintf(current, sizeof(current), "RSS grows %.2f MB per cycle", growth);
		add_finding(m, "memory_leak", severity(growth, t->leak_mb_per_cycle), NAN, ev, leak_advice, 1, current);
	}
}

static void sched_rules(struct model *m, const struct rule_thresholds *t)
{
	double share = m->sched.available ? m->sched.runq_share_percent : NAN;
	char current[160];

	if (!isnan(share) && share > t->runq_pct) {
		json_t *ev = json_object();

		json_object_set_new(ev, "runq_share_percent", json_real(share));
		json_object_set_new(ev, "avg_runnable_threads", json_real(m->sched.avg_runnable_threads));
		json_object_set_new(ev, "cpus", json_real(m->sched.cpus));
		json_object_set_new(ev, "runq_wait_ms", json_real(m->sched.runq_wait_ms));
		snprintf(current, sizeof(current), "%.0f%% of runnable time waiting for a CPU", share);
		add_finding(m, "cpu_contention", severity(share, t->runq_pct), share, ev, contention_advice, 2, current);
	}
	/* a phase mostly blocked: sum its off-CPU time over the cycles */
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		double ms = 0, off = 0, io = 0;

		if (!m->phases[ph].present)
			continue;
		for (size_t i = 0; i < m->ncycles; i++) {
			const struct model_cycle_phase *p = &m->cycles[i].phases[ph];

			if (!p->present || !p->split.present)
				continue;
			ms += p->ms;
			off += p->split.offcpu_ms;
			io += p->split.blocked_ms[BLOCKED_IO];
		}
		if (ms <= 0 || 100 * off / ms <= t->offcpu_pct)
			continue;
		json_t *ev = json_object();

		json_object_set_new(ev, "phase", json_string(m->phase_names[ph]));
		json_object_set_new(ev, "offcpu_percent_of_phase", json_real(100 * off / ms));
		json_object_set_new(ev, "offcpu_ms", json_real(off));
		json_object_set_new(ev, "io_ms", json_real(io));
		json_object_set_new(ev, "top_stacks",
				    json_deep_copy(json_object_get(model__section(m, MODEL_SEC_OFFCPU), "top_stacks")));
		snprintf(current, sizeof(current), "phase %s blocked %.0f%% of its time", m->phase_names[ph], 100 * off / ms);
		add_finding(m, io > off / 2 ? "io_wait" : "off_cpu", severity(100 * off / ms, t->offcpu_pct),
			    m->phases[ph].percent_of_cycle, ev, offcpu_advice, 1, current);
	}
}

static void side_rules(struct model *m, const struct rule_thresholds *t)
{
	json_t *thermal = model__section(m, MODEL_SEC_THERMAL);
	int inf = find_phase(m, "llm_inference", "inference");
	int sync = find_phase(m, "gpu_sync", "gpu_sync");
	double inf_pct = inf ? m->phases[inf].percent_of_cycle : NAN;
	char current[160];

	if (m->side.throttled) {
		json_t *ev = json_object();

		json_object_set_new(ev, "max_temp_c", json_real(m->side.max_temp_c));
		json_object_set_new(ev, "episodes", json_deep_copy(json_object_get(thermal, "throttling")));
		snprintf(current, sizeof(current), "%zu throttling episode(s), up to %.0f C",
			 json_array_size(json_object_get(thermal, "throttling")), m->side.max_temp_c);
		add_finding(m, "thermal_throttling", "high", NAN, ev, thermal_advice, 2, current);
	}
	if (m->side.gpu_available && !isnan(inf_pct) && inf_pct > 50) {
		double util = m->side.gpu_util_avg_pct;

		if (!isnan(util) && util < t->gpu_util_pct) {
			json_t *ev = json_object();

			json_object_set_new(ev, "gpu_util_avg_pct", json_real(util));
			json_object_set_new(ev, "inference_percent_of_cycle", json_real(inf_pct));
			snprintf(current, sizeof(current), "GPU %.0f%% busy while inference takes %.0f%% of the cycle", util, inf_pct);
			add_finding(m, "gpu_underutilized", severity(t->gpu_util_pct, util > 1 ? util : 1), inf_pct, ev,
				    gpu_util_advice, 1, current);
		}
	}
	if (sync) {
		double pct = m->phases[sync].percent_of_cycle;

		if (!isnan(pct) && pct > t->gpu_sync_pct) {
			json_t *ev = json_object();

			json_object_set_new(ev, "phase", json_string(m->phase_names[sync]));
			json_object_set_new(ev, "percent_of_cycle", json_real(pct));
			snprintf(current, sizeof(current), "host waits on the GPU %.0f%% of the cycle", pct);
			add_finding(m, "gpu_bound", severity(pct, t->gpu_sync_pct), pct, ev, gpu_sync_advice, 1, current);
		}
	}
}

int rules__evaluate(struct model *m, const struct rule_thresholds *t)
{
	int err = model__require(m, MODEL_DERIVED, "rules__evaluate");

	if (err)
		return err;
	model__clear_findings(m);
	phase_rule(m, "llm_inference", "llm_inference", "inference", t->inference_pct, inference_advice, 4);
	phase_rule(m, "database", "database", "database", t->database_pct, database_advice, 3);
	phase_rule(m, "mode_overhead", "mode", "mode", t->mode_pct, mode_advice, 2);
	memory_rules(m, t);
	sched_rules(m, t);
	side_rules(m, t);
	m->thresholds = *t;
	m->have_thresholds = true;
	return m->stage == MODEL_DERIVED ? model__advance(m, MODEL_ANALYSED, "rules__evaluate") : 0;
}
