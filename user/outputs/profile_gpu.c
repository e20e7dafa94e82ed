// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's GPU time from CUPTI (model_gpu.h): cycles[i].gpu's source
 * and devices, phases[NAME].gpu, and gpu.activity. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

static const char *const dir_names[IT_GPU_DIR_MAX] = {
	[IT_GPU_DIR_OTHER] = "other", [IT_GPU_DIR_HTOD] = "htod", [IT_GPU_DIR_DTOH] = "dtoh",
	[IT_GPU_DIR_DTOD] = "dtod",   [IT_GPU_DIR_HTOH] = "htoh", [IT_GPU_DIR_PTOP] = "ptop",
};

#define JF_T struct model_gpu_dir_total
JF_TABLE(dir_table, JF("count", JF_U64, count), JF("bytes", JF_U64, bytes), JF("ms", JF_REAL, ms, .flags = JF_ZERO));
#undef JF_T

#define JF_T struct model_gpu_kernel_total
JF_TABLE(kernel_table, JF("name", JF_NAME, name, .names = &profile_model_names), JF("count", JF_U64, count),
	 JF("ms", JF_REAL, ms, .flags = JF_ZERO));
#undef JF_T

#define JF_T struct model_gpu_idle_stack
JF_TABLE(idle_stack_table, JF("stack", JF_NAME, stack, .names = &profile_model_names),
	 JF("samples", JF_U64, samples), JF("ms", JF_REAL, ms, .flags = JF_ZERO));
#undef JF_T

/* {direction: {count, bytes, ms}}, the directions seen */
static int copies_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_figures *f = base;
	json_t *c = json_object();

	for (int d = 0; c && d < IT_GPU_DIR_MAX; d++)
		if (f->copies[d].count && profile__set(c, dir_names[d], jf_object(&dir_table, &f->copies[d], ctx)))
			return -ENOMEM;
	return profile__set(o, key, c);
}

static int copies_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_gpu_figures *f = base;
	json_t *c = json_object_get(o, key);

	for (int d = 0; d < IT_GPU_DIR_MAX; d++)
		jf_read(&dir_table, &f->copies[d], json_object_get(c, dir_names[d]), ctx);
	return 0;
}

static int memset_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_figures *f = base;

	return f->sets.count ? profile__set(o, key, jf_object(&dir_table, &f->sets, ctx)) : 0;
}

static int memset_read(void *base, const char *key, json_t *o, void *ctx)
{
	return jf_read(&dir_table, &((struct model_gpu_figures *)base)->sets, json_object_get(o, key), ctx);
}

/* NVML's figures only: the part of the window its samples cover */
static int covered_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_figures *f = base;

	(void)ctx;
	return f->covered_ms > 0 ? profile__set(o, key, json_real(f->covered_ms)) : 0;
}

static int covered_read(void *base, const char *key, json_t *o, void *ctx)
{
	json_t *v = json_object_get(o, key);

	(void)ctx;
	((struct model_gpu_figures *)base)->covered_ms = json_is_number(v) ? json_number_value(v) : 0;
	return 0;
}

#define JF_T struct model_gpu_figures
JF_TABLE(figures_table, JF("device", JF_U32, device), JF("window_ms", JF_REAL, window_ms, .flags = JF_ZERO),
	 JF("busy_ms", JF_REAL, busy_ms, .flags = JF_ZERO), JF("active_ms", JF_REAL, active_ms, .flags = JF_ZERO),
	 JF("idle_ms", JF_REAL, idle_ms, .flags = JF_ZERO), JF("idle_host_ms", JF_REAL, idle_host_ms, .flags = JF_ZERO),
	 JF("sync_ms", JF_REAL, sync_ms, .flags = JF_ZERO), JF("kernels", JF_U64, kernels),
	 JF_FNS("copies", copies_write, copies_read), JF_FNS("memset", memset_write, memset_read),
	 JF_FNS("covered_ms", covered_write, covered_read));
JF_TABLE(figures_top_table, JF_GROUP(NULL, figures_table), JF("top_kernels", JF_VEC, top, .sub = &kernel_table));
JF_TABLE(figures_run_table, JF_GROUP(NULL, figures_table), JF("top_kernels", JF_VEC, top, .sub = &kernel_table),
	 JF("idle_stacks", JF_VEC, idle_stacks, .sub = &idle_stack_table));
#undef JF_T

/* [{figures of phase 0 of a device, "phases": {NAME: figures}}] over v. */
static json_t *devices_json(const struct model *m, const struct model_gpu_figures *v, size_t n,
			    const struct jf_table *whole, bool with_phases)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *d, *phases;

		if (v[i].phase)
			continue;
		if (!(d = jf_object(whole, &v[i], m)) || json_array_append_new(arr, d))
			goto nomem;
		if (!with_phases)
			continue;
		if (!(phases = json_object()) || json_object_set_new(d, "phases", phases))
			goto nomem;
		for (size_t k = 0; k < n; k++)
			if (v[k].device == v[i].device && v[k].phase && v[k].phase < IT_MAX_PHASES &&
			    m->phase_names[v[k].phase] &&
			    profile__set(phases, m->phase_names[v[k].phase], jf_object(&figures_table, &v[k], m)))
				goto nomem;
	}
	return arr;
