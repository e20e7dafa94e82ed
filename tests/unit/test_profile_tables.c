// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's tables (outputs/json_fields.h and the section tables):
 * every kind of field written in its documented shape, and a model with
 * known numbers written with model__to_json, loaded back with
 * model__from_json and found equal, field by field; written again, the
 * same document. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_helpers.h"
#include "json_fields.h"
#include "model.h"
#include "config_file.h"
#include "profile_side.h"
#include "vec.h"

#define EPS 1e-9
#define MS 1000000ull

static void assert_num(double got, double want)
{
	if (isnan(want))
		assert_true(isnan(got));
	else
		assert_float_equal(got, want, EPS);
}

/* ---- the table walker, on a struct of every kind ---- */

struct item {
	char name[16];
	double v;
};

struct inner {
	double x;
	uint64_t n;
};

struct rec {
	double r, r_omit, r_null;
	uint64_t u;
	int64_t i, i_none, i_neg; /* JF_NULL: 0, and below 0 with JF_NEG, as null */
	int k;
	bool b, b_omit;
	char c[16], c_null[8];
	char *s;
	struct inner in, flat, none;
	bool has_g;
	double gated;
	struct { struct item *v; size_t n, cap; } list, map;
	struct { struct item *v; size_t n, cap; } values;
};

#define JF_T struct inner
JF_TABLE(inner_table, JF("x", JF_REAL, x), JF("n", JF_U64, n));
#undef JF_T
#define JF_T struct item
JF_TABLE(item_table, JF("name", JF_CHARS, name), JF("v", JF_REAL, v));
JF_TABLE(keyed_table, JF(NULL, JF_KEY, name), JF("v", JF_REAL, v));
JF_TABLE(value_table, JF(NULL, JF_KEY, name), JF(NULL, JF_REAL, v));
#undef JF_T
#define JF_T struct rec
JF_TABLE(rec_table, JF("r", JF_REAL, r), JF("r_omit", JF_REAL, r_omit, .flags = JF_OMIT),
	 JF("r_null", JF_REAL, r_null), JF("u", JF_U64, u), JF("i", JF_I64, i),
	 JF("i_none", JF_I64, i_none, .flags = JF_NULL), JF("i_neg", JF_I64, i_neg, .flags = JF_NEG | JF_NULL),
	 JF("k", JF_INT, k),
	 JF("b", JF_BOOL, b), JF("b_omit", JF_BOOL, b_omit, .flags = JF_OMIT), JF("c", JF_CHARS, c),
	 JF("c_null", JF_CHARS, c_null, .flags = JF_NULL), JF("s", JF_STR, s),
	 JF("in", JF_OBJ, in, .sub = &inner_table), JF(NULL, JF_OBJ, flat, .sub = &inner_table),
	 JF("none", JF_OBJ, none, .sub = &inner_table, .flags = JF_OMIT),
	 JF("gated", JF_REAL, gated, JF_WHEN(has_g)), JF("list", JF_VEC, list, .sub = &item_table),
	 JF("map", JF_MAP, map, .sub = &keyed_table), JF("values", JF_MAP, values, .sub = &value_table));
#undef JF_T

static void push(void *vec, const char *name, double v)
{
	struct { struct item *v; size_t n, cap; } *x = vec;

	assert_int_equal(VEC_RESERVE(x->v, x->cap, x->n, 4), 0);
	snprintf(x->v[x->n].name, sizeof(x->v[x->n].name), "%s", name);
	x->v[x->n++].v = v;
}

static void rec_free(struct rec *r)
{
	free(r->s);
	free(r->list.v);
	free(r->map.v);
	free(r->values.v);
}

static void test_every_kind(void **state)
{
	struct rec a = { .r = 1.5, .r_omit = NAN, .r_null = NAN, .u = 1ull << 40, .i = -7, .i_neg = -1, .k = 42, .b = true,
			 .c = "cpu", .in = { 2.5, 3 }, .flat = { NAN, 9 }, .none = { NAN, 0 }, .gated = 4 };
	struct rec b;
	json_t *o, *o2;

	(void)state;
	a.s = strdup("owned");
	push(&a.list, "first", 10);
	push(&a.list, "second", NAN);
	push(&a.map, "zone0", 50.25);
	push(&a.values, "7", 512);
	o = jf_object(&rec_table, &a, NULL);
	assert_non_null(o);
	assert_float_equal(th_jnum(th_jget(o, "r", NULL)), 1.5, EPS);
	assert_null(th_jget(o, "r_omit", NULL));            /* NAN, left out */
	assert_true(json_is_null(th_jget(o, "r_null", NULL))); /* NAN, null */
	assert_int_equal(json_integer_value(th_jget(o, "u", NULL)), 1ll << 40);
	assert_int_equal(json_integer_value(th_jget(o, "i", NULL)), -7);
	assert_true(json_is_null(th_jget(o, "i_none", NULL)));
	assert_true(json_is_null(th_jget(o, "i_neg", NULL)));
	assert_true(json_is_true(th_jget(o, "b", NULL)));
	assert_null(th_jget(o, "b_omit", NULL));
	assert_string_equal(json_string_value(th_jget(o, "c", NULL)), "cpu");
	assert_true(json_is_null(th_jget(o, "c_null", NULL)));
	assert_string_equal(json_string_value(th_jget(o, "s", NULL)), "owned");
	assert_float_equal(th_jnum(th_jget(o, "in", "x", NULL)), 2.5, EPS);
	assert_int_equal(json_integer_value(th_jget(o, "n", NULL)), 9); /* flat: merged into o */
	assert_null(th_jget(o, "none", NULL));              /* an object of nothing, left out */
	assert_null(th_jget(o, "gated", NULL));             /* has_g false */
	assert_int_equal(json_array_size(th_jget(o, "list", NULL)), 2);
	assert_true(json_is_null(th_jget(json_array_get(th_jget(o, "list", NULL), 1), "v", NULL)));
	assert_float_equal(th_jnum(th_jget(o, "map", "zone0", "v", NULL)), 50.25, EPS);
	assert_float_equal(th_jnum(th_jget(o, "values", "7", NULL)), 512, EPS); /* a bare value */

	a.has_g = true;
	json_decref(o);
	o = jf_object(&rec_table, &a, NULL);
	assert_float_equal(th_jnum(th_jget(o, "gated", NULL)), 4, EPS);
	assert_true(jf_claims(&rec_table, "n")); /* a merged object's key */
	assert_false(jf_claims(&rec_table, "zone0"));

	assert_int_equal(jf_read(&rec_table, &b, o, NULL), 0);
	assert_num(b.r, 1.5);
	assert_num(b.r_omit, NAN);
	assert_num(b.r_null, NAN);
	assert_true(b.u == 1ull << 40);
	assert_int_equal(b.i, -7);
	assert_int_equal(b.i_none, 0);
	assert_int_equal(b.i_neg, -1);
	assert_int_equal(b.k, 42);
	assert_true(b.b);
	assert_false(b.b_omit);
	assert_string_equal(b.c, "cpu");
	assert_string_equal(b.c_null, "");
	assert_string_equal(b.s, "owned");
	assert_num(b.in.x, 2.5);
	assert_int_equal(b.in.n, 3);
	assert_num(b.flat.x, NAN);
	assert_int_equal(b.flat.n, 9);
	assert_true(b.has_g);
	assert_num(b.gated, 4);
	assert_int_equal(b.list.n, 2);
	assert_string_equal(b.list.v[1].name, "second");
	assert_num(b.list.v[1].v, NAN);
	assert_int_equal(b.map.n, 1);
	assert_string_equal(b.map.v[0].name, "zone0");
	assert_num(b.map.v[0].v, 50.25);
	assert_int_equal(b.values.n, 1);
	assert_string_equal(b.values.v[0].name, "7");
	assert_num(b.values.v[0].v, 512);
	o2 = jf_object(&rec_table, &b, NULL);
	assert_true(json_equal(o, o2));
	json_decref(o2);
	rec_free(&b);

	/* what a hand-edited file holds instead: no failure, empty values */
	json_object_set_new(o, "u", json_string("many"));
	json_object_set_new(o, "k", json_real(1e300));
	json_object_set_new(o, "list", json_object());
	json_object_del(o, "gated");
	assert_int_equal(jf_read(&rec_table, &b, o, NULL), 0);
	assert_int_equal(b.u, 0);
	assert_int_equal(b.k, 0);
	assert_int_equal(b.list.n, 0);
	assert_false(b.has_g);
	rec_free(&b);
	json_decref(o);
	rec_free(&a);
}

/* ---- the side data of a model, through profile.json and back ---- */

#define PUSH(vec)                                                             \
	(assert_int_equal(VEC_RESERVE((vec).v, (vec).cap, (vec).n, 4), 0),     \
	 memset(&(vec).v[(vec).n], 0, sizeof(*(vec).v)), &(vec).v[(vec).n++])

