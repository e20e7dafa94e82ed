// SPDX-License-Identifier: BSD-2-Clause
#include "power_mode.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_jetson.h"
#include "sysfs_readers.h"
#include "vec.h"

#define MAX_CPUS_SCANNED 4096

/* {value: cpus} of one cpufreq file over every CPU that has it; the value
 * when all agree, else "mixed" with the counts. */
static int cpufreq_setting(const char *file, char *value, size_t len, struct power_mode_counts *counts)
{
	char path[PATH_MAX], val[128];
	int missing_run = 0;

	for (int cpu = 0; cpu < MAX_CPUS_SCANNED && missing_run < 64; cpu++) {
		size_t k = 0;

		if (sysfs_path(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cpufreq/%s", cpu, file) ||
		    sysfs_read_str(path, val, sizeof(val)) || !val[0]) {
			missing_run++;
			continue;
		}
		missing_run = 0;
		while (k < counts->n && strcmp(counts->v[k].value, val))
			k++;
		if (k == counts->n) {
			if (VEC_RESERVE(counts->v, counts->cap, counts->n, 4))
				return -ENOMEM;
			counts->v[counts->n] = (struct power_mode_count){ .cpus = 0 };
			snprintf(counts->v[counts->n++].value, sizeof(counts->v[0].value), "%s", val);
		}
		counts->v[k].cpus++;
	}
	if (counts->n == 1) {
		snprintf(value, len, "%s", counts->v[0].value);
		counts->n = 0; /* all agree: no counts */
	} else if (counts->n > 1) {
		snprintf(value, len, "mixed");
	}
	return 0;
}

/* "< POWER_MODEL ID=2 NAME=15W >" lines of nvpmodel.conf: the name of id. */
static bool nvpmodel_name(int id, char *name, size_t len)
{
	char path[PATH_MAX], line[512];
	FILE *f;
	bool found = false;

	if (sysfs_path(path, sizeof(path), "etc/nvpmodel.conf") || !(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "POWER_MODEL"), *q;
		int lid;

		if (!p || !(q = strstr(p, "ID=")) || sscanf(q + 3, "%d", &lid) != 1 || lid != id)
			continue;
		if ((q = strstr(p, "NAME=")) && sscanf(q + 5, "%63[^ >\t\n]", name) == 1 && len > 0) {
			name[len - 1] = 0;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* `nvpmodel -q` prints "NV Power Mode: MAXN" then the id; only on the
 * real root (a fixture tree has its status file instead). */
static bool nvpmodel_query(int *id, char *name, size_t len)
{
	static const char *const bins[] = { "/usr/sbin/nvpmodel", "/usr/bin/nvpmodel" };
	char cmd[64], line[256];
	bool got_name = false, got_id = false;
	FILE *p;

	if (sysfs_root()[0])
		return false;
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		if (access(bins[i], X_OK))
			continue;
		snprintf(cmd, sizeof(cmd), "%s -q 2>/dev/null", bins[i]);
		if (!(p = popen(cmd, "re")))
			return false;
		while (fgets(line, sizeof(line), p)) {
			char *c = strstr(line, "Power Mode:");

			if (c && sscanf(c + 11, " %63[^\n]", name) == 1)
				got_name = true;
			else if (got_name && sscanf(line, "%d", id) == 1)
				got_id = true;
		}
		pclose(p);
		(void)len;
		return got_name && got_id;
	}
	return false;
}

static void nvpmodel(struct power_mode *p)
{
	char path[PATH_MAX], st[256], name[64] = "";
	const char *pm;
	int id = -1;

	if (!sysfs_path(path, sizeof(path), "var/lib/nvpmodel/status") && !sysfs_read_str(path, st, sizeof(st)) &&
	    (pm = strstr(st, "pmode:")) && sscanf(pm + 6, "%d", &id) == 1) {
		p->has_nvpmodel = true;
		p->nvpmodel_id = id;
		snprintf(p->nvpmodel_source, sizeof(p->nvpmodel_source), "/var/lib/nvpmodel/status");
		if (nvpmodel_name(id, name, sizeof(name)))
			snprintf(p->nvpmodel_name, sizeof(p->nvpmodel_name), "%s", name);
		return;
	}
	if (nvpmodel_query(&id, name, sizeof(name))) {
		p->has_nvpmodel = true;
		p->nvpmodel_id = id;
		snprintf(p->nvpmodel_name, sizeof(p->nvpmodel_name), "%s", name);
		snprintf(p->nvpmodel_source, sizeof(p->nvpmodel_source), "nvpmodel -q");
	}
}

/* The EMC (memory controller) clock: debugfs, root only. */
static void emc_clock(struct power_mode *p)
{
	static const char *const cur[] = { "sys/kernel/debug/bpmp/debug/clk/emc/rate", "sys/kernel/debug/clk/emc/clk_rate" };
	static const char *const max[] = { "sys/kernel/debug/bpmp/debug/clk/emc/max_rate",
					   "sys/kernel/debug/clk/emc/clk_max_rate" };
	char path[PATH_MAX];
	long long hz;

	for (size_t i = 0; i < sizeof(cur) / sizeof(cur[0]); i++) {
		if (sysfs_path(path, sizeof(path), "%s", cur[i]) || sysfs_read_ll(path, &hz) || hz <= 0)
			continue;
		p->emc_mhz = hz / 1e6;
		if (!sysfs_path(path, sizeof(path), "%s", max[i]) && !sysfs_read_ll(path, &hz) && hz > 0)
			p->emc_max_mhz = hz / 1e6;
		return;
	}
}

/* The Jetson GPU's devfreq clock, through the same paths the sampler reads. */
static void jetson_gpu_clock(struct power_mode *p)
{
	char why[128];
	struct gpu_jetson *j = gpu_jetson__probe(why, sizeof(why));
	struct channels cs;
	double *row;

	if (!j)
		return;
	channels__init(&cs);
	gpu_jetson__add_channels(j, &cs);
	row = calloc(cs.n ? cs.n : 1, sizeof(*row));
	if (row) {
		for (int i = 0; i < cs.n; i++)
			row[i] = NAN;
		channels__read_all(&cs, row);
		for (int i = 0; i < cs.n; i++) {
			if (isnan(row[i]))
				continue;
			if (cs.v[i].metric == SM_GPU_SM_MHZ)
				p->gpu_mhz = row[i];
			else if (cs.v[i].metric == SM_GPU_MAX_MHZ)
				p->gpu_max_mhz = row[i];
		}
	}
	free(row);
	channels__free(&cs);
	gpu_jetson__free(j);
}

void power_mode__init(struct power_mode *p)
{
	memset(p, 0, sizeof(*p));
	p->emc_mhz = p->emc_max_mhz = p->gpu_mhz = p->gpu_max_mhz = NAN;
}

int power_mode__read(struct power_mode *p)
{
	int err = 0;

	power_mode__init(p);
	err |= cpufreq_setting("scaling_governor", p->governor, sizeof(p->governor), &p->governor_by_cpus);
	err |= cpufreq_setting("energy_performance_preference", p->epp, sizeof(p->epp), &p->epp_by_cpus);
	err |= cpufreq_setting("scaling_driver", p->driver, sizeof(p->driver), &p->driver_by_cpus);
	nvpmodel(p);
	emc_clock(p);
	jetson_gpu_clock(p);
	return err ? -ENOMEM : 0;
}

void power_mode__free(struct power_mode *p)
{
	free(p->governor_by_cpus.v);
	free(p->epp_by_cpus.v);
	free(p->driver_by_cpus.v);
	p->governor_by_cpus = p->epp_by_cpus = p->driver_by_cpus = (struct power_mode_counts){ NULL, 0, 0 };
}

static int dup_counts(struct power_mode_counts *c)
{
	struct power_mode_count *v = c->n ? malloc(c->n * sizeof(*v)) : NULL;

	if (c->n && !v) {
		*c = (struct power_mode_counts){ NULL, 0, 0 };
		return -ENOMEM;
	}
	if (v)
		memcpy(v, c->v, c->n * sizeof(*v));
	c->v = v;
	c->cap = c->n;
	return 0;
}

int power_mode__copy(struct power_mode *dst, const struct power_mode *src)
{
	int err = 0;

	*dst = *src;
	err |= dup_counts(&dst->governor_by_cpus);
	err |= dup_counts(&dst->epp_by_cpus);
	err |= dup_counts(&dst->driver_by_cpus);
	return err ? -ENOMEM : 0;
}

bool power_mode__any(const struct power_mode *p)
{
	return p->governor[0] || p->epp[0] || p->driver[0] || p->has_nvpmodel || !isnan(p->emc_mhz) ||
	       !isnan(p->emc_max_mhz) || !isnan(p->gpu_mhz) || !isnan(p->gpu_max_mhz);
}

/* "nvpmodel 2 (15W)", "governor powersave, epp power": what decides the
 * figures, for diff's header. */
void power_mode__describe(const struct power_mode *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (p->has_nvpmodel)
		off += snprintf(buf + off, len - off, "nvpmodel %d%s%s%s", p->nvpmodel_id, p->nvpmodel_name[0] ? " (" : "",
				p->nvpmodel_name, p->nvpmodel_name[0] ? ")" : "");
	if (p->governor[0] && off < len)
		off += snprintf(buf + off, len - off, "%sgovernor %s", off ? ", " : "", p->governor);
	if (p->epp[0] && off < len)
		off += snprintf(buf + off, len - off, "%sepp %s", off ? ", " : "", p->epp);
	if (!off)
		snprintf(buf, len, "unknown");
}

bool power_mode__differs(const struct power_mode *a, const struct power_mode *b)
{
	if (a->has_nvpmodel != b->has_nvpmodel || (a->has_nvpmodel && a->nvpmodel_id != b->nvpmodel_id))
		return true;
	return strcmp(a->governor, b->governor) || strcmp(a->epp, b->epp);
}
