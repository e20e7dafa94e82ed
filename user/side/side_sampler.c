// SPDX-License-Identifier: BSD-2-Clause
/* The side-data sampler thread: see side_sampler.h. Longer than 600 lines:
 * the sampler thread, its ring of samples and the per-cycle and summary
 * reductions share the ring's locking. */
#include "side_sampler.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "energy.h"
#include "gpu_jetson.h"
#include "gpu_nvml.h"
#include "gpu_busy.h"
#include "sysfs_readers.h"
#include "throttle.h"
#include "vec.h"

#define MAX_GPUS 16
#define MAX_PIDMEM 256
#define PCAP_WINDOW_NS 200000000ULL
#define GPU_CAP_MIN_BUSY_PCT 50.0 /* a GPU power cap counts only when the GPU is at least this busy */

/* the external columns of one NVML device, in this order */
static const enum side_metric nvml_cols[] = {
	SM_GPU_UTIL_PCT, SM_GPU_MEM_UTIL_PCT, SM_GPU_MEM_USED_MB, SM_GPU_MEM_TOTAL_MB,
	SM_GPU_TEMP_C, SM_GPU_POWER_W, SM_GPU_SM_MHZ, SM_GPU_MEM_MHZ, SM_GPU_MAX_MHZ,
	SM_GPU_REASONS, SM_GPU_PROC_MEM_MB,
};
#define NVML_NCOLS ((int)(sizeof(nvml_cols) / sizeof(nvml_cols[0])))

struct pid_mem {
	int gpu;
	pid_t pid;
	double max_mb;
};

struct side_sampler {
	/* configuration, owned copies */
	unsigned int period_ms;
	enum side_gpu_mode gpu_mode;
	double temp_threshold_c, clock_drop_pct, disk_alert_pct;
	char **disk_paths;
	int ndisk;

	pthread_t thread;
	bool thread_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop_req;
	bool hold_off;                /* --max-memory reached: rows not kept */

	/* set by the thread's discovery; read-only once ready is true */
	bool ready;
	struct channels ch;
	struct gpu_nvml *nvml;
	struct gpu_jetson *jetson;
	const char *gpu_source;       /* "nvml", "jetson" or NULL */
	int ngpu;
	char gpu_name[MAX_GPUS][96];
	int nvml_base[MAX_GPUS];      /* first external column of each NVML device */
	char gpu_reason[384];
	char notice[448];
	int *cpu_cur_col, *cpu_max_col, ncpu_pairs;
	struct energy_source *en;     /* updated under mu */
	size_t capen;
	int nen;
	char en_missing[ENERGY_NDOMAINS][256];

