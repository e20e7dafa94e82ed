// SPDX-License-Identifier: BSD-2-Clause
/* Energy sources (counter wraps, integrals, windows), powercap discovery and
 * the power mode on fixture trees, and the power alert and power_capped
 * rule on models: values known by construction. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../fixtures/sysfs_fixture.h"
#include "energy.h"
#include "model.h"
#include "power_mode.h"
#include "profile.h"
#include "rules.h"

#define MS 1000000ULL

static void test_counter_delta_wraps(void **state)
{
	bool w;

	(void)state;
	assert_int_equal(energy_counter_delta(100, 250, 1000, &w), 150);
	assert_false(w);
	/* 900 -> wrap at 1000 -> 50: 100 + 50 */
	assert_int_equal(energy_counter_delta(900, 50, 1000, &w), 150);
	assert_true(w);
	assert_int_equal(energy_counter_delta(1000, 0, 1000, &w), 0);
	assert_true(w);
}

/* A 25 W counter in µJ read every 20 ms over 2 s, wrapping every 0.3 s:
 * the total is 50 J however often it wraps, and any window's energy is its
 * length times 25 W. */
static void test_counter_series_through_wraps(void **state)
{
	struct energy_source e = { .unit_j = 1e-6, .max_range = 7500000, .limit_w = NAN, .last_w = NAN };
	uint64_t t0 = 1000 * MS;

	(void)state;
	for (int i = 0; i <= 100; i++) {
		uint64_t ts = t0 + i * 20 * MS;
		uint64_t raw = (uint64_t)(123 + 25e6 * (i * 0.02)) % e.max_range;

		energy_source__counter(&e, raw, ts);
		assert_int_equal(energy_source__record(&e, ts), 0);
	}
	assert_true(e.wraps >= 6);
	assert_float_equal(e.joules, 50.0, 1e-6);
	assert_float_equal(energy_source__total_at(&e, t0 + 1010 * MS) - energy_source__total_at(&e, t0 + 260 * MS),
			   25.0 * 0.75, 1e-6);
	assert_float_equal(energy_source__recent_w(&e, 200 * MS), 25.0, 1e-6);
	assert_true(isnan(energy_source__total_at(&e, t0 - 1)));
	assert_true(isnan(energy_source__total_at(&e, t0 + 2001 * MS)));
	energy_source__free(&e);
}

/* Reads 1 s apart, then 30 ms apart (the energy-only reads): each window's
 * resolution is the gap of the reads around its ends, and the period the
 * source was read at is the median gap. */
static void test_read_gaps(void **state)
{
	struct energy_source e = { .unit_j = 1e-6, .limit_w = NAN, .last_w = NAN };
	uint64_t ts = 1000 * MS;

	(void)state;
	assert_true(isnan(energy_source__median_gap_ms(&e)));
	for (int i = 0; i < 3; i++, ts += 1000 * MS) {
		energy_source__counter(&e, ts / 1000 * 10, ts);
		assert_int_equal(energy_source__record(&e, ts), 0);
	}
	for (int i = 0; i < 10; i++, ts += 30 * MS) {
		energy_source__counter(&e, ts / 1000 * 10, ts);
		assert_int_equal(energy_source__record(&e, ts), 0);
	}
	/* reads at 1, 2, 3 s, then 4, 4.03 ... 4.27 s */
	assert_float_equal(energy_source__gap_at(&e, 1500 * MS), 1000 * MS, 1e-3);
	assert_float_equal(energy_source__gap_at(&e, 4100 * MS), 30 * MS, 1e-3);
	assert_float_equal(energy_source__gap_at(&e, 4030 * MS), 30 * MS, 1e-3);
	assert_true(isnan(energy_source__gap_at(&e, 999 * MS)));
	assert_true(isnan(energy_source__gap_at(&e, 4271 * MS)));
	assert_float_equal(energy_source__median_gap_ms(&e), 30, 1e-9); /* 12 gaps: 9 of 30 ms */
	energy_source__free(&e);
}

/* Trapezoids: 10 W for 1 s then 20 W for 1 s (a step between samples). */
static void test_integral_of_power(void **state)
{
	struct energy_source e = { .limit_w = NAN, .last_w = NAN };

	(void)state;
	for (int i = 0; i <= 20; i++) {
		energy_source__power(&e, i <= 10 ? 10.0 : 20.0, i * 100 * MS);
		energy_source__record(&e, i * 100 * MS);
	}
	energy_source__power(&e, NAN, 2100 * MS); /* a failed read: counted, nothing added */
	assert_int_equal(e.read_errors, 1);
	assert_float_equal(e.joules, 10.0 + 1.5 + 18.0, 1e-9);
	energy_source__free(&e);
}

