// SPDX-License-Identifier: BSD-2-Clause
/* The GPU timeline's figures as the views read them (gpu_view.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_view.h"
#include "text.h"

bool gpu_view__timeline(const struct model *m)
{
	const struct model_gpu_activity *a = &m->gpu_activity;

	return a->source && !strcmp(a->source, "cupti") && a->figures.n;
}

bool gpu_view__any(const struct model *m)
{
	return m->gpu_activity.source && m->gpu_activity.figures.n;
}

const struct model_gpu_figures *gpu_view__find(const struct model_gpu_figures *v, size_t n, uint32_t device,
						uint32_t phase)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].device == device && v[i].phase == phase)
			return &v[i];
	return NULL;
}

const struct model_gpu_figures *gpu_view__run(const struct model *m, uint32_t device, uint32_t phase)
{
	return gpu_view__find(m->gpu_activity.figures.v, m->gpu_activity.figures.n, device, phase);
}

const struct model_gpu_figures *gpu_view__cycle(const struct model_cycle *c, uint32_t device, uint32_t phase)
{
	return c->gpu.present ? gpu_view__find(c->gpu.figures.v, c->gpu.figures.n, device, phase) : NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

size_t gpu_view__devices(const struct model *m, uint32_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->gpu_activity.figures.n; i++) {
		uint32_t d = m->gpu_activity.figures.v[i].device;
		size_t j;

		for (j = 0; j < n && out[j] != d; j++)
			;
		if (j == n && n < max)
			out[n++] = d;
	}
	if (n)
		qsort(out, n, sizeof(*out), cmp_u32);
	return n;
}

size_t gpu_view__cycles(const struct model *m)
{
	size_t n = 0;

	/* sampled: the run's figures are those of the cycles the windows recorded */
	if (m->gpu_activity.sampling && m->gpu_activity.cycles_recorded)
		return m->gpu_activity.cycles_recorded;
	for (size_t i = 0; i < m->ncycles; i++)
		n += m->cycles[i].gpu.present;
	return n ? n : m->ncycles;
}

static uint32_t inference_phase(const struct model *m)
{
	int id = model__phase_id(m, "llm_inference");

	if (id > 0)
		return (uint32_t)id;
	for (int i = 1; i < IT_MAX_PHASES; i++)
		if (m->phase_names[i] && strstr(m->phase_names[i], "inference"))
			return (uint32_t)i;
	id = model__phase_id(m, "llm_generate");
	return id > 0 ? (uint32_t)id : 0;
}

/* The sum of the cycles' figures of (device, phase) into sum; false: none. */
static bool cycles_sum(const struct model *m, uint32_t device, uint32_t phase, struct model_gpu_figures *sum)
{
	bool any = false;

	memset(sum, 0, sizeof(*sum));
	sum->device = device;
	sum->phase = phase;
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_gpu_figures *f = gpu_view__cycle(&m->cycles[i], device, phase);

		if (!f)
			continue;
		any = true;
		sum->window_ms += f->window_ms;
		sum->busy_ms += f->busy_ms;
		sum->active_ms += f->active_ms;
		sum->idle_ms += f->idle_ms;
		sum->idle_host_ms += f->idle_host_ms;
		sum->sync_ms += f->sync_ms;
		sum->covered_ms += f->covered_ms;
		sum->kernels += f->kernels;
		for (int d = 0; d < IT_GPU_DIR_MAX; d++) {
			sum->copies[d].count += f->copies[d].count;
			sum->copies[d].bytes += f->copies[d].bytes;
			sum->copies[d].ms += f->copies[d].ms;
		}
		sum->sets.count += f->sets.count;
		sum->sets.bytes += f->sets.bytes;
		sum->sets.ms += f->sets.ms;
	}
	return any;
}

const struct model_gpu_figures *gpu_view__window(const struct model *m, uint32_t device, uint32_t *phase,
						  struct model_gpu_figures *sum)
{
	uint32_t ph = inference_phase(m);
	const struct model_gpu_figures *run;

	if (!ph || !cycles_sum(m, device, ph, sum) || !(sum->window_ms > 0)) {
		ph = 0;
		if (!cycles_sum(m, device, 0, sum) || !(sum->window_ms > 0))
			return NULL;
	}
	/* the lists (top kernels, idle stacks) are the run's, borrowed */
	run = gpu_view__run(m, device, ph);
	if (run) {
		sum->top = run->top;
		sum->idle_stacks = run->idle_stacks;
	}
	*phase = ph;
	return sum;
}

