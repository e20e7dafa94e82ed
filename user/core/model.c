// SPDX-License-Identifier: BSD-2-Clause
/* The recording model's lifecycle, stage checks and fill functions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "model.h"
#include "vec.h"

const char *const model_energy_keys[MODEL_EN_NDOMAINS] = { "cpu_j", "dram_j", "gpu_j", "board_j" };

static const char *const stage_names[] = {
	"empty", "spans", "collected", "derived", "analysed",
};

void model__init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->memory.growth_mb_per_cycle = NAN;
	side_summary__init(&m->side.run);
	m->side.now_temp_c = m->side.now_cpu_mhz = m->side.now_gpu_util_pct = NAN;
	m->side.now_gpu_temp_c = m->side.now_gpu_mhz = m->side.now_gpu_power_w = NAN;
	m->memory.peak_mb = NAN;
	side_energy__init(&m->energy.side);
	model__llama_facts_init(&m->llama_facts);
	m->run.asked.cycle = m->run.asked.cycle_marker = -1;
	m->run.system.mem_total_mb = NAN;
	power_mode__init(&m->run.system.power);
	m->self.memory_budget.reached_at_s = m->self.probe_cost_ns_per_hit = NAN;
	/* the contract's two lost counters exist from the start */
	model__add_lost(m, "samples", 0);
	model__add_lost(m, "events", 0);
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

static void free_findings(struct model *m)
{
	for (size_t i = 0; i < m->nfindings; i++) {
		free(m->findings[i].type);
		free(m->findings[i].severity);
		model_evidence__free(&m->findings[i].evidence);
	}
	for (size_t i = 0; i < m->nrecs; i++) {
		struct model_recommendation *r = &m->recs[i];

		free(r->title);
		free(r->priority);
		free(r->description);
		free(r->current_value);
		free(r->recommended_value);
		free(r->bottleneck);
		model_evidence__free(&r->evidence);
	}
	m->nfindings = m->nrecs = 0;
}

void model__clear_findings(struct model *m)
{
	free_findings(m);
}

void model__free(struct model *m)
{
	if (!m)
		return;
	free_strv(m->run.command);
	free(m->run.pids);
	free(m->run.started_at);
	free(m->run.stop_reason);
	free(m->run.tool_version);
	free(m->run.schema_version);
	free(m->run.output_dir);
	json_decref(m->run.config);
	model__clear_asked(&m->run.asked);
	power_mode__free(&m->run.system.power);
	free(m->procs);
	free(m->threads);
	for (int i = 0; i < IT_MAX_PHASES; i++) {
		free(m->phase_names[i]);
		free(m->count_names[i]);
		free(m->call_ms[i]);
		folded__free(&m->oncpu_by_phase[i]);
		folded__free(&m->offcpu_us_by_phase[i]);
	}
	for (size_t i = 0; i < m->ncycles; i++)
		model__cycle_release(&m->cycles[i]);
	free(m->cycles);
	free(m->cycle_index);
	free(m->calls);
	folded__free(&m->oncpu);
	folded__free(&m->oncpu_python);
	folded__free(&m->offcpu_us);
	folded__free(&m->wakeup_us);
	free(m->trace_samples);
	free(m->offcpu_intervals);
	free(m->lstacks);
	free(m->frames);
	free(m->mappings);
	side_summary__free(&m->side.run);
	side_series__free(&m->side.series);
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->name_index);
	free(m->network.connections.v);
	free(m->network.retransmit_events.v);
	free(m->crashes.v);
	free(m->cuda.libraries.v);
	for (size_t i = 0; i < m->nlost; i++)
		free(m->lost[i].name);
	free(m->lost);
	free(m->self.bpf.programs.v);
	free(m->probe_cost.preset_probes.v);
	free(m->memory.per_process.v);
	free(m->sched.per_process.v);
	free(m->offcpu.top_stacks.v);
	free(m->offcpu.waiting.top_stacks.v);
	free(m->samples.per_process.v);
	free(m->samples.stack_quality.by_leaf_object.v);
	free(m->memory.timeline.v);
	model__clear_probes(m);
	free(m->probes.v);
	free_findings(m);
	free(m->findings);
	free(m->recs);
	free(m->alerts.v);
	model__clear_tail(m);
	side_energy__free(&m->energy.side);
	model_gpu__activity_free(&m->gpu_activity);
	model_requests__free(&m->requests);
	memset(m, 0, sizeof(*m));
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static json_t *copy_json(json_t *j)
{
	return j ? json_deep_copy(j) : NULL;
}

static int copy_folded(struct folded *dst, const struct folded *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		if (folded__add(dst, src->entries[i].stack, src->entries[i].count))
			return -ENOMEM;
	dst->total = src->total;
	return 0;
}

void model__clear_tail(struct model *m)
{
	for (size_t i = 0; i < m->tail.n; i++) {
		for (size_t k = 0; k < m->tail.v[i].causes.n; k++)
			free(m->tail.v[i].causes.v[k].stacks.v);
		free(m->tail.v[i].causes.v);
	}
	free(m->tail.v);
	m->tail.v = NULL;
	m->tail.n = m->tail.cap = 0;
	m->have_tail = false;
}