static void test_domains(void **state)
{
	(void)state;
	assert_int_equal(energy_powercap_domain("package-0"), ENERGY_CPU);
	assert_int_equal(energy_powercap_domain("dram"), ENERGY_DRAM);
	assert_int_equal(energy_powercap_domain("psys"), ENERGY_BOARD);
	assert_int_equal(energy_powercap_domain("core"), ENERGY_OTHER);
	assert_int_equal(energy_rail_domain("VDD_IN"), ENERGY_BOARD);
	assert_int_equal(energy_rail_domain("POM_5V_IN"), ENERGY_BOARD);
	assert_int_equal(energy_rail_domain("VIN_SYS_5V0"), ENERGY_BOARD);
	assert_int_equal(energy_rail_domain("POM_5V_GPU"), ENERGY_GPU);
	assert_int_equal(energy_rail_domain("VDD_GPU_SOC"), ENERGY_GPU);
	assert_int_equal(energy_rail_domain("VDD_CPU_CV"), ENERGY_CPU);
	assert_int_equal(energy_rail_domain("VDD_CPU_GPU_CV"), ENERGY_OTHER);
	assert_int_equal(energy_rail_domain("VDD_SOC"), ENERGY_OTHER);
	assert_string_equal(energy_domain_name(ENERGY_DRAM), "dram");
}

static void test_powercap_discovery(void **state)
{
	char *root = fx_root_new(), why[256];
	struct energy_source *v = NULL;
	int n = 0;
	size_t cap = 0;

	(void)state;
	setenv("INFERTRACE_SYSFS_ROOT", root, 1);
	assert_int_equal(energy_discover_powercap(&v, &n, &cap, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "no powercap"));
	fx_write(root, "sys/class/powercap/intel-rapl/enabled", "1"); /* the control type: no counter */
	fx_write(root, "sys/class/powercap/intel-rapl:0/name", "package-0");
	fx_write(root, "sys/class/powercap/intel-rapl:0/energy_uj", "1234");
	fx_write(root, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850");
	fx_write(root, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw", "15000000");
	fx_write(root, "sys/class/powercap/intel-rapl:0:0/name", "dram");
	fx_write(root, "sys/class/powercap/intel-rapl:0:0/energy_uj", "99");
	fx_write(root, "sys/class/powercap/intel-rapl-mmio:0/name", "package-0");
	fx_write(root, "sys/class/powercap/intel-rapl-mmio:0/energy_uj", "1");
	assert_int_equal(energy_discover_powercap(&v, &n, &cap, why, sizeof(why)), 2);
	assert_string_equal(v[0].name, "intel-rapl:0:package-0");
	assert_int_equal(v[0].domain, ENERGY_CPU);
	assert_int_equal(v[0].kind, ENERGY_COUNTER);
	assert_true(v[0].max_range == 262143328850ULL);
	assert_float_equal(v[0].limit_w, 15.0, 1e-9);
	assert_int_equal(v[1].domain, ENERGY_DRAM);
	assert_true(isnan(v[1].limit_w));
	free(v);
	fx_rm(root);
	free(root);
	unsetenv("INFERTRACE_SYSFS_ROOT");
}

static void test_power_mode(void **state)
{
	char *root = fx_root_new(), line[200];
	struct power_mode pa, pb;
	json_t *a, *b;

	(void)state;
	setenv("INFERTRACE_SYSFS_ROOT", root, 1);
	fx_write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave");
	fx_write(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance");
	fx_write(root, "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "powersave");
	for (int c = 0; c < 3; c++) {
		char p[128];

		snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%d/cpufreq/energy_performance_preference", c);
		fx_write(root, p, "balance_power");
	}
	assert_int_equal(power_mode__read(&pa), 0);
	a = profile__power_mode_json(&pa); /* as profile.json shows it */
	assert_string_equal(json_string_value(json_object_get(a, "governor")), "mixed");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "governor_by_cpus"), "powersave")), 2);
	assert_string_equal(json_string_value(json_object_get(a, "energy_performance_preference")), "balance_power");
	assert_null(json_object_get(a, "nvpmodel"));
	fx_write(root, "var/lib/nvpmodel/status", "pmode:0001 fmode:cool");
	fx_write(root, "etc/nvpmodel.conf", "< POWER_MODEL ID=0 NAME=MAXN >\n< POWER_MODEL ID=1 NAME=MODE_10W >");
	assert_int_equal(power_mode__read(&pb), 0);
	b = profile__power_mode_json(&pb);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "nvpmodel"), "id")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(b, "nvpmodel"), "name")), "MODE_10W");
	power_mode__describe(&pb, line, sizeof(line));
	assert_string_equal(line, "nvpmodel 1 (MODE_10W), governor mixed, epp balance_power");
	assert_true(power_mode__differs(&pa, &pb));
	assert_false(power_mode__differs(&pb, &pb));
	json_decref(a);
	json_decref(b);
	power_mode__free(&pa);
	power_mode__free(&pb);
	fx_rm(root);
	free(root);
	unsetenv("INFERTRACE_SYSFS_ROOT");
}