double gpu_view__copy_ms(const struct model_gpu_figures *f)
{
	double ms = 0;

	for (int d = 0; d < IT_GPU_DIR_MAX; d++)
		ms += f->copies[d].ms;
	return ms;
}

const char *gpu_view__dir_name(unsigned int dir)
{
	static const char *const names[IT_GPU_DIR_MAX] = { "other", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };

	return dir < IT_GPU_DIR_MAX ? names[dir] : "other";
}

const char *gpu_view__bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

double gpu_view__pct(double ms, double window_ms)
{
	double p;

	if (!(window_ms > 0) || !isfinite(ms))
		return NAN;
	p = 100.0 * ms / window_ms;
	return p > 100 ? 100 : p;
}

const struct model_cycle *gpu_view__last_cycle(const struct model *m)
{
	const struct model_cycle *last = NULL;

	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (c->gpu.present && c->gpu.figures.n && c->end_ns && !c->open_at_end &&
		    (!last || c->end_ns > last->end_ns))
			last = c;
	}
	return last;
}

void gpu_view__live_line(const struct model *m, char *buf, size_t len)
{
	const struct model_cycle *c = gpu_view__last_cycle(m);
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; c && i < c->gpu.figures.n && off < len; i++) {
		const struct model_gpu_figures *f = &c->gpu.figures.v[i];

		if (f->phase)
			continue;
		off += snprintf(buf + off, len - off, "%sGPU %u busy %.0f%% of %.1f ms", off ? "  " : "", f->device,
				gpu_view__pct(f->busy_ms, f->window_ms), f->window_ms);
		if (!c->gpu.nvml_only && off < len)
			off += snprintf(buf + off, len - off, ", %llu kernels, idle while the host ran %.1f ms",
					(unsigned long long)f->kernels, f->idle_host_ms);
	}
	if (off && off < len)
		snprintf(buf + off, len - off, " (last cycle)");
}

/* ---- the report's section ---- */

static const char *phase_name(const struct model *m, uint32_t ph)
{
	return ph && ph < IT_MAX_PHASES && m->phase_names[ph] ? m->phase_names[ph] : "cycles";
}

/* A kernel's name for one line: no template arguments, no parameters, no
 * return type ("void at::native::f<8, ...>(int, ...)" is
 * "at::native::f"); "(anonymous namespace)" stays. The full name is in
 * profile.json. */
const char *gpu_view__short_kernel(const char *name, char *buf, size_t len)
{
	static const char anon[] = "(anonymous namespace)";
	size_t out = 0;
	int depth = 0;

	if (!name || !len)
		return name ? name : "?";
	if (!strncmp(name, "void ", 5))
		name += 5;
	for (const char *p = name; *p && out + 1 < len; p++) {
		if (!depth && *p == '(' && !strncmp(p, anon, sizeof(anon) - 1)) {
			size_t n = sizeof(anon) - 1 < len - 1 - out ? sizeof(anon) - 1 : len - 1 - out;

			memcpy(buf + out, p, n);
			out += n;
			p += sizeof(anon) - 2;
			continue;
		}
		if (*p == '<' || *p == '(') {
			depth++;
			continue;
		}
		if ((*p == '>' || *p == ')') && depth) {
			depth--;
			continue;
		}
		if (!depth)
			buf[out++] = *p;
	}
	buf[out] = 0;
	return out ? buf : name;
}

static void print_device(FILE *out, const struct model *m, const struct model_gpu_figures *f, size_t ncycles)
{
	char b[32];

	fprintf(out, "  GPU %u: busy %.1f%% (%.2f ms), active %.1f%%, idle %.1f%% of %.2f ms of cycles; "
		"%.1f kernels per cycle\n", f->device, gpu_view__pct(f->busy_ms, f->window_ms), f->busy_ms,
		gpu_view__pct(f->active_ms, f->window_ms), gpu_view__pct(f->idle_ms, f->window_ms), f->window_ms,
		ncycles ? (double)f->kernels / ncycles : 0.0);
	if (f->idle_host_ms > 0 || f->sync_ms > 0)
		fprintf(out, "    idle while the host ran %.2f ms, host in synchronize calls %.2f ms\n", f->idle_host_ms,
			f->sync_ms);
	for (unsigned int d = 0; d < IT_GPU_DIR_MAX; d++) {
		const struct model_gpu_dir_total *c = &f->copies[d];

		if (c->count)
			fprintf(out, "    copies %s: %llu, %s, %.2f ms\n", gpu_view__dir_name(d),
				(unsigned long long)c->count, gpu_view__bytes(b, sizeof(b), c->bytes), c->ms);
	}
	if (f->sets.count)
		fprintf(out, "    memsets: %llu, %s, %.2f ms\n", (unsigned long long)f->sets.count,
			gpu_view__bytes(b, sizeof(b), f->sets.bytes), f->sets.ms);
	if (f->top.n)
		fprintf(out, "    top kernels:   ms      count  name\n");
	for (size_t i = 0; i < f->top.n && i < 5; i++) {
		char nb[160];

		fprintf(out, "    %14.2f %10llu  %s\n", f->top.v[i].ms, (unsigned long long)f->top.v[i].count,
			gpu_view__short_kernel(model__name(m, f->top.v[i].name), nb, sizeof(nb)));
	}
}

