// SPDX-License-Identifier: BSD-2-Clause
/* GPU activity joined to cycles and phases (analysis/gpu_join.c) on a
 * hand-built model whose figures are worked out below, and the channel's
 * reader (core/gpu_reader.c) fed well-formed, garbage and truncated
 * records over its socket. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_join.h"
#include "gpu_reader.h"
#include "model.h"

#define MS 1000000ull
#define T0 1000000000ull /* the tracer's clock at CUPTI's 0 (pid 100) */
#define PREFILL 1
#define DECODE 2

static void op(struct model *m, uint8_t what, uint32_t dev, uint32_t corr, uint64_t from_ms, uint64_t to_ms,
	       const char *name)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	assert_int_equal(VEC_RESERVE(a->ops.v, a->ops.cap, a->ops.n, 16), 0);
	a->ops.v[a->ops.n++] = (struct model_gpu_op){
		.what = what, .device = dev, .correlation = corr, .tgid = 100, .name = -1, .cycle = -1,
		.launch_stack = -1, .cupti_start_ns = from_ms * MS, .cupti_end_ns = to_ms * MS,
		.mangled = name ? model__intern(m, name) : -1, .dir = what == MODEL_GPU_COPY ? IT_GPU_DIR_HTOD : 0,
		.bytes = what == MODEL_GPU_COPY ? 1048576 : 0,
	};
}

static void api(struct model *m, pid_t pid, uint32_t corr, uint32_t cbid, uint64_t from_ms, uint64_t to_ms)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	assert_int_equal(VEC_RESERVE(a->api.v, a->api.cap, a->api.n, 16), 0);
	a->api.v[a->api.n++] = (struct model_gpu_api){ .pid = pid, .tid = 101, .correlation = corr, .cbid = cbid,
						      .domain = IT_GPU_API_RUNTIME, .start_ns = from_ms * MS,
						      .end_ns = to_ms * MS };
}

static void calib(struct model *m, pid_t pid, uint64_t cupti, uint64_t mono)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	assert_int_equal(VEC_RESERVE(a->calib.v, a->calib.cap, a->calib.n, 16), 0);
	a->calib.v[a->calib.n++] = (struct model_gpu_calib){ pid, cupti, mono };
}

static void call(struct model *m, uint32_t phase, uint64_t from_ms, uint64_t to_ms)
{
	struct model_phase_call c = { .tgid = 100, .tid = 101, .phase = phase, .entry_ns = T0 + from_ms * MS,
				      .exit_ns = T0 + to_ms * MS };

	assert_int_equal(model__add_phase_call(m, &c), 0);
}

static void sample(struct model *m, uint64_t at_ms, const char *stack)
{
	struct model_trace_sample s = { .ts_ns = T0 + at_ms * MS, .tgid = 100, .tid = 101, .frame = -1,
					.stack = model__intern(m, stack) };

	assert_int_equal(model__add_trace_sample(m, &s), 0);
}

static const struct model_gpu_figures *fig(const struct model_gpu_figures *v, size_t n, uint32_t dev, uint32_t phase)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].device == dev && v[i].phase == phase)
			return &v[i];
	return NULL;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* Process 100, thread 101 launches everything; its CUPTI clock is the
 * tracer's less T0 (no drift). Cycle 0 is [0, 100] ms, cycle 1 [100, 200]
 * (from T0); prefill runs [0, 40], decode [40, 100] and [100, 200].
 *   corr 1, launch 10 (c0 prefill): kernel foo(int) dev 0 [12, 30]
 *   corr 2, launch 20 (c0 prefill): kernel foo(int) dev 0 [25, 35]
 *   corr 3, launch 50 (c0 decode):  1 MiB HtoD copy dev 0 [50, 52]
 *   corr 4, launch 60 (c0 decode):  kernel bar dev 0 [90, 110]: past c0's end
 *   corr 6: cudaDeviceSynchronize [70, 90]
 *   corr 5, launch 150 (c1 decode): kernel baz() dev 1 [150, 160]
 *   corr 99, no launch record:      kernel qux() dev 0 [120, 130]
 *   corr 7, launch 250 (no cycle):  kernel bar dev 0 [250, 255]
 * On-CPU samples of 101 (1 ms each) at 5 A, 38 B, 45 B, 60 A (idle gaps of
 * dev 0) and 95 C (dev 0 busy). */