	/* under mu */
	pid_t *pids;
	size_t cappids;
	int npids;
	int npidmem;
	struct pid_mem pidmem[MAX_PIDMEM];
	uint64_t reasons_seen[MAX_GPUS];
	uint64_t *ts;
	double *rows;
	size_t nrows, caprows;
	uint64_t rows_not_kept;       /* while hold_off */
	struct throttle_tracker *thr;
	struct throttle_tracker *pcap; /* power-cap episodes */
	double peak_w;                 /* highest total power over one interval */
	/* energy counters read alone between rows, this often (0: only with
	 * the rows): a cycle shorter than the side period still has reads
	 * around its edges. Set from the cycles' pace (side_sampler__energy_pace). */
	uint64_t en_period_ns;
	/* NVML's own utilization samples, per device, under mu */
	struct gpu_busy_series busy[MAX_GPUS];
	char busy_why[160];           /* why the driver gave none; "" when it did */
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

int side_gpu_mode_parse(const char *s, enum side_gpu_mode *out)
{
	static const char *const names[] = { "auto", "nvml", "jetson", "none" };

	if (!s) {
		*out = SIDE_GPU_AUTO;
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i]) == 0) {
			*out = (enum side_gpu_mode)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- discovery (sampler thread) ---- */

static int col_of(const struct side_sampler *s, enum side_metric m, int index);

static void discover_gpu(struct side_sampler *s)
{
	char nvml_why[192] = "", jetson_why[192] = "";

	if (s->gpu_mode == SIDE_GPU_NONE) {
		snprintf(s->gpu_reason, sizeof(s->gpu_reason), "GPU sampling turned off (--gpu none)");
		return;
	}
	if (s->gpu_mode == SIDE_GPU_AUTO || s->gpu_mode == SIDE_GPU_NVML)
		s->nvml = gpu_nvml__open(nvml_why, sizeof(nvml_why));
	if (!s->nvml && (s->gpu_mode == SIDE_GPU_AUTO || s->gpu_mode == SIDE_GPU_JETSON))
		s->jetson = gpu_jetson__probe(jetson_why, sizeof(jetson_why));

	if (s->nvml) {
		s->gpu_source = "nvml";
		for (int i = 0; i < gpu_nvml__count(s->nvml) && i < MAX_GPUS; i++) {
			char name[16];

			snprintf(name, sizeof(name), "gpu%d", i);
			sysfs_copy(s->gpu_name[i], sizeof(s->gpu_name[i]), gpu_nvml__name(s->nvml, i));
			s->nvml_base[i] = s->ch.n;
			for (int k = 0; k < NVML_NCOLS; k++)
				channels__add(&s->ch, nvml_cols[k], CR_EXTERNAL, i, 1.0, name, NULL, NULL);
			s->ngpu++;
		}
	} else if (s->jetson) {
		s->gpu_source = "jetson";
		sysfs_copy(s->gpu_name[0], sizeof(s->gpu_name[0]), gpu_jetson__name(s->jetson));
		gpu_jetson__add_channels(s->jetson, &s->ch);
		s->ngpu = 1;
	} else if (s->gpu_mode == SIDE_GPU_NVML) {
		sysfs_copy(s->gpu_reason, sizeof(s->gpu_reason), nvml_why);
	} else if (s->gpu_mode == SIDE_GPU_JETSON) {
		sysfs_copy(s->gpu_reason, sizeof(s->gpu_reason), jetson_why);
	} else {
		sysfs_fmt(s->gpu_reason, sizeof(s->gpu_reason), "%s; %s", nvml_why, jetson_why);
	}
	if (!s->gpu_source)
		sysfs_fmt(s->notice, sizeof(s->notice), "GPU data unavailable: %s", s->gpu_reason);
}

static void pair_cpu_columns(struct side_sampler *s)
{
	int n = channels__count_metric(&s->ch, SM_CPU_MHZ);

	s->cpu_cur_col = calloc(n ? n : 1, sizeof(int));
	s->cpu_max_col = calloc(n ? n : 1, sizeof(int));
	if (!s->cpu_cur_col || !s->cpu_max_col)
		return;
	for (int i = 0; i < s->ch.n; i++) {
		if (s->ch.v[i].metric != SM_CPU_MHZ)
			continue;
		for (int k = 0; k < s->ch.n; k++)
			if (s->ch.v[k].metric == SM_CPU_MAX_MHZ && s->ch.v[k].index == s->ch.v[i].index) {
				s->cpu_cur_col[s->ncpu_pairs] = i;
				s->cpu_max_col[s->ncpu_pairs++] = k;
				break;
			}
	}
}

/* Counters first (powercap, NVML energy), then integrals of the power
 * columns (NVML power where no counter, Jetson rails); a domain nothing
 * measures gets its reason. */
static void discover_energy(struct side_sampler *s)
{
	char why[256] = "", gwhy[192];
	bool have[ENERGY_NDOMAINS + 1] = { false };
	struct energy_source *e;
	int n0;

	energy_discover_powercap(&s->en, &s->nen, &s->capen, why, sizeof(why));
	for (int d = 0; d < ENERGY_NDOMAINS; d++)
		sysfs_copy(s->en_missing[d], sizeof(s->en_missing[d]), why);
	for (int g = 0; s->nvml && g < s->ngpu; g++) {
		unsigned long long mj;
		int pc = col_of(s, SM_GPU_POWER_W, g);

		gwhy[0] = 0;
		if (!gpu_nvml__energy_mj(s->nvml, g, &mj, gwhy, sizeof(gwhy))) {
			if (!(e = energy_add(&s->en, &s->nen, &s->capen)))
				break;
			e->kind = ENERGY_COUNTER;
			e->via = ENERGY_VIA_NVML;
			e->unit_j = 1e-3;
			e->gpu = g;
		} else if (pc >= 0) {
			if (!(e = energy_add(&s->en, &s->nen, &s->capen)))
				break;
			e->kind = ENERGY_INTEGRAL;
			e->via = ENERGY_VIA_COLUMN;
			e->power_col = pc;
		} else {
			continue;
		}
		e->domain = ENERGY_GPU;
		snprintf(e->name, sizeof(e->name), "gpu%d", g);
	}
	n0 = s->nen;
	for (int i = 0; i < s->ch.n; i++) {
		if (s->ch.v[i].metric != SM_RAIL_POWER_W || !(e = energy_add(&s->en, &s->nen, &s->capen)))
			continue;
		sysfs_copy(e->name, sizeof(e->name), s->ch.v[i].name);
		e->domain = energy_rail_domain(e->name);
		e->kind = ENERGY_INTEGRAL;
		e->via = ENERGY_VIA_COLUMN;
		e->power_col = i;
	}
	for (int i = 0; i < s->nen; i++)
		have[s->en[i].domain] = true;
	if (!s->gpu_source)
		sysfs_fmt(s->en_missing[ENERGY_GPU], sizeof(s->en_missing[ENERGY_GPU]), "%s", s->gpu_reason);
	else if (!have[ENERGY_GPU])
		sysfs_fmt(s->en_missing[ENERGY_GPU], sizeof(s->en_missing[ENERGY_GPU]),
			  "the %s GPU has neither an energy counter nor a power reading", s->gpu_source);
	if (!have[ENERGY_BOARD])
		sysfs_fmt(s->en_missing[ENERGY_BOARD], sizeof(s->en_missing[ENERGY_BOARD]),
			  "no board input rail (Jetson INA3221 VDD_IN/POM_5V_IN) or RAPL psys zone%s%s",
			  why[0] ? "; " : "", why);
	if (!have[ENERGY_CPU] && s->nen > n0)
		sysfs_fmt(s->en_missing[ENERGY_CPU], sizeof(s->en_missing[ENERGY_CPU]),
			  "no CPU rail among the power rails%s%s", why[0] ? "; " : "", why);
	for (int d = 0; d < ENERGY_NDOMAINS; d++)
		if (have[d])
			s->en_missing[d][0] = 0;
}

static void discover(struct side_sampler *s)
{
	sysfs_discover_thermal(&s->ch);
	sysfs_discover_cpufreq(&s->ch);
	sysfs_discover_hwmon(&s->ch);
	jetson_discover_rails(&s->ch);
	sysfs_discover_meminfo(&s->ch);
	sysfs_discover_cpuload(&s->ch);
	for (int i = 0; i < s->ndisk; i++)
		sysfs_add_disk(&s->ch, s->disk_paths[i]);
	discover_gpu(s);
	discover_energy(s);
	pair_cpu_columns(s);
}

/* ---- sampling (sampler thread) ---- */

static int col_of(const struct side_sampler *s, enum side_metric m, int index)
{
	for (int i = 0; i < s->ch.n; i++)
		if (s->ch.v[i].metric == m && s->ch.v[i].index == index)
			return i;
	return -1;
}

static double at(const double *row, int col)
{
	return col < 0 ? NAN : row[col];
}

static void note_pid_mem(struct side_sampler *s, int gpu, const struct gpu_proc_mem *p)
{
	if (isnan(p->used_mb))
		return;
	for (int i = 0; i < s->npidmem; i++)
		if (s->pidmem[i].gpu == gpu && s->pidmem[i].pid == p->pid) {
			if (p->used_mb > s->pidmem[i].max_mb)
				s->pidmem[i].max_mb = p->used_mb;
			return;
		}
	if (s->npidmem < MAX_PIDMEM)
		s->pidmem[s->npidmem++] = (struct pid_mem){ gpu, p->pid, p->used_mb };
}

/* The fastest CPU's clock in % of its maximum: idle cores sit at low
 * clocks without being throttled. NAN without cpufreq. */
static double cpu_best_clock_pct(const struct side_sampler *s, const double *row)
{
	double best = NAN;

	for (int i = 0; i < s->ncpu_pairs; i++) {
		double cur = row[s->cpu_cur_col[i]], max = row[s->cpu_max_col[i]];

		if (!isnan(cur) && !isnan(max) && max > 0 && (isnan(best) || 100.0 * cur / max > best))
			best = 100.0 * cur / max;
	}
	return best;
}

/* Feeds every energy source this row's readings; the running totals go
 * into the row. A power cap is a clock drop while power sits at the limit:
 * a RAPL package at >= 95% of its long-term limit with the fastest CPU below
 * (100 - drop)% of its maximum, or an NVML GPU whose driver reports a power
 * cap (software cap or hardware brake) with its clock below its maximum.
 * Called with mu held. */
/* Reads each counter dated by the clock around its own read: a thread
 * preempted in the middle of a row would otherwise misdate it by the delay
 * (on a busy machine, tens of ms). A read that took longer than 1 ms is
 * tried again (three times at most). Only discovery-time fields are read
 * here, outside mu; ok[i] is false where the read failed. */
static void read_counters(struct side_sampler *s, uint64_t *raw, uint64_t *rts, bool *ok)
{
	for (int i = 0; i < s->nen; i++) {
		struct energy_source *e = &s->en[i];

		ok[i] = false;
		for (int tries = 0; tries < 3 && e->via != ENERGY_VIA_COLUMN; tries++) {
			uint64_t t0 = now_ns(), t1;
			long long v;
			unsigned long long mj;

			if (e->via == ENERGY_VIA_POWERCAP && !sysfs_read_ll(e->path, &v) && v >= 0) {
				raw[i] = (uint64_t)v;
				ok[i] = true;
			} else if (e->via == ENERGY_VIA_NVML && !gpu_nvml__energy_mj(s->nvml, e->gpu, &mj, NULL, 0)) {
				raw[i] = mj;
				ok[i] = true;
			}
			t1 = now_ns();
			rts[i] = t0 + (t1 - t0) / 2;
			if (!ok[i] || t1 - t0 <= 1000000)
				break;
		}
	}
}

/* A GPU power cap that costs time: the driver reports a software power cap
 * or hardware power brake while the GPU is busy and its clock dropped. The
 * driver sets sw_power_cap at low load too (an H200 a few percent busy,
 * its clock at idle): that alone is no cap, as for the CPU a clock below
 * its maximum counts only with power at its limit. */
static bool gpu_power_capped(const struct side_sampler *s, double rs, double busy, double clk, double max)
{
	return !isnan(rs) && ((uint64_t)rs & (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE)) &&
	       !isnan(busy) && busy >= GPU_CAP_MIN_BUSY_PCT && !isnan(clk) && !isnan(max) &&
	       clk < max * (1.0 - s->clock_drop_pct / 100.0);
}

/* Mean power over the side period ending at t, from the series; the last
 * interval's before a full period was read. */
static double period_w(const struct side_sampler *s, const struct energy_source *e, uint64_t t)
{
	uint64_t p = (uint64_t)s->period_ms * 1000000ULL;
	double a = t > p ? energy_source__total_at(e, t - p) : NAN, b = energy_source__total_at(e, t);

	return isnan(a) || isnan(b) ? e->last_w : (b - a) / (p / 1e9);
}

static void update_energy(struct side_sampler *s, uint64_t ts, uint64_t read_end, double *row, const uint64_t *raw,
			  const uint64_t *rts, const bool *ok)
{
	double dom_w[ENERGY_NDOMAINS + 1] = { 0 }, total;
	bool dom_have[ENERGY_NDOMAINS + 1] = { false };
	double cpu_pct = cpu_best_clock_pct(s, row);
	char reason[128];

	for (int i = 0; i < s->nen; i++) {
		struct energy_source *e = &s->en[i];

		if (e->via == ENERGY_VIA_COLUMN) {
			energy_source__power(e, row[e->power_col], ts);
			energy_source__record(e, ts);
		} else if (ok[i]) {
			energy_source__counter(e, raw[i], rts[i]);
			energy_source__record(e, rts[i]);
		} else {
			e->read_errors++;
		}
		/* over one side period, though counters are read more often */
		double w = period_w(s, e, e->via == ENERGY_VIA_COLUMN ? ts : rts[i]);

		if (!isnan(w)) {
			dom_w[e->domain] += w;
			dom_have[e->domain] = true;
		}
		if (e->via == ENERGY_VIA_POWERCAP && e->domain == ENERGY_CPU && isfinite(e->limit_w) &&
		    !isnan(cpu_pct)) {
			/* RAPL enforces its limit over a time window; read power over >= 200 ms */
			double w = energy_source__recent_w(e, PCAP_WINDOW_NS);

			if (isnan(w))
				continue;
			snprintf(reason, sizeof(reason), "power at %.0f%% of the %.1f W limit with clock below %.0f%% of max",
				 100.0 * w / e->limit_w, e->limit_w, 100.0 - s->clock_drop_pct);
			throttle_tracker__observe(s->pcap, "cpu", ts, read_end,
						  w >= 0.95 * e->limit_w && cpu_pct < 100.0 - s->clock_drop_pct,
						  e->name, reason, NAN, cpu_pct);
		}
	}
	total = dom_have[ENERGY_BOARD] ? dom_w[ENERGY_BOARD] : dom_w[ENERGY_CPU] + dom_w[ENERGY_DRAM] + dom_w[ENERGY_GPU];
	if ((dom_have[ENERGY_BOARD] || dom_have[ENERGY_CPU] || dom_have[ENERGY_DRAM] || dom_have[ENERGY_GPU]) &&
	    (isnan(s->peak_w) || total > s->peak_w))
		s->peak_w = total;
	for (int g = 0; s->nvml && g < s->ngpu; g++) {
		double rs = at(row, col_of(s, SM_GPU_REASONS, g)), clk = at(row, col_of(s, SM_GPU_SM_MHZ, g));
		double max = at(row, col_of(s, SM_GPU_MAX_MHZ, g)), busy = at(row, col_of(s, SM_GPU_UTIL_PCT, g));
		char source[16];

		if (isnan(rs))
			continue;
		snprintf(source, sizeof(source), "gpu%d", g);
		throttle_nvml_reason_names((uint64_t)rs & (NVML_REASON_SW_POWER_CAP | NVML_REASON_HW_POWER_BRAKE),
					   reason, sizeof(reason));
		throttle_tracker__observe(s->pcap, source, ts, read_end, gpu_power_capped(s, rs, busy, clk, max),
					  s->gpu_name[g], reason, NAN, max > 0 ? 100.0 * clk / max : NAN);
	}
}

/* Throttling state of this row, per source; called with mu held. */
static void detect_throttling(struct side_sampler *s, uint64_t ts, uint64_t read_end, const double *row)
{
	double temp = NAN, best_pct = NAN;
	const char *zone = NULL;
	enum side_metric tm = channels__count_metric(&s->ch, SM_ZONE_TEMP_C) ? SM_ZONE_TEMP_C : SM_HWMON_TEMP_C;
	char reason[128];

	for (int i = 0; i < s->ch.n; i++)
		if (s->ch.v[i].metric == tm && !isnan(row[i]) && (isnan(temp) || row[i] > temp)) {
			temp = row[i];
			zone = s->ch.v[i].name;
		}
	best_pct = cpu_best_clock_pct(s, row);
	if (!isnan(temp) && !isnan(best_pct)) {
		snprintf(reason, sizeof(reason), "thermal: above %.0f C with clock below %.0f%% of max",
			 s->temp_threshold_c, 100.0 - s->clock_drop_pct);
		throttle_tracker__observe(s->thr, "cpu", ts, read_end,
					  throttle_thermal_active(temp, best_pct, 100.0, s->temp_threshold_c,
								  s->clock_drop_pct),
					  zone, reason, temp, best_pct);
	}
	for (int g = 0; g < s->ngpu; g++) {
		double gt = at(row, col_of(s, SM_GPU_TEMP_C, g)), clk = at(row, col_of(s, SM_GPU_SM_MHZ, g));
		double max = at(row, col_of(s, SM_GPU_MAX_MHZ, g)), rs = at(row, col_of(s, SM_GPU_REASONS, g));
		double busy = at(row, col_of(s, SM_GPU_UTIL_PCT, g));
		/* power bits only as a cap that costs time (gpu_power_capped) */
		bool by_reason = !isnan(rs) && (throttle_nvml_active((uint64_t)rs & ~(NVML_REASON_SW_POWER_CAP |
										       NVML_REASON_HW_POWER_BRAKE)) ||
						gpu_power_capped(s, rs, busy, clk, max));
		/* a clock the driver lowered because the GPU has no work (its
		 * gpu_idle reason) is not throttling, however hot the GPU */
		bool idle = !isnan(rs) && ((uint64_t)rs & NVML_REASON_GPU_IDLE);
		bool thermal = !idle && throttle_thermal_active(gt, clk, max, s->temp_threshold_c, s->clock_drop_pct);
		char source[16];

		if (isnan(rs) && (isnan(gt) || isnan(clk) || isnan(max)))
			continue;
		snprintf(source, sizeof(source), "gpu%d", g);
		if (by_reason)
			throttle_nvml_reason_names((uint64_t)rs & ~(NVML_REASON_GPU_IDLE | NVML_REASON_APP_CLOCKS_SETTING |
								   NVML_REASON_DISPLAY_CLOCKS),
						   reason, sizeof(reason));
		else
			snprintf(reason, sizeof(reason), "thermal: above %.0f C with clock below %.0f%% of max",
				 s->temp_threshold_c, 100.0 - s->clock_drop_pct);
		throttle_tracker__observe(s->thr, source, ts, read_end, by_reason || thermal, s->gpu_name[g], reason, gt,
					  max > 0 ? 100.0 * clk / max : NAN);
	}
}

/* A Jetson GPU's load, read at the rows' period and, while cycles run,
 * at the cycles' pace (read_energy_only): each read is the load over the
 * period since the previous one. */
static void read_jetson_load(struct side_sampler *s)
{
	struct gpu_util_sample smp;
	double pct;

	if (!s->jetson || gpu_jetson__read_load(s->jetson, &pct))
		return;
	smp.ts_us = now_ns() / 1000;
	smp.util_pct = pct;
	pthread_mutex_lock(&s->mu);
	gpu_busy__add(&s->busy[0], &smp, 1, 0);
	pthread_mutex_unlock(&s->mu);
}

/* The driver's utilization samples since the last read, per device, on
 * the tracer's clock (the driver stamps them with CLOCK_REALTIME). */
static void read_util_samples(struct side_sampler *s)
{
	static struct gpu_util_sample smp[1024];
	struct timespec rt, mono;
	int64_t rt_minus_mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	rt_minus_mono = ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
	for (int g = 0; s->nvml && g < s->ngpu && g < MAX_GPUS; g++) {
		char why[160] = "";
		uint64_t last;
		int n;

		pthread_mutex_lock(&s->mu);
		last = s->busy[g].last_us;
		pthread_mutex_unlock(&s->mu);
		n = gpu_nvml__util_samples(s->nvml, g, last, smp, 1024, why, sizeof(why));
		pthread_mutex_lock(&s->mu);
		if (n < 0)
			snprintf(s->busy_why, sizeof(s->busy_why), "%s", why);
		else
			gpu_busy__add(&s->busy[g], smp, n, rt_minus_mono);
		pthread_mutex_unlock(&s->mu);
	}
}

static void take_sample(struct side_sampler *s)
{
	int ncols = s->ch.n;
	double *row = malloc((ncols ? ncols : 1) * sizeof(double));
	struct gpu_proc_mem procs[MAX_GPUS][32];
	int nprocs[MAX_GPUS] = { 0 };
	pid_t *pids = NULL;
	int npids = 0;
	uint64_t ts, read_end, *raw = calloc(s->nen ? 2 * s->nen : 1, sizeof(*raw)), *rts;
	bool *ok = calloc(s->nen ? s->nen : 1, sizeof(*ok));

	if (!row || !raw || !ok) {
		free(row);
		free(raw);
		free(ok);
		return;
	}
	rts = raw + s->nen;
	for (int i = 0; i < ncols; i++)
		row[i] = NAN;
	pthread_mutex_lock(&s->mu);
	if (s->npids && (pids = malloc(s->npids * sizeof(*pids)))) {
		memcpy(pids, s->pids, s->npids * sizeof(*pids));
		npids = s->npids;
	}
	pthread_mutex_unlock(&s->mu);

	ts = now_ns();
	read_counters(s, raw, rts, ok);
	channels__read_all(&s->ch, row);
	for (int g = 0; s->nvml && g < s->ngpu; g++) {
		struct gpu_reading r;
		double v[NVML_NCOLS];

		nprocs[g] = 32;
		if (gpu_nvml__read(s->nvml, g, pids, npids, &r, procs[g], &nprocs[g]))
			continue;
		v[0] = r.util_pct, v[1] = r.mem_util_pct, v[2] = r.mem_used_mb, v[3] = r.mem_total_mb;
		v[4] = r.temp_c, v[5] = r.power_w, v[6] = r.sm_mhz, v[7] = r.mem_mhz, v[8] = r.max_sm_mhz;
		v[9] = r.reasons, v[10] = r.proc_mem_mb;
		memcpy(&row[s->nvml_base[g]], v, sizeof(v));
	}
	free(pids);
	read_util_samples(s);
	read_jetson_load(s);
	read_end = now_ns(); /* the row's values were read in [ts, read_end] */

	pthread_mutex_lock(&s->mu);
	if (s->hold_off) {
		update_energy(s, ts, read_end, row, raw, rts, ok);
		s->rows_not_kept++;
		goto rows_done;
	}
	if (s->nrows == s->caprows) {
		/* ts and rows (ncols a row) share one capacity */
		size_t w = ncols ? ncols : 1, cap = vec_grown(s->caprows, s->nrows, w * sizeof(*s->rows), 256);

		if (!cap || VEC_RESIZE(s->ts, cap) || VEC_RESIZE(s->rows, cap * w)) {
			pthread_mutex_unlock(&s->mu);
			free(row);
			free(raw);
			free(ok);
			return;
		}
		s->caprows = cap;
	}
	update_energy(s, ts, read_end, row, raw, rts, ok);
	s->ts[s->nrows] = ts;
	memcpy(&s->rows[s->nrows * ncols], row, ncols * sizeof(*row));
	s->nrows++;
rows_done:
	for (int g = 0; g < s->ngpu; g++) {
		double rs = at(row, col_of(s, SM_GPU_REASONS, g));

		if (!isnan(rs))
			s->reasons_seen[g] |= (uint64_t)rs;
		for (int k = 0; k < nprocs[g]; k++)
			note_pid_mem(s, g, &procs[g][k]);
	}
	detect_throttling(s, ts, read_end, row);
	pthread_mutex_unlock(&s->mu);
	free(row);
	free(raw);
	free(ok);
}

/* The energy counters alone (powercap, NVML), between rows: cheap reads
 * that put the series' points near every cycle edge. Integrals of power
 * readings stay at the rows' period. */
static void read_energy_only(struct side_sampler *s)
{
	uint64_t *raw = calloc(s->nen ? 2 * s->nen : 1, sizeof(*raw));
	bool *ok = calloc(s->nen ? s->nen : 1, sizeof(*ok));

	read_jetson_load(s);
	if (raw && ok) {
		read_counters(s, raw, raw + s->nen, ok);
		pthread_mutex_lock(&s->mu);
		for (int i = 0; i < s->nen; i++) {
			struct energy_source *e = &s->en[i];

			if (e->via == ENERGY_VIA_COLUMN || !ok[i])
				continue;
			energy_source__counter(e, raw[i], raw[s->nen + i]);
			energy_source__record(e, raw[s->nen + i]);
		}
		pthread_mutex_unlock(&s->mu);
	}
	free(raw);
	free(ok);
}

static bool have_counters(const struct side_sampler *s)
{
	for (int i = 0; i < s->nen; i++)
		if (s->en[i].via != ENERGY_VIA_COLUMN)
			return true;
	return false;
}

static void *sampler_main(void *arg)
{
	struct side_sampler *s = arg;
	uint64_t period = (uint64_t)s->period_ms * 1000000ULL, next, next_en;
	bool counters;

	discover(s);
	/* a Jetson's GPU load is read between rows too, at the cycles' pace */
	counters = have_counters(s) || s->jetson;
	pthread_mutex_lock(&s->mu);
	s->ready = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);

	next = next_en = now_ns();
	for (;;) {
		uint64_t now, en, wake;
		bool stop;

		now = now_ns();
		if (now >= next) {
			take_sample(s);
			now = now_ns();
			/* absolute deadlines keep the period without drift; a late
			 * sample skips the missed slots instead of bursting */
			next += period;
			if (next <= now)
				next = now + period;
		} else {
			read_energy_only(s);
			now = now_ns();
		}
		pthread_mutex_lock(&s->mu);
		en = counters ? s->en_period_ns : 0;
		pthread_mutex_unlock(&s->mu);
		wake = next;
		if (en && en < period) {
			next_en = next_en + en > now ? next_en + en : now + en;
			if (next_en < next)
				wake = next_en;
		}
		pthread_mutex_lock(&s->mu);
		while (!s->stop_req) {
			struct timespec dl = { .tv_sec = wake / 1000000000ULL, .tv_nsec = wake % 1000000000ULL };

			if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
				break;
		}
		stop = s->stop_req;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
	}
	/* the state at stop, so a short run still has data and open episodes end here */
	take_sample(s);
	pthread_mutex_lock(&s->mu);
	if (s->nrows) {
		throttle_tracker__finish(s->thr, s->ts[s->nrows - 1]);
		throttle_tracker__finish(s->pcap, s->ts[s->nrows - 1]);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

void side_sampler__energy_pace(struct side_sampler *s, uint64_t cycle_ns)
{
	uint64_t p = cycle_ns / 5, period = (uint64_t)s->period_ms * 1000000ULL;

	if (p < SIDE_ENERGY_MIN_NS)
		p = SIDE_ENERGY_MIN_NS;
	pthread_mutex_lock(&s->mu);
	s->en_period_ns = p < period ? p : 0;
	pthread_mutex_unlock(&s->mu);
}

/* ---- lifecycle ---- */

struct side_sampler *side_sampler__start(const struct side_config *cfg)
{
	static const struct side_config defaults;
	struct side_sampler *s;
	pthread_condattr_t ca;
	int err;

	if (!cfg)
		cfg = &defaults;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->period_ms = cfg->period_ms ? cfg->period_ms : 1000;
	/* until the cycles' pace is known: fast enough for cycles of 250 ms */
	s->en_period_ns = (uint64_t)s->period_ms * 1000000ULL > SIDE_ENERGY_START_NS ? SIDE_ENERGY_START_NS : 0;
	s->gpu_mode = cfg->gpu;
	s->temp_threshold_c = cfg->temp_threshold_c > 0 ? cfg->temp_threshold_c : 75.0;
	s->clock_drop_pct = cfg->clock_drop_pct > 0 ? cfg->clock_drop_pct : 20.0;
	s->disk_alert_pct = cfg->disk_alert_pct > 0 ? cfg->disk_alert_pct : 10.0;
	channels__init(&s->ch);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->peak_w = NAN;
	s->thr = throttle_tracker__new();
	s->pcap = throttle_tracker__new();
	if (!s->thr || !s->pcap)
		goto nomem;
	for (int i = 0; i < cfg->npids; i++)
		if (side_sampler__add_pid(s, cfg->pids[i]))
			goto nomem;
	if (cfg->ndisk_paths > 0) {
		s->disk_paths = calloc(cfg->ndisk_paths, sizeof(char *));
		if (!s->disk_paths)
			goto nomem;
		for (int i = 0; i < cfg->ndisk_paths; i++) {
			if (!(s->disk_paths[i] = strdup(cfg->disk_paths[i])))
				goto nomem;
			s->ndisk++;
		}
	}
	err = pthread_create(&s->thread, NULL, sampler_main, s);
	if (err) {
		side_sampler__free(s);
		errno = err;
		return NULL;
	}
	s->thread_started = true;
	return s;
nomem:
	side_sampler__free(s);
	errno = ENOMEM;
	return NULL;
}

void side_sampler__stop(struct side_sampler *s)
{
	if (!s || !s->thread_started)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop_req = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
}

void side_sampler__free(struct side_sampler *s)
{
	if (!s)
		return;
	side_sampler__stop(s);
	gpu_nvml__close(s->nvml);
	for (int g = 0; g < MAX_GPUS; g++)
		gpu_busy__free(&s->busy[g]);
	gpu_jetson__free(s->jetson);
	channels__free(&s->ch);
	throttle_tracker__free(s->thr);
	throttle_tracker__free(s->pcap);
	for (int i = 0; i < s->nen; i++)
		energy_source__free(&s->en[i]);
	free(s->en);
	for (int i = 0; i < s->ndisk; i++)
		free(s->disk_paths[i]);
	free(s->disk_paths);
	free(s->cpu_cur_col);
	free(s->cpu_max_col);
	free(s->pids);
	free(s->ts);
	free(s->rows);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int side_sampler__add_pid(struct side_sampler *s, pid_t pid)
{
	int err = 0;

	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->npids; i++)
		if (s->pids[i] == pid)
			goto out;
	if (VEC_RESERVE(s->pids, s->cappids, (size_t)s->npids, 8)) {
		err = -ENOMEM;
		goto out;
	}
	s->pids[s->npids++] = pid;
out:
	pthread_mutex_unlock(&s->mu);
	return err;
}

const char *side_sampler__gpu_notice(struct side_sampler *s)
{
	bool ready;

	pthread_mutex_lock(&s->mu);
	ready = s->ready;
	pthread_mutex_unlock(&s->mu);
	if (!ready || s->gpu_mode == SIDE_GPU_NONE || !s->notice[0])
		return NULL;
	return s->notice;
}

void side_sampler__set_hold(struct side_sampler *s, bool hold)
{
	pthread_mutex_lock(&s->mu);
	s->hold_off = !hold;
	pthread_mutex_unlock(&s->mu);
}

uint64_t side_sampler__rows_not_kept(struct side_sampler *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->mu);
	n = s->rows_not_kept;
	pthread_mutex_unlock(&s->mu);
	return n;
}

size_t side_sampler__sample_count(struct side_sampler *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nrows;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- summaries (callers hold mu) ---- */

/* The columns exist once discovery is done; a getter called at once after
 * start waits for it (sysfs enumeration and nvmlInit). Called with mu held. */
static void wait_ready(struct side_sampler *s)
{
	while (!s->ready && s->thread_started)
		pthread_cond_wait(&s->cv, &s->mu);
}

struct stats {
	double min, max, sum, last;
	size_t n;
};

static struct stats col_stats(const struct side_sampler *s, int col, size_t from, size_t to)
{
	struct stats st = { NAN, NAN, 0, NAN, 0 };

	for (size_t r = from; col >= 0 && r < to; r++) {
		double v = s->rows[r * s->ch.n + col];

		if (isnan(v))
			continue;
		st.min = st.n ? fmin(st.min, v) : v;
		st.max = st.n ? fmax(st.max, v) : v;
		st.sum += v;
		st.last = v;
		st.n++;
	}
	return st;
}

static double avg(const struct stats *st)
{
	return st->n ? st->sum / st->n : NAN;
}

/* three decimals are below every sensor's resolution */
static double r3(double v)
{
	return isfinite(v) ? round(v * 1000.0) / 1000.0 : NAN;
}

static struct side_mam mam(const struct stats *st)
{
	return (struct side_mam){ r3(st->min), r3(avg(st)), r3(st->max) };
}

static struct side_am am(const struct stats *st)
{
	return (struct side_am){ r3(avg(st)), r3(st->max) };
}

/* The element n of a growing vector of the summary: room made and zeroed,
 * or NULL on ENOMEM. */
#define VEC_PUSH(vec) \
	(VEC_RESERVE((vec).v, (vec).cap, (vec).n, 8) ? NULL : memset(&(vec).v[(vec).n++], 0, sizeof(*(vec).v)))

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, SIDE_NAME_LEN, "%s", src);
}

