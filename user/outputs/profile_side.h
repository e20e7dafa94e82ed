// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's side data (thermal, gpu, disk, host, energy and each
 * cycle's side keys): one table per section drives both the writer and
 * the loader (outputs/profile_side.c, walked by profile_json.c). */
#ifndef INFERTRACE_PROFILE_SIDE_H
#define INFERTRACE_PROFILE_SIDE_H

#include <stdbool.h>
#include <jansson.h>

#include "json_fields.h"
#include "side_summary.h"

/* The tables of the sections: thermal, gpu (without the CUDA concern's
 * `cuda`), disk and host over side_summary's parts; energy over the model
 * (ctx: none); a cycle's side window, kernel_power and energy. */
extern const struct jf_table profile_thermal_table, profile_gpu_table, profile_disk_table, profile_host_table;
extern const struct jf_table profile_energy_section_table;
extern const struct jf_table profile_window_table, profile_cycle_power_table, profile_energy_table;
/* A throttling episode (struct throttle_episode) as the thermal section
 * shows it; a power cap's is the same less peak_temp_c. */
extern const struct jf_table profile_episode_table;

/* Pieces in their profile.json shape: throttling (or power-cap) episodes,
 * the run's summary as {thermal, gpu, disk, host}, one window's side keys,
 * NVML throttle reasons by name. */
json_t *profile_side__episodes_json(const struct throttle_episode *v, size_t n, bool power_cap);
json_t *profile_side__summary_json(const struct side_summary *s);
json_t *profile_side__window_json(const struct side_window *w);
json_t *profile_side__reasons_json(uint64_t reasons);

#endif