static void build(struct model *m)
{
	struct model_cycle *c;

	model__init(m);
	assert_int_equal(model__set_phase_name(m, PREFILL, "prefill"), 0);
	assert_int_equal(model__set_phase_name(m, DECODE, "decode"), 0);
	m->samples.requested_hz = 1000;
	m->run.start_ns = T0;
	m->run.end_ns = T0 + 300 * MS;
	c = model__add_cycle(m, 100, 0, T0, T0 + 100 * MS);
	c->phases[PREFILL].present = c->phases[DECODE].present = true;
	c = model__add_cycle(m, 100, 1, T0 + 100 * MS, T0 + 200 * MS);
	c->phases[DECODE].present = true;
	call(m, PREFILL, 0, 40);
	call(m, DECODE, 40, 100);
	call(m, DECODE, 100, 200);
	calib(m, 100, 0, T0);
	calib(m, 100, 10000 * MS, T0 + 10000 * MS);
	/* another process: 2 µs of drift over 2 s (1 ppm); the middle pair is not fitted */
	calib(m, 200, 0, 5 * T0);
	calib(m, 200, 1000 * MS, 6 * T0 + 5000);
	calib(m, 200, 2000 * MS, 7 * T0 + 2000);
	op(m, MODEL_GPU_KERNEL, 0, 1, 12, 30, "_Z3fooi");
	op(m, MODEL_GPU_KERNEL, 0, 2, 25, 35, "_Z3fooi");
	op(m, MODEL_GPU_COPY, 0, 3, 50, 52, NULL);
	op(m, MODEL_GPU_KERNEL, 0, 4, 90, 110, "bar");
	op(m, MODEL_GPU_KERNEL, 1, 5, 150, 160, "_Z3bazv");
	op(m, MODEL_GPU_KERNEL, 0, 99, 120, 130, "_Z3quxv");
	op(m, MODEL_GPU_KERNEL, 0, 7, 250, 255, "bar");
	api(m, 100, 1, 211, 10, 11);
	api(m, 100, 2, 211, 20, 21);
	api(m, 100, 3, 31, 50, 51);
	api(m, 100, 4, 211, 60, 61);
	api(m, 100, 5, 211, 150, 151);
	api(m, 100, 6, 165, 70, 90);
	api(m, 100, 7, 211, 250, 251);
	sample(m, 5, "main;host_a");
	sample(m, 38, "main;host_b");
	sample(m, 45, "main;host_b");
	sample(m, 60, "main;host_a");
	sample(m, 95, "main;host_c");
}

static void test_clock_fit(void **state)
{
	struct model m;
	struct gpu_clock_fit f;

	(void)state;
	build(&m);
	gpu_join__fit(m.gpu_activity.calib.v, m.gpu_activity.calib.n, 200, &f);
	assert_true(f.calibrated);
	assert_int_equal(f.clock.pairs, 3);
	NEAR(f.clock.offset_ns, 5e9);
	NEAR(f.clock.drift_us, 2.0);
	NEAR(f.clock.drift_ppm, 1.0);
	assert_int_equal(gpu_join__map(&f, 1000 * MS), 6 * T0 + 1000);
	gpu_join__fit(m.gpu_activity.calib.v, m.gpu_activity.calib.n, 300, &f);
	assert_false(f.calibrated);
	assert_int_equal(gpu_join__map(&f, 1234), 1234);
	assert_true(gpu_join__is_sync(IT_GPU_API_RUNTIME, 165));
	assert_true(gpu_join__is_sync(IT_GPU_API_DRIVER, 17));
	assert_false(gpu_join__is_sync(IT_GPU_API_RUNTIME, 211));
	model__free(&m);
}

