// SPDX-License-Identifier: BSD-2-Clause
/* Self-cost concern: what the tracer itself costs, measured, for
 * profile.json's `self` and the report.
 *  - User space: getrusage(RUSAGE_SELF) of this process (all its threads):
 *    CPU seconds at start-up (open, load, attach) and while recording, peak
 *    RSS, and wake-ups (voluntary context switches: each time the tracer
 *    slept and was woken, by the ring buffer or its timers).
 *  - Kernel side: the time the BPF programs ran in the traced tasks'
 *    context, which no rusage of ours contains. The kernel counts it per
 *    program while a BPF_STATS_RUN_TIME descriptor is open (bpf_enable_stats;
 *    about two clock reads per program run). Counts are taken from when
 *    the other concerns have attached (each program's counts then are
 *    subtracted), so the probe calibration's own hits are not in them.
 * A kernel that refuses the stats leaves `bpf.available` false with why. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "memory_budget.h"
#include "syms.h"
#include "unwind.h"
#include "infertrace.skel.h"
#include "vec.h"

struct self_cost_state {
	struct rusage at_attach;   /* once every concern attached */
	uint64_t attach_ns;
	int stats_fd;              /* BPF_STATS_RUN_TIME; -1: not enabled */
	int stats_errno;
	bool stats_were_on;        /* kernel.bpf_stats_enabled was already 1 */
	/* each program's counts when ours were enabled: the statistics are
	 * system-wide, so another holder of them (kernel.bpf_stats_enabled, a
	 * second tracer) may have counted the probe calibration's hits */
	struct prog_base { __u64 runs, ns, misses; } *base;
	size_t nbase;
};

static bool prog_info(const struct bpf_program *prog, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_program__fd(prog);

	memset(info, 0, sizeof(*info));
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, info, &len);
}

static double cpu_s(const struct rusage *r)
{
	return r->ru_utime.tv_sec + r->ru_utime.tv_usec / 1e6 + r->ru_stime.tv_sec + r->ru_stime.tv_usec / 1e6;
}

static bool sysctl_on(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v != 0;
}

static int self_cost_configure(struct recording *rec)
{
	rec->self_cost = calloc(1, sizeof(*rec->self_cost));
	if (!rec->self_cost)
		return -ENOMEM;
	rec->self_cost->stats_fd = -1;
	return 0;
}

static int self_cost_attach(struct recording *rec)
{
	struct self_cost_state *s = rec->self_cost;

	s->stats_were_on = sysctl_on("/proc/sys/kernel/bpf_stats_enabled");
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (s->stats_fd < 0)
		s->stats_errno = errno;
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, rec->tracer.skel->obj)
		n++;
	s->base = calloc(n ? n : 1, sizeof(*s->base));
	s->nbase = s->base ? n : 0;
	n = 0;
	bpf_object__for_each_program(prog, rec->tracer.skel->obj) {
		struct bpf_prog_info info;

		if (n < s->nbase && prog_info(prog, &info))
			s->base[n] = (struct prog_base){ info.run_cnt, info.run_time_ns, info.recursion_misses };
		n++;
	}
	getrusage(RUSAGE_SELF, &s->at_attach);
	s->attach_ns = recording__now_ns();
	return 0; /* a cost we cannot measure never stops a recording */
}

/* The BPF programs' run counts and times, one per loaded program that
 * ran, most expensive first. */
static int bpf_programs(struct recording *rec, struct model_self *self)
{
	struct bpf_program *prog;
	size_t n = 0;

	bpf_object__for_each_program(prog, rec->tracer.skel->obj) {
		const struct self_cost_state *s = rec->self_cost;
		struct bpf_prog_info info;
		struct model_bpf_prog p;
		size_t i = 0;

		/* not loaded (its concern was not asked for): no info */
		if (!prog_info(prog, &info)) {
			n++;
			continue;
		}
		if (n < s->nbase) {
			info.run_cnt -= s->base[n].runs;
			info.run_time_ns -= s->base[n].ns;
			info.recursion_misses -= s->base[n].misses;
		}
		n++;
		if (!info.run_cnt)
			continue;
		self->bpf.cpu_s += info.run_time_ns / 1e9;
		self->bpf.runs += info.run_cnt;
		self->bpf.recursion_misses += info.recursion_misses;
		/* verified_insns: how close the program came to the verifier's
		 * 1M-instruction limit in this configuration */
		p = (struct model_bpf_prog){ .runs = info.run_cnt, .run_time_ms = info.run_time_ns / 1e6,
					     .ns_per_run = (double)info.run_time_ns / info.run_cnt,
					     .recursion_misses = info.recursion_misses,
					     .verified_insns = info.verified_insns };
		snprintf(p.name, sizeof(p.name), "%s", bpf_program__name(prog));
		if (VEC_RESERVE(self->bpf.programs.v, self->bpf.programs.cap, self->bpf.programs.n, 32))
			return -ENOMEM;
		/* insertion by run time: a few dozen programs at most */
		while (i < self->bpf.programs.n && self->bpf.programs.v[i].run_time_ms >= p.run_time_ms)
			i++;
		memmove(&self->bpf.programs.v[i + 1], &self->bpf.programs.v[i],
			(self->bpf.programs.n - i) * sizeof(p));
		self->bpf.programs.v[i] = p;
		self->bpf.programs.n++;
	}
	return 0;
}