/* {name: {min, avg, max}} of every column of metric m with data */
static int named_stats(const struct side_sampler *s, enum side_metric m, void *vec)
{
	SIDE_VEC(struct side_named_mam) *out = vec;

	for (int i = 0; i < s->ch.n; i++) {
		struct side_named_mam *e;
		struct stats st;

		if (s->ch.v[i].metric != m)
			continue;
		st = col_stats(s, i, 0, s->nrows);
		if (!st.n)
			continue;
		if (!(e = VEC_PUSH(*out)))
			return -ENOMEM;
		copy_name(e->name, s->ch.v[i].name);
		e->v = mam(&st);
	}
	return 0;
}

static int thermal_summary(const struct side_sampler *s, struct side_thermal *t)
{
	double hottest = NAN;
	int err = 0;

	t->present = true;
	err |= named_stats(s, SM_ZONE_TEMP_C, &t->zones);
	err |= named_stats(s, SM_HWMON_TEMP_C, &t->hwmon);
	for (int i = 0; i < s->ch.n; i++) {
		if (s->ch.v[i].metric == SM_ZONE_TEMP_C || s->ch.v[i].metric == SM_HWMON_TEMP_C) {
			struct stats st = col_stats(s, i, 0, s->nrows);

			if (st.n && (isnan(hottest) || st.max > hottest))
				hottest = st.max;
		}
		if (s->ch.v[i].metric == SM_CPU_MHZ) {
			struct stats st = col_stats(s, i, 0, s->nrows);
			struct stats hw = col_stats(s, col_of(s, SM_CPU_MAX_MHZ, s->ch.v[i].index), 0, s->nrows);
			struct stats cap = col_stats(s, col_of(s, SM_CPU_SCALING_MAX_MHZ, s->ch.v[i].index), 0, s->nrows);
			struct side_cpufreq *c;

			if (!st.n)
				continue;
			if (!(c = VEC_PUSH(t->cpufreq)))
				return -ENOMEM;
			copy_name(c->name, s->ch.v[i].name);
			c->min_mhz = r3(st.min);
			c->avg_mhz = r3(avg(&st));
			c->max_mhz = r3(st.max);
			c->hw_max_mhz = r3(hw.max);
			c->lowest_scaling_max_mhz = r3(cap.min);
		}
	}
	err |= named_stats(s, SM_HWMON_POWER_W, &t->power_w);
	err |= named_stats(s, SM_RAIL_POWER_W, &t->power_w);
	t->max_temp_c = r3(hottest);
	t->temp_threshold_c = r3(s->temp_threshold_c);
	t->clock_drop_pct = r3(s->clock_drop_pct);
	for (size_t i = 0; i < throttle_tracker__count(s->thr); i++) {
		struct throttle_episode *e = VEC_PUSH(t->throttling);

		if (!e)
			return -ENOMEM;
		*e = *throttle_tracker__get(s->thr, i);
	}
	t->throttled = t->throttling.n > 0;
	t->samples = s->nrows;
	t->period_ms = s->period_ms;
	return err ? -ENOMEM : 0;
}