static void test_join_ops(void **state)
{
	struct model m;
	const struct model_gpu_activity *a = &m.gpu_activity;

	(void)state;
	build(&m);
	assert_int_equal(gpu_join__derive(&m), 0);
	assert_int_equal(a->kernels, 6);
	assert_int_equal(a->copies, 1);
	assert_int_equal(a->api_records, 7);
	assert_int_equal(a->unattributed, 1);
	assert_string_equal(a->source, "cupti");
	/* the process with the most pairs gives the clock */
	assert_int_equal(a->clock.pairs, 3);
	NEAR(a->clock.drift_us, 2.0);
	/* sorted by (device, start) */
	assert_int_equal(a->ops.n, 7);
	for (size_t i = 1; i < a->ops.n; i++)
		assert_true(a->ops.v[i - 1].device < a->ops.v[i].device ||
			    (a->ops.v[i - 1].device == a->ops.v[i].device &&
			     a->ops.v[i - 1].start_ns <= a->ops.v[i].start_ns));
	/* dev 0 [12, 30]: foo(int), cycle 0, prefill, launched at 10 */
	assert_int_equal(a->ops.v[0].start_ns, T0 + 12 * MS);
	assert_string_equal(model__name(&m, a->ops.v[0].name), "foo(int)");
	assert_int_equal(a->ops.v[0].cycle, 0);
	assert_int_equal(a->ops.v[0].phase, PREFILL);
	assert_int_equal(a->ops.v[0].tid, 101);
	assert_int_equal(a->ops.v[0].launch_ns, T0 + 10 * MS);
	/* bar [90, 110]: launched in cycle 0's decode, whole */
	assert_int_equal(a->ops.v[3].cycle, 0);
	assert_int_equal(a->ops.v[3].phase, DECODE);
	assert_string_equal(model__name(&m, a->ops.v[3].name), "bar"); /* not mangled: kept */
	/* qux [120, 130]: no launch record */
	assert_int_equal(a->ops.v[4].tid, 0);
	assert_int_equal(a->ops.v[4].cycle, -1);
	/* bar [250, 255]: launched outside every cycle and phase */
	assert_int_equal(a->ops.v[5].tid, 101);
	assert_int_equal(a->ops.v[5].cycle, -1);
	assert_int_equal(a->ops.v[5].phase, 0);
	/* dev 1's baz() */
	assert_int_equal(a->ops.v[6].device, 1);
	assert_int_equal(a->ops.v[6].cycle, 1);
	/* gpu.folded: µs under the phase */
	assert_int_equal(a->folded.n, 5);
	for (size_t i = 0; i < a->folded.n; i++) {
		const struct folded_entry *e = &a->folded.entries[i];

		if (!strcmp(e->stack, "prefill;foo(int)"))
			assert_int_equal(e->count, 28000);
		else if (!strcmp(e->stack, "decode;bar"))
			assert_int_equal(e->count, 20000);
		else if (!strcmp(e->stack, "decode;baz()"))
			assert_int_equal(e->count, 10000);
		else if (!strcmp(e->stack, "[no phase];qux()"))
			assert_int_equal(e->count, 10000);
		else if (!strcmp(e->stack, "[no phase];bar"))
			assert_int_equal(e->count, 5000);
		else
			fail_msg("unexpected stack %s", e->stack);
	}
	model__free(&m);
}

static void launch(struct model *m, pid_t tid, uint64_t at_ns, const char *stack)
{
	struct model_gpu_activity *a = &m->gpu_activity;

	assert_int_equal(VEC_RESERVE(a->launches.v, a->launches.cap, a->launches.n, 16), 0);
	a->launches.v[a->launches.n++] = (struct model_gpu_launch){ 100, tid, at_ns, model__intern(m, stack) };
}

static int64_t folded_count(const struct folded *f, const char *stack)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->entries[i].stack, stack))
			return (int64_t)f->entries[i].count;
	return -1;
}

/* The cuda preset's launch events (tracer clock, sorted by tid and time)
 * against build()'s calls of thread 101 (1 [10, 11] ms, 2 [20, 21],
 * 3 [50, 51], 4 [60, 61], 6 [70, 90], 5 [150, 151], 7 [250, 251]).
 * A call's own event is its thread's last after its previous call's start,
 * up to 2 µs past its end:
 *   corr 1: an event 3 µs before its entry: attn
 *   corr 2: one 2 ms before and one 1 µs past the end (the clock map's
 *            error): the later, mlp
 *   corr 4: one before the previous call (3) started: not it; another
 *            thread's (102): not it either: none
 *   corr 5: one 79.6 ms before its entry (a thread preempted between the
 *            probe and the call), after the previous call (6, a
 *            synchronize) started: near
 *   corr 7: one 30 µs past the end (the next launch's): none */