static void fill_side(struct model *m)
{
	struct side_thermal *t = &m->side.run.thermal;
	struct side_gpu *g = &m->side.run.gpu;
	struct side_gpu_device *d;
	struct side_disk_path *dp;
	struct side_power_record *pr;
	struct throttle_episode *e;
	struct side_named_mam *nm;
	struct side_cpufreq *cf;

	t->present = true;
	nm = PUSH(t->zones);
	*nm = (struct side_named_mam){ "x86_pkg_temp", { 50, 60.5, 86 } };
	nm = PUSH(t->hwmon);
	*nm = (struct side_named_mam){ "coretemp/Package id 0", { 40, 52, 70 } };
	nm = PUSH(t->power_w);
	*nm = (struct side_named_mam){ "VDD_IN", { 7.5, 8, 8.25 } };
	cf = PUSH(t->cpufreq);
	*cf = (struct side_cpufreq){ "cpu0", 1100, 1800.5, 2000, 2000, NAN };
	t->max_temp_c = 86;
	t->temp_threshold_c = 75;
	t->clock_drop_pct = 20;
	t->throttled = true;
	e = PUSH(t->throttling);
	*e = (struct throttle_episode){ "cpu", "x86_pkg_temp", "thermal", 2000 * MS, 2500 * MS, 86, 55, false };
	t->samples = 120;
	t->period_ms = 20;
	t->kernel_events.present = true;
	snprintf(PUSH(t->kernel_events.attached)->name, SIDE_NAME_LEN, "thermal:thermal_temperature");
	snprintf(PUSH(t->kernel_events.missing)->name, SIDE_NAME_LEN, "power:cpu_frequency");
	t->kernel_events.counts.n[SIDE_PE_thermal_temperature] = 3;
	t->kernel_events.counts.n[SIDE_PE_cdev_update] = 1;
	pr = PUSH(t->kernel_events.timeline);
	*pr = (struct side_power_record){ .t_s = 0.5, .type = "thermal_temperature", .thermal = true, .name = "acpitz",
					  .id = 1, .temp_c = 71, .prev_temp_c = 69 };
	pr = PUSH(t->kernel_events.timeline);
	*pr = (struct side_power_record){ .t_s = 0.75, .type = "cdev_update", .cdev = true, .name = "Processor", .state = 2 };
	pr = PUSH(t->kernel_events.timeline);
	*pr = (struct side_power_record){ .t_s = 1, .type = "cpu_frequency_limits", .has_cpu = true, .limits = true,
					  .id = 3, .min_mhz = 800, .max_mhz = 1900 };
	t->kernel_events.timeline_max_points = 512;
	t->kernel_events.not_kept = 4;

	g->present = g->available = true;
	snprintf(g->source, sizeof(g->source), "nvml");
	snprintf(g->device, sizeof(g->device), "Fake H100");
	d = PUSH(g->devices);
	d->index = 0;
	snprintf(d->name, sizeof(d->name), "Fake H100");
	d->util_pct = (struct side_am){ 35, 60 };
	d->mem_util_pct = d->mem_used_mb = d->temp_c = d->power_w = d->sm_clock_mhz = d->mem_clock_mhz =
		(struct side_am){ NAN, NAN };
	d->temp_c = (struct side_am){ 55, 61 };
	d->target_mem_mb = (struct side_am){ 512, 512 };
	d->mem_total_mb = 81559;
	d->max_sm_clock_mhz = 1980;
	d->has_reasons = true;
	d->throttle_reasons = 0x4; /* sw_power_cap */
	*PUSH(d->process_mem_mb) = (struct side_named_value){ "4242", 512 };

	m->side.run.disk.present = true;
	dp = PUSH(m->side.run.disk.paths);
	*dp = (struct side_disk_path){ .name = "/out", .ok = true, .free_mb = 10, .total_mb = 16, .percent_free = 62.5,
				       .min_free_mb = 9.5, .alert = false };
	dp = PUSH(m->side.run.disk.paths);
	*dp = (struct side_disk_path){ .name = "/gone", .error = "statvfs failed" };
	m->side.run.disk.alert_below_pct = 10;

	m->side.run.host.present = true;
	m->side.run.host.mem_available_mb = (struct side_mam){ 3000, 5500, 8000 };
	*PUSH(m->side.run.host.cpu_load_pct) = (struct side_named_am){ "cpu0", { 40, 95 } };
	m->side.run.host.cpu_load_avg_pct = 40;
}

static void fill_energy(struct model *m)
{
	struct model_energy_figures *ef = &m->energy;
	struct side_energy_source *src;
	struct throttle_episode *e;

	ef->present = true;
	ef->cycles = (struct model_energy){ .present = true, .j = { 12.5, 2.5, NAN, NAN }, .total_j = 15,
					    .tokens_per_joule = 0.4 };
	ef->cycles_measured = 2;
	ef->cycles_left_out = 1;
	ef->side.resolution_ms = 20;
	src = PUSH(ef->side.sources);
	*src = (struct side_energy_source){ .name = "intel-rapl:0:package-0", .domain = "cpu", .kind = "counter",
					    .period_ms = 20, .joules = 100, .seconds = 4, .mean_w = 25, .counter = true,
					    .wraps = 3, .max_range_j = 17.5, .limit_w = 25, .root_only = true,
					    .read_errors = 0 };
	src = PUSH(ef->side.sources);
	*src = (struct side_energy_source){ .name = "VDD_IN", .domain = "board", .kind = "integral", .period_ms = 20,
					    .joules = 32, .seconds = 4, .mean_w = 8, .max_range_j = NAN, .limit_w = NAN,
					    .read_errors = 2 };
	snprintf(PUSH(ef->side.missing)->domain, 8, "gpu");
	snprintf(ef->side.missing.v[0].reason, sizeof(ef->side.missing.v[0].reason), "--gpu none");
	ef->side.j[MODEL_EN_CPU] = 100;
	ef->side.j[MODEL_EN_BOARD] = 32;
	ef->side.peak_w = 31.5;
	ef->side.capped_ms = 400;
	e = PUSH(ef->side.capped);
	*e = (struct throttle_episode){ "cpu", "package-0", "power cap", 2100 * MS, 2500 * MS, NAN, 55, true };
	ef->phases[1] = (struct model_energy_phase){ .present = true, .j = { 10, NAN, NAN, NAN },
						     .intervals_measured = 2, .intervals_left_out = 1, .measured_ms = 400 };
}

static void fill_cycle(struct model *m, int i)
{
	struct model_cycle *c = model__add_cycle(m, 100, i, (1000 + 500 * i) * MS, (1400 + 500 * i) * MS);

	assert_non_null(c);
	c->index = i;
	c->duration_ms = 400;
	c->side.present = true;
	c->side.samples = 20 + i;
	c->side.has_rows = i == 0; /* the second: a window without rows */
	c->side.throttled_ms = 12.5 * i;
	if (c->side.has_rows) {
		*PUSH(c->side.temp_c) = (struct side_named_value){ "x86_pkg_temp", 55.5 };
		*PUSH(c->side.power_w) = (struct side_named_value){ "VDD_IN", 8 };
		c->side.temp_max_c = 55.5;
		c->side.cpu_mhz = 1900;
		c->side.mem_available_mb = 6000;
		c->side.has_gpu = true;
		c->side.gpu.util_pct = 35;
		c->side.gpu.temp_c = 55;
	}
	c->kernel_power = (struct side_cycle_power){ .present = i == 1, .min_cpu_mhz = NAN, .max_temp_c = 71 };
	c->kernel_power.counts.n[SIDE_PE_thermal_temperature] = i;
	c->energy = (struct model_energy){ .present = true, .j = { 6.25, NAN, NAN, 4 }, .total_j = 4,
					   .tokens_per_joule = NAN };
}

static void assert_episode(const struct throttle_episode *a, const struct throttle_episode *b, bool peak)
{
	assert_string_equal(a->source, b->source);
	assert_string_equal(a->zone, b->zone);
	assert_string_equal(a->reason, b->reason);
	assert_true(a->start_ns == b->start_ns && a->end_ns == b->end_ns);
	if (peak)
		assert_num(a->peak_temp_c, b->peak_temp_c);
	assert_num(a->min_clock_pct, b->min_clock_pct);
	assert_int_equal(a->open, b->open);
}

static void assert_mam(const struct side_mam *a, const struct side_mam *b)
{
	assert_num(a->min, b->min);
	assert_num(a->avg, b->avg);
	assert_num(a->max, b->max);
}

static void assert_side_equal(const struct model *a, const struct model *b)
{
	const struct side_thermal *ta = &a->side.run.thermal, *tb = &b->side.run.thermal;
	const struct side_gpu_device *da, *db;

	assert_int_equal(tb->present, true);
	assert_int_equal(tb->zones.n, 1);
	assert_string_equal(tb->zones.v[0].name, ta->zones.v[0].name);
	assert_mam(&tb->zones.v[0].v, &ta->zones.v[0].v);
	assert_mam(&tb->hwmon.v[0].v, &ta->hwmon.v[0].v);
	assert_string_equal(tb->power_w.v[0].name, "VDD_IN");
	assert_mam(&tb->power_w.v[0].v, &ta->power_w.v[0].v);
	assert_num(tb->cpufreq.v[0].avg_mhz, 1800.5);
	assert_num(tb->cpufreq.v[0].lowest_scaling_max_mhz, NAN);
	assert_num(tb->max_temp_c, 86);
	assert_num(tb->temp_threshold_c, 75);
	assert_num(tb->clock_drop_pct, 20);
	assert_true(tb->throttled);
	assert_int_equal(tb->throttling.n, 1);
	assert_episode(&tb->throttling.v[0], &ta->throttling.v[0], true);
	assert_int_equal(tb->samples, 120);
	assert_int_equal(tb->period_ms, 20);
	assert_true(tb->kernel_events.present);
	assert_string_equal(tb->kernel_events.attached.v[0].name, "thermal:thermal_temperature");
	assert_string_equal(tb->kernel_events.missing.v[0].name, "power:cpu_frequency");
	assert_memory_equal(&tb->kernel_events.counts, &ta->kernel_events.counts, sizeof(ta->kernel_events.counts));
	assert_int_equal(tb->kernel_events.timeline.n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct side_power_record *x = &ta->kernel_events.timeline.v[i], *y = &tb->kernel_events.timeline.v[i];

		assert_num(y->t_s, x->t_s);
		assert_string_equal(y->type, x->type);
		assert_int_equal(y->thermal, x->thermal);
		assert_int_equal(y->cdev, x->cdev);
		assert_int_equal(y->has_cpu, x->has_cpu);
		assert_int_equal(y->limits, x->limits);
		assert_string_equal(y->name, x->name);
		assert_int_equal(y->id, x->id);
		assert_int_equal(y->state, x->state);
		if (x->thermal)
			assert_num(y->temp_c, x->temp_c);
		if (x->limits)
			assert_num(y->max_mhz, x->max_mhz);
	}
	assert_int_equal(tb->kernel_events.timeline_max_points, 512);
	assert_int_equal(tb->kernel_events.not_kept, 4);

	assert_true(b->side.run.gpu.available);
	assert_string_equal(b->side.run.gpu.source, "nvml");
	assert_string_equal(b->side.run.gpu.unavailable_reason, "");
	assert_int_equal(b->side.run.gpu.devices.n, 1);
	da = &a->side.run.gpu.devices.v[0];
	db = &b->side.run.gpu.devices.v[0];
	assert_string_equal(db->name, da->name);
	assert_num(db->util_pct.avg, 35);
	assert_num(db->util_pct.max, 60);
	assert_num(db->mem_used_mb.avg, NAN);
	assert_num(db->target_mem_mb.avg, da->target_mem_mb.avg);
	assert_num(db->target_mem_mb.max, da->target_mem_mb.max);
	assert_num(db->mem_total_mb, 81559);
	assert_num(db->max_sm_clock_mhz, 1980);
	assert_true(db->has_reasons);
	assert_true(db->throttle_reasons == 0x4);
	assert_int_equal(db->process_mem_mb.n, 1);
	assert_string_equal(db->process_mem_mb.v[0].name, "4242");
	assert_num(db->process_mem_mb.v[0].v, 512);

	assert_int_equal(b->side.run.disk.paths.n, 2);
	assert_true(b->side.run.disk.paths.v[0].ok);
	assert_num(b->side.run.disk.paths.v[0].percent_free, 62.5);
	assert_num(b->side.run.disk.paths.v[0].min_free_mb, 9.5);
	assert_false(b->side.run.disk.paths.v[1].ok);
	assert_string_equal(b->side.run.disk.paths.v[1].error, "statvfs failed");
	assert_num(b->side.run.disk.alert_below_pct, 10);
	assert_true(b->side.run.host.present);
	assert_mam(&b->side.run.host.mem_available_mb, &a->side.run.host.mem_available_mb);
	assert_string_equal(b->side.run.host.cpu_load_pct.v[0].name, "cpu0");
	assert_num(b->side.run.host.cpu_load_pct.v[0].v.max, 95);
	assert_num(b->side.run.host.cpu_load_avg_pct, 40);
}

