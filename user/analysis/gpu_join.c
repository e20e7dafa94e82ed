// SPDX-License-Identifier: BSD-2-Clause
/* GPU activity joined to the cycles and phases (gpu_join.h).
 *
 * Windows are sets of disjoint intervals on the tracer's clock: a cycle
 * [start_ns, end_ns]; a phase in a cycle, the union of its calls clipped to
 * the cycle; the run, [run.start_ns, run.end_ns]; a phase over the run, the
 * union of its calls. In a window, per device:
 *   busy   = the union of the kernels attributed to it (launched in it),
 *            whole, even where one runs past the window's end;
 *   active = the union of all the device's work, whoever launched it,
 *            clipped to the window; idle = window - active;
 *   idle gaps = the window less the active intervals; the on-CPU samples
 *            of the launching threads in them name the host work that kept
 *            the GPU waiting (idle_host_ms, idle_stacks);
 *   sync   = the launching threads' synchronize calls, clipped, per thread. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_join.h"
#include "folded.h"

#define TOP_KERNELS 10
#define TOP_IDLE_STACKS 5

/* The runtime and driver callback ids of the synchronize calls
 * (CUPTI_RUNTIME_TRACE_CBID_* in cupti_runtime_cbid.h and
 * CUPTI_DRIVER_TRACE_CBID_* in cupti_driver_cbid.h, CUDA 13.0; the ids are
 * stable across releases). The injection library sends only launch, copy,
 * memset and these. */
static const uint32_t sync_runtime[] = {
	126, /* cudaThreadSynchronize_v3020 */
	131, /* cudaStreamSynchronize_v3020 */
	137, /* cudaEventSynchronize_v3020 */
	165, /* cudaDeviceSynchronize_v3020 */
	239, /* cudaStreamSynchronize_ptsz_v7000 */
};
static const uint32_t sync_driver[] = {
	17,  /* cuCtxSynchronize */
	121, /* cuEventSynchronize */
	126, /* cuStreamSynchronize */
	440, /* cuStreamSynchronize_ptsz */
	800, /* cuCtxSynchronize_v2 */
};

bool gpu_join__is_sync(uint32_t domain, uint32_t cbid)
{
	const uint32_t *v = domain == IT_GPU_API_RUNTIME ? sync_runtime : domain == IT_GPU_API_DRIVER ? sync_driver : NULL;
	size_t n = domain == IT_GPU_API_RUNTIME ? sizeof(sync_runtime) / sizeof(*v) : sizeof(sync_driver) / sizeof(*v);

	for (size_t i = 0; v && i < n; i++)
		if (v[i] == cbid)
			return true;
	return false;
}

/* ---- the clock ---- */

void gpu_join__fit(const struct model_gpu_calib *pairs, size_t n, pid_t pid, struct gpu_clock_fit *out)
{
	const struct model_gpu_calib *first = NULL, *last = NULL;

	memset(out, 0, sizeof(*out));
	out->slope = 1;
	for (size_t i = 0; i < n; i++) {
		if (pairs[i].pid != pid)
			continue;
		out->clock.pairs++;
		if (!first || pairs[i].cupti_ns < first->cupti_ns)
			first = &pairs[i];
		if (!last || pairs[i].cupti_ns > last->cupti_ns)
			last = &pairs[i];
	}
	if (!first)
		return;
	out->calibrated = out->clock.calibrated = true;
	out->cupti0 = first->cupti_ns;
	out->mono0 = first->mono_ns;
	out->clock.offset_ns = (double)(int64_t)(first->mono_ns - first->cupti_ns);
	if (last->cupti_ns > first->cupti_ns) {
		double span = (double)(last->cupti_ns - first->cupti_ns);
		double drift = (double)(int64_t)((last->mono_ns - last->cupti_ns) - (first->mono_ns - first->cupti_ns));

		out->slope = (double)(int64_t)(last->mono_ns - first->mono_ns) / span;
		out->clock.drift_us = drift / 1e3;
		out->clock.drift_ppm = drift / span * 1e6;
	}
}

uint64_t gpu_join__map(const struct gpu_clock_fit *f, uint64_t cupti_ns)
{
	if (!f->calibrated)
		return cupti_ns;
	return f->mono0 + (uint64_t)llround((double)(int64_t)(cupti_ns - f->cupti0) * f->slope);
}

/* ---- intervals ---- */

struct iv {
	uint64_t a, b;
};

typedef VEC_OF(struct iv) iv_vec;

static int iv_cmp(const void *x, const void *y)
{
	const struct iv *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->b > q->b) - (p->b < q->b);
}

static int iv_add(iv_vec *v, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	if (VEC_RESERVE(v->v, v->cap, v->n, 16))
		return -ENOMEM;
	v->v[v->n++] = (struct iv){ a, b };
	return 0;
}

/* Sorted and merged into disjoint intervals. */
static void iv_merge(iv_vec *v)
{
	size_t w = 0;

	if (v->n)
		qsort(v->v, v->n, sizeof(*v->v), iv_cmp);
	for (size_t i = 0; i < v->n; i++) {
		if (w && v->v[i].a <= v->v[w - 1].b) {
			if (v->v[i].b > v->v[w - 1].b)
				v->v[w - 1].b = v->v[i].b;
		} else {
			v->v[w++] = v->v[i];
		}
	}
	v->n = w;
}

static double iv_ms(const iv_vec *v)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < v->n; i++)
		ns += v->v[i].b - v->v[i].a;
	return ns / 1e6;
}

/* a less b (both sorted and disjoint) into out. */
static int iv_subtract(const iv_vec *a, const iv_vec *b, iv_vec *out)
{
	int err = 0;

	for (size_t i = 0, k = 0; i < a->n && !err; i++) {
		uint64_t at = a->v[i].a;

		while (k < b->n && b->v[k].b <= at)
			k++;
		for (size_t j = k; j < b->n && b->v[j].a < a->v[i].b && !err; j++) {
			err = iv_add(out, at, b->v[j].a);
			if (b->v[j].b > at)
				at = b->v[j].b;
		}
		if (!err && at < a->v[i].b)
			err = iv_add(out, at, a->v[i].b);
	}
	return err;
}

