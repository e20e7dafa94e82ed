// SPDX-License-Identifier: BSD-2-Clause
/* The side-data readers (user/side/sysfs_readers.c) over any bytes in the
 * sysfs and procfs files they read: thermal zones, cpufreq, hwmon,
 * /proc/meminfo and /proc/stat are kernel text, but a driver, a board or a
 * fixture tree can put anything there (and any name in a directory).
 * Discovery and two reads (CPU loads are deltas) give values or NAN, never a
 * crash; a string read is terminated, one line, trimmed; a load is NAN or a
 * share within 0..100 %.
 *
 * The input is a fixture tree under INFERTRACE_SYSFS_ROOT: segments split
 * by "%%\n", in order the contents of the files below, then /proc/stat for
 * the second read, then a name X. A segment "!" leaves its file out, as do
 * missing segments. X ('/' read as '_', at most 40 bytes) names a second
 * zone thermal_zoneX, cpuX, hwmonX and hwmon0's tempX_* and powerX_input,
 * with the same contents as zone 0, cpu0, hwmon0 and temp1/power1. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "sysfs_readers.h"

#define SEP "%%\n"
#define NAME_MAX_LEN 40

static const char *const files[] = {
	"sys/class/thermal/thermal_zone0/type",
	"sys/class/thermal/thermal_zone0/temp",
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
	"sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq",
	"sys/class/hwmon/hwmon0/name",
	"sys/class/hwmon/hwmon0/temp1_label",
	"sys/class/hwmon/hwmon0/temp1_input",
	"sys/class/hwmon/hwmon0/power1_input",
	"proc/meminfo",
	"proc/stat",
};
enum { F_TYPE, F_TEMP, F_CUR, F_MAX, F_SMAX, F_NAME, F_LABEL, F_TIN, F_PIN, F_MEM, F_STAT, NFILES };
#define SEG_STAT2 NFILES
#define SEG_NAME (NFILES + 1)
#define NSEGS (NFILES + 2)

/* the files named by X, each with the contents of one above */
static const struct {
	const char *fmt;
	int from;
} named[] = {
	{ "sys/class/thermal/thermal_zone%s/type", F_TYPE },
	{ "sys/class/thermal/thermal_zone%s/temp", F_TEMP },
	{ "sys/devices/system/cpu/cpu%s/cpufreq/scaling_cur_freq", F_CUR },
	{ "sys/class/hwmon/hwmon%s/name", F_NAME },
	{ "sys/class/hwmon/hwmon0/temp%s_label", F_LABEL },
	{ "sys/class/hwmon/hwmon0/temp%s_input", F_TIN },
	{ "sys/class/hwmon/hwmon0/power%s_input", F_PIN },
};

struct seg {
	const uint8_t *p;
	size_t n;
	bool present;
};

static char root[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

static void rm_root(void)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(root);
}

/* mkdir -p of rel's directory under the root, then rel := the bytes */
static void put(const char *rel, const struct seg *s)
{
	char path[PATH_MAX];
	FILE *f;

	if (!s->present)
		return;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "we");
	if (!f)
		return; /* X made it a directory's name, or a name too long */
	if (s->n && fwrite(s->p, 1, s->n, f) != s->n)
		abort();
	fclose(f);
}

static void check_string(const char *path)
{
	static const size_t lens[] = { 1, 2, 8, 64 };
	char buf[64];
	long long v;
	size_t n;

	if (sysfs_read_str(path, buf, 0) != -EINVAL)
		abort();
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		if (sysfs_read_str(path, buf, lens[i]))
			continue;
		n = strlen(buf);
		if (n >= lens[i] || strchr(buf, '\n') || (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t')))
			abort();
	}
	(void)sysfs_read_ll(path, &v);
}

static void check_loads(const struct channels *cs, const double *row)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->v[i].how == CR_CPU_LOAD && !isnan(row[i]) && !(row[i] >= 0.0 && row[i] <= 100.0))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seg seg[NSEGS] = { 0 };
	char name[NAME_MAX_LEN + 1], rel[PATH_MAX], path[PATH_MAX];
	struct channels cs;
	double *row;

	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/infertrace-fuzz-sysfs-XXXXXX",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
		if (!mkdtemp(root))
			abort();
		setenv("INFERTRACE_SYSFS_ROOT", root, 1);
		atexit(rm_root);
	}
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	for (int i = 0; i < NSEGS && size; i++) {
		const uint8_t *end = memmem(data, size, SEP, strlen(SEP));
		size_t n = end ? (size_t)(end - data) : size;

		seg[i] = (struct seg){ data, n, !(n == 1 && data[0] == '!') };
		data += n, size -= n;
		if (end)
			data += strlen(SEP), size -= strlen(SEP);
	}
	for (int i = 0; i < NFILES; i++)
		put(files[i], &seg[i]);
	if (seg[SEG_NAME].present && seg[SEG_NAME].n) {
		size_t n = seg[SEG_NAME].n < NAME_MAX_LEN ? seg[SEG_NAME].n : NAME_MAX_LEN;

		memcpy(name, seg[SEG_NAME].p, n);
		name[n] = 0;
		for (char *p = name; *p; p++)
			if (*p == '/')
				*p = '_';
		for (size_t i = 0; *name && i < sizeof(named) / sizeof(named[0]); i++) {
			snprintf(rel, sizeof(rel), named[i].fmt, name);
			put(rel, &seg[named[i].from]);
		}
	}

	channels__init(&cs);
	sysfs_discover_thermal(&cs);
	sysfs_discover_cpufreq(&cs);
	sysfs_discover_hwmon(&cs);
	sysfs_discover_meminfo(&cs);
	sysfs_discover_cpuload(&cs);
	/* an INA3221 rail's volts x amps, and statvfs of the tree */
	snprintf(path, sizeof(path), "%s/%s", root, files[F_TIN]);
	snprintf(rel, sizeof(rel), "%s/%s", root, files[F_PIN]);
	channels__add(&cs, SM_RAIL_POWER_W, CR_FILE_PRODUCT, 0, 1e-6, "rail", path, rel);
	sysfs_add_disk(&cs, root);

	row = calloc(cs.n + 1, sizeof(*row));
	if (!row)
		abort();
	channels__read_all(&cs, row);
	check_loads(&cs, row);
	snprintf(rel, sizeof(rel), "%s/%s", root, files[F_STAT]);
	if (seg[SEG_STAT2].n || seg[SEG_STAT2].present) {
		remove(rel);
		put(files[F_STAT], &seg[SEG_STAT2]);
	}
	channels__read_all(&cs, row);
	check_loads(&cs, row);
	free(row);
	channels__free(&cs);

	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		check_string(path);
	}
	return 0;
}
