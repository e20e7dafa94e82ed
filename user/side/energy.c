// SPDX-License-Identifier: BSD-2-Clause
#include "energy.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sysfs_readers.h"
#include "vec.h"

const char *energy_domain_name(enum energy_domain d)
{
	static const char *const names[] = { "cpu", "dram", "gpu", "board", "other" };

	return (unsigned int)d <= ENERGY_OTHER ? names[d] : "other";
}

uint64_t energy_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range, bool *wrapped)
{
	*wrapped = cur < prev;
	if (!*wrapped)
		return cur - prev;
	/* the counter ran up to max_range and restarted from 0 */
	return max_range >= prev ? (max_range - prev) + cur : cur;
}

enum energy_domain energy_powercap_domain(const char *name)
{
	if (!strncmp(name, "package", 7))
		return ENERGY_CPU;
	if (!strcmp(name, "dram"))
		return ENERGY_DRAM;
	if (!strcmp(name, "psys"))
		return ENERGY_BOARD;
	return ENERGY_OTHER; /* core and uncore lie inside the package */
}

enum energy_domain energy_rail_domain(const char *label)
{
	size_t n = strlen(label);
	bool cpu = strcasestr(label, "CPU") != NULL, gpu = strcasestr(label, "GPU") != NULL;

	/* the module's input: VDD_IN (Orin), POM_5V_IN (Nano), VIN_SYS_5V0 (AGX Orin) */
	if ((n >= 3 && !strcasecmp(label + n - 3, "_IN")) || !strncasecmp(label, "VIN", 3))
		return ENERGY_BOARD;
	if (cpu && gpu) /* VDD_CPU_GPU_CV (Orin NX/Nano): one rail for both, not split */
		return ENERGY_OTHER;
	return gpu ? ENERGY_GPU : cpu ? ENERGY_CPU : ENERGY_OTHER;
}

static void remember(struct energy_source *e, uint64_t ts)
{
	e->hist_ts[e->hist_n % ENERGY_HIST] = ts;
	e->hist_j[e->hist_n % ENERGY_HIST] = e->joules;
	e->hist_n++;
}

double energy_source__recent_w(const struct energy_source *e, uint64_t window_ns)
{
	unsigned int last, k, kept;

	if (e->hist_n < 2)
		return NAN;
	last = (e->hist_n - 1) % ENERGY_HIST;
	kept = e->hist_n < ENERGY_HIST ? e->hist_n : ENERGY_HIST;
	for (unsigned int back = 1; back < kept; back++) {
		k = (e->hist_n - 1 - back) % ENERGY_HIST;
		if (e->hist_ts[last] - e->hist_ts[k] >= window_ns || back == kept - 1)
			return e->hist_ts[last] > e->hist_ts[k] ?
			       (e->hist_j[last] - e->hist_j[k]) / ((e->hist_ts[last] - e->hist_ts[k]) / 1e9) : NAN;
	}
	return NAN;
}

void energy_source__counter(struct energy_source *e, uint64_t raw, uint64_t ts)
{
	bool wrapped;
	uint64_t d;

	if (!e->primed) {
		e->primed = true;
		e->prev_raw = raw;
		e->prev_ts = e->first_ts = ts;
		e->last_w = NAN;
		remember(e, ts);
		return;
	}
	d = energy_counter_delta(e->prev_raw, raw, e->max_range, &wrapped);
	e->wraps += wrapped;
	e->joules += d * e->unit_j;
	e->last_w = ts > e->prev_ts ? d * e->unit_j / ((ts - e->prev_ts) / 1e9) : NAN;
	e->prev_raw = raw;
	e->prev_ts = ts;
	remember(e, ts);
}

void energy_source__power(struct energy_source *e, double w, uint64_t ts)
{
	if (isnan(w)) {
		e->read_errors++;
		return;
	}
	if (!e->primed) {
		e->primed = true;
		e->prev_w = w;
		e->prev_ts = e->first_ts = ts;
		e->last_w = w;
		remember(e, ts);
		return;
	}
	e->joules += (e->prev_w + w) / 2 * ((ts - e->prev_ts) / 1e9);
	e->prev_w = e->last_w = w;
	e->prev_ts = ts;
	remember(e, ts);
}

struct energy_source *energy_add(struct energy_source **v, int *n, size_t *cap)
{
	if (VEC_RESERVE(*v, *cap, (size_t)*n, 8))
		return NULL;
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].limit_w = NAN;
	(*v)[*n].last_w = NAN;
	(*v)[*n].gpu = -1;
	(*v)[*n].power_col = -1;
	return &(*v)[(*n)++];
}

/* One zone directory: name, energy_uj, max_energy_range_uj, the long-term
 * limit. 1 when added, 0 when skipped, -errno when energy_uj cannot be read. */
