// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "gpu_view.h"
#include "model.h"
#include "rules.h"
#include "gguf.h"
#include <inttypes.h>

void rule_thresholds__defaults(struct rule_thresholds *t)
{
#define DEFAULT(name, def) .name = (def),
	*t = (struct rule_thresholds){ RULE_THRESHOLDS(DEFAULT) };
#undef DEFAULT
}

int rule_thresholds__set(struct rule_thresholds *t, const char *name, double v)
{
	static const struct { const char *name; size_t off; } fields[] = {
#define F(x, def) { #x, offsetof(struct rule_thresholds, x) },
		RULE_THRESHOLDS(F)
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
static void top_leaves(struct model *m, const struct folded *st, struct model_evidence *ev)
{
	struct folded leaves = {};

	ev->has_top_functions = true;
	if (folded__leaves(st, &leaves))
		return;
	for (size_t i = 0; i < leaves.n && i < MODEL_EV_TOP_FUNCTIONS; i++) {
		if (VEC_RESERVE(ev->top_functions.v, ev->top_functions.cap, ev->top_functions.n, MODEL_EV_TOP_FUNCTIONS))
			break;
		ev->top_functions.v[ev->top_functions.n++] = (struct model_ev_share){
			.name = model__intern(m, leaves.entries[i].stack), .ms = NAN,
			.percent = 100.0 * leaves.entries[i].count / leaves.total,
		};
	}
	folded__free(&leaves);
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

static const struct advice mode_cache_advice = {
	"Cache the mode's state", "The phase computes on the CPU and costs the same every call: its result can be kept.",
	"compute once, update incrementally",
};
static const struct advice mode_string_advice = {
	"Simplify prompt generation", "A large share of the phase's samples build strings.",
	"template once, fill per cycle",
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

/* ---- what a phase does: the evidence its verdicts come from ---- */

/* A folded frame without its kernel suffix equals or starts with one of pfx. */
static bool frame_matches(const char *f, size_t len, const char *const *pfx, size_t n, bool anywhere)
{
	char buf[256];

	if (len >= 4 && !memcmp(f + len - 4, "_[k]", 4))
		len -= 4;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, f, len);
	buf[len] = 0;
	for (size_t i = 0; i < n; i++)
		if (anywhere ? strstr(buf, pfx[i]) != NULL : !strncmp(buf, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* Whether any frame of a folded stack (frames joined by ';') matches. */
static bool stack_has(const char *stack, const char *const *pfx, size_t n, bool anywhere)
{
	for (const char *f = stack; *f;) {
		const char *e = strchr(f, ';');
		size_t len = e ? (size_t)(e - f) : strlen(f);

		if (frame_matches(f, len, pfx, n, anywhere))
			return true;
		if (!e)
			break;
		f = e + 1;
	}
	return false;
}

static const char *const fsync_frames[] = { "fsync", "fdatasync", "sync_file_range" };
static const char *const sqlite_frames[] = { "sqlite3", "pysqlite", "libsqlite3" };
/* a table scan steps the B-tree row by row; an index lookup seeks */
static const char *const scan_frames[] = { "sqlite3BtreeNext", "sqlite3BtreePrevious" };
static const char *const string_frames[] = {
	"PyUnicode_", "_PyUnicodeWriter", "unicode_", "_PyUnicode", "PyUnicode", "vfprintf", "__vfprintf", "vsnprintf",
	"__vsnprintf", "snprintf", "sprintf", "std::__cxx11::basic_string", "std::basic_string", "str.format",
	"str.join", "string_join", "do_string_format",
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The class of a blocked folded stack (root first, kernel frames last with
 * their suffix): its kernel frames leaf first, as blocked_classify reads them. */
static enum blocked_class folded_blocked_class(const char *stack)
{
	char *copy = strdup(stack), *frames[64], *sv = NULL;
	const char *leaf_first[64];
	int n = 0;
	enum blocked_class c;

	if (!copy)
		return BLOCKED_OTHER;
	for (char *f = strtok_r(copy, ";", &sv); f && n < 64; f = strtok_r(NULL, ";", &sv)) {
		size_t len = strlen(f);

		if (len >= 4 && !strcmp(f + len - 4, "_[k]")) {
			f[len - 4] = 0;
			frames[n++] = f;
		}
	}
	for (int i = 0; i < n; i++)
		leaf_first[i] = frames[n - 1 - i];
	c = blocked_classify(leaf_first, n);
	free(copy);
	return c;
}

struct phase_acts {
	double ms, cycles_ms;      /* the phase's time in the cycles, and those cycles' wall */
	unsigned int ncycles;      /* cycles the phase ran in */
	bool has_blocked;
	const char *blocked_from;  /* "scheduler" (its split) or "offcpu_stacks" */
	double off_ms, blocked_ms[BLOCKED_NCLASSES];
	bool has_stacks;           /* off-CPU stacks labelled with the phase */
	double fsync_ms;           /* blocked under fsync/fdatasync frames */
	double sqlite_offcpu_ms;   /* blocked under SQLite frames */
	uint64_t samples, sqlite_samples, scan_samples, string_samples;
	double sqlite_calls_per_cycle; /* the phase's own probes are SQLite's (NAN: not) */
	double fsyncs_per_cycle;       /* a count probed at fsync/fdatasync (NAN: none) */
};

/* Whether a spec asked for name (a phase's or a count's) contains needle. */
static bool spec_has(const struct model *m, const struct model_specs *v, const char *name, const char *needle)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(model__name(m, v->v[i].name), name) && strstr(model__name(m, v->v[i].spec), needle))
			return true;
	return false;
}

static bool asked_for(const struct model *m, const struct model_specs *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(model__name(m, v->v[i].name), name))
			return true;
	return false;
}

/* Whether the phase's probes are SQLite's: its spec names sqlite3_
 * functions, or it is the sqlite preset's phase. */
static bool probed_at_sqlite(const struct model *m, int ph)
{
	const struct model_asked *a = &m->run.asked;

	if (spec_has(m, &a->phases, m->phase_names[ph], "sqlite3_"))
		return true;
	for (size_t i = 0; i < a->presets.n; i++)
		if (!strcmp(model__name(m, a->presets.v[i]), "sqlite") && !strcmp(m->phase_names[ph], "database") &&
		    !asked_for(m, &a->phases, "database"))
			return true;
	return false;
}

static void phase_acts(struct model *m, int ph, struct phase_acts *a)
{
	const struct folded *off = &m->offcpu_us_by_phase[ph], *on = &m->oncpu_by_phase[ph];
	const struct model_asked *asked = &m->run.asked;
	uint64_t calls = 0;
	double fs = 0;
	unsigned int fs_cycles = 0;
	int fs_id = -1;

	memset(a, 0, sizeof(*a));
	for (int c = 1; c < IT_MAX_PHASES && fs_id < 0; c++)
		if (m->count_names[c] && (spec_has(m, &asked->counts, m->count_names[c], "fsync") ||
					  spec_has(m, &asked->counts, m->count_names[c], "fdatasync")))
			fs_id = c;
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];
		const struct model_cycle_phase *p = &c->phases[ph];

		if (fs_id > 0 && c->has_count[fs_id]) {
			fs += c->counts[fs_id];
			fs_cycles++;
		}
		if (!p->present)
			continue;
		a->ncycles++;
		a->ms += p->ms;
		a->cycles_ms += c->duration_ms;
		calls += p->calls;
		if (!p->split.present)
			continue;
		a->has_blocked = true;
		a->off_ms += p->split.offcpu_ms;
		for (int k = 0; k < BLOCKED_NCLASSES; k++)
			a->blocked_ms[k] += p->split.blocked_ms[k];
	}
	a->blocked_from = a->has_blocked ? "scheduler" : NULL;
	a->has_stacks = off->n > 0;
	for (size_t i = 0; i < off->n; i++) {
		const char *st = off->entries[i].stack;
		double ms = off->entries[i].count / 1e3;

		if (stack_has(st, fsync_frames, NELEM(fsync_frames), true))
			a->fsync_ms += ms;
		if (stack_has(st, sqlite_frames, NELEM(sqlite_frames), false))
			a->sqlite_offcpu_ms += ms;
		if (!a->blocked_from || !strcmp(a->blocked_from, "offcpu_stacks")) {
			a->blocked_from = "offcpu_stacks"; /* no split (a `py:` phase): the stacks' time */
			a->off_ms += ms;
			a->blocked_ms[folded_blocked_class(st)] += ms;
		}
	}
	a->has_blocked = a->blocked_from != NULL;
	for (size_t i = 0; i < on->n; i++) {
		const char *st = on->entries[i].stack;
		uint64_t n = on->entries[i].count;

		a->samples += n;
		if (stack_has(st, sqlite_frames, NELEM(sqlite_frames), false))
			a->sqlite_samples += n;
		if (stack_has(st, scan_frames, NELEM(scan_frames), false))
			a->scan_samples += n;
		if (stack_has(st, string_frames, NELEM(string_frames), false))
			a->string_samples += n;
	}
	a->sqlite_calls_per_cycle = a->ncycles && probed_at_sqlite(m, ph) ? (double)calls / a->ncycles : NAN;
	a->fsyncs_per_cycle = fs_cycles ? fs / fs_cycles : NAN;
}

/* The phase's heaviest off-CPU stacks, as evidence. */
static void top_offcpu(struct model *m, const struct folded *f, struct model_evidence *ev)
{
	struct folded sorted = {};

	ev->has_top_stacks = true;
	for (size_t i = 0; i < f->n; i++)
		folded__add(&sorted, f->entries[i].stack, f->entries[i].count);
	folded__merge(&sorted);
	folded__sort_by_count(&sorted);
	for (size_t i = 0; i < sorted.n && i < MODEL_EV_TOP_STACKS; i++) {
		if (VEC_RESERVE(ev->top_stacks.v, ev->top_stacks.cap, ev->top_stacks.n, MODEL_EV_TOP_STACKS))
			break;
		ev->top_stacks.v[ev->top_stacks.n++] = (struct model_ev_share){
			.name = model__intern(m, sorted.entries[i].stack), .ms = sorted.entries[i].count / 1e3,
			.percent = sorted.total ? 100.0 * sorted.entries[i].count / sorted.total : 0.0,
		};
	}
	folded__free(&sorted);
}

/* A copy of ev for a recommendation (nothing on ENOMEM). */
static struct model_evidence rec_evidence(const struct model_evidence *ev)
{
	struct model_evidence e;

	if (!model_evidence__copy(&e, ev))
		e.present = true;
	return e;
}

static void add_finding(struct model *m, const char *type, const char *sev, double pct, struct model_evidence *evidence,
			const struct advice *adv, size_t nadv, const char *current)
{
	size_t n = m->nfindings;

	model__add_finding(m, type, sev, pct, evidence);
	for (size_t i = 0; i < nadv; i++) {
		struct model_evidence ev;

		if (m->nfindings > n)
			ev = rec_evidence(&m->findings[m->nfindings - 1].evidence);
		else
			model_evidence__init(&ev);

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

/* One recommendation under a finding, with the evidence that supports it
 * (taken). */
static void add_advice(struct model *m, const char *type, const char *prio, const struct advice *adv,
		       const char *current, const char *recommended, struct model_evidence *ev)
{
	struct model_recommendation r = {
		.title = (char *)adv->title, .priority = (char *)prio, .description = (char *)adv->description,
		.current_value = (char *)current,
		.recommended_value = (char *)(recommended ? recommended : adv->recommended),
		.bottleneck = (char *)type, .evidence = *ev,
	};

	r.evidence.present = true;
	model_evidence__init(ev);
	model__add_recommendation(m, &r);
}

/* The finding of a phase over a share of the cycle: what the phase is and
 * how much of the cycle it takes, with its hottest functions. */
static void phase_share_evidence(struct model *m, int ph, double threshold, struct model_evidence *ev)
{
	model_evidence__init(ev);
	ev->phase = model__intern(m, m->phase_names[ph]);
	ev->percent_of_cycle = m->phases[ph].percent_of_cycle;
	ev->threshold_percent = threshold;
	ev->total_ms = m->phases[ph].total_ms;
	top_leaves(m, &m->oncpu_by_phase[ph], ev);
}

/* database: a phase that does SQLite work (its samples in SQLite, its
 * probes at SQLite's functions, its blocked time under SQLite), whatever
 * its name, over the threshold. Advice only where this run shows why:
 * several commits per cycle (fsyncs counted, or many SQLite calls with
 * time in fsync) for batching; samples stepping the B-tree for indexes. */
static void database_rule(struct model *m, const struct rule_thresholds *t)
{
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		struct phase_acts a;
		double pct = m->phases[ph].percent_of_cycle, scan_pct;
		const char *sev;
		char cur[192];
		struct model_evidence ev;

		if (!m->phases[ph].present || isnan(pct) || pct <= t->database_pct)
			continue;
		phase_acts(m, ph, &a);
		if (!a.sqlite_samples && !(a.sqlite_offcpu_ms > 0) && isnan(a.sqlite_calls_per_cycle))
			continue;
		phase_share_evidence(m, ph, t->database_pct, &ev);
		if (a.samples)
			ev.sqlite_percent_of_samples = 100.0 * a.sqlite_samples / a.samples;
		if (a.sqlite_offcpu_ms > 0)
			ev.sqlite_blocked_ms = a.sqlite_offcpu_ms;
		ev.sqlite_calls_per_cycle = a.sqlite_calls_per_cycle;
		ev.fsyncs_per_cycle = a.fsyncs_per_cycle;
		if (a.ncycles && a.has_stacks)
			ev.fsync_ms_per_cycle = a.fsync_ms / a.ncycles;
		sev = severity(pct, t->database_pct);
		model__add_finding(m, "database", sev, pct, &ev);

		/* more than one commit per cycle: each commit syncs the journal */
		bool many_commits = (!isnan(a.fsyncs_per_cycle) && a.fsyncs_per_cycle >= 2) ||
				    (!isnan(a.sqlite_calls_per_cycle) && a.sqlite_calls_per_cycle >= 4 && a.ncycles &&
				     a.fsync_ms / a.ncycles > 0 && a.fsync_ms >= 0.2 * a.ms);
		if (many_commits) {
			struct model_evidence e;

			model_evidence__init(&e);
			e.fsyncs_per_cycle = a.fsyncs_per_cycle;
			if (!isnan(a.fsyncs_per_cycle)) {
				snprintf(cur, sizeof(cur), "%.1f fsyncs per cycle in %s", a.fsyncs_per_cycle, m->phase_names[ph]);
			} else {
				snprintf(cur, sizeof(cur), "%.1f SQLite calls per cycle, %.1f ms per cycle in fsync",
					 a.sqlite_calls_per_cycle, a.fsync_ms / a.ncycles);
			}
			e.sqlite_calls_per_cycle = a.sqlite_calls_per_cycle;
			e.fsync_ms_per_cycle = a.ncycles ? a.fsync_ms / a.ncycles : 0;
			e.phase_ms_per_cycle = a.ncycles ? a.ms / a.ncycles : 0;
			add_advice(m, "database", priority_of(sev),
				   &(struct advice){ "Batch database writes",
						     "Each commit syncs to disk; one transaction per batch syncs once.",
						     "one transaction (one commit) per cycle" },
				   cur, NULL, &e);
		}
		scan_pct = a.samples ? 100.0 * a.scan_samples / a.samples : 0;
		if (scan_pct >= 20) {
			struct model_evidence e;

			model_evidence__init(&e);
			e.scan_percent_of_samples = scan_pct;
			e.samples = (int64_t)a.samples;
			snprintf(cur, sizeof(cur), "%.0f%% of %s's samples step through table rows", scan_pct, m->phase_names[ph]);
			add_advice(m, "database", "medium",
				   &(struct advice){ "Add indexes to the queried columns", "Full scans grow with the table.",
						     "CREATE INDEX on the WHERE columns" },
				   cur, NULL, &e);
		}
	}
}

/* mode_overhead: the phase the user named `mode` over its share (the
 * seeds' rule); advice only from what the phase does. */
static void mode_rule(struct model *m, const struct rule_thresholds *t)
{
	int ph = find_phase(m, "mode", "mode");
	double pct;
	struct phase_acts a;
	char cur[160];
	struct model_evidence ev;
	const char *sev;

	if (!ph)
		return;
	pct = m->phases[ph].percent_of_cycle;
	if (isnan(pct) || pct <= t->mode_pct)
		return;
	phase_share_evidence(m, ph, t->mode_pct, &ev);
	sev = severity(pct, t->mode_pct);
	model__add_finding(m, "mode_overhead", sev, pct, &ev);
	phase_acts(m, ph, &a);
	/* on the CPU and the same cost every call: its result can be kept */
	double p50 = m->phases[ph].p50_ms, p95 = m->phases[ph].p95_ms;
	double on_pct = a.has_blocked && a.ms > 0 ? 100.0 * (a.ms - a.off_ms) / a.ms : NAN;

	if (isfinite(on_pct) && on_pct >= 80 && isfinite(p50) && p50 > 0 && isfinite(p95) && p95 <= 1.25 * p50) {
		struct model_evidence e;

		model_evidence__init(&e);
		e.oncpu_percent_of_phase = on_pct;
		e.p50_ms = p50;
		e.p95_ms = p95;
		snprintf(cur, sizeof(cur), "%s: %.1f ms per call (p95 %.1f), %.0f%% on the CPU", m->phase_names[ph], p50,
			 p95, on_pct);
		add_advice(m, "mode_overhead", priority_of(sev), &mode_cache_advice, cur, NULL, &e);
	}
	if (a.samples && 100.0 * a.string_samples / a.samples >= 20) {
		double sp = 100.0 * a.string_samples / a.samples;
		struct model_evidence e;

		model_evidence__init(&e);
		e.string_percent_of_samples = sp;
		e.samples = (int64_t)a.samples;
		snprintf(cur, sizeof(cur), "%.0f%% of %s's samples build strings", sp, m->phase_names[ph]);
		add_advice(m, "mode_overhead", "medium", &mode_string_advice, cur, NULL, &e);
	}
}

static void add_rec(struct model *m, const char *title, const char *prio, const char *desc, const char *cur,
		    const char *recd, struct model_evidence *ev)
{
	struct model_recommendation r = {
		.title = (char *)title, .priority = (char *)prio, .description = (char *)desc,
		.current_value = (char *)cur, .recommended_value = (char *)recd, .bottleneck = "llm_inference",
		.evidence = *ev,
	};

	r.evidence.present = true;
	model_evidence__init(ev);
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
	const struct model_llama_facts *lf = &m->llama_facts;
	double ms = 0, pct;
	const char *name = NULL;
	char cur[160], recd[96];
	struct model_evidence ev;

	pct = inference_share(m, &ms, &name);
	if (isnan(pct) || pct <= t->inference_pct)
		return;
	model_evidence__init(&ev);
	ev.phase = model__intern(m, name);
	ev.percent_of_cycle = pct;
	ev.threshold_percent = t->inference_pct;
	ev.total_ms = ms;
	{
		struct folded in = {};

		top_leaves(m, cycle_oncpu(m, &in), &ev);
		folded__free(&in);
	}
	model__add_finding(m, "llm_inference", severity(pct, t->inference_pct), pct, &ev);

	/* context: the tokens a cycle used against n_ctx */
	double n_ctx = lf->has_context && lf->context.n_ctx >= 0 ? (double)lf->context.n_ctx : NAN;
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
			struct model_evidence e;

			model_evidence__init(&e);
			e.n_ctx = n_ctx;
			e.max_tokens_per_cycle = (int64_t)used;
			snprintf(cur, sizeof(cur), "n_ctx %.0f; at most %" PRIu64 " tokens used per cycle", n_ctx, used);
			snprintf(recd, sizeof(recd), "n_ctx %" PRIu64, want);
			add_rec(m, "Reduce the context window", "medium",
				"The cycles use a fraction of the context; a smaller KV cache costs less memory and time.",
				cur, recd, &e);
		}
	}
	/* quantization: from the model file's type */
	double n_params = lf->has_model && lf->model.read ? (double)lf->model.n_params : NAN;
	double size = lf->has_model && lf->model.read ? (double)lf->model.size_bytes : NAN;

	if (lf->has_model && lf->model.file_type_id >= 0 && isfinite(n_params) && n_params > 0) {
		uint32_t ft = (uint32_t)lf->model.file_type_id;
		double bits = gguf__file_type_bits(ft), to_bits = gguf__file_type_bits(15 /* Q4_K_M */);

		if (bits >= 6) {
			struct model_evidence e;

			model_evidence__init(&e);
			e.file_type = model__intern(m, gguf__file_type_name(ft));
			e.bits_per_weight = bits;
			e.n_params = n_params;
			e.size_bytes = size;
			snprintf(cur, sizeof(cur), "%s, %.1f bits per weight, %.0f MB", gguf__file_type_name(ft), bits,
				 isfinite(size) ? size / 1e6 : n_params * bits / 8e6);
			snprintf(recd, sizeof(recd), "Q4_K_M (about %.0f MB)", n_params * to_bits / 8e6);
			add_rec(m, "Quantize the model", priority_of(severity(pct, t->inference_pct)),
				"Inference dominates and reads every weight per token; fewer bits per weight mean "
				"less memory traffic per token.", cur, recd, &e);
		}
	}
	/* GPU offload only where a GPU was seen */
	if (m->side.run.gpu.available) {
		struct model_evidence e;

		model_evidence__init(&e);
		e.gpu_available = true;
		e.inference_percent_of_cycle = pct;
		snprintf(cur, sizeof(cur), "inference takes %.0f%% of the cycle on the CPU", pct);
		add_rec(m, "Offload layers to the GPU", "medium", "A GPU was seen: GPU layers take the matmuls off the CPU.",
			cur, "raise n_gpu_layers", &e);
	}
}

static void memory_rules(struct model *m, const struct rule_thresholds *t)
{
	double peak = m->memory.peak_mb, total = m->run.system.mem_total_mb;
	double growth = m->memory.growth_mb_per_cycle;
	uint64_t ooms = model__oom_kills(m);
	char current[128];

	if ((!isnan(peak) && total > 0 && 100 * peak / total > t->memory_pct) || ooms) {
		struct model_evidence ev;
		double pct = total > 0 && !isnan(peak) ? 100 * peak / total : NAN;

		model_evidence__init(&ev);
		ev.has_memory = true;
		ev.peak_mb = peak;
		ev.mem_total_mb = total;
		ev.percent_of_ram = pct;
		ev.oom_kills = (int64_t)ooms;
		snprintf(current, sizeof(current), "peak %.0f MB of %.0f MB%s", peak, total, ooms ? ", OOM kills" : "");
		add_finding(m, "memory_pressure", ooms ? "critical" : severity(pct, t->memory_pct), NAN, &ev,
			    memory_advice, 2, current);
	}
	if (!isnan(growth) && m->agg.total_cycles >= 3 && growth > t->leak_mb_per_cycle) {
		struct model_evidence ev;

		model_evidence__init(&ev);
		ev.growth_mb_per_cycle = growth;
		ev.cycles = (double)m->agg.total_cycles;
		ev.threshold_mb_per_cycle = t->leak_mb_per_cycle;
		snprintf(current, sizeof(current), "RSS grows %.2f MB per cycle", growth);
		add_finding(m, "memory_leak", severity(growth, t->leak_mb_per_cycle), NAN, &ev, leak_advice, 1, current);
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
	if (!m->sched.has_totals || isnan(m->sched.runq_share_percent))
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
	const struct model_llama_facts *lf = &m->llama_facts;
	double p = lf->context.threads_used[MODEL_LLAMA_PROMPT] >= 0 ? (double)lf->context.threads_used[MODEL_LLAMA_PROMPT] : NAN;
	double g = lf->context.threads_used[MODEL_LLAMA_GENERATION] >= 0 ?
		   (double)lf->context.threads_used[MODEL_LLAMA_GENERATION] : NAN;
	double n;

	n = isfinite(p) && (!isfinite(g) || p > g) ? p : g;
	*src = "n_threads_used";
	if (isfinite(n) && n > 0)
		return (int)n;
	n = lf->context.n_threads >= 0 ? (double)lf->context.n_threads : NAN;
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
	int cpus = m->sched.cpus > 0 ? m->sched.cpus : m->run.system.cpus;
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
	struct model_evidence ev;

	model_evidence__init(&ev);
	ev.spin_percent_of_samples = pct;
	ev.cpus = cpus;
	ev.cpus_integer = true;
	if (threads > 0 && !strcmp(src, "n_threads_used"))
		ev.n_threads_used = threads;
	else if (threads > 0)
		ev.n_threads = threads;
	ev.runq_share_percent = share;
	ev.avg_runnable_threads = runnable;
	ev.scope = model__intern(m, scope);

	struct model_evidence rev = rec_evidence(&ev);

	model__add_finding(m, "cpu_oversubscribed", severity(pct, t->spin_pct), pct, &ev);
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
		.evidence = rev,
	};
	model__add_recommendation(m, &r);
}

static void sched_rules(struct model *m, const struct rule_thresholds *t)
{
	double share = NAN, runnable = NAN, runq_ms = NAN;
	const char *scope = NULL;
	char current[160];

	if (cycles_runq(m, &share, &runnable, &runq_ms, &scope) && share > t->runq_pct) {
		struct model_evidence ev;

		model_evidence__init(&ev);
		ev.runq_share_percent = share;
		ev.avg_runnable_threads = runnable;
		ev.cpus = m->sched.cpus;
		ev.runq_wait_ms = runq_ms;
		ev.scope = model__intern(m, scope);
		snprintf(current, sizeof(current), "%.0f%% of runnable time in the %s waiting for a CPU", share, scope);
		add_finding(m, "cpu_contention", severity(share, t->runq_pct), share, &ev, contention_advice, 1, current);
	}
	if (scope)
		spin_rule(m, t, share, runnable, scope);
	/* a phase mostly blocked, whatever its name: its split by the
	 * scheduler, or its off-CPU stacks where it has no split (`py:` phases) */
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		struct phase_acts a;
		double io, share;
		const char *type;

		if (!m->phases[ph].present)
			continue;
		phase_acts(m, ph, &a);
		if (!a.has_blocked || a.ms <= 0)
			continue;
		share = 100 * a.off_ms / a.ms;
		if (share > 100)
			share = 100;
		if (share <= t->offcpu_pct)
			continue;
		io = a.blocked_ms[BLOCKED_IO];
		type = io > a.off_ms / 2 ? "io_wait" : "off_cpu";
		struct model_evidence ev;

		model_evidence__init(&ev);
		ev.phase = model__intern(m, m->phase_names[ph]);
		ev.offcpu_percent_of_phase = share;
		ev.offcpu_ms = a.off_ms;
		ev.io_ms = io;
		ev.has_blocked_ms = true;
		memcpy(ev.blocked_ms, a.blocked_ms, sizeof(ev.blocked_ms));
		ev.blocked_from = a.blocked_from ? model__intern(m, a.blocked_from) : -1;
		if (a.cycles_ms > 0) {
			ev.offcpu_percent_of_cycle = 100 * a.off_ms / a.cycles_ms;
			ev.io_percent_of_cycle = 100 * io / a.cycles_ms;
		}
		if (a.has_stacks) {
			ev.fsync_ms = a.fsync_ms;
			top_offcpu(m, &m->offcpu_us_by_phase[ph], &ev);
		}
		ev.fsyncs_per_cycle = a.fsyncs_per_cycle;
		snprintf(current, sizeof(current), "phase %s blocked %.0f%% of its time (%.0f%% in I/O)",
			 m->phase_names[ph], share, 100 * io / a.ms);
		add_finding(m, type, severity(share, t->offcpu_pct), m->phases[ph].percent_of_cycle, &ev, offcpu_advice,
			    1, current);
		/* most of the I/O wait in fsync: syncing less often is the lever */
		if (!strcmp(type, "io_wait") && a.fsync_ms > io / 2 && a.ncycles) {
			struct model_evidence e;
			char cur[160];

			model_evidence__init(&e);
			e.fsync_ms_per_cycle = a.fsync_ms / a.ncycles;
			e.io_ms_per_cycle = io / a.ncycles;
			e.phase_ms_per_cycle = a.ms / a.ncycles;
			e.fsyncs_per_cycle = a.fsyncs_per_cycle;
			snprintf(cur, sizeof(cur), "%s waits %.1f ms per cycle in fsync/fdatasync", m->phase_names[ph],
				 a.fsync_ms / a.ncycles);
			add_advice(m, type, "medium",
				   &(struct advice){ "Sync to disk less often",
						     "Most of the phase's I/O wait is fsync/fdatasync: the data is "
						     "forced to disk every time.",
						     "sync every N cycles, or SQLite WAL with synchronous=NORMAL" },
				   cur, NULL, &e);
		}
	}
}