static void assert_energy_equal(const struct model *a, const struct model *b)
{
	const struct model_energy_figures *ea = &a->energy, *eb = &b->energy;

	assert_true(eb->present);
	assert_true(eb->cycles.present);
	for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
		assert_num(eb->cycles.j[d], ea->cycles.j[d]);
	assert_num(eb->cycles.total_j, 15);
	assert_num(eb->cycles.tokens_per_joule, 0.4);
	assert_int_equal(eb->cycles_measured, 2);
	assert_int_equal(eb->cycles_left_out, 1);
	assert_num(eb->side.resolution_ms, 20);
	assert_int_equal(eb->side.sources.n, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct side_energy_source *x = &ea->side.sources.v[i], *y = &eb->side.sources.v[i];

		assert_string_equal(y->name, x->name);
		assert_string_equal(y->domain, x->domain);
		assert_string_equal(y->kind, x->kind);
		assert_num(y->joules, x->joules);
		assert_num(y->mean_w, x->mean_w);
		assert_int_equal(y->counter, x->counter);
		assert_int_equal(y->wraps, x->wraps);
		assert_num(y->max_range_j, x->max_range_j);
		assert_num(y->limit_w, x->limit_w);
		assert_int_equal(y->root_only, x->root_only);
		assert_int_equal(y->read_errors, x->read_errors);
	}
	assert_true(side_energy__root_only(&eb->side));
	assert_string_equal(eb->side.missing.v[0].domain, "gpu");
	assert_string_equal(eb->side.missing.v[0].reason, "--gpu none");
	for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
		assert_num(eb->side.j[d], ea->side.j[d]);
	assert_num(eb->side.peak_w, 31.5);
	assert_num(eb->side.capped_ms, 400);
	assert_int_equal(eb->side.capped.n, 1);
	assert_episode(&eb->side.capped.v[0], &ea->side.capped.v[0], false);
	assert_true(eb->phases[1].present);
	assert_num(eb->phases[1].j[MODEL_EN_CPU], 10);
	assert_num(eb->phases[1].j[MODEL_EN_DRAM], NAN);
	assert_int_equal(eb->phases[1].intervals_measured, 2);
	assert_int_equal(eb->phases[1].intervals_left_out, 1);
	assert_num(eb->phases[1].measured_ms, 400);
}

static void assert_cycles_equal(const struct model *a, const struct model *b)
{
	assert_int_equal(b->ncycles, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct model_cycle *x = &a->cycles[i], *y = &b->cycles[i];

		assert_true(y->side.present);
		assert_int_equal(y->side.samples, x->side.samples);
		assert_int_equal(y->side.has_rows, x->side.has_rows);
		assert_int_equal(y->side.temp_c.n, x->side.temp_c.n);
		assert_num(y->side.temp_max_c, x->side.temp_max_c);
		assert_num(y->side.cpu_mhz, x->side.cpu_mhz);
		assert_num(y->side.cpu_load_pct, x->side.cpu_load_pct);
		assert_num(y->side.mem_available_mb, x->side.mem_available_mb);
		assert_int_equal(y->side.power_w.n, x->side.power_w.n);
		assert_int_equal(y->side.has_gpu, x->side.has_gpu);
		assert_num(y->side.gpu.util_pct, x->side.gpu.util_pct);
		assert_num(y->side.gpu.power_w, x->side.gpu.power_w);
		assert_num(y->side.throttled_ms, x->side.throttled_ms);
		assert_int_equal(y->kernel_power.present, x->kernel_power.present);
		assert_memory_equal(&y->kernel_power.counts, &x->kernel_power.counts, sizeof(x->kernel_power.counts));
		assert_num(y->kernel_power.min_cpu_mhz, x->kernel_power.present ? x->kernel_power.min_cpu_mhz : NAN);
		assert_num(y->kernel_power.max_temp_c, x->kernel_power.present ? x->kernel_power.max_temp_c : NAN);
		assert_true(y->energy.present);
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			assert_num(y->energy.j[d], x->energy.j[d]);
		assert_num(y->energy.total_j, 4);
		assert_num(y->energy.tokens_per_joule, NAN);
	}
	assert_num(b->cycles[0].side.temp_c.v[0].v, 55.5);
	assert_string_equal(b->cycles[0].side.power_w.v[0].name, "VDD_IN");
}

static void test_side_round_trip(void **state)
{
	struct model m, back;
	json_t *p, *p2;

	(void)state;
	model__init(&m);
	assert_int_equal(model__set_phase_name(&m, 1, "work"), 0);
	m.phases[1] = (struct model_phase_summary){ .present = true, .total_ms = 10, .calls = 1,
						    .p50_ms = NAN, .p95_ms = NAN, .p99_ms = NAN };
	fill_side(&m);
	fill_energy(&m);
	fill_cycle(&m, 0);
	fill_cycle(&m, 1);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_non_null(p);
	/* the documented shapes */
	assert_float_equal(th_jnum(th_jget(p, "gpu", "util_pct", "avg", NULL)), 35, EPS); /* device 0, flat */
	assert_string_equal(json_string_value(json_array_get(th_jget(p, "gpu", "throttle_reasons", NULL), 0)),
			    "sw_power_cap");
	assert_string_equal(json_string_value(th_jget(p, "disk", "paths", "/gone", "error", NULL)), "statvfs failed");
	assert_null(th_jget(p, "disk", "paths", "/gone", "free_mb", NULL));
	assert_null(th_jget(json_array_get(th_jget(p, "energy", "sources", NULL), 1), "wraps", NULL)); /* an integral */
	assert_float_equal(th_jnum(th_jget(p, "energy", "run", "peak_w", NULL)), 31.5, EPS);
	assert_float_equal(th_jnum(th_jget(p, "energy", "peak_w", NULL)), 31.5, EPS);
	assert_null(th_jget(json_array_get(th_jget(p, "energy", "power_capped", "episodes", NULL), 0), "peak_temp_c", NULL));
	assert_null(th_jget(json_array_get(th_jget(p, "cycles", NULL), 1), "temp_c", NULL)); /* no rows */
	assert_int_equal(json_integer_value(th_jget(json_array_get(th_jget(p, "cycles", NULL), 1), "kernel_power",
						    "thermal_temperature", NULL)), 1);
	assert_null(th_jget(json_array_get(th_jget(p, "cycles", NULL), 1), "kernel_power", "cdev_update", NULL));

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_side_equal(&m, &back);
	assert_energy_equal(&m, &back);
	assert_cycles_equal(&m, &back);
	p2 = model__to_json(&back);
	assert_non_null(p2);
	json_object_del(p, "system"); /* each written from the machine it ran on */
	json_object_del(p2, "system");
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}

/* A profile written by hand (as the rules' tests do): GPU figures flat,
 * no `devices`, still read as device 0. */
static void test_flat_gpu(void **state)
{
	json_t *p = json_pack("{s:s,s:{s:b,s:{s:f}},s:{s:b,s:f,s:[{}]}}", "schema_version", "1.0", "gpu", "available", 1,
			      "util_pct", "avg", 30.0, "thermal", "throttled", 1, "max_temp_c", 88.0, "throttling");
	struct model m;

	(void)state;
	assert_int_equal(model__from_json(&m, p, "test"), 0);
	assert_true(m.side.run.gpu.available);
	assert_int_equal(m.side.run.gpu.devices.n, 1);
	assert_num(m.side.run.gpu.devices.v[0].util_pct.avg, 30);
	assert_true(m.side.run.thermal.throttled);
	assert_int_equal(m.side.run.thermal.throttling.n, 1);
	assert_false(m.side.run.host.present); /* no host: none written back */
	model__free(&m);
	json_decref(p);
}

/* ---- the rest of the model, through profile.json and back ---- */

