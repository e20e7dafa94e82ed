// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's side data: the tables of `thermal`, `gpu`, `disk`, `host`,
 * `energy` and of each cycle's side keys, over the side sampler's typed
 * results (side/side_summary.h) and the model's energy figures. The profile
 * writer and loader (profile_json.c) walk them. The keys are documented in
 * docs/side-data.md and docs/profile.schema.json. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_side.h"
#include "vec.h"

/* ---- readings ---- */

#define JF_T struct side_mam
JF_TABLE(mam_table, JF("min", JF_REAL, min), JF("avg", JF_REAL, avg), JF("max", JF_REAL, max));
#undef JF_T

#define JF_T struct side_am
JF_TABLE(am_table, JF("avg", JF_REAL, avg), JF("max", JF_REAL, max));
#undef JF_T

#define JF_T struct side_named_mam
JF_TABLE(named_mam_table, JF(NULL, JF_KEY, name), JF(NULL, JF_OBJ, v, .sub = &mam_table));
#undef JF_T

#define JF_T struct side_named_am
JF_TABLE(named_am_table, JF(NULL, JF_KEY, name), JF(NULL, JF_OBJ, v, .sub = &am_table));
#undef JF_T

#define JF_T struct side_named_value
JF_TABLE(named_value_table, JF(NULL, JF_KEY, name), JF(NULL, JF_REAL, v));
#undef JF_T

#define JF_T struct side_name
JF_TABLE(name_table, JF(NULL, JF_CHARS, name));
#undef JF_T

#define JF_T struct side_cpufreq
JF_TABLE(cpufreq_table, JF(NULL, JF_KEY, name), JF("min_mhz", JF_REAL, min_mhz), JF("avg_mhz", JF_REAL, avg_mhz),
	 JF("max_mhz", JF_REAL, max_mhz), JF("hw_max_mhz", JF_REAL, hw_max_mhz),
	 JF("lowest_scaling_max_mhz", JF_REAL, lowest_scaling_max_mhz));
#undef JF_T

/* ---- throttling and power-cap episodes ---- */

static int episode_ms(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct throttle_episode *e = base;

	(void)ctx;
	return json_object_set_new(o, key, json_real((e->end_ns - e->start_ns) / 1e6)) ? -ENOMEM : 0;
}

#define JF_T struct throttle_episode
#define EPISODE_HEAD                                                                                    \
	JF("source", JF_CHARS, source), JF("zone", JF_CHARS, zone), JF("reason", JF_CHARS, reason),     \
	JF("start_ns", JF_U64, start_ns), JF("end_ns", JF_U64, end_ns), JF_FNS("duration_ms", episode_ms, NULL)
JF_TABLE_PUBLIC(profile_episode_table, EPISODE_HEAD, JF("peak_temp_c", JF_REAL, peak_temp_c),
	 JF("min_clock_pct", JF_REAL, min_clock_pct), JF("open", JF_BOOL, open));
/* a power cap has no temperature of its own */
JF_TABLE(cap_episode_table, EPISODE_HEAD, JF("min_clock_pct", JF_REAL, min_clock_pct), JF("open", JF_BOOL, open));
#undef EPISODE_HEAD
#undef JF_T

/* ---- the thermal and power tracepoints (side concern) ---- */

#define JF_T struct side_power_counts
#define COUNT(name) JF(#name, JF_U64, n[SIDE_PE_##name]),
#define COUNT_OMIT(name) JF(#name, JF_U64, n[SIDE_PE_##name], .flags = JF_OMIT),
JF_TABLE(power_counts_table, SIDE_POWER_EVENTS(COUNT));
JF_TABLE(power_counts_seen_table, SIDE_POWER_EVENTS(COUNT_OMIT));
#undef COUNT
#undef COUNT_OMIT
#undef JF_T

#define JF_T struct side_power_record
JF_TABLE(power_record_table, JF("t_s", JF_REAL, t_s), JF("type", JF_CHARS, type),
	 JF("zone", JF_CHARS, name, JF_WHEN(thermal)), JF("zone_id", JF_I64, id, JF_WHEN(thermal)),
	 JF("temp_c", JF_REAL, temp_c, JF_WHEN(thermal)), JF("prev_temp_c", JF_REAL, prev_temp_c, JF_WHEN(thermal)),
	 JF("cdev", JF_CHARS, name, JF_WHEN(cdev)), JF("state", JF_I64, state, JF_WHEN(cdev)),
	 JF("cpu", JF_I64, id, JF_WHEN(has_cpu)), JF("mhz", JF_REAL, mhz, JF_WHEN(freq)),
	 JF("min_mhz", JF_REAL, min_mhz, JF_WHEN(limits)), JF("max_mhz", JF_REAL, max_mhz, JF_WHEN(limits)));