static int add_zone(const char *dir, const char *entry, struct energy_source **v, int *n, size_t *cap)
{
	char path[PATH_MAX + 64], name[64];
	long long range = 0, limit;
	struct energy_source *e;

	sysfs_fmt(path, sizeof(path), "%s/name", dir);
	if (sysfs_read_str(path, name, sizeof(name)))
		return 0;
	sysfs_fmt(path, sizeof(path), "%s/energy_uj", dir);
	{
		long long probe;
		int err = sysfs_read_ll(path, &probe);

		if (err)
			return err;
	}
	if (!(e = energy_add(v, n, cap)))
		return -ENOMEM;
	sysfs_fmt(e->name, sizeof(e->name), "%s:%s", entry, name);
	sysfs_copy(e->path, sizeof(e->path), path);
	e->domain = energy_powercap_domain(name);
	e->kind = ENERGY_COUNTER;
	e->via = ENERGY_VIA_POWERCAP;
	e->unit_j = 1e-6;
	sysfs_fmt(path, sizeof(path), "%s/max_energy_range_uj", dir);
	if (!sysfs_read_ll(path, &range) && range > 0)
		e->max_range = (uint64_t)range;
	sysfs_fmt(path, sizeof(path), "%s/constraint_0_power_limit_uw", dir);
	if (!sysfs_read_ll(path, &limit) && limit > 0)
		e->limit_w = limit / 1e6;
	return 1;
}

int energy_discover_powercap(struct energy_source **v, int *n, size_t *cap, char *why, size_t whylen)
{
	char dir[PATH_MAX], zone[PATH_MAX + 300];
	struct dirent **ents;
	int nent, added = 0, denied = 0, last_err = 0;

	why[0] = 0;
	if (sysfs_path(dir, sizeof(dir), "sys/class/powercap") || (nent = scandir(dir, &ents, NULL, versionsort)) < 0) {
		snprintf(why, whylen, "no powercap zones (no %s: RAPL not exposed, e.g. in a VM)",
			 "/sys/class/powercap");
		return 0;
	}
	for (int i = 0; i < nent; i++) {
		const char *e = ents[i]->d_name;
		int r;

		/* intel-rapl:0, intel-rapl:0:0 ...; the MMIO interface repeats package-0 */
		if (e[0] == '.' || !strchr(e, ':') || strstr(e, "mmio")) {
			free(ents[i]);
			continue;
		}
		sysfs_fmt(zone, sizeof(zone), "%s/%s", dir, e);
		r = add_zone(zone, e, v, n, cap);
		if (r > 0)
			added++;
		else if (r < 0) {
			denied++;
			last_err = -r;
		}
		free(ents[i]);
	}
	free(ents);
	if (!added && denied)
		snprintf(why, whylen, "powercap energy_uj not readable: %s (root only since Linux 5.10)",
			 strerror(last_err));
	else if (!added)
		snprintf(why, whylen, "no powercap zone with an energy counter (RAPL not exposed, e.g. in a VM)");
	return added;
}

int energy_source__record(struct energy_source *e, uint64_t ts)
{
	if (!e->primed)
		return 0;
	if (e->nseries == e->capseries) {
		/* series_ts and series_j share one capacity */
		size_t cap = vec_grown(e->capseries, e->nseries, sizeof(*e->series_ts), 256);

		if (!cap || VEC_RESIZE(e->series_ts, cap) || VEC_RESIZE(e->series_j, cap))
			return -ENOMEM;
		e->capseries = cap;
	}
	/* a reading dated before the previous one (clock-equal reads) adds nothing */
	if (e->nseries && ts <= e->series_ts[e->nseries - 1])
		return 0;
	e->series_ts[e->nseries] = ts;
	e->series_j[e->nseries++] = e->joules;
	return 0;
}

double energy_source__total_at(const struct energy_source *e, uint64_t t)
{
	size_t lo = 0, hi = e->nseries;

	while (lo < hi) { /* the first reading at or after t */
		size_t mid = lo + (hi - lo) / 2;

		if (e->series_ts[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == e->nseries)
		return NAN;
	if (e->series_ts[lo] == t)
		return e->series_j[lo];
	if (lo == 0)
		return NAN;
	return e->series_j[lo - 1] + (e->series_j[lo] - e->series_j[lo - 1]) * (double)(t - e->series_ts[lo - 1]) /
	       (double)(e->series_ts[lo] - e->series_ts[lo - 1]);
}

void energy_source__free(struct energy_source *e)
{
	free(e->series_ts);
	free(e->series_j);
	e->series_ts = NULL;
	e->series_j = NULL;
	e->nseries = e->capseries = 0;
}

double energy_source__gap_at(const struct energy_source *e, uint64_t t)
{
	size_t lo = 0, hi;

	if (e->nseries < 2 || t < e->series_ts[0] || t > e->series_ts[e->nseries - 1])
		return NAN;
	hi = e->nseries - 1;
	while (hi - lo > 1) { /* series_ts[lo] <= t <= series_ts[hi] */
		size_t mid = lo + (hi - lo) / 2;

		if (e->series_ts[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return (double)(e->series_ts[hi] - e->series_ts[lo]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double energy_source__median_gap_ms(const struct energy_source *e)
{
	uint64_t *g;
	double med;

	if (e->nseries < 2 || !(g = malloc((e->nseries - 1) * sizeof(*g))))
		return NAN;
	for (size_t i = 1; i < e->nseries; i++)
		g[i - 1] = e->series_ts[i] - e->series_ts[i - 1];
	qsort(g, e->nseries - 1, sizeof(*g), cmp_u64);
	size_t mid = (e->nseries - 1) / 2;

	med = (double)g[mid] / 1e6;
	free(g);
	return med;
}