static void print_phases(FILE *out, const struct model *m, uint32_t dev)
{
	const struct model_gpu_figures *idlest = NULL;
	bool head = false;

	for (uint32_t ph = 1; ph < IT_MAX_PHASES; ph++) {
		const struct model_gpu_figures *f = gpu_view__run(m, dev, ph);

		if (!f || !m->phase_names[ph])
			continue;
		if (!head)
			fprintf(out, "    %-20s %10s %10s %7s %10s\n", "phase", "busy_ms", "idle_ms", "busy%", "kernels");
		head = true;
		fprintf(out, "    %-20s %10.2f %10.2f %6.1f%% %10llu\n", m->phase_names[ph], f->busy_ms, f->idle_ms,
			gpu_view__pct(f->busy_ms, f->window_ms), (unsigned long long)f->kernels);
		if (f->idle_host_ms > 0 && (!idlest || f->idle_host_ms > idlest->idle_host_ms))
			idlest = f;
	}
	if (!idlest) {
		const struct model_gpu_figures *all = gpu_view__run(m, dev, 0);

		idlest = all && all->idle_host_ms > 0 ? all : NULL;
	}
	if (!idlest || !idlest->idle_stacks.n)
		return;
	fprintf(out, "    GPU idle while the host ran: %s, %.2f ms\n", phase_name(m, idlest->phase),
		idlest->idle_host_ms);
	for (size_t i = 0; i < idlest->idle_stacks.n && i < 5; i++) {
		const struct model_gpu_idle_stack *s = &idlest->idle_stacks.v[i];
		const char *st = model__name(m, s->stack);

		fprintf(out, "      %10.2f ms  %s\n", s->ms, st ? text__leaf_frames(st, 160) : "?");
	}
}

void gpu_view__print(FILE *out, const struct model *m)
{
	const struct model_gpu_activity *a = &m->gpu_activity;
	uint32_t devs[GPU_VIEW_MAX_DEVICES];
	size_t nd, ncycles;

	if (a->notice[0])
		fprintf(out, "\nGPU kernel timing off: %s\n", a->notice);
	if (!gpu_view__any(m))
		return;
	nd = gpu_view__devices(m, devs, GPU_VIEW_MAX_DEVICES);
	ncycles = gpu_view__cycles(m);
	if (!gpu_view__timeline(m)) {
		fprintf(out, "\nGPU (%s utilization samples):\n", a->source);
		for (size_t i = 0; i < nd; i++) {
			const struct model_gpu_figures *f = gpu_view__run(m, devs[i], 0);

			if (f)
				fprintf(out, "  GPU %u: busy %.1f%% (%.2f ms) of %.2f ms of cycles\n", f->device,
					gpu_view__pct(f->busy_ms, f->window_ms), f->busy_ms, f->window_ms);
		}
		return;
	}
	fprintf(out, "\nGPU (CUPTI activity: %llu kernels, %llu copies, %llu memsets", (unsigned long long)a->kernels,
		(unsigned long long)a->copies, (unsigned long long)a->sets);
	if (a->sampling)
		fprintf(out, "; sampled (--cupti %s): %llu windows, up to 1 in %u, %llu of %zu cycles recorded",
			a->sample_mode[0] ? a->sample_mode : "auto", (unsigned long long)a->nwindows, a->sample_every,
			(unsigned long long)a->cycles_recorded, m->ncycles);
	if (a->clock.calibrated)
		fprintf(out, "; clock drift %.1f us", a->clock.drift_us);
	if (a->dropped)
		fprintf(out, "; %llu records dropped", (unsigned long long)a->dropped);
	fprintf(out, "):\n");
	for (size_t i = 0; i < nd; i++) {
		const struct model_gpu_figures *f = gpu_view__run(m, devs[i], 0);

		if (f)
			print_device(out, m, f, ncycles);
		print_phases(out, m, devs[i]);
	}
}
