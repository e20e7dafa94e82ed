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

#include "concerns.h"
#include "infertrace.skel.h"
#include "power_mode.h"
#include "probes.h"
#include "sched.h"
#include "side_sampler.h"
#include "vec.h"

#define POWER_EVENTS_MAX 100000   /* kept for the timeline and per-cycle counts */
#define POWER_TIMELINE_MAX 512    /* written into profile.json */

/* in side_summary.h's SIDE_POWER_EVENTS order: their counts are kept by it */
static const struct {
	const char *category, *event;
	enum it_power_event_type type;
} power_tps[] = {
	{ "thermal", "thermal_temperature", IT_EV_THERMAL_TEMP },
	{ "thermal", "cdev_update", IT_EV_CDEV_UPDATE },
	{ "power", "cpu_frequency", IT_EV_CPU_FREQ },
	{ "power", "cpu_frequency_limits", IT_EV_CPU_FREQ_LIMITS },
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
	struct power_mode power_mode;   /* system.power, read as the run starts */
	bool power_read;
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

	power_mode__read(&ss->power_mode);
	ss->power_read = true;
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
	if (VEC_RESERVE(ss->ev, ss->capev, ss->nev, 256)) {
		ss->ev_dropped++;
		return;
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

/* A tracepoint record as thermal.kernel_events.timeline shows it. */
static void power_record(const struct it_power_event *e, uint64_t base_ns, struct side_power_record *r)
{
	size_t k = 0;

	while (k < NPOWER && power_tps[k].type != e->hdr.type)
		k++;
	*r = (struct side_power_record){ .t_s = e->hdr.ts_ns > base_ns ? (e->hdr.ts_ns - base_ns) / 1e9 : 0,
					 .id = e->id };
	snprintf(r->type, sizeof(r->type), "%s", k < NPOWER ? power_tps[k].event : "unknown");
	snprintf(r->name, sizeof(r->name), "%.*s", (int)sizeof(e->name), e->name);
	switch (e->hdr.type) {
	case IT_EV_THERMAL_TEMP:
		r->thermal = true;
		r->temp_c = e->value / 1000.0;
		r->prev_temp_c = e->value2 / 1000.0;
		break;
	case IT_EV_CDEV_UPDATE:
		r->cdev = true;
		r->state = e->value;
		break;
	case IT_EV_CPU_FREQ:
		r->has_cpu = r->freq = true;
		r->mhz = e->value / 1000.0;
		break;
	case IT_EV_CPU_FREQ_LIMITS:
		r->has_cpu = r->limits = true;
		r->min_mhz = e->value / 1000.0;
		r->max_mhz = e->value2 / 1000.0;
		break;
	}
}

#define VEC_PUSH(vec) \
	(VEC_RESERVE((vec).v, (vec).cap, (vec).n, 8) ? NULL : memset(&(vec).v[(vec).n++], 0, sizeof(*(vec).v)))

/* thermal.kernel_events: which tracepoints were attached, counts, and a
 * timeline of the first POWER_TIMELINE_MAX records. */
static int kernel_events(struct recording *rec, struct side_kernel_events *ke)
{
	struct side_state *ss = rec->side;

	ke->attached.n = ke->missing.n = ke->timeline.n = 0;
	ke->present = true;
	for (size_t i = 0; i < NPOWER; i++) {
		struct side_name *n = ss->have_tp[i] ? VEC_PUSH(ke->attached) : VEC_PUSH(ke->missing);

		if (!n)
			return -ENOMEM;
		snprintf(n->name, sizeof(n->name), "%s:%s", power_tps[i].category, power_tps[i].event);
		ke->counts.n[i] = ss->ev_count[i];
	}
	for (size_t i = 0; i < ss->nev && i < POWER_TIMELINE_MAX; i++) {
		struct side_power_record *r = VEC_PUSH(ke->timeline);

		if (!r)
			return -ENOMEM;
		power_record(&ss->ev[i], rec->start_ns, r);
	}
	ke->timeline_max_points = POWER_TIMELINE_MAX;
	ke->not_kept = ss->ev_dropped;
	return 0;
}

/* cycles[i].kernel_power: the tracepoint records inside the cycle, and the
 * lowest CPU frequency the kernel reported in it. */
static void annotate_cycle_events(struct side_state *ss, struct model_cycle *cycle, uint64_t start, uint64_t end)
{
	struct side_cycle_power *p = &cycle->kernel_power;

	side_cycle_power__init(p);
	for (size_t i = 0; i < ss->nev; i++) {
		const struct it_power_event *e = &ss->ev[i];

		if (e->hdr.ts_ns < start || e->hdr.ts_ns > end)
			continue;
		p->present = true;
		for (size_t k = 0; k < NPOWER; k++)
			if (power_tps[k].type == e->hdr.type)
				p->counts.n[k]++;
		if (e->hdr.type == IT_EV_CPU_FREQ && (isnan(p->min_cpu_mhz) || e->value / 1000.0 < p->min_cpu_mhz))
			p->min_cpu_mhz = e->value / 1000.0;
		if (e->hdr.type == IT_EV_THERMAL_TEMP && (isnan(p->max_temp_c) || e->value / 1000.0 > p->max_temp_c))
			p->max_temp_c = e->value / 1000.0;
	}
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
static void phase_energy(struct side_sampler *sm, struct model *m)
{
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		struct model_energy_phase *pe = &m->energy.phases[ph];
		uint64_t *iv = NULL, cur_s = 0, cur_e = 0;
		size_t n = 0;

		*pe = (struct model_energy_phase){ .measured_ms = 0 };
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			pe->j[d] = NAN;
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
					pe->intervals_measured++;
					pe->measured_ms += (cur_e - cur_s) / 1e6;
					for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
						if (!isnan(j[d]))
							pe->j[d] = (isnan(pe->j[d]) ? 0 : pe->j[d]) + j[d];
				} else {
					pe->intervals_left_out++;
				}
			}
			if (i < n) {
				cur_s = iv[2 * i];
				cur_e = iv[2 * i + 1];
			}
		}
		free(iv);
		pe->present = true;
	}
}