static int gpu_device_summary(const struct side_sampler *s, int g, struct side_gpu_device *d)
{
	static const struct {
		enum side_metric m;
		size_t off;
	} fields[] = {
		{ SM_GPU_UTIL_PCT, offsetof(struct side_gpu_device, util_pct) },
		{ SM_GPU_MEM_UTIL_PCT, offsetof(struct side_gpu_device, mem_util_pct) },
		{ SM_GPU_MEM_USED_MB, offsetof(struct side_gpu_device, mem_used_mb) },
		{ SM_GPU_TEMP_C, offsetof(struct side_gpu_device, temp_c) },
		{ SM_GPU_POWER_W, offsetof(struct side_gpu_device, power_w) },
		{ SM_GPU_SM_MHZ, offsetof(struct side_gpu_device, sm_clock_mhz) },
		{ SM_GPU_MEM_MHZ, offsetof(struct side_gpu_device, mem_clock_mhz) },
		{ SM_GPU_PROC_MEM_MB, offsetof(struct side_gpu_device, target_mem_mb) },
	};
	struct stats st;

	d->index = g;
	copy_name(d->name, s->gpu_name[g]);
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		struct side_am *v = (void *)((char *)d + fields[k].off);

		st = col_stats(s, col_of(s, fields[k].m, g), 0, s->nrows);
		*v = st.n ? am(&st) : (struct side_am){ NAN, NAN };
	}
	st = col_stats(s, col_of(s, SM_GPU_MEM_TOTAL_MB, g), 0, s->nrows);
	d->mem_total_mb = st.n ? r3(st.max) : NAN;
	st = col_stats(s, col_of(s, SM_GPU_MAX_MHZ, g), 0, s->nrows);
	d->max_sm_clock_mhz = st.n ? r3(st.max) : NAN;
	d->has_reasons = col_of(s, SM_GPU_REASONS, g) >= 0;
	d->throttle_reasons = s->reasons_seen[g];
	for (int i = 0; i < s->npidmem; i++) {
		struct side_named_value *p;

		if (s->pidmem[i].gpu != g)
			continue;
		if (!(p = VEC_PUSH(d->process_mem_mb)))
			return -ENOMEM;
		snprintf(p->name, sizeof(p->name), "%d", (int)s->pidmem[i].pid);
		p->v = r3(s->pidmem[i].max_mb);
	}
	return 0;
}

