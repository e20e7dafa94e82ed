// SPDX-License-Identifier: BSD-2-Clause
/* The bootstrap of bootstrap.h. A percentile resample is kept as counts
 * over the sorted values, so that reading its percentile needs no sort. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "stats.h"

/* splitmix64: small, and the same sequence everywhere for a seed */
static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t draw(uint64_t *s, size_t n)
{
	return (size_t)(((unsigned __int128)next_u64(s) * n) >> 64);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* What one sample's resamples need, made once. */
struct prepared {
	const struct boot_sample *s;
	double *sorted;   /* percentile: x sorted */
	size_t *rank;     /* percentile, several groups: the sorted position of x[i] */
	uint32_t *counts; /* percentile: a resample's draws per sorted position */
};

static int cmp_index(const void *a, const void *b, void *key)
{
	const double *x0 = key;
	double x = x0[*(const size_t *)a], y = x0[*(const size_t *)b];

	return (x > y) - (x < y);
}

static bool grouped(const struct boot_sample *s)
{
	return s->group_end && s->ngroups > 1;
}

static void unprepare(struct prepared *p)
{
	free(p->sorted);
	free(p->rank);
	free(p->counts);
	memset(p, 0, sizeof(*p));
}

static int prepare(struct prepared *p, const struct boot_sample *s, struct boot_stat st)
{
	size_t *order = NULL;

	memset(p, 0, sizeof(*p));
	p->s = s;
	if (!st.percentile)
		return 0;
	p->sorted = malloc(s->n * sizeof(*p->sorted));
	p->counts = calloc(s->n, sizeof(*p->counts));
	if (!p->sorted || !p->counts)
		goto fail;
	memcpy(p->sorted, s->x, s->n * sizeof(*p->sorted));
	qsort(p->sorted, s->n, sizeof(*p->sorted), cmp_double);
	if (!grouped(s))
		return 0;
	/* a run's cycles are drawn by their place in x: each needs its rank */
	order = malloc(s->n * sizeof(*order));
	p->rank = malloc(s->n * sizeof(*p->rank));
	if (!order || !p->rank)
		goto fail;
	for (size_t i = 0; i < s->n; i++)
		order[i] = i;
	qsort_r(order, s->n, sizeof(*order), cmp_index, (void *)s->x);
	for (size_t i = 0; i < s->n; i++)
		p->rank[order[i]] = i;
	free(order);
	return 0;
fail:
	free(order);
	unprepare(p);
	return -1;
}

/* Percentile pct of the resample in counts (total draws), read as
 * stats__percentile reads the resample sorted: sorted[i] repeated counts[i]
 * times. */
static double counted_percentile(const double *sorted, const uint32_t *counts, size_t n, size_t total, double pct)
{
	double rank, frac, at_lo = NAN;
	size_t lo, seen = 0;

	if (!total)
		return NAN;
	rank = pct <= 0 ? 0 : pct >= 100 ? (double)(total - 1) : pct / 100.0 * (total - 1);
	lo = (size_t)rank;
	frac = rank - lo;
	for (size_t i = 0; i < n; i++) {
		seen += counts[i];
		if (isnan(at_lo) && seen > lo) {
			at_lo = sorted[i];
			if (frac == 0 || seen > lo + 1)
				return at_lo + frac * (sorted[i] - at_lo);
		} else if (!isnan(at_lo) && counts[i]) {
			return at_lo + frac * (sorted[i] - at_lo);
		}
	}
	return at_lo;
}

/* One resample's statistic. With one group, a percentile's draws index the
 * sorted values directly (the same distribution, and the sequence diff
 * always drew); with several, runs are drawn first, then their cycles. */
static double resample(struct prepared *p, struct boot_stat st, uint64_t *seed)
{
	const struct boot_sample *s = p->s;
	size_t groups = grouped(s) ? s->ngroups : 1, total = 0;
	double sx = 0, sw = 0;

	if (st.percentile)
		memset(p->counts, 0, s->n * sizeof(*p->counts));
	for (size_t k = 0; k < groups; k++) {
		size_t g = groups > 1 ? draw(seed, groups) : 0;
		size_t from = groups > 1 && g ? s->group_end[g - 1] : 0, to = groups > 1 ? s->group_end[g] : s->n;

		for (size_t c = from; c < to; c++) {
			size_t i = from + draw(seed, to - from);

			if (st.percentile) {
				p->counts[p->rank ? p->rank[i] : i]++;
			} else {
				sx += s->x[i];
				sw += s->w ? s->w[i] : 1;
			}
			total++;
		}
	}
	if (st.percentile)
		return counted_percentile(p->sorted, p->counts, s->n, total, st.pct);
	return sw > 0 ? sx / sw : NAN;
}

bool bootstrap__enough(const struct boot_sample *s, struct boot_stat st)
{
	if (s->n < 2)
		return false;
	if (st.percentile) {
		double tail = fmin(st.pct, 100.0 - st.pct) / 100.0;

		if (tail * (double)s->n < BOOT_TAIL_MIN)
			return false;
	}
	return true;
}

double bootstrap__estimate(const struct boot_sample *s, struct boot_stat st)
{
	double sx = 0, sw = 0, *v, r;

	if (!s->n)
		return NAN;
	if (!st.percentile) {
		for (size_t i = 0; i < s->n; i++) {
			sx += s->x[i];
			sw += s->w ? s->w[i] : 1;
		}
		return sw > 0 ? sx / sw : NAN;
	}
	v = malloc(s->n * sizeof(*v));
	if (!v)
		return NAN;
	memcpy(v, s->x, s->n * sizeof(*v));
	r = stats__percentile(v, s->n, st.pct);
	free(v);
	return r;
}

/* The level's interval of reps values (sorted in place) */
static void bounds(double *v, unsigned int reps, double level_pct, double *lo, double *hi)
{
	*lo = stats__percentile(v, reps, (100.0 - level_pct) / 2);
	*hi = stats__percentile(v, reps, 100.0 - (100.0 - level_pct) / 2);
}

bool bootstrap__interval(const struct boot_sample *s, struct boot_stat st, double level_pct, unsigned int reps,
			 uint64_t seed, double *lo, double *hi)
{
	struct prepared p;
	double *stat = NULL;
	bool ok = false;

	*lo = *hi = NAN;
	if (!reps || !bootstrap__enough(s, st) || prepare(&p, s, st))
		return false;
	stat = calloc(reps, sizeof(*stat));
	if (!stat)
		goto out;
	for (unsigned int r = 0; r < reps; r++) {
		stat[r] = resample(&p, st, &seed);
		if (!isfinite(stat[r]))
			goto out;
	}
	bounds(stat, reps, level_pct, lo, hi);
	ok = true;
out:
	free(stat);
	unprepare(&p);
	return ok;
}

bool bootstrap__change(const struct boot_sample *base, const struct boot_sample *new_s, struct boot_stat st,
		       double level_pct, unsigned int reps, uint64_t seed, double *lo, double *hi)
{
	struct prepared pb, pn;
	double *change = NULL;
	bool ok = false;

	*lo = *hi = NAN;
	if (!reps || !bootstrap__enough(base, st) || !bootstrap__enough(new_s, st))
		return false;
	if (prepare(&pb, base, st))
		return false;
	if (prepare(&pn, new_s, st)) {
		unprepare(&pb);
		return false;
	}
	change = calloc(reps, sizeof(*change));
	if (!change)
		goto out;
	for (unsigned int r = 0; r < reps; r++) {
		double b = resample(&pb, st, &seed), n = resample(&pn, st, &seed);

		if (!(b > 0) || !isfinite(n))
			goto out;
		change[r] = 100.0 * (n - b) / b;
	}
	bounds(change, reps, level_pct, lo, hi);
	ok = true;
out:
	free(change);
	unprepare(&pb);
	unprepare(&pn);
	return ok;
}
