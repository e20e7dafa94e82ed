// SPDX-License-Identifier: BSD-2-Clause
/* Tail-cycle forensics. A cycle is in the tail when its duration is above
 * median + 3·MAD (median absolute deviation: robust to the tail itself) and
 * more than 10% above the median (MAD is near 0 when cycles are regular).
 * Its causes are the figures that grew against their median over the
 * cycles: each phase's wall time, the main thread's on-CPU, run-queue and
 * blocked time by reason, all threads' on-CPU and run-queue time, page
 * faults and the CPU clock. For each timed cause, the stacks whose weight in
 * the cycle grew most against their median weight per cycle, from the
 * cycle-labelled stacks the pprof writer uses (model.lstacks). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html_text.h"
#include "model.h"
#include "outputs.h"
#include "sched_logic.h"
#include "split_view.h"
#include "stats.h"
#include "tail.h"
#include "vec.h"

#define TAIL_MAD_K 3.0
#define TAIL_MIN_REL 0.10     /* the cycle is at least 10% above the median */
#define TAIL_MAX 20           /* the worst cycles kept */
#define CAUSE_MIN_SHARE 0.10  /* of the cycle's excess */
#define CAUSE_MIN_MS 0.5
#define MAJFLT_MIN 1.0        /* major faults: each one waits on I/O */
#define MINFLT_MIN 256.0      /* minor faults: and at least twice the median */
#define CLOCK_DROP_MIN 0.10   /* the cycle's mean CPU clock, below its median */
#define STACK_CANDIDATES 32   /* heaviest stacks of a cause in the cycle looked at */
#define STACKS_PER_CAUSE 3
#define STACK_FRAMES 48       /* innermost frames written per stack */

enum q_unit { Q_MS, Q_COUNT, Q_MHZ };
enum stack_filter { SF_NONE, SF_PHASE, SF_ONCPU_MAIN, SF_ONCPU_ALL, SF_BLOCKED };

struct quantity {
	const char *kind;
	char name[64];
	enum q_unit unit;
	enum stack_filter filter;
	int arg;        /* the phase, or the blocked class */
	double *v;      /* per cycle; NAN: not measured */
};

/* What each labelled stack is, computed once. */
struct ls_info {
	uint64_t hash;  /* frames and on/off-CPU: the same stack across cycles */
	int32_t cycle;  /* index in m->cycles; -1: none */
	int8_t cls;     /* blocked class of an off-CPU stack; -1 on-CPU */
	bool main;      /* the process's main thread */
};

struct ctx {
	struct model *m;
	double period_ms;
	struct ls_info *info;
	size_t *by_hash;   /* lstack indexes sorted by hash */
	double *scratch;   /* ncycles */
};

static double median_of(const double *v, size_t n, double *scratch)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			scratch[k++] = v[i];
	return k ? stats__percentile(scratch, k, 50) : NAN;
}

static bool eligible(const struct model_cycle *c)
{
	return !c->open_at_end && c->duration_ms > 0;
}

/* ---- labelled stacks ---- */

static double ls_ms(const struct ctx *x, const struct model_lstack *s)
{
	return s->samples ? s->samples * x->period_ms : s->offcpu_ns / 1e6;
}

static bool ls_matches(const struct ctx *x, size_t i, const struct quantity *q)
{
	const struct model_lstack *s = &x->m->lstacks[i];
	const struct ls_info *in = &x->info[i];

	switch (q->filter) {
	case SF_PHASE:
		return s->phase == (uint32_t)q->arg;
	case SF_ONCPU_MAIN:
		return s->samples && in->main;
	case SF_ONCPU_ALL:
		return s->samples > 0;
	case SF_BLOCKED:
		return !s->samples && in->main && in->cls == q->arg;
	default:
		return false;
	}
}

