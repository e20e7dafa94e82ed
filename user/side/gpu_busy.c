// SPDX-License-Identifier: BSD-2-Clause
#include "gpu_busy.h"

#include <errno.h>
#include <stdlib.h>

int gpu_busy__add(struct gpu_busy_series *s, const struct gpu_util_sample *smp, int n,
		  int64_t realtime_minus_mono_ns)
{
	for (int i = 0; i < n; i++) {
		uint64_t us = smp[i].ts_us, prev = s->last_us;
		struct gpu_busy_period *p;

		if (us <= prev)
			continue;
		s->last_us = us;
		if (!prev)
			continue; /* the first sample: its period's start is unknown */
		if (VEC_RESERVE(s->periods.v, s->periods.cap, s->periods.n, 256)) {
			s->dropped++;
			continue;
		}
		p = &s->periods.v[s->periods.n++];
		p->start_ns = (uint64_t)((int64_t)(prev * 1000) - realtime_minus_mono_ns);
		p->end_ns = (uint64_t)((int64_t)(us * 1000) - realtime_minus_mono_ns);
		p->util_pct = smp[i].util_pct;
	}
	return 0;
}

/* the first period ending after t (binary search: periods are in order) */
static size_t first_after(const struct gpu_busy_series *s, uint64_t t)
{
	size_t lo = 0, hi = s->periods.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->periods.v[mid].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double gpu_busy__window(const struct gpu_busy_series *s, uint64_t start_ns, uint64_t end_ns,
			double *covered_ms)
{
	double busy = 0, covered = 0;

	for (size_t i = first_after(s, start_ns); i < s->periods.n && s->periods.v[i].start_ns < end_ns; i++) {
		const struct gpu_busy_period *p = &s->periods.v[i];
		uint64_t a = p->start_ns > start_ns ? p->start_ns : start_ns;
		uint64_t b = p->end_ns < end_ns ? p->end_ns : end_ns;

		if (b <= a)
			continue;
		covered += (b - a) / 1e6;
		busy += (b - a) / 1e6 * p->util_pct / 100.0;
	}
	if (covered_ms)
		*covered_ms = covered;
	return busy;
}

void gpu_busy__free(struct gpu_busy_series *s)
{
	free(s->periods.v);
	s->periods.v = NULL;
	s->periods.n = s->periods.cap = 0;
}
