// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace diff`: the table of compared figures with bootstrap intervals
 * over the cycles (diff.h), and the warnings that say when two runs do not
 * compare: other cycle definitions, cycle counts far apart, power modes. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "diff.h"
#include "gpu_view.h"
#include "llama_view.h"
#include "model.h"
#include "power_mode.h"

/* ---- the interval: the shared bootstrap over the cycles ---- */

bool diff__interval(const double *bx, const double *bw, size_t nb, const double *nx, const double *nw, size_t nn,
		    struct diff_stat st, unsigned int reps, uint64_t seed, double *lo, double *hi)
{
	const struct boot_sample b = { .x = bx, .w = bw, .n = nb }, n = { .x = nx, .w = nw, .n = nn };

	return bootstrap__change(&b, &n, (struct boot_stat){ st.percentile, st.pct }, DIFF_LEVEL_PCT, reps, seed, lo,
				 hi);
}

int diff__verdict(double change_pct, double lo, double hi, bool higher_is_better, double threshold_pct)
{
	double worse = higher_is_better ? -change_pct : change_pct;
	double worse_lo = higher_is_better ? -hi : lo, worse_hi = higher_is_better ? -lo : hi;

	if (!isfinite(change_pct) || !isfinite(lo) || !isfinite(hi))
		return 0;
	if (worse > threshold_pct && worse_lo > 0)
		return -1;
	if (worse < -threshold_pct && worse_hi < 0)
		return 1;
	return 0;
}

/* ---- the figures, per cycle ---- */

/* A figure of one cycle as (x, w) for the statistic; false: the cycle has none. */
typedef bool (*cycle_figure)(const struct model *m, const struct model_cycle *c, int arg, double *x, double *w);

static bool cycle_ms(const struct model *m, const struct model_cycle *c, int arg, double *x, double *w)
{
	(void)m, (void)arg;
	*x = c->duration_ms;
	*w = 1;
	return isfinite(*x);
}

static bool phase_ms(const struct model *m, const struct model_cycle *c, int ph, double *x, double *w)
{
	(void)m;
	if (ph <= 0 || ph >= IT_MAX_PHASES || !c->phases[ph].present || !c->phases[ph].calls ||
	    !isfinite(c->phases[ph].ms))
		return false;
	*x = c->phases[ph].ms;
	*w = (double)c->phases[ph].calls;
	return true;
}

static bool energy_j(const struct model *m, const struct model_cycle *c, int arg, double *x, double *w)
{
	(void)m, (void)arg;
	*x = c->energy.total_j;
	*w = 1;
	return c->energy.present && isfinite(*x);
}

/* GPU figures per cycle: arg = device * GPU_ROWS + which */
enum { GPU_BUSY, GPU_IDLE, GPU_KERNELS, GPU_ROWS };

static bool gpu_fig(const struct model *m, const struct model_cycle *c, int arg, double *x, double *w)
{
	const struct model_gpu_figures *f = gpu_view__cycle(c, (uint32_t)(arg / GPU_ROWS), 0);

	(void)m;
	if (!f || (c->gpu.nvml_only && arg % GPU_ROWS != GPU_BUSY))
		return false; /* NVML gives the busy figure alone */
	*x = arg % GPU_ROWS == GPU_BUSY ? f->busy_ms : arg % GPU_ROWS == GPU_IDLE ? f->idle_ms : (double)f->kernels;
	*w = 1;
	return isfinite(*x);
}

/* The mean of a GPU figure over the cycles that have it; NAN: none. */
static double gpu_mean(const struct model *m, int arg)
{
	double sum = 0, x, w;
	size_t n = 0;

	for (size_t i = 0; i < m->ncycles; i++)
		if (gpu_fig(m, &m->cycles[i], arg, &x, &w)) {
			sum += x;
			n++;
		}
	return n ? sum / n : NAN;
}

enum { LL_DECODE, LL_PREFILL, LL_JOULES };