static void fill_core(struct model *m)
{
	char *argv[] = { "exp", "--n", "2", NULL };
	struct model_recommendation r = { .title = "Fewer threads", .description = "d", .current_value = "8",
					  .recommended_value = "4", .bottleneck = "cpu_oversubscribed" };
	struct model_process *p;
	struct model_cycle *c;

	assert_int_equal(model__set_command(m, argv), 0);
	m->run.pids = calloc(2, sizeof(pid_t));
	m->run.pids[0] = 100;
	m->run.npids = 1;
	m->run.started_at = strdup("2025-01-02T03:04:05.678Z");
	m->run.stop_reason = strdup("target_exited");
	m->run.duration_s = 2.5;
	p = model__add_process(m, 100);
	p->ppid = 1;
	snprintf(p->comm, sizeof(p->comm), "exp");
	p->root = true;
	p->cpu_s = 1.25;
	p->exited = true;
	p->exit_status = 9; /* killed by SIGKILL */
	p = model__add_process(m, 101);
	p->ppid = 100;
	p->cpu_s = NAN;
	p->exited = true;
	p->exit_status = 3 << 8; /* exit code 3 */
	assert_int_equal(model__set_phase_name(m, 1, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, 2, "database"), 0);
	assert_int_equal(model__set_count_name(m, 1, "tokens"), 0);
	m->phases[1] = (struct model_phase_summary){ .present = true, .total_ms = 120, .thread_ms = 130, .calls = 2,
						     .percent_of_cycle = 60, .p50_ms = 60, .p95_ms = 61, .p99_ms = NAN,
						     .percentiles_from = "calls", .outside_thread_ms = 5, .outside_calls = 1 };
	m->phases[1].hist_us[16] = 2;
	m->phases[1].hist_us[0] = 1;
	m->phases[2] = (struct model_phase_summary){ .present = true, .total_ms = 10, .calls = 1,
						     .p50_ms = NAN, .p95_ms = NAN, .p99_ms = NAN };
	c = model__add_cycle(m, 100, 7, 1000 * MS, 1100 * MS);
	c->duration_ms = 100;
	c->samples = 12;
	c->ended_at_last_phase = true;
	c->phases[1] = (struct model_cycle_phase){ .present = true, .ms = 60, .thread_ms = 61, .calls = 1,
						  .split = { .present = true, .oncpu_ms = 50, .runq_ms = 1, .offcpu_ms = 10,
							     .blocked_ms = { [BLOCKED_IO] = 10 } } };
	c->has_count[1] = true;
	c->counts[1] = 16;
	c->tokens_per_second = 160;
	c->tokens_per_second_wall = NAN;
	c->split = (struct model_split){ .present = true, .oncpu_ms = 70, .runq_ms = 5, .offcpu_ms = 25,
					 .blocked_ms = { [BLOCKED_SLEEP] = 20, [BLOCKED_LOCK] = 5 }, .has_wall = true,
					 .unattributed_ms = 0.5, .unattributed_percent = 0.5 };
	c->has_all_threads = true;
	c->all_oncpu_ms = 90;
	c->all_runq_ms = 6;
	c->all_offcpu_ms = 104;
	c->minflt = 7;
	c->majflt = 1;
	c->nvcsw = 30;
	c->nivcsw = 2;
	c->has_rss = true;
	c->rss_peak_mb = 101.5;
	c->rss_end_mb = 100;
	c->llama = (struct model_llama_cycle){ .present = true, .prompt_tokens = 8, .generated_tokens = 16,
					       .generation_batches_tokens = 15, .prefill_ms = 20, .decode_ms = 70,
					       .prefill_tokens_per_s = 400, .decode_tokens_per_s = NAN,
					       .j_per_generated_token = NAN };
	c->network = (struct model_net_cycle){ .present = true, .sent_bytes = 300, .sends = 3 };
	c = model__add_cycle(m, 100, 8, 1100 * MS, 0);
	c->index = 1;
	c->duration_ms = 50;
	c->open_at_end = true;
	m->agg = (struct model_aggregates){ .total_cycles = 2, .cycles_source = "cycle", .empty_marker_cycles_dropped = 1,
					    .avg_cycle_ms = 75, .p50_cycle_ms = 75, .p95_cycle_ms = 99, .p99_cycle_ms = 100,
					    .max_cycle_ms = 100, .avg_tokens_per_second = 160,
					    .avg_tokens_per_second_wall = NAN, .peak_memory_mb = NAN };
	m->llama = (struct model_llama_cycle){ .present = true, .prompt_tokens = 8, .generated_tokens = 16,
					       .prefill_ms = 20, .decode_ms = 70, .prefill_tokens_per_s = 400,
					       .decode_tokens_per_s = 214, .j_per_generated_token = 0.25 };
	m->llama_facts.present = m->llama_facts.has_model = m->llama_facts.has_context = true;
	m->llama_facts.pid = 100;
	snprintf(m->llama_facts.model.path, sizeof(m->llama_facts.model.path), "/m/tiny.gguf");
	snprintf(m->llama_facts.model.arch, sizeof(m->llama_facts.model.arch), "llama");
	m->llama_facts.model.read = true;
	m->llama_facts.model.n_params = 1000000;
	m->llama_facts.model.file_type_id = 0;
	snprintf(m->llama_facts.model.file_type, sizeof(m->llama_facts.model.file_type), "F32");
	m->llama_facts.model.n_layer = 4;
	m->llama_facts.context.n_ctx = 4096;
	m->llama_facts.context.threads_used[MODEL_LLAMA_GENERATION] = 3;
	m->llama_facts.context.has_calls = true;
	m->llama_facts.context.calls[MODEL_LLAMA_GENERATION][3] = 9;
	m->llama_facts.context.calls[MODEL_LLAMA_GENERATION][0] = 1; /* 64 threads or more */
	struct model_evidence ev;

	model_evidence__init(&ev);
	ev.percent_of_cycle = 60;
	assert_int_equal(model__add_finding(m, "llm_inference", "high", 60, &ev), 0);
	assert_int_equal(model__add_finding(m, "thermal_throttling", "medium", NAN, NULL), 0);
	model_evidence__init(&r.evidence);
	r.evidence.present = true;
	r.evidence.n_threads = 8;
	assert_int_equal(model__add_recommendation(m, &r), 0);
	rule_thresholds__defaults(&m->thresholds);
	m->thresholds.power_mw = 2500;
	m->have_thresholds = true;
	m->run.config = json_pack("{s:s,s:i,s:[s],s:{s:s}}", "cycle", "run_cycle", "frequency", 199, "presets", "sqlite",
				  "phases", "database", "db:sqlite3_step");
	assert_int_equal(config_file__asked(m->run.config, m), 0);
	assert_int_equal(model__add_lost(m, "samples", 3), 0);
	assert_int_equal(model__add_lost(m, "ringbuf_events", 2), 0);
	m->memory.available = true;
	m->memory.peak_mb = 101.5;
	m->memory.growth_mb_per_cycle = 0.25;
	snprintf(m->memory.source, sizeof(m->memory.source), "mm counters");
	m->memory.per_process.v = calloc(1, sizeof(*m->memory.per_process.v));
	m->memory.per_process.v[0] = (struct model_memory_proc){ .pid = 100, .comm = "exp", .peak_mb = 101.5,
								  .last_mb = 100 };
	m->memory.per_process.n = m->memory.per_process.cap = 1;
	m->sched.has_faults = true;
	m->sched.minflt = 12;
}

static void assert_split(const struct model_split *a, const struct model_split *b)
{
	assert_int_equal(b->present, a->present);
	assert_num(b->oncpu_ms, a->oncpu_ms);
	assert_num(b->runq_ms, a->runq_ms);
	assert_num(b->offcpu_ms, a->offcpu_ms);
	assert_memory_equal(b->blocked_ms, a->blocked_ms, sizeof(a->blocked_ms));
	assert_int_equal(b->has_wall, a->has_wall);
	if (a->has_wall)
		assert_num(b->unattributed_percent, a->unattributed_percent);
}

static void assert_llama(const struct model_llama_cycle *a, const struct model_llama_cycle *b)
{
	assert_true(b->present);
	assert_int_equal(b->prompt_tokens, a->prompt_tokens);
	assert_int_equal(b->generated_tokens, a->generated_tokens);
	assert_int_equal(b->generation_batches_tokens, a->generated_tokens - 1);
	assert_num(b->prefill_ms, a->prefill_ms);
	assert_num(b->decode_ms, a->decode_ms);
	assert_num(b->prefill_tokens_per_s, a->prefill_tokens_per_s);
	assert_num(b->decode_tokens_per_s, a->decode_tokens_per_s);
	assert_num(b->j_per_generated_token, a->j_per_generated_token);
}

