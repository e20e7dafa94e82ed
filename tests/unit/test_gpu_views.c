// SPDX-License-Identifier: BSD-2-Clause
/* What the GPU timeline shows, on models whose GPU figures are set by hand
 * (numbers known by construction): each verdict on a model built to deserve
 * it and not on one built not to, the report's GPU section, diff's rows,
 * trace.json's GPU tracks and flows, gpu.folded, /metrics and top's line. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "diff.h"
#include "gpu_view.h"
#include "metrics.h"
#include "model.h"
#include "outputs.h"
#include "rules.h"
#include "trace_gpu.h"
#include "test_helpers.h"

#define MS 1000000ull
#define INFER 1
#define SYNC 2
#define NCYCLES 4

/* Cycle i of pid 100: 100 ms from 1000 + 100 i ms; llm_inference 80 ms
 * (one call from its start); with sync_phase, gpu_sync 40 ms after it. */
static void start(struct model *m, bool sync_phase)
{
	char *argv[] = { "exp", NULL };
	struct model_process *p;

	model__init(m);
	assert_int_equal(model__set_command(m, argv), 0);
	m->run.start_ns = 1000 * MS;
	m->run.system = (struct model_system){ .present = true, .kernel = "6.1", .cpus = 2, .mem_total_mb = 1000.0,
					       .hostname = "test" };
	power_mode__init(&m->run.system.power);
	m->run.config = json_object();
	assert_int_equal(model__set_phase_name(m, INFER, "llm_inference"), 0);
	if (sync_phase)
		assert_int_equal(model__set_phase_name(m, SYNC, "gpu_sync"), 0);
	p = model__add_process(m, 100);
	assert_non_null(p);
	p->root = true;
	strcpy(p->comm, "exp");
	m->run.pids = calloc(1, sizeof(pid_t));
	m->run.pids[m->run.npids++] = 100;
	m->cycles_source = "cycle";
	for (int i = 0; i < NCYCLES; i++) {
		uint64_t s = 1000 * MS + i * 100 * MS;
		struct model_cycle *c = model__add_cycle(m, 100, i, s, s + 100 * MS);
		struct model_phase_call call = { .tgid = 100, .tid = 100, .bpf_cycle = i, .phase = INFER,
						 .entry_ns = s, .exit_ns = s + 80 * MS };

		assert_non_null(c);
		c->phases[INFER] = (struct model_cycle_phase){ .present = true, .ms = 80, .thread_ms = 80, .calls = 1 };
		assert_int_equal(model__add_call_ms(m, INFER, 80), 0);
		assert_int_equal(model__add_phase_call(m, &call), 0);
		if (sync_phase) {
			c->phases[SYNC] = (struct model_cycle_phase){ .present = true, .ms = 40, .thread_ms = 40, .calls = 1 };
			assert_int_equal(model__add_call_ms(m, SYNC, 40), 0);
		}
	}
	m->run.end_ns = 1000 * MS + NCYCLES * 100 * MS;
	m->run.duration_s = NCYCLES * 0.1;
	m->run.stop_reason = strdup("target exited");
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
	assert_int_equal(model__derive(m), 0);
}

static struct model_gpu_figures *add_fig(void *vec, uint32_t device, uint32_t phase, double window_ms)
{
	VEC_OF(struct model_gpu_figures) *v = vec;
	struct model_gpu_figures *f;

	assert_int_equal(VEC_RESERVE(v->v, v->cap, v->n, 4), 0);
	f = &v->v[v->n++];
	*f = (struct model_gpu_figures){ .device = device, .phase = phase, .window_ms = window_ms };
	return f;
}

static void add_top(struct model *m, struct model_gpu_figures *f, const char *name, uint64_t count, double ms)
{
	assert_int_equal(VEC_RESERVE(f->top.v, f->top.cap, f->top.n, 4), 0);
	f->top.v[f->top.n++] = (struct model_gpu_kernel_total){ model__intern(m, name), count, ms };
}

