// SPDX-License-Identifier: BSD-2-Clause
/* Side-data concern: runs the side sampler (user/side_sampler.c: thermal
 * zones, cpufreq, hwmon, MemAvailable, CPU load, disk free space, NVML or
 * Jetson GPU) beside the run once the targets are known, attaches the
 * thermal/power tracepoints (bpf/side.bpf.c) where this kernel has them,
 * and writes `thermal`, `gpu`, `disk`, `host` and each cycle's averages. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "json_num.h"
#include "concerns.h"
#include "infertrace.skel.h"
#include "power_mode.h"
#include "probes.h"
#include "sched.h"
#include "side_sampler.h"

#define POWER_EVENTS_MAX 100000   /* kept for the timeline and per-cycle counts */
#define POWER_TIMELINE_MAX 512    /* written into profile.json */

static const struct {
	const char *category, *event, *key;
	enum it_power_event_type type;
} power_tps[] = {
	{ "thermal", "thermal_temperature", "thermal_temperature", IT_EV_THERMAL_TEMP },
	{ "thermal", "cdev_update", "cdev_update", IT_EV_CDEV_UPDATE },
	{ "power", "cpu_frequency", "cpu_frequency", IT_EV_CPU_FREQ },
	{ "power", "cpu_frequency_limits", "cpu_frequency_limits", IT_EV_CPU_FREQ_LIMITS },
};
#define NPOWER (sizeof(power_tps) / sizeof(power_tps[0]))

struct side_state {
	struct side_sampler *sampler;
	enum side_gpu_mode gpu;
	bool notice_printed;
	size_t pids_added;              /* rec->procs entries handed to the sampler */
	bool have_tp[NPOWER];
	struct it_power_event *ev;      /* tracepoint records, in arrival order */
	size_t nev, capev;
	uint64_t ev_dropped;            /* beyond POWER_EVENTS_MAX */
	uint64_t ev_count[NPOWER];
	char cwd[PATH_MAX], outdir[PATH_MAX];
	json_t *power_mode;             /* system.power, read as the run starts */
	/* the cycles' pace for the energy reads: cycles seen since pace_t0 */
	uint64_t pace_t0, start_ns;
	size_t pace_n0;
	bool paced;
};

static struct bpf_program *power_prog(struct infertrace_bpf *s, size_t i)
{
	struct bpf_program *progs[NPOWER] = {
		s->progs.power_thermal_temperature, s->progs.power_cdev_update,
		s->progs.power_cpu_frequency, s->progs.power_cpu_frequency_limits,
	};

	return progs[i];
}

static int side_configure(struct recording *rec)
{
	struct side_state *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return -ENOMEM;
	rec->side = ss;
	if (side_gpu_mode_parse(rec->opts.gpu_mode, &ss->gpu)) {
		fprintf(stderr, "infertrace: --gpu: expected auto, nvml, jetson or none\n");
		return -EINVAL;
	}
	for (size_t i = 0; i < NPOWER; i++) {
		ss->have_tp[i] = tracer__have_tracepoint(power_tps[i].category, power_tps[i].event);
		if (!ss->have_tp[i])
			bpf_program__set_autoload(power_prog(rec->tracer.skel, i), false);
	}
	return 0;
}

/* The working directory the target writes relative paths into. */
static void target_cwd(struct recording *rec, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	out[0] = 0;
	if (rec->opts.npids) {
		snprintf(link, sizeof(link), "/proc/%d/cwd", rec->opts.pids[0]);
		n = readlink(link, out, len - 1);
		if (n > 0)
			out[n] = 0;
		return;
	}
	if (!getcwd(out, len))
		out[0] = 0; /* a launched command inherits ours */
}

static void add_new_pids(struct recording *rec)
{
	struct side_state *ss = rec->side;

	for (; ss->pids_added < rec->procs.n; ss->pids_added++)
		side_sampler__add_pid(ss->sampler, rec->procs.procs[ss->pids_added].pid);
}

static void print_notice_once(struct side_state *ss)
{
	const char *notice;

	if (ss->notice_printed || !ss->sampler)
		return;
	notice = side_sampler__gpu_notice(ss->sampler);
	if (notice) {
		fprintf(stderr, "infertrace: %s\n", notice);
		ss->notice_printed = true;
	}
}

