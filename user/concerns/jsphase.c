// SPDX-License-Identifier: BSD-2-Clause
/* js: phases: `--phase NAME=js:FUNC` times a JavaScript (or any JIT)
 * function named by the runtime's perf map. No probe can be placed in
 * generated code, so the phase is observed: each DWARF sample's stack (its
 * JIT frames named by the entry valid at the sample's time) says, per
 * thread, whether FUNC is on the stack. A thread enters the phase at the
 * midpoint between its last sample without FUNC and its first sample with
 * it, and leaves it likewise: the edge is somewhere in between, and the
 * midpoint is right on average whether the thread ran or waited there (a
 * thread off the CPU gets no samples, so on a busy machine the gap spans
 * several periods). A thread's first sample opens half a period early, and
 * a phase still open at the end closes half a period after its last
 * sighting. One sample without FUNC between two with it does not end the
 * phase (an unwind now and then loses a frame under a native leaf): it
 * takes two in a row, the edge then placed before the first. The intervals become the model's phase calls, per-cycle phase times
 * and percentiles, as probed phases do; the samples that show FUNC count
 * for the phase (samples.by_phase, stacks.NAME.folded).
 *
 * Inlining hides a function from every stack: a phase seen in some samples
 * whose caller then keeps showing without it, or a function the perf map
 * names that no sample shows, is reported as inlined. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "concerns.h"
#include "exit_codes.h"
#include "jsphase.h"
#include "nearest.h"
#include "perfmap.h"
#include "probes.h"
#include "syms.h"
#include "vec.h"

#define JS_PREFIX "js:"
#define MAX_JS_FRAMES 128
/* samples of the caller without the phase after its last sighting that make
 * "inlined" the verdict: ~0.1 s of a busy caller at 199 Hz */
#define INLINED_MIN_SAMPLES 20

struct js_phase {
	int id;                 /* phase id (rec->phase_names) */
	char *func;             /* FUNC of js:FUNC */
	char *spec;             /* "js:FUNC" */
	uint64_t samples;       /* samples whose stack shows FUNC */
	uint64_t first_ns, last_ns;
	char *caller;           /* the JIT frame above FUNC when first seen */
	uint64_t caller_without; /* samples showing the caller, not FUNC, since FUNC was last seen */
	char *verdict;          /* why it is missing from stacks, made at stop */
};

struct js_thread {
	pid_t tgid, tid;
	uint64_t last_ns;                       /* this thread's previous sample */
	bool open[IT_MAX_PHASES];               /* by js_phase index */
	uint64_t start_ns[IT_MAX_PHASES], seen_ns[IT_MAX_PHASES];
	uint64_t end_ns[IT_MAX_PHASES];         /* one sample without FUNC: the edge, if a second confirms */
	uint32_t cycle[IT_MAX_PHASES];
};

struct jsphase_state {
	struct js_phase ph[IT_MAX_PHASES];
	int n;
	uint64_t period_ns;
	struct js_thread *threads;
	size_t nthreads, capthreads, last;
	struct phase_call *calls;
	size_t ncalls, capcalls;
	uint64_t calls_dropped;
	bool hold;                /* recording__may_hold at this event */
};

#define MAX_JS_CALLS (4u << 20)

bool jsphase__spec_is_js(const char *spec)
{
	return !strncmp(spec, JS_PREFIX, strlen(JS_PREFIX));
}

static int add_phase(struct jsphase_state *s, int id, const char *name, const char *spec)
{
	const char *func = spec + strlen(JS_PREFIX);
	struct js_phase *p;

	if (!*func || strchr(func, ';')) {
		fprintf(stderr, "infertrace: --phase %s: '%s' names no function: expected js:FUNCTION\n", name, spec);
		return -EINVAL;
	}
	for (int i = 0; i < s->n; i++)
		if (s->ph[i].id == id && !strcmp(s->ph[i].func, func))
			return 0;
	if (s->n >= IT_MAX_PHASES)
		return -E2BIG;
	p = &s->ph[s->n];
	memset(p, 0, sizeof(*p));
	p->id = id;
	p->func = strdup(func);
	p->spec = strdup(spec);
	if (!p->func || !p->spec)
		return -ENOMEM;
	s->n++;
	return 0;
}

