// SPDX-License-Identifier: BSD-2-Clause
#include "sysfs_readers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "vec.h"

const char *sysfs_root(void)
{
	static __thread char root[PATH_MAX];
	const char *env = getenv("INFERTRACE_SYSFS_ROOT");
	size_t n;

	if (!env || !*env)
		env = "/";
	n = strlen(env);
	if (n >= sizeof(root))
		n = sizeof(root) - 1;
	memcpy(root, env, n);
	while (n > 0 && root[n - 1] == '/')
		n--;
	root[n] = '\0';
	return root;
}

int sysfs_path(char *buf, size_t len, const char *fmt, ...)
{
	const char *root = sysfs_root();
	va_list ap;
	int n, m;

	n = snprintf(buf, len, "%s/", root);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - n)
		return -ENAMETOOLONG;
	return 0;
}

int sysfs_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void sysfs_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

int sysfs_read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	/* the trim starts at the end of the first line, not of what was read */
	n = (ssize_t)strcspn(buf, "\n");
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\n'))
		buf[--n] = '\0';
	return 0;
}

int sysfs_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	long long x;
	int err;

	err = sysfs_read_str(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	x = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*v = x;
	return 0;
}

void channels__init(struct channels *cs)
{
	memset(cs, 0, sizeof(*cs));
}

void channels__free(struct channels *cs)
{
	if (!cs)
		return;
	for (int i = 0; i < cs->n; i++) {
		free(cs->v[i].path);
		free(cs->v[i].path2);
	}
	free(cs->v);
	free(cs->prev_busy);
	free(cs->prev_total);
	memset(cs, 0, sizeof(*cs));
}

int channels__add(struct channels *cs, enum side_metric metric, enum chan_read how, int index,
		  double scale, const char *name, const char *path, const char *path2)
{
	struct channel *c;

	if (VEC_RESERVE(cs->v, cs->cap, (size_t)cs->n, 32))
		return -ENOMEM;
	c = &cs->v[cs->n];
	memset(c, 0, sizeof(*c));
	c->metric = metric;
	c->how = how;
	c->index = index;
	c->scale = scale;
	sysfs_fmt(c->name, sizeof(c->name), "%s", name);
	if (path && !(c->path = strdup(path)))
		return -ENOMEM;
	if (path2 && !(c->path2 = strdup(path2))) {
		free(c->path);
		return -ENOMEM;
	}
	return cs->n++;
}

int channels__count_metric(const struct channels *cs, enum side_metric metric)
{
	int n = 0;

	for (int i = 0; i < cs->n; i++)
		n += cs->v[i].metric == metric;
	return n;
}

static double read_meminfo_mb(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	double v = NAN;
	FILE *f = fopen(path, "re");

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (strncmp(line, key, klen) == 0 && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%llu", &kb) == 1) {
			v = kb / 1024.0;
			break;
		}
	}
	fclose(f);
	return v;
}

/* Per-CPU load over the interval since the previous call. */
/* The time fields of a /proc/stat cpuN line, in order (proc(5)). */
enum proc_stat_field {
	STAT_USER, STAT_NICE, STAT_SYSTEM, STAT_IDLE, STAT_IOWAIT, STAT_IRQ, STAT_SOFTIRQ, STAT_STEAL,
	STAT_GUEST, STAT_GUEST_NICE, STAT_FIELDS
};
#define MAX_CPUS 65536 /* a larger cpu number in /proc/stat is taken for garbage */

static void read_cpu_loads(struct channels *cs, const char *path, double *load, int nload)
{
	char line[512];
	FILE *f = fopen(path, "re");

	for (int i = 0; i < nload; i++)
		load[i] = NAN;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[STAT_FIELDS] = { 0 }, busy, total = 0;
		int cpu, n;

		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		n = sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
		if (n < 1 + STAT_IOWAIT /* the cpu and user..idle */ || cpu < 0 || cpu >= cs->nprev)
			continue;
		/* guest and guest_nice are already counted in user and nice */
		for (int i = 0; i < STAT_GUEST; i++)
			total += v[i];
		busy = total - v[STAT_IDLE] - v[STAT_IOWAIT];
		/* a busy counter that went back gives no load, not a wrapped
		 * difference; iowait going back (proc(5)) gives at most 100 % */
		if (cs->prev_total[cpu] && total > cs->prev_total[cpu] && busy >= cs->prev_busy[cpu] && cpu < nload)
			load[cpu] = 100.0 * fmin(1.0, (double)(busy - cs->prev_busy[cpu]) /
						      (double)(total - cs->prev_total[cpu]));
		cs->prev_busy[cpu] = busy;
		cs->prev_total[cpu] = total;
	}
	fclose(f);
}