static int side_attach(struct recording *rec)
{
	struct side_state *ss = rec->side;
	struct infertrace_bpf *s = rec->tracer.skel;
	const char *disks[2];
	pid_t pids[MAX_ROOT_PIDS];
	int ndisks = 0, npids = 0;

	for (size_t i = 0; i < NPOWER; i++) {
		if (!ss->have_tp[i])
			continue;
		int err = tracer__attach_program(&rec->tracer, power_prog(s, i));

		if (err) {
			/* side data never stops a recording */
			fprintf(stderr, "infertrace: warning: attaching %s:%s failed: %s\n", power_tps[i].category,
				power_tps[i].event, strerror(-err));
			ss->have_tp[i] = false;
		}
	}
	if (realpath(rec->opts.output_dir, ss->outdir))
		disks[ndisks++] = ss->outdir;
	target_cwd(rec, ss->cwd, sizeof(ss->cwd));
	if (ss->cwd[0] && (!ndisks || strcmp(ss->cwd, ss->outdir)))
		disks[ndisks++] = ss->cwd;
	for (size_t i = 0; i < rec->procs.n && npids < MAX_ROOT_PIDS; i++)
		pids[npids++] = rec->procs.procs[i].pid;
	ss->pids_added = rec->procs.n;

	struct side_config cfg = {
		.period_ms = (unsigned int)(rec->opts.side_period_s * 1000 + 0.5),
		.gpu = ss->gpu,
		.pids = pids,
		.npids = npids,
		.disk_paths = disks,
		.ndisk_paths = ndisks,
	};

	ss->power_mode = power_mode__json();
	ss->sampler = side_sampler__start(&cfg);
	if (!ss->sampler)
		fprintf(stderr, "infertrace: warning: side data sampler not started: %s; no thermal, GPU or "
			"disk data\n", strerror(errno));
	return 0;
}

static void side_on_event(struct recording *rec, const void *data, size_t size)
{
	struct side_state *ss = rec->side;
	const struct it_event_header *h = data;

	if (h->type < IT_EV_THERMAL_TEMP || h->type > IT_EV_CPU_FREQ_LIMITS)
		return;
	if (!ss || size < sizeof(struct it_power_event))
		return;
	for (size_t i = 0; i < NPOWER; i++)
		if (power_tps[i].type == h->type)
			ss->ev_count[i]++;
	if (ss->nev >= POWER_EVENTS_MAX || !recording__may_hold(rec)) {
		ss->ev_dropped++;
		return;
	}
	if (ss->nev == ss->capev) {
		size_t cap = ss->capev ? ss->capev * 2 : 256;
		struct it_power_event *v = realloc(ss->ev, cap * sizeof(*v));

		if (!v) {
			ss->ev_dropped++;
			return;
		}
		ss->ev = v;
		ss->capev = cap;
	}
	memcpy(&ss->ev[ss->nev++], data, sizeof(struct it_power_event));
}

/* Energy counters read at 1/5 of the cycles' mean period over the last
 * ~10 s (side_sampler__energy_pace); at the side period once 5 s passed
 * without a cycle. */
static void pace_energy(struct recording *rec, struct side_state *ss)
{
	uint64_t now = recording__now_ns();
	size_t n = probes__cycles_seen(rec);

	if (!ss->start_ns)
		ss->start_ns = now;
	if (!n) {
		if (!ss->paced && now - ss->start_ns > 5000000000ULL) {
			side_sampler__energy_pace(ss->sampler, UINT64_MAX / 2);
			ss->paced = true;
		}
		return;
	}
	if (!ss->pace_t0) {
		ss->pace_t0 = now;
		ss->pace_n0 = n;
		return;
	}
	if (n > ss->pace_n0 + 1 || (n > ss->pace_n0 && now - ss->pace_t0 > 2000000000ULL)) {
		side_sampler__energy_pace(ss->sampler, (now - ss->pace_t0) / (n - ss->pace_n0));
		ss->paced = true;
	}
	if (now - ss->pace_t0 > 10000000000ULL) { /* follow a pace that changes */
		ss->pace_t0 = now;
		ss->pace_n0 = n;
	}
}

static void side_tick(struct recording *rec)
{
	struct side_state *ss = rec->side;

	if (!ss || !ss->sampler)
		return;
	pace_energy(rec, ss);
	add_new_pids(rec);
	print_notice_once(ss);
	side_sampler__set_hold(ss->sampler, recording__may_hold(rec));
}

static const char *power_key(uint32_t type)
{
	for (size_t i = 0; i < NPOWER; i++)
		if (power_tps[i].type == type)
			return power_tps[i].key;
	return "unknown";
}