static void test_launch_stacks(void **state)
{
	struct model m, copy;
	const struct folded *f;

	(void)state;
	build(&m);
	launch(&m, 101, T0 + 10 * MS - 3000, "run (a.py);attn (a.py)");
	launch(&m, 101, T0 + 18 * MS, "run (a.py);preempted (a.py)");
	launch(&m, 101, T0 + 21 * MS + 1000, "run (a.py);mlp (a.py)");
	launch(&m, 101, T0 + 50 * MS - 10000, "run (a.py);before (a.py)");
	launch(&m, 101, T0 + 70 * MS + 400000, "run (a.py);near (a.py)");
	launch(&m, 101, T0 + 251 * MS + 30000, "run (a.py);late (a.py)");
	launch(&m, 102, T0 + 60 * MS, "other (a.py)");
	assert_int_equal(gpu_join__derive(&m), 0);
	f = &m.gpu_activity.folded;
	/* PHASE;LAUNCH STACK;kernel, whole kernels in µs */
	assert_int_equal(folded_count(f, "prefill;run (a.py);attn (a.py);foo(int)"), 18000);
	assert_int_equal(folded_count(f, "prefill;run (a.py);mlp (a.py);foo(int)"), 10000);
	assert_int_equal(folded_count(f, "decode;run (a.py);near (a.py);baz()"), 10000);
	/* no launch event of its thread in the call: under the phase alone */
	assert_int_equal(folded_count(f, "decode;bar"), 20000);
	assert_int_equal(folded_count(f, "[no phase];qux()"), 10000);
	assert_int_equal(folded_count(f, "[no phase];bar"), 5000);
	assert_int_equal(f->n, 6);
	assert_int_equal(gpu_join__launch_stack(&m.gpu_activity, 100, 101, T0 + 255 * MS, T0 + 301 * MS), -1);
	/* the bound is exclusive; the end's margin 2 µs */
	assert_int_equal(gpu_join__launch_stack(&m.gpu_activity, 100, 101, T0 + 18 * MS, T0 + 20 * MS), -1);
	assert_int_equal(gpu_join__launch_stack(&m.gpu_activity, 100, 101, T0 + 18 * MS - 1, T0 + 18 * MS - 2000),
			 model__intern(&m, "run (a.py);preempted (a.py)"));
	/* a snapshot's copy keeps the launches: the same gpu.folded */
	assert_int_equal(model__copy(&copy, &m), 0);
	assert_int_equal(copy.gpu_activity.launches.n, 7);
	assert_ptr_not_equal(copy.gpu_activity.launches.v, m.gpu_activity.launches.v);
	assert_int_equal(gpu_join__derive(&copy), 0);
	assert_int_equal(folded_count(&copy.gpu_activity.folded, "prefill;run (a.py);attn (a.py);foo(int)"), 18000);
	assert_int_equal(folded_count(&copy.gpu_activity.folded, "decode;run (a.py);near (a.py);baz()"), 10000);
	model__free(&copy);
	model__free(&m);
}

/* Native launch stacks (cuda.c folds them as stacks.folded does, less
 * the process name) join as the Python ones do: build()'s launch calls 1
 * and 4 from launch_a, 2 from launch_b, each event at its call's entry;
 * another thread's (102) native launch inside call 2 is not its. Each
 * kernel's whole time goes under its phase and native stack. */
static void test_native_launch_stacks(void **state)
{
	const char *a = "__libc_start_call_main;main;run_cycle;launch_a;cuLaunchKernel";
	const char *b = "__libc_start_call_main;main;run_cycle;launch_b;cudaLaunchKernel";
	char want[256];
	struct model m;
	const struct folded *f;

	(void)state;
	build(&m);
	launch(&m, 101, T0 + 10 * MS, a);
	launch(&m, 101, T0 + 20 * MS, b);
	launch(&m, 101, T0 + 60 * MS, a);
	launch(&m, 102, T0 + 20 * MS + 500, "main;worker;cuLaunchKernel");
	assert_int_equal(gpu_join__derive(&m), 0);
	f = &m.gpu_activity.folded;
	snprintf(want, sizeof(want), "prefill;%s;foo(int)", a);
	assert_int_equal(folded_count(f, want), 18000);
	snprintf(want, sizeof(want), "prefill;%s;foo(int)", b);
	assert_int_equal(folded_count(f, want), 10000);
	snprintf(want, sizeof(want), "decode;%s;bar", a);
	assert_int_equal(folded_count(f, want), 20000);
	/* no event in their calls: under the phase alone */
	assert_int_equal(folded_count(f, "decode;baz()"), 10000);
	assert_int_equal(folded_count(f, "[no phase];bar"), 5000);
	assert_int_equal(folded_count(f, "[no phase];qux()"), 10000);
	assert_int_equal(f->n, 6);
	for (size_t i = 0; i < f->n; i++)
		assert_null(strstr(f->entries[i].stack, "worker"));
	model__free(&m);
}

