// SPDX-License-Identifier: BSD-2-Clause
/* The side sampler's typed results: empty values, freeing and deep copies
 * (a model snapshot copies them). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "side_summary.h"

static void mam_init(struct side_mam *m)
{
	m->min = m->avg = m->max = NAN;
}

void side_summary__init(struct side_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->thermal.max_temp_c = s->thermal.temp_threshold_c = s->thermal.clock_drop_pct = NAN;
	s->disk.alert_below_pct = NAN;
	mam_init(&s->host.mem_available_mb);
	s->host.cpu_load_avg_pct = NAN;
}

void side_window__init(struct side_window *w)
{
	memset(w, 0, sizeof(*w));
	w->temp_max_c = w->cpu_mhz = w->cpu_load_pct = w->mem_available_mb = w->throttled_ms = NAN;
	w->gpu = (struct side_gpu_avgs){ NAN, NAN, NAN, NAN, NAN, NAN, NAN };
}

void side_cycle_power__init(struct side_cycle_power *p)
{
	memset(p, 0, sizeof(*p));
	p->min_cpu_mhz = p->max_temp_c = NAN;
}

void side_energy__init(struct side_energy *e)
{
	memset(e, 0, sizeof(*e));
	e->resolution_ms = e->peak_w = e->capped_ms = NAN;
	for (int d = 0; d < SIDE_ENERGY_NDOMAINS; d++)
		e->j[d] = NAN;
}

#define VEC_FREE(vec) (free((vec).v), (vec).v = NULL, (vec).n = (vec).cap = 0)

void side_summary__free(struct side_summary *s)
{
	struct side_thermal *t = &s->thermal;

	VEC_FREE(t->zones);
	VEC_FREE(t->hwmon);
	VEC_FREE(t->power_w);
	VEC_FREE(t->cpufreq);
	VEC_FREE(t->throttling);
	VEC_FREE(t->kernel_events.attached);
	VEC_FREE(t->kernel_events.missing);
	VEC_FREE(t->kernel_events.timeline);
	for (size_t i = 0; i < s->gpu.devices.n; i++)
		VEC_FREE(s->gpu.devices.v[i].process_mem_mb);
	VEC_FREE(s->gpu.devices);
	VEC_FREE(s->disk.paths);
	VEC_FREE(s->host.cpu_load_pct);
}

void side_window__free(struct side_window *w)
{
	VEC_FREE(w->temp_c);
	VEC_FREE(w->power_w);
}

void side_energy__free(struct side_energy *e)
{
	VEC_FREE(e->sources);
	VEC_FREE(e->missing);
	VEC_FREE(e->capped);
}

void side_series__free(struct side_series *s)
{
	VEC_FREE(s->cols);
	free(s->ts);
	free(s->v);
	s->ts = NULL;
	s->v = NULL;
	s->nrows = 0;
}

/* Replaces *v (shared with the source) by a copy of its n elements. */
static int dup_elems(void **v, size_t n, size_t *cap, size_t elem)
{
	void *p;

	*cap = n;
	if (!n) {
		*v = NULL;
		return 0;
	}
	p = malloc(n * elem);
	if (!p) {
		*v = NULL;
		*cap = 0;
		return -ENOMEM;
	}
	memcpy(p, *v, n * elem);
	*v = p;
	return 0;
}

/* dst was assigned from its source: its pointers are the source's. On
 * failure the vector is left empty, so dst owns only its own copies. */
#define VEC_DUP(vec)                                                                             \
	(dup_elems((void **)&(vec).v, (vec).n, &(vec).cap, sizeof(*(vec).v)) ? ((vec).n = 0, -ENOMEM) : 0)

int side_summary__copy(struct side_summary *dst, const struct side_summary *src)
{
	struct side_thermal *t = &dst->thermal;
	int err = 0;

	*dst = *src;
	err |= VEC_DUP(t->zones);
	err |= VEC_DUP(t->hwmon);
	err |= VEC_DUP(t->power_w);
	err |= VEC_DUP(t->cpufreq);
	err |= VEC_DUP(t->throttling);
	err |= VEC_DUP(t->kernel_events.attached);
	err |= VEC_DUP(t->kernel_events.missing);
	err |= VEC_DUP(t->kernel_events.timeline);
	if (VEC_DUP(dst->gpu.devices)) {
		err = -ENOMEM;
	} else {
		for (size_t i = 0; i < dst->gpu.devices.n; i++)
			err |= VEC_DUP(dst->gpu.devices.v[i].process_mem_mb);
	}
	err |= VEC_DUP(dst->disk.paths);
	err |= VEC_DUP(dst->host.cpu_load_pct);
	return err ? -ENOMEM : 0;
}

int side_window__copy(struct side_window *dst, const struct side_window *src)
{
	int err = 0;

	*dst = *src;
	err |= VEC_DUP(dst->temp_c);
	err |= VEC_DUP(dst->power_w);
	return err ? -ENOMEM : 0;
}

int side_energy__copy(struct side_energy *dst, const struct side_energy *src)
{
	int err = 0;

	*dst = *src;
	err |= VEC_DUP(dst->sources);
	err |= VEC_DUP(dst->missing);
	err |= VEC_DUP(dst->capped);
	return err ? -ENOMEM : 0;
}

int side_series__copy(struct side_series *dst, const struct side_series *src)
{
	size_t cap;
	int err = 0;

	*dst = *src;
	err |= VEC_DUP(dst->cols);
	err |= dup_elems((void **)&dst->ts, dst->nrows, &cap, sizeof(*dst->ts));
	err |= dup_elems((void **)&dst->v, dst->nrows * src->cols.n, &cap, sizeof(*dst->v));
	if (err)
		dst->nrows = 0;
	return err ? -ENOMEM : 0;
}

bool side_energy__root_only(const struct side_energy *e)
{
	for (size_t i = 0; i < e->sources.n; i++)
		if (e->sources.v[i].root_only)
			return true;
	return false;
}