static void side_rules(struct model *m, const struct rule_thresholds *t)
{
	const struct side_thermal *thermal = &m->side.run.thermal;
	const struct side_gpu *gpu = &m->side.run.gpu;
	int inf = find_phase(m, "llm_inference", "inference");
	int sync = find_phase(m, "gpu_sync", "gpu_sync");
	double inf_pct = inf ? m->phases[inf].percent_of_cycle : NAN;
	char current[160];

	if (thermal->throttled) {
		struct model_evidence ev;

		model_evidence__init(&ev);
		ev.max_temp_c = thermal->max_temp_c;
		ev.has_episodes = true;
		if (VEC_DUP(ev.episodes, thermal->throttling))
			ev.has_episodes = false;
		snprintf(current, sizeof(current), "%zu throttling episode(s), up to %.0f C", thermal->throttling.n,
			 thermal->max_temp_c);
		add_finding(m, "thermal_throttling", "high", NAN, &ev, thermal_advice, 2, current);
	}
	if (gpu->available && !isnan(inf_pct) && inf_pct > 50) {
		double util = gpu->devices.n ? gpu->devices.v[0].util_pct.avg : NAN;

		if (!isnan(util) && util < t->gpu_util_pct) {
			struct model_evidence ev;

			model_evidence__init(&ev);
			ev.gpu_util_avg_pct = util;
			ev.inference_percent_of_cycle = inf_pct;
			snprintf(current, sizeof(current), "GPU %.0f%% busy while inference takes %.0f%% of the cycle", util, inf_pct);
			add_finding(m, "gpu_underutilized", severity(t->gpu_util_pct, util > 1 ? util : 1), inf_pct, &ev,
				    gpu_util_advice, 1, current);
		}
	}
	/* with the GPU timeline, its figures decide (gpu_rules) */
	if (sync && !gpu_view__timeline(m)) {
		double pct = m->phases[sync].percent_of_cycle;

		if (!isnan(pct) && pct > t->gpu_sync_pct) {
			struct model_evidence ev;

			model_evidence__init(&ev);
			ev.phase = model__intern(m, m->phase_names[sync]);
			ev.percent_of_cycle = pct;
			snprintf(current, sizeof(current), "host waits on the GPU %.0f%% of the cycle", pct);
			add_finding(m, "gpu_bound", severity(pct, t->gpu_sync_pct), pct, &ev, gpu_sync_advice, 1, current);
		}
	}
}