static int gpu_summary(const struct side_sampler *s, struct side_gpu *o)
{
	o->present = true;
	o->available = s->gpu_source != NULL;
	snprintf(o->source, sizeof(o->source), "%s", s->gpu_source ? s->gpu_source : "");
	copy_name(o->device, s->ngpu ? s->gpu_name[0] : "");
	snprintf(o->unavailable_reason, sizeof(o->unavailable_reason), "%s",
		 s->gpu_source ? "" : s->ready ? s->gpu_reason : "GPU not probed");
	for (int g = 0; g < s->ngpu; g++) {
		struct side_gpu_device *d = VEC_PUSH(o->devices);

		if (!d || gpu_device_summary(s, g, d))
			return -ENOMEM;
	}
	return 0;
}

static int disk_summary(const struct side_sampler *s, struct side_disk *o)
{
	o->present = true;
	for (int i = 0; i < s->ch.n; i++) {
		struct side_disk_path *p;
		struct stats fr, tot;

		if (s->ch.v[i].metric != SM_DISK_FREE_MB)
			continue;
		if (!(p = VEC_PUSH(o->paths)))
			return -ENOMEM;
		copy_name(p->name, s->ch.v[i].name);
		fr = col_stats(s, i, 0, s->nrows);
		tot = col_stats(s, i + 1, 0, s->nrows); /* added right after its free column */
		if (!fr.n || !tot.n || tot.last <= 0) {
			snprintf(p->error, sizeof(p->error), "statvfs failed");
			continue;
		}
		p->ok = true;
		p->free_mb = r3(fr.last);
		p->total_mb = r3(tot.last);
		p->percent_free = r3(100.0 * fr.last / tot.last);
		p->min_free_mb = r3(fr.min);
		p->alert = 100.0 * fr.min / tot.max < s->disk_alert_pct;
		o->alert |= p->alert;
	}
	o->alert_below_pct = r3(s->disk_alert_pct);
	return 0;
}