static int cmp_cycle_key(const void *a, const void *b)
{
	const struct model_cycle *x = *(const struct model_cycle *const *)a, *y = *(const struct model_cycle *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->bpf_cycle < y->bpf_cycle ? -1 : x->bpf_cycle > y->bpf_cycle;
}

static const struct ctx *sort_ctx;

static int cmp_by_hash(const void *a, const void *b)
{
	uint64_t x = sort_ctx->info[*(const size_t *)a].hash, y = sort_ctx->info[*(const size_t *)b].hash;

	return x < y ? -1 : x > y;
}

static int ls_prepare(struct ctx *x)
{
	const struct model *m = x->m;
	const struct model_cycle **keys = calloc(m->ncycles + 1, sizeof(*keys));
	int gpu = model__phase_id(m, "gpu_sync");

	x->info = calloc(m->nlstacks + 1, sizeof(*x->info));
	x->by_hash = calloc(m->nlstacks + 1, sizeof(*x->by_hash));
	if (!keys || !x->info || !x->by_hash) {
		free(keys);
		return -1;
	}
	for (size_t i = 0; i < m->ncycles; i++)
		keys[i] = &m->cycles[i];
	qsort(keys, m->ncycles, sizeof(*keys), cmp_cycle_key);
	for (size_t i = 0; i < m->nlstacks; i++) {
		const struct model_lstack *s = &m->lstacks[i];
		struct ls_info *in = &x->info[i];
		uint64_t h = 1469598103934665603ull ^ (s->samples ? 1 : 2);
		const char *kf[IT_MAX_STACK_DEPTH];
		int nk = 0;

		for (uint32_t f = 0; f < s->nframes; f++) {
			int32_t name = m->frames[s->first + f].name;
			const char *nm = name >= 0 && (size_t)name < m->nnames ? m->names[name] : NULL;
			size_t len = nm ? strlen(nm) : 0;

			h = (h ^ (uint32_t)name) * 1099511628211ull;
			/* kernel frames (leaf first, above the user stack) say why it blocked */
			if (nk < IT_MAX_STACK_DEPTH && len > 4 && !strcmp(nm + len - 4, "_[k]"))
				kf[nk++] = nm;
		}
		in->hash = h;
		in->main = s->tid == s->pid || !s->tid;
		in->cls = -1;
		if (!s->samples)
			in->cls = (int8_t)(gpu > 0 && s->phase == (uint32_t)gpu ? BLOCKED_GPU : blocked_classify(kf, nk));
		in->cycle = -1;
		if (s->has_cycle) {
			struct model_cycle key = { .pid = s->pid, .bpf_cycle = s->bpf_cycle }, *kp = &key;
			const struct model_cycle **hit = bsearch(&kp, keys, m->ncycles, sizeof(*keys), cmp_cycle_key);

			if (hit)
				in->cycle = (int32_t)(*hit - m->cycles);
		}
		x->by_hash[i] = i;
	}
	free(keys);
	sort_ctx = x;
	qsort(x->by_hash, m->nlstacks, sizeof(*x->by_hash), cmp_by_hash);
	sort_ctx = NULL;
	return 0;
}

/* The stack root first, its innermost STACK_FRAMES frames. */
/* The stack's innermost STACK_FRAMES frames, root first, in model.names;
 * -1 on ENOMEM. */
static int32_t stack_string(struct model *m, const struct model_lstack *s)
{
	uint32_t n = s->nframes < STACK_FRAMES ? s->nframes : STACK_FRAMES;
	size_t len = 0, cap = 64;
	char *buf = malloc(cap);
	int32_t out;

	if (!buf)
		return -1;
	buf[0] = 0;
	for (uint32_t k = n; k-- > 0;) {
		int32_t name = m->frames[s->first + k].name;
		const char *nm = name >= 0 && (size_t)name < m->nnames ? m->names[name] : "[unknown]";
		size_t l = strlen(nm);

		/* room for ';', the name and its NUL */
		if (VEC_RESERVE(buf, cap, len + l + 1, 64)) {
			free(buf);
			return -1;
		}
		if (len)
			buf[len++] = ';';
		memcpy(buf + len, nm, l + 1);
		len += l;
	}
	out = model__intern(m, buf);
	free(buf);
	return out;
}

struct cand {
	uint64_t hash;
	size_t exemplar;
	double ms, excess;
};

static int cmp_cand_ms(const void *a, const void *b)
{
	double x = ((const struct cand *)a)->ms, y = ((const struct cand *)b)->ms;

	return x > y ? -1 : x < y;
}

static int cmp_cand_excess(const void *a, const void *b)
{
	double x = ((const struct cand *)a)->excess, y = ((const struct cand *)b)->excess;

	return x > y ? -1 : x < y;
}

/* The stacks of cause q that grew most in cycle ci against their median
 * weight per cycle (eligible cycles; a cycle without the stack weighs 0). */
static void cause_stacks(struct ctx *x, const struct quantity *q, size_t ci, struct model_tail_cause *cz)
{
	struct model *m = x->m;
	struct cand *cand = NULL;
	size_t nc = 0, cap = 0, neligible = 0;
	double *w = calloc(m->ncycles + 1, sizeof(double));

	cz->has_stacks = true;
	if (!w)
		return;
	/* the cause's stacks in this cycle, merged by identity (threads, labels) */
	for (size_t i = 0; i < m->nlstacks; i++) {
		size_t k;

		if (x->info[i].cycle != (int32_t)ci || !ls_matches(x, i, q))
			continue;
		for (k = 0; k < nc && cand[k].hash != x->info[i].hash; k++)
			;
		if (k == nc) {
			if (VEC_RESERVE(cand, cap, nc, 64))
				break;
			cand[nc++] = (struct cand){ .hash = x->info[i].hash, .exemplar = i };
		}
		cand[k].ms += ls_ms(x, &m->lstacks[i]);
	}
	if (nc)
		qsort(cand, nc, sizeof(*cand), cmp_cand_ms);
	if (nc > STACK_CANDIDATES)
		nc = STACK_CANDIDATES;
	for (size_t k = 0; k < nc; k++) {
		size_t lo = 0, hi = m->nlstacks;

		memset(w, 0, m->ncycles * sizeof(double));
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (x->info[x->by_hash[mid]].hash < cand[k].hash)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < m->nlstacks && x->info[x->by_hash[lo]].hash == cand[k].hash; lo++) {
			size_t i = x->by_hash[lo];

			if (x->info[i].cycle >= 0 && ls_matches(x, i, q))
				w[x->info[i].cycle] += ls_ms(x, &m->lstacks[i]);
		}
		neligible = 0;
		for (size_t c = 0; c < m->ncycles; c++)
			if (eligible(&m->cycles[c]))
				x->scratch[neligible++] = w[c];
		cand[k].excess = cand[k].ms - (neligible ? stats__percentile(x->scratch, neligible, 50) : 0);
	}
	free(w);
	if (nc)
		qsort(cand, nc, sizeof(*cand), cmp_cand_excess);
	for (size_t k = 0; k < nc && cz->stacks.n < STACKS_PER_CAUSE; k++) {
		const struct model_lstack *s = &m->lstacks[cand[k].exemplar];
		int32_t st;

		if (cand[k].excess < CAUSE_MIN_MS)
			break;
		st = stack_string(m, s);
		if (st >= 0 && !VEC_RESERVE(cz->stacks.v, cz->stacks.cap, cz->stacks.n, STACKS_PER_CAUSE))
			cz->stacks.v[cz->stacks.n++] = (struct model_tail_stack){ .stack = st, .oncpu = s->samples > 0,
										  .ms = cand[k].ms,
										  .excess_ms = cand[k].excess };
	}
	free(cand);
}