/* ---- the GPU timeline's verdicts (CUPTI activity) ---- */

static const struct advice gpu_kernels_advice = {
	"Make the GPU's work cheaper", "The GPU runs kernels most of the window: kernel time sets the cycle; "
	"the top kernels are where it goes.", "less kernel time (lower precision, smaller batch or model)",
};
static const struct advice launch_graph_advice = {
	"Launch the step's kernels at once", "Many small kernels per cycle with the GPU idle between them: "
	"launch overhead starves the GPU.", "CUDA graphs (torch.compile mode=\"reduce-overhead\"), or fewer, larger kernels",
};
static const struct advice launch_host_advice = {
	"Move host work off the launching thread", "The GPU sits idle while the thread that launches its work runs "
	"host code (the stack in the evidence).", "host work overlapped with the GPU, or batched",
};
static const struct advice transfer_advice = {
	"Copy less, in fewer and larger transfers", "Copies take more of the window than kernels: the GPU waits for data.",
	"pinned host memory, fewer and larger copies, tensors kept on the device",
};
static const struct advice sync_advice = {
	"Remove per-step synchronizations", "The launching thread waits in synchronize calls while the GPU is idle: "
	"each wait drains the queue.", "no .item()/.cpu()/torch.cuda.synchronize() per step; read results once per cycle",
};