static json_t *power_event_json(const struct it_power_event *e, uint64_t base_ns)
{
	json_t *o = json_object();

	json_object_set_new(o, "t_s", json_real(e->hdr.ts_ns > base_ns ? (e->hdr.ts_ns - base_ns) / 1e9 : 0));
	json_object_set_new(o, "type", json_string(power_key(e->hdr.type)));
	switch (e->hdr.type) {
	case IT_EV_THERMAL_TEMP:
		json_object_set_new(o, "zone", json_string(e->name));
		json_object_set_new(o, "zone_id", json_integer(e->id));
		json_object_set_new(o, "temp_c", json_real(e->value / 1000.0));
		json_object_set_new(o, "prev_temp_c", json_real(e->value2 / 1000.0));
		break;
	case IT_EV_CDEV_UPDATE:
		json_object_set_new(o, "cdev", json_string(e->name));
		json_object_set_new(o, "state", json_integer(e->value));
		break;
	case IT_EV_CPU_FREQ:
		json_object_set_new(o, "cpu", json_integer(e->id));
		json_object_set_new(o, "mhz", json_real(e->value / 1000.0));
		break;
	case IT_EV_CPU_FREQ_LIMITS:
		json_object_set_new(o, "cpu", json_integer(e->id));
		json_object_set_new(o, "min_mhz", json_real(e->value / 1000.0));
		json_object_set_new(o, "max_mhz", json_real(e->value2 / 1000.0));
		break;
	}
	return o;
}

/* thermal.kernel_events: which tracepoints were attached, counts, and a
 * timeline of the first POWER_TIMELINE_MAX records. */
static json_t *kernel_events_json(struct recording *rec)
{
	struct side_state *ss = rec->side;
	json_t *o = json_object(), *att = json_array(), *missing = json_array(), *counts = json_object();
	json_t *tl = json_array();

	for (size_t i = 0; i < NPOWER; i++) {
		char name[96];

		snprintf(name, sizeof(name), "%s:%s", power_tps[i].category, power_tps[i].event);
		json_array_append_new(ss->have_tp[i] ? att : missing, json_string(name));
		json_object_set_new(counts, power_tps[i].key, json_integer(ss->ev_count[i]));
	}
	for (size_t i = 0; i < ss->nev && i < POWER_TIMELINE_MAX; i++)
		json_array_append_new(tl, power_event_json(&ss->ev[i], rec->start_ns));
	json_object_set_new(o, "attached", att);
	json_object_set_new(o, "missing", missing);
	json_object_set_new(o, "counts", counts);
	json_object_set_new(o, "timeline", tl);
	json_object_set_new(o, "timeline_max_points", json_integer(POWER_TIMELINE_MAX));
	json_object_set_new(o, "not_kept", json_integer(ss->ev_dropped));
	return o;
}

/* cycles[i].kernel_power: the tracepoint records inside the cycle, and the
 * lowest CPU frequency the kernel reported in it. */
static void annotate_cycle_events(struct side_state *ss, struct model_cycle *cycle, uint64_t start, uint64_t end)
{
	uint64_t n[NPOWER] = {};
	double min_mhz = -1, max_temp = -1e9;
	bool any = false;

	for (size_t i = 0; i < ss->nev; i++) {
		const struct it_power_event *e = &ss->ev[i];

		if (e->hdr.ts_ns < start || e->hdr.ts_ns > end)
			continue;
		any = true;
		for (size_t k = 0; k < NPOWER; k++)
			if (power_tps[k].type == e->hdr.type)
				n[k]++;
		if (e->hdr.type == IT_EV_CPU_FREQ && (min_mhz < 0 || e->value / 1000.0 < min_mhz))
			min_mhz = e->value / 1000.0;
		if (e->hdr.type == IT_EV_THERMAL_TEMP && e->value / 1000.0 > max_temp)
			max_temp = e->value / 1000.0;
	}
	if (!any)
		return;
	json_t *o = json_object();

	for (size_t k = 0; k < NPOWER; k++)
		if (n[k])
			json_object_set_new(o, power_tps[k].key, json_integer(n[k]));
	if (min_mhz >= 0)
		json_object_set_new(o, "min_cpu_mhz", json_real(min_mhz));
	if (max_temp > -1e9)
		json_object_set_new(o, "max_temp_c", json_real(max_temp));
	model__cycle_detail(cycle, "kernel_power", o);
}

static void side_stop(struct recording *rec)
{
	struct side_state *ss = rec->side;

	if (ss && ss->sampler) {
		side_sampler__stop(ss->sampler);
		print_notice_once(ss);
	}
}

/* Board power when a board rail measures it, else what the parts add up to. */
static double energy_total(const struct model_energy *e)
{
	double t = 0;
	bool any = false;

	if (!isnan(e->j[MODEL_EN_BOARD]))
		return e->j[MODEL_EN_BOARD];
	for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
		if (d != MODEL_EN_BOARD && !isnan(e->j[d])) {
			t += e->j[d];
			any = true;
		}
	return any ? t : NAN;
}