static double read_one(const struct channel *c)
{
	long long a, b;
	struct statvfs sv;

	switch (c->how) {
	case CR_FILE:
		return sysfs_read_ll(c->path, &a) ? NAN : (double)a * c->scale;
	case CR_FILE_PRODUCT:
		if (sysfs_read_ll(c->path, &a) || sysfs_read_ll(c->path2, &b))
			return NAN;
		return (double)a * (double)b * c->scale;
	case CR_MEMINFO:
		return read_meminfo_mb(c->path, c->name);
	case CR_STATVFS_FREE:
		if (statvfs(c->path, &sv))
			return NAN;
		return (double)sv.f_bavail * sv.f_frsize / (1024.0 * 1024.0);
	case CR_STATVFS_TOTAL:
		if (statvfs(c->path, &sv))
			return NAN;
		return (double)sv.f_blocks * sv.f_frsize / (1024.0 * 1024.0);
	case CR_CPU_LOAD:
	case CR_EXTERNAL:
		break;
	}
	return NAN;
}

void channels__read_all(struct channels *cs, double *row)
{
	double *loads = NULL;
	bool loads_read = false;

	for (int i = 0; i < cs->n; i++) {
		struct channel *c = &cs->v[i];

		if (c->how == CR_EXTERNAL)
			continue;
		if (c->how != CR_CPU_LOAD) {
			row[i] = read_one(c);
			continue;
		}
		if (!loads_read) {
			loads_read = true;
			loads = calloc(cs->nprev ? cs->nprev : 1, sizeof(*loads));
			if (loads)
				read_cpu_loads(cs, c->path, loads, cs->nprev);
		}
		row[i] = loads && c->index < cs->nprev ? loads[c->index] : NAN;
	}
	free(loads);
}

/* Directory entries starting with prefix, in natural order (zone2 < zone10). */
static int list_dir(const char *dir, const char *prefix, struct dirent ***out)
{
	int n = scandir(dir, out, NULL, versionsort);

	if (n < 0) {
		*out = NULL;
		return 0;
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strncmp((*out)[i]->d_name, prefix, strlen(prefix)) == 0 &&
		    strcmp((*out)[i]->d_name, ".") && strcmp((*out)[i]->d_name, ".."))
			(*out)[k++] = (*out)[i];
		else
			free((*out)[i]);
	}
	return k;
}

static void free_list(struct dirent **ents, int n)
{
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

static bool name_taken(const struct channels *cs, enum side_metric m, const char *name)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->v[i].metric == m && strcmp(cs->v[i].name, name) == 0)
			return true;
	return false;
}

int sysfs_discover_thermal(struct channels *cs)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], type[64], name[96];
	struct dirent **ents;
	int n, added = 0;

	if (sysfs_path(dir, sizeof(dir), "sys/class/thermal"))
		return 0;
	n = list_dir(dir, "thermal_zone", &ents);
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		int zone = atoi(d + strlen("thermal_zone"));
		long long t;

		sysfs_fmt(path, sizeof(path), "%s/%s/type", dir, d);
		if (sysfs_read_str(path, type, sizeof(type)) || !*type)
			sysfs_fmt(type, sizeof(type), "%s", d);
		sysfs_fmt(path, sizeof(path), "%s/%s/temp", dir, d);
		/* a zone whose sensor is absent fails to read: skip it */
		if (sysfs_read_ll(path, &t))
			continue;
		sysfs_fmt(name, sizeof(name), "%s", type);
		if (name_taken(cs, SM_ZONE_TEMP_C, name))
			sysfs_fmt(name, sizeof(name), "%s.%d", type, zone);
		if (channels__add(cs, SM_ZONE_TEMP_C, CR_FILE, zone, 0.001, name, path, NULL) >= 0)
			added++;
	}
	free_list(ents, n);
	return added;
}

int sysfs_discover_cpufreq(struct channels *cs)
{
	static const struct {
		const char *file;
		enum side_metric m;
	} files[] = {
		{ "scaling_cur_freq", SM_CPU_MHZ },
		{ "cpuinfo_max_freq", SM_CPU_MAX_MHZ },
		{ "scaling_max_freq", SM_CPU_SCALING_MAX_MHZ },
	};
	char dir[PATH_MAX], path[PATH_MAX + 64], name[32];
	struct dirent **ents;
	int n, added = 0;

	if (sysfs_path(dir, sizeof(dir), "sys/devices/system/cpu"))
		return 0;
	n = list_dir(dir, "cpu", &ents);
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char *end;
		long cpu = strtol(d + 3, &end, 10);

		if (end == d + 3 || *end)
			continue;
		sysfs_fmt(name, sizeof(name), "cpu%ld", cpu);
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			sysfs_fmt(path, sizeof(path), "%s/%s/cpufreq/%s", dir, d, files[k].file);
			if (access(path, R_OK))
				continue;
			if (channels__add(cs, files[k].m, CR_FILE, cpu, 0.001, name, path, NULL) >= 0)
				added++;
		}
	}
	free_list(ents, n);
	return added;
}