/* Kernels per cycle at which CUDA graphs are worth naming. */
#define GPU_MANY_KERNELS 50

/* The evidence every GPU verdict starts with: where its figures come
 * from, the device, the window and its figures. */
static void gpu_evidence(struct model *m, const struct model_gpu_figures *f, uint32_t ph, double ncycles,
			 struct model_evidence *ev)
{
	model_evidence__init(ev);
	ev->from = model__intern(m, "GPU timeline (CUPTI activity)");
	ev->device = f->device;
	ev->window = model__intern(m, ph && m->phase_names[ph] ? m->phase_names[ph] : "cycles");
	ev->window_ms = f->window_ms;
	ev->busy_ms = f->busy_ms;
	ev->idle_ms = f->idle_ms;
	ev->kernels_per_cycle = ncycles > 0 ? f->kernels / ncycles : 0;
	if (f->top.n) {
		const struct model_gpu_kernel_total *k = &f->top.v[0];

		ev->has_top_kernel = true;
		ev->top_kernel = (struct model_ev_kernel){
			.name = model__name(m, k->name) ? k->name : model__intern(m, "?"),
			.count = (int64_t)k->count, .ms = k->ms,
		};
	}
}

/* The sync calls per cycle the CUDA probes counted (cycles[].cuda); NAN: none. */
static double syncs_per_cycle(const struct model *m)
{
	double n = 0;
	size_t k = 0;

	for (size_t i = 0; i < m->ncycles; i++) {
		if (m->cycles[i].cuda.present) {
			n += m->cycles[i].cuda.sync_calls;
			k++;
		}
	}
	return k ? n / k : NAN;
}