/* A derived model whose energy figures are set by hand. */
static void energy_model(struct model *m, double peak_w, double capped_ms)
{
	model__init(m);
	m->stage = MODEL_DERIVED;
	m->agg.cycles_ms = 1000;
	m->energy.present = true;
	m->energy.side.peak_w = peak_w;
	m->energy.side.capped_ms = capped_ms;
	m->energy.side.capped.v = calloc(1, sizeof(*m->energy.side.capped.v));
	m->energy.side.capped.n = m->energy.side.capped.cap = 1;
	snprintf(m->energy.side.capped.v[0].source, sizeof(m->energy.side.capped.v[0].source), "cpu");
}

/* The model's alerts as profile.json shows them (the last one kept, to free). */
static json_t *alerts_json;

static json_t *alerts_of(const struct model *m)
{
	json_decref(alerts_json);
	return alerts_json = model__section_json(m, "alerts");
}

static int count_type(json_t *arr, const char *type)
{
	json_t *v;
	size_t i;
	int n = 0;

	json_array_foreach(arr, i, v)
		n += !strcmp(json_string_value(json_object_get(v, "type")), type);
	return n;
}

static void test_power_alert_and_cap_rule(void **state)
{
	struct rule_thresholds t;
	struct model m;

	(void)state;
	rule_thresholds__defaults(&t);
	assert_float_equal(t.power_mw, 1000, 0);
	energy_model(&m, 12.5, 300);
	assert_int_equal(rules__evaluate(&m, &t), 0);
	assert_int_equal(count_type(alerts_of(&m), "power"), 1);
	assert_float_equal(json_real_value(json_object_get(json_array_get(alerts_of(&m), 0), "value_mw")), 12500, 1e-6);
	assert_int_equal(m.nfindings, 1);
	assert_string_equal(m.findings[0].type, "power_capped");
	assert_float_equal(m.findings[0].percentage_of_cycle, 30, 1e-9);
	/* evaluated again (a snapshot, `report`): the alert is replaced, not repeated */
	assert_int_equal(rules__evaluate(&m, &t), 0);
	assert_int_equal(count_type(alerts_of(&m), "power"), 1);
	model__free(&m);

	assert_int_equal(rule_thresholds__set(&t, "power_mw", 20000), 0);
	energy_model(&m, 12.5, 30); /* 3%: below the 5% threshold */
	assert_int_equal(rules__evaluate(&m, &t), 0);
	assert_int_equal(count_type(alerts_of(&m), "power"), 0);
	assert_int_equal(m.nfindings, 0);
	model__free(&m);

	energy_model(&m, NAN, NAN); /* nothing measured: no alert, no finding */
	assert_int_equal(rules__evaluate(&m, &t), 0);
	assert_int_equal(json_array_size(alerts_of(&m)), 0);
	assert_int_equal(m.nfindings, 0);
	model__free(&m);
	json_decref(alerts_json);
	alerts_json = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_delta_wraps),
		cmocka_unit_test(test_counter_series_through_wraps),
		cmocka_unit_test(test_integral_of_power),
		cmocka_unit_test(test_read_gaps),
		cmocka_unit_test(test_domains),
		cmocka_unit_test(test_powercap_discovery),
		cmocka_unit_test(test_power_mode),
		cmocka_unit_test(test_power_alert_and_cap_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