static int hwmon_kind(struct channels *cs, const char *dir, const char *chip, const char *kind,
		      enum side_metric m, double scale)
{
	char path[PATH_MAX + 64], label[64], name[96];
	struct dirent **ents;
	int n, added = 0;
	size_t klen = strlen(kind);

	n = list_dir(dir, kind, &ents);
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char *end;
		long idx = strtol(d + klen, &end, 10);

		if (end == d + klen || strcmp(end, "_input"))
			continue;
		sysfs_fmt(path, sizeof(path), "%s/%s%ld_label", dir, kind, idx);
		if (sysfs_read_str(path, label, sizeof(label)) || !*label)
			sysfs_fmt(label, sizeof(label), "%s%ld", kind, idx);
		sysfs_fmt(name, sizeof(name), "%s/%s", chip, label);
		sysfs_fmt(path, sizeof(path), "%s/%s", dir, d);
		if (name_taken(cs, m, name))
			continue;
		if (channels__add(cs, m, CR_FILE, (int)idx, scale, name, path, NULL) >= 0)
			added++;
	}
	free_list(ents, n);
	return added;
}

int sysfs_discover_hwmon(struct channels *cs)
{
	char dir[PATH_MAX], sub[PATH_MAX + 64], path[PATH_MAX + 128], chip[64];
	struct dirent **ents;
	int n, added = 0;

	if (sysfs_path(dir, sizeof(dir), "sys/class/hwmon"))
		return 0;
	n = list_dir(dir, "hwmon", &ents);
	for (int i = 0; i < n; i++) {
		sysfs_fmt(sub, sizeof(sub), "%s/%s", dir, ents[i]->d_name);
		sysfs_fmt(path, sizeof(path), "%s/name", sub);
		if (sysfs_read_str(path, chip, sizeof(chip)) || !*chip)
			sysfs_fmt(chip, sizeof(chip), "%s", ents[i]->d_name);
		added += hwmon_kind(cs, sub, chip, "temp", SM_HWMON_TEMP_C, 0.001);
		added += hwmon_kind(cs, sub, chip, "power", SM_HWMON_POWER_W, 1e-6);
	}
	free_list(ents, n);
	return added;
}

int sysfs_discover_meminfo(struct channels *cs)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), "proc/meminfo") || isnan(read_meminfo_mb(path, "MemAvailable")))
		return 0;
	return channels__add(cs, SM_MEM_AVAILABLE_MB, CR_MEMINFO, 0, 1.0, "MemAvailable", path, NULL) >= 0;
}

int sysfs_discover_cpuload(struct channels *cs)
{
	char path[PATH_MAX], line[512], name[32];
	int maxcpu = -1, added = 0;
	FILE *f;

	if (sysfs_path(path, sizeof(path), "proc/stat") || !(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		int cpu;

		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9' || sscanf(line + 3, "%d", &cpu) != 1)
			continue;
		if (cpu > maxcpu && cpu < MAX_CPUS) {
			for (int c = maxcpu + 1; c <= cpu; c++) {
				/* CPUs missing from /proc/stat are offline; their channel stays NAN */
				sysfs_fmt(name, sizeof(name), "cpu%d", c);
				if (c == cpu && channels__add(cs, SM_CPU_LOAD_PCT, CR_CPU_LOAD, c, 1.0, name, path, NULL) >= 0)
					added++;
			}
			maxcpu = cpu;
		}
	}
	fclose(f);
	if (maxcpu >= 0) {
		free(cs->prev_busy);
		free(cs->prev_total);
		cs->nprev = maxcpu + 1;
		cs->prev_busy = calloc(cs->nprev, sizeof(*cs->prev_busy));
		cs->prev_total = calloc(cs->nprev, sizeof(*cs->prev_total));
		if (!cs->prev_busy || !cs->prev_total)
			cs->nprev = 0;
	}
	return added;
}

int sysfs_add_disk(struct channels *cs, const char *dir)
{
	int added = 0;

	added += channels__add(cs, SM_DISK_FREE_MB, CR_STATVFS_FREE, 0, 1.0, dir, dir, NULL) >= 0;
	added += channels__add(cs, SM_DISK_TOTAL_MB, CR_STATVFS_TOTAL, 0, 1.0, dir, dir, NULL) >= 0;
	return added;
}