/* Replaces *v (the source's) by a copy of its n elements; NULL when n is 0. */
static int copy_tail(struct model *dst, const struct model *src)
{
	dst->have_tail = src->have_tail;
	if (!src->tail.n)
		return 0;
	if (!(dst->tail.v = vec__dup(src->tail.v, src->tail.n, sizeof(*src->tail.v))))
		return -ENOMEM;
	dst->tail.n = dst->tail.cap = src->tail.n;
	for (size_t i = 0; i < dst->tail.n; i++) {
		struct model_tail_cycle *t = &dst->tail.v[i];

		t->causes.v = vec__dup(t->causes.v, t->causes.n, sizeof(*t->causes.v));
		if (t->causes.n && !t->causes.v) {
			t->causes.n = t->causes.cap = 0;
			dst->tail.n = i + 1; /* the later ones still share the source's */
			return -ENOMEM;
		}
		t->causes.cap = t->causes.n;
		for (size_t k = 0; k < t->causes.n; k++) {
			struct model_tail_cause *c = &t->causes.v[k];

			c->stacks.v = vec__dup(c->stacks.v, c->stacks.n, sizeof(*c->stacks.v));
			c->stacks.cap = c->stacks.n;
			if (c->stacks.n && !c->stacks.v) {
				c->stacks.n = c->stacks.cap = 0;
				t->causes.n = k + 1;
				dst->tail.n = i + 1;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

static int copy_probes(struct model *dst, const struct model *src)
{
	const struct model_probe_cost *pc = &src->probe_cost;

	if (pc->preset_probes.n) {
		dst->probe_cost.preset_probes.v = vec__dup(pc->preset_probes.v, pc->preset_probes.n,
							    sizeof(*pc->preset_probes.v));
		if (!dst->probe_cost.preset_probes.v)
			return -ENOMEM;
		dst->probe_cost.preset_probes.n = dst->probe_cost.preset_probes.cap = pc->preset_probes.n;
	}
	if (!src->probes.n)
		return 0;
	if (!(dst->probes.v = vec__dup(src->probes.v, src->probes.n, sizeof(*src->probes.v))))
		return -ENOMEM;
	dst->probes.n = dst->probes.cap = src->probes.n;
	for (size_t i = 0; i < dst->probes.n; i++) {
		struct model_probe *p = &dst->probes.v[i];

		p->placed_in.v = vec__dup(p->placed_in.v, p->placed_in.n, sizeof(*p->placed_in.v));
		p->callers.v = vec__dup(p->callers.v, p->callers.n, sizeof(*p->callers.v));
		p->placed_in.cap = p->placed_in.n;
		p->callers.cap = p->callers.n;
		if ((p->placed_in.n && !p->placed_in.v) || (p->callers.n && !p->callers.v)) {
			if (!p->placed_in.v)
				p->placed_in.n = p->placed_in.cap = 0;
			if (!p->callers.v)
				p->callers.n = p->callers.cap = 0;
			dst->probes.n = i + 1; /* the later ones still share the source's */
			return -ENOMEM;
		}
	}
	return 0;
}

void model__clear_asked(struct model_asked *a)
{
	free(a->presets.v);
	free(a->phases.v);
	free(a->counts.v);
	*a = (struct model_asked){ .cycle = -1, .cycle_marker = -1 };
}

const char *model__name(const struct model *m, int32_t i)
{
	return i >= 0 && (size_t)i < m->nnames ? m->names[i] : NULL;
}

void model__llama_facts_init(struct model_llama_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->model.file_type_id = f->model.n_layer = f->model.n_embd = f->model.n_ctx_train = -1;
	f->context.n_ctx = f->context.n_batch = f->context.n_ubatch = f->context.n_seq_max = -1;
	f->context.n_threads = f->context.n_threads_batch = -1;
	for (int r = 0; r < MODEL_LLAMA_ROWS; r++)
		f->context.threads_used[r] = -1;
}

double model__rss_now_mb(const struct model *m)
{
	double rss = NAN;

	for (size_t i = 0; i < m->memory.per_process.n; i++)
		if (!isnan(m->memory.per_process.v[i].last_mb))
			rss = (isnan(rss) ? 0 : rss) + m->memory.per_process.v[i].last_mb;
	return rss;
}

void model__clear_probes(struct model *m)
{
	for (size_t i = 0; i < m->probes.n; i++) {
		free(m->probes.v[i].placed_in.v);
		free(m->probes.v[i].callers.v);
	}
	m->probes.n = 0;
	m->have_probes = false;
}

struct model_probe *model__add_probe(struct model *m)
{
	struct model_probe *p;

	if (VEC_RESERVE(m->probes.v, m->probes.cap, m->probes.n, 16))
		return NULL;
	p = &m->probes.v[m->probes.n++];
	*p = (struct model_probe){ .spec = -1, .phase = -1, .count = -1, .not_placed = -1, .warning = -1,
				   .native_because = -1 };
	p->python.resolution_ms_mean = p->python.resolution_ms_max = NAN;
	return p;
}

#define COPY_ARRAY(dst, src, field, n)                                                   \
	do {                                                                             \
		(dst)->field = NULL;                                                     \
		if ((src)->n) {                                                          \
			(dst)->field = malloc((src)->n * sizeof(*(src)->field));         \
			if (!(dst)->field)                                               \
				goto nomem;                                              \
			memcpy((dst)->field, (src)->field, (src)->n * sizeof(*(src)->field)); \
		}                                                                        \
	} while (0)

/* A VEC_OF member's copy (plain elements) into a cleared one. 0 or -ENOMEM. */
#define COPY_VEC(d, s) copy_vec((void **)&(d).v, &(d).n, &(d).cap, (s).v, (s).n, sizeof(*(s).v))
static int copy_vec(void **dv, size_t *dn, size_t *dcap, const void *sv, size_t sn, size_t elem)
{
	if (!sn)
		return 0;
	if (!(*dv = vec__dup(sv, sn, elem)))
		return -ENOMEM;
	*dn = *dcap = sn;
	return 0;
}

int model__copy(struct model *dst, const struct model *src)
{
	*dst = *src;
	/* every owned pointer is replaced below; clear them first so a failure
	 * part-way frees only what this copy owns */
	dst->run = (struct model_run){ .start_wall_s = src->run.start_wall_s, .start_ns = src->run.start_ns,
				       .end_ns = src->run.end_ns, .duration_s = src->run.duration_s };
	dst->procs = NULL;
	dst->threads = NULL;
	dst->cycles = NULL;
	dst->cycle_index = NULL;
	dst->ncycle_index = 0;
	dst->cycle_index_of = NULL;
	dst->calls = NULL;
	dst->trace_samples = NULL;
	dst->offcpu_intervals = NULL;
	dst->lstacks = NULL;
	dst->frames = NULL;
	dst->mappings = NULL;
	dst->lost = NULL;
	dst->findings = NULL;
	dst->recs = NULL;
	dst->nfindings = dst->nrecs = dst->nlost = 0;
	dst->capfindings = dst->caprecs = dst->caplost = 0;
	dst->ncycles = 0;
	memset(dst->phase_names, 0, sizeof(dst->phase_names));
	memset(dst->count_names, 0, sizeof(dst->count_names));
	memset(dst->call_ms, 0, sizeof(dst->call_ms));
	memset(&dst->oncpu, 0, sizeof(dst->oncpu));
	memset(&dst->oncpu_python, 0, sizeof(dst->oncpu_python));
	memset(&dst->offcpu_us, 0, sizeof(dst->offcpu_us));
	memset(&dst->wakeup_us, 0, sizeof(dst->wakeup_us));
	memset(dst->oncpu_by_phase, 0, sizeof(dst->oncpu_by_phase));
	memset(dst->offcpu_us_by_phase, 0, sizeof(dst->offcpu_us_by_phase));
	memset(&dst->network.connections, 0, sizeof(dst->network.connections));
	memset(&dst->network.retransmit_events, 0, sizeof(dst->network.retransmit_events));
	memset(&dst->crashes, 0, sizeof(dst->crashes));
	dst->tail.v = NULL;
	dst->tail.n = dst->tail.cap = 0;
	memset(&dst->probe_cost.preset_probes, 0, sizeof(dst->probe_cost.preset_probes));
	memset(&dst->probes, 0, sizeof(dst->probes));
	memset(&dst->memory.per_process, 0, sizeof(dst->memory.per_process));
	memset(&dst->samples.per_process, 0, sizeof(dst->samples.per_process));
	memset(&dst->samples.stack_quality.by_leaf_object, 0, sizeof(dst->samples.stack_quality.by_leaf_object));
	memset(&dst->memory.timeline, 0, sizeof(dst->memory.timeline));
	memset(&dst->sched.per_process, 0, sizeof(dst->sched.per_process));
	memset(&dst->offcpu.top_stacks, 0, sizeof(dst->offcpu.top_stacks));
	memset(&dst->offcpu.waiting.top_stacks, 0, sizeof(dst->offcpu.waiting.top_stacks));
	dst->self.bpf.programs.v = NULL;
	dst->self.bpf.programs.n = dst->self.bpf.programs.cap = 0;
	memset(&dst->alerts, 0, sizeof(dst->alerts));
	memset(&dst->cuda.libraries, 0, sizeof(dst->cuda.libraries));
	memset(&dst->side.run, 0, sizeof(dst->side.run));
	memset(&dst->side.series, 0, sizeof(dst->side.series));
	memset(&dst->energy.side, 0, sizeof(dst->energy.side));
	dst->names = NULL;
	dst->name_index = NULL;
	dst->nnames = dst->capnames = dst->name_cap = 0;
	memset(&dst->gpu_activity, 0, sizeof(dst->gpu_activity));
	memset(&dst->requests, 0, sizeof(dst->requests));

	if (src->run.command) {
		size_t n = 0;

		while (src->run.command[n])
			n++;
		dst->run.command = calloc(n + 1, sizeof(char *));
		if (!dst->run.command)
			goto nomem;
		for (size_t i = 0; i < n; i++)
			if (!(dst->run.command[i] = strdup(src->run.command[i])))
				goto nomem;
	}
	dst->run.npids = src->run.npids;
	COPY_ARRAY(&dst->run, &src->run, pids, npids);
	dst->run.started_at = dup_or_null(src->run.started_at);
	dst->run.stop_reason = dup_or_null(src->run.stop_reason);
	dst->run.tool_version = dup_or_null(src->run.tool_version);
	dst->run.schema_version = dup_or_null(src->run.schema_version);
	dst->run.output_dir = dup_or_null(src->run.output_dir);
	dst->run.config = copy_json(src->run.config);
	dst->run.asked = (struct model_asked){ .frequency = src->run.asked.frequency, .cycle = src->run.asked.cycle,
					       .cycle_marker = src->run.asked.cycle_marker,
					       .kernel_addresses = src->run.asked.kernel_addresses };
	if ((src->run.asked.presets.n &&
	     !(dst->run.asked.presets.v = vec__dup(src->run.asked.presets.v, src->run.asked.presets.n,
						    sizeof(*src->run.asked.presets.v)))) ||
	    (src->run.asked.phases.n &&
	     !(dst->run.asked.phases.v = vec__dup(src->run.asked.phases.v, src->run.asked.phases.n,
						   sizeof(*src->run.asked.phases.v)))) ||
	    (src->run.asked.counts.n &&
	     !(dst->run.asked.counts.v = vec__dup(src->run.asked.counts.v, src->run.asked.counts.n,
						   sizeof(*src->run.asked.counts.v)))))
		goto nomem;
	dst->run.asked.presets.n = dst->run.asked.presets.cap = dst->run.asked.presets.v ? src->run.asked.presets.n : 0;
	dst->run.asked.phases.n = dst->run.asked.phases.cap = dst->run.asked.phases.v ? src->run.asked.phases.n : 0;
	dst->run.asked.counts.n = dst->run.asked.counts.cap = dst->run.asked.counts.v ? src->run.asked.counts.n : 0;
	dst->run.system = src->run.system;
	if (power_mode__copy(&dst->run.system.power, &src->run.system.power))
		goto nomem;
	COPY_ARRAY(dst, src, procs, nprocs);
	dst->capprocs = src->nprocs;
	COPY_ARRAY(dst, src, threads, nthreads);
	dst->capthreads = src->nthreads;
	for (int i = 0; i < IT_MAX_PHASES; i++) {
		dst->phase_names[i] = dup_or_null(src->phase_names[i]);
		dst->count_names[i] = dup_or_null(src->count_names[i]);
		if (src->ncall_ms[i]) {
			dst->call_ms[i] = malloc(src->ncall_ms[i] * sizeof(double));
			if (!dst->call_ms[i])
				goto nomem;
			memcpy(dst->call_ms[i], src->call_ms[i], src->ncall_ms[i] * sizeof(double));
		}
		dst->capcall_ms[i] = src->ncall_ms[i];
		if (copy_folded(&dst->oncpu_by_phase[i], &src->oncpu_by_phase[i]) ||
		    copy_folded(&dst->offcpu_us_by_phase[i], &src->offcpu_us_by_phase[i]))
			goto nomem;
	}
	if (src->ncycles) {
		dst->cycles = malloc(src->ncycles * sizeof(*dst->cycles));
		if (!dst->cycles)
			goto nomem;
		memcpy(dst->cycles, src->cycles, src->ncycles * sizeof(*dst->cycles));
		dst->ncycles = dst->capcycles = src->ncycles;
		for (size_t i = 0; i < src->ncycles; i++)
			memset(&dst->cycles[i].gpu, 0, sizeof(dst->cycles[i].gpu));
		for (size_t i = 0; i < src->ncycles; i++) {
			if (model_gpu__cycle_copy(&dst->cycles[i].gpu, &src->cycles[i].gpu)) {
				dst->cycles[i].side = (struct side_window){ 0 };
				dst->ncycles = i + 1;
				goto nomem;
			}
			if (side_window__copy(&dst->cycles[i].side, &src->cycles[i].side)) {
				dst->ncycles = i + 1; /* the later ones still share the source's */
				goto nomem;
			}
		}
	}
	if (copy_folded(&dst->oncpu, &src->oncpu) || copy_folded(&dst->oncpu_python, &src->oncpu_python) ||
	    copy_folded(&dst->offcpu_us, &src->offcpu_us) ||
	    copy_folded(&dst->wakeup_us, &src->wakeup_us))
		goto nomem;
	dst->ncalls = src->ncalls;
	COPY_ARRAY(dst, src, calls, ncalls);
	dst->capcalls = src->ncalls;
	dst->ntrace_samples = src->ntrace_samples;
	COPY_ARRAY(dst, src, trace_samples, ntrace_samples);
	dst->captrace_samples = src->ntrace_samples;
	dst->noffcpu_intervals = src->noffcpu_intervals;
	COPY_ARRAY(dst, src, offcpu_intervals, noffcpu_intervals);
	dst->capoffcpu_intervals = src->noffcpu_intervals;
	COPY_ARRAY(dst, src, lstacks, nlstacks);
	dst->caplstacks = src->nlstacks;
	COPY_ARRAY(dst, src, frames, nframes);
	dst->capframes = src->nframes;
	COPY_ARRAY(dst, src, mappings, nmappings);
	dst->capmappings = src->nmappings;
	if (side_summary__copy(&dst->side.run, &src->side.run) ||
	    side_series__copy(&dst->side.series, &src->side.series))
		goto nomem;
	dst->names = NULL;
	dst->name_index = NULL;
	dst->nnames = dst->capnames = dst->name_cap = 0;
	for (size_t i = 0; i < src->nnames; i++)
		if (model__intern(dst, src->names[i]) < 0)
			goto nomem;
	for (size_t i = 0; i < src->nlost; i++)
		if (model__add_lost(dst, src->lost[i].name, src->lost[i].value))
			goto nomem;
	if (copy_probes(dst, src))
		goto nomem;
	if (src->memory.per_process.n) {
		if (!(dst->memory.per_process.v = vec__dup(src->memory.per_process.v, src->memory.per_process.n,
							    sizeof(*src->memory.per_process.v))))
			goto nomem;
		dst->memory.per_process.n = dst->memory.per_process.cap = src->memory.per_process.n;
	}
	if (src->samples.per_process.n) {
		if (!(dst->samples.per_process.v = vec__dup(src->samples.per_process.v, src->samples.per_process.n,
							     sizeof(*src->samples.per_process.v))))
			goto nomem;
		dst->samples.per_process.n = dst->samples.per_process.cap = src->samples.per_process.n;
	}
	if (src->samples.stack_quality.by_leaf_object.n) {
		const size_t n = src->samples.stack_quality.by_leaf_object.n;

		if (!(dst->samples.stack_quality.by_leaf_object.v =
			      vec__dup(src->samples.stack_quality.by_leaf_object.v, n,
					sizeof(*src->samples.stack_quality.by_leaf_object.v))))
			goto nomem;
		dst->samples.stack_quality.by_leaf_object.n = dst->samples.stack_quality.by_leaf_object.cap = n;
	}
	if (COPY_VEC(dst->sched.per_process, src->sched.per_process) ||
	    COPY_VEC(dst->offcpu.top_stacks, src->offcpu.top_stacks) ||
	    COPY_VEC(dst->offcpu.waiting.top_stacks, src->offcpu.waiting.top_stacks) ||
	    COPY_VEC(dst->network.connections, src->network.connections) ||
	    COPY_VEC(dst->network.retransmit_events, src->network.retransmit_events) ||
	    COPY_VEC(dst->crashes, src->crashes) || COPY_VEC(dst->cuda.libraries, src->cuda.libraries))
		goto nomem;
	if (src->memory.timeline.n) {
		if (!(dst->memory.timeline.v = vec__dup(src->memory.timeline.v, src->memory.timeline.n,
							 sizeof(*src->memory.timeline.v))))
			goto nomem;
		dst->memory.timeline.n = dst->memory.timeline.cap = src->memory.timeline.n;
	}
	if (src->self.bpf.programs.n) {
		dst->self.bpf.programs.v = vec__dup(src->self.bpf.programs.v, src->self.bpf.programs.n,
						     sizeof(*src->self.bpf.programs.v));
		if (!dst->self.bpf.programs.v)
			goto nomem;
		dst->self.bpf.programs.n = dst->self.bpf.programs.cap = src->self.bpf.programs.n;
	}
	for (size_t i = 0; i < src->nfindings; i++) {
		const struct model_finding *f = &src->findings[i];
		struct model_evidence ev;

		if (model_evidence__copy(&ev, &f->evidence) ||
		    model__add_finding(dst, f->type, f->severity, f->percentage_of_cycle, &ev))
			goto nomem;
	}
	for (size_t i = 0; i < src->nrecs; i++) {
		struct model_recommendation r = src->recs[i];

		if (model_evidence__copy(&r.evidence, &src->recs[i].evidence) || model__add_recommendation(dst, &r))
			goto nomem;
	}
	if (src->alerts.n) {
		if (!(dst->alerts.v = vec__dup(src->alerts.v, src->alerts.n, sizeof(*src->alerts.v))))
			goto nomem;
		dst->alerts.n = dst->alerts.cap = src->alerts.n;
	}
	if (copy_tail(dst, src))
		goto nomem;
	if (side_energy__copy(&dst->energy.side, &src->energy.side))
		goto nomem;
	if (model_gpu__activity_copy(&dst->gpu_activity, &src->gpu_activity))
		goto nomem;
	if (model_requests__copy(&dst->requests, &src->requests))
		goto nomem;
	return 0;
nomem:
	model__free(dst);
	return -ENOMEM;
}

int model__require(const struct model *m, enum model_stage need, const char *who)
{
	if (m->stage >= need)
		return 0;
	fprintf(stderr, "infertrace: internal error: %s needs the model at stage %s; it is at %s\n", who,
		stage_names[need], stage_names[m->stage]);
	return -EINVAL;
}

int model__advance(struct model *m, enum model_stage to, const char *who)
{
	if (m->stage + 1 != to) {
		fprintf(stderr, "infertrace: internal error: %s moves the model from stage %s to %s\n", who,
			stage_names[m->stage], stage_names[to]);
		return -EINVAL;
	}
	m->stage = to;
	return 0;
}

static int set_name(char **slot, int id, const char *name)
{
	if (id <= 0 || id >= IT_MAX_PHASES)
		return -EINVAL;
	free(slot[id]);
	slot[id] = name ? strdup(name) : NULL;
	return name && !slot[id] ? -ENOMEM : 0;
}

int model__set_phase_name(struct model *m, int id, const char *name)
{
	return set_name(m->phase_names, id, name);
}

int model__set_count_name(struct model *m, int id, const char *name)
{
	return set_name(m->count_names, id, name);
}

int model__phase_id(const struct model *m, const char *name)
{
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (m->phase_names[i] && !strcmp(m->phase_names[i], name))
			return i;
	return -1;
}

int model__count_id(const struct model *m, const char *name)
{
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (m->count_names[i] && !strcmp(m->count_names[i], name))
			return i;
	return -1;
}

struct model_process *model__add_process(struct model *m, pid_t pid)
{
	struct model_process *p;

	if (VEC_RESERVE(m->procs, m->capprocs, m->nprocs, 16))
		return NULL;
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

const struct model_process *model__find_process(const struct model *m, pid_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct model_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Every sample's record names its thread: a binary search, and an insert
 * only for a thread not seen before. */
int model__name_thread(struct model *m, pid_t pid, pid_t tid, const char *comm)
{
	struct model_thread want = { .pid = pid, .tid = tid };
	size_t lo = 0, hi = m->nthreads;

	memcpy(want.comm, comm, IT_COMM_LEN);
	want.comm[IT_COMM_LEN - 1] = 0;
	comm__sanitize(want.comm);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = thread_cmp(&m->threads[mid], &want);

		if (!c) {
			memcpy(m->threads[mid].comm, want.comm, IT_COMM_LEN);
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (VEC_RESERVE(m->threads, m->capthreads, m->nthreads, 16))
		return -ENOMEM;
	memmove(&m->threads[lo + 1], &m->threads[lo], (m->nthreads - lo) * sizeof(*m->threads));
	m->threads[lo] = want;
	m->nthreads++;
	return 0;
}

const char *model__thread_name(const struct model *m, pid_t pid, pid_t tid)
{
	struct model_thread want = { .pid = pid, .tid = tid };
	const struct model_thread *t = m->nthreads ?
		bsearch(&want, m->threads, m->nthreads, sizeof(*m->threads), thread_cmp) : NULL;

	return t && t->comm[0] ? t->comm : NULL;
}

static void split_init(struct model_split *s)
{
	memset(s, 0, sizeof(*s));
}

struct model_cycle *model__add_cycle(struct model *m, pid_t pid, uint32_t bpf_cycle, uint64_t start_ns,
				     uint64_t end_ns)
{
	struct model_cycle *c;

	if (VEC_RESERVE(m->cycles, m->capcycles, m->ncycles, 64))
		return NULL;
	c = &m->cycles[m->ncycles++];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->bpf_cycle = bpf_cycle;
	c->start_ns = start_ns;
	c->end_ns = end_ns;
	c->rss_peak_mb = c->rss_end_mb = NAN;
	c->tokens_per_second = c->tokens_per_second_wall = NAN;
	split_init(&c->split);
	side_window__init(&c->side);
	side_cycle_power__init(&c->kernel_power);
	return c;
}

void model__cycle_release(struct model_cycle *c)
{
	side_window__free(&c->side);
	model_gpu__cycle_free(&c->gpu);
}

/* ---- GPU activity (model_gpu.h) ---- */



void model_gpu__figures_free(struct model_gpu_figures *f)
{
	free(f->top.v);
	free(f->idle_stacks.v);
	memset(&f->top, 0, sizeof(f->top));
	memset(&f->idle_stacks, 0, sizeof(f->idle_stacks));
}

int model_gpu__figures_copy(struct model_gpu_figures *dst, const struct model_gpu_figures *src)
{
	*dst = *src;
	memset(&dst->top, 0, sizeof(dst->top));
	memset(&dst->idle_stacks, 0, sizeof(dst->idle_stacks));
	if (VEC_DUP(dst->top, src->top) || VEC_DUP(dst->idle_stacks, src->idle_stacks)) {
		model_gpu__figures_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static void gpu_figures_vec_free(struct model_gpu_figures *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		model_gpu__figures_free(&v[i]);
	free(v);
}

/* dst's vector of figures: a copy of src's n (dst->v NULL on failure). */
static int gpu_figures_vec_copy(struct model_gpu_figures **dst, const struct model_gpu_figures *src, size_t n)
{
	*dst = n ? calloc(n, sizeof(**dst)) : NULL;
	if (n && !*dst)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (model_gpu__figures_copy(&(*dst)[i], &src[i])) {
			gpu_figures_vec_free(*dst, i);
			*dst = NULL;
			return -ENOMEM;
		}
	return 0;
}

void model_gpu__cycle_free(struct model_gpu_cycle *c)
{
	gpu_figures_vec_free(c->figures.v, c->figures.n);
	memset(c, 0, sizeof(*c));
}

int model_gpu__cycle_copy(struct model_gpu_cycle *dst, const struct model_gpu_cycle *src)
{
	*dst = *src;
	memset(&dst->figures, 0, sizeof(dst->figures));
	if (gpu_figures_vec_copy(&dst->figures.v, src->figures.v, src->figures.n))
		return -ENOMEM;
	dst->figures.n = dst->figures.cap = dst->figures.v ? src->figures.n : 0;
	return 0;
}

void model_gpu__activity_clear_derived(struct model_gpu_activity *a)
{
	gpu_figures_vec_free(a->figures.v, a->figures.n);
	memset(&a->figures, 0, sizeof(a->figures));
	folded__free(&a->folded);
	memset(&a->folded, 0, sizeof(a->folded));
}

void model_gpu__activity_free(struct model_gpu_activity *a)
{
	model_gpu__activity_clear_derived(a);
	free(a->processes.v);
	free(a->ops.v);
	free(a->calib.v);
	free(a->api.v);
	free(a->launches.v);
	free(a->windows.v);
	memset(a, 0, sizeof(*a));
}

int model_gpu__activity_copy(struct model_gpu_activity *dst, const struct model_gpu_activity *src)
{
	*dst = *src;
	memset(&dst->processes, 0, sizeof(dst->processes));
	memset(&dst->ops, 0, sizeof(dst->ops));
	memset(&dst->figures, 0, sizeof(dst->figures));
	memset(&dst->calib, 0, sizeof(dst->calib));
	memset(&dst->api, 0, sizeof(dst->api));
	memset(&dst->launches, 0, sizeof(dst->launches));
	memset(&dst->windows, 0, sizeof(dst->windows));
	memset(&dst->folded, 0, sizeof(dst->folded));
	if (VEC_DUP(dst->processes, src->processes) || VEC_DUP(dst->ops, src->ops) || VEC_DUP(dst->windows, src->windows) ||
	    VEC_DUP(dst->calib, src->calib) || VEC_DUP(dst->api, src->api) || VEC_DUP(dst->launches, src->launches) ||
	    gpu_figures_vec_copy(&dst->figures.v, src->figures.v, src->figures.n) ||
	    copy_folded(&dst->folded, &src->folded)) {
		model_gpu__activity_free(dst);
		return -ENOMEM;
	}
	dst->figures.n = dst->figures.cap = dst->figures.v ? src->figures.n : 0;
	return 0;
}

static int cycle_key_cmp(pid_t pa, uint32_t ca, pid_t pb, uint32_t cb)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ca < cb ? -1 : ca > cb;
}

static int cycle_index_cmp(const void *a, const void *b, void *cycles)
{
	const struct model_cycle *x = &((const struct model_cycle *)cycles)[*(const uint32_t *)a];
	const struct model_cycle *y = &((const struct model_cycle *)cycles)[*(const uint32_t *)b];

	int r = cycle_key_cmp(x->pid, x->bpf_cycle, y->pid, y->bpf_cycle);

	/* equal keys (`py:` cycles) keep their order: the first one is found */
	return r ? r : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Looked up for every labelled stack and call: a walk of every cycle each
 * time made a long run's end quadratic in its cycles. */
struct model_cycle *model__find_cycle(struct model *m, pid_t pid, uint32_t bpf_cycle)
{
	size_t lo = 0, hi;

	if (m->cycle_index_of != m->cycles || m->ncycle_index != m->ncycles) {
		if (m->ncycles && VEC_RESIZE(m->cycle_index, m->ncycles)) { /* no memory for the index: walk */
			for (size_t i = 0; i < m->ncycles; i++)
				if (m->cycles[i].pid == pid && m->cycles[i].bpf_cycle == bpf_cycle)
					return &m->cycles[i];
			return NULL;
		}
		for (size_t i = 0; i < m->ncycles; i++)
			m->cycle_index[i] = (uint32_t)i;
		if (m->ncycles)
			qsort_r(m->cycle_index, m->ncycles, sizeof(*m->cycle_index), cycle_index_cmp, m->cycles);
		m->ncycle_index = m->ncycles;
		m->cycle_index_of = m->cycles;
	}
	hi = m->ncycle_index;
	while (lo < hi) { /* the first entry not below the key */
		size_t mid = lo + (hi - lo) / 2;
		const struct model_cycle *c = &m->cycles[m->cycle_index[mid]];

		if (cycle_key_cmp(c->pid, c->bpf_cycle, pid, bpf_cycle) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->ncycle_index && m->cycles[m->cycle_index[lo]].pid == pid &&
	    m->cycles[m->cycle_index[lo]].bpf_cycle == bpf_cycle)
		return &m->cycles[m->cycle_index[lo]];
	return NULL;
}

int model__add_call_ms(struct model *m, int phase, double ms)
{
	if (phase <= 0 || phase >= IT_MAX_PHASES)
		return -EINVAL;
	if (VEC_RESERVE(m->call_ms[phase], m->capcall_ms[phase], m->ncall_ms[phase], 256))
		return -ENOMEM;
	m->call_ms[phase][m->ncall_ms[phase]++] = ms;
	return 0;
}

int model__add_phase_call(struct model *m, const struct model_phase_call *c)
{
	if (VEC_RESERVE(m->calls, m->capcalls, m->ncalls, 1024))
		return -ENOMEM;
	m->calls[m->ncalls++] = *c;
	return 0;
}

int model__add_lost(struct model *m, const char *name, uint64_t n)
{
	for (size_t i = 0; i < m->nlost; i++) {
		if (!strcmp(m->lost[i].name, name)) {
			m->lost[i].value += n;
			return 0;
		}
	}
	if (VEC_RESERVE(m->lost, m->caplost, m->nlost, 8))
		return -ENOMEM;
	m->lost[m->nlost].name = strdup(name);
	if (!m->lost[m->nlost].name)
		return -ENOMEM;
	m->lost[m->nlost++].value = n;
	return 0;
}

uint64_t model__lost(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->nlost; i++)
		if (!strcmp(m->lost[i].name, name))
			return m->lost[i].value;
	return 0;
}

uint64_t model__oom_kills(const struct model *m)
{
	uint64_t n = 0;

	for (size_t i = 0; i < m->crashes.n; i++)
		n += !strcmp(m->crashes.v[i].cause, "oom_kill");
	return n;
}


int model__add_trace_sample(struct model *m, const struct model_trace_sample *s)
{
	if (VEC_RESERVE(m->trace_samples, m->captrace_samples, m->ntrace_samples, 4096))
		return -ENOMEM;
	m->trace_samples[m->ntrace_samples++] = *s;
	return 0;
}

int model__add_offcpu_interval(struct model *m, const struct model_offcpu_interval *iv)
{
	if (VEC_RESERVE(m->offcpu_intervals, m->capoffcpu_intervals, m->noffcpu_intervals, 4096))
		return -ENOMEM;
	m->offcpu_intervals[m->noffcpu_intervals++] = *iv;
	return 0;
}

int model__add_lstack(struct model *m, const struct model_lstack *s, const struct model_frame *frames, uint32_t n)
{
	if (VEC_RESERVE(m->lstacks, m->caplstacks, m->nlstacks, 1024))
		return -ENOMEM;
	if (n && VEC_RESERVE(m->frames, m->capframes, m->nframes + n - 1, 8192))
		return -ENOMEM;
	m->lstacks[m->nlstacks] = *s;
	m->lstacks[m->nlstacks].first = m->nframes;
	m->lstacks[m->nlstacks].nframes = n;
	m->nlstacks++;
	if (n)
		memcpy(m->frames + m->nframes, frames, n * sizeof(*frames));
	m->nframes += n;
	return 0;
}

int32_t model__add_mapping(struct model *m, const struct model_mapping *mp)
{
	/* a few dozen mappings per process: a linear search is enough */
	for (size_t i = 0; i < m->nmappings; i++) {
		const struct model_mapping *o = &m->mappings[i];

		if (o->start == mp->start && o->limit == mp->limit && o->file_offset == mp->file_offset &&
		    o->path == mp->path && o->kernel == mp->kernel && !strcmp(o->build_id, mp->build_id))
			return (int32_t)i;
	}
	if (VEC_RESERVE(m->mappings, m->capmappings, m->nmappings, 64))
		return -1;
	m->mappings[m->nmappings] = *mp;
	return (int32_t)m->nmappings++;
}

int model__add_finding(struct model *m, const char *type, const char *severity, double pct,
		       struct model_evidence *evidence)
{
	struct model_finding *f;

	if (VEC_RESERVE(m->findings, m->capfindings, m->nfindings, 8)) {
		if (evidence)
			model_evidence__free(evidence);
		return -ENOMEM;
	}
	f = &m->findings[m->nfindings++];
	f->type = strdup(type);
	f->severity = strdup(severity);
	f->percentage_of_cycle = pct;
	model_evidence__init(&f->evidence);
	if (evidence) {
		f->evidence = *evidence;
		model_evidence__init(evidence);
	}
	return f->type && f->severity ? 0 : -ENOMEM;
}

int model__add_recommendation(struct model *m, struct model_recommendation *r)
{
	struct model_recommendation *d;

	if (VEC_RESERVE(m->recs, m->caprecs, m->nrecs, 8)) {
		model_evidence__free(&r->evidence);
		return -ENOMEM;
	}
	d = &m->recs[m->nrecs++];
	d->title = dup_or_null(r->title);
	d->priority = dup_or_null(r->priority);
	d->description = dup_or_null(r->description);
	d->current_value = dup_or_null(r->current_value);
	d->recommended_value = dup_or_null(r->recommended_value);
	d->bottleneck = dup_or_null(r->bottleneck);
	d->evidence = r->evidence;
	model_evidence__init(&r->evidence);
	return 0;
}

int model__set_command(struct model *m, char *const *argv)
{
	size_t n = 0;

	free_strv(m->run.command);
	m->run.command = NULL;
	if (!argv)
		return 0;
	while (argv[n])
		n++;
	m->run.command = calloc(n + 1, sizeof(char *));
	if (!m->run.command)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(m->run.command[i] = strdup(argv[i])))
			return -ENOMEM;
	return 0;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int rehash_names(struct model *m, size_t cap)
{
	int32_t *idx = malloc(cap * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		idx[i] = -1;
	for (size_t i = 0; i < m->nnames; i++) {
		size_t h = name_hash(m->names[i]) & (cap - 1);

		while (idx[h] >= 0)
			h = (h + 1) & (cap - 1);
		idx[h] = (int32_t)i;
	}
	free(m->name_index);
	m->name_index = idx;
	m->name_cap = cap;
	return 0;
}

int32_t model__intern(struct model *m, const char *name)
{
	size_t h;

	if ((m->nnames + 1) * 2 > m->name_cap && rehash_names(m, m->name_cap ? m->name_cap * 2 : 256))
		return -1;
	for (h = name_hash(name) & (m->name_cap - 1); m->name_index[h] >= 0; h = (h + 1) & (m->name_cap - 1))
		if (!strcmp(m->names[m->name_index[h]], name))
			return m->name_index[h];
	if (VEC_RESERVE(m->names, m->capnames, m->nnames, 256))
		return -1;
	if (!(m->names[m->nnames] = strdup(name)))
		return -1;
	m->name_index[h] = (int32_t)m->nnames;
	return (int32_t)m->nnames++;
}

/* ---- evidence ---- */

void model_evidence__init(struct model_evidence *e)
{
#define EV_R(name) e->name = NAN;
#define EV_I(name) e->name = -1;
#define EV_N(name) e->name = -1;
	memset(e, 0, sizeof(*e));
	MODEL_EVIDENCE_SCALARS(EV_R, EV_I, EV_N)
#undef EV_R
#undef EV_I
#undef EV_N
	e->peak_mb = e->percent_of_ram = e->cpus = NAN;
	e->top_idle_stack = (struct model_ev_share){ .name = -1, .ms = NAN, .percent = NAN };
	e->top_kernel.name = -1;
	e->top_kernel.count = -1;
	e->top_kernel.ms = NAN;
}

void model_evidence__free(struct model_evidence *e)
{
	free(e->top_functions.v);
	free(e->top_stacks.v);
	free(e->episodes.v);
	model_evidence__init(e);
}

int model_evidence__copy(struct model_evidence *dst, const struct model_evidence *src)
{
	*dst = *src;
	dst->top_functions.v = NULL;
	dst->top_stacks.v = NULL;
	dst->episodes.v = NULL;
	dst->top_functions.n = dst->top_functions.cap = dst->top_stacks.n = dst->top_stacks.cap = 0;
	dst->episodes.n = dst->episodes.cap = 0;
	if (VEC_DUP(dst->top_functions, src->top_functions) || VEC_DUP(dst->top_stacks, src->top_stacks) ||
	    VEC_DUP(dst->episodes, src->episodes)) {
		model_evidence__free(dst);
		return -ENOMEM;
	}
	return 0;
}