static void test_core_round_trip(void **state)
{
	struct model m, back;
	const struct model_cycle *a, *b;
	json_t *p, *p2;

	(void)state;
	model__init(&m);
	fill_core(&m);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_non_null(p);
	assert_string_equal(json_string_value(th_jget(json_array_get(th_jget(p, "cycles", NULL), 0), "end", NULL)),
			    "last_phase_call");
	assert_int_equal(json_integer_value(th_jget(json_array_get(th_jget(p, "processes", NULL), 0),
						    "killed_by_signal", NULL)), 9);
	assert_int_equal(json_integer_value(th_jget(json_array_get(th_jget(p, "processes", NULL), 1), "exit_code", NULL)), 3);
	assert_float_equal(th_jnum(th_jget(p, "config", "thresholds", "power_mw", NULL)), 2500, EPS);
	assert_float_equal(th_jnum(th_jget(p, "memory", "growth_mb_per_cycle", NULL)), 0.25, EPS);

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_int_equal(back.stage, MODEL_ANALYSED);
	assert_string_equal(back.run.command[2], "2");
	assert_null(back.run.command[3]);
	assert_int_equal(back.run.npids, 1);
	assert_string_equal(back.run.started_at, m.run.started_at);
	assert_string_equal(back.run.stop_reason, "target_exited");
	assert_num(back.run.duration_s, 2.5);
	assert_int_equal(back.nprocs, 2);
	assert_int_equal(back.procs[0].exit_status, 9);
	assert_int_equal(back.procs[1].exit_status, 3 << 8);
	assert_int_equal(back.procs[1].ppid, 100);
	assert_num(back.procs[1].cpu_s, NAN);
	assert_string_equal(back.phase_names[1], "llm_inference");
	assert_string_equal(back.count_names[1], "tokens");
	assert_num(back.phases[1].thread_ms, 130);
	assert_num(back.phases[1].percent_of_cycle, 60);
	assert_num(back.phases[1].p99_ms, NAN);
	assert_string_equal(back.phases[1].percentiles_from, "calls");
	assert_memory_equal(back.phases[1].hist_us, m.phases[1].hist_us, sizeof(m.phases[1].hist_us));
	assert_num(back.phases[1].outside_thread_ms, 5);
	assert_int_equal(back.phases[1].outside_calls, 1);
	assert_null(back.phases[2].percentiles_from);
	assert_int_equal(back.ncycles, 2);
	a = &m.cycles[0];
	b = &back.cycles[0];
	assert_int_equal(b->pid, 100);
	assert_int_equal(b->bpf_cycle, 7);
	assert_true(b->start_ns == a->start_ns && b->end_ns == a->end_ns);
	assert_true(b->ended_at_last_phase);
	assert_int_equal(b->samples, 12);
	assert_true(b->phases[1].present);
	assert_false(b->phases[2].present);
	assert_num(b->phases[1].thread_ms, 61);
	assert_split(&a->phases[1].split, &b->phases[1].split);
	assert_true(b->has_count[1]);
	assert_int_equal(b->counts[1], 16);
	assert_num(b->tokens_per_second, 160);
	assert_num(b->tokens_per_second_wall, NAN);
	assert_split(&a->split, &b->split);
	assert_true(b->has_all_threads);
	assert_num(b->all_offcpu_ms, 104);
	assert_int_equal(b->majflt, 1);
	assert_int_equal(b->nivcsw, 2);
	assert_true(b->has_rss);
	assert_num(b->rss_peak_mb, 101.5);
	assert_llama(&a->llama, &b->llama);
	assert_true(b->network.present);
	assert_int_equal(b->network.sends, 3);
	assert_int_equal(b->network.sent_bytes, 300);
	assert_false(back.cycles[1].network.present);
	assert_true(back.cycles[1].open_at_end);
	assert_false(back.cycles[1].split.present);
	assert_false(back.cycles[1].llama.present);
	assert_int_equal(back.agg.total_cycles, 2);
	assert_string_equal(back.agg.cycles_source, "cycle");
	assert_int_equal(back.agg.empty_marker_cycles_dropped, 1);
	assert_num(back.agg.p95_cycle_ms, 99);
	assert_num(back.agg.avg_tokens_per_second_wall, NAN);
	assert_num(back.agg.peak_memory_mb, NAN);
	assert_num(back.agg.cycles_ms, 150);
	assert_llama(&m.llama, &back.llama);
	assert_true(back.llama_facts.present);
	assert_int_equal(back.llama_facts.pid, 100);
	assert_string_equal(back.llama_facts.model.path, "/m/tiny.gguf");
	assert_string_equal(back.llama_facts.model.file_type, "F32");
	assert_int_equal(back.llama_facts.model.file_type_id, 0);
	assert_int_equal(back.llama_facts.model.n_layer, 4);
	assert_int_equal(back.llama_facts.model.n_embd, -1);
	assert_int_equal(back.llama_facts.context.n_ctx, 4096);
	assert_int_equal(back.llama_facts.context.n_batch, -1);
	assert_int_equal(back.llama_facts.context.threads_used[MODEL_LLAMA_GENERATION], 3);
	assert_int_equal(back.llama_facts.context.threads_used[MODEL_LLAMA_PROMPT], -1);
	assert_memory_equal(back.llama_facts.context.calls, m.llama_facts.context.calls, sizeof(m.llama_facts.context.calls));
	assert_int_equal(back.nfindings, 2);
	assert_string_equal(back.findings[0].type, "llm_inference");
	assert_num(back.findings[0].percentage_of_cycle, 60);
	assert_num(back.findings[1].percentage_of_cycle, NAN);
	assert_num(back.findings[0].evidence.percent_of_cycle, 60);
	assert_num(back.findings[0].evidence.total_ms, NAN);
	assert_int_equal(back.nrecs, 1);
	assert_string_equal(back.recs[0].title, "Fewer threads");
	assert_string_equal(back.recs[0].priority, "medium"); /* the default, written */
	assert_string_equal(back.recs[0].bottleneck, "cpu_oversubscribed");
	assert_true(back.recs[0].evidence.present);
	assert_int_equal(back.recs[0].evidence.n_threads, 8);
	assert_int_equal(back.recs[0].evidence.n_threads_used, -1);
	assert_int_equal(back.run.asked.frequency, 199);
	assert_string_equal(model__name(&back, back.run.asked.cycle), "run_cycle");
	assert_int_equal(back.run.asked.cycle_marker, -1);
	assert_int_equal(back.run.asked.presets.n, 1);
	assert_string_equal(model__name(&back, back.run.asked.presets.v[0]), "sqlite");
	assert_int_equal(back.run.asked.phases.n, 1);
	assert_string_equal(model__name(&back, back.run.asked.phases.v[0].spec), "db:sqlite3_step");
	assert_true(back.have_thresholds);
	assert_num(back.thresholds.power_mw, 2500);
	assert_num(back.thresholds.inference_pct, m.thresholds.inference_pct);
	assert_int_equal(model__lost(&back, "samples"), 3);
	assert_int_equal(model__lost(&back, "ringbuf_events"), 2);
	assert_true(back.memory.available);
	assert_num(back.memory.growth_mb_per_cycle, 0.25);
	assert_string_equal(back.memory.source, "mm counters");
	assert_int_equal(back.memory.per_process.n, 1);
	assert_num(back.memory.per_process.v[0].last_mb, 100);
	assert_num(model__rss_now_mb(&back), 100);
	assert_true(back.sched.has_faults);
	assert_int_equal(back.sched.minflt, 12);

	p2 = model__to_json(&back);
	assert_non_null(p2);
	json_object_del(p, "system");
	json_object_del(p2, "system");
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}


/* ---- the scheduler's sections: sched and offcpu ---- */

static void fill_sched(struct model *m)
{
	struct model_sched_figures *sf = &m->sched;
	struct model_offcpu_figures *off = &m->offcpu;
	struct model_sched_proc *pp;

	assert_int_equal(model__set_phase_name(m, 1, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, 2, "database"), 0);
	m->phases[1] = (struct model_phase_summary){ .present = true, .p50_ms = NAN, .p95_ms = NAN, .p99_ms = NAN };
	m->phases[2] = m->phases[1];
	sf->present = sf->available = sf->has_totals = true;
	snprintf(sf->missing_tracepoints, sizeof(sf->missing_tracepoints), "sched:sched_wakeup_new");
	sf->lost.updates = 4;
	sf->lost.offcpu_user_stacks = 2;
	sf->unseen_in = 3;
	sf->unseen_out = 5;
	sf->unattributed.ms = 1.5;
	sf->unattributed.oncpu_ms = 1;
	sf->unattributed.offcpu_ms = 0.5;
	sf->unattributed.intervals = 6;
	sf->cpus = 2;
	sf->nvcsw = 40;
	sf->nivcsw = 7;
	sf->oncpu_ms = 900;
	sf->offcpu_ms = 80;
	sf->runq_wait_ms = 20;
	sf->runq_wait_others_ms = 12;
	sf->runq_share_percent = 100.0 * 20 / 920;
	sf->avg_runnable_threads = 0.92;
	sf->runq = (struct model_runq){ .waits = 11, .p50_us = 3, .p95_us = 60, .p99_us = 100 };
	sf->runq.hist_us[0] = 1;
	sf->runq.hist_us[1] = 8;
	sf->runq.hist_us[6] = 2;
	sf->per_process.v = calloc(1, sizeof(*sf->per_process.v));
	sf->per_process.n = sf->per_process.cap = 1;
	pp = &sf->per_process.v[0];
	pp->pid = 100;
	snprintf(pp->comm, sizeof(pp->comm), "exp");
	pp->wall_ms = 1000;
	pp->oncpu_ms = 900;
	pp->runq_wait_ms = 20;
	pp->runq_wait_others_ms = 12;
	pp->offcpu_ms = 80;
	pp->blocked_ms[BLOCKED_IO] = 50;
	pp->blocked_ms[BLOCKED_LOCK] = 30;
	pp->runq_share_percent = sf->runq_share_percent;
	pp->nvcsw = 40;
	pp->nivcsw = 7;
	pp->main_thread = (struct model_split){ .present = true, .oncpu_ms = 800, .runq_ms = 10, .offcpu_ms = 70,
						.blocked_ms = { [BLOCKED_IO] = 70 }, .has_wall = true,
						.unattributed_ms = 120, .unattributed_percent = 12 };
	pp->runq = sf->runq;
	sf->per_phase[1] = (struct model_sched_phase){ .present = true,
		.split = { .present = true, .oncpu_ms = 600, .runq_ms = 5, .offcpu_ms = 1,
			   .blocked_ms = { [BLOCKED_SLEEP] = 1 } },
		.runq = { .p50_us = 2, .p95_us = 4, .p99_us = 8 } };
	sf->per_phase[1].runq.hist_us[2] = 5;
	sf->max_cycle_unattributed_percent = 12;

	off->present = true;
	off->total_ms = 80;
	off->in_stacks_ms = 75;
	off->min_block_us = 10;
	off->blocked_ms[BLOCKED_IO] = 50;
	off->blocked_ms[BLOCKED_LOCK] = 30;
	off->top_stacks.v = calloc(2, sizeof(*off->top_stacks.v));
	off->top_stacks.n = off->top_stacks.cap = 2;
	off->top_stacks.v[0] = (struct model_top_stack){ .stack = model__intern(m, "main;read"), .ms = 50, .percent = 66.7 };
	off->top_stacks.v[1] = (struct model_top_stack){ .stack = model__intern(m, "main;lock"), .ms = 25, .percent = 33.3 };
	snprintf(off->stack_quality.method, sizeof(off->stack_quality.method), "frame pointers");
	off->stack_quality.blocked_in_stacks_ms = 75;
	off->stack_quality.complete_ms = 60;
	off->stack_quality.complete_percent = 80;
	off->stack_quality.has_dwarf = true;
	off->stack_quality.dwarf = (struct model_offcpu_dwarf){ .records = 9, .sent = 10, .lost = 1, .dropped_ms = 0.25,
								.sample_us = 100, .reused = 3, .sampled_ms = 2.5,
								.unweighed_ms = NAN, .short_exited_ms = 0 };
	off->waiting.total_ms = 30;
	for (int ph = 0; ph < IT_MAX_PHASES; ph++)
		off->waiting.by_waker_phase_ms[ph] = NAN;
	off->waiting.by_waker_phase_ms[2] = 20;
	off->waiting.outside_phases_ms = 10;
	off->waiting.in_stacks_ms = 28;
	off->waiting.top_stacks.v = calloc(1, sizeof(*off->waiting.top_stacks.v));
	off->waiting.top_stacks.n = off->waiting.top_stacks.cap = 1;
	off->waiting.top_stacks.v[0] = (struct model_top_stack){ .stack = model__intern(m, "worker;write"), .ms = 28,
								  .percent = 100 };
}

