// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "concerns.h"
#include "folded.h"
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
			*(double *)((char *)t + fields[i].off) = v;
			return 0;
		}
	}
	return -EINVAL;
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
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

/* The first phase whose name is `exact`, else one containing `part`. */
static const char *find_phase(json_t *phases, const char *exact, const char *part)
{
	const char *key;
	json_t *v;

	if (json_object_get(phases, exact))
		return exact;
	json_object_foreach(phases, key, v)
		if (strstr(key, part))
			return key;
	return NULL;
}

/* The leaf functions with most samples in a folded file, as evidence. */
static json_t *top_leaves(const char *dir, const char *file, int n)
{
	char path[4096];
	struct folded st, leaves = {};
	json_t *arr = json_array();

	if (!dir)
		return arr;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (folded__read(path, &st))
		return arr;
	folded__leaves(&st, &leaves);
	folded__free(&st);
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

static void add_finding(json_t *profile, const char *type, const char *sev, double pct, json_t *evidence,
			const struct advice *adv, size_t nadv, const char *current)
{
	json_t *b = json_object(), *recs = json_object_get(profile, "recommendations");

	json_object_set_new(b, "type", json_string(type));
	json_object_set_new(b, "severity", json_string(sev));
	json_object_set_new(b, "percentage_of_cycle", isnan(pct) ? json_null() : json_real(pct));
	json_object_set_new(b, "evidence", evidence);
	json_array_append_new(json_object_get(profile, "bottlenecks"), b);
	for (size_t i = 0; i < nadv; i++) {
		json_t *r = json_object();

		json_object_set_new(r, "title", json_string(adv[i].title));
		json_object_set_new(r, "priority", json_string(i == 0 ? priority_of(sev) : "medium"));
		json_object_set_new(r, "description", json_string(adv[i].description));
		json_object_set_new(r, "current_value", json_string(current));
		json_object_set_new(r, "recommended_value", json_string(adv[i].recommended));
		json_object_set_new(r, "bottleneck", json_string(type));
		json_array_append_new(recs, r);
	}
}

static void phase_rule(json_t *profile, const char *dir, const char *type, const char *exact, const char *part,
		       double threshold, const struct advice *adv, size_t nadv)
{
	json_t *phases = json_object_get(profile, "phases"), *ev;
	const char *name = find_phase(phases, exact, part);
	double pct;
	char file[300], current[128];

	if (!name)
		return;
	pct = num(json_object_get(phases, name), "percent_of_cycle");
	if (isnan(pct) || pct <= threshold)
		return;
	ev = json_object();
	json_object_set_new(ev, "phase", json_string(name));
	json_object_set_new(ev, "percent_of_cycle", json_real(pct));
	json_object_set_new(ev, "threshold_percent", json_real(threshold));
	json_object_set_new(ev, "total_ms", json_real(num(json_object_get(phases, name), "total_ms")));
	snprintf(file, sizeof(file), "stacks.%s.folded", name);
	json_object_set_new(ev, "top_functions", top_leaves(dir, file, 5));
	snprintf(current, sizeof(current), "%s takes %.1f%% of the cycle", name, pct);
	add_finding(profile, type, severity(pct, threshold), pct, ev, adv, nadv, current);
}

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

static void memory_rules(json_t *profile, const struct rule_thresholds *t)
{
	json_t *mem = json_object_get(profile, "memory"), *crashes = json_object_get(profile, "crashes"), *c;
	double peak = num(mem, "peak_mb"), total = num(json_object_get(profile, "system"), "mem_total_mb");
	double growth = num(mem, "growth_mb_per_cycle");
	double cycles = num(json_object_get(profile, "aggregate_metrics"), "total_cycles");
	size_t i, ooms = 0;
	char current[128];

	json_array_foreach(crashes, i, c) {
		json_t *cause = json_object_get(c, "cause");

		if (json_is_string(cause) && !strcmp(json_string_value(cause), "oom_kill"))
			ooms++;
	}
	if ((!isnan(peak) && total > 0 && 100 * peak / total > t->memory_pct) || ooms) {
		json_t *ev = json_object();
		double pct = total > 0 && !isnan(peak) ? 100 * peak / total : NAN;

		json_object_set_new(ev, "peak_mb", isnan(peak) ? json_null() : json_real(peak));
		json_object_set_new(ev, "mem_total_mb", json_real(total));
		json_object_set_new(ev, "percent_of_ram", isnan(pct) ? json_null() : json_real(pct));
		json_object_set_new(ev, "oom_kills", json_integer(ooms));
		snprintf(current, sizeof(current), "peak %.0f MB of %.0f MB%s", peak, total, ooms ? ", OOM kills" : "");
		add_finding(profile, "memory_pressure", ooms ? "critical" : severity(pct, t->memory_pct), NAN, ev,
			    memory_advice, 2, current);
	}
	if (!isnan(growth) && cycles >= 3 && growth > t->leak_mb_per_cycle) {
		json_t *ev = json_object();

		json_object_set_new(ev, "growth_mb_per_cycle", json_real(growth));
		json_object_set_new(ev, "cycles", json_real(cycles));
		json_object_set_new(ev, "threshold_mb_per_cycle", json_real(t->leak_mb_per_cycle));
		snprintf(current, sizeof(current), "RSS grows %.2f MB per cycle", growth);
		add_finding(profile, "memory_leak", severity(growth, t->leak_mb_per_cycle), NAN, ev, leak_advice, 1, current);
	}
}

static void sched_rules(json_t *profile, const struct rule_thresholds *t)
{
	json_t *sched = json_object_get(profile, "sched"), *phases = json_object_get(profile, "phases");
	json_t *cycles = json_object_get(profile, "cycles"), *c;
	double share = num(sched, "runq_share_percent");
	const char *name;
	json_t *v;
	char current[160];

	if (!isnan(share) && share > t->runq_pct) {
		json_t *ev = json_object();

		json_object_set_new(ev, "runq_share_percent", json_real(share));
		json_object_set_new(ev, "avg_runnable_threads", json_real(num(sched, "avg_runnable_threads")));
		json_object_set_new(ev, "cpus", json_real(num(sched, "cpus")));
		json_object_set_new(ev, "runq_wait_ms", json_real(num(sched, "runq_wait_ms")));
		snprintf(current, sizeof(current), "%.0f%% of runnable time waiting for a CPU", share);
		add_finding(profile, "cpu_contention", severity(share, t->runq_pct), share, ev, contention_advice, 2, current);
	}
	/* a phase mostly blocked: sum its off-CPU time over the cycles */
	json_object_foreach(phases, name, v) {
		double ms = 0, off = 0, io = 0;
		size_t i;

		json_array_foreach(cycles, i, c) {
			json_t *p = json_object_get(json_object_get(c, "phases"), name);
			double o = num(p, "offcpu_ms");

			if (isnan(o))
				continue;
			ms += num(p, "ms");
			off += o;
			io += num(json_object_get(p, "blocked"), "io");
		}
		if (ms <= 0 || 100 * off / ms <= t->offcpu_pct)
			continue;
		json_t *ev = json_object();

		json_object_set_new(ev, "phase", json_string(name));
		json_object_set_new(ev, "offcpu_percent_of_phase", json_real(100 * off / ms));
		json_object_set_new(ev, "offcpu_ms", json_real(off));
		json_object_set_new(ev, "io_ms", json_real(io));
		json_object_set_new(ev, "top_stacks", json_deep_copy(json_object_get(json_object_get(profile, "offcpu"), "top_stacks")));
		snprintf(current, sizeof(current), "phase %s blocked %.0f%% of its time", name, 100 * off / ms);
		add_finding(profile, io > off / 2 ? "io_wait" : "off_cpu", severity(100 * off / ms, t->offcpu_pct),
			    num(v, "percent_of_cycle"), ev, offcpu_advice, 1, current);
	}
}

static void side_rules(json_t *profile, const struct rule_thresholds *t)
{
	json_t *thermal = json_object_get(profile, "thermal"), *gpu = json_object_get(profile, "gpu");
	json_t *phases = json_object_get(profile, "phases");
	const char *inf = find_phase(phases, "llm_inference", "inference");
	const char *sync = find_phase(phases, "gpu_sync", "gpu_sync");
	double inf_pct = inf ? num(json_object_get(phases, inf), "percent_of_cycle") : NAN;
	char current[160];

	if (json_is_true(json_object_get(thermal, "throttled"))) {
		json_t *ev = json_object();

		json_object_set_new(ev, "max_temp_c", json_real(num(thermal, "max_temp_c")));
		json_object_set_new(ev, "episodes", json_deep_copy(json_object_get(thermal, "throttling")));
		snprintf(current, sizeof(current), "%zu throttling episode(s), up to %.0f C",
			 json_array_size(json_object_get(thermal, "throttling")), num(thermal, "max_temp_c"));
		add_finding(profile, "thermal_throttling", "high", NAN, ev, thermal_advice, 2, current);
	}
	if (json_is_true(json_object_get(gpu, "available")) && !isnan(inf_pct) && inf_pct > 50) {
		double util = num(json_object_get(gpu, "util_pct"), "avg");

		if (!isnan(util) && util < t->gpu_util_pct) {
			json_t *ev = json_object();

			json_object_set_new(ev, "gpu_util_avg_pct", json_real(util));
			json_object_set_new(ev, "inference_percent_of_cycle", json_real(inf_pct));
			snprintf(current, sizeof(current), "GPU %.0f%% busy while inference takes %.0f%% of the cycle", util, inf_pct);
			add_finding(profile, "gpu_underutilized", severity(t->gpu_util_pct, util > 1 ? util : 1), inf_pct, ev,
				    gpu_util_advice, 1, current);
		}
	}
	if (sync) {
		double pct = num(json_object_get(phases, sync), "percent_of_cycle");

		if (!isnan(pct) && pct > t->gpu_sync_pct) {
			json_t *ev = json_object();

			json_object_set_new(ev, "phase", json_string(sync));
			json_object_set_new(ev, "percent_of_cycle", json_real(pct));
			snprintf(current, sizeof(current), "host waits on the GPU %.0f%% of the cycle", pct);
			add_finding(profile, "gpu_bound", severity(pct, t->gpu_sync_pct), pct, ev, gpu_sync_advice, 1, current);
		}
	}
}

void rules__evaluate(json_t *profile, const struct rule_thresholds *t, const char *dir)
{
	json_object_set_new(profile, "bottlenecks", json_array());
	json_object_set_new(profile, "recommendations", json_array());
	phase_rule(profile, dir, "llm_inference", "llm_inference", "inference", t->inference_pct, inference_advice, 4);
	phase_rule(profile, dir, "database", "database", "database", t->database_pct, database_advice, 3);
	phase_rule(profile, dir, "mode_overhead", "mode", "mode", t->mode_pct, mode_advice, 2);
	memory_rules(profile, t);
	sched_rules(profile, t);
	side_rules(profile, t);
}

static int rules_write(struct recording *rec, json_t *profile)
{
	rules__evaluate(profile, &rec->opts.thresholds, rec->opts.output_dir);
	json_object_set_new(json_object_get(profile, "config"), "thresholds", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
		"inference_pct", rec->opts.thresholds.inference_pct, "database_pct", rec->opts.thresholds.database_pct,
		"mode_pct", rec->opts.thresholds.mode_pct, "memory_pct", rec->opts.thresholds.memory_pct,
		"runq_pct", rec->opts.thresholds.runq_pct, "offcpu_pct", rec->opts.thresholds.offcpu_pct,
		"gpu_util_pct", rec->opts.thresholds.gpu_util_pct, "gpu_sync_pct", rec->opts.thresholds.gpu_sync_pct,
		"leak_mb_per_cycle", rec->opts.thresholds.leak_mb_per_cycle));
	return 0;
}

const struct concern rules_concern = {
	.name = "rules",
	.write = rules_write,
};