nomem:
	json_decref(arr);
	return NULL;
}

static int add_figures(struct model_gpu_cycle *c, const struct model_gpu_figures *f)
{
	if (VEC_RESERVE(c->figures.v, c->figures.cap, c->figures.n, 4))
		return -ENOMEM;
	c->figures.v[c->figures.n++] = *f;
	return 0;
}

/* devices_json's array back into figures (phase ids by name). */
static int devices_read(struct model *m, json_t *arr, const struct jf_table *whole, struct model_gpu_cycle *c)
{
	json_t *d, *p;
	const char *name;
	size_t i;

	json_array_foreach(arr, i, d) {
		struct model_gpu_figures f;
		int err = jf_read(whole, &f, d, m);

		if (err || (err = add_figures(c, &f))) {
			model_gpu__figures_free(&f);
			return err;
		}
		json_object_foreach(json_object_get(d, "phases"), name, p) {
			struct model_gpu_figures pf;
			int ph = model__phase_id(m, name);

			if (ph <= 0)
				continue;
			if ((err = jf_read(&figures_table, &pf, p, m)) || (pf.phase = (uint32_t)ph, 0) ||
			    (pf.device = f.device, 0) || (err = add_figures(c, &pf))) {
				model_gpu__figures_free(&pf);
				return err;
			}
		}
	}
	return 0;
}

/* cycles[i].gpu gets "source" and "devices" beside the side sampler's averages */
int profile_gpu__cycle_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_cycle *c = base;
	json_t *gpu = json_object_get(o, key), *devices;

	if (!c->gpu.present)
		return 0;
	if (!gpu && profile__set(o, key, gpu = json_object()))
		return -ENOMEM;
	devices = devices_json(ctx, c->gpu.figures.v, c->gpu.figures.n, &figures_top_table, true);
	if (profile__set(gpu, "source", json_string(c->gpu.nvml_only ? "nvml" : "cupti")) ||
	    (c->gpu.sampled && !c->gpu.nvml_only && profile__set(gpu, "sampled", json_true())) ||
	    profile__set(gpu, "devices", devices))
		return -ENOMEM;
	return 0;
}

int profile_gpu__cycle_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_cycle *c = base;
	json_t *gpu = json_object_get(o, key), *src = json_object_get(gpu, "source");

	if (!json_is_array(json_object_get(gpu, "devices")))
		return 0;
	c->gpu.present = true;
	c->gpu.nvml_only = json_is_string(src) && !strcmp(json_string_value(src), "nvml");
	c->gpu.sampled = json_is_true(json_object_get(gpu, "sampled"));
	return devices_read(ctx, json_object_get(gpu, "devices"), &figures_top_table, &c->gpu);
}

json_t *profile_gpu__phase_json(const struct model *m, int phase)
{
	const struct model_gpu_activity *a = &m->gpu_activity;
	json_t *arr = json_array(), *o;

	for (size_t i = 0; arr && i < a->figures.n; i++)
		if (a->figures.v[i].phase == (uint32_t)phase &&
		    json_array_append_new(arr, jf_object(&figures_top_table, &a->figures.v[i], m))) {
			json_decref(arr);
			return NULL;
		}
	if (!arr || !json_array_size(arr)) {
		json_decref(arr);
		return NULL;
	}
	o = json_object();
	if (!o || json_object_set_new(o, "devices", arr)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int profile_gpu__phase_read(struct model *m, int phase, json_t *gpu)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	json_t *d;
	size_t i;

	json_array_foreach(json_object_get(gpu, "devices"), i, d) {
		struct model_gpu_figures f;
		int err = jf_read(&figures_top_table, &f, d, m);

		f.phase = (uint32_t)phase;
		if (!err && VEC_RESERVE(a->figures.v, a->figures.cap, a->figures.n, 4))
			err = -ENOMEM;
		if (err) {
			model_gpu__figures_free(&f);
			return err;
		}
		a->figures.v[a->figures.n++] = f;
	}
	return 0;
}

static int source_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_activity *a = base;

	(void)ctx;
	return profile__set(o, key, a->source ? json_string(a->source) : json_null());
}

static int source_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_gpu_activity *a = base;
	json_t *s = json_object_get(o, key);

	(void)ctx;
	a->source = !json_is_string(s) ? NULL : !strcmp(json_string_value(s), "nvml") ? "nvml" : "cupti";
	return 0;
}

static int run_devices_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_activity *a = base;

	return profile__set(o, key, devices_json(ctx, a->figures.v, a->figures.n, &figures_run_table, false));
}