static int host_summary(const struct side_sampler *s, struct side_host *o)
{
	struct stats mem = col_stats(s, col_of(s, SM_MEM_AVAILABLE_MB, 0), 0, s->nrows);
	double sum = 0;
	int n = 0;

	o->present = true;
	o->mem_available_mb = mem.n ? mam(&mem) : (struct side_mam){ NAN, NAN, NAN };
	for (int i = 0; i < s->ch.n; i++) {
		struct side_named_am *e;
		struct stats st;

		if (s->ch.v[i].metric != SM_CPU_LOAD_PCT)
			continue;
		st = col_stats(s, i, 0, s->nrows);
		if (!st.n)
			continue;
		if (!(e = VEC_PUSH(o->cpu_load_pct)))
			return -ENOMEM;
		copy_name(e->name, s->ch.v[i].name);
		e->v = am(&st);
		sum += avg(&st);
		n++;
	}
	o->cpu_load_avg_pct = r3(n ? sum / n : NAN);
	return 0;
}

int side_sampler__summary(struct side_sampler *s, struct side_summary *out)
{
	int err = 0;

	side_summary__init(out);
	pthread_mutex_lock(&s->mu);
	wait_ready(s);
	err |= thermal_summary(s, &out->thermal);
	err |= gpu_summary(s, &out->gpu);
	err |= disk_summary(s, &out->disk);
	err |= host_summary(s, &out->host);
	pthread_mutex_unlock(&s->mu);
	return err ? -ENOMEM : 0;
}