/* ---- the join's indexes ---- */

struct jctx {
	struct model *m;
	struct model_gpu_op *ops;       /* sorted by (device, start_ns) */
	size_t nops;
	uint64_t max_op_ns;             /* the longest op: how far back a window looks */
	uint32_t *cycle_order;          /* cycles by (pid, start_ns) */
	uint32_t *call_by_tid;          /* calls by (tid, entry_ns) */
	uint32_t *call_by_tgid;         /* calls by (tgid, entry_ns) */
	uint64_t max_call_ns;
	uint32_t *sample_by_tid;        /* trace samples by (tid, ts_ns) */
	uint32_t *off_by_tid;           /* blocked intervals by (tid, start_ns) */
	uint64_t max_off_ns;
	struct sync_iv *sync;           /* sync calls, tracer clock, by (tid, start) */
	size_t nsync;
	uint64_t max_sync_ns;
	uint32_t *by_cycle;             /* op indexes by (cycle, device, start) */
	size_t nby_cycle;
	uint32_t *devices;
	size_t ndevices, capdevices;
	double period_ms;               /* one on-CPU sample's worth */
};

/* A launching thread's synchronize call, on the tracer's clock. */
struct sync_iv {
	pid_t tid;
	uint64_t a, b;
};

static int cmp_sync(const void *x, const void *y)
{
	const struct sync_iv *p = x, *q = y;

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return (p->a > q->a) - (p->a < q->a);
}

/* The first of tid's synchronize calls that may end after `from`: the
 * calls are sorted by (tid, start), none longer than max_sync_ns. */
static size_t sync_first(const struct jctx *x, pid_t tid, uint64_t from)
{
	uint64_t back = from > x->max_sync_ns ? from - x->max_sync_ns : 0;
	size_t lo = 0, hi = x->nsync;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->sync[mid].tid < tid || (x->sync[mid].tid == tid && x->sync[mid].a < back))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_cycle(const void *x, const void *y, void *arg)
{
	const struct model_cycle *c = arg, *p = &c[*(const uint32_t *)x], *q = &c[*(const uint32_t *)y];

	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return (p->start_ns > q->start_ns) - (p->start_ns < q->start_ns);
}

static int cmp_call_tid(const void *x, const void *y, void *arg)
{
	const struct model_phase_call *c = arg, *p = &c[*(const uint32_t *)x], *q = &c[*(const uint32_t *)y];

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return (p->entry_ns > q->entry_ns) - (p->entry_ns < q->entry_ns);
}

static int cmp_call_tgid(const void *x, const void *y, void *arg)
{
	const struct model_phase_call *c = arg, *p = &c[*(const uint32_t *)x], *q = &c[*(const uint32_t *)y];

	if (p->tgid != q->tgid)
		return p->tgid < q->tgid ? -1 : 1;
	return (p->entry_ns > q->entry_ns) - (p->entry_ns < q->entry_ns);
}

static int cmp_sample(const void *x, const void *y, void *arg)
{
	const struct model_trace_sample *s = arg, *p = &s[*(const uint32_t *)x], *q = &s[*(const uint32_t *)y];

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return (p->ts_ns > q->ts_ns) - (p->ts_ns < q->ts_ns);
}

static int cmp_off(const void *x, const void *y, void *arg)
{
	const struct model_offcpu_interval *s = arg, *p = &s[*(const uint32_t *)x], *q = &s[*(const uint32_t *)y];

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return (p->start_ns > q->start_ns) - (p->start_ns < q->start_ns);
}

static int cmp_op(const void *x, const void *y)
{
	const struct model_gpu_op *p = x, *q = y;

	if (p->device != q->device)
		return p->device < q->device ? -1 : 1;
	if (p->start_ns != q->start_ns)
		return p->start_ns < q->start_ns ? -1 : 1;
	return (p->end_ns > q->end_ns) - (p->end_ns < q->end_ns);
}

static int cmp_by_cycle(const void *x, const void *y, void *arg)
{
	const struct model_gpu_op *o = arg, *p = &o[*(const uint32_t *)x], *q = &o[*(const uint32_t *)y];

	if (p->cycle != q->cycle)
		return p->cycle < q->cycle ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1; /* ops are in (device, start) order */
}

struct api_ref {
	pid_t pid;
	uint32_t correlation;
	uint32_t i;
};