static void add_idle_stack(struct model *m, struct model_gpu_figures *f, const char *stack, double ms)
{
	assert_int_equal(VEC_RESERVE(f->idle_stacks.v, f->idle_stacks.cap, f->idle_stacks.n, 4), 0);
	f->idle_stacks.v[f->idle_stacks.n++] = (struct model_gpu_idle_stack){ model__intern(m, stack), 10, ms };
}

/* The GPU timeline of device 0 over llm_inference (4 x 80 ms = 320 ms)
 * and the cycles (400 ms), and per cycle a quarter of it. */
struct gpu_case {
	double busy_ms, idle_ms, idle_host_ms, sync_ms, htod_ms;
	uint64_t kernels;
};

static void set_gpu(struct model *m, const struct gpu_case *k)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	struct model_gpu_figures *f;

	a->present = true;
	a->source = "cupti";
	a->sample_every = 1;
	a->kernels = k->kernels;
	for (int w = 0; w < 2; w++) {
		f = add_fig(&a->figures, 0, w ? INFER : 0, w ? 320 : 400);
		f->busy_ms = k->busy_ms;
		f->active_ms = k->busy_ms + k->htod_ms;
		f->idle_ms = k->idle_ms;
		f->idle_host_ms = k->idle_host_ms;
		f->sync_ms = k->sync_ms;
		f->kernels = k->kernels;
		if (k->htod_ms > 0)
			f->copies[IT_GPU_DIR_HTOD] = (struct model_gpu_dir_total){ 8, 8 * 8388608ull, k->htod_ms };
		add_top(m, f, "gemm_kernel(float*)", k->kernels, k->busy_ms);
		if (k->idle_host_ms > 0)
			add_idle_stack(m, f, "exp;main;run_cycle;tokenize", k->idle_host_ms);
	}
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		c->gpu.present = true;
		/* the cycle (100 ms) and its llm_inference (80 ms): a quarter of the run's */
		for (int w = 0; w < 2; w++) {
			f = add_fig(&c->gpu.figures, 0, w ? INFER : 0, w ? 80 : 100);
			f->busy_ms = k->busy_ms / NCYCLES;
			f->active_ms = (k->busy_ms + k->htod_ms) / NCYCLES;
			f->idle_ms = k->idle_ms / NCYCLES;
			f->kernels = k->kernels / NCYCLES;
			f->idle_host_ms = k->idle_host_ms / NCYCLES;
			f->sync_ms = k->sync_ms / NCYCLES;
			if (k->htod_ms > 0)
				f->copies[IT_GPU_DIR_HTOD] = (struct model_gpu_dir_total){ 2, 2 * 8388608ull,
											   k->htod_ms / NCYCLES };
		}
	}
}

/* The GPU parts, freed here and left empty: model__free frees the rest. */
static void gpu_free(struct model *m)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	for (size_t i = 0; i < a->figures.n; i++) {
		free(a->figures.v[i].top.v);
		free(a->figures.v[i].idle_stacks.v);
	}
	free(a->figures.v);
	free(a->ops.v);
	free(a->processes.v);
	folded__free(&a->folded);
	for (size_t i = 0; i < m->ncycles; i++) {
		for (size_t j = 0; j < m->cycles[i].gpu.figures.n; j++) {
			free(m->cycles[i].gpu.figures.v[j].top.v);
			free(m->cycles[i].gpu.figures.v[j].idle_stacks.v);
		}
		free(m->cycles[i].gpu.figures.v);
		m->cycles[i].gpu = (struct model_gpu_cycle){ 0 };
	}
	*a = (struct model_gpu_activity){ 0 };
}

static void evaluate(struct model *m)
{
	struct rule_thresholds t;

	rule_thresholds__defaults(&t);
	assert_int_equal(rules__evaluate(m, &t), 0);
}

static const struct model_finding *finding(const struct model *m, const char *type)
{
	for (size_t i = 0; i < m->nfindings; i++)
		if (!strcmp(m->findings[i].type, type))
			return &m->findings[i];
	return NULL;
}

static const struct model_recommendation *rec(const struct model *m, const char *title)
{
	for (size_t i = 0; i < m->nrecs; i++)
		if (!strcmp(m->recs[i].title, title))
			return &m->recs[i];
	return NULL;
}

