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

#include <jansson.h>

json_t *power_mode__json(void);
/* One line for diff's header: "nvpmodel 2 (15W), governor schedutil". */
void power_mode__describe(const json_t *power, char *buf, size_t len);
/* True when the nvpmodel id, governor or EPP differ (one side missing one
 * the other has counts as a difference). */
bool power_mode__differs(const json_t *a, const json_t *b);

#endif