static void assert_runq(const struct model_runq *a, const struct model_runq *b)
{
	assert_int_equal(b->waits, a->waits);
	assert_memory_equal(b->hist_us, a->hist_us, sizeof(a->hist_us));
	assert_num(b->p50_us, a->p50_us);
	assert_num(b->p95_us, a->p95_us);
	assert_num(b->p99_us, a->p99_us);
}

static void test_sched_round_trip(void **state)
{
	struct model m, back, empty;
	const struct model_sched_proc *pa, *pb;
	json_t *p, *p2, *h;

	(void)state;
	model__init(&m);
	fill_sched(&m);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_non_null(p);
	/* the shapes profile.json has always had */
	h = th_jget(p, "sched", "runq", "histogram_us", NULL);
	assert_int_equal(json_array_size(h), 7); /* up to the last slot that counted */
	assert_int_equal(json_integer_value(th_jget(json_array_get(h, 6), "lo_us", NULL)), 64);
	assert_int_equal(json_integer_value(th_jget(json_array_get(h, 6), "hi_us", NULL)), 128);
	assert_int_equal(json_integer_value(th_jget(json_array_get(h, 0), "lo_us", NULL)), 0);
	assert_null(th_jget(p, "sched", "per_phase", "llm_inference", "runq", "waits", NULL));
	assert_non_null(th_jget(p, "sched", "per_phase", "llm_inference", "blocked", "io", NULL));
	assert_null(th_jget(p, "sched", "per_phase", "database", NULL));
	assert_float_equal(th_jnum(json_object_get(json_array_get(th_jget(p, "sched", "per_process", NULL), 0), "wall_ms")),
			   1000, EPS);
	assert_int_equal(json_integer_value(th_jget(p, "sched", "context_switches", "involuntary", NULL)), 7);
	assert_int_equal(json_integer_value(th_jget(p, "sched", "unseen_switches", "out", NULL)), 5);
	assert_true(json_is_integer(th_jget(p, "offcpu", "min_block_us", NULL)));
	assert_string_equal(json_string_value(th_jget(json_array_get(th_jget(p, "offcpu", "top_stacks", NULL), 1),
						      "stack", NULL)), "main;lock");
	assert_float_equal(th_jnum(th_jget(p, "offcpu", "waiting_for_thread", "by_waker_phase", "database", NULL)), 20, EPS);
	assert_null(th_jget(p, "offcpu", "waiting_for_thread", "by_waker_phase", "llm_inference", NULL));
	assert_true(json_is_null(th_jget(p, "offcpu", "stack_quality", "dwarf", "unweighed_ms", NULL)));

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_true(back.sched.present && back.sched.available && back.sched.has_totals);
	assert_string_equal(back.sched.missing_tracepoints, "sched:sched_wakeup_new");
	assert_int_equal(back.sched.lost.updates, 4);
	assert_int_equal(back.sched.lost.offcpu_user_stacks, 2);
	assert_int_equal(back.sched.unseen_in, 3);
	assert_num(back.sched.unattributed.ms, 1.5);
	assert_int_equal(back.sched.unattributed.intervals, 6);
	assert_int_equal(back.sched.cpus, 2);
	assert_int_equal(back.sched.nvcsw, 40);
	assert_num(back.sched.oncpu_ms, 900);
	assert_num(back.sched.runq_wait_others_ms, 12);
	assert_num(back.sched.runq_share_percent, m.sched.runq_share_percent);
	assert_num(back.sched.avg_runnable_threads, 0.92);
	assert_runq(&m.sched.runq, &back.sched.runq);
	assert_int_equal(back.sched.per_process.n, 1);
	pa = &m.sched.per_process.v[0];
	pb = &back.sched.per_process.v[0];
	assert_int_equal(pb->pid, 100);
	assert_string_equal(pb->comm, "exp");
	assert_num(pb->wall_ms, 1000);
	assert_num(pb->offcpu_ms, 80);
	assert_memory_equal(pb->blocked_ms, pa->blocked_ms, sizeof(pa->blocked_ms));
	assert_int_equal(pb->nivcsw, 7);
	assert_split(&pa->main_thread, &pb->main_thread);
	assert_runq(&pa->runq, &pb->runq);
	assert_true(back.sched.per_phase[1].present);
	assert_false(back.sched.per_phase[2].present);
	assert_split(&m.sched.per_phase[1].split, &back.sched.per_phase[1].split);
	assert_runq(&m.sched.per_phase[1].runq, &back.sched.per_phase[1].runq);
	assert_num(back.sched.max_cycle_unattributed_percent, 12);

	assert_true(back.offcpu.present);
	assert_num(back.offcpu.total_ms, 80);
	assert_num(back.offcpu.in_stacks_ms, 75);
	assert_int_equal(back.offcpu.min_block_us, 10);
	assert_memory_equal(back.offcpu.blocked_ms, m.offcpu.blocked_ms, sizeof(m.offcpu.blocked_ms));
	assert_int_equal(back.offcpu.top_stacks.n, 2);
	assert_string_equal(model__name(&back, back.offcpu.top_stacks.v[0].stack), "main;read");
	assert_num(back.offcpu.top_stacks.v[1].percent, 33.3);
	assert_string_equal(back.offcpu.stack_quality.method, "frame pointers");
	assert_num(back.offcpu.stack_quality.complete_percent, 80);
	assert_true(back.offcpu.stack_quality.has_dwarf);
	assert_int_equal(back.offcpu.stack_quality.dwarf.sent, 10);
	assert_num(back.offcpu.stack_quality.dwarf.dropped_ms, 0.25);
	assert_num(back.offcpu.stack_quality.dwarf.unweighed_ms, NAN);
	assert_num(back.offcpu.waiting.total_ms, 30);
	assert_num(back.offcpu.waiting.by_waker_phase_ms[2], 20);
	assert_num(back.offcpu.waiting.by_waker_phase_ms[1], NAN);
	assert_num(back.offcpu.waiting.outside_phases_ms, 10);
	assert_int_equal(back.offcpu.waiting.top_stacks.n, 1);
	assert_string_equal(model__name(&back, back.offcpu.waiting.top_stacks.v[0].stack), "worker;write");

	/* a snapshot's copy holds the same */
	assert_int_equal(model__copy(&empty, &back), 0);
	p2 = model__to_json(&empty);
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&empty);

	p2 = model__to_json(&back);
	assert_non_null(p2);
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);

	/* the concern did not run: empty sections, nothing read back */
	model__init(&m);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_int_equal(json_object_size(json_object_get(p, "sched")), 0);
	assert_int_equal(json_object_size(json_object_get(p, "offcpu")), 0);
	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_false(back.sched.present);
	assert_false(back.offcpu.present);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}


/* ---- network and crashes ---- */

