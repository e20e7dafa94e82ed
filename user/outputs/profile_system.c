// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's system: the machine, with the power mode that decides its
 * figures. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"
#include "profile.h"
#include "system_facts.h"

#define JF_T struct power_mode_count
JF_TABLE(power_count_table, JF(NULL, JF_KEY, value), JF(NULL, JF_U64, cpus));
#undef JF_T

#define JF_T struct power_mode
JF_TABLE(nvpmodel_table, JF("id", JF_INT, nvpmodel_id), JF("name", JF_CHARS, nvpmodel_name, .flags = JF_OMIT),
	 JF("source", JF_CHARS, nvpmodel_source));
JF_TABLE_PUBLIC(profile_power_table, JF("governor", JF_CHARS, governor, .flags = JF_OMIT),
	 JF("governor_by_cpus", JF_MAP, governor_by_cpus, .sub = &power_count_table, .flags = JF_OMIT),
	 JF("energy_performance_preference", JF_CHARS, epp, .flags = JF_OMIT),
	 JF("energy_performance_preference_by_cpus", JF_MAP, epp_by_cpus, .sub = &power_count_table, .flags = JF_OMIT),
	 JF("scaling_driver", JF_CHARS, driver, .flags = JF_OMIT),
	 JF("scaling_driver_by_cpus", JF_MAP, driver_by_cpus, .sub = &power_count_table, .flags = JF_OMIT),
	 JF_GROUP("nvpmodel", nvpmodel_table, JF_WHEN(has_nvpmodel)),
	 JF("emc_mhz", JF_REAL, emc_mhz, .flags = JF_OMIT), JF("emc_max_mhz", JF_REAL, emc_max_mhz, .flags = JF_OMIT),
	 JF("gpu_mhz", JF_REAL, gpu_mhz, .flags = JF_OMIT), JF("gpu_max_mhz", JF_REAL, gpu_max_mhz, .flags = JF_OMIT));
#undef JF_T

#define JF_T struct model_system
JF_TABLE(system_table, JF("kernel", JF_CHARS, kernel, .flags = JF_OMIT), JF("arch", JF_CHARS, arch, .flags = JF_OMIT),
	 JF("cpus", JF_INT, cpus), JF("cpu_model", JF_CHARS, cpu_model, .flags = JF_OMIT),
	 JF("machine_model", JF_CHARS, machine_model, .flags = JF_OMIT),
	 JF("mem_total_mb", JF_REAL, mem_total_mb), JF("hostname", JF_CHARS, hostname),
	 JF("power", JF_OBJ, power, .sub = &profile_power_table, JF_WHEN(has_power)));
#undef JF_T

/* a model that has none (built by hand) gets this machine's */
int profile_system__write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	struct model_system here = { .mem_total_mb = NAN };

	if (!m->run.system.present)
		system_facts__read(&here);
	return profile__set(o, key, jf_object(&system_table, m->run.system.present ? &m->run.system : &here, ctx));
}

int profile_system__read(void *base, const char *key, json_t *o, void *ctx)
{
	struct model_system *s = &((struct model *)base)->run.system;
	json_t *v = json_object_get(o, key);

	if (!json_is_object(v))
		return 0;
	power_mode__free(&s->power);
	if (jf_read(&system_table, s, v, ctx))
		return -ENOMEM;
	s->present = true;
	return 0;
}

json_t *profile__power_mode_json(const struct power_mode *p)
{
	return jf_object(&profile_power_table, p, NULL);
}
