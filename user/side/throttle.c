// SPDX-License-Identifier: BSD-2-Clause
#include "throttle.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_nvml.h"
#include "vec.h"

struct throttle_tracker {
	struct throttle_episode *v;
	size_t n, cap;
};

struct throttle_tracker *throttle_tracker__new(void)
{
	return calloc(1, sizeof(struct throttle_tracker));
}

void throttle_tracker__free(struct throttle_tracker *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

static struct throttle_episode *open_episode(struct throttle_tracker *t, const char *source)
{
	for (size_t i = t->n; i-- > 0;)
		if (t->v[i].open && strcmp(t->v[i].source, source) == 0)
			return &t->v[i];
	return NULL;
}

static double nan_max(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static double nan_min(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : fmin(a, b);
}

int throttle_tracker__observe(struct throttle_tracker *t, const char *source, uint64_t read_begin,
			      uint64_t read_end, bool active, const char *zone, const char *reason, double temp_c,
			      double clock_pct)
{
	struct throttle_episode *e = open_episode(t, source);
	uint64_t ts = read_end;

	if (!active) {
		if (e) {
			e->end_ns = read_begin > e->start_ns ? read_begin : e->start_ns;
			e->open = false;
		}
		return 0;
	}
	if (!e) {
		if (VEC_RESERVE(t->v, t->cap, t->n, 8))
			return -ENOMEM;
		e = &t->v[t->n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->source, sizeof(e->source), "%s", source);
		snprintf(e->zone, sizeof(e->zone), "%s", zone ? zone : "");
		snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
		e->start_ns = ts;
		e->peak_temp_c = NAN;
		e->min_clock_pct = NAN;
		e->open = true;
	}
	/* until a cool sample closes it, the episode reaches the latest hot one */
	e->end_ns = ts;
	e->peak_temp_c = nan_max(e->peak_temp_c, temp_c);
	e->min_clock_pct = nan_min(e->min_clock_pct, clock_pct);
	return 0;
}

void throttle_tracker__finish(struct throttle_tracker *t, uint64_t ts)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].open && ts > t->v[i].end_ns)
			t->v[i].end_ns = ts;
}

size_t throttle_tracker__count(const struct throttle_tracker *t)
{
	return t ? t->n : 0;
}

const struct throttle_episode *throttle_tracker__get(const struct throttle_tracker *t, size_t i)
{
	return t && i < t->n ? &t->v[i] : NULL;
}

uint64_t throttle_tracker__overlap_ns(const struct throttle_tracker *t, uint64_t start, uint64_t end)
{
	uint64_t sum = 0;

	/* one source's episodes never overlap; different sources may, so the
	 * largest per-source total is reported rather than a double-counted sum */
	for (size_t i = 0; t && i < t->n; i++) {
		const struct throttle_episode *e = &t->v[i];
		uint64_t s = e->start_ns > start ? e->start_ns : start;
		uint64_t f = e->end_ns < end ? e->end_ns : end;
		uint64_t src_sum = 0;

		if (f <= s)
			continue;
		for (size_t k = 0; k < t->n; k++) {
			const struct throttle_episode *o = &t->v[k];
			uint64_t os = o->start_ns > start ? o->start_ns : start;
			uint64_t of = o->end_ns < end ? o->end_ns : end;

			if (strcmp(o->source, e->source) == 0 && of > os)
				src_sum += of - os;
		}
		if (src_sum > sum)
			sum = src_sum;
	}
	return sum;
}

bool throttle_thermal_active(double temp_c, double cur, double max, double temp_threshold_c, double drop_pct)
{
	if (isnan(temp_c) || isnan(cur) || isnan(max) || max <= 0)
		return false;
	return temp_c > temp_threshold_c && cur < max * (100.0 - drop_pct) / 100.0;
}

#define NVML_THROTTLING_MASK (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_SLOWDOWN | NVML_REASON_SYNC_BOOST | \
			      NVML_REASON_SW_THERMAL | NVML_REASON_HW_THERMAL | NVML_REASON_HW_POWER_BRAKE)

bool throttle_nvml_active(uint64_t reasons)
{
	return (reasons & NVML_THROTTLING_MASK) != 0;
}

static const struct {
	uint64_t bit;
	const char *name;
} reason_names[] = {
	{ NVML_REASON_GPU_IDLE, "gpu_idle" },
	{ NVML_REASON_APP_CLOCKS_SETTING, "applications_clocks_setting" },
	{ NVML_REASON_SW_POWER_CAP, "sw_power_cap" },
	{ NVML_REASON_HW_SLOWDOWN, "hw_slowdown" },
	{ NVML_REASON_SYNC_BOOST, "sync_boost" },
	{ NVML_REASON_SW_THERMAL, "sw_thermal_slowdown" },
	{ NVML_REASON_HW_THERMAL, "hw_thermal_slowdown" },
	{ NVML_REASON_HW_POWER_BRAKE, "hw_power_brake_slowdown" },
	{ NVML_REASON_DISPLAY_CLOCKS, "display_clock_setting" },
};

void throttle_nvml_reason_names(uint64_t reasons, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(reason_names) / sizeof(reason_names[0]); i++) {
		int n;

		if (!(reasons & reason_names[i].bit) || off >= len)
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", reason_names[i].name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

const char *throttle_nvml_reason(size_t i, uint64_t *bit)
{
	if (i >= sizeof(reason_names) / sizeof(reason_names[0]))
		return NULL;
	*bit = reason_names[i].bit;
	return reason_names[i].name;
}