/* tokens over seconds, joules over tokens: the ratio the whole run's figure is */
static bool llama_fig(const struct model *m, const struct model_cycle *c, int which, double *x, double *w)
{
	const struct model_llama_cycle *l = &c->llama;

	(void)m;
	if (!l->present)
		return false;
	if (which == LL_DECODE) {
		*w = l->decode_ms / 1000.0;
		*x = l->decode_tokens_per_s * *w;
	} else if (which == LL_PREFILL) {
		*w = l->prefill_ms / 1000.0;
		*x = l->prefill_tokens_per_s * *w;
	} else {
		*w = (double)l->generated_tokens;
		*x = l->j_per_generated_token * *w;
	}
	return isfinite(*x) && *w > 0;
}

/* A server's requests: what each request (or, for the gaps, each gap)
 * gives a row's sample */
enum { RQ_TTFT, RQ_GAP, RQ_DURATION, RQ_TOKENS_PER_S };

static bool request_fig(const struct model *m, const struct model_cycle *c, int which, double *x, double *w)
{
	(void)m, (void)c, (void)which, (void)x, (void)w;
	return false; /* never over the cycles: sample_of reads the requests */
}

/* The sample of a request row: every request's figure, or every gap. */
static size_t request_sample(const struct model *m, int which, double *x, double *w, size_t cap)
{
	const struct model_requests *r = &m->requests;
	size_t n = 0;

	if (which == RQ_GAP) {
		for (size_t i = 0; i < r->gaps.n && n < cap; i++, n++)
			x[n] = r->gaps.v[i], w[n] = 1;
		return n;
	}
	for (size_t i = 0; i < r->list.n && n < cap; i++) {
		const struct model_request *q = &r->list.v[i];
		double v = which == RQ_TTFT ? q->ttft_ms : which == RQ_DURATION ? q->duration_ms : q->tokens_per_s;

		if (isfinite(v))
			x[n] = v, w[n++] = 1;
	}
	return n;
}

struct row {
	const char *name;
	double base, new_v;       /* NAN: absent */
	cycle_figure fig;         /* NULL: a whole-run figure, no interval */
	const char *phase;        /* phase_ms's phase, by name: the ids differ between runs */
	struct diff_stat st;
	int arg;
	bool higher_is_better;
};

struct sample {
	double *x, *w;
	size_t n;
};

static void sample_of(const struct model *m, const struct row *r, struct sample *s)
{
	int arg = r->phase ? model__phase_id(m, r->phase) : r->arg;
	size_t cap = r->fig == request_fig ? m->requests.list.n + m->requests.gaps.n + 1 : m->ncycles + 1;

	s->x = calloc(cap, sizeof(double));
	s->w = calloc(cap, sizeof(double));
	s->n = 0;
	if (!s->x || !s->w || arg < 0)
		return;
	if (r->fig == request_fig) {
		s->n = request_sample(m, arg, s->x, s->w, cap);
		return;
	}
	for (size_t i = 0; i < m->ncycles; i++)
		if (r->fig(m, &m->cycles[i], arg, &s->x[s->n], &s->w[s->n]))
			s->n++;
}

/* ---- the table ---- */

/* 1 when it is a regression (or absent on one side), else 0 */
static int print_row(const struct model *b, const struct model *n, const struct row *r, double threshold)
{
	double change, speedup, lo = NAN, hi = NAN;
	char ci[48] = "-";
	const char *word;
	int v;

	if (!isfinite(r->base) && !isfinite(r->new_v))
		return 0;
	if (!isfinite(r->base) || !isfinite(r->new_v)) {
		char bv[32] = "-", nv[32] = "-";

		if (isfinite(r->base))
			snprintf(bv, sizeof(bv), "%.3f", r->base);
		if (isfinite(r->new_v))
			snprintf(nv, sizeof(nv), "%.3f", r->new_v);
		printf("%-28s %12s %12s %10s %9s %18s  MISSING in %s\n", r->name, bv, nv, "-", "-", "-",
		       isfinite(r->base) ? "new" : "base");
		return 1;
	}
	if (!(r->base > 0)) {
		printf("%-28s %12.3f %12.3f %10s %9s %18s\n", r->name, r->base, r->new_v, "-", "-", "-");
		return 0;
	}
	change = 100.0 * (r->new_v - r->base) / r->base;
	/* how many times better new is, whichever way is better */
	speedup = r->higher_is_better ? r->new_v / r->base : r->new_v > 0 ? r->base / r->new_v : NAN;
	if (r->fig) {
		struct sample sb, sn;

		sample_of(b, r, &sb);
		sample_of(n, r, &sn);
		if (sb.x && sb.w && sn.x && sn.w &&
		    diff__interval(sb.x, sb.w, sb.n, sn.x, sn.w, sn.n, r->st, DIFF_BOOT_REPS, DIFF_BOOT_SEED, &lo, &hi))
			snprintf(ci, sizeof(ci), "%+.1f%%..%+.1f%%", lo, hi);
		free(sb.x);
		free(sb.w);
		free(sn.x);
		free(sn.w);
	}
	v = diff__verdict(change, lo, hi, r->higher_is_better, threshold);
	printf("%-28s %12.3f %12.3f %+9.1f%% ", r->name, r->base, r->new_v, change);
	if (isfinite(speedup))
		printf("%8.2fx", speedup);
	else
		printf("%9s", "-");
	word = v < 0 ? "REGRESSION" : v > 0 ? (r->higher_is_better ? "better" : "faster") :
	       fabs(change) <= threshold || !r->fig ? "" : isfinite(lo) ? "within noise" : "no interval";
	printf(" %18s%s%s\n", r->fig ? ci : "whole run", *word ? "  " : "", word);
	return v < 0;
}