static void test_network_crashes_round_trip(void **state)
{
	struct model m, back, copy;
	struct model_network *net = &m.network;
	struct model_crash *cr;
	json_t *p, *p2, *c;

	(void)state;
	model__init(&m);
	assert_int_equal(model__set_phase_name(&m, 1, "db"), 0);
	m.phases[1] = (struct model_phase_summary){ .present = true, .p50_ms = NAN, .p95_ms = NAN, .p99_ms = NAN };
	net->present = true;
	snprintf(net->rtt_source, sizeof(net->rtt_source), "tcp:tcp_probe");
	snprintf(net->retransmit_source, sizeof(net->retransmit_source), "none");
	net->connections.v = calloc(2, sizeof(*net->connections.v));
	net->connections.n = net->connections.cap = 2;
	net->connections.v[0] = (struct model_net_conn){ .pid = 100, .local = "127.0.0.1:5000", .remote = "127.0.0.1:80",
		.sent_bytes = 1000, .recv_bytes = 20000, .sends = 5, .recvs = 9, .retransmits = 1,
		.srtt_us = { .samples = 4, .has_values = true, .last = 30, .min = 20, .max = 50, .avg = 32.5 },
		.first_s = 0.25, .closed = true, .closed_s = 1.5 };
	net->connections.v[1] = (struct model_net_conn){ .pid = 100, .local = "[::1]:5001", .remote = "[::1]:81",
		.first_s = 1 };
	net->totals.connections = 2;
	net->totals.sent_bytes = 1000;
	net->totals.recv_bytes = 20000;
	net->totals.retransmits = 1;
	net->retransmit_events.v = calloc(1, sizeof(*net->retransmit_events.v));
	net->retransmit_events.n = net->retransmit_events.cap = 1;
	net->retransmit_events.v[0] = (struct model_net_retransmit){ .t_s = 0.5, .pid = 100, .local_port = 5000,
								      .remote_port = 80 };
	net->closed_connections_not_kept = 2;
	m.crashes.v = calloc(2, sizeof(*m.crashes.v));
	m.crashes.n = m.crashes.cap = 2;
	m.crashes.v[0] = (struct model_crash){ .pid = 101, .comm = "worker", .role = "helper", .time_ns = 5 * MS,
		.time_s = 0.004, .cycle = 3, .phase = model__intern(&m, "db"), .cause = "signal", .signal = 11,
		.has_signal = true, .signal_name = "SIGSEGV", .core_dumped = true, .has_sender = true,
		.sender_pid = 0, .si_code = 1, .rss_mb = 12.5 };
	m.crashes.v[1] = (struct model_crash){ .pid = 100, .comm = "exp", .role = "target", .time_ns = 9 * MS,
		.time_s = 0.008, .cycle = -1, .phase = -1, .cause = "oom_kill", .has_exit_code = true,
		.exit_code = 0, .rss_mb = 900 };
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_non_null(p);
	/* the shapes profile.json has always had */
	assert_true(json_is_null(th_jget(p, "network", "source", NULL)));
	c = json_array_get(th_jget(p, "network", "connections", NULL), 1);
	assert_int_equal(json_integer_value(th_jget(c, "srtt_us", "samples", NULL)), 0);
	assert_null(th_jget(c, "srtt_us", "avg", NULL));
	assert_null(th_jget(c, "closed_s", NULL));
	assert_int_equal(json_integer_value(th_jget(p, "network", "totals", "connections", NULL)), 2);
	c = json_array_get(th_jget(p, "crashes", NULL), 0);
	assert_int_equal(json_integer_value(th_jget(c, "signal", NULL)), 11);
	assert_string_equal(json_string_value(th_jget(c, "phase", NULL)), "db");
	assert_null(th_jget(c, "exit_code", NULL));
	c = json_array_get(th_jget(p, "crashes", NULL), 1);
	assert_true(json_is_null(th_jget(c, "signal", NULL)));
	assert_true(json_is_null(th_jget(c, "cycle", NULL)));
	assert_true(json_is_null(th_jget(c, "phase", NULL)));
	assert_int_equal(json_integer_value(th_jget(c, "exit_code", NULL)), 0);
	assert_null(th_jget(c, "signal_name", NULL));
	assert_null(th_jget(c, "sender_pid", NULL));

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_true(back.network.present);
	assert_string_equal(back.network.source, "");
	assert_string_equal(back.network.rtt_source, "tcp:tcp_probe");
	assert_int_equal(back.network.connections.n, 2);
	assert_string_equal(back.network.connections.v[0].remote, "127.0.0.1:80");
	assert_int_equal(back.network.connections.v[0].recv_bytes, 20000);
	assert_true(back.network.connections.v[0].srtt_us.has_values);
	assert_num(back.network.connections.v[0].srtt_us.avg, 32.5);
	assert_int_equal(back.network.connections.v[0].srtt_us.max, 50);
	assert_true(back.network.connections.v[0].closed);
	assert_num(back.network.connections.v[0].closed_s, 1.5);
	assert_false(back.network.connections.v[1].closed);
	assert_false(back.network.connections.v[1].srtt_us.has_values);
	assert_int_equal(back.network.totals.recv_bytes, 20000);
	assert_int_equal(back.network.retransmit_events.n, 1);
	assert_int_equal(back.network.retransmit_events.v[0].remote_port, 80);
	assert_int_equal(back.network.closed_connections_not_kept, 2);
	assert_int_equal(back.crashes.n, 2);
	cr = &back.crashes.v[0];
	assert_string_equal(cr->comm, "worker");
	assert_int_equal(cr->cycle, 3);
	assert_string_equal(model__name(&back, cr->phase), "db");
	assert_int_equal(cr->signal, 11);
	assert_true(cr->has_signal && cr->core_dumped && cr->has_sender && !cr->has_exit_code);
	assert_string_equal(cr->signal_name, "SIGSEGV");
	assert_int_equal(cr->si_code, 1);
	assert_num(cr->rss_mb, 12.5);
	cr = &back.crashes.v[1];
	assert_int_equal(cr->cycle, -1);
	assert_int_equal(cr->phase, -1);
	assert_int_equal(cr->signal, 0);
	assert_true(cr->has_exit_code && !cr->has_signal && !cr->has_sender);
	assert_int_equal(model__oom_kills(&back), 1);

	assert_int_equal(model__copy(&copy, &back), 0);
	p2 = model__to_json(&copy);
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&copy);
	p2 = model__to_json(&back);
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);

	/* the concerns did not run: an empty object and an empty array */
	model__init(&m);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_int_equal(json_object_size(json_object_get(p, "network")), 0);
	assert_true(json_is_array(json_object_get(p, "crashes")));
	assert_int_equal(json_array_size(json_object_get(p, "crashes")), 0);
	json_decref(p);
	model__free(&m);
}


/* ---- the CUDA concern's counts: cycles[i].cuda and gpu.cuda ---- */

static void test_cuda_round_trip(void **state)
{
	struct model m, back;
	struct model_cycle *c;
	json_t *p, *p2, *cu;

	(void)state;
	model__init(&m);
	c = model__add_cycle(&m, 100, 0, 1000 * MS, 1100 * MS);
	c->duration_ms = 100;
	c->cuda = (struct model_cuda_totals){ .present = true, .kernel_launches = 16, .graph_launches = 2,
					      .memcpy_calls = 4, .memcpy_bytes = 1 << 21, .sync_calls = 3,
					      .sync_wait_ms = 15.5 };
	c = model__add_cycle(&m, 100, 1, 1100 * MS, 1200 * MS);
	c->index = 1;
	c->duration_ms = 100;
	m.cuda.totals = (struct model_cuda_totals){ .present = true, .kernel_launches = 16, .graph_launches = 2,
						    .memcpy_calls = 4, .memcpy_bytes = 1 << 21, .sync_calls = 3,
						    .sync_wait_ms = 15.5 };
	m.cuda.launch_stacks.python = 10;
	m.cuda.launch_stacks.native = 6;
	m.cuda.launch_stacks.not_kept = 1;
	m.cuda.libraries.v = calloc(2, sizeof(*m.cuda.libraries.v));
	m.cuda.libraries.n = m.cuda.libraries.cap = 2;
	m.cuda.libraries.v[0] = model__intern(&m, "/usr/lib/libcudart.so.12");
	m.cuda.libraries.v[1] = model__intern(&m, "/usr/lib/libcuda.so.1");
	m.cuda.functions_probed = 21;
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_non_null(p);
	cu = th_jget(p, "gpu", "cuda", NULL);
	assert_int_equal(json_integer_value(json_object_get(cu, "memcpy_bytes")), 1 << 21);
	assert_float_equal(th_jnum(json_object_get(cu, "sync_wait_ms")), 15.5, EPS);
	assert_int_equal(json_integer_value(th_jget(cu, "launch_stacks", "native", NULL)), 6);
	assert_string_equal(json_string_value(json_array_get(json_object_get(cu, "libraries"), 1)), "/usr/lib/libcuda.so.1");
	assert_int_equal(json_integer_value(json_object_get(cu, "functions_probed")), 21);
	assert_int_equal(json_integer_value(th_jget(json_array_get(th_jget(p, "cycles", NULL), 0), "cuda", "sync_calls",
						    NULL)), 3);
	assert_null(th_jget(json_array_get(th_jget(p, "cycles", NULL), 1), "cuda", NULL));

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_true(back.cuda.totals.present);
	assert_int_equal(back.cuda.totals.kernel_launches, 16);
	assert_num(back.cuda.totals.sync_wait_ms, 15.5);
	assert_int_equal(back.cuda.launch_stacks.python, 10);
	assert_int_equal(back.cuda.launch_stacks.not_kept, 1);
	assert_int_equal(back.cuda.libraries.n, 2);
	assert_string_equal(model__name(&back, back.cuda.libraries.v[0]), "/usr/lib/libcudart.so.12");
	assert_int_equal(back.cuda.functions_probed, 21);
	assert_true(back.cycles[0].cuda.present);
	assert_int_equal(back.cycles[0].cuda.memcpy_calls, 4);
	assert_int_equal(back.cycles[0].cuda.memcpy_bytes, 1 << 21);
	assert_num(back.cycles[0].cuda.sync_wait_ms, 15.5);
	assert_false(back.cycles[1].cuda.present);
	p2 = model__to_json(&back);
	assert_true(json_equal(p, p2));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);

	/* without --preset cuda: no gpu.cuda */
	model__init(&m);
	m.stage = MODEL_ANALYSED;
	p = model__to_json(&m);
	assert_null(th_jget(p, "gpu", "cuda", NULL));
	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_false(back.cuda.totals.present);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}

/* The evidence of findings of several kinds, written, loaded back and
 * written again: the same figures, the same JSON, each key of the type the
 * rule gave it (cpus an integer or a real, memory's unknowns null). */