/* Energy per cycle (windows shorter than the sampling period left out),
 * summed over the cycles, per phase, and the sources. */
static void energy_collect(struct side_sampler *sm, struct model *m)
{
	struct model_energy_figures *ef = &m->energy;
	int tok = model__count_id(m, "tokens");
	double tokens = 0;
	bool any_tokens = false;
	size_t i;

	side_energy__free(&ef->side);
	ef->present = true;
	side_sampler__energy_summary(sm, &ef->side);
	ef->cycles_measured = ef->cycles_left_out = 0;
	ef->cycles = (struct model_energy){ .total_j = NAN, .tokens_per_joule = NAN };
	for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
		ef->cycles.j[d] = NAN;
	if (!ef->side.sources.n)
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
	phase_energy(sm, m);
}

/* The last two side periods (or the last sample): `top` and /metrics. */
static void side_now(struct side_state *ss, struct model *m, double period_s)
{
	uint64_t now = m->run.end_ns ? m->run.end_ns : recording__now_ns();
	struct side_window w;

	side_sampler__window(ss->sampler, now - (uint64_t)(2e9 * period_s), now, &w);
	m->side.now_temp_c = w.temp_max_c;
	m->side.now_cpu_mhz = w.cpu_mhz;
	m->side.now_gpu_util_pct = w.gpu.util_pct;
	m->side.now_gpu_temp_c = w.gpu.temp_c;
	m->side.now_gpu_mhz = w.gpu.sm_clock_mhz;
	m->side.now_gpu_power_w = w.gpu.power_w;
	side_window__free(&w);
}

/* Without CUPTI's kernel times, the driver's own utilization samples give
 * a cycle its GPU busy figure per device (the gpu concern's kernel times
 * take the cycle's place when they exist). */
static void nvml_busy(struct side_sampler *sp, struct model *m, struct model_cycle *c)
{
	int n = side_sampler__gpu_count(sp);

	if (c->gpu.present && !c->gpu.nvml_only)
		return;
	c->gpu.figures.n = 0;
	for (int g = 0; g < n; g++) {
		struct model_gpu_figures *f;
		double busy, covered;

		if (side_sampler__gpu_busy(sp, g, c->start_ns, c->end_ns, &busy, &covered) || covered <= 0)
			continue;
		if (VEC_RESERVE(c->gpu.figures.v, c->gpu.figures.cap, c->gpu.figures.n, 2))
			return;
		f = &c->gpu.figures.v[c->gpu.figures.n++];
		memset(f, 0, sizeof(*f));
		f->device = (uint32_t)g;
		f->window_ms = (c->end_ns - c->start_ns) / 1e6;
		f->covered_ms = covered;
		f->busy_ms = f->active_ms = busy;
		f->idle_ms = covered - busy;
		c->gpu.present = c->gpu.nvml_only = true;
		if (!m->gpu_activity.source)
			m->gpu_activity.source = "nvml";
		m->gpu_activity.present = true;
	}
}

static int side_collect(struct recording *rec, struct model *m)
{
	struct side_state *ss = rec->side;
	struct side_thermal *th = &m->side.run.thermal;

	if (!ss)
		return 0;
	if (ss->sampler) {
		side_summary__free(&m->side.run);
		side_sampler__summary(ss->sampler, &m->side.run);
		energy_collect(ss->sampler, m);
		side_series__free(&m->side.series);
		side_sampler__series(ss->sampler, &m->side.series);
	}
	if (ss->power_read) {
		power_mode__free(&m->run.system.power);
		if (power_mode__copy(&m->run.system.power, &ss->power_mode))
			return -ENOMEM;
		m->run.system.has_power = true;
	}
	kernel_events(rec, &th->kernel_events);
	if (ss->sampler)
		side_now(ss, m, rec->opts.side_period_s);
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		if (!c->end_ns)
			continue;
		if (ss->sampler) {
			side_window__free(&c->side);
			side_sampler__window(ss->sampler, c->start_ns, c->end_ns, &c->side);
			nvml_busy(ss->sampler, m, c);
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
	power_mode__free(&ss->power_mode);
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