/* ---- quantities ---- */

static struct quantity *add_q(struct quantity **qs, size_t *n, size_t ncycles, const char *kind, const char *name,
			      enum q_unit unit, enum stack_filter filter, int arg)
{
	struct quantity *q;

	if (VEC_RESIZE(*qs, *n + 1))
		return NULL;
	q = &(*qs)[*n];
	memset(q, 0, sizeof(*q));
	q->v = malloc((ncycles + 1) * sizeof(double));
	if (!q->v)
		return NULL;
	(*n)++;
	q->kind = kind;
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->unit = unit;
	q->filter = filter;
	q->arg = arg;
	for (size_t i = 0; i < ncycles; i++)
		q->v[i] = NAN;
	return q;
}

static double split_v(const struct model_split *s, double v)
{
	return s->present ? v : NAN;
}

static size_t quantities(const struct model *m, struct quantity **out)
{
	struct quantity *qs = NULL, *q;
	size_t n = 0, nc = m->ncycles;

	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		if (!m->phase_names[ph] || !(q = add_q(&qs, &n, nc, "phase", m->phase_names[ph], Q_MS, SF_PHASE, ph)))
			continue;
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].phases[ph].present ? m->cycles[i].phases[ph].ms : 0;
	}
	if ((q = add_q(&qs, &n, nc, "oncpu", "main_thread", Q_MS, SF_ONCPU_MAIN, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = split_v(&m->cycles[i].split, m->cycles[i].split.oncpu_ms);
	if ((q = add_q(&qs, &n, nc, "runq", "main_thread", Q_MS, SF_NONE, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = split_v(&m->cycles[i].split, m->cycles[i].split.runq_ms);
	for (int k = 0; k < BLOCKED_NCLASSES; k++)
		if ((q = add_q(&qs, &n, nc, "blocked", blocked_class_names[k], Q_MS, SF_BLOCKED, k)))
			for (size_t i = 0; i < nc; i++)
				q->v[i] = split_v(&m->cycles[i].split, m->cycles[i].split.blocked_ms[k]);
	if ((q = add_q(&qs, &n, nc, "oncpu", "all_threads", Q_MS, SF_ONCPU_ALL, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].has_all_threads ? m->cycles[i].all_oncpu_ms : NAN;
	if ((q = add_q(&qs, &n, nc, "runq", "all_threads", Q_MS, SF_NONE, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].has_all_threads ? m->cycles[i].all_runq_ms : NAN;
	if ((q = add_q(&qs, &n, nc, "page_faults", "major", Q_COUNT, SF_NONE, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].has_all_threads ? (double)m->cycles[i].majflt : NAN;
	if ((q = add_q(&qs, &n, nc, "page_faults", "minor", Q_COUNT, SF_NONE, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].has_all_threads ? (double)m->cycles[i].minflt : NAN;
	if ((q = add_q(&qs, &n, nc, "throttling", "cpu_mhz", Q_MHZ, SF_NONE, 0)))
		for (size_t i = 0; i < nc; i++)
			q->v[i] = m->cycles[i].side.has_rows ? m->cycles[i].side.cpu_mhz : NAN;
	*out = qs;
	return n;
}

struct cause {
	const struct quantity *q;
	double value, median, excess;
	bool timed;
};

static int cmp_cause(const void *a, const void *b)
{
	const struct cause *x = a, *y = b;

	if (x->timed != y->timed)
		return x->timed ? -1 : 1;
	return x->excess > y->excess ? -1 : x->excess < y->excess;
}

/* The all-threads figure only when it says more than the main thread's. */
static bool redundant(const struct cause *cs, size_t n, const struct cause *c)
{
	if (strcmp(c->q->name, "all_threads"))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cs[i].q->kind, c->q->kind) && !strcmp(cs[i].q->name, "main_thread"))
			return fabs(cs[i].excess - c->excess) < CAUSE_MIN_MS;
	return false;
}

static int tail_cycle(struct ctx *x, const struct quantity *qs, size_t nq, const double *medians, size_t ci,
		      double median_ms, struct model_tail_cycle *t)
{
	const struct model_cycle *c = &x->m->cycles[ci];
	double excess = c->duration_ms - median_ms;
	struct cause *cs = calloc(nq + 1, sizeof(*cs));
	size_t n = 0;

	*t = (struct model_tail_cycle){ .cycle = c->index, .pid = c->pid, .ms = c->duration_ms, .median_ms = median_ms,
					.excess_ms = excess };
	if (!cs)
		return -ENOMEM;
	for (size_t k = 0; k < nq; k++) {
		const struct quantity *q = &qs[k];
		struct cause cz = { .q = q, .value = q->v[ci], .median = medians[k] };

		if (!isfinite(cz.value) || !isfinite(cz.median))
			continue;
		cz.excess = cz.value - cz.median;
		cz.timed = q->unit == Q_MS;
		if (q->unit == Q_MS && !(cz.excess >= CAUSE_MIN_MS && cz.excess >= CAUSE_MIN_SHARE * excess))
			continue;
		if (q->unit == Q_COUNT && !(cz.excess >= (strcmp(q->name, "major") ? MINFLT_MIN : MAJFLT_MIN) &&
					    cz.value >= 2 * cz.median))
			continue;
		if (q->unit == Q_MHZ && !(cz.median > 0 && cz.value < (1 - CLOCK_DROP_MIN) * cz.median))
			continue;
		cs[n++] = cz;
	}
	qsort(cs, n, sizeof(*cs), cmp_cause);
	for (size_t k = 0; k < n; k++) {
		const struct cause *cz = &cs[k];
		struct model_tail_cause *o;

		if (redundant(cs, n, cz))
			continue;
		if (VEC_RESERVE(t->causes.v, t->causes.cap, t->causes.n, 8))
			break;
		o = &t->causes.v[t->causes.n++];
		*o = (struct model_tail_cause){ .kind = model__intern(x->m, cz->q->kind),
						.name = model__intern(x->m, cz->q->name), .timed = cz->q->unit == Q_MS,
						.count = cz->q->unit == Q_COUNT, .mhz = cz->q->unit == Q_MHZ,
						.excess = cz->excess, .value = cz->value, .median = cz->median };
		if (cz->q->unit == Q_MS && cz->q->filter != SF_NONE)
			cause_stacks(x, cz->q, ci, o);
	}
	free(cs);
	return 0;
}

struct tail_pick {
	size_t ci;
	double ms;
};

static int cmp_pick(const void *a, const void *b)
{
	double x = ((const struct tail_pick *)a)->ms, y = ((const struct tail_pick *)b)->ms;

	return x > y ? -1 : x < y;
}

void tail__derive(struct model *m)
{
	struct ctx x = { .m = m };
	struct quantity *qs = NULL;
	struct tail_pick *picks = NULL;
	double *durs = NULL, *medians = NULL, median, mad;
	size_t n = 0, nq = 0, npicks = 0;
	model__clear_tail(m);
	x.period_ms = 1000.0 / (m->run.asked.frequency > 0 ? m->run.asked.frequency : 99);
	durs = calloc(m->ncycles + 1, sizeof(double));
	x.scratch = calloc(m->ncycles + 1, sizeof(double));
	picks = calloc(m->ncycles + 1, sizeof(*picks));
	if (!durs || !x.scratch || !picks)
		goto out;
	for (size_t i = 0; i < m->ncycles; i++)
		if (eligible(&m->cycles[i]))
			durs[n++] = m->cycles[i].duration_ms;
	if (n < TAIL_MIN_CYCLES)
		goto out;
	median = stats__percentile(durs, n, 50);
	for (size_t i = 0; i < n; i++)
		durs[i] = fabs(durs[i] - median);
	mad = stats__percentile(durs, n, 50);
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (eligible(c) && c->duration_ms > median + TAIL_MAD_K * mad &&
		    c->duration_ms > (1 + TAIL_MIN_REL) * median)
			picks[npicks++] = (struct tail_pick){ i, c->duration_ms };
	}
	m->have_tail = true;
	if (!npicks)
		goto out;
	qsort(picks, npicks, sizeof(*picks), cmp_pick);
	if (npicks > TAIL_MAX)
		npicks = TAIL_MAX;
	nq = quantities(m, &qs);
	medians = calloc(nq + 1, sizeof(double));
	if (!medians || ls_prepare(&x))
		goto out;
	for (size_t k = 0; k < nq; k++) {
		for (size_t i = 0; i < m->ncycles; i++)
			durs[i] = eligible(&m->cycles[i]) ? qs[k].v[i] : NAN;
		medians[k] = median_of(durs, m->ncycles, x.scratch);
	}
	if (!(m->tail.v = calloc(npicks, sizeof(*m->tail.v))))
		goto out;
	m->tail.cap = npicks;
	for (size_t p = 0; p < npicks; p++)
		if (!tail_cycle(&x, qs, nq, medians, picks[p].ci, median, &m->tail.v[m->tail.n]))
			m->tail.n++;
out:
	for (size_t k = 0; k < nq; k++)
		free(qs[k].v);
	free(qs);
	free(medians);
	free(durs);
	free(picks);
	free(x.scratch);
	free(x.info);
	free(x.by_hash);
}

/* ---- report ---- */

static const char *name_of(const struct model *m, int32_t i)
{
	return i >= 0 && (size_t)i < m->nnames ? m->names[i] : "?";
}

/* One cause as a line of text: "phase database +30.1 ms" */
static void cause_text(char *buf, size_t len, const struct model *m, const struct model_tail_cause *cz)
{
	const char *kind = name_of(m, cz->kind), *name = name_of(m, cz->name);

	if (cz->timed)
		snprintf(buf, len, "%s %s +%.1f ms (%.1f vs median %.1f)", kind, name, cz->excess, cz->value,
			 cz->median);
	else if (cz->count)
		snprintf(buf, len, "%s %s +%.0f (%.0f vs median %.0f)", kind, name, cz->excess, cz->value, cz->median);
	else
		snprintf(buf, len, "%s %s %.0f MHz vs median %.0f (-%.0f%%)", kind, name, cz->value, cz->median,
			 100.0 * (1 - cz->value / cz->median));
}

static bool is_kernel_frame(const char *f, size_t len)
{
	return len > 4 && !strncmp(f + len - 4, "_[k]", 4);
}

/* A root-first stack for one line: whole frames from the leaf, as many as
 * fit in `keep` characters (the leaf alone when it is longer: a name is
 * never cut). An off-CPU stack shows the user frames that blocked and the
 * kernel frame that says how (do_epoll_wait, futex_wait), not the
 * scheduler's frames above it. */
static const char *stack_line(char *buf, size_t len, const char *s, bool offcpu, size_t keep)
{
	enum { MAX_FRAMES = 2 * STACK_FRAMES };
	const char *f[MAX_FRAMES], *end = s + strlen(s);
	size_t fl[MAX_FRAMES], n = 0, first, used = 0, out = 0;
	ssize_t pick = -1;

	/* the leaf-most MAX_FRAMES frames, found from the end (a deeper stack
	 * loses root frames, which a line never shows anyway), root first */
	while (n < MAX_FRAMES) {
		const char *b = end;

		while (b > s && b[-1] != ';')
			b--;
		f[MAX_FRAMES - 1 - n] = b;
		fl[MAX_FRAMES - 1 - n] = (size_t)(end - b);
		n++;
		if (b == s)
			break;
		end = b - 1;
	}
	memmove(f, f + MAX_FRAMES - n, n * sizeof(*f));
	memmove(fl, fl + MAX_FRAMES - n, n * sizeof(*fl));
	if (offcpu && n && is_kernel_frame(f[n - 1], fl[n - 1])) {
		size_t u = n;

		while (u > 0 && is_kernel_frame(f[u - 1], fl[u - 1]))
			u--;
		for (size_t k = n; k-- > u && pick < 0;)
			if (!memmem(f[k], fl[k], "schedule", 8))
				pick = (ssize_t)k;
		if (u > 0) { /* user frames, then the kernel frame that waited */
			if (pick >= 0) {
				f[u] = f[pick];
				fl[u] = fl[pick];
				u++;
			}
			n = u;
		}
	}
	for (first = n; first > 0; first--) {
		size_t add = fl[first - 1] + (first < n);

		if (first < n && used + add > keep)
			break;
		used += add;
	}
	for (size_t k = first; k < n && out + fl[k] + 2 < len; k++) {
		if (k > first)
			buf[out++] = ';';
		memcpy(buf + out, f[k], fl[k]);
		out += fl[k];
	}
	buf[out] = 0;
	return buf;
}

static const char *stack_kind(const struct model_tail_stack *st)
{
	return st->oncpu ? "oncpu" : "offcpu";
}

void tail__print(FILE *out, const struct model *m)
{
	char buf[256], line[1024];

	if (!m->tail.n)
		return;
	fprintf(out, "\nTail cycles (above median + 3 MAD and > 10%% above the median):\n");
	for (size_t i = 0; i < m->tail.n; i++) {
		const struct model_tail_cycle *t = &m->tail.v[i];

		fprintf(out, "  cycle %u: %.1f ms, +%.1f ms over the median %.1f ms\n", t->cycle, t->ms, t->excess_ms,
			t->median_ms);
		for (size_t c = 0; c < m->ncycles; c++)
			if (m->cycles[c].index == t->cycle && m->cycles[c].split.present)
				fprintf(out, "    split (main thread): %s\n",
					split_view__line(&m->cycles[c].split, line, sizeof(line)));
		for (size_t j = 0; j < t->causes.n; j++) {
			const struct model_tail_cause *cz = &t->causes.v[j];

			cause_text(buf, sizeof(buf), m, cz);
			fprintf(out, "    - %s\n", buf);
			for (size_t k = 0; k < cz->stacks.n; k++)
				fprintf(out, "        +%.1f ms %s: %s\n", cz->stacks.v[k].excess_ms, stack_kind(&cz->stacks.v[k]),
					stack_line(line, sizeof(line), name_of(m, cz->stacks.v[k].stack),
						   !cz->stacks.v[k].oncpu, 100));
		}
		if (!t->causes.n)
			fprintf(out, "    - no figure grew enough to name a cause\n");
	}
}

void tail__html(FILE *out, const struct model *m)
{
	char buf[256], line[1024];

	if (!m->tail.n)
		return;
	fprintf(out, "<h2>Tail cycles</h2>\n<p>Cycles above median + 3&middot;MAD and more than 10%% above the "
		"median, and what grew in them against the median cycle.</p>\n<table><tr><th>cycle</th><th>ms</th>"
		"<th>excess ms</th><th>causes</th></tr>\n");
	for (size_t i = 0; i < m->tail.n; i++) {
		const struct model_tail_cycle *t = &m->tail.v[i];

		fprintf(out, "<tr><td>%u</td><td>%.2f</td><td>%.2f</td><td><ul>", t->cycle, t->ms, t->excess_ms);
		for (size_t j = 0; j < t->causes.n; j++) {
			const struct model_tail_cause *cz = &t->causes.v[j];

			cause_text(buf, sizeof(buf), m, cz);
			fprintf(out, "<li>");
			html_text__escape(out, buf);
			for (size_t k = 0; k < cz->stacks.n; k++) {
				fprintf(out, "<br><small>+%.1f ms %s: <code>", cz->stacks.v[k].excess_ms,
					stack_kind(&cz->stacks.v[k]));
				html_text__escape(out, stack_line(line, sizeof(line), name_of(m, cz->stacks.v[k].stack),
								    !cz->stacks.v[k].oncpu, 160));
				fprintf(out, "</code></small>");
			}
			fprintf(out, "</li>");
		}
		fprintf(out, "</ul></td></tr>\n");
	}
	fprintf(out, "</table>\n");
}