static void gpu_device_rules(struct model *m, const struct rule_thresholds *t, uint32_t dev)
{
	uint32_t ph;
	struct model_gpu_figures sum;
	const struct model_gpu_figures *f = gpu_view__window(m, dev, &ph, &sum);
	double ncycles = (double)gpu_view__cycles(m), w, pct, copy_ms, waits_idle;
	const char *top_stack;
	char cur[224];
	struct model_evidence ev;

	if (!f)
		return;
	w = f->window_ms;
	pct = gpu_view__pct(f->busy_ms, w);
	if (pct >= t->gpu_busy_pct) {
		gpu_evidence(m, f, ph, ncycles, &ev);
		ev.busy_percent = pct;
		ev.threshold_percent = t->gpu_busy_pct;
		snprintf(cur, sizeof(cur), "GPU %u busy %.0f%% of %s", dev, pct,
			 ph ? m->phase_names[ph] : "the cycles");
		add_finding(m, "gpu_bound", severity(pct, t->gpu_busy_pct), pct, &ev, &gpu_kernels_advice, 1, cur);
	}
	pct = gpu_view__pct(f->idle_host_ms, w);
	top_stack = f->idle_stacks.n ? model__name(m, f->idle_stacks.v[0].stack) : NULL;
	if (pct >= t->launch_idle_pct) {
		double kpc = ncycles > 0 ? f->kernels / ncycles : 0;

		gpu_evidence(m, f, ph, ncycles, &ev);
		ev.idle_host_ms = f->idle_host_ms;
		ev.idle_host_percent = pct;
		ev.threshold_percent = t->launch_idle_pct;
		if (top_stack) {
			ev.has_top_idle_stack = true;
			ev.top_idle_stack = (struct model_ev_share){ .name = f->idle_stacks.v[0].stack,
								     .ms = f->idle_stacks.v[0].ms, .percent = NAN };
		}

		struct model_evidence graph_ev = rec_evidence(&ev), host_ev = rec_evidence(&ev);

		model__add_finding(m, "launch_bound", severity(pct, t->launch_idle_pct), pct, &ev);
		if (kpc >= GPU_MANY_KERNELS) {
			snprintf(cur, sizeof(cur), "%.0f kernels per cycle; GPU %u idle %.0f%% of %s while the host ran",
				 kpc, dev, pct, ph ? m->phase_names[ph] : "the cycles");
			add_advice(m, "launch_bound", priority_of(severity(pct, t->launch_idle_pct)), &launch_graph_advice,
				   cur, NULL, &graph_ev);
		}
		model_evidence__free(&graph_ev);
		if (top_stack) {
			const char *leaf = strrchr(top_stack, ';');

			snprintf(cur, sizeof(cur), "GPU %u idle %.1f ms while the launching thread ran %s", dev,
				 f->idle_host_ms, leaf ? leaf + 1 : top_stack);
			add_advice(m, "launch_bound", kpc >= GPU_MANY_KERNELS ? "medium" :
				   priority_of(severity(pct, t->launch_idle_pct)), &launch_host_advice, cur, NULL,
				   &host_ev);
		}
		model_evidence__free(&host_ev);
	}
	copy_ms = gpu_view__copy_ms(f);
	pct = gpu_view__pct(copy_ms, w);
	if (pct >= t->transfer_pct && copy_ms > f->busy_ms) {
		gpu_evidence(m, f, ph, ncycles, &ev);
		ev.copy_ms = copy_ms;
		ev.copy_percent = pct;
		ev.threshold_percent = t->transfer_pct;
		ev.has_copies = true;
		for (unsigned int d = 0; d < IT_GPU_DIR_MAX; d++)
			ev.copies[d] = (struct model_ev_copy){ .count = f->copies[d].count, .bytes = f->copies[d].bytes,
							       .ms = f->copies[d].ms };
		snprintf(cur, sizeof(cur), "copies take %.0f%% of %s on GPU %u (%.1f ms, kernels %.1f ms)", pct,
			 ph ? m->phase_names[ph] : "the cycles", dev, copy_ms, f->busy_ms);
		add_finding(m, "transfer_bound", severity(pct, t->transfer_pct), pct, &ev, &transfer_advice, 1, cur);
	}
	pct = gpu_view__pct(f->sync_ms, w);
	waits_idle = f->idle_ms - f->idle_host_ms;
	if (pct >= t->gpu_sync_pct && waits_idle >= f->sync_ms / 2) {
		double spc = syncs_per_cycle(m);

		gpu_evidence(m, f, ph, ncycles, &ev);
		ev.sync_ms = f->sync_ms;
		ev.sync_percent = pct;
		ev.idle_host_ms = f->idle_host_ms;
		ev.threshold_percent = t->gpu_sync_pct;
		if (isfinite(spc)) {
			ev.syncs_per_cycle = spc;
			snprintf(cur, sizeof(cur), "%.1f syncs per cycle; waits %.0f%% of %s with GPU %u idle", spc, pct,
				 ph ? m->phase_names[ph] : "the cycles", dev);
		} else {
			snprintf(cur, sizeof(cur), "%.1f ms per cycle in synchronize calls (%.0f%% of %s), GPU %u idle",
				 ncycles > 0 ? f->sync_ms / ncycles : f->sync_ms, pct, ph ? m->phase_names[ph] : "the cycles",
				 dev);
		}
		add_finding(m, "sync_bound", severity(pct, t->gpu_sync_pct), pct, &ev, &sync_advice, 1, cur);
	}
}

