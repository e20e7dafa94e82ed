// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's self: the tracer's own cost, with the probes' measured
 * cost per hit. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "json_num.h"
#include "model.h"
#include "profile_tables.h"

#define JF_T struct model_bpf_prog
JF_TABLE(bpf_prog_table, JF("name", JF_CHARS, name), JF("runs", JF_U64, runs),
	 JF("run_time_ms", JF_REAL, run_time_ms, .flags = JF_OMIT), JF("ns_per_run", JF_REAL, ns_per_run, .flags = JF_OMIT),
	 JF("recursion_misses", JF_U64, recursion_misses), JF("verified_insns", JF_U64, verified_insns));
#undef JF_T

static int probe_cost_write(const void *base, const char *key, json_t *o, const void *ctx)
{
	const struct model *m = base;
	double v = m->probe_cost.present && isfinite(m->probe_cost.cost_ns) ? m->probe_cost.cost_ns :
		   m->self.probe_cost_ns_per_hit;

	(void)ctx;
	return isfinite(v) ? profile__set(o, key, json_real(v)) : 0;
}

static int probe_cost_read(void *base, const char *key, json_t *o, void *ctx)
{
	(void)ctx;
	((struct model *)base)->self.probe_cost_ns_per_hit = json_num(o, key);
	return 0;
}

#define JF_T struct model
JF_TABLE(parts_table, JF("maps_s", JF_REAL, self.parts.maps_s), JF("files_s", JF_REAL, self.parts.files_s),
	 JF("symbol_tables_s", JF_REAL, self.parts.symbol_tables_s),
	 JF("unwind_modules_s", JF_REAL, self.parts.unwind_modules_s), JF("unwind_s", JF_REAL, self.parts.unwind_s),
	 JF("other_s", JF_REAL, self.parts.other_s), JF("maps_reads", JF_U64, self.parts.maps_reads),
	 JF("maps_reads_skipped", JF_U64, self.parts.maps_reads_skipped), JF("files", JF_U64, self.parts.files),
	 JF("symbol_tables", JF_U64, self.parts.symbol_tables), JF("symbols", JF_U64, self.parts.symbols),
	 JF("unwind_module_sets", JF_U64, self.parts.unwind_module_sets),
	 JF("unwind_modules", JF_U64, self.parts.unwind_modules));
JF_TABLE(symbol_cache_table, JF("dir", JF_CHARS, self.symbol_cache.dir, .flags = JF_NULL),
	 JF("refused", JF_CHARS, self.symbol_cache.refused, .flags = JF_NULL),
	 JF("tables_read", JF_U64, self.symbol_cache.tables_read),
	 JF("tables_written", JF_U64, self.symbol_cache.tables_written));
JF_TABLE(bpf_table, JF("available", JF_BOOL, self.bpf.available),
	 JF("reason", JF_CHARS, self.bpf.reason, .flags = JF_OMIT),
	 JF("cpu_s", JF_REAL, self.bpf.cpu_s, .flags = JF_OMIT, JF_WHEN(self.bpf.available)),
	 JF("percent_of_one_cpu", JF_REAL, self.bpf.percent_of_one_cpu, .flags = JF_OMIT, JF_WHEN(self.bpf.available)),
	 JF("runs", JF_U64, self.bpf.runs, JF_WHEN(self.bpf.available)),
	 JF("recursion_misses", JF_U64, self.bpf.recursion_misses, JF_WHEN(self.bpf.available)),
	 JF("stats_were_on", JF_BOOL, self.bpf.stats_were_on, JF_WHEN(self.bpf.available)),
	 JF("programs", JF_VEC, self.bpf.programs, .sub = &bpf_prog_table, JF_WHEN(self.bpf.available)));
JF_TABLE(budget_table, JF("max_mb", JF_INT, self.memory_budget.max_mb),
	 JF("reached_at_s", JF_REAL, self.memory_budget.reached_at_s),
	 JF("times_reached", JF_U64, self.memory_budget.times_reached),
	 JF("recording_peak_rss_mb", JF_REAL, self.memory_budget.recording_peak_rss_mb, .flags = JF_OMIT));
JF_TABLE_PUBLIC(profile_self_table, JF("cpu_s", JF_REAL, self.cpu_s, .flags = JF_OMIT),
	 JF("startup_cpu_s", JF_REAL, self.startup_cpu_s, .flags = JF_OMIT),
	 JF("recording_cpu_s", JF_REAL, self.recording_cpu_s, .flags = JF_OMIT),
	 JF("collect_cpu_s", JF_REAL, self.collect_cpu_s, .flags = JF_OMIT),
	 JF("percent_of_one_cpu", JF_REAL, self.percent_of_one_cpu, .flags = JF_OMIT),
	 JF("max_rss_mb", JF_REAL, self.max_rss_mb, .flags = JF_OMIT),
	 JF("wakeups_per_s", JF_REAL, self.wakeups_per_s, .flags = JF_OMIT), JF("wakeups", JF_U64, self.wakeups),
	 JF("involuntary_switches", JF_U64, self.involuntary_switches), JF("target_stops", JF_U64, self.target_stops),
	 JF("target_stopped_ms", JF_REAL, self.target_stopped_ms, .flags = JF_OMIT),
	 JF("target_stop_max_ms", JF_REAL, self.target_stop_max_ms, .flags = JF_OMIT), JF_GROUP("bpf", bpf_table),
	 JF_GROUP("memory_budget", budget_table, JF_WHEN(self.has_budget)),
	 JF_GROUP("parts", parts_table, JF_WHEN(self.has_parts)),
	 JF_GROUP("symbol_cache", symbol_cache_table, JF_WHEN(self.has_symbol_cache)),
	 JF_FNS("probe_cost_ns_per_hit", probe_cost_write, probe_cost_read));
#undef JF_T