/* averages of every column of metric m in rows [from, to) into vec
 * ({name: avg}; NULL: not kept), their mean and their largest */
static int named_avgs(const struct side_sampler *s, enum side_metric m, size_t from, size_t to, void *vec,
		      double *mean, double *maxv)
{
	SIDE_VEC(struct side_named_value) *out = vec;
	double sum = 0;
	int n = 0;

	*maxv = NAN;
	for (int i = 0; i < s->ch.n; i++) {
		struct side_named_value *e;
		struct stats st;

		if (s->ch.v[i].metric != m)
			continue;
		st = col_stats(s, i, from, to);
		if (!st.n)
			continue;
		if (out) {
			if (!(e = VEC_PUSH(*out)))
				return -ENOMEM;
			copy_name(e->name, s->ch.v[i].name);
			e->v = r3(avg(&st));
		}
		sum += avg(&st);
		n++;
		if (isnan(*maxv) || avg(&st) > *maxv)
			*maxv = avg(&st);
	}
	*mean = n ? sum / n : NAN;
	return 0;
}

int side_sampler__window(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns, struct side_window *w)
{
	static const struct {
		enum side_metric m;
		size_t off;
	} gpu_fields[] = {
		{ SM_GPU_UTIL_PCT, offsetof(struct side_gpu_avgs, util_pct) },
		{ SM_GPU_MEM_USED_MB, offsetof(struct side_gpu_avgs, mem_used_mb) },
		{ SM_GPU_TEMP_C, offsetof(struct side_gpu_avgs, temp_c) },
		{ SM_GPU_POWER_W, offsetof(struct side_gpu_avgs, power_w) },
		{ SM_GPU_SM_MHZ, offsetof(struct side_gpu_avgs, sm_clock_mhz) },
		{ SM_GPU_MEM_MHZ, offsetof(struct side_gpu_avgs, mem_clock_mhz) },
		{ SM_GPU_PROC_MEM_MB, offsetof(struct side_gpu_avgs, target_mem_mb) },
	};
	size_t from = 0, to = 0;
	double mean, maxv, pm, px;
	int err = 0;

	side_window__init(w);
	pthread_mutex_lock(&s->mu);
	wait_ready(s);
	while (from < s->nrows && s->ts[from] < start_ns)
		from++;
	to = from;
	while (to < s->nrows && s->ts[to] <= end_ns)
		to++;
	w->present = true;
	w->samples = to - from;
	if (to == from && from > 0) /* a window shorter than the period: hold the last value */
		from--, to = from + 1;
	if (to > from) {
		w->has_rows = true;
		err |= named_avgs(s, SM_ZONE_TEMP_C, from, to, &w->temp_c, &mean, &maxv);
		w->temp_max_c = r3(maxv);
		err |= named_avgs(s, SM_CPU_MHZ, from, to, NULL, &mean, &maxv);
		w->cpu_mhz = r3(mean);
		err |= named_avgs(s, SM_CPU_LOAD_PCT, from, to, NULL, &mean, &maxv);
		w->cpu_load_pct = r3(mean);
		err |= named_avgs(s, SM_MEM_AVAILABLE_MB, from, to, NULL, &mean, &maxv);
		w->mem_available_mb = r3(mean);
		err |= named_avgs(s, SM_HWMON_POWER_W, from, to, &w->power_w, &pm, &px);
		err |= named_avgs(s, SM_RAIL_POWER_W, from, to, &w->power_w, &pm, &px);
		w->has_gpu = s->ngpu > 0;
		for (size_t k = 0; w->has_gpu && k < sizeof(gpu_fields) / sizeof(gpu_fields[0]); k++) {
			struct stats st = col_stats(s, col_of(s, gpu_fields[k].m, 0), from, to);

			double *v = (void *)((char *)&w->gpu + gpu_fields[k].off);

			*v = st.n ? r3(avg(&st)) : NAN;
		}
	}
	w->throttled_ms = r3(throttle_tracker__overlap_ns(s->thr, start_ns, end_ns) / 1e6);
	pthread_mutex_unlock(&s->mu);
	return err ? -ENOMEM : 0;
}

int side_sampler__series(struct side_sampler *s, struct side_series *out)
{
	static const struct {
		enum side_metric m;
		const char *name;
	} series[] = {
		{ SM_ZONE_TEMP_C, "temperature (C)" },   { SM_HWMON_TEMP_C, "hwmon temperature (C)" },
		{ SM_CPU_MHZ, "cpu clock (MHz)" },        { SM_CPU_LOAD_PCT, "cpu load (%)" },
		{ SM_MEM_AVAILABLE_MB, "MemAvailable (MB)" }, { SM_HWMON_POWER_W, "power (W)" },
		{ SM_RAIL_POWER_W, "power rails (W)" },   { SM_DISK_FREE_MB, "disk free (MB)" },
		{ SM_GPU_UTIL_PCT, "gpu util (%)" },      { SM_GPU_MEM_USED_MB, "gpu memory (MB)" },
		{ SM_GPU_TEMP_C, "gpu temperature (C)" }, { SM_GPU_POWER_W, "gpu power (W)" },
		{ SM_GPU_SM_MHZ, "gpu clock (MHz)" },
	};
	int *cols = NULL, err = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->mu);
	wait_ready(s);
	cols = malloc((s->ch.n ? s->ch.n : 1) * sizeof(*cols));
	if (!cols)
		goto nomem;
	/* the columns series by series, as the counter tracks group them */
	for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++)
		for (int i = 0; i < s->ch.n; i++) {
			struct side_series_col *c;

			if (s->ch.v[i].metric != series[k].m)
				continue;
			if (!(c = VEC_PUSH(out->cols)))
				goto nomem;
			snprintf(c->series, sizeof(c->series), "%s", series[k].name);
			copy_name(c->name, s->ch.v[i].name);
			cols[out->cols.n - 1] = i;
		}
	if (s->nrows && out->cols.n) {
		out->ts = malloc(s->nrows * sizeof(*out->ts));
		out->v = malloc(s->nrows * out->cols.n * sizeof(*out->v));
		if (!out->ts || !out->v)
			goto nomem;
		memcpy(out->ts, s->ts, s->nrows * sizeof(*out->ts));
		for (size_t r = 0; r < s->nrows; r++)
			for (size_t c = 0; c < out->cols.n; c++)
				out->v[r * out->cols.n + c] = s->rows[r * s->ch.n + cols[c]];
		out->nrows = s->nrows;
	}
	goto out;
