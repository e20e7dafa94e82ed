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

#define MAX_CPUS_SCANNED 4096

/* {value: cpus} of one cpufreq file over every CPU that has it; the value
 * when all agree, else "mixed" with the counts. */
static void cpufreq_setting(json_t *o, const char *file, const char *key)
{
	json_t *counts = json_object();
	char path[PATH_MAX], val[128];
	int missing_run = 0;

	for (int cpu = 0; cpu < MAX_CPUS_SCANNED && missing_run < 64; cpu++) {
		json_t *c;

		if (sysfs_path(path, sizeof(path), "sys/devices/system/cpu/cpu%d/cpufreq/%s", cpu, file) ||
		    sysfs_read_str(path, val, sizeof(val)) || !val[0]) {
			missing_run++;
			continue;
		}
		missing_run = 0;
		c = json_object_get(counts, val);
		json_object_set_new(counts, val, json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	if (json_object_size(counts) == 1) {
		json_object_set_new(o, key, json_string(json_object_iter_key(json_object_iter(counts))));
		json_decref(counts);
	} else if (json_object_size(counts) > 1) {
		char k[64];

		json_object_set_new(o, key, json_string("mixed"));
		snprintf(k, sizeof(k), "%s_by_cpus", key);
		json_object_set_new(o, k, counts);
	} else {
		json_decref(counts);
	}
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

static json_t *nvpmodel_json(void)
{
	char path[PATH_MAX], st[256], name[64] = "";
	const char *pm;
	int id = -1;

	if (!sysfs_path(path, sizeof(path), "var/lib/nvpmodel/status") && !sysfs_read_str(path, st, sizeof(st)) &&
	    (pm = strstr(st, "pmode:")) && sscanf(pm + 6, "%d", &id) == 1) {
		json_t *o = json_pack("{s:i,s:s}", "id", id, "source", "/var/lib/nvpmodel/status");

		if (nvpmodel_name(id, name, sizeof(name)))
			json_object_set_new(o, "name", json_string(name));
		return o;
	}
	if (nvpmodel_query(&id, name, sizeof(name)))
		return json_pack("{s:i,s:s,s:s}", "id", id, "name", name, "source", "nvpmodel -q");
	return NULL;
}

/* The EMC (memory controller) clock: debugfs, root only. */
static void emc_clock(json_t *o)
{
	static const char *const cur[] = { "sys/kernel/debug/bpmp/debug/clk/emc/rate", "sys/kernel/debug/clk/emc/clk_rate" };
	static const char *const max[] = { "sys/kernel/debug/bpmp/debug/clk/emc/max_rate",
					   "sys/kernel/debug/clk/emc/clk_max_rate" };
	char path[PATH_MAX];
	long long hz;

	for (size_t i = 0; i < sizeof(cur) / sizeof(cur[0]); i++) {
		if (sysfs_path(path, sizeof(path), "%s", cur[i]) || sysfs_read_ll(path, &hz) || hz <= 0)
			continue;
		json_object_set_new(o, "emc_mhz", json_real(hz / 1e6));
		if (!sysfs_path(path, sizeof(path), "%s", max[i]) && !sysfs_read_ll(path, &hz) && hz > 0)
			json_object_set_new(o, "emc_max_mhz", json_real(hz / 1e6));
		return;
	}
}

/* The Jetson GPU's devfreq clock, through the same paths the sampler reads. */
static void jetson_gpu_clock(json_t *o)
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
				json_object_set_new(o, "gpu_mhz", json_real(row[i]));
			else if (cs.v[i].metric == SM_GPU_MAX_MHZ)
				json_object_set_new(o, "gpu_max_mhz", json_real(row[i]));
		}
	}
	free(row);
	channels__free(&cs);
	gpu_jetson__free(j);
}

json_t *power_mode__json(void)
{
	json_t *o = json_object(), *nv;

	if (!o)
		return NULL;
	cpufreq_setting(o, "scaling_governor", "governor");
	cpufreq_setting(o, "energy_performance_preference", "energy_performance_preference");
	cpufreq_setting(o, "scaling_driver", "scaling_driver");
	nv = nvpmodel_json();
	if (nv)
		json_object_set_new(o, "nvpmodel", nv);
	emc_clock(o);
	jetson_gpu_clock(o);
	return o;
}

/* "nvpmodel 2 (15W)", "governor powersave, epp power": what decides the
 * figures, for diff's header. */
void power_mode__describe(const json_t *pw, char *buf, size_t len)
{
	const json_t *nv = json_object_get(pw, "nvpmodel");
	const char *gov = json_string_value(json_object_get(pw, "governor"));
	const char *epp = json_string_value(json_object_get(pw, "energy_performance_preference"));
	size_t off = 0;

	buf[0] = 0;
	if (nv) {
		const char *name = json_string_value(json_object_get(nv, "name"));

		off += snprintf(buf + off, len - off, "nvpmodel %lld%s%s%s", json_integer_value(json_object_get(nv, "id")),
				name ? " (" : "", name ? name : "", name ? ")" : "");
	}
	if (gov && off < len)
		off += snprintf(buf + off, len - off, "%sgovernor %s", off ? ", " : "", gov);
	if (epp && off < len)
		off += snprintf(buf + off, len - off, "%sepp %s", off ? ", " : "", epp);
	if (!off)
		snprintf(buf, len, "unknown");
}

bool power_mode__differs(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "nvpmodel", "governor", "energy_performance_preference" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);

		if (!strcmp(keys[i], "nvpmodel")) {
			x = json_object_get(x, "id");
			y = json_object_get(y, "id");
		}
		if ((x || y) && !json_equal((json_t *)x, (json_t *)y))
			return true;
	}
	return false;
}