/* A figure of a finding's evidence, which it must have. */
static double ev_num(double v)
{
	assert_true(isfinite(v));
	return v;
}

/* Evaluates a model with case k; the findings of the GPU types it got. */
static void judge(struct model *m, const struct gpu_case *k, bool sync_phase)
{
	start(m, sync_phase);
	set_gpu(m, k);
	evaluate(m);
}

static void done(struct model *m)
{
	gpu_free(m);
	model__free(m);
}

static void test_gpu_bound(void **state)
{
	struct model m;
	const struct model_finding *f;

	(void)state;
	judge(&m, &(struct gpu_case){ .busy_ms = 288, .idle_ms = 32, .kernels = 400 }, false);
	f = finding(&m, "gpu_bound");
	assert_non_null(f);
	assert_float_equal(f->percentage_of_cycle, 90, 1e-9);
	assert_string_equal(f->severity, "medium"); /* 90 / 80 */
	assert_float_equal(ev_num(f->evidence.busy_percent), 90, 1e-9);
	assert_float_equal(ev_num(f->evidence.window_ms), 320, 1e-9);
	assert_float_equal(ev_num(f->evidence.kernels_per_cycle), 100, 1e-9);
	assert_string_equal(model__name(&m, f->evidence.window), "llm_inference");
	assert_string_equal(model__name(&m, f->evidence.from), "GPU timeline (CUPTI activity)");
	assert_true(f->evidence.has_top_kernel);
	assert_string_equal(model__name(&m, f->evidence.top_kernel.name), "gemm_kernel(float*)");
	assert_null(finding(&m, "launch_bound"));
	assert_null(finding(&m, "transfer_bound"));
	assert_null(finding(&m, "sync_bound"));
	assert_non_null(rec(&m, "Make the GPU's work cheaper"));
	done(&m);

	/* 70% busy: under gpu_busy_pct (80) */
	judge(&m, &(struct gpu_case){ .busy_ms = 224, .idle_ms = 96, .kernels = 400 }, false);
	assert_null(finding(&m, "gpu_bound"));
	done(&m);
}

static void test_launch_bound(void **state)
{
	const struct model_recommendation *r;
	const struct model_finding *f;
	struct model m;

	(void)state;
	/* idle 160 of 320 ms while the host ran: 50% */
	judge(&m, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .idle_host_ms = 160, .kernels = 400 }, false);
	f = finding(&m, "launch_bound");
	assert_non_null(f);
	assert_float_equal(f->percentage_of_cycle, 50, 1e-9);
	assert_string_equal(f->severity, "critical"); /* 50 / 30 */
	assert_float_equal(ev_num(f->evidence.idle_host_ms), 160, 1e-9);
	assert_true(f->evidence.has_top_idle_stack);
	assert_string_equal(model__name(&m, f->evidence.top_idle_stack.name), "exp;main;run_cycle;tokenize");
	assert_null(finding(&m, "gpu_bound"));
	r = rec(&m, "Launch the step's kernels at once");
	assert_non_null(r);
	assert_string_equal(r->current_value, "100 kernels per cycle; GPU 0 idle 50% of llm_inference while the host ran");
	r = rec(&m, "Move host work off the launching thread");
	assert_non_null(r);
	assert_string_equal(r->current_value, "GPU 0 idle 160.0 ms while the launching thread ran tokenize");
	done(&m);

	/* 8 kernels per cycle: no CUDA graph advice, the host stack's alone */
	judge(&m, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .idle_host_ms = 160, .kernels = 32 }, false);
	assert_non_null(finding(&m, "launch_bound"));
	assert_null(rec(&m, "Launch the step's kernels at once"));
	assert_non_null(rec(&m, "Move host work off the launching thread"));
	done(&m);

	/* 20%: under launch_idle_pct (30) */
	judge(&m, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .idle_host_ms = 64, .kernels = 400 }, false);
	assert_null(finding(&m, "launch_bound"));
	done(&m);
}