/* gpu_bound, launch_bound, transfer_bound, sync_bound per device, from the
 * GPU timeline's figures over the inference phase (else the cycles). */
static void gpu_rules(struct model *m, const struct rule_thresholds *t)
{
	uint32_t devs[GPU_VIEW_MAX_DEVICES];
	size_t nd;

	if (!gpu_view__timeline(m))
		return;
	nd = gpu_view__devices(m, devs, GPU_VIEW_MAX_DEVICES);
	for (size_t i = 0; i < nd; i++)
		gpu_device_rules(m, t, devs[i]);
}

/* power_capped: the share of the cycles' time (the run's without cycles)
 * spent in power-cap episodes, with the episodes as evidence. */
static void power_rules(struct model *m, const struct rule_thresholds *t)
{
	const struct side_energy *se = &m->energy.side;
	double base_ms = m->agg.cycles_ms > 0 ? m->agg.cycles_ms : m->run.duration_s * 1e3, pct;
	char current[160];
	struct model_evidence ev;

	if (!isfinite(se->capped_ms) || se->capped_ms <= 0 || !(base_ms > 0))
		return;
	pct = 100.0 * se->capped_ms / base_ms;
	if (pct > 100)
		pct = 100;
	if (pct < t->power_capped_pct)
		return;
	model_evidence__init(&ev);
	ev.capped_ms = se->capped_ms;
	ev.capped_percent = pct;
	ev.threshold_percent = t->power_capped_pct;
	ev.has_episodes = ev.episodes_capped = true;
	if (VEC_DUP(ev.episodes, se->capped))
		ev.has_episodes = false;
	snprintf(current, sizeof(current), "power-capped %.0f%% of the time (%.0f ms)", pct, se->capped_ms);
	add_finding(m, "power_capped", severity(pct, t->power_capped_pct), pct, &ev, power_cap_advice, 2, current);
}