#undef JF_T

#define JF_T struct side_kernel_events
JF_TABLE(kernel_events_table, JF("attached", JF_VEC, attached, .sub = &name_table),
	 JF("missing", JF_VEC, missing, .sub = &name_table), JF("counts", JF_OBJ, counts, .sub = &power_counts_table),
	 JF("timeline", JF_VEC, timeline, .sub = &power_record_table),
	 JF("timeline_max_points", JF_U64, timeline_max_points), JF("not_kept", JF_U64, not_kept));
#undef JF_T

#define JF_T struct side_cycle_power
JF_TABLE_PUBLIC(profile_cycle_power_table, JF(NULL, JF_OBJ, counts, .sub = &power_counts_seen_table),
	 JF("min_cpu_mhz", JF_REAL, min_cpu_mhz, .flags = JF_OMIT),
	 JF("max_temp_c", JF_REAL, max_temp_c, .flags = JF_OMIT));
#undef JF_T

/* ---- the run's summary ---- */

#define JF_T struct side_thermal
JF_TABLE_PUBLIC(profile_thermal_table, JF("zones", JF_MAP, zones, .sub = &named_mam_table, JF_WHEN(present)),
	 JF("hwmon", JF_MAP, hwmon, .sub = &named_mam_table, JF_WHEN(present)),
	 JF("cpufreq", JF_MAP, cpufreq, .sub = &cpufreq_table, JF_WHEN(present)),
	 JF("power_w", JF_MAP, power_w, .sub = &named_mam_table, JF_WHEN(present)),
	 JF("max_temp_c", JF_REAL, max_temp_c, JF_WHEN(present)),
	 JF("temp_threshold_c", JF_REAL, temp_threshold_c, JF_WHEN(present)),
	 JF("clock_drop_pct", JF_REAL, clock_drop_pct, JF_WHEN(present)),
	 JF("throttled", JF_BOOL, throttled, JF_WHEN(present)),
	 JF("throttling", JF_VEC, throttling, .sub = &profile_episode_table, JF_WHEN(present)),
	 JF("samples", JF_U64, samples, JF_WHEN(present)), JF("period_ms", JF_U64, period_ms, JF_WHEN(present)),
	 JF("kernel_events", JF_OBJ, kernel_events, .sub = &kernel_events_table, JF_WHEN(kernel_events.present)));
#undef JF_T

/* NVML's throttle reasons: the names of the bits seen. */
static int reasons_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct side_gpu_device *d = base;
	json_t *a = json_array();
	const char *name;
	uint64_t bit;

	(void)ctx;
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; (name = throttle_nvml_reason(i, &bit)); i++)
		if (d->throttle_reasons & bit)
			json_array_append_new(a, json_string(name));
	return json_object_set_new(o, key, a) ? -ENOMEM : 0;
}

static int reasons_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct side_gpu_device *d = base;
	json_t *a = json_object_get(o, key), *v;
	const char *name;
	uint64_t bit;
	size_t j;

	(void)ctx;
	d->has_reasons = a != NULL;
	json_array_foreach(a, j, v)
		for (size_t i = 0; (name = throttle_nvml_reason(i, &bit)); i++)
			if (json_is_string(v) && !strcmp(json_string_value(v), name))
				d->throttle_reasons |= bit;
	return 0;
}

