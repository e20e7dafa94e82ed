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
#include "gguf.h"
#include <inttypes.h>

void rule_thresholds__defaults(struct rule_thresholds *t)
{
	*t = (struct rule_thresholds){
		.inference_pct = 60, .database_pct = 15, .mode_pct = 10, .memory_pct = 80,
		.runq_pct = 20, .offcpu_pct = 50, .gpu_util_pct = 70, .gpu_sync_pct = 30,
		.leak_mb_per_cycle = 1, .spin_pct = 10, .power_mw = 1000, .power_capped_pct = 5,
	};
}

int rule_thresholds__set(struct rule_thresholds *t, const char *name, double v)
{
	static const struct { const char *name; size_t off; } fields[] = {
#define F(x) { #x, offsetof(struct rule_thresholds, x) }
		F(inference_pct), F(database_pct), F(mode_pct), F(memory_pct), F(runq_pct),
		F(offcpu_pct), F(gpu_util_pct), F(gpu_sync_pct), F(leak_mb_per_cycle), F(spin_pct), F(power_mw),
		F(power_capped_pct),
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

/* The on-CPU stacks inside the cycles, as leaf-first one-frame stacks (the
 * kernel's cycle tag on each sampled stack; start-up and tear-down left
 * out). The whole recording's stacks where no stack carries a cycle of
 * this run (`py:` cycles, a profile without stacks). */
static const struct folded *cycle_oncpu(struct model *m, struct folded *out)
{
	for (size_t i = 0; i < m->nlstacks; i++) {
		const struct model_lstack *s = &m->lstacks[i];
		int32_t name;

		if (!s->has_cycle || !s->samples || !s->nframes || !model__find_cycle(m, s->pid, s->bpf_cycle))
			continue;
		name = m->frames[s->first].name;
		if (name < 0 || (size_t)name >= m->nnames || folded__add(out, m->names[name], s->samples)) {
			folded__free(out);
			return &m->oncpu;
		}
	}
	if (!out->n)
		return &m->oncpu;
	folded__merge(out);
	return out;
}

struct advice {
	const char *title, *description, *recommended;
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
	{ "Stop competing work or use more CPUs", "Runnable threads wait for a CPU during the cycles.", "an idle machine, or pin with taskset" },
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

static const struct advice power_cap_advice[] = {
	{ "Raise the power limit or mode, or lower the load", "The clock dropped while power sat at its limit: the power budget, not the code, set the speed.", "power below the limit (a higher nvpmodel mode or RAPL/NVML limit)" },
	{ "Compare runs in the same power mode", "A capped run's timings depend on the power budget.", "the same power mode for base and new" },
};

static void add_finding(struct model *m, const char *type, const char *sev, double pct, json_t *evidence,
			const struct advice *adv, size_t nadv, const char *current)
{
	model__add_finding(m, type, sev, pct, evidence);
	for (size_t i = 0; i < nadv; i++) {
		json_t *ev = m->nfindings ? json_deep_copy(m->findings[m->nfindings - 1].evidence) : NULL;

		struct model_recommendation r = {
			.title = (char *)adv[i].title,
			.priority = (char *)(i == 0 ? priority_of(sev) : "medium"),
			.description = (char *)adv[i].description,
			.current_value = (char *)current,
			.recommended_value = (char *)adv[i].recommended,
			.bottleneck = (char *)type,
			.evidence = ev,
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

static void add_rec(struct model *m, const char *title, const char *prio, const char *desc, const char *cur,
		    const char *recd, json_t *ev)
{
	struct model_recommendation r = {
		.title = (char *)title, .priority = (char *)prio, .description = (char *)desc,
		.current_value = (char *)cur, .recommended_value = (char *)recd, .bottleneck = "llm_inference",
		.evidence = ev,
	};

	model__add_recommendation(m, &r);
}

/* Inference share of the cycle: the llm_inference phase, else llama.cpp's
 * prompt and generation phases together, else a phase named *inference*. */
static double inference_share(const struct model *m, double *ms, const char **name)
{
	int pp = model__phase_id(m, "llm_prompt"), gp = model__phase_id(m, "llm_generate");
	int ph = find_phase(m, "llm_inference", "inference");

	if (ph) {
		*ms = m->phases[ph].total_ms;
		*name = m->phase_names[ph];
		return m->phases[ph].percent_of_cycle;
	}
	if (pp > 0 && gp > 0 && (m->phases[pp].present || m->phases[gp].present)) {
		*ms = m->phases[pp].total_ms + m->phases[gp].total_ms;
		*name = "llm_prompt+llm_generate";
		return m->phases[pp].percent_of_cycle + m->phases[gp].percent_of_cycle;
	}
	return NAN;
}

/* llm_inference over the threshold; each recommendation only where this
 * run's figures support it, with a value computed from them. */
static void inference_rule(struct model *m, const struct rule_thresholds *t)
{
	json_t *model = json_object_get(m->llama_facts, "model"), *ctx = json_object_get(m->llama_facts, "context");
	double ms = 0, pct;
	const char *name = NULL;
	char cur[160], recd[96];
	json_t *ev;

	pct = inference_share(m, &ms, &name);
	if (isnan(pct) || pct <= t->inference_pct)
		return;
	ev = json_object();
	json_object_set_new(ev, "phase", json_string(name));
	json_object_set_new(ev, "percent_of_cycle", json_real(pct));
	json_object_set_new(ev, "threshold_percent", json_real(t->inference_pct));
	json_object_set_new(ev, "total_ms", json_real(ms));
	{
		struct folded in = {};

		json_object_set_new(ev, "top_functions", top_leaves(cycle_oncpu(m, &in), 5));
		folded__free(&in);
	}
	model__add_finding(m, "llm_inference", severity(pct, t->inference_pct), pct, ev);

	/* context: the tokens a cycle used against n_ctx */
	double n_ctx = json_num(ctx, "n_ctx");
	uint64_t used = 0;

	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_llama_cycle *l = &m->cycles[i].llama;

		if (l->present && l->prompt_tokens + l->generated_tokens > used)
			used = l->prompt_tokens + l->generated_tokens;
	}
	if (isfinite(n_ctx) && used && n_ctx >= 4.0 * used) {
		uint64_t want = 256;

		while (want < used + used / 4)
			want *= 2;
		if (want < n_ctx) {
			json_t *e = json_pack("{s:f,s:I}", "n_ctx", n_ctx, "max_tokens_per_cycle", (json_int_t)used);

			snprintf(cur, sizeof(cur), "n_ctx %.0f; at most %" PRIu64 " tokens used per cycle", n_ctx, used);
			snprintf(recd, sizeof(recd), "n_ctx %" PRIu64, want);
			add_rec(m, "Reduce the context window", "medium",
				"The cycles use a fraction of the context; a smaller KV cache costs less memory and time.",
				cur, recd, e);
		}
	}
	/* quantization: from the model file's type */
	json_t *ftid = json_object_get(model, "file_type_id");
	double n_params = json_num(model, "n_params"), size = json_num(model, "size_bytes");

	if (json_is_integer(ftid) && isfinite(n_params) && n_params > 0) {
		uint32_t ft = (uint32_t)json_integer_value(ftid);
		double bits = gguf__file_type_bits(ft), to_bits = gguf__file_type_bits(15 /* Q4_K_M */);

		if (bits >= 6) {
			json_t *e = json_object();

			json_object_set_new(e, "file_type", json_string(gguf__file_type_name(ft)));
			json_object_set_new(e, "bits_per_weight", json_real(bits));
			json_object_set_new(e, "n_params", json_real(n_params));
			if (isfinite(size))
				json_object_set_new(e, "size_bytes", json_real(size));
			snprintf(cur, sizeof(cur), "%s, %.1f bits per weight, %.0f MB", gguf__file_type_name(ft), bits,
				 isfinite(size) ? size / 1e6 : n_params * bits / 8e6);
			snprintf(recd, sizeof(recd), "Q4_K_M (about %.0f MB)", n_params * to_bits / 8e6);
			add_rec(m, "Quantize the model", priority_of(severity(pct, t->inference_pct)),
				"Inference dominates and reads every weight per token; fewer bits per weight mean "
				"less memory traffic per token.", cur, recd, e);
		}
	}
	/* GPU offload only where a GPU was seen */
	if (m->side.gpu_available) {
		json_t *e = json_pack("{s:b,s:f}", "gpu_available", 1, "inference_percent_of_cycle", pct);

		snprintf(cur, sizeof(cur), "inference takes %.0f%% of the cycle on the CPU", pct);
		add_rec(m, "Offload layers to the GPU", "medium", "A GPU was seen: GPU layers take the matmuls off the CPU.",
			cur, "raise n_gpu_layers", e);
	}
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

/* The run queue over the cycles (all threads of the cycle's process), the
 * experiment's steady state: start-up and tear-down threads do not count.
 * Without per-cycle figures, the whole recording's. */
static bool cycles_runq(const struct model *m, double *share, double *runnable, double *runq_ms, const char **scope)
{
	double on = 0, rq = 0, wall = 0;
	size_t n = 0;

	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!c->has_all_threads)
			continue;
		on += c->all_oncpu_ms;
		rq += c->all_runq_ms;
		wall += c->duration_ms;
		n++;
	}
	if (n) {
		*share = on + rq > 0 ? 100 * rq / (on + rq) : 0;
		*runnable = wall > 0 ? (on + rq) / wall : 0;
		*runq_ms = rq;
		*scope = "cycles";
		return true;
	}
	if (!m->sched.available)
		return false;
	*share = m->sched.runq_share_percent;
	*runnable = m->sched.avg_runnable_threads;
	*runq_ms = m->sched.runq_wait_ms;
	*scope = "recording";
	return true;
}

/* llama.cpp's compute threads, or -1: those ggml's CPU backend was given
 * (the larger of prompt and generation: the more threads, the more they
 * wait for each other), else those the process set; *src says which. */
static int llama_threads(const struct model *m, const char **src)
{
	json_t *ctx = json_object_get(m->llama_facts, "context");
	json_t *used = json_object_get(ctx, "n_threads_used");
	double p = json_num(used, "prompt"), g = json_num(used, "generation"), n;

	n = isfinite(p) && (!isfinite(g) || p > g) ? p : g;
	*src = "n_threads_used";
	if (isfinite(n) && n > 0)
		return (int)n;
	n = json_num(ctx, "n_threads");
	*src = "n_threads";
	return isfinite(n) && n > 0 ? (int)n : -1;
}

/* Leaf functions where compute threads spin waiting for each other. */
static bool spin_leaf(const char *f)
{
	static const char *const spins[] = {
		"ggml_barrier", "ggml_graph_compute_check_for_work", "ggml_graph_compute_poll_for_work",
		"ggml_graph_compute_thread_sync", "gomp_barrier_wait_end", "gomp_team_barrier_wait_end",
		"gomp_spin", "do_spin", "__kmp_wait", "__kmp_hyper_barrier", "sched_yield",
	};

	for (size_t i = 0; i < sizeof(spins) / sizeof(spins[0]); i++)
		if (!strncmp(f, spins[i], strlen(spins[i])))
			return true;
	return false;
}

/* Threads spinning in barriers while CPUs are oversubscribed: computed
 * thread count to use. The spin share is of the on-CPU samples. */
static void spin_rule(struct model *m, const struct rule_thresholds *t, double share, double runnable,
		      const char *scope)
{
	struct folded leaves = {}, in = {};
	uint64_t spin = 0;
	int cpus = m->sched.cpus > 0 ? m->sched.cpus : (int)json_num(m->run.system, "cpus");
	const char *src;
	int threads = llama_threads(m, &src), rec;
	double pct;
	char current[160], recommended[64];

	if (cpus <= 0 || folded__leaves(cycle_oncpu(m, &in), &leaves) || !leaves.total) {
		folded__free(&in);
		folded__free(&leaves);
		return;
	}
	folded__free(&in);
	for (size_t i = 0; i < leaves.n; i++)
		if (spin_leaf(leaves.entries[i].stack))
			spin += leaves.entries[i].count;
	pct = 100.0 * spin / leaves.total;
	folded__free(&leaves);
	/* oversubscribed: the threads asked for fill every CPU, or threads wait
	 * for CPUs a large share of their runnable time */
	if (pct < t->spin_pct || !((threads > 0 && threads >= cpus) || share > t->runq_pct))
		return;
	rec = (threads > 0 ? (threads < cpus ? threads : cpus) : cpus) - 1;
	if (rec < 1)
		rec = 1;
	json_t *ev = json_object();

	json_object_set_new(ev, "spin_percent_of_samples", json_real(pct));
	json_object_set_new(ev, "cpus", json_integer(cpus));
	if (threads > 0)
		json_object_set_new(ev, src, json_integer(threads));
	json_object_set_new(ev, "runq_share_percent", json_real(share));
	json_object_set_new(ev, "avg_runnable_threads", json_real(runnable));
	json_object_set_new(ev, "scope", json_string(scope));
	model__add_finding(m, "cpu_oversubscribed", severity(pct, t->spin_pct), pct, ev);
	if (threads > 0)
		snprintf(current, sizeof(current), "%d threads on %d CPUs; %.0f%% of samples spin in barriers", threads,
			 cpus, pct);
	else
		snprintf(current, sizeof(current), "%.0f%% of samples spin in barriers on %d CPUs", pct, cpus);
	snprintf(recommended, sizeof(recommended), "%d", rec);
	struct model_recommendation r = {
		.title = "Run fewer compute threads",
		.priority = "high",
		.description = "Compute threads spin in barriers waiting for threads that wait for a CPU; one "
			       "thread fewer than the CPUs leaves room for the rest of the process.",
		.current_value = current,
		.recommended_value = recommended,
		.bottleneck = "cpu_oversubscribed",
		.evidence = json_deep_copy(ev),
	};
	model__add_recommendation(m, &r);
}

static void sched_rules(struct model *m, const struct rule_thresholds *t)
{
	double share = NAN, runnable = NAN, runq_ms = NAN;
	const char *scope = NULL;
	char current[160];

	if (cycles_runq(m, &share, &runnable, &runq_ms, &scope) && share > t->runq_pct) {
		json_t *ev = json_object();

		json_object_set_new(ev, "runq_share_percent", json_real(share));
		json_object_set_new(ev, "avg_runnable_threads", json_real(runnable));
		json_object_set_new(ev, "cpus", json_real(m->sched.cpus));
		json_object_set_new(ev, "runq_wait_ms", json_real(runq_ms));
		json_object_set_new(ev, "scope", json_string(scope));
		snprintf(current, sizeof(current), "%.0f%% of runnable time in the %s waiting for a CPU", share, scope);
		add_finding(m, "cpu_contention", severity(share, t->runq_pct), share, ev, contention_advice, 1, current);
	}
	if (scope)
		spin_rule(m, t, share, runnable, scope);
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

/* power_capped: the share of the cycles' time (the run's without cycles)
 * spent in power-cap episodes, with the episodes as evidence. */
static void power_rules(struct model *m, const struct rule_thresholds *t)
{
	json_t *pc = json_object_get(m->energy.detail, "power_capped"), *ev;
	double base_ms = m->agg.cycles_ms > 0 ? m->agg.cycles_ms : m->run.duration_s * 1e3, pct;
	char current[160];

	if (!isfinite(m->energy.capped_ms) || m->energy.capped_ms <= 0 || !(base_ms > 0))
		return;
	pct = 100.0 * m->energy.capped_ms / base_ms;
	if (pct > 100)
		pct = 100;
	if (pct < t->power_capped_pct)
		return;
	ev = json_object();
	json_object_set_new(ev, "capped_ms", json_real(m->energy.capped_ms));
	json_object_set_new(ev, "capped_percent", json_real(pct));
	json_object_set_new(ev, "threshold_percent", json_real(t->power_capped_pct));
	json_object_set_new(ev, "episodes", json_deep_copy(json_object_get(pc, "episodes")));
	snprintf(current, sizeof(current), "power-capped %.0f%% of the time (%.0f ms)", pct, m->energy.capped_ms);
	add_finding(m, "power_capped", severity(pct, t->power_capped_pct), pct, ev, power_cap_advice, 2, current);
}

/* The power alert (the seeds' power_consumption_mw): the peak total power
 * over one sampling period above the threshold. Replaces an earlier one. */
static void power_alert(struct model *m, const struct rule_thresholds *t)
{
	json_t *kept = json_array(), *v;
	size_t i;
	char desc[200];

	json_array_foreach(m->alerts, i, v) {
		const char *type = json_string_value(json_object_get(v, "type"));

		if (!type || strcmp(type, "power"))
			json_array_append(kept, v);
	}
	json_decref(m->alerts);
	m->alerts = kept;
	if (!isfinite(m->energy.peak_w) || m->energy.peak_w * 1e3 <= t->power_mw)
		return;
	snprintf(desc, sizeof(desc), "peak power %.0f mW above the %.0f mW threshold (--threshold power_mw=)",
		 m->energy.peak_w * 1e3, t->power_mw);
	json_array_append_new(m->alerts, json_pack("{s:s,s:s,s:s,s:f,s:f}", "type", "power", "severity", "warning",
						   "description", desc, "value_mw", m->energy.peak_w * 1e3,
						   "threshold_mw", t->power_mw));
}

int rules__evaluate(struct model *m, const struct rule_thresholds *t)
{
	int err = model__require(m, MODEL_DERIVED, "rules__evaluate");

	if (err)
		return err;
	model__clear_findings(m);
	inference_rule(m, t);
	phase_rule(m, "database", "database", "database", t->database_pct, database_advice, 3);
	phase_rule(m, "mode_overhead", "mode", "mode", t->mode_pct, mode_advice, 2);
	memory_rules(m, t);
	sched_rules(m, t);
	side_rules(m, t);
	power_rules(m, t);
	power_alert(m, t);
	m->thresholds = *t;
	m->have_thresholds = true;
	return m->stage == MODEL_DERIVED ? model__advance(m, MODEL_ANALYSED, "rules__evaluate") : 0;
}
