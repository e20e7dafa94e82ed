// SPDX-License-Identifier: BSD-2-Clause
/* Side-data channels read from sysfs and procfs.
 *
 * Every value the side sampler records is one channel: a named column with a
 * metric kind, a unit conversion and a way to read it (a sysfs file, the
 * product of two files, a /proc/meminfo key, a CPU's load from /proc/stat,
 * statvfs of a directory, or "external" for values the GPU backends fill in).
 * Discovery appends channels once; channels__read_all() then reads them all
 * into one row of doubles (NAN where a read failed).
 *
 * All paths are under the root named by INFERTRACE_SYSFS_ROOT (default "/"),
 * so tests point the readers at a fixture tree. */
#ifndef INFERTRACE_SYSFS_READERS_H
#define INFERTRACE_SYSFS_READERS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum side_metric {
	SM_ZONE_TEMP_C,          /* thermal_zone<N>/temp */
	SM_HWMON_TEMP_C,         /* hwmon temp*_input */
	SM_HWMON_POWER_W,        /* hwmon power*_input */
	SM_RAIL_POWER_W,         /* Jetson INA3221 rail */
	SM_CPU_MHZ,              /* scaling_cur_freq */
	SM_CPU_MAX_MHZ,          /* cpuinfo_max_freq */
	SM_CPU_SCALING_MAX_MHZ,  /* scaling_max_freq (lowered by thermal caps) */
	SM_CPU_LOAD_PCT,         /* busy share of one CPU since the last row */
	SM_MEM_AVAILABLE_MB,     /* /proc/meminfo MemAvailable */
	SM_DISK_FREE_MB,
	SM_DISK_TOTAL_MB,
	SM_GPU_UTIL_PCT,
	SM_GPU_MEM_UTIL_PCT,
	SM_GPU_MEM_USED_MB,
	SM_GPU_MEM_TOTAL_MB,
	SM_GPU_TEMP_C,
	SM_GPU_POWER_W,
	SM_GPU_SM_MHZ,           /* NVML SM clock, or the Jetson GPU devfreq clock */
	SM_GPU_MEM_MHZ,
	SM_GPU_MAX_MHZ,          /* maximum SM / devfreq clock */
	SM_GPU_REASONS,          /* NVML throttle-reason bit mask (exact in a double) */
	SM_GPU_PROC_MEM_MB,      /* GPU memory of the target processes */
	SM__COUNT,
};

enum chan_read {
	CR_FILE,          /* integer in path, times scale */
	CR_FILE_PRODUCT,  /* path * path2 * scale (INA3221 volts x amps) */
	CR_MEMINFO,       /* path is /proc/meminfo, name is the key */
	CR_CPU_LOAD,      /* path is /proc/stat, index the CPU */
	CR_STATVFS_FREE,  /* path is a directory (not under the sysfs root) */
	CR_STATVFS_TOTAL,
	CR_EXTERNAL,      /* filled in by a GPU backend */
};

struct channel {
	enum side_metric metric;
	enum chan_read how;
	int index;          /* CPU number, GPU index, zone number */
	double scale;
	char name[96];
	char *path;
	char *path2;
};

struct channels {
	struct channel *v;
	int n;
	size_t cap;
	/* previous /proc/stat counters per CPU, for CR_CPU_LOAD deltas */
	unsigned long long *prev_busy, *prev_total;
	int nprev;
};

/* The root all sysfs/procfs paths are read under, without a trailing '/'
 * ("" for "/"). */
const char *sysfs_root(void);
/* root + printf(fmt, ...) into buf; -ENAMETOOLONG when it does not fit. */
int sysfs_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* printf into buf; -ENAMETOOLONG when it does not fit (buf then unusable). */
int sysfs_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copies src into dst, truncated to fit. */
void sysfs_copy(char *dst, size_t len, const char *src);
/* First line of a file, trailing whitespace trimmed. 0 or -errno. */
int sysfs_read_str(const char *path, char *buf, size_t len);
/* A file holding one integer (further words ignored, "32760 ma"). */
int sysfs_read_ll(const char *path, long long *v);

void channels__init(struct channels *cs);
void channels__free(struct channels *cs);
/* Appends one channel; returns its index or -ENOMEM. */
int channels__add(struct channels *cs, enum side_metric metric, enum chan_read how, int index,
		  double scale, const char *name, const char *path, const char *path2);
int channels__count_metric(const struct channels *cs, enum side_metric metric);
/* Reads every non-external channel into row[i]; external ones are left. */
void channels__read_all(struct channels *cs, double *row);

/* Discovery under sysfs_root(); each returns the number of channels added. */
int sysfs_discover_thermal(struct channels *cs);   /* thermal zones */
int sysfs_discover_cpufreq(struct channels *cs);   /* per CPU cur/max/scaling_max */
int sysfs_discover_hwmon(struct channels *cs);     /* temp*_input, power*_input */
int sysfs_discover_meminfo(struct channels *cs);   /* MemAvailable */
int sysfs_discover_cpuload(struct channels *cs);   /* per-CPU load from /proc/stat */
/* statvfs of a directory (a real path, not under the sysfs root). */
int sysfs_add_disk(struct channels *cs, const char *dir);

#endif