#define JF_T struct side_gpu_device
JF_TABLE(gpu_figures_table, JF("util_pct", JF_OBJ, util_pct, .sub = &am_table, .flags = JF_OMIT),
	 JF("mem_util_pct", JF_OBJ, mem_util_pct, .sub = &am_table, .flags = JF_OMIT),
	 JF("mem_used_mb", JF_OBJ, mem_used_mb, .sub = &am_table, .flags = JF_OMIT),
	 JF("temp_c", JF_OBJ, temp_c, .sub = &am_table, .flags = JF_OMIT),
	 JF("power_w", JF_OBJ, power_w, .sub = &am_table, .flags = JF_OMIT),
	 JF("sm_clock_mhz", JF_OBJ, sm_clock_mhz, .sub = &am_table, .flags = JF_OMIT),
	 JF("mem_clock_mhz", JF_OBJ, mem_clock_mhz, .sub = &am_table, .flags = JF_OMIT),
	 JF("target_mem_mb", JF_OBJ, target_mem_mb, .sub = &am_table, .flags = JF_OMIT),
	 JF("mem_total_mb", JF_REAL, mem_total_mb, .flags = JF_OMIT),
	 JF("max_sm_clock_mhz", JF_REAL, max_sm_clock_mhz, .flags = JF_OMIT),
	 { .key = "throttle_reasons", .kind = JF_FN, .write = reasons_write, .read = reasons_read,
	   JF_WHEN(has_reasons) },
	 JF("process_mem_mb", JF_MAP, process_mem_mb, .sub = &named_value_table));
JF_TABLE(gpu_device_table, JF("index", JF_INT, index), JF("name", JF_CHARS, name),
	 { .kind = JF_OBJ, .off = 0, .sub = &gpu_figures_table });
#undef JF_T

/* Device 0's figures at the top level: the common single-GPU case reads
 * flat. A profile with no `devices` (written by hand) has them read as
 * device 0. */
static int gpu_flat_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct side_gpu *g = base;

	(void)key;
	return g->devices.n ? jf_write(&gpu_figures_table, &g->devices.v[0], o, ctx) : 0;
}

static int gpu_flat_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct side_gpu *g = base;
	struct side_gpu_device d;

	(void)key;
	if (json_object_get(o, "devices") || g->devices.n)
		return 0;
	if (jf_read(&gpu_figures_table, &d, o, ctx) ||
	    (!isfinite(d.util_pct.avg) && !isfinite(d.temp_c.avg) && !isfinite(d.mem_total_mb) && !d.has_reasons) ||
	    VEC_RESERVE(g->devices.v, g->devices.cap, g->devices.n, 1)) {
		free(d.process_mem_mb.v);
		return 0;
	}
	snprintf(d.name, sizeof(d.name), "%s", g->device);
	g->devices.v[g->devices.n++] = d;
	return 0;
}

#define JF_T struct side_gpu
JF_TABLE_PUBLIC(profile_gpu_table, JF("available", JF_BOOL, available, JF_WHEN(present)),
	 JF("source", JF_CHARS, source, .flags = JF_NULL, JF_WHEN(present)),
	 JF("device", JF_CHARS, device, .flags = JF_NULL, JF_WHEN(present)),
	 JF("unavailable_reason", JF_CHARS, unavailable_reason, .flags = JF_NULL, JF_WHEN(present)),
	 { .kind = JF_FN, .write = gpu_flat_write, .read = gpu_flat_read, JF_WHEN(present) },
	 JF("devices", JF_VEC, devices, .sub = &gpu_device_table, JF_WHEN(present)));
#undef JF_T

#define JF_T struct side_disk_path
JF_TABLE(disk_path_table, JF(NULL, JF_KEY, name), JF("error", JF_CHARS, error, .flags = JF_OMIT),
	 JF("free_mb", JF_REAL, free_mb, JF_WHEN(ok)), JF("total_mb", JF_REAL, total_mb, JF_WHEN(ok)),
	 JF("percent_free", JF_REAL, percent_free, JF_WHEN(ok)), JF("min_free_mb", JF_REAL, min_free_mb, JF_WHEN(ok)),
	 JF("alert", JF_BOOL, alert, JF_WHEN(ok)));
#undef JF_T

#define JF_T struct side_disk
JF_TABLE_PUBLIC(profile_disk_table, JF("paths", JF_MAP, paths, .sub = &disk_path_table, JF_WHEN(present)),
	 JF("alert", JF_BOOL, alert, JF_WHEN(present)),
	 JF("alert_below_pct", JF_REAL, alert_below_pct, JF_WHEN(present)));
#undef JF_T

#define JF_T struct side_host
JF_TABLE_PUBLIC(profile_host_table,
	 JF("mem_available_mb", JF_OBJ, mem_available_mb, .sub = &mam_table, .flags = JF_OMIT, JF_WHEN(present)),
	 JF("cpu_load_pct", JF_MAP, cpu_load_pct, .sub = &named_am_table, JF_WHEN(present)),
	 JF("cpu_load_avg_pct", JF_REAL, cpu_load_avg_pct, JF_WHEN(present)));