/* "cycle 'run_cycle'", "cycle_marker 'X'", "whole run" (+ presets) */
static void describe_cycles(const struct model *m, char *buf, size_t len)
{
	const struct model_asked *a = &m->run.asked;
	const char *src = m->agg.cycles_source;
	size_t off;

	if (a->cycle >= 0)
		off = snprintf(buf, len, "cycle '%s'", model__name(m, a->cycle));
	else if (a->cycle_marker >= 0)
		off = snprintf(buf, len, "cycle_marker '%s'", model__name(m, a->cycle_marker));
	else
		off = snprintf(buf, len, "%s", src && strcmp(src, "whole_run") ? src : "whole run");
	for (size_t i = 0; i < a->presets.n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? "," : ", preset ", model__name(m, a->presets.v[i]));
}

/* the same asked string on both sides (none on both counts as the same) */
static bool same_name(const struct model *b, int32_t x, const struct model *n, int32_t y)
{
	return (x < 0 && y < 0) || (x >= 0 && y >= 0 && !strcmp(model__name(b, x), model__name(n, y)));
}

static bool cycles_differ(const struct model *b, const struct model *n)
{
	const struct model_asked *x = &b->run.asked, *y = &n->run.asked;
	const char *bs = b->agg.cycles_source, *ns = n->agg.cycles_source;

	if (!same_name(b, x->cycle, n, y->cycle) || !same_name(b, x->cycle_marker, n, y->cycle_marker) ||
	    x->presets.n != y->presets.n)
		return true;
	for (size_t i = 0; i < x->presets.n; i++)
		if (!same_name(b, x->presets.v[i], n, y->presets.v[i]))
			return true;
	return (bs || ns) && (!bs || !ns || strcmp(bs, ns));
}

static void print_header(const struct model *b, const struct model *n)
{
	const struct power_mode *bp = &b->run.system.power, *np = &n->run.system.power;
	size_t bc = b->ncycles, nc = n->ncycles;
	char bm[200], nm[200];

	/* the power mode decides the figures: never compare two modes silently */
	power_mode__describe(bp, bm, sizeof(bm));
	power_mode__describe(np, nm, sizeof(nm));
	if (strcmp(bm, "unknown") || strcmp(nm, "unknown")) {
		printf("power mode: base %s; new %s\n", bm, nm);
		if (power_mode__differs(bp, np))
			printf("WARNING: the runs were made in different power modes: the figures below compare the modes too\n");
	}
	describe_cycles(b, bm, sizeof(bm));
	describe_cycles(n, nm, sizeof(nm));
	printf("cycles: base %zu (%s); new %zu (%s)\n", bc, bm, nc, nm);
	if (cycles_differ(b, n))
		printf("WARNING: the cycles are defined differently: per-cycle figures and speedups compare "
		       "different spans of work\n");
	else if (bc && nc && (bc * 2 < nc || nc * 2 < bc))
		printf("WARNING: the cycle counts differ by more than a factor of 2: the runs did different amounts of work\n");
	if (bc < 2 || nc < 2)
		printf("no interval: %s has %zu cycle%s (an interval needs 2 or more on each side); changes are shown "
		       "without a verdict\n", bc < 2 ? "base" : "new", bc < 2 ? bc : nc, (bc < 2 ? bc : nc) == 1 ? "" : "s");
	printf("%-28s %12s %12s %10s %9s %18s\n", "metric", "base", "new", "change", "speedup", "95% interval");
}