static int cmp_u64_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* energy.phases: each phase's calls merged over threads into intervals;
 * those of at least one sampling period are measured, shorter ones left
 * out and counted. */
static json_t *phase_energy_json(struct side_sampler *sm, const struct model *m)
{
	json_t *o = json_object();

	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		uint64_t *iv = NULL, cur_s = 0, cur_e = 0, left = 0, measured = 0;
		double sum[MODEL_EN_NDOMAINS] = { 0 }, ms = 0;
		bool have[MODEL_EN_NDOMAINS] = { false };
		size_t n = 0;
		json_t *po;

		if (!m->phase_names[ph])
			continue;
		for (size_t i = 0; i < m->ncalls; i++)
			n += m->calls[i].phase == (uint32_t)ph && m->calls[i].exit_ns > m->calls[i].entry_ns;
		if (!n || !(iv = malloc(2 * n * sizeof(*iv))))
			continue;
		n = 0;
		for (size_t i = 0; i < m->ncalls; i++)
			if (m->calls[i].phase == (uint32_t)ph && m->calls[i].exit_ns > m->calls[i].entry_ns) {
				iv[2 * n] = m->calls[i].entry_ns;
				iv[2 * n++ + 1] = m->calls[i].exit_ns;
			}
		qsort(iv, n, 2 * sizeof(*iv), cmp_u64_pair);
		for (size_t i = 0; i <= n; i++) {
			double j[MODEL_EN_NDOMAINS];

			if (i < n && cur_e && iv[2 * i] <= cur_e) {
				if (iv[2 * i + 1] > cur_e)
					cur_e = iv[2 * i + 1];
				continue;
			}
			if (cur_e) {
				if (!side_sampler__energy(sm, cur_s, cur_e, j)) {
					measured++;
					ms += (cur_e - cur_s) / 1e6;
					for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
						if (!isnan(j[d])) {
							sum[d] += j[d];
							have[d] = true;
						}
				} else {
					left++;
				}
			}
			if (i < n) {
				cur_s = iv[2 * i];
				cur_e = iv[2 * i + 1];
			}
		}
		free(iv);
		po = json_object();
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			if (have[d])
				json_object_set_new(po, model_energy_keys[d], json_real(sum[d]));
		json_object_set_new(po, "intervals_measured", json_integer(measured));
		json_object_set_new(po, "intervals_left_out", json_integer(left));
		json_object_set_new(po, "measured_ms", json_real(ms));
		json_object_set_new(o, m->phase_names[ph], po);
	}
	return o;
}

/* Energy per cycle (windows shorter than the sampling period left out),
 * summed over the cycles, per phase, and the sources. */
static void energy_collect(struct side_sampler *sm, struct model *m)
{
	struct model_energy_figures *ef = &m->energy;
	int tok = model__count_id(m, "tokens");
	double tokens = 0;
	bool any_tokens = false;
	json_t *run, *v;
	size_t i;

	json_decref(ef->detail);
	ef->detail = side_sampler__energy_json(sm);
	run = json_object_get(ef->detail, "run");
	ef->resolution_ms = json_num(ef->detail, "resolution_ms");
	ef->peak_w = json_num(run, "peak_w");
	ef->capped_ms = json_num(json_object_get(ef->detail, "power_capped"), "capped_ms");
	ef->root_only = false;
	json_array_foreach(json_object_get(ef->detail, "sources"), i, v)
		ef->root_only |= json_is_true(json_object_get(v, "root_only"));
	ef->cycles_measured = ef->cycles_left_out = 0;
	ef->cycles = (struct model_energy){ .total_j = NAN, .tokens_per_joule = NAN };
	for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
		ef->cycles.j[d] = NAN;
	if (!json_array_size(json_object_get(ef->detail, "sources")))
		return;
	for (i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct model_energy *e = &c->energy;

		*e = (struct model_energy){ .total_j = NAN, .tokens_per_joule = NAN };
		if (!c->end_ns || side_sampler__energy(sm, c->start_ns, c->end_ns, e->j)) {
			for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
				e->j[d] = NAN;
			ef->cycles_left_out++;
			continue;
		}
		e->present = true;
		e->total_j = energy_total(e);
		if (tok > 0 && c->has_count[tok] && e->total_j > 0) {
			e->tokens_per_joule = c->counts[tok] / e->total_j;
			tokens += c->counts[tok];
			any_tokens = true;
		}
		ef->cycles_measured++;
		ef->cycles.present = true;
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			if (!isnan(e->j[d]))
				ef->cycles.j[d] = (isnan(ef->cycles.j[d]) ? 0 : ef->cycles.j[d]) + e->j[d];
	}
	ef->cycles.total_j = energy_total(&ef->cycles);
	if (any_tokens && ef->cycles.total_j > 0)
		ef->cycles.tokens_per_joule = tokens / ef->cycles.total_j;
	json_object_set_new(ef->detail, "phases", phase_energy_json(sm, m));
}