static void test_cycle_figures(void **state)
{
	struct model m;
	const struct model_gpu_figures *f;
	const struct model_gpu_cycle *c0, *c1;

	(void)state;
	build(&m);
	assert_int_equal(gpu_join__derive(&m), 0);
	c0 = &m.cycles[0].gpu;
	c1 = &m.cycles[1].gpu;
	assert_true(c0->present);
	/* cycle 0, dev 0: busy [12, 35] + bar's 20 (whole); active [12, 35],
	 * [50, 52], [90, 100]; gaps [0, 12], [35, 50], [52, 90] hold 4 samples */
	f = fig(c0->figures.v, c0->figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->window_ms, 100);
	NEAR(f->busy_ms, 43);
	NEAR(f->active_ms, 35);
	NEAR(f->idle_ms, 65);
	assert_int_equal(f->kernels, 3);
	assert_int_equal(f->copies[IT_GPU_DIR_HTOD].count, 1);
	assert_int_equal(f->copies[IT_GPU_DIR_HTOD].bytes, 1048576);
	NEAR(f->copies[IT_GPU_DIR_HTOD].ms, 2);
	/* the gaps less the thread's sync [70, 90]: 12 + 15 + 18 */
	NEAR(f->idle_host_ms, 45);
	NEAR(f->sync_ms, 20);
	assert_int_equal(f->top.n, 2);
	assert_string_equal(model__name(&m, f->top.v[0].name), "foo(int)");
	assert_int_equal(f->top.v[0].count, 2);
	NEAR(f->top.v[0].ms, 28);
	assert_string_equal(model__name(&m, f->top.v[1].name), "bar");
	assert_int_equal(f->idle_stacks.n, 2);
	assert_int_equal(f->idle_stacks.v[0].samples, 2);
	assert_int_equal(f->idle_stacks.v[1].samples, 2);
	NEAR(f->idle_stacks.v[0].ms, 2);
	/* dev 1 did nothing in cycle 0 */
	assert_null(fig(c0->figures.v, c0->figures.n, 1, 0));
	/* prefill [0, 40]: foo's union; gaps [0, 12], [35, 40]: samples at 5, 38 */
	f = fig(c0->figures.v, c0->figures.n, 0, PREFILL);
	assert_non_null(f);
	NEAR(f->window_ms, 40);
	NEAR(f->busy_ms, 23);
	NEAR(f->active_ms, 23);
	NEAR(f->idle_ms, 17);
	NEAR(f->idle_host_ms, 17);
	NEAR(f->sync_ms, 0);
	assert_int_equal(f->kernels, 2);
	/* decode [40, 100]: the copy and bar */
	f = fig(c0->figures.v, c0->figures.n, 0, DECODE);
	assert_non_null(f);
	NEAR(f->window_ms, 60);
	NEAR(f->busy_ms, 20);
	NEAR(f->active_ms, 12);
	NEAR(f->idle_ms, 48);
	/* gaps [40, 50], [52, 90] less the sync [70, 90] */
	NEAR(f->idle_host_ms, 28);
	NEAR(f->sync_ms, 20);
	assert_int_equal(f->kernels, 1);
	/* cycle 1, dev 0: nothing launched in it; bar's tail [100, 110] and
	 * the unmatched qux [120, 130] keep it active 20 ms */
	f = fig(c1->figures.v, c1->figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 0);
	NEAR(f->active_ms, 20);
	NEAR(f->idle_ms, 80);
	assert_int_equal(f->kernels, 0);
	NEAR(f->idle_host_ms, 0);
	f = fig(c1->figures.v, c1->figures.n, 1, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 10);
	NEAR(f->active_ms, 10);
	NEAR(f->idle_ms, 90);
	f = fig(c1->figures.v, c1->figures.n, 1, DECODE);
	assert_non_null(f);
	NEAR(f->window_ms, 100);
	NEAR(f->busy_ms, 10);
	model__free(&m);
}

/* GPU idle while the host thread was blocked (an off-CPU interval, say a
 * read) is not host code: 101 blocked [52, 60] in cycle 0's decode. */
