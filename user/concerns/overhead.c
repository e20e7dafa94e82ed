// SPDX-License-Identifier: BSD-2-Clause
/* Probe-overhead concern: how much the uprobes themselves inflate the
 * phases they time. At start-up (before the target runs) the generic
 * uprobe/uretprobe pair of the probes concern is placed on a calibration
 * function of this very binary, which is called N times with and without
 * it; the difference per call, halved, is the cost of one hit on this
 * machine (kernel trap, uprobe dispatch, the BPF program). The model
 * multiplies it by the hits each phase took (model__derive): profile.json's
 * `probes_overhead`, which `report` prints with a warning over 5%. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "probe_spec.h"
#include "uprobe_links.h"

#define CALIBRATION_CALLS 400
#define CALIBRATION_ROUNDS 3
#define WARN_PERCENT 5.0
#define PRESET_WARN_PERCENT 2.0

struct overhead_state {
	double cost_ns; /* per hit; < 0: not measured */
	const char *error;
};


/* The calibration target: a global function so libbpf finds it in .symtab. */
__attribute__((noinline)) int infertrace_probe_calibration(int x);
__attribute__((noinline)) int infertrace_probe_calibration(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Nanoseconds per call of the calibration function, best of a few rounds. */
static double time_calls(void)
{
	double best = -1;

	for (int r = 0; r < CALIBRATION_ROUNDS; r++) {
		double t0 = now_ns();
		int x = 0;

		for (int i = 0; i < CALIBRATION_CALLS; i++)
			x = infertrace_probe_calibration(x);
		double per = (now_ns() - t0) / CALIBRATION_CALLS;

		if (best < 0 || per < best)
			best = per;
	}
	return best;
}

static int overhead_attach(struct recording *rec)
{
	struct infertrace_bpf *skel = rec->tracer.skel;
	struct uprobe_link l1 = { .fd = -1 }, l2 = { .fd = -1 };
	double bare, probed;
	uint64_t off;

	if (!rec->probes)
		return 0; /* no probes: nothing to estimate */
	rec->overhead = calloc(1, sizeof(*rec->overhead));
	if (!rec->overhead)
		return -ENOMEM;
	rec->overhead->cost_ns = -1;
	bare = time_calls();
	/* pid 0: this process only; the programs see a non-target and return
	 * early, so the map work of a real hit (~1 µs) is not in the figure */
	if (elf_symbol_offset("/proc/self/exe", "infertrace_probe_calibration", &off) ||
	    uprobe_link__attach(&l1, skel->progs.it_uprobe, false, 0, "/proc/self/exe", off, 0) ||
	    uprobe_link__attach(&l2, skel->progs.it_uretprobe, true, 0, "/proc/self/exe", off, 0)) {
		rec->overhead->error = "calibration probe could not be placed";
		goto out;
	}
	probed = time_calls();
	rec->overhead->cost_ns = probed > bare ? (probed - bare) / 2 : 0;
out:
	uprobe_link__destroy(&l2);
	uprobe_link__destroy(&l1);
	return 0; /* an estimate that failed never stops a recording */
}

/* The measured cost per hit; the model derives each phase's share from it. */
static int overhead_collect(struct recording *rec, struct model *m)
{
	if (!rec->probes || !rec->overhead)
		return 0;
	m->probe_cost.present = true;
	m->probe_cost.cost_ns = rec->overhead->cost_ns >= 0 ? rec->overhead->cost_ns : NAN;
	m->probe_cost.calibration_calls = CALIBRATION_CALLS;
	snprintf(m->probe_cost.error, sizeof(m->probe_cost.error), "%s",
		 rec->overhead->error ? rec->overhead->error : "");
	/* a preset must not hurt the measurement: 2% of a phase (issue 11) */
	m->probe_cost.warn_percent = rec->opts.npresets ? PRESET_WARN_PERCENT : WARN_PERCENT;
	return 0;
}

static void overhead_cleanup(struct recording *rec)
{
	free(rec->overhead);
	rec->overhead = NULL;
}

const struct concern overhead_concern = {
	.name = "overhead",
	.attach = overhead_attach,
	.collect = overhead_collect,
	.cleanup = overhead_cleanup,
};