static int phase_id(const struct recording *rec, const char *name)
{
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (rec->phase_names[i] && !strcmp(rec->phase_names[i], name))
			return i;
	return -1;
}

/* After the probes concern: it gave every --phase its id and placed no
 * probe for js: specs. */
static int jsphase_configure(struct recording *rec)
{
	const struct record_opts *o = &rec->opts;
	struct jsphase_state *s;
	int err = 0;

	bool any = false;

	for (int i = 0; i < o->nphases; i++)
		any |= strstr(o->phases[i].specs, JS_PREFIX) != NULL;
	if (!any)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rec->jsphase = s;
	s->period_ns = 1000000000ull / (o->frequency ? o->frequency : 99);
	for (int i = 0; i < o->nphases && !err; i++) {
		char *copy = strdup(o->phases[i].specs), *tok, *save = NULL;
		int id = phase_id(rec, o->phases[i].name), njs = 0, nother = 0;

		if (!copy)
			return -ENOMEM;
		for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
			if (!jsphase__spec_is_js(tok)) {
				nother++;
				continue;
			}
			njs++;
			if (id < 0)
				err = -EINVAL;
			else
				err = add_phase(s, id, o->phases[i].name, tok);
		}
		free(copy);
		if (!err && njs && nother) {
			fprintf(stderr, "infertrace: --phase %s: mixes js: specs, observed at samples, with probed "
				"functions; give them separate phases\n", o->phases[i].name);
			err = -EINVAL;
		}
	}
	if (err)
		return err;
	if (o->call_graph != CALL_GRAPH_DWARF) {
		fprintf(stderr, "infertrace: js: phases are observed in each sample's stack at its own time: "
			"they need --call-graph dwarf (the default), not fp\n");
		return -EINVAL;
	}
	if (o->jit_maps && !strcmp(o->jit_maps, "off")) {
		fprintf(stderr, "infertrace: js: phases name functions through the perf map: not with --jit-maps off\n");
		return -EINVAL;
	}
	return 0;
}

static struct js_thread *thread_of(struct jsphase_state *s, pid_t tgid, pid_t tid)
{
	if (s->last < s->nthreads && s->threads[s->last].tid == tid && s->threads[s->last].tgid == tgid)
		return &s->threads[s->last];
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid && s->threads[i].tgid == tgid)
			return &s->threads[s->last = i];
	if (VEC_RESERVE(s->threads, s->capthreads, s->nthreads, 16))
		return NULL;
	memset(&s->threads[s->nthreads], 0, sizeof(s->threads[0]));
	s->threads[s->nthreads].tgid = tgid;
	s->threads[s->nthreads].tid = tid;
	s->last = s->nthreads;
	return &s->threads[s->nthreads++];
}

static void add_call(struct jsphase_state *s, const struct js_thread *t, int j, uint64_t end_ns)
{
	if (s->ncalls >= MAX_JS_CALLS || !s->hold || VEC_RESERVE(s->calls, s->capcalls, s->ncalls, 256)) {
		s->calls_dropped++;
		return;
	}
	s->calls[s->ncalls++] = (struct phase_call){
		.tgid = t->tgid, .tid = t->tid, .cycle = t->cycle[j], .phase = s->ph[j].id,
		.entry_ns = t->start_ns[j], .exit_ns = end_ns > t->start_ns[j] ? end_ns : t->start_ns[j],
	};
}

static bool frame_is(const char *frame, const char *func)
{
	return perfmap__stack_shows(&frame, 1, func);
}