static void test_idle_host_less_blocked(void **state)
{
	struct model_offcpu_interval b = { .start_ns = T0 + 52 * MS, .end_ns = T0 + 60 * MS, .tgid = 100, .tid = 101,
					   .phase = DECODE, .kstack_id = -1, .stack = -1 };
	struct model m;
	const struct model_gpu_figures *f;

	(void)state;
	build(&m);
	assert_int_equal(model__add_offcpu_interval(&m, &b), 0);
	assert_int_equal(gpu_join__derive(&m), 0);
	f = fig(m.cycles[0].gpu.figures.v, m.cycles[0].gpu.figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->idle_host_ms, 45 - 8);
	f = fig(m.cycles[0].gpu.figures.v, m.cycles[0].gpu.figures.n, 0, DECODE);
	assert_non_null(f);
	NEAR(f->idle_host_ms, 28 - 8);
	model__free(&m);
}

static void test_run_figures_and_copy(void **state)
{
	struct model m, copy;
	const struct model_gpu_figures *f;

	(void)state;
	build(&m);
	assert_int_equal(gpu_join__derive(&m), 0);
	/* the run over its cycles [0, 200], dev 0: the kernels launched in
	 * them [12, 35], [90, 110] (qux, unmatched, and the bar launched at
	 * 250 are in no cycle); all work clipped: those, the copy [50, 52]
	 * and qux [120, 130] */
	f = fig(m.gpu_activity.figures.v, m.gpu_activity.figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->window_ms, 200);
	NEAR(f->busy_ms, 43);
	NEAR(f->active_ms, 55);
	NEAR(f->idle_ms, 145);
	assert_int_equal(f->kernels, 3);
	f = fig(m.gpu_activity.figures.v, m.gpu_activity.figures.n, 1, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 10);
	/* decode over the run: [40, 200] */
	f = fig(m.gpu_activity.figures.v, m.gpu_activity.figures.n, 0, DECODE);
	assert_non_null(f);
	NEAR(f->window_ms, 160);
	/* a snapshot's copy owns its vectors; a second derive gives the same */
	assert_int_equal(model__copy(&copy, &m), 0);
	assert_int_equal(gpu_join__derive(&copy), 0);
	f = fig(copy.cycles[0].gpu.figures.v, copy.cycles[0].gpu.figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 43);
	assert_int_equal(copy.gpu_activity.unattributed, 1);
	model__free(&copy);
	model__free(&m);
}

/* --cupti N: one window of process 100, [90, 210] ms, closed: cycle 0
 * ([0, 100]) began before it and is not recorded, cycle 1 ([100, 200]) is,
 * and the run's figures are cycle 1's alone. */
static void test_sampled_windows(void **state)
{
	struct model m;
	struct model_gpu_activity *a = &m.gpu_activity;
	const struct model_gpu_figures *f;

	(void)state;
	build(&m);
	assert_int_equal(VEC_RESERVE(a->windows.v, a->windows.cap, a->windows.n, 4), 0);
	a->windows.v[a->windows.n++] = (struct model_gpu_window){ .pid = 100, .start_ns = T0 + 90 * MS,
								   .end_ns = T0 + 210 * MS, .every = 3 };
	assert_int_equal(gpu_join__derive(&m), 0);
	assert_true(a->sampling);
	assert_int_equal(a->cycles_recorded, 1);
	assert_int_equal(a->nwindows, 1);
	NEAR(a->recorded_ms, 100);
	assert_false(m.cycles[0].gpu.present);
	assert_true(m.cycles[1].gpu.present);
	assert_true(m.cycles[1].gpu.sampled);
	f = fig(m.cycles[1].gpu.figures.v, m.cycles[1].gpu.figures.n, 1, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 10);
	/* the run: cycle 1's window [100, 200]; dev 0 launched nothing in it
	 * (bar was launched in cycle 0), its work clipped: bar [100, 110], qux
	 * [120, 130] */
	f = fig(a->figures.v, a->figures.n, 0, 0);
	assert_non_null(f);
	NEAR(f->window_ms, 100);
	assert_int_equal(f->kernels, 0);
	NEAR(f->busy_ms, 0);
	NEAR(f->active_ms, 20);
	f = fig(a->figures.v, a->figures.n, 1, 0);
	assert_non_null(f);
	NEAR(f->busy_ms, 10);
	assert_int_equal(f->kernels, 1);
	/* still open at the end, the same window records both cycles: always on */
	a->windows.v[0].end_ns = 0;
	a->windows.v[0].start_ns = T0;
	assert_int_equal(gpu_join__derive(&m), 0);
	assert_false(a->sampling);
	assert_true(m.cycles[0].gpu.present);
	assert_false(m.cycles[0].gpu.sampled);
	model__free(&m);
}