#undef JF_T

/* ---- a cycle's side data ---- */

#define JF_T struct side_gpu_avgs
JF_TABLE(gpu_avgs_table, JF("util_pct", JF_REAL, util_pct, .flags = JF_OMIT),
	 JF("mem_used_mb", JF_REAL, mem_used_mb, .flags = JF_OMIT), JF("temp_c", JF_REAL, temp_c, .flags = JF_OMIT),
	 JF("power_w", JF_REAL, power_w, .flags = JF_OMIT),
	 JF("sm_clock_mhz", JF_REAL, sm_clock_mhz, .flags = JF_OMIT),
	 JF("mem_clock_mhz", JF_REAL, mem_clock_mhz, .flags = JF_OMIT),
	 JF("target_mem_mb", JF_REAL, target_mem_mb, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct side_window
JF_TABLE_PUBLIC(profile_window_table, JF("side_samples", JF_U64, samples, JF_WHEN(present)),
	 JF("temp_c", JF_MAP, temp_c, .sub = &named_value_table, JF_WHEN(has_rows)),
	 JF("temp_max_c", JF_REAL, temp_max_c, JF_WHEN(has_rows)), JF("cpu_mhz", JF_REAL, cpu_mhz, JF_WHEN(has_rows)),
	 JF("cpu_load_pct", JF_REAL, cpu_load_pct, JF_WHEN(has_rows)),
	 JF("mem_available_mb", JF_REAL, mem_available_mb, JF_WHEN(has_rows)),
	 JF("power_w", JF_MAP, power_w, .sub = &named_value_table, JF_WHEN(has_rows)),
	 JF("gpu", JF_OBJ, gpu, .sub = &gpu_avgs_table, JF_WHEN(has_gpu)),
	 JF("throttled_ms", JF_REAL, throttled_ms, JF_WHEN(present)));
#undef JF_T

/* ---- energy ---- */

/* {cpu_j, dram_j, gpu_j, board_j, total_j, tokens_per_joule} of a cycle or
 * of the cycles: a domain no source measures is left out, never written as
 * zero. */
#define JF_T struct model_energy
JF_TABLE_PUBLIC(profile_energy_table, JF("cpu_j", JF_REAL, j[MODEL_EN_CPU], .flags = JF_OMIT),
	 JF("dram_j", JF_REAL, j[MODEL_EN_DRAM], .flags = JF_OMIT), JF("gpu_j", JF_REAL, j[MODEL_EN_GPU], .flags = JF_OMIT),
	 JF("board_j", JF_REAL, j[MODEL_EN_BOARD], .flags = JF_OMIT),
	 JF("total_j", JF_REAL, total_j, .flags = JF_OMIT),
	 JF("tokens_per_joule", JF_REAL, tokens_per_joule, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct side_energy_source
JF_TABLE(energy_source_table, JF("name", JF_CHARS, name), JF("domain", JF_CHARS, domain), JF("kind", JF_CHARS, kind),
	 JF("period_ms", JF_REAL, period_ms), JF("joules", JF_REAL, joules), JF("seconds", JF_REAL, seconds),
	 JF("mean_w", JF_REAL, mean_w), JF("wraps", JF_U64, wraps, JF_WHEN(counter)),
	 JF("max_range_j", JF_REAL, max_range_j, .flags = JF_OMIT), JF("limit_w", JF_REAL, limit_w, .flags = JF_OMIT),
	 JF("root_only", JF_BOOL, root_only, .flags = JF_OMIT), JF("read_errors", JF_U64, read_errors, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct side_energy_missing
JF_TABLE(energy_missing_table, JF("domain", JF_CHARS, domain), JF("reason", JF_CHARS, reason));
#undef JF_T

#define JF_T struct side_energy
JF_TABLE(energy_run_table, JF("cpu_j", JF_REAL, j[MODEL_EN_CPU], .flags = JF_OMIT),
	 JF("dram_j", JF_REAL, j[MODEL_EN_DRAM], .flags = JF_OMIT), JF("gpu_j", JF_REAL, j[MODEL_EN_GPU], .flags = JF_OMIT),
	 JF("board_j", JF_REAL, j[MODEL_EN_BOARD], .flags = JF_OMIT), JF("peak_w", JF_REAL, peak_w));
JF_TABLE(energy_capped_table, JF("capped_ms", JF_REAL, capped_ms),
	 JF("episodes", JF_VEC, capped, .sub = &cap_episode_table));
#undef JF_T

#define JF_T struct model_energy_phase
JF_TABLE(energy_phase_table, JF("cpu_j", JF_REAL, j[MODEL_EN_CPU], .flags = JF_OMIT),
	 JF("dram_j", JF_REAL, j[MODEL_EN_DRAM], .flags = JF_OMIT), JF("gpu_j", JF_REAL, j[MODEL_EN_GPU], .flags = JF_OMIT),
	 JF("board_j", JF_REAL, j[MODEL_EN_BOARD], .flags = JF_OMIT),
	 JF("intervals_measured", JF_U64, intervals_measured), JF("intervals_left_out", JF_U64, intervals_left_out),
	 JF("measured_ms", JF_REAL, measured_ms));
#undef JF_T

/* energy.phases: {phase name: its intervals' joules}. */
static int energy_phases_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	json_t *ph;

	if (!m->energy.side.sources.n) /* nothing measured the phases */
		return 0;
	if (!(ph = json_object()))
		return -ENOMEM;
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		json_t *v;

		if (!m->energy.phases[i].present || !m->phase_names[i])
			continue;
		if (!(v = jf_object(&energy_phase_table, &m->energy.phases[i], ctx))) {
			json_decref(ph);
			return -ENOMEM;
		}
		json_object_set_new(ph, m->phase_names[i], v);
	}
	return json_object_set_new(o, key, ph) ? -ENOMEM : 0;
}

static int energy_phases_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;
	const char *name;
	json_t *v;

	json_object_foreach(json_object_get(o, key), name, v) {
		int ph = model__phase_id(m, name);

		if (ph > 0 && !jf_read(&energy_phase_table, &m->energy.phases[ph], v, ctx))
			m->energy.phases[ph].present = true;
	}
	return 0;
}

/* The cycles' sums count as measured when a cycle was. */
static int energy_cycles_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model *m = base;

	(void)key, (void)o, (void)ctx;
	m->energy.cycles.present = m->energy.cycles_measured > 0;
	return 0;
}

#define JF_T struct model
JF_TABLE_PUBLIC(profile_energy_section_table, JF(NULL, JF_OBJ, energy.cycles, .sub = &profile_energy_table),
	 JF("cycles_measured", JF_U64, energy.cycles_measured), JF("cycles_left_out", JF_U64, energy.cycles_left_out),
	 JF("resolution_ms", JF_REAL, energy.side.resolution_ms), JF("peak_w", JF_REAL, energy.side.peak_w),
	 JF("sources", JF_VEC, energy.side.sources, .sub = &energy_source_table),
	 JF("missing", JF_VEC, energy.side.missing, .sub = &energy_missing_table),
	 JF("run", JF_OBJ, energy.side, .sub = &energy_run_table),
	 JF("power_capped", JF_OBJ, energy.side, .sub = &energy_capped_table),
	 JF_FNS("phases", energy_phases_write, energy_phases_read), JF_FNS(NULL, NULL, energy_cycles_read));
#undef JF_T

/* ---- pieces in their profile.json shape ---- */

json_t *profile_side__episodes_json(const struct throttle_episode *v, size_t n, bool power_cap)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, jf_object(power_cap ? &cap_episode_table : &profile_episode_table, &v[i], NULL));
	return a;
}

json_t *profile_side__summary_json(const struct side_summary *s)
{
	return json_pack("{s:o,s:o,s:o,s:o}", "thermal", jf_object(&profile_thermal_table, &s->thermal, NULL), "gpu",
			 jf_object(&profile_gpu_table, &s->gpu, NULL), "disk",
			 jf_object(&profile_disk_table, &s->disk, NULL), "host",
			 jf_object(&profile_host_table, &s->host, NULL));
}

json_t *profile_side__window_json(const struct side_window *w)
{
	return jf_object(&profile_window_table, w, NULL);
}

json_t *profile_side__reasons_json(uint64_t reasons)
{
	struct side_gpu_device d = { .throttle_reasons = reasons };
	json_t *o = json_object(), *a;

	if (!o || reasons_write(&d, "r", o, NULL)) {
		json_decref(o);
		return NULL;
	}
	a = json_incref(json_object_get(o, "r"));
	json_decref(o);
	return a;
}