uint32_t jsphase__observe(struct recording *rec, pid_t tgid, pid_t tid, uint32_t cycle, uint64_t ts_ns,
			  const uint64_t *ips, int n)
{
	struct jsphase_state *s = rec->jsphase;
	const char *names[MAX_JS_FRAMES];
	int nnames = 0, best = -1, best_depth = MAX_JS_FRAMES;
	struct js_thread *t;
	uint64_t gap;

	if (!s)
		return 0;
	s->hold = recording__may_hold(rec);
	/* the JIT frames, leaf first, named as of the sample's time (tokens) */
	for (int i = 0; i < n && nnames < MAX_JS_FRAMES; i++) {
		struct sym_info si;

		if (perfmap__is_token(ips[i]) && !syms_cache__resolve(rec->syms, tgid, ips[i], &si) && si.name)
			names[nnames++] = si.name;
	}
	t = thread_of(s, tgid, tid);
	if (!t)
		return 0;
	gap = t->last_ns && ts_ns > t->last_ns ? ts_ns - t->last_ns : UINT64_MAX;
	for (int j = 0; j < s->n; j++) {
		struct js_phase *p = &s->ph[j];
		int leafmost = -1, rootmost = -1;

		for (int k = 0; k < nnames; k++) {
			if (frame_is(names[k], p->func)) {
				if (leafmost < 0)
					leafmost = k;
				rootmost = k;
			}
		}
		if (leafmost >= 0) {
			p->samples++;
			if (!p->first_ns)
				p->first_ns = ts_ns;
			p->last_ns = ts_ns;
			p->caller_without = 0;
			if (!p->caller && rootmost + 1 < nnames)
				p->caller = strdup(names[rootmost + 1]);
			if (leafmost < best_depth)
				best = j, best_depth = leafmost;
			if (!t->open[j]) {
				t->open[j] = true;
				t->start_ns[j] = gap != UINT64_MAX ? t->last_ns + gap / 2 : ts_ns - s->period_ns / 2;
				t->cycle[j] = cycle;
			}
			t->seen_ns[j] = ts_ns;
			t->end_ns[j] = 0;
		} else {
			if (p->caller) {
				for (int k = 0; k < nnames; k++)
					if (!strcmp(names[k], p->caller)) {
						p->caller_without++;
						break;
					}
			}
			if (t->open[j] && !t->end_ns[j]) {
				t->end_ns[j] = t->last_ns + gap / 2;
			} else if (t->open[j]) {
				add_call(s, t, j, t->end_ns[j]);
				t->open[j] = false;
				t->end_ns[j] = 0;
			}
		}
	}
	t->last_ns = ts_ns;
	return best >= 0 ? (uint32_t)s->ph[best].id : 0;
}

static unsigned int log2_slot(uint64_t us)
{
	unsigned int r = 0;

	while (us > 1 && r < IT_HIST_SLOTS - 1) {
		us >>= 1;
		r++;
	}
	return r;
}

/* The phase as a probe entry: observed in the samples, none placed. */
static int phase_probe(struct model *m, const struct js_phase *p, const char *name)
{
	struct model_probe *o = model__add_probe(m);

	if (!o)
		return -ENOMEM;
	m->have_probes = true;
	o->spec = model__intern(m, p->spec);
	snprintf(o->role, sizeof(o->role), "phase");
	o->phase = model__intern(m, name);
	o->sampled = true;
	o->samples = p->samples;
	if (p->verdict)
		o->warning = model__intern(m, p->verdict);
	return 0;
}

/* Runs after the probes concern's spans (the cycles exist); works on a copy
 * of the calls, with the still open ones closed, so that it can run at
 * every snapshot. */