static void test_profile_json(void **state)
{
	struct model m;
	json_t *cycles, *gpu, *phases, *d, *a;

	(void)state;
	build(&m);
	assert_int_equal(gpu_join__derive(&m), 0);
	m.phases[DECODE].present = true;
	cycles = model__section_json(&m, "cycles");
	gpu = model__section_json(&m, "gpu");
	phases = model__section_json(&m, "phases");
	assert_non_null(cycles);
	assert_non_null(gpu);
	assert_non_null(phases);
	d = json_array_get(json_object_get(json_object_get(json_array_get(cycles, 0), "gpu"), "devices"), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(cycles, 0), "gpu"),
							      "source")), "cupti");
	NEAR(json_real_value(json_object_get(d, "busy_ms")), 43);
	NEAR(json_real_value(json_object_get(d, "idle_ms")), 65);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(d, "copies"), "htod"), "bytes")),
			 1048576);
	assert_null(json_object_get(json_object_get(d, "copies"), "dtoh")); /* only the directions seen */
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(d, "top_kernels"), 0), "name")),
			    "foo(int)");
	NEAR(json_real_value(json_object_get(json_object_get(json_object_get(d, "phases"), "decode"), "busy_ms")), 20);
	a = json_object_get(gpu, "activity");
	assert_int_equal(json_integer_value(json_object_get(a, "unattributed")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "clock"), "pairs")), 3);
	assert_int_equal(json_array_size(json_object_get(a, "devices")), 2);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(a, "devices"), 0), "idle_stacks")), 2);
	NEAR(json_real_value(json_object_get(json_array_get(json_object_get(json_object_get(json_object_get(phases, "decode"),
											 "gpu"), "devices"), 0),
					     "window_ms")), 160);
	json_decref(cycles);
	json_decref(gpu);
	json_decref(phases);
	model__free(&m);
}

/* profile.json read back (report, diff of a directory): the run's figures
 * per device and per phase come back as they were derived, phases[N].gpu
 * included, whichever section is read first. */
static void test_profile_read_back(void **state)
{
	struct model m, back;
	json_t *p;
	const struct model_gpu_figures *w = NULL, *d = NULL;
	size_t run = 0;

	(void)state;
	build(&m);
	assert_int_equal(gpu_join__derive(&m), 0);
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		m.phases[ph].present = m.phase_names[ph] != NULL;
	/* the gpu section before the phases, as profile.json orders them */
	p = json_pack("{s:o,s:o,s:[],s:[],s:{},s:{},s:[],s:{},s:[]}", "gpu", model__section_json(&m, "gpu"), "phases",
		      model__section_json(&m, "phases"), "bottlenecks", "recommendations", "system", "memory",
		      "crashes", "aggregate_metrics", "cycles");
	assert_non_null(p);
	assert_int_equal(model__from_json(&back, p, "test"), 0); /* it initializes back */
	for (size_t i = 0; i < m.gpu_activity.figures.n; i++)
		if (m.gpu_activity.figures.v[i].phase == DECODE && m.gpu_activity.figures.v[i].device == 0)
			w = &m.gpu_activity.figures.v[i];
	for (size_t i = 0; i < back.gpu_activity.figures.n; i++) {
		const struct model_gpu_figures *f = &back.gpu_activity.figures.v[i];

		run += f->phase == 0;
		if (f->device == 0 && f->phase == (uint32_t)model__phase_id(&back, "decode"))
			d = f;
	}
	assert_non_null(w);
	assert_non_null(d);
	assert_int_equal(run, 2); /* two devices */
	assert_int_equal(back.gpu_activity.figures.n, m.gpu_activity.figures.n);
	NEAR(d->window_ms, w->window_ms);
	NEAR(d->busy_ms, w->busy_ms);
	NEAR(d->idle_host_ms, w->idle_host_ms);
	assert_int_equal(d->kernels, w->kernels);
	json_decref(p);
	model__free(&back);
	model__free(&m);
}

/* ---- the reader ---- */

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static void hello(int fd, uint32_t magic)
{
	struct it_gpu_hello h = { .h = { IT_GPU_HELLO, sizeof(h), 0 }, .magic = magic,
				  .wire_version = IT_GPU_WIRE_VERSION, .cupti_version = 130000, .sample_every = 1 };

	snprintf(h.cupti_path, sizeof(h.cupti_path), "/fake/libcupti.so");
	send_all(fd, &h, sizeof(h));
}

