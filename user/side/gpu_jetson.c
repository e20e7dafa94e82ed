// SPDX-License-Identifier: BSD-2-Clause
#include "gpu_jetson.h"

#include <errno.h>

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gpu_jetson {
	char name[64];
	char load_path[PATH_MAX];      /* per mille; "" when absent */
	char freq_dir[PATH_MAX];       /* devfreq dir with cur_freq/max_freq; "" when absent */
};

/* of_node names of Tegra GPUs: gm20b (Nano, TX1), gp10b (TX2), gv11b
 * (Xavier), ga10b (Orin); "gpu" on recent L4T device trees. */
static const char *const gpu_node_names[] = { "gm20b", "gp10b", "gv11b", "ga10b", "gpu" };

/* Load files by board, for kernels whose devfreq device has no load file. */
static const char *const load_paths[] = {
	"sys/devices/gpu.0/load",                            /* Nano, TX2, Xavier (L4T 32) */
	"sys/devices/platform/gpu.0/load",                   /* Nano, L4T 32.7 */
	"sys/devices/17000000.ga10b/load",                   /* Orin, L4T 35 */
	"sys/devices/platform/17000000.ga10b/load",
	"sys/devices/platform/bus@0/17000000.gpu/load",      /* Orin, L4T 36 */
	"sys/devices/platform/17000000.gpu/load",
	"sys/devices/17000000.gv11b/load",                   /* Xavier */
	"sys/devices/platform/17000000.gv11b/load",
	"sys/devices/17000000.gp10b/load",                   /* TX2 */
	"sys/devices/57000000.gpu/load",                     /* Nano, TX1 */
};