static void test_transfer_bound(void **state)
{
	const struct model_finding *f;
	struct model m;

	(void)state;
	/* copies 128 of 320 ms (40%), more than the kernels' 64 */
	judge(&m, &(struct gpu_case){ .busy_ms = 64, .idle_ms = 128, .htod_ms = 128, .kernels = 40 }, false);
	f = finding(&m, "transfer_bound");
	assert_non_null(f);
	assert_float_equal(f->percentage_of_cycle, 40, 1e-9);
	assert_float_equal(ev_num(f->evidence.copy_ms), 128, 1e-9);
	assert_true(f->evidence.has_copies);
	assert_int_equal(f->evidence.copies[IT_GPU_DIR_HTOD].bytes, 8 * 8388608);
	assert_non_null(rec(&m, "Copy less, in fewer and larger transfers"));
	done(&m);

	/* the same copies beside 160 ms of kernels: not transfer-bound */
	judge(&m, &(struct gpu_case){ .busy_ms = 160, .idle_ms = 32, .htod_ms = 128, .kernels = 40 }, false);
	assert_null(finding(&m, "transfer_bound"));
	done(&m);
}

static void test_sync_bound(void **state)
{
	const struct model_recommendation *r;
	const struct model_finding *f;
	struct model m;

	(void)state;
	/* waits 128 of 320 ms (40%); idle 200, 40 of it host: 160 >= 64 */
	start(&m, false);
	for (size_t i = 0; i < m.ncycles; i++)
		m.cycles[i].cuda = (struct model_cuda_totals){ .present = true, .sync_calls = 3 };
	set_gpu(&m, &(struct gpu_case){ .busy_ms = 120, .idle_ms = 200, .idle_host_ms = 40, .sync_ms = 128,
					.kernels = 40 });
	evaluate(&m);
	f = finding(&m, "sync_bound");
	assert_non_null(f);
	assert_float_equal(f->percentage_of_cycle, 40, 1e-9);
	assert_float_equal(ev_num(f->evidence.syncs_per_cycle), 3, 1e-9);
	r = rec(&m, "Remove per-step synchronizations");
	assert_non_null(r);
	assert_string_equal(r->current_value, "3.0 syncs per cycle; waits 40% of llm_inference with GPU 0 idle");
	done(&m);

	/* the GPU idle mostly while the host ran (180 of 200): the waits are not why */
	judge(&m, &(struct gpu_case){ .busy_ms = 120, .idle_ms = 200, .idle_host_ms = 180, .sync_ms = 128,
				      .kernels = 40 }, false);
	assert_null(finding(&m, "sync_bound"));
	done(&m);
}

/* The sync-phase gpu_bound stands without the timeline; with it, the
 * timeline decides. */
static void test_old_gpu_bound_gives_way(void **state)
{
	struct model m;

	(void)state;
	start(&m, true);
	evaluate(&m);
	assert_non_null(finding(&m, "gpu_bound"));
	assert_int_equal(finding(&m, "gpu_bound")->evidence.from, -1);
	done(&m);
	judge(&m, &(struct gpu_case){ .busy_ms = 160, .idle_ms = 160, .kernels = 40 }, true);
	assert_null(finding(&m, "gpu_bound"));
	done(&m);
}

static char *report_of(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	gpu_view__print(f, m);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_report_section(void **state)
{
	struct model m;
	char *t;

	(void)state;
	judge(&m, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .idle_host_ms = 160, .htod_ms = 12,
				      .kernels = 400 }, false);
	t = report_of(&m);
	assert_non_null(strstr(t, "GPU (CUPTI activity: 400 kernels"));
	/* the cycles' window: 400 ms */
	assert_non_null(strstr(t, "GPU 0: busy 24.0% (96.00 ms), active 27.0%, idle 56.0% of 400.00 ms of cycles; "
				  "100.0 kernels per cycle\n"));
	assert_non_null(strstr(t, "copies HtoD: 8, 64.0 MiB, 12.00 ms\n"));
	assert_non_null(strstr(t, "400  gemm_kernel\n"));
	assert_non_null(strstr(t, "llm_inference             96.00     224.00   30.0%        400\n"));
	assert_non_null(strstr(t, "GPU idle while the host ran: llm_inference, 160.00 ms\n"));
	assert_non_null(strstr(t, "160.00 ms  exp;main;run_cycle;tokenize\n"));
	free(t);
	/* NVML: the busy figure alone */
	m.gpu_activity.source = "nvml";
	t = report_of(&m);
	assert_non_null(strstr(t, "GPU (nvml utilization samples):\n  GPU 0: busy 24.0% (96.00 ms) of 400.00 ms of cycles\n"));
	assert_null(strstr(t, "kernels"));
	free(t);
	done(&m);
}