static int jsphase_spans(struct recording *rec, struct model *m)
{
	struct jsphase_state *s = rec->jsphase;
	struct phase_call *calls;
	size_t n = 0, cap;

	if (!s)
		return 0;
	cap = s->ncalls + s->nthreads * s->n + 1;
	calls = malloc(cap * sizeof(*calls));
	if (!calls)
		return -ENOMEM;
	if (s->ncalls)
		memcpy(calls, s->calls, s->ncalls * sizeof(*calls));
	n = s->ncalls;
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct js_thread *t = &s->threads[i];

		for (int j = 0; j < s->n; j++)
			if (t->open[j])
				calls[n++] = (struct phase_call){
					.tgid = t->tgid, .tid = t->tid, .cycle = t->cycle[j], .phase = s->ph[j].id,
					.entry_ns = t->start_ns[j],
					.exit_ns = t->end_ns[j] ? t->end_ns[j] : t->seen_ns[j] + s->period_ns / 2,
				};
	}
	qsort(calls, n, sizeof(*calls), phase_call__cmp);
	for (size_t i = 0; i < n;) {
		size_t k = i;
		double thread_ms = 0;
		struct model_cycle *mc = model__find_cycle(m, calls[i].tgid, calls[i].cycle);
		int ph = calls[i].phase;

		while (k < n && calls[k].tgid == calls[i].tgid && calls[k].cycle == calls[i].cycle &&
		       calls[k].phase == calls[i].phase) {
			const struct phase_call *c = &calls[k];
			struct model_phase_call mpc = {
				.tgid = c->tgid, .tid = c->tid, .bpf_cycle = c->cycle, .phase = c->phase,
				.entry_ns = c->entry_ns, .exit_ns = c->exit_ns,
			};
			double ms = (c->exit_ns - c->entry_ns) / 1e6;

			if (model__add_phase_call(m, &mpc) || model__add_call_ms(m, ph, ms)) {
				free(calls);
				return -ENOMEM;
			}
			m->phase_hist_us[ph][log2_slot((c->exit_ns - c->entry_ns) / 1000)]++;
			thread_ms += ms;
			k++;
		}
		if (mc) {
			struct model_cycle_phase *p = &mc->phases[ph];

			p->present = true;
			p->calls += k - i;
			p->thread_ms += thread_ms;
			p->ms += phase_calls__union_ns(calls + i, k - i, 0, UINT64_MAX) / 1e6;
		} else {
			m->phase_outside_thread_ms[ph] += thread_ms;
			m->phase_outside_calls[ph] += k - i;
		}
		i = k;
	}
	free(calls);
	if (s->calls_dropped)
		model__add_lost(m, "phase_calls_not_kept", s->calls_dropped);
	for (int j = 0; j < s->n; j++)
		if (phase_probe(m, &s->ph[j], rec->phase_names[s->ph[j].id]))
			return -ENOMEM;
	return 0;
}

/* The kernel does not know these phases: the scheduler split it keys by
 * phase is empty for them, so none is reported (sched's collect ran). */
static int jsphase_collect(struct recording *rec, struct model *m)
{
	struct jsphase_state *s = rec->jsphase;

	for (size_t i = 0; s && i < m->ncycles; i++)
		for (int j = 0; j < s->n; j++)
			m->cycles[i].phases[s->ph[j].id].split.present = false;
	return 0;
}

/* Whether any traced process's perf map names func. */
static bool in_any_map(struct recording *rec, const char *func)
{
	struct perfmaps *maps = syms_cache__jit_maps(rec->syms);

	for (size_t i = 0; maps && i < rec->procs.n; i++) {
		const struct perfmap_entry *e;

		for (uint32_t id = 0; (e = perfmaps__entry(maps, rec->procs.procs[i].pid, id)); id++)
			if (frame_is(perfmap_entry__pretty(e), func))
				return true;
	}
	return false;
}