/* The last two side periods (or the last sample): `top` and /metrics. */
static void side_now(struct side_state *ss, struct model *m, double period_s)
{
	uint64_t now = m->run.end_ns ? m->run.end_ns : recording__now_ns();
	json_t *d = side_sampler__cycle_json(ss->sampler, now - (uint64_t)(2e9 * period_s), now);
	json_t *gpu = json_object_get(d, "gpu");

	m->side.now_temp_c = json_num(d, "temp_max_c");
	m->side.now_cpu_mhz = json_num(d, "cpu_mhz");
	m->side.now_gpu_util_pct = json_num(gpu, "util_pct");
	m->side.now_gpu_temp_c = json_num(gpu, "temp_c");
	m->side.now_gpu_mhz = json_num(gpu, "sm_clock_mhz");
	m->side.now_gpu_power_w = json_num(gpu, "power_w");
	json_decref(d);
}

static int side_collect(struct recording *rec, struct model *m)
{
	struct side_state *ss = rec->side;
	json_t *thermal, *gpu;
	int pid = m->nprocs ? m->procs[0].pid : 0;

	if (!ss)
		return 0;
	if (ss->sampler) {
		json_t *sum = side_sampler__summary_json(ss->sampler);

		model__set_section(m, MODEL_SEC_GPU, json_incref(json_object_get(sum, "gpu")));
		model__set_section(m, MODEL_SEC_DISK, json_incref(json_object_get(sum, "disk")));
		model__set_section(m, MODEL_SEC_HOST, json_incref(json_object_get(sum, "host")));
		model__set_section(m, MODEL_SEC_THERMAL, json_incref(json_object_get(sum, "thermal")));
		json_decref(sum);
		energy_collect(ss->sampler, m);
		json_decref(m->trace_counters);
		m->trace_counters = json_array();
		side_sampler__trace_counters(ss->sampler, m->trace_counters, pid, m->run.start_ns);
	}
	if (ss->power_mode && json_is_object(m->run.system))
		json_object_set(m->run.system, "power", ss->power_mode);
	thermal = model__section(m, MODEL_SEC_THERMAL);
	if (!json_is_object(thermal)) {
		thermal = json_object();
		model__set_section(m, MODEL_SEC_THERMAL, thermal);
	}
	json_object_set_new(thermal, "kernel_events", kernel_events_json(rec));
	m->side.throttled = json_is_true(json_object_get(thermal, "throttled"));
	m->side.max_temp_c = json_num(thermal, "max_temp_c");
	gpu = model__section(m, MODEL_SEC_GPU);
	m->side.gpu_available = json_is_true(json_object_get(gpu, "available"));
	m->side.gpu_util_avg_pct = json_num(json_object_get(gpu, "util_pct"), "avg");
	if (ss->sampler)
		side_now(ss, m, rec->opts.side_period_s);
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		if (!c->end_ns)
			continue;
		if (ss->sampler) {
			json_t *d = side_sampler__cycle_json(ss->sampler, c->start_ns, c->end_ns), *v;
			const char *k;

			json_object_foreach(d, k, v)
				model__cycle_detail(c, k, json_incref(v));
			json_decref(d);
		}
		annotate_cycle_events(ss, c, c->start_ns, c->end_ns);
	}
	if (ss->ev_dropped)
		model__add_lost(m, "power_events_not_kept", ss->ev_dropped);
	if (ss->sampler && side_sampler__rows_not_kept(ss->sampler))
		model__add_lost(m, "side_samples_not_kept", side_sampler__rows_not_kept(ss->sampler));
	return 0;
}

static void side_cleanup(struct recording *rec)
{
	struct side_state *ss = rec->side;

	if (!ss)
		return;
	side_sampler__free(ss->sampler);
	json_decref(ss->power_mode);
	free(ss->ev);
	free(ss);
	rec->side = NULL;
}

const struct concern side_concern = {
	.name = "side",
	.configure = side_configure,
	.attach = side_attach,
	.on_event = side_on_event,
	.tick = side_tick,
	.collect = side_collect,
	.stop = side_stop,
	.cleanup = side_cleanup,
};