static void test_evidence_round_trip(void **state)
{
	struct model m, back;
	struct model_evidence ev;
	struct model_recommendation r = { .title = "t", .description = "d", .current_value = "c",
					  .recommended_value = "3", .bottleneck = "cpu_oversubscribed" };
	json_t *p, *p2, *b, *e;

	(void)state;
	model__init(&m);
	/* a phase's share, with its hottest functions */
	model_evidence__init(&ev);
	ev.phase = model__intern(&m, "llm_inference");
	ev.percent_of_cycle = 62.5;
	ev.threshold_percent = 60;
	ev.total_ms = 0;
	ev.has_top_functions = true;
	ev.top_functions.v = calloc(2, sizeof(*ev.top_functions.v));
	ev.top_functions.n = ev.top_functions.cap = 2;
	ev.top_functions.v[0] = (struct model_ev_share){ model__intern(&m, "ggml_vec_dot"), NAN, 70 };
	ev.top_functions.v[1] = (struct model_ev_share){ model__intern(&m, "memcpy"), NAN, 30 };
	assert_int_equal(model__add_finding(&m, "llm_inference", "high", 62.5, &ev), 0);
	/* memory: peak unknown, written as null */
	model_evidence__init(&ev);
	ev.has_memory = true;
	ev.percent_of_ram = NAN;
	ev.mem_total_mb = 4096;
	ev.oom_kills = 1;
	assert_int_equal(model__add_finding(&m, "memory_pressure", "critical", NAN, &ev), 0);
	/* cpus as an integer, and as a real; the thread count's key of the two */
	model_evidence__init(&ev);
	ev.cpus = 4;
	ev.cpus_integer = true;
	ev.n_threads_used = 4;
	ev.scope = model__intern(&m, "cycles");
	assert_int_equal(model__add_finding(&m, "cpu_oversubscribed", "high", 40, &ev), 0);
	model_evidence__init(&ev);
	ev.cpus = 2;
	ev.runq_share_percent = 35;
	assert_int_equal(model__add_finding(&m, "cpu_contention", "high", 35, &ev), 0);
	/* blocked time by class and the heaviest stacks */
	model_evidence__init(&ev);
	ev.has_blocked_ms = true;
	ev.blocked_ms[BLOCKED_IO] = 12.5;
	ev.blocked_from = model__intern(&m, "scheduler");
	ev.has_top_stacks = true;
	ev.top_stacks.v = calloc(1, sizeof(*ev.top_stacks.v));
	ev.top_stacks.n = ev.top_stacks.cap = 1;
	ev.top_stacks.v[0] = (struct model_ev_share){ model__intern(&m, "exp;main;fsync"), 12.5, 100 };
	assert_int_equal(model__add_finding(&m, "io_wait", "medium", 20, &ev), 0);
	/* the GPU timeline's: device, top kernel, idle stack, copies */
	model_evidence__init(&ev);
	ev.from = model__intern(&m, "GPU timeline (CUPTI activity)");
	ev.device = 0;
	ev.has_top_kernel = true;
	ev.top_kernel = (struct model_ev_kernel){ model__intern(&m, "gemm"), 40, 3.5 };
	ev.has_top_idle_stack = true;
	ev.top_idle_stack = (struct model_ev_share){ model__intern(&m, "exp;tokenize"), 9, NAN };
	ev.has_copies = true;
	ev.copies[IT_GPU_DIR_HTOD] = (struct model_ev_copy){ 2, 1 << 20, 1.5 };
	assert_int_equal(model__add_finding(&m, "transfer_bound", "high", 40, &ev), 0);
	/* episodes: a throttling one with its temperature, a power cap's without */
	model_evidence__init(&ev);
	ev.has_episodes = true;
	ev.episodes.v = calloc(1, sizeof(*ev.episodes.v));
	ev.episodes.n = ev.episodes.cap = 1;
	ev.episodes.v[0] = (struct throttle_episode){ .source = "cpu", .zone = "x86_pkg_temp", .reason = "thermal",
						      .start_ns = 1000 * MS, .end_ns = 1500 * MS, .peak_temp_c = 97,
						      .min_clock_pct = 60 };
	ev.max_temp_c = 97;
	assert_int_equal(model__add_finding(&m, "thermal_throttling", "high", NAN, &ev), 0);
	model_evidence__init(&ev);
	ev.has_episodes = ev.episodes_capped = true;
	ev.episodes.v = calloc(1, sizeof(*ev.episodes.v));
	ev.episodes.n = ev.episodes.cap = 1;
	ev.episodes.v[0] = (struct throttle_episode){ .source = "gpu0", .reason = "sw_power_cap", .start_ns = 1000 * MS,
						      .end_ns = 1200 * MS, .peak_temp_c = NAN, .min_clock_pct = NAN };
	ev.capped_ms = 200;
	assert_int_equal(model__add_finding(&m, "power_capped", "medium", 10, &ev), 0);
	/* a recommendation with evidence, one without */
	model_evidence__init(&r.evidence);
	r.evidence.present = true;
	r.evidence.gpu_available = true;
	r.evidence.n_ctx = 4096;
	r.evidence.samples = 0;
	assert_int_equal(model__add_recommendation(&m, &r), 0);
	assert_int_equal(model__add_recommendation(&m, &r), 0); /* r.evidence taken: none */
	m.stage = MODEL_ANALYSED;

	p = model__to_json(&m);
	assert_non_null(p);
	b = json_object_get(p, "bottlenecks");
	assert_int_equal(json_array_size(b), 8);
	e = json_object_get(json_array_get(b, 0), "evidence");
	assert_string_equal(json_string_value(json_object_get(e, "phase")), "llm_inference");
	assert_true(json_is_real(json_object_get(e, "total_ms")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(e, "top_functions"), 0),
							      "function")), "ggml_vec_dot");
	assert_null(json_object_get(json_array_get(json_object_get(e, "top_functions"), 0), "ms"));
	assert_null(json_object_get(e, "peak_mb")); /* not memory's: left out */
	e = json_object_get(json_array_get(b, 1), "evidence");
	assert_true(json_is_null(json_object_get(e, "peak_mb")));
	assert_true(json_is_null(json_object_get(e, "percent_of_ram")));
	assert_true(json_is_integer(json_object_get(e, "oom_kills")));
	assert_null(json_object_get(e, "growth_mb_per_cycle"));
	e = json_object_get(json_array_get(b, 2), "evidence");
	assert_true(json_is_integer(json_object_get(e, "cpus")));
	assert_int_equal(json_integer_value(json_object_get(e, "n_threads_used")), 4);
	assert_null(json_object_get(e, "n_threads"));
	e = json_object_get(json_array_get(b, 3), "evidence");
	assert_true(json_is_real(json_object_get(e, "cpus")));
	e = json_object_get(json_array_get(b, 4), "evidence");
	assert_int_equal(json_object_size(json_object_get(e, "blocked_ms")), 1);
	assert_float_equal(th_jnum(th_jget(e, "blocked_ms", "io", NULL)), 12.5, EPS);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(e, "top_stacks"), 0), "stack")),
			    "exp;main;fsync");
	e = json_object_get(json_array_get(b, 5), "evidence");
	assert_true(json_is_integer(json_object_get(e, "device")));
	assert_true(json_is_integer(th_jget(e, "top_kernel", "count", NULL)));
	assert_null(th_jget(e, "top_idle_stack", "percent", NULL));
	assert_int_equal(json_object_size(json_object_get(e, "copies")), 1);
	assert_int_equal(json_integer_value(th_jget(e, "copies", "HtoD", "bytes", NULL)), 1 << 20);
	e = json_object_get(json_array_get(b, 6), "evidence");
	assert_float_equal(th_jnum(json_object_get(json_array_get(json_object_get(e, "episodes"), 0), "peak_temp_c")), 97, EPS);
	e = json_object_get(json_array_get(b, 7), "evidence");
	assert_null(json_object_get(json_array_get(json_object_get(e, "episodes"), 0), "peak_temp_c"));
	e = json_object_get(json_array_get(json_object_get(p, "recommendations"), 0), "evidence");
	assert_true(json_is_true(json_object_get(e, "gpu_available")));
	assert_true(json_is_integer(json_object_get(e, "samples")));
	assert_null(json_object_get(json_array_get(json_object_get(p, "recommendations"), 1), "evidence"));

	assert_int_equal(model__from_json(&back, p, "test"), 0);
	assert_int_equal(back.nfindings, m.nfindings);
	assert_int_equal(back.findings[0].evidence.top_functions.n, 2);
	assert_string_equal(model__name(&back, back.findings[0].evidence.top_functions.v[1].name), "memcpy");
	assert_num(back.findings[0].evidence.top_functions.v[1].percent, 30);
	assert_true(back.findings[1].evidence.has_memory);
	assert_num(back.findings[1].evidence.peak_mb, NAN);
	assert_int_equal(back.findings[1].evidence.oom_kills, 1);
	assert_true(back.findings[2].evidence.cpus_integer);
	assert_false(back.findings[3].evidence.cpus_integer);
	assert_num(back.findings[3].evidence.cpus, 2);
	assert_num(back.findings[4].evidence.blocked_ms[BLOCKED_IO], 12.5);
	assert_int_equal(back.findings[5].evidence.device, 0);
	assert_int_equal(back.findings[5].evidence.top_kernel.count, 40);
	assert_int_equal(back.findings[5].evidence.copies[IT_GPU_DIR_HTOD].count, 2);
	assert_int_equal(back.findings[6].evidence.episodes.n, 1);
	assert_false(back.findings[6].evidence.episodes_capped);
	assert_num(back.findings[6].evidence.episodes.v[0].peak_temp_c, 97);
	assert_true(back.findings[7].evidence.episodes_capped);
	assert_num(back.findings[7].evidence.episodes.v[0].peak_temp_c, NAN);
	assert_true(back.recs[0].evidence.present);
	assert_false(back.recs[1].evidence.present);
	p2 = model__to_json(&back);
	assert_true(json_equal(json_object_get(p, "bottlenecks"), json_object_get(p2, "bottlenecks")));
	assert_true(json_equal(json_object_get(p, "recommendations"), json_object_get(p2, "recommendations")));
	json_decref(p2);
	model__free(&back);
	json_decref(p);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_side_round_trip),
		cmocka_unit_test(test_flat_gpu),
		cmocka_unit_test(test_core_round_trip),
		cmocka_unit_test(test_sched_round_trip),
		cmocka_unit_test(test_network_crashes_round_trip),
		cmocka_unit_test(test_cuda_round_trip),
		cmocka_unit_test(test_evidence_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
