// SPDX-License-Identifier: BSD-2-Clause
/* The power mode and clocks that decide a run's figures, for profile.json's
 * `system.power`: the cpufreq governor, energy-performance preference and
 * driver (all CPUs, "mixed" when they differ), the Jetson nvpmodel mode (its
 * status file with the names of nvpmodel.conf, else `nvpmodel -q`), the EMC
 * clock (debugfs) and the Jetson GPU's devfreq clock. Read under
 * INFERTRACE_SYSFS_ROOT; keys only where the machine has them. */
#ifndef INFERTRACE_POWER_MODE_H
#define INFERTRACE_POWER_MODE_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

/* A cpufreq setting's value and how many CPUs have it (when they differ). */
struct power_mode_count {
	char value[128];
	uint64_t cpus;
};

struct power_mode_counts {
	struct power_mode_count *v;
	size_t n, cap;
};

struct power_mode {
	char governor[128], epp[128], driver[128]; /* "mixed" when CPUs differ; "" none */
	struct power_mode_counts governor_by_cpus, epp_by_cpus, driver_by_cpus;
	bool has_nvpmodel;
	int nvpmodel_id;
	char nvpmodel_name[64], nvpmodel_source[64];
	double emc_mhz, emc_max_mhz, gpu_mhz, gpu_max_mhz; /* NAN: none */
};

/* The machine's power mode now. 0 or -ENOMEM (p then holds what was read). */
int power_mode__read(struct power_mode *p);
void power_mode__init(struct power_mode *p);
void power_mode__free(struct power_mode *p);
/* A deep copy into dst (which owns nothing). 0 or -ENOMEM. */
int power_mode__copy(struct power_mode *dst, const struct power_mode *src);
/* Whether anything was read. */
bool power_mode__any(const struct power_mode *p);
/* One line for diff's header: "nvpmodel 2 (15W), governor schedutil". */
void power_mode__describe(const struct power_mode *p, char *buf, size_t len);
/* True when the nvpmodel id, governor or EPP differ (one side missing one
 * the other has counts as a difference). */
bool power_mode__differs(const struct power_mode *a, const struct power_mode *b);

#endif