/* diff__compare's output, from a temporary file standing in for stdout */
static char *diff_of(const struct model *b, const struct model *n)
{
	char path[] = "/tmp/infertrace-gpudiff-XXXXXX", *text;
	int fd = mkstemp(path), saved = dup(1);

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	assert_true(dup2(fd, 1) >= 0);
	diff__compare(b, n, 5);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	text = th_read_file(path);
	unlink(path);
	assert_non_null(text);
	return text;
}

static void test_diff_rows(void **state)
{
	struct model b, n;
	char *t;

	(void)state;
	judge(&b, &(struct gpu_case){ .busy_ms = 288, .idle_ms = 32, .kernels = 400 }, false);
	judge(&n, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .idle_host_ms = 160, .kernels = 200 }, false);
	t = diff_of(&b, &n);
	assert_non_null(strstr(t, "gpu0 busy_ms/cycle                 72.000       24.000     -66.7%"));
	assert_non_null(strstr(t, "gpu0 idle_ms/cycle                  8.000       56.000    +600.0%"));
	assert_non_null(strstr(t, "gpu0 kernels/cycle                100.000       50.000     -50.0%"));
	assert_non_null(strstr(t, "GPU verdicts: base gpu_bound (GPU 0); new launch_bound (GPU 0)\n"));
	free(t);
	/* without the GPU figures on one side: no GPU row */
	gpu_free(&n);
	t = diff_of(&b, &n);
	assert_null(strstr(t, "gpu0"));
	assert_null(strstr(t, "GPU verdicts"));
	free(t);
	done(&b);
	done(&n);
}

/* Two kernels on stream 7 and a copy on stream 9 of device 0, launched by
 * thread 101 of pid 100 in cycle 1's llm_inference. */
static void add_ops(struct model *m)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	uint64_t c1 = 1100 * MS;
	const struct model_gpu_op ops[] = {
		{ .what = MODEL_GPU_KERNEL, .device = 0, .stream = 7, .correlation = 11, .start_ns = c1 + 2 * MS,
		  .end_ns = c1 + 3 * MS + 500000, .name = model__intern(m, "gemm_kernel(float*)"), .tgid = 100,
		  .tid = 101, .launch_ns = c1 + 1 * MS, .cycle = 1, .phase = INFER, .launch_stack = -1 },
		{ .what = MODEL_GPU_COPY, .dir = IT_GPU_DIR_HTOD, .device = 0, .stream = 9, .correlation = 12,
		  .start_ns = c1 + 4 * MS, .end_ns = c1 + 5 * MS, .bytes = 8388608, .name = -1, .tgid = 100,
		  .tid = 101, .launch_ns = c1 + 3 * MS, .cycle = 1, .phase = INFER, .launch_stack = -1 },
		/* starts before the first ends on the same stream: clipped */
		{ .what = MODEL_GPU_KERNEL, .device = 0, .stream = 7, .correlation = 13, .start_ns = c1 + 3 * MS,
		  .end_ns = c1 + 6 * MS, .name = model__intern(m, "softmax"), .tgid = 100, .tid = 0, .cycle = -1,
		  .launch_stack = -1 },
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		assert_int_equal(VEC_RESERVE(a->ops.v, a->ops.cap, a->ops.n, 4), 0);
		a->ops.v[a->ops.n++] = ops[i];
	}
	assert_int_equal(folded__add(&a->folded, "exp;main;run_cycle;launch;gemm_kernel(float*)", 1500), 0);
	assert_int_equal(folded__add(&a->folded, "exp;main;run_cycle;launch;softmax", 3000), 0);
}