nomem:
	err = -ENOMEM;
out:
	pthread_mutex_unlock(&s->mu);
	free(cols);
	return err;
}

/* ---- energy ---- */

int side_sampler__energy(struct side_sampler *s, uint64_t start_ns, uint64_t end_ns, double *j)
{
	bool have[ENERGY_NDOMAINS] = { false }, bad[ENERGY_NDOMAINS] = { false };
	int err = 0, measured = 0;

	for (int d = 0; d < ENERGY_NDOMAINS; d++)
		j[d] = NAN;
	pthread_mutex_lock(&s->mu);
	wait_ready(s);
	if (!s->nen) {
		err = -ENODATA;
		goto out;
	}
	if (end_ns <= start_ns) {
		err = -ERANGE;
		goto out;
	}
	for (int i = 0; i < s->nen; i++) {
		const struct energy_source *e = &s->en[i];
		double v, g0, g1;

		if (e->domain >= ENERGY_NDOMAINS)
			continue;
		/* below this source's resolution where the window lies: at least
		 * as long as the reads around each of its ends are apart */
		g0 = energy_source__gap_at(e, start_ns);
		g1 = energy_source__gap_at(e, end_ns);
		if (isnan(g0) || isnan(g1) || (double)(end_ns - start_ns) < (g0 > g1 ? g0 : g1)) {
			bad[e->domain] = true;
			continue;
		}
		v = energy_source__total_at(e, end_ns) - energy_source__total_at(e, start_ns);
		if (isnan(v)) {
			bad[e->domain] = true;
			continue;
		}
		j[e->domain] = (have[e->domain] ? j[e->domain] : 0) + v;
		have[e->domain] = true;
	}
	for (int d = 0; d < ENERGY_NDOMAINS; d++) {
		if (bad[d])
			j[d] = NAN;
		measured += !isnan(j[d]);
	}
	if (!measured)
		err = -ERANGE;
out:
	pthread_mutex_unlock(&s->mu);
	return err;
}

int side_sampler__energy_summary(struct side_sampler *s, struct side_energy *out)
{
	static const char *const kinds[] = { "counter", "integral" };
	double dom[ENERGY_NDOMAINS];
	bool have[ENERGY_NDOMAINS] = { false };
	uint64_t capped_ns = 0;
	double pms, res = 0;
	int err = 0;

	side_energy__init(out);
	pthread_mutex_lock(&s->mu);
	wait_ready(s);
	for (int i = 0; i < s->nen; i++) {
		const struct energy_source *e = &s->en[i];
		double dur = e->primed && e->prev_ts > e->first_ts ? (e->prev_ts - e->first_ts) / 1e9 : NAN;
		struct side_energy_source *so = VEC_PUSH(out->sources);

		if (!so)
			goto nomem;
		copy_name(so->name, e->name);
		snprintf(so->domain, sizeof(so->domain), "%s", energy_domain_name(e->domain));
		snprintf(so->kind, sizeof(so->kind), "%s", kinds[e->kind]);
		/* the period it was actually read at */
		pms = energy_source__median_gap_ms(e);
		if (isnan(pms))
			pms = s->period_ms;
		if (pms > res)
			res = pms;
		so->period_ms = pms;
		so->joules = r3(isnan(dur) ? NAN : e->joules);
		so->seconds = r3(dur);
		so->mean_w = r3(dur > 0 ? e->joules / dur : NAN);
		so->counter = e->kind == ENERGY_COUNTER;
		so->wraps = e->wraps;
		so->max_range_j = so->counter && e->max_range ? r3(e->max_range * e->unit_j) : NAN;
		so->limit_w = r3(e->limit_w);
		so->root_only = e->via == ENERGY_VIA_POWERCAP; /* root only since Linux 5.10 (PLATYPUS) */
		so->read_errors = e->read_errors;
		if (e->domain < ENERGY_NDOMAINS && !isnan(dur)) {
			dom[e->domain] = (have[e->domain] ? dom[e->domain] : 0) + e->joules;
			have[e->domain] = true;
		}
	}
	for (int d = 0; d < ENERGY_NDOMAINS; d++) {
		struct side_energy_missing *mi;

		if (have[d])
			out->j[d] = r3(dom[d]);
		if (!s->en_missing[d][0])
			continue;
		if (!(mi = VEC_PUSH(out->missing)))
			goto nomem;
		snprintf(mi->domain, sizeof(mi->domain), "%s", energy_domain_name(d));
		snprintf(mi->reason, sizeof(mi->reason), "%s", s->en_missing[d]);
	}
	out->peak_w = r3(s->peak_w);
	for (size_t i = 0; i < throttle_tracker__count(s->pcap); i++) {
		const struct throttle_episode *ep = throttle_tracker__get(s->pcap, i);
		struct throttle_episode *c = VEC_PUSH(out->capped);

		if (!c)
			goto nomem;
		*c = *ep;
		capped_ns += ep->end_ns > ep->start_ns ? ep->end_ns - ep->start_ns : 0;
	}
	out->resolution_ms = res > 0 ? res : s->period_ms;
	out->capped_ms = r3(capped_ns / 1e6);
	goto out;
nomem:
	err = -ENOMEM;
out:
	pthread_mutex_unlock(&s->mu);
	return err;
}

int side_sampler__gpu_busy(struct side_sampler *s, int g, uint64_t start_ns, uint64_t end_ns, double *busy_ms,
			   double *covered_ms)
{
	int err = 0;

	if (!s || !s->ready || !(s->nvml || s->jetson) || g < 0 || g >= s->ngpu || g >= MAX_GPUS)
		return -ENODATA;
	pthread_mutex_lock(&s->mu);
	if (!s->busy[g].periods.n)
		err = -ENODATA;
	else
		*busy_ms = gpu_busy__window(&s->busy[g], start_ns, end_ns, covered_ms);
	pthread_mutex_unlock(&s->mu);
	return err;
}

int side_sampler__gpu_count(struct side_sampler *s)
{
	return s && s->ready && (s->nvml || s->jetson) ? s->ngpu : 0;
}

const char *side_sampler__gpu_busy_why(struct side_sampler *s)
{
	return s && s->busy_why[0] ? s->busy_why : NULL;
}