/* The GPU timeline's verdicts of one side, "-" for none. */
static void gpu_verdicts(const struct model *m, char *buf, size_t len)
{
	static const char *const types[] = { "gpu_bound", "launch_bound", "sync_bound", "transfer_bound" };
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < m->nfindings && off < len; i++) {
		int64_t dev = m->findings[i].evidence.device;

		for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
			if (!strcmp(m->findings[i].type, types[k]) && dev >= 0 && off < len)
				off += snprintf(buf + off, len - off, "%s%s (GPU %lld)", off ? ", " : "", types[k],
						(long long)dev);
	}
	if (!off)
		snprintf(buf, len, "-");
}

/* a lower-is-better row */
static void add(struct row *rows, int *k, const char *name, double base, double new_v, cycle_figure fig,
		struct diff_stat st)
{
	rows[(*k)++] = (struct row){ .name = name, .base = base, .new_v = new_v, .fig = fig, .st = st };
}

int diff__compare(const struct model *b, const struct model *n, double threshold)
{
	const struct model_aggregates *ba = &b->agg, *na = &n->agg;
	struct llama_diff_row ll[LLAMA_DIFF_ROWS];
	struct row rows[16 + 2 * IT_MAX_PHASES + GPU_ROWS * GPU_VIEW_MAX_DEVICES];
	char labels[2 * IT_MAX_PHASES + GPU_ROWS * GPU_VIEW_MAX_DEVICES][64];
	uint32_t devs[GPU_VIEW_MAX_DEVICES];
	size_t nd = 0;
	int k = 0, nl = 0, regressions = 0;
	const struct diff_stat mean = { false, 0 };

	print_header(b, n);
	const struct diff_stat p50 = { true, 50 }, p95 = { true, 95 }, p99 = { true, 99 }, p100 = { true, 100 };

	add(rows, &k, "duration_s", b->run.duration_s, n->run.duration_s, NULL, mean);
	add(rows, &k, "avg_cycle_ms", ba->avg_cycle_ms, na->avg_cycle_ms, cycle_ms, mean);
	add(rows, &k, "p50_cycle_ms", ba->p50_cycle_ms, na->p50_cycle_ms, cycle_ms, p50);
	add(rows, &k, "p95_cycle_ms", ba->p95_cycle_ms, na->p95_cycle_ms, cycle_ms, p95);
	add(rows, &k, "p99_cycle_ms", ba->p99_cycle_ms, na->p99_cycle_ms, cycle_ms, p99);
	add(rows, &k, "max_cycle_ms", ba->max_cycle_ms, na->max_cycle_ms, cycle_ms, p100);
	add(rows, &k, "energy_j_per_cycle",
	    b->energy.cycles_measured ? b->energy.cycles.total_j / b->energy.cycles_measured : NAN,
	    n->energy.cycles_measured ? n->energy.cycles.total_j / n->energy.cycles_measured : NAN, energy_j, mean);
	/* the phases of either run: one the other lacks is shown absent there */
	for (int side = 0; side < 2; side++) {
		const struct model *m = side ? n : b, *o = side ? b : n;

		for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
			const struct model_phase_summary *v = &m->phases[ph], *ov;
			int oid;
			double mine, other;

			if (!m->phase_names[ph] || !v->present || !v->calls)
				continue;
			oid = model__phase_id(o, m->phase_names[ph]);
			ov = oid > 0 ? &o->phases[oid] : NULL;
			if (side && ov && ov->present && ov->calls)
				continue; /* a row already, from the base */
			mine = v->total_ms / v->calls;
			other = ov && ov->present && ov->calls ? ov->total_ms / ov->calls : NAN;
			snprintf(labels[nl], sizeof(labels[nl]), "phase %s ms/call", m->phase_names[ph]);
			add(rows, &k, labels[nl++], side ? other : mine, side ? mine : other, phase_ms, mean);
			rows[k - 1].phase = m->phase_names[ph];
		}
	}
	/* GPU time per cycle, per device both runs have */
	if (gpu_view__any(b) && gpu_view__any(n))
		nd = gpu_view__devices(b, devs, GPU_VIEW_MAX_DEVICES);
	for (size_t i = 0; i < nd; i++) {
		static const char *const what[GPU_ROWS] = { "busy_ms", "idle_ms", "kernels" };

		if (!gpu_view__run(n, devs[i], 0))
			continue;
		for (int r = 0; r < GPU_ROWS; r++) {
			int arg = (int)devs[i] * GPU_ROWS + r;
			double bv = gpu_mean(b, arg), nv = gpu_mean(n, arg);

			if (!isfinite(bv) || !isfinite(nv))
				continue;
			snprintf(labels[nl], sizeof(labels[nl]), "gpu%u %s/cycle", devs[i], what[r]);
			add(rows, &k, labels[nl++], bv, nv, gpu_fig, mean);
			rows[k - 1].arg = arg;
		}
	}
	for (int i = 0; i < k; i++)
		regressions += print_row(b, n, &rows[i], threshold);
	nl = llama__diff_rows(b, n, threshold, ll);
	for (int i = 0; i < nl; i++) {
		struct row r = { .name = ll[i].name, .base = ll[i].base, .new_v = ll[i].new_v,
				 .higher_is_better = ll[i].higher_is_better, .fig = llama_fig, .st = mean };

		r.arg = strstr(r.name, "decode") ? LL_DECODE : strstr(r.name, "prefill") ? LL_PREFILL : LL_JOULES;
		regressions += print_row(b, n, &r, threshold);
	}
	/* a server's requests: each request (each gap) one of the sample */
	if (b->requests.present || n->requests.present) {
		const struct {
			const char *name;
			size_t off; /* of the distribution in struct model_requests */
			struct diff_stat st;
			int which;
			bool higher;
		} rq[] = {
			{ "requests ttft_ms p50", offsetof(struct model_requests, ttft), p50, RQ_TTFT, false },
			{ "requests ttft_ms p95", offsetof(struct model_requests, ttft), p95, RQ_TTFT, false },
			{ "requests itl_ms p50", offsetof(struct model_requests, itl), p50, RQ_GAP, false },
			{ "requests itl_ms p95", offsetof(struct model_requests, itl), p95, RQ_GAP, false },
			{ "requests itl_ms p99", offsetof(struct model_requests, itl), p99, RQ_GAP, false },
			{ "requests duration_ms p50", offsetof(struct model_requests, duration), p50, RQ_DURATION, false },
			{ "requests tokens_per_s p50", offsetof(struct model_requests, tokens_per_s), p50, RQ_TOKENS_PER_S,
			  true },
		};

		for (size_t i = 0; i < sizeof(rq) / sizeof(rq[0]); i++) {
			const struct model_request_dist *bd = (const void *)((const char *)&b->requests + rq[i].off);
			const struct model_request_dist *nd_ = (const void *)((const char *)&n->requests + rq[i].off);
			double bv = rq[i].st.pct == 50 ? bd->p50 : rq[i].st.pct == 95 ? bd->p95 : bd->p99;
			double nv = rq[i].st.pct == 50 ? nd_->p50 : rq[i].st.pct == 95 ? nd_->p95 : nd_->p99;
			struct row r = { .name = rq[i].name, .base = b->requests.present && bd->n ? bv : NAN,
					 .new_v = n->requests.present && nd_->n ? nv : NAN, .fig = request_fig,
					 .st = rq[i].st, .arg = rq[i].which, .higher_is_better = rq[i].higher };

			regressions += print_row(b, n, &r, threshold);
		}
	}
	if (gpu_view__timeline(b) && gpu_view__timeline(n)) {
		char bv[512], nv[512];

		gpu_verdicts(b, bv, sizeof(bv));
		gpu_verdicts(n, nv, sizeof(nv));
		printf("GPU verdicts: base %s; new %s\n", bv, nv);
	}
	return regressions;
}