static json_t *event(json_t *events, const char *ph, const char *name)
{
	json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
		    (!name || !strcmp(json_string_value(json_object_get(e, "name")), name)))
			return e;
	return NULL;
}

static json_t *meta(json_t *events, const char *what, int pid, int tid)
{
	json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "ph")), "M") &&
		    !strcmp(json_string_value(json_object_get(e, "name")), what) &&
		    json_integer_value(json_object_get(e, "pid")) == pid &&
		    (tid < 0 || json_integer_value(json_object_get(e, "tid")) == tid))
			return json_object_get(json_object_get(e, "args"), "name");
	return NULL;
}

static void test_trace_and_folded(void **state)
{
	char *dir = th_tmpdir_new("gpuviews"), path[512], *text;
	json_t *trace, *events, *e, *args, *s, *f;
	json_error_t jerr;
	struct model m;

	(void)state;
	start(&m, false);
	set_gpu(&m, &(struct gpu_case){ .busy_ms = 96, .idle_ms = 224, .kernels = 8 });
	add_ops(&m);
	evaluate(&m);
	assert_int_equal(outputs__write_all(&m, dir), 0);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	trace = json_load_file(path, 0, &jerr);
	assert_non_null(trace);
	events = json_object_get(trace, "traceEvents");
	assert_string_equal(json_string_value(meta(events, "process_name", TRACE_GPU_PID_BASE, -1)), "GPU 0");
	assert_string_equal(json_string_value(meta(events, "thread_name", TRACE_GPU_PID_BASE, 7)), "stream 7");
	assert_string_equal(json_string_value(meta(events, "thread_name", TRACE_GPU_PID_BASE, 9)), "stream 9");
	assert_non_null(meta(events, "thread_name", 100, 101)); /* the launching thread's track */
	e = event(events, "X", "gemm_kernel(float*)");
	assert_non_null(e);
	assert_string_equal(json_string_value(json_object_get(e, "cat")), "gpu");
	assert_int_equal(json_integer_value(json_object_get(e, "pid")), TRACE_GPU_PID_BASE);
	assert_int_equal(json_integer_value(json_object_get(e, "tid")), 7);
	assert_int_equal(json_integer_value(json_object_get(e, "ts")), 102000);
	assert_int_equal(json_integer_value(json_object_get(e, "dur")), 1500);
	args = json_object_get(e, "args");
	assert_int_equal(json_integer_value(json_object_get(args, "correlation")), 11);
	assert_int_equal(json_integer_value(json_object_get(args, "launch_tid")), 101);
	assert_int_equal(json_integer_value(json_object_get(args, "cycle")), 1);
	assert_string_equal(json_string_value(json_object_get(args, "phase")), "llm_inference");
	e = event(events, "X", "memcpy HtoD 8.0 MiB");
	assert_non_null(e);
	assert_int_equal(json_integer_value(json_object_get(e, "tid")), 9);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "bytes")), 8388608);
	/* the overlapping kernel starts where the first ended */
	e = event(events, "X", "softmax");
	assert_non_null(e);
	assert_int_equal(json_integer_value(json_object_get(e, "ts")), 103500);
	assert_int_equal(json_integer_value(json_object_get(e, "dur")), 2500);
	assert_true(json_is_true(json_object_get(json_object_get(e, "args"), "clipped")));
	assert_true(json_is_null(json_object_get(json_object_get(e, "args"), "cycle")));
	/* the first launch's flow: from thread 101 at 101 ms to the kernel */
	s = event(events, "s", "launch");
	f = event(events, "f", "launch");
	assert_non_null(s);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(s, "id")), json_integer_value(json_object_get(f, "id")));
	assert_int_equal(json_integer_value(json_object_get(s, "tid")), 101);
	assert_int_equal(json_integer_value(json_object_get(s, "ts")), 101000);
	assert_int_equal(json_integer_value(json_object_get(f, "ts")), 102000);
	json_decref(trace);
	/* gpu.folded */
	snprintf(path, sizeof(path), "%s/gpu.folded", dir);
	text = th_read_file(path);
	assert_non_null(text);
	assert_string_equal(text, "exp;main;run_cycle;launch;gemm_kernel(float*) 1500\n"
				  "exp;main;run_cycle;launch;softmax 3000\n");
	free(text);
	/* report.html's section */
	snprintf(path, sizeof(path), "%s/report.html", dir);
	text = th_read_file(path);
	assert_non_null(strstr(text, "<h2>GPU</h2>\n<pre>GPU (CUPTI activity: 8 kernels"));
	free(text);
	done(&m);
	th_rm_tree(dir);
	free(dir);
}