/* The power alert (the seeds' power_consumption_mw): the peak total power
 * over one sampling period above the threshold. Replaces an earlier one. */
static void power_alert(struct model *m, const struct rule_thresholds *t)
{
	struct model_alert *a;
	size_t w = 0;

	for (size_t i = 0; i < m->alerts.n; i++)
		if (strcmp(m->alerts.v[i].type, "power"))
			m->alerts.v[w++] = m->alerts.v[i];
	m->alerts.n = w;
	if (!isfinite(m->energy.side.peak_w) || m->energy.side.peak_w * 1e3 <= t->power_mw)
		return;
	if (VEC_RESERVE(m->alerts.v, m->alerts.cap, m->alerts.n, 4))
		return;
	a = &m->alerts.v[m->alerts.n++];
	*a = (struct model_alert){ .type = "power", .severity = "warning", .value_mw = m->energy.side.peak_w * 1e3,
				   .threshold_mw = t->power_mw };
	snprintf(a->description, sizeof(a->description),
		 "peak power %.0f mW above the %.0f mW threshold (--threshold power_mw=)", a->value_mw, t->power_mw);
}

int rules__evaluate(struct model *m, const struct rule_thresholds *t)
{
	int err = model__require(m, MODEL_DERIVED, "rules__evaluate");

	if (err)
		return err;
	model__clear_findings(m);
	inference_rule(m, t);
	database_rule(m, t);
	mode_rule(m, t);
	memory_rules(m, t);
	sched_rules(m, t);
	side_rules(m, t);
	gpu_rules(m, t);
	power_rules(m, t);
	power_alert(m, t);
	m->thresholds = *t;
	m->have_thresholds = true;
	return m->stage == MODEL_DERIVED ? model__advance(m, MODEL_ANALYSED, "rules__evaluate") : 0;
}