static int bpf_figures(struct recording *rec, double recording_s, struct model_self *self)
{
	struct self_cost_state *s = rec->self_cost;
	double ns;

	if (s->stats_fd < 0) {
		snprintf(self->bpf.reason, sizeof(self->bpf.reason),
			 "the kernel refused BPF run-time statistics (bpf_enable_stats): %s", strerror(s->stats_errno));
		return 0;
	}
	self->bpf.available = true;
	self->bpf.stats_were_on = s->stats_were_on;
	if (bpf_programs(rec, self))
		return -ENOMEM;
	ns = self->bpf.cpu_s * 1e9;
	self->bpf.percent_of_one_cpu = recording_s > 0 ? 100.0 * ns / 1e9 / recording_s : 0.0;
	return 0;
}

/* Where the tracer's CPU went, by part, over the whole run up to now
 * (start-up included): each part timed on the tracer's own thread clock
 * where it runs. "other" is the rest of cpu_s: loading and attaching the
 * programs, reading ring buffers and maps, the concerns' own work. */
static void parts_figures(struct recording *rec, struct model_self *self)
{
	const struct syms_stats *y = rec->syms ? syms_cache__stats(rec->syms) : NULL;
	const struct unwind_stats *u = rec->unwinder ? unwinder__stats(rec->unwinder) : NULL;
	double modules = u ? u->rebuild_ns / 1e9 : 0, other;

	self->has_parts = true;
	self->parts.maps_s = y ? y->capture_ns / 1e9 : 0;
	self->parts.files_s = y ? y->file_ns / 1e9 : 0;
	self->parts.symbol_tables_s = y ? y->symtab_ns / 1e9 : 0;
	self->parts.unwind_modules_s = modules;
	self->parts.unwind_s = u ? u->cpu_ns / 1e9 - modules : 0;
	other = self->cpu_s - self->parts.maps_s - self->parts.files_s - self->parts.symbol_tables_s - modules -
		self->parts.unwind_s;
	self->parts.other_s = other > 0 ? other : 0.0;
	self->parts.maps_reads = y ? y->captures : 0;
	self->parts.maps_reads_skipped = y ? y->captures_skipped : 0;
	self->parts.files = y ? y->files : 0;
	self->parts.symbol_tables = y ? y->symtabs : 0;
	self->parts.symbols = y ? y->symtab_syms : 0;
	self->parts.unwind_module_sets = u ? u->rebuilds : 0;
	self->parts.unwind_modules = u ? u->modules : 0;
}

/* The symbol cache across runs (symcache.h): where, or why not. */
static void symbol_cache_figures(struct recording *rec, struct model_self *self)
{
	const struct syms_stats *y = rec->syms ? syms_cache__stats(rec->syms) : NULL;
	const char *why = NULL, *dir = rec->syms ? syms_cache__symcache(rec->syms, &why) : NULL;

	self->has_symbol_cache = true;
	snprintf(self->symbol_cache.dir, sizeof(self->symbol_cache.dir), "%s", dir ? dir : "");
	snprintf(self->symbol_cache.refused, sizeof(self->symbol_cache.refused), "%s", why ? why : "");
	self->symbol_cache.tables_read = y ? y->symtabs_cached : 0;
	self->symbol_cache.tables_written = y ? y->symtabs_stored : 0;
}

static int self_cost_collect(struct recording *rec, struct model *m)
{
	struct self_cost_state *s = rec->self_cost;
	struct model_self *self = &m->self;
	struct rusage now;

	if (!s || !s->attach_ns)
		return 0;
	getrusage(RUSAGE_SELF, &now);
	double recording_s = (recording__now_ns() - s->attach_ns) / 1e9;
	double startup = cpu_s(&s->at_attach); /* since the process started */
	double during = cpu_s(&now) - cpu_s(&s->at_attach);

	free(self->bpf.programs.v);
	*self = (struct model_self){
		.present = true,
		.cpu_s = cpu_s(&now),
		.startup_cpu_s = startup,
		.recording_cpu_s = during,
		.collect_cpu_s = rec->build_cpu_s > 0 && cpu_s(&now) > rec->build_cpu_s ? cpu_s(&now) - rec->build_cpu_s : 0.0,
		.percent_of_one_cpu = recording_s > 0 ? 100.0 * during / recording_s : 0.0,
		.max_rss_mb = now.ru_maxrss / 1024.0,
		.wakeups_per_s = recording_s > 0 ? (now.ru_nvcsw - s->at_attach.ru_nvcsw) / recording_s : 0.0,
		.wakeups = now.ru_nvcsw - s->at_attach.ru_nvcsw,
		.involuntary_switches = now.ru_nivcsw - s->at_attach.ru_nivcsw,
		.target_stops = rec->target_stops,
		.target_stopped_ms = rec->target_stopped_ns / 1e6,
		.target_stop_max_ms = rec->target_stop_max_ns / 1e6,
		.has_budget = true,
		.probe_cost_ns_per_hit = NAN,
	};
	memory_budget__figures(rec, &self->memory_budget.max_mb, &self->memory_budget.reached_at_s,
			       &self->memory_budget.times_reached, &self->memory_budget.recording_peak_rss_mb);
	parts_figures(rec, self);
	symbol_cache_figures(rec, self);
	return bpf_figures(rec, recording_s, self);
}

static void self_cost_cleanup(struct recording *rec)
{
	if (!rec->self_cost)
		return;
	if (rec->self_cost->stats_fd >= 0)
		close(rec->self_cost->stats_fd);
	free(rec->self_cost->base);
	free(rec->self_cost);
	rec->self_cost = NULL;
}

const struct concern self_cost_concern = {
	.name = "self_cost",
	.configure = self_cost_configure,
	.attach = self_cost_attach,
	.collect = self_cost_collect,
	.cleanup = self_cost_cleanup,
};