static int cmp_api(const void *x, const void *y)
{
	const struct api_ref *p = x, *q = y;

	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	if (p->correlation != q->correlation)
		return p->correlation < q->correlation ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

/* API records by (pid, tid, start) */
static int cmp_api_thread(const void *x, const void *y, void *arg)
{
	const struct model_gpu_api *p = &((const struct model_gpu_api *)arg)[*(const uint32_t *)x],
				   *q = &((const struct model_gpu_api *)arg)[*(const uint32_t *)y];

	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return (p->start_ns > q->start_ns) - (p->start_ns < q->start_ns);
}

static uint32_t *index_of(size_t n, int (*cmp)(const void *, const void *, void *), void *arg)
{
	uint32_t *ix = calloc(n ? n : 1, sizeof(*ix)); /* calloc: clang-analyzer sees it set */

	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	if (n)
		qsort_r(ix, n, sizeof(*ix), cmp, arg);
	return ix;
}

/* The cycle of pid whose [start_ns, end_ns] holds t; -1 none. */
static int32_t cycle_at(const struct jctx *x, pid_t pid, uint64_t t)
{
	const struct model_cycle *c = x->m->cycles;
	size_t lo = 0, hi = x->m->ncycles;

	/* the first cycle after (pid, t) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct model_cycle *p = &c[x->cycle_order[mid]];

		if (p->pid < pid || (p->pid == pid && p->start_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && c[x->cycle_order[lo - 1]].pid == pid && c[x->cycle_order[lo - 1]].end_ns >= t)
		return (int32_t)x->cycle_order[lo - 1];
	return -1;
}

/* The phase of the outermost call of (tgid, tid) holding t; 0 none. */
static uint32_t phase_at(const struct jctx *x, pid_t tgid, pid_t tid, uint64_t t)
{
	const struct model_phase_call *c = x->m->calls;
	size_t lo = 0, hi = x->m->ncalls;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct model_phase_call *p = &c[x->call_by_tid[mid]];

		if (p->tid < tid || (p->tid == tid && p->entry_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* outermost calls of one thread do not overlap: the last one entered */
	if (lo) {
		const struct model_phase_call *p = &c[x->call_by_tid[lo - 1]];

		if (p->tid == tid && p->tgid == tgid && p->exit_ns >= t)
			return p->phase;
	}
	return 0;
}

/* ---- the figures of one window ---- */

struct name_ms {
	int32_t name;
	double ms;
};

static int cmp_name(const void *x, const void *y)
{
	const struct name_ms *p = x, *q = y;

	return (p->name > q->name) - (p->name < q->name);
}

static int cmp_total(const void *x, const void *y)
{
	const struct model_gpu_kernel_total *p = x, *q = y;

	if (p->ms != q->ms)
		return p->ms > q->ms ? -1 : 1;
	return (p->name > q->name) - (p->name < q->name);
}

static int top_kernels(struct model_gpu_figures *f, const struct model_gpu_op *ops, const uint32_t *attr, size_t n)
{
	struct name_ms *v = malloc((n ? n : 1) * sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ops[attr[i]].what == MODEL_GPU_KERNEL)
			v[k++] = (struct name_ms){ ops[attr[i]].name, (ops[attr[i]].end_ns - ops[attr[i]].start_ns) / 1e6 };
	if (k)
		qsort(v, k, sizeof(*v), cmp_name);
	for (size_t i = 0; i < k; i++) {
		struct model_gpu_kernel_total *t;

		if (f->top.n && f->top.v[f->top.n - 1].name == v[i].name) {
			t = &f->top.v[f->top.n - 1];
		} else {
			if (VEC_RESERVE(f->top.v, f->top.cap, f->top.n, 8)) {
				free(v);
				return -ENOMEM;
			}
			t = &f->top.v[f->top.n++];
			*t = (struct model_gpu_kernel_total){ .name = v[i].name };
		}
		t->count++;
		t->ms += v[i].ms;
	}
	free(v);
	if (f->top.n)
		qsort(f->top.v, f->top.n, sizeof(*f->top.v), cmp_total);
	if (f->top.n > TOP_KERNELS)
		f->top.n = TOP_KERNELS;
	return 0;
}

static int cmp_stack(const void *x, const void *y)
{
	return (*(const int32_t *)x > *(const int32_t *)y) - (*(const int32_t *)x < *(const int32_t *)y);
}

static int cmp_idle_stack(const void *x, const void *y)
{
	const struct model_gpu_idle_stack *p = x, *q = y;

	if (p->samples != q->samples)
		return p->samples > q->samples ? -1 : 1;
	return (p->stack > q->stack) - (p->stack < q->stack);
}

/* The time in gaps (sorted, disjoint) when a host thread ran host code:
 * neither inside a synchronize call nor blocked (the off-CPU intervals of
 * --call-graph dwarf); exact where those are recorded. */
static int host_running_ms(const struct jctx *x, const pid_t *tids, size_t ntids, const iv_vec *gaps, double *out)
{
	const struct model_offcpu_interval *o = x->m->offcpu_intervals;
	iv_vec waits = { 0 }, run = { 0 };
	int err = 0;

	*out = 0;
	if (!gaps->n)
		return 0;
	for (size_t t = 0; t < ntids && !err; t++) {
		uint64_t from = gaps->v[0].a, to = gaps->v[gaps->n - 1].b;
		uint64_t back = from > x->max_off_ns ? from - x->max_off_ns : 0;
		size_t lo = 0, hi = x->m->noffcpu_intervals;

		waits.n = 0;
		for (size_t i = sync_first(x, tids[t], from); i < x->nsync && x->sync[i].tid == tids[t] &&
		     x->sync[i].a < to && !err; i++)
			if (x->sync[i].b > from)
				err = iv_add(&waits, x->sync[i].a, x->sync[i].b);
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct model_offcpu_interval *p = &o[x->off_by_tid[mid]];

			if (p->tid < tids[t] || (p->tid == tids[t] && p->start_ns < back))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < x->m->noffcpu_intervals && !err; lo++) {
			const struct model_offcpu_interval *p = &o[x->off_by_tid[lo]];

			if (p->tid != tids[t] || p->start_ns >= to)
				break;
			if (p->end_ns > from)
				err = iv_add(&waits, p->start_ns, p->end_ns);
		}
		iv_merge(&waits);
		if (!err)
			err = iv_subtract(gaps, &waits, &run);
	}
	iv_merge(&run);
	*out = iv_ms(&run);
	free(waits.v);
	free(run.v);
	return err;
}

/* The launching threads' samples in the idle gaps. */
static int idle_host(const struct jctx *x, const pid_t *tids, size_t ntids, const iv_vec *gaps, bool stacks,
		     struct model_gpu_figures *f)
{
	const struct model_trace_sample *s = x->m->trace_samples;
	VEC_OF(int32_t) hit = { 0 };
	uint64_t samples = 0;
	int err = 0;

	for (size_t t = 0; t < ntids && !err; t++)
		for (size_t g = 0; g < gaps->n && !err; g++) {
			size_t lo = 0, hi = x->m->ntrace_samples;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				const struct model_trace_sample *p = &s[x->sample_by_tid[mid]];

				if (p->tid < tids[t] || (p->tid == tids[t] && p->ts_ns < gaps->v[g].a))
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < x->m->ntrace_samples; lo++) {
				const struct model_trace_sample *p = &s[x->sample_by_tid[lo]];

				if (p->tid != tids[t] || p->ts_ns >= gaps->v[g].b)
					break;
				samples++;
				if (stacks && p->stack >= 0) {
					if (VEC_RESERVE(hit.v, hit.cap, hit.n, 64)) {
						err = -ENOMEM;
						break;
					}
					hit.v[hit.n++] = p->stack;
				}
			}
		}
	(void)samples;
	if (!err)
		err = host_running_ms(x, tids, ntids, gaps, &f->idle_host_ms);
	if (hit.n)
		qsort(hit.v, hit.n, sizeof(*hit.v), cmp_stack);
	for (size_t i = 0; i < hit.n && !err; i++) {
		if (f->idle_stacks.n && f->idle_stacks.v[f->idle_stacks.n - 1].stack == hit.v[i]) {
			f->idle_stacks.v[f->idle_stacks.n - 1].samples++;
			continue;
		}
		if (VEC_RESERVE(f->idle_stacks.v, f->idle_stacks.cap, f->idle_stacks.n, 8))
			err = -ENOMEM;
		else
			f->idle_stacks.v[f->idle_stacks.n++] = (struct model_gpu_idle_stack){ .stack = hit.v[i], .samples = 1 };
	}
	free(hit.v);
	if (f->idle_stacks.n)
		qsort(f->idle_stacks.v, f->idle_stacks.n, sizeof(*f->idle_stacks.v), cmp_idle_stack);
	if (f->idle_stacks.n > TOP_IDLE_STACKS)
		f->idle_stacks.n = TOP_IDLE_STACKS;
	for (size_t i = 0; i < f->idle_stacks.n; i++)
		f->idle_stacks.v[i].ms = f->idle_stacks.v[i].samples * x->period_ms;
	return err;
}

/* The launching threads' time in synchronize calls, clipped to the window. */
static int sync_ms(const struct jctx *x, const pid_t *tids, size_t ntids, const iv_vec *win, double *out)
{
	iv_vec u = { 0 };
	int err = 0;

	*out = 0;
	if (!win->n)
		return 0;
	for (size_t t = 0; t < ntids && !err; t++) {
		uint64_t from = win->v[0].a, to = win->v[win->n - 1].b;

		u.n = 0;
		for (size_t i = sync_first(x, tids[t], from); i < x->nsync && x->sync[i].tid == tids[t] &&
		     x->sync[i].a < to && !err; i++) {
			const struct sync_iv *c = &x->sync[i];
			size_t lo = 0, hi = win->n;

			/* the first window that ends after the call starts */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (win->v[mid].b <= c->a)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t w = lo; w < win->n && win->v[w].a < c->b && !err; w++)
				err = iv_add(&u, c->a > win->v[w].a ? c->a : win->v[w].a, c->b < win->v[w].b ? c->b : win->v[w].b);
		}
		iv_merge(&u);
		*out += iv_ms(&u);
	}
	free(u.v);
	return err;
}

/* The figures of device dev over window win (disjoint, sorted), for the
 * ops attributed to it (attr: indexes in x->ops, all on dev). */
static int window_figures(const struct jctx *x, uint32_t dev, const iv_vec *win, const uint32_t *attr, size_t nattr,
			  const pid_t *host, size_t nhost, bool lists, struct model_gpu_figures *f)
{
	iv_vec busy = { 0 }, active = { 0 }, gaps = { 0 };
	pid_t *tids = malloc((nattr + nhost ? nattr + nhost : 1) * sizeof(*tids));
	size_t ntids = 0, lo = 0, hi = x->nops;
	int err = tids ? 0 : -ENOMEM;

	/* the host threads: those that launched work here, and (a phase) the
	 * threads that launched in its cycle, whose code the phase runs */
	for (size_t i = 0; tids && i < nhost; i++)
		tids[ntids++] = host[i];

	f->device = dev;
	f->window_ms = iv_ms(win);
	for (size_t i = 0; i < nattr && !err; i++) {
		const struct model_gpu_op *o = &x->ops[attr[i]];
		double ms = (o->end_ns - o->start_ns) / 1e6;
		bool seen = false;

		if (o->what == MODEL_GPU_KERNEL) {
			f->kernels++;
			err = iv_add(&busy, o->start_ns, o->end_ns);
		} else {
			struct model_gpu_dir_total *d = o->what == MODEL_GPU_SET ? &f->sets : &f->copies[o->dir];

			d->count++;
			d->bytes += o->bytes;
			d->ms += ms;
		}
		for (size_t k = 0; k < ntids && !seen; k++)
			seen = tids[k] == o->tid;
		if (o->tid && !seen)
			tids[ntids++] = o->tid;
	}
	iv_merge(&busy);
	f->busy_ms = iv_ms(&busy);
	/* all of the device's work, clipped: from the first op that may reach the window */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct model_gpu_op *o = &x->ops[mid];
		uint64_t from = win->n && win->v[0].a > x->max_op_ns ? win->v[0].a - x->max_op_ns : 0;

		if (o->device < dev || (o->device == dev && o->start_ns < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < x->nops && !err && win->n && x->ops[i].device == dev; i++) {
		const struct model_gpu_op *o = &x->ops[i];

		if (o->start_ns >= win->v[win->n - 1].b)
			break;
		for (size_t w = 0; w < win->n && !err; w++) {
			uint64_t a = o->start_ns > win->v[w].a ? o->start_ns : win->v[w].a;
			uint64_t b = o->end_ns < win->v[w].b ? o->end_ns : win->v[w].b;

			err = iv_add(&active, a, b);
		}
	}
	iv_merge(&active);
	f->active_ms = iv_ms(&active);
	f->idle_ms = f->window_ms - f->active_ms;
	/* the gaps: the window less the active intervals */
	for (size_t w = 0, k = 0; w < win->n && !err; w++) {
		uint64_t at = win->v[w].a;

		while (k < active.n && active.v[k].b <= at)
			k++;
		for (; k < active.n && active.v[k].a < win->v[w].b && !err; k++) {
			err = iv_add(&gaps, at, active.v[k].a);
			at = active.v[k].b;
			if (at >= win->v[w].b)
				break;
		}
		if (!err && at < win->v[w].b)
			err = iv_add(&gaps, at, win->v[w].b);
	}
	if (!err)
		err = idle_host(x, tids, ntids, &gaps, lists, f);
	if (!err)
		err = sync_ms(x, tids, ntids, win, &f->sync_ms);
	if (!err && lists)
		err = top_kernels(f, x->ops, attr, nattr);
	free(busy.v);
	free(active.v);
	free(gaps.v);
	free(tids);
	return err;
}

/* ---- windows ---- */

/* The calls of phase ph (of pid, or of every process with pid 0) within
 * [from, to], clipped and merged. */
static int phase_window(const struct jctx *x, pid_t pid, uint32_t ph, uint64_t from, uint64_t to, iv_vec *out)
{
	const struct model_phase_call *c = x->m->calls;
	uint64_t back = from > x->max_call_ns ? from - x->max_call_ns : 0;
	size_t lo = 0, hi = x->m->ncalls;
	int err = 0;

	out->n = 0;
	if (pid) {
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct model_phase_call *p = &c[x->call_by_tgid[mid]];

			if (p->tgid < pid || (p->tgid == pid && p->entry_ns < back))
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	for (size_t i = lo; i < x->m->ncalls && !err; i++) {
		const struct model_phase_call *p = &c[x->call_by_tgid[i]];

		if (pid && (p->tgid != pid || p->entry_ns > to))
			break;
		if (p->phase != ph)
			continue;
		err = iv_add(out, p->entry_ns > from ? p->entry_ns : from, p->exit_ns < to ? p->exit_ns : to);
	}
	iv_merge(out);
	return err;
}

static int add_figures(struct model_gpu_figures **v, size_t *n, size_t *cap, const struct model_gpu_figures *f)
{
	if (vec__reserve((void **)v, cap, *n, sizeof(**v), 8))
		return -ENOMEM;
	(*v)[(*n)++] = *f;
	return 0;
}

/* The figures of one window (phase 0) and of each phase in it, device by
 * device. ops: indexes of the ops attributed to the window, by (device, start). */
/* a ∩ b (both sorted and disjoint) into out. */
static int iv_intersect(const iv_vec *a, const iv_vec *b, iv_vec *out)
{
	int err = 0;

	out->n = 0;
	for (size_t i = 0, k = 0; i < a->n && k < b->n && !err;) {
		uint64_t lo = a->v[i].a > b->v[k].a ? a->v[i].a : b->v[k].a;
		uint64_t hi = a->v[i].b < b->v[k].b ? a->v[i].b : b->v[k].b;

		err = iv_add(out, lo, hi);
		if (a->v[i].b < b->v[k].b)
			i++;
		else
			k++;
	}
	return err;
}

/* within: the window as disjoint sorted intervals inside [from, to] (the
 * run's cycles); NULL: [from, to] whole. */
static int figures_for(const struct jctx *x, pid_t pid, uint64_t from, uint64_t to, const iv_vec *within,
		       const uint32_t *ops, size_t nops, const bool *phases, bool lists, struct model_gpu_figures **v,
		       size_t *n, size_t *cap)
{
	iv_vec win = { 0 }, pwin = { 0 }, whole = { 0 };
	uint32_t *sub = malloc((nops ? nops : 1) * sizeof(*sub));
	pid_t *tids = malloc((nops ? nops : 1) * sizeof(*tids));
	size_t ntids = 0;
	int err = sub && tids ? 0 : -ENOMEM;

	for (size_t i = 0; !err && within && i < within->n; i++)
		err = iv_add(&win, within->v[i].a, within->v[i].b);
	if (!err && !within)
		err = iv_add(&win, from, to);

	for (size_t d = 0; d < x->ndevices && !err; d++) {
		uint32_t dev = x->devices[d];
		size_t a = 0, b;
		struct model_gpu_figures f = { 0 };

		while (a < nops && x->ops[ops[a]].device != dev)
			a++;
		for (b = a; b < nops && x->ops[ops[b]].device == dev; b++)
			;
		ntids = 0;
		for (size_t i = a; i < b; i++) {
			bool seen = false;

			for (size_t k = 0; k < ntids && !seen; k++)
				seen = tids[k] == x->ops[ops[i]].tid;
			if (x->ops[ops[i]].tid && !seen)
				tids[ntids++] = x->ops[ops[i]].tid;
		}
		err = window_figures(x, dev, &win, ops + a, b - a, NULL, 0, lists, &f);
		if (!err && (b > a || f.active_ms > 0))
			err = add_figures(v, n, cap, &f);
		else
			model_gpu__figures_free(&f);
		for (uint32_t ph = 1; ph < IT_MAX_PHASES && !err; ph++) {
			size_t ns = 0;

			for (size_t i = a; i < b; i++)
				if (x->ops[ops[i]].phase == ph)
					sub[ns++] = ops[i];
			if (!phases[ph] && !ns)
				continue;
			err = phase_window(x, pid, ph, from, to, &pwin);
			if (!err && within) {
				err = iv_intersect(&pwin, within, &whole);
				if (!err) {
					iv_vec t = pwin;

					pwin = whole;
					whole = t;
				}
			}
			if (err || (!pwin.n && !ns))
				continue;
			f = (struct model_gpu_figures){ .phase = ph };
			err = window_figures(x, dev, &pwin, sub, ns, tids, ntids, lists, &f);
			f.phase = ph;
			if (!err && (ns || f.active_ms > 0))
				err = add_figures(v, n, cap, &f);
			else
				model_gpu__figures_free(&f);
		}
	}
	free(win.v);
	free(pwin.v);
	free(whole.v);
	free(sub);
	free(tids);
	return err;
}

/* ---- the join ---- */

/* A launch event (the cuda preset's uprobe, tracer clock) is sent at the
 * launch call's entry, before the function runs; the thread's next one
 * only after the call returned and its next launch was entered and its
 * stack walked (microseconds later). So a call's own event is the last
 * one of its thread before the call's end (CUPTI's API record, mapped to
 * the tracer's clock, good to LAUNCH_AFTER_NS): measured on the fake
 * driver, the event closest to the entry was the next launch's for 17 of
 * 60 kernels whose next launch was another function's. It comes after the
 * thread's previous call started (that call's own event came before it),
 * however long the thread was preempted between the probe and the call:
 * a fixed 1 ms before the entry lost 1 launch in about 100 on a loaded
 * 2-CPU machine. */
#define LAUNCH_AFTER_NS 2000ull

static int cmp_launch_key(pid_t tgid, pid_t tid, uint64_t ts, const struct model_gpu_launch *l)
{
	if (tgid != l->tgid)
		return tgid < l->tgid ? -1 : 1;
	if (tid != l->tid)
		return tid < l->tid ? -1 : 1;
	return (ts > l->ts_ns) - (ts < l->ts_ns);
}

int32_t gpu_join__launch_stack(const struct model_gpu_activity *a, pid_t tgid, pid_t tid, uint64_t after_ns,
			       uint64_t end_ns)
{
	const struct model_gpu_launch *v = a->launches.v;
	size_t lo = 0, hi = a->launches.n;
	int32_t stack = -1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_launch_key(tgid, tid, after_ns, &v[mid]) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the last one in (after_ns, end_ns + LAUNCH_AFTER_NS] */
	for (; lo < a->launches.n && v[lo].tgid == tgid && v[lo].tid == tid && v[lo].ts_ns <= end_ns + LAUNCH_AFTER_NS;
	     lo++)
		stack = v[lo].stack;
	return stack;
}

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static int32_t demangled(struct model *m, int32_t mangled)
{
	const char *s = model__name(m, mangled);
	char *d;
	int status = -1;
	int32_t id;

	if (!s)
		return -1;
	d = __cxa_demangle(s, NULL, NULL, &status);
	id = model__intern(m, d && !status ? d : s);
	free(d);
	return id;
}

/* gpu.folded: PHASE;kernel, or PHASE;LAUNCH STACK;kernel where the cuda
 * preset's uprobe saw the launch, its stack Python or native (the phase
 * stays the root: per-phase views keep working). */
static int fold(struct model *m, const struct model_gpu_op *o)
{
	const char *kernel = model__name(m, o->name), *phase, *launch = NULL;
	char *stack;
	int err;

	phase = o->phase && m->phase_names[o->phase] ? m->phase_names[o->phase] : "[no phase]";
	if (o->launch_stack >= 0)
		launch = model__name(m, o->launch_stack);
	if (asprintf(&stack, "%s;%s%s%s", phase, launch ? launch : "", launch ? ";" : "",
		     kernel ? kernel : "[unknown kernel]") < 0)
		return -ENOMEM;
	err = folded__add(&m->gpu_activity.folded, stack, (o->end_ns - o->start_ns + 500) / 1000);
	free(stack);
	return err;
}

static void jctx_free(struct jctx *x)
{
	free(x->cycle_order);
	free(x->call_by_tid);
	free(x->call_by_tgid);
	free(x->sample_by_tid);
	free(x->off_by_tid);
	free(x->sync);
	free(x->by_cycle);
	free(x->devices);
}

/* Each op on the tracer's clock, joined to its launch call, cycle and phase. */
/* The clock fit of process p; one without calibration (CUPTI's clock
 * taken as is) when p sent none. */
static const struct gpu_clock_fit *fit_of(const pid_t *pids, const struct gpu_clock_fit *fits, size_t n, pid_t p)
{
	static const struct gpu_clock_fit none;

	for (size_t k = 0; pids && fits && k < n; k++)
		if (pids[k] == p)
			return &fits[k];
	return &none;
}

static int join_ops(struct jctx *x)
{
	struct model *m = x->m;
	struct model_gpu_activity *a = &m->gpu_activity;
	struct gpu_clock_fit *fits = NULL;
	pid_t *pids = NULL;
	size_t npids = 0;
	struct api_ref *refs = calloc(a->api.n ? a->api.n : 1, sizeof(*refs));
	uint32_t *by_thread = NULL, *prev = NULL;
	int err = refs ? 0 : -ENOMEM;

	/* one fit per process that sent anything */
	for (size_t i = 0; !err && i < a->calib.n + a->ops.n + a->api.n; i++) {
		pid_t p = i < a->calib.n ? a->calib.v[i].pid
			  : i < a->calib.n + a->ops.n ? a->ops.v[i - a->calib.n].tgid
						       : a->api.v[i - a->calib.n - a->ops.n].pid;
		size_t k = 0;

		while (k < npids && pids[k] != p)
			k++;
		if (k < npids)
			continue;
		if (VEC_RESIZE(pids, npids + 1) || VEC_RESIZE(fits, npids + 1)) {
			err = -ENOMEM;
			break;
		}
		pids[npids] = p;
		gpu_join__fit(a->calib.v, a->calib.n, p, &fits[npids]);
		/* the activity's clock: the process with the most pairs (the first on a tie) */
		if (fits[npids].clock.pairs > a->clock.pairs)
			a->clock = fits[npids].clock;
		npids++;
	}
	for (size_t i = 0; !err && i < a->api.n; i++) {
		const struct gpu_clock_fit *f = fit_of(pids, fits, npids, a->api.v[i].pid);

		refs[i] = (struct api_ref){ a->api.v[i].pid, a->api.v[i].correlation, (uint32_t)i };
		if (gpu_join__is_sync(a->api.v[i].domain, a->api.v[i].cbid)) {
			struct sync_iv *c = &x->sync[x->nsync++];

			*c = (struct sync_iv){ a->api.v[i].tid, gpu_join__map(f, a->api.v[i].start_ns),
					       gpu_join__map(f, a->api.v[i].end_ns) };
			if (c->b > c->a && c->b - c->a > x->max_sync_ns)
				x->max_sync_ns = c->b - c->a;
		}
	}
	if (!err && a->api.n)
		qsort(refs, a->api.n, sizeof(*refs), cmp_api);
	/* each call's previous completed call on its thread (not one that
	 * encloses it: a runtime call around the driver's): the bound of its
	 * launch event */
	by_thread = err ? NULL : index_of(a->api.n, cmp_api_thread, a->api.v);
	prev = err ? NULL : calloc(a->api.n ? a->api.n : 1, sizeof(*prev)); /* calloc: clang-analyzer sees it set */
	if (!err && (!by_thread || !prev))
		err = -ENOMEM;
	for (size_t k = 0; !err && k < a->api.n; k++) {
		const struct model_gpu_api *c = &a->api.v[by_thread[k]];
		size_t j = k;

		prev[by_thread[k]] = UINT32_MAX;
		while (j-- > 0) {
			const struct model_gpu_api *p = &a->api.v[by_thread[j]];

			if (p->pid != c->pid || p->tid != c->tid)
				break;
			if (p->end_ns < c->start_ns) {
				prev[by_thread[k]] = by_thread[j];
				break;
			}
		}
	}
	a->unattributed = 0;
	for (size_t i = 0; !err && i < a->ops.n; i++) {
		struct model_gpu_op *o = &a->ops.v[i];
		const struct gpu_clock_fit *f = fit_of(pids, fits, npids, o->tgid);
		struct api_ref key = { o->tgid, o->correlation, 0 };
		size_t lo = 0, hi = a->api.n;

		o->start_ns = gpu_join__map(f, o->cupti_start_ns);
		o->end_ns = gpu_join__map(f, o->cupti_end_ns);
		o->tid = 0;
		o->launch_ns = 0;
		o->launch_cbid = 0;
		o->cycle = -1;
		o->phase = 0;
		o->launch_stack = -1;
		if (o->what == MODEL_GPU_KERNEL)
			o->name = o->mangled >= 0 ? demangled(m, o->mangled) : -1;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cmp_api(&refs[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < a->api.n && refs[lo].pid == o->tgid && refs[lo].correlation == o->correlation) {
			const struct model_gpu_api *c = &a->api.v[refs[lo].i];

			o->tid = c->tid;
			o->launch_ns = gpu_join__map(f, c->start_ns);
			o->launch_cbid = c->cbid;
			o->cycle = cycle_at(x, o->tgid, o->launch_ns);
			o->phase = phase_at(x, o->tgid, o->tid, o->launch_ns);
			o->launch_stack = gpu_join__launch_stack(
				a, o->tgid, o->tid,
				prev[refs[lo].i] == UINT32_MAX ? 0 : gpu_join__map(f, a->api.v[prev[refs[lo].i]].start_ns),
				gpu_join__map(f, c->end_ns));
		} else {
			a->unattributed++;
		}
	}
	free(refs);
	free(by_thread);
	free(prev);
	free(pids);
	free(fits);
	return err;
}

/* ---- sampling windows ---- */

/* Whether activity was on only in windows (a window closed), and for each
 * cycle whether it lies whole inside a window of its process: its
 * launches were all recorded. Always on: every cycle recorded. */
static void sampling_windows(struct model *m, bool *recorded)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	a->sampling = false;
	a->cycles_recorded = 0;
	a->recorded_ms = 0;
	a->nwindows = a->windows.n;
	for (size_t i = 0; i < a->windows.n; i++)
		a->sampling = a->sampling || a->windows.v[i].end_ns;
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];
		bool in = !a->sampling;

		for (size_t k = 0; !in && k < a->windows.n; k++) {
			const struct model_gpu_window *w = &a->windows.v[k];

			in = w->pid == c->pid && c->start_ns >= w->start_ns && (!w->end_ns || c->end_ns <= w->end_ns);
		}
		recorded[i] = in;
	}
}

/* The windows of every process inside [from, to], merged. */
static int windows_within(const struct model_gpu_activity *a, uint64_t from, uint64_t to, iv_vec *out)
{
	int err = 0;

	for (size_t i = 0; !err && i < a->windows.n; i++) {
		uint64_t s = a->windows.v[i].start_ns, e = a->windows.v[i].end_ns ? a->windows.v[i].end_ns : to;

		s = s > from ? s : from;
		e = e < to ? e : to;
		if (e > s)
			err = iv_add(out, s, e);
	}
	iv_merge(out);
	return err;
}

int gpu_join__derive(struct model *m)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	struct jctx x = { .m = m };
	bool phases[IT_MAX_PHASES] = { false };
	uint32_t *all = NULL;
	size_t nall = 0;
	iv_vec cycles = { 0 }, windows = { 0 };
	bool *recorded = NULL;
	int hz = m->samples.requested_hz > 0 ? m->samples.requested_hz : m->run.asked.frequency;
	int err = 0;

	model_gpu__activity_clear_derived(a);
	a->clock = (struct model_gpu_clock){ 0 };
	if (!a->ops.n && !a->calib.n && !a->api.n)
		return 0;
	recorded = calloc(m->ncycles ? m->ncycles : 1, sizeof(*recorded)); /* calloc: clang-analyzer sees it set */
	if (!recorded) {
		err = -ENOMEM;
		goto out;
	}
	sampling_windows(m, recorded);
	/* kernel times replace the cycles' NVML busy figures (side concern);
	 * without a kernel, and in the cycles no window recorded, those stay */
	for (size_t i = 0; a->ops.n && i < m->ncycles; i++)
		if (recorded[i])
			model_gpu__cycle_free(&m->cycles[i].gpu);
	x.period_ms = hz > 0 ? 1000.0 / hz : 0;
	x.cycle_order = index_of(m->ncycles, cmp_cycle, m->cycles);
	x.call_by_tid = index_of(m->ncalls, cmp_call_tid, m->calls);
	x.call_by_tgid = index_of(m->ncalls, cmp_call_tgid, m->calls);
	x.sample_by_tid = index_of(m->ntrace_samples, cmp_sample, m->trace_samples);
	x.off_by_tid = index_of(m->noffcpu_intervals, cmp_off, m->offcpu_intervals);
	for (size_t i = 0; i < m->noffcpu_intervals; i++)
		if (m->offcpu_intervals[i].end_ns - m->offcpu_intervals[i].start_ns > x.max_off_ns)
			x.max_off_ns = m->offcpu_intervals[i].end_ns - m->offcpu_intervals[i].start_ns;
	x.sync = malloc((a->api.n ? a->api.n : 1) * sizeof(*x.sync));
	if (!x.cycle_order || !x.call_by_tid || !x.call_by_tgid || !x.sample_by_tid || !x.off_by_tid || !x.sync) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->ncalls; i++)
		if (m->calls[i].exit_ns > m->calls[i].entry_ns && m->calls[i].exit_ns - m->calls[i].entry_ns > x.max_call_ns)
			x.max_call_ns = m->calls[i].exit_ns - m->calls[i].entry_ns;
	err = join_ops(&x);
	if (err)
		goto out;
	if (x.nsync)
		qsort(x.sync, x.nsync, sizeof(*x.sync), cmp_sync);
	if (a->ops.n)
		qsort(a->ops.v, a->ops.n, sizeof(*a->ops.v), cmp_op);
	x.ops = a->ops.v;
	x.nops = a->ops.n;
	a->kernels = a->copies = a->sets = 0;
	a->api_records = a->api.n;
	for (size_t i = 0; i < x.nops; i++) {
		const struct model_gpu_op *o = &x.ops[i];

		a->kernels += o->what == MODEL_GPU_KERNEL;
		a->copies += o->what == MODEL_GPU_COPY;
		a->sets += o->what == MODEL_GPU_SET;
		if (o->end_ns - o->start_ns > x.max_op_ns)
			x.max_op_ns = o->end_ns - o->start_ns;
		if (!x.ndevices || x.devices[x.ndevices - 1] != o->device) {
			if (VEC_RESERVE(x.devices, x.capdevices, x.ndevices, 4)) {
				err = -ENOMEM;
				goto out;
			}
			x.devices[x.ndevices++] = o->device;
		}
		if (o->what == MODEL_GPU_KERNEL && (err = fold(m, o)))
			goto out;
	}
	if (a->ops.n || (a->calib.n && !a->source))
		a->source = "cupti";
	a->present = true;
	/* per cycle: the ops launched in it, by (cycle, device, start) */
	x.by_cycle = index_of(x.nops, cmp_by_cycle, x.ops);
	all = malloc((x.nops ? x.nops : 1) * sizeof(*all));
	if (!x.by_cycle || !all) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0, k = 0; x.nops && i < m->ncycles && !err; i++) {
		struct model_cycle *c = &m->cycles[i];
		size_t b;
		bool cph[IT_MAX_PHASES];

		while (k < x.nops && x.ops[x.by_cycle[k]].cycle < (int32_t)i)
			k++;
		for (b = k; b < x.nops && x.ops[x.by_cycle[b]].cycle == (int32_t)i; b++)
			;
		if (!recorded[i]) {
			k = b;
			continue;
		}
		for (int ph = 0; ph < IT_MAX_PHASES; ph++)
			cph[ph] = c->phases[ph].present;
		err = figures_for(&x, c->pid, c->start_ns, c->end_ns, NULL, x.by_cycle + k, b - k, cph, true,
				  &c->gpu.figures.v, &c->gpu.figures.n, &c->gpu.figures.cap);
		c->gpu.present = c->gpu.figures.n > 0;
		c->gpu.sampled = a->sampling;
		k = b;
	}
	/* the run: over the cycles when there are any (the ops launched in
	 * them; start-up and teardown left out), else the whole recording and
	 * every op; its phases are those of any cycle or call */
	for (size_t i = 0; i < m->ncycles && !err; i++)
		if (m->cycles[i].end_ns > m->cycles[i].start_ns && recorded[i]) {
			err = iv_add(&cycles, m->cycles[i].start_ns, m->cycles[i].end_ns);
			a->cycles_recorded++;
		}
	iv_merge(&cycles);
	for (size_t i = 0; i < x.nops; i++)
		if (cycles.n ? x.ops[i].cycle >= 0 && recorded[x.ops[i].cycle] : !m->ncycles || !a->sampling)
			all[nall++] = (uint32_t)i;
	for (size_t i = 0; i < m->ncalls; i++)
		if (m->calls[i].phase < IT_MAX_PHASES)
			phases[m->calls[i].phase] = true;
	phases[0] = false;
	if (!err) {
		uint64_t from = m->run.start_ns, to = m->run.end_ns;

		if (to <= from && x.nops) {
			from = x.ops[0].start_ns;
			to = 0;
			for (size_t i = 0; i < x.nops; i++) {
				from = x.ops[i].start_ns < from ? x.ops[i].start_ns : from;
				to = x.ops[i].end_ns > to ? x.ops[i].end_ns : to;
			}
		}
		if (cycles.n) {
			from = cycles.v[0].a;
			to = cycles.v[cycles.n - 1].b;
		}
		/* sampled, no cycle: the windows' time alone */
		if (!cycles.n && a->sampling)
			err = windows_within(a, from, to, &windows);
		a->recorded_ms = a->sampling ? (cycles.n ? iv_ms(&cycles) : iv_ms(&windows)) : 0;
		if (!err && (nall || !a->sampling || windows.n))
			err = figures_for(&x, 0, from, to, cycles.n ? &cycles : a->sampling ? &windows : NULL, all, nall,
					  phases, true, &a->figures.v, &a->figures.n, &a->figures.cap);
	}
	folded__merge(&a->folded);
out:
	free(all);
	free(recorded);
	free(windows.v);
	free(cycles.v);
	jctx_free(&x);
	return err;
}