/* devfreq directories by board, when sys/class/devfreq is missing. */
static const char *const freq_dirs[] = {
	"sys/devices/57000000.gpu/devfreq/57000000.gpu",                 /* Nano */
	"sys/devices/platform/gpu.0/devfreq/57000000.gpu",               /* Nano, L4T 32.7 */
	"sys/devices/gpu.0/devfreq/17000000.gp10b",                      /* TX2 */
	"sys/devices/17000000.gv11b/devfreq/17000000.gv11b",             /* Xavier */
	"sys/devices/17000000.ga10b/devfreq/17000000.ga10b",             /* Orin, L4T 35 */
	"sys/devices/platform/17000000.ga10b/devfreq/17000000.ga10b",
	"sys/devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu",  /* Orin, L4T 36 */
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool is_gpu_node(const char *node)
{
	for (size_t i = 0; i < sizeof(gpu_node_names) / sizeof(gpu_node_names[0]); i++)
		if (strcmp(node, gpu_node_names[i]) == 0)
			return true;
	return false;
}

static bool is_gpu_entry(const char *entry)
{
	return strstr(entry, "gpu") || ends_with(entry, ".ga10b") || ends_with(entry, ".gv11b") ||
	       ends_with(entry, ".gp10b") || ends_with(entry, ".gm20b");
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* sys/class/devfreq/<entry>: the way jetson_stats finds the iGPU. */
static void probe_devfreq(struct gpu_jetson *j)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], node[64];
	struct dirent **ents;
	int n;

	if (sysfs_path(dir, sizeof(dir), "sys/class/devfreq"))
		return;
	n = scandir(dir, &ents, NULL, versionsort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;
		bool match;

		if (j->freq_dir[0] || e[0] == '.')
			continue;
		sysfs_fmt(path, sizeof(path), "%s/%s/device/of_node/name", dir, e);
		if (sysfs_read_str(path, node, sizeof(node)) == 0) {
			match = is_gpu_node(node);
		} else {
			match = is_gpu_entry(e);
			sysfs_copy(node, sizeof(node), e);
		}
		if (!match)
			continue;
		sysfs_fmt(path, sizeof(path), "%s/%s/cur_freq", dir, e);
		if (!readable(path))
			continue;
		sysfs_fmt(j->freq_dir, sizeof(j->freq_dir), "%s/%s", dir, e);
		/* "gpu" says less than the chip in the entry name (17000000.gpu) */
		sysfs_fmt(j->name, sizeof(j->name), "%s", strcmp(node, "gpu") ? node : e);
		sysfs_fmt(path, sizeof(path), "%s/%s/device/load", dir, e);
		if (readable(path))
			sysfs_fmt(j->load_path, sizeof(j->load_path), "%s", path);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

struct gpu_jetson *gpu_jetson__probe(char *reason, size_t reason_len)
{
	struct gpu_jetson *j = calloc(1, sizeof(*j));
	char path[PATH_MAX];

	if (!j) {
		snprintf(reason, reason_len, "out of memory");
		return NULL;
	}
	probe_devfreq(j);
	for (size_t i = 0; !j->freq_dir[0] && i < sizeof(freq_dirs) / sizeof(freq_dirs[0]); i++) {
		char cur[PATH_MAX + 16];

		if (sysfs_path(path, sizeof(path), "%s", freq_dirs[i]))
			continue;
		sysfs_fmt(cur, sizeof(cur), "%s/cur_freq", path);
		if (readable(cur)) {
			sysfs_fmt(j->freq_dir, sizeof(j->freq_dir), "%s", path);
			sysfs_fmt(j->name, sizeof(j->name), "%s", strrchr(freq_dirs[i], '/') + 1);
		}
	}
	for (size_t i = 0; !j->load_path[0] && i < sizeof(load_paths) / sizeof(load_paths[0]); i++)
		if (!sysfs_path(path, sizeof(path), "%s", load_paths[i]) && readable(path))
			sysfs_fmt(j->load_path, sizeof(j->load_path), "%s", path);
	if (!j->freq_dir[0] && !j->load_path[0]) {
		snprintf(reason, reason_len, "no Jetson GPU: no GPU devfreq or load file under %s/sys",
			 sysfs_root());
		free(j);
		return NULL;
	}
	if (!j->name[0])
		sysfs_fmt(j->name, sizeof(j->name), "tegra-gpu");
	return j;
}

void gpu_jetson__free(struct gpu_jetson *j)
{
	free(j);
}

const char *gpu_jetson__name(const struct gpu_jetson *j)
{
	return j ? j->name : NULL;
}

int gpu_jetson__read_load(const struct gpu_jetson *j, double *pct)
{
	long long v;
	int err;

	if (!j || !j->load_path[0])
		return -ENOENT;
	err = sysfs_read_ll(j->load_path, &v);
	if (err)
		return err;
	*pct = v / 10.0; /* per mille */
	return 0;
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

int gpu_jetson__add_channels(const struct gpu_jetson *j, struct channels *cs)
{
	char path[PATH_MAX + 16];
	int added = 0, base = cs->n;

	if (!j)
		return 0;
	if (j->load_path[0])
		added += channels__add(cs, SM_GPU_UTIL_PCT, CR_FILE, 0, 0.1, "gpu0", j->load_path, NULL) >= 0;
	if (j->freq_dir[0]) {
		sysfs_fmt(path, sizeof(path), "%s/cur_freq", j->freq_dir);
		added += channels__add(cs, SM_GPU_SM_MHZ, CR_FILE, 0, 1e-6, "gpu0", path, NULL) >= 0;
		sysfs_fmt(path, sizeof(path), "%s/max_freq", j->freq_dir);
		if (readable(path))
			added += channels__add(cs, SM_GPU_MAX_MHZ, CR_FILE, 0, 1e-6, "gpu0", path, NULL) >= 0;
	}
	/* The GPU's own temperature and power are a thermal zone ("GPU-therm",
	 * "gpu-thermal") and a rail ("VDD_GPU_SOC", "POM_5V_GPU") read elsewhere:
	 * alias them as the GPU's channels. */
	for (int i = 0; i < base; i++) {
		const struct channel *c = &cs->v[i];

		if (c->metric == SM_ZONE_TEMP_C && contains_ci(c->name, "gpu") &&
		    !channels__count_metric(cs, SM_GPU_TEMP_C))
			added += channels__add(cs, SM_GPU_TEMP_C, c->how, 0, c->scale, "gpu0", c->path, c->path2) >= 0;
		if (c->metric == SM_RAIL_POWER_W && contains_ci(c->name, "GPU") &&
		    !channels__count_metric(cs, SM_GPU_POWER_W))
			added += channels__add(cs, SM_GPU_POWER_W, c->how, 0, c->scale, "gpu0", c->path, c->path2) >= 0;
	}
	return added;
}

/* Power-monitor channels looked at per device (ina3221: 3 per chip; some
 * boards list up to 8, with a sum channel). */
#define RAIL_CHANNELS 8

/* L4T 34+: ina3221 hwmon, in<N>_label + in<N>_input (mV) + curr<N>_input (mA). */
static int rails_hwmon(struct channels *cs, const char *dir)
{
	char path[PATH_MAX + 64], path2[PATH_MAX + 64], label[64];
	int added = 0;

	for (int ch = 1; ch <= RAIL_CHANNELS; ch++) {
		sysfs_fmt(path, sizeof(path), "%s/in%d_label", dir, ch);
		if (sysfs_read_str(path, label, sizeof(label)) || !*label)
			continue;
		/* channel 7 is the "sum of shunt voltages"; NC marks unconnected Orin channels */
		if (ch == 7 || strstr(label, "NC") || strstr(label, "sum of shunt"))
			continue;
		sysfs_fmt(path, sizeof(path), "%s/in%d_input", dir, ch);
		sysfs_fmt(path2, sizeof(path2), "%s/curr%d_input", dir, ch);
		if (!readable(path) || !readable(path2))
			continue;
		added += channels__add(cs, SM_RAIL_POWER_W, CR_FILE_PRODUCT, ch, 1e-6, label, path, path2) >= 0;
	}
	return added;
}

/* L4T 32: ina3221x iio device, rail_name_<N> + in_power<N>_input (mW). */
static int rails_iio(struct channels *cs, const char *dir)
{
	char path[PATH_MAX + 64], path2[PATH_MAX + 64], label[64];
	int added = 0;

	for (int ch = 0; ch < RAIL_CHANNELS; ch++) {
		sysfs_fmt(path, sizeof(path), "%s/rail_name_%d", dir, ch);
		if (sysfs_read_str(path, label, sizeof(label)) || !*label)
			continue;
		sysfs_fmt(path, sizeof(path), "%s/in_power%d_input", dir, ch);
		if (readable(path)) {
			added += channels__add(cs, SM_RAIL_POWER_W, CR_FILE, ch, 1e-3, label, path, NULL) >= 0;
			continue;
		}
		sysfs_fmt(path, sizeof(path), "%s/in_voltage%d_input", dir, ch);
		sysfs_fmt(path2, sizeof(path2), "%s/in_current%d_input", dir, ch);
		if (readable(path) && readable(path2))
			added += channels__add(cs, SM_RAIL_POWER_W, CR_FILE_PRODUCT, ch, 1e-6, label, path, path2) >= 0;
	}
	return added;
}

static int subdirs(const char *dir, const char *prefix, int (*fn)(struct channels *, const char *),
		   struct channels *cs)
{
	char path[PATH_MAX + 300];
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, versionsort), added = 0;

	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		if (strncmp(ents[i]->d_name, prefix, strlen(prefix)) == 0) {
			sysfs_fmt(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			added += fn(cs, path);
		}
		free(ents[i]);
	}
	free(ents);
	return added;
}

int jetson_discover_rails(struct channels *cs)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], name[64];
	struct dirent **ents;
	int n, added = 0;

	if (sysfs_path(dir, sizeof(dir), "sys/bus/i2c/devices"))
		return 0;
	n = scandir(dir, &ents, NULL, versionsort);
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *e = ents[i]->d_name;

		sysfs_fmt(path, sizeof(path), "%s/%s/name", dir, e);
		if (e[0] != '.' && !sysfs_read_str(path, name, sizeof(name)) && strstr(name, "ina3221")) {
			sysfs_fmt(path, sizeof(path), "%s/%s/hwmon", dir, e);
			added += subdirs(path, "hwmon", rails_hwmon, cs);
			sysfs_fmt(path, sizeof(path), "%s/%s", dir, e);
			added += subdirs(path, "iio:device", rails_iio, cs);
		}
		free(ents[i]);
	}
	free(ents);
	return added;
}