static int run_devices_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_gpu_activity *a = base;
	struct model_gpu_cycle c = { 0 };
	int err = devices_read(ctx, json_object_get(o, key), &figures_run_table, &c);

	/* (activity_read keeps what phases[N].gpu gave, whichever is read first) */
	for (size_t i = 0; !err && i < c.figures.n; i++) {
		if (VEC_RESERVE(a->figures.v, a->figures.cap, a->figures.n, 4)) {
			err = -ENOMEM;
			break;
		}
		a->figures.v[a->figures.n++] = c.figures.v[i];
		memset(&c.figures.v[i], 0, sizeof(c.figures.v[i]));
	}
	for (size_t i = 0; i < c.figures.n; i++)
		model_gpu__figures_free(&c.figures.v[i]);
	free(c.figures.v);
	return err;
}

#define JF_T struct model_gpu_process
JF_TABLE(process_table, JF("pid", JF_INT, pid), JF("version", JF_U32, cupti_version),
	 JF("library", JF_CHARS, cupti_path));
#undef JF_T

#define JF_T struct model_gpu_clock
JF_TABLE(clock_table, JF("offset_ns", JF_REAL, offset_ns), JF("drift_us", JF_REAL, drift_us),
	 JF("drift_ppm", JF_REAL, drift_ppm), JF("pairs", JF_U64, pairs));
#undef JF_T

/* sampling: {mode, every, windows, sampled, recorded_ms, cycles_recorded},
 * when the tracer asked for a mode */
static int sampling_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model_gpu_activity *a = base;
	json_t *s;

	(void)ctx;
	if (!a->sample_mode[0])
		return 0;
	s = json_pack("{s:s, s:I, s:I, s:b}", "mode", a->sample_mode, "every", (json_int_t)a->sample_every,
		      "windows", (json_int_t)a->nwindows, "sampled", a->sampling);
	if (s && a->sampling &&
	    (json_object_set_new(s, "recorded_ms", json_real(a->recorded_ms)) ||
	     json_object_set_new(s, "cycles_recorded", json_integer((json_int_t)a->cycles_recorded)))) {
		json_decref(s);
		return -ENOMEM;
	}
	return profile__set(o, key, s);
}

/* the windows themselves are not kept in profile.json: what they gave is */
static int sampling_read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_gpu_activity *a = base;
	json_t *s = json_object_get(o, key), *mode = json_object_get(s, "mode");

	(void)ctx;
	if (!json_is_object(s))
		return 0;
	snprintf(a->sample_mode, sizeof(a->sample_mode), "%s", json_is_string(mode) ? json_string_value(mode) : "");
	a->sample_every = (uint32_t)json_integer_value(json_object_get(s, "every"));
	a->sampling = json_is_true(json_object_get(s, "sampled"));
	a->nwindows = (uint64_t)json_integer_value(json_object_get(s, "windows"));
	a->recorded_ms = json_number_value(json_object_get(s, "recorded_ms"));
	a->cycles_recorded = (uint64_t)json_integer_value(json_object_get(s, "cycles_recorded"));
	return 0;
}

#define JF_T struct model_gpu_activity
JF_TABLE(activity_table, JF_FNS("source", source_write, source_read), JF("notice", JF_CHARS, notice, .flags = JF_NULL),
	 JF("cupti", JF_VEC, processes, .sub = &process_table),
	 JF("clock", JF_OBJ, clock, .sub = &clock_table, JF_WHEN(clock.calibrated)), JF("kernels", JF_U64, kernels),
	 JF("copies", JF_U64, copies), JF("memsets", JF_U64, sets), JF("api_records", JF_U64, api_records),
	 JF("unattributed", JF_U64, unattributed), JF("dropped", JF_U64, dropped),
	 JF_FNS("sampling", sampling_write, sampling_read), JF_FNS("devices", run_devices_write, run_devices_read));
#undef JF_T

json_t *profile_gpu__activity_json(const struct model *m)
{
	return m->gpu_activity.present ? jf_object(&activity_table, &m->gpu_activity, m) : NULL;
}

int profile_gpu__activity_read(struct model *m, json_t *activity)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	typeof(a->figures) phases = a->figures; /* phases[N].gpu's, if read first */
	int err;

	if (!json_is_object(activity))
		return 0;
	err = jf_read(&activity_table, a, activity, m);
	a->present = true;
	for (size_t i = 0; !err && i < phases.n; i++) {
		if (VEC_RESERVE(a->figures.v, a->figures.cap, a->figures.n, 4)) {
			err = -ENOMEM;
			break;
		}
		a->figures.v[a->figures.n++] = phases.v[i];
		memset(&phases.v[i], 0, sizeof(phases.v[i]));
	}
	for (size_t i = 0; i < phases.n; i++)
		model_gpu__figures_free(&phases.v[i]);
	free(phases.v);
	return err;
}