static void kernel(int fd, const char *name, uint16_t claimed_len)
{
	uint8_t buf[512];
	struct it_gpu_kernel k = { .h = { IT_GPU_KERNEL, 0, 0 }, .start_ns = 10, .end_ns = 20, .correlation = 1,
				   .name_len = claimed_len };
	size_t n = offsetof(struct it_gpu_kernel, name) + strlen(name);

	k.h.size = (uint16_t)n;
	memcpy(buf, &k, offsetof(struct it_gpu_kernel, name));
	memcpy(buf + offsetof(struct it_gpu_kernel, name), name, strlen(name));
	send_all(fd, buf, n);
}

static void test_reader_robust(void **state)
{
	struct gpu_reader *r;
	struct gpu_reader_counts n;
	struct it_gpu_hdr bye = { IT_GPU_BYE, sizeof(bye), 0 }, tiny = { IT_GPU_CALIB, 3, 0 };
	struct it_gpu_calib cal = { .h = { IT_GPU_CALIB, sizeof(cal), 0 }, .cupti_ns = 1, .mono_ns = 2 };
	struct it_gpu_hdr unknown = { 200, sizeof(unknown) + 4, 0 };
	struct model m;
	int fd[6];
	const char *no_threads = getenv("INFERTRACE_EMU_NO_THREADS"); /* tools/run-tests-arm64.sh */

	(void)state;
	if (no_threads) {
		print_message("the reader's thread cannot start here: %s\n", no_threads);
		skip();
	}
	assert_int_equal(gpu_reader__open(&r, NULL), 0);
	/* well formed: hello, an unknown kind (skipped), calib, kernel, bye */
	fd[0] = connect_to(gpu_reader__path(r));
	hello(fd[0], IT_GPU_MAGIC);
	send_all(fd[0], &unknown, sizeof(unknown));
	send_all(fd[0], "abcd", 4);
	send_all(fd[0], &cal, sizeof(cal));
	kernel(fd[0], "_Z3fooi", 7);
	send_all(fd[0], &bye, sizeof(bye));
	/* a size below the header's */
	fd[1] = connect_to(gpu_reader__path(r));
	hello(fd[1], IT_GPU_MAGIC);
	send_all(fd[1], &tiny, sizeof(tiny));
	/* a wrong magic */
	fd[2] = connect_to(gpu_reader__path(r));
	hello(fd[2], 0xdeadbeef);
	/* a record before HELLO */
	fd[3] = connect_to(gpu_reader__path(r));
	send_all(fd[3], &cal, sizeof(cal));
	/* a name longer than its record */
	fd[4] = connect_to(gpu_reader__path(r));
	hello(fd[4], IT_GPU_MAGIC);
	kernel(fd[4], "_Z3barv", 300);
	/* truncated: half a calibration pair, then the end */
	fd[5] = connect_to(gpu_reader__path(r));
	hello(fd[5], IT_GPU_MAGIC);
	send_all(fd[5], &cal, sizeof(cal) / 2);
	for (int i = 0; i < 6; i++)
		close(fd[i]);
	gpu_reader__stop(r, 1000);
	gpu_reader__counts(r, &n);
	assert_int_equal(n.connections, 6);
	assert_int_equal(n.bad_connections, 5);
	assert_int_equal(n.byes, 1);
	model__init(&m);
	assert_int_equal(gpu_reader__collect(r, &m), 0);
	assert_int_equal(m.gpu_activity.ops.n, 1);
	assert_int_equal(m.gpu_activity.calib.n, 1);
	assert_string_equal(model__name(&m, m.gpu_activity.ops.v[0].mangled), "_Z3fooi");
	assert_int_equal(m.gpu_activity.ops.v[0].tgid, getpid()); /* the peer's pid, not the header's 0 */
	assert_int_equal(m.gpu_activity.channel_errors, 5);
	assert_true(m.gpu_activity.processes.n >= 1);
	assert_true(m.gpu_activity.processes.v[0].said_bye);
	model__free(&m);
	gpu_reader__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_fit),
		cmocka_unit_test(test_join_ops),
		cmocka_unit_test(test_launch_stacks),
		cmocka_unit_test(test_native_launch_stacks),
		cmocka_unit_test(test_cycle_figures),
		cmocka_unit_test(test_idle_host_less_blocked),
		cmocka_unit_test(test_run_figures_and_copy),
		cmocka_unit_test(test_sampled_windows),
		cmocka_unit_test(test_profile_json),
		cmocka_unit_test(test_profile_read_back),
		cmocka_unit_test(test_reader_robust),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
