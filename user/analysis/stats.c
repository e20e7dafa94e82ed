// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <stdlib.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double stats__percentile(double *v, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (p <= 0)
		return v[0];
	if (p >= 100)
		return v[n - 1];
	rank = p / 100.0 * (n - 1);
	lo = (size_t)rank;
	frac = rank - lo;
	return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

double stats__mean(const double *v, size_t n)
{
	double s = 0;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / n;
}

double stats__slope(const double *y, size_t n)
{
	double mx = (n - 1) / 2.0, my, sxy = 0, sxx = 0;

	if (n < 2)
		return NAN;
	my = stats__mean(y, n);
	for (size_t i = 0; i < n; i++) {
		sxy += (i - mx) * (y[i] - my);
		sxx += (i - mx) * (i - mx);
	}
	return sxy / sxx;
}

json_t *stats__log2_hist_json(const uint64_t *slots, size_t nslots, const char *unit)
{
	json_t *h = json_object(), *b = json_array();

	json_object_set_new(h, "unit", json_string(unit));
	for (size_t i = 0; i < nslots; i++) {
		json_t *e;

		if (!slots[i])
			continue;
		e = json_object();
		json_object_set_new(e, "from", json_integer(i ? 1ll << i : 0));
		json_object_set_new(e, "to", json_integer((1ll << (i + 1)) - 1));
		json_object_set_new(e, "count", json_integer(slots[i]));
		json_array_append_new(b, e);
	}
	json_object_set_new(h, "buckets", b);
	return h;
}

double stats__log2_hist_percentile(const uint64_t *slots, size_t nslots, double p)
{
	uint64_t total = 0, seen = 0;
	double rank;

	for (size_t i = 0; i < nslots; i++)
		total += slots[i];
	if (!total)
		return NAN;
	if (p < 0)
		p = 0;
	if (p > 100)
		p = 100;
	rank = p / 100.0 * total;
	for (size_t i = 0; i < nslots; i++) {
		/* ldexp, not a shift: slot 63's upper edge is 2^64 */
		double lo = i ? ldexp(1, i) : 0, hi = ldexp(1, i + 1);

		if (!slots[i])
			continue;
		if (seen + slots[i] >= rank)
			return lo + (hi - lo) * ((rank - seen) / slots[i]);
		seen += slots[i];
	}
	return ldexp(1, nslots); /* not reached: rank <= total */
}