/* No GPU timeline: no GPU events, no gpu.folded. */
static void test_no_gpu_no_tracks(void **state)
{
	char *dir = th_tmpdir_new("gpuviews"), path[512], *text;
	struct model m;

	(void)state;
	start(&m, false);
	evaluate(&m);
	assert_int_equal(outputs__write_all(&m, dir), 0);
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	text = th_read_file(path);
	assert_non_null(text);
	assert_null(strstr(text, "\"cat\":\"gpu\""));
	free(text);
	snprintf(path, sizeof(path), "%s/gpu.folded", dir);
	assert_int_equal(access(path, F_OK), -1);
	done(&m);
	th_rm_tree(dir);
	free(dir);
}

static void test_live(void **state)
{
	struct model m;
	char line[256], *t;

	(void)state;
	start(&m, false);
	gpu_view__live_line(&m, line, sizeof(line));
	assert_string_equal(line, "");
	t = metrics__render(&m);
	assert_null(strstr(t, "infertrace_gpu"));
	free(t);
	set_gpu(&m, &(struct gpu_case){ .busy_ms = 288, .idle_ms = 32, .idle_host_ms = 8, .kernels = 400 });
	gpu_view__live_line(&m, line, sizeof(line));
	assert_string_equal(line, "GPU 0 busy 72% of 100.0 ms, 100 kernels, idle while the host ran 2.0 ms (last cycle)");
	t = metrics__render(&m);
	assert_non_null(strstr(t, "# TYPE infertrace_gpu_busy_ratio gauge\n"));
	assert_non_null(strstr(t, ",device=\"0\"} 0.71999999999999997\n"));
	assert_non_null(strstr(t, "infertrace_gpu_kernels_per_cycle{"));
	assert_non_null(strstr(t, ",device=\"0\"} 100\n"));
	free(t);
	done(&m);
}

/* Kernel names for one line, from names an H200 gave under torch 2.11. */
static void test_short_kernel_names(void **state)
{
	char b[160];

	(void)state;
	assert_string_equal(gpu_view__short_kernel("void at::native::vectorized_elementwise_kernel<8, at::native::"
						   "(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&)"
						   "::{lambda()#1}, std::array<char*, 2ul> >(int, std::array<char*, 2ul>)",
						   b, sizeof(b)),
			    "at::native::vectorized_elementwise_kernel");
	assert_string_equal(gpu_view__short_kernel("void at::native::(anonymous namespace)::distribution_elementwise_"
						   "grid_stride_kernel<float, 4>(long, at::PhiloxCudaState)", b, sizeof(b)),
			    "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel");
	assert_string_equal(gpu_view__short_kernel("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", b, sizeof(b)),
			    "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
	assert_string_equal(gpu_view__short_kernel("gemm_large(float*, float*, int)", b, sizeof(b)), "gemm_large");
	assert_string_equal(gpu_view__short_kernel(NULL, b, sizeof(b)), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_kernel_names),
		cmocka_unit_test(test_gpu_bound),
		cmocka_unit_test(test_launch_bound),
		cmocka_unit_test(test_transfer_bound),
		cmocka_unit_test(test_sync_bound),
		cmocka_unit_test(test_old_gpu_bound_gives_way),
		cmocka_unit_test(test_report_section),
		cmocka_unit_test(test_diff_rows),
		cmocka_unit_test(test_trace_and_folded),
		cmocka_unit_test(test_no_gpu_no_tracks),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