/* The perf-map names nearest func, "js:a, js:b" in buf ("" when none). */
static const char *nearest_in_maps(struct recording *rec, const char *func, char *buf, size_t len)
{
	struct perfmaps *maps = syms_cache__jit_maps(rec->syms);
	struct nearest nr;

	nearest__init(&nr, func);
	for (size_t i = 0; maps && i < rec->procs.n; i++) {
		const struct perfmap_entry *e;

		for (uint32_t id = 0; (e = perfmaps__entry(maps, rec->procs.procs[i].pid, id)); id++) {
			/* "name (file.js:L)": the name part, as perfmap__stack_shows reads it */
			const char *name = perfmap_entry__pretty(e), *open = strstr(name, " (");

			nearest__offer(&nr, name, open ? (size_t)(open - name) : strlen(name));
		}
	}
	nearest__list(&nr, JS_PREFIX, buf, len);
	nearest__free(&nr);
	return buf;
}

/* The recording ended: a js: phase that stacks stopped showing (or never
 * showed) gets its verdict, in the probes section and on stderr; with
 * --strict, one no sample showed fails the run. */
static void jsphase_stop(struct recording *rec)
{
	struct jsphase_state *s = rec->jsphase;
	char buf[1024], near[512];

	for (int j = 0; s && j < s->n; j++) {
		struct js_phase *p = &s->ph[j];
		const char *name = rec->phase_names[p->id];

		buf[0] = '\0';
		/* alternating with its caller's other work leaves at most one
		 * stretch of that work since the last sighting; inlined, the
		 * caller's samples without it outnumber all of its own */
		if (p->samples && p->caller && p->caller_without >= INLINED_MIN_SAMPLES &&
		    p->caller_without > p->samples)
			snprintf(buf, sizeof(buf), "js:%s was seen in %llu samples until %.2f s into the recording, "
				 "then its caller %s showed in %llu more samples without it: it was most likely inlined "
				 "into its caller, whose time now includes it (to see it, run 'node --no-turbo-inlining "
				 "SCRIPT': a command-line flag, NODE_OPTIONS refuses it)", p->func,
				 (unsigned long long)p->samples, (p->last_ns - rec->start_ns) / 1e9, p->caller,
				 (unsigned long long)p->caller_without);
		else if (!p->samples && in_any_map(rec, p->func))
			snprintf(buf, sizeof(buf), "js:%s is in the perf map (it was compiled) but no sample's stack "
				 "shows it: it was inlined into its caller or runs for less than a sample period (see "
				 "an inlined one with 'node --no-turbo-inlining SCRIPT', a short one with a higher -F)",
				 p->func);
		else if (!p->samples)
			snprintf(buf, sizeof(buf), "js:%s: no perf-map entry and no sample names this function: check "
				 "the name (the perf map's, e.g. 'hotInner' of 'JS:*hotInner /app/loop.js:1:18') and "
				 "that node ran with --perf-basic-prof (--jit-maps on does it for a launched command)%s%s",
				 p->func, *nearest_in_maps(rec, p->func, near, sizeof(near)) ? "; nearest seen: " : "",
				 near);
		if (!buf[0])
			continue;
		free(p->verdict);
		p->verdict = strdup(buf);
		fprintf(stderr, "infertrace: %s: phase %s: %s\n", rec->opts.strict && !p->samples ? "error" : "warning",
			name ? name : "?", buf);
		if (rec->opts.strict && !p->samples)
			recording__fail_late(rec, IT_EXIT_UNMATCHED);
	}
}

static void jsphase_cleanup(struct recording *rec)
{
	struct jsphase_state *s = rec->jsphase;

	if (!s)
		return;
	for (int j = 0; j < s->n; j++) {
		free(s->ph[j].func);
		free(s->ph[j].spec);
		free(s->ph[j].caller);
		free(s->ph[j].verdict);
	}
	free(s->threads);
	free(s->calls);
	free(s);
	rec->jsphase = NULL;
}

const struct concern jsphase_concern = {
	.name = "jsphase",
	.configure = jsphase_configure,
	.spans = jsphase_spans,
	.collect = jsphase_collect,
	.stop = jsphase_stop,
	.cleanup = jsphase_cleanup,
};
