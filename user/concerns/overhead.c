// SPDX-License-Identifier: BSD-2-Clause
/* Probe-overhead concern: how much the uprobes themselves inflate the
 * phases they time. At start-up (before the target runs) the generic
 * uprobe/uretprobe pair of the probes concern is placed on a calibration
 * function of this very binary, which is called N times with and without
 * it; the difference per call, halved, is the cost of one hit on this
 * machine (kernel trap, uprobe dispatch, the BPF program). After the run it
 * is multiplied by the hits each phase took: profile.json's
 * `probes_overhead`, which `report` prints with a warning over 5%. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"

#define CALIBRATION_CALLS 400
#define CALIBRATION_ROUNDS 3
#define WARN_PERCENT 5.0

struct overhead_state {
	double cost_ns; /* per hit; < 0: not measured */
	const char *error;
};

static struct overhead_state overhead = { .cost_ns = -1 };

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
	LIBBPF_OPTS(bpf_uprobe_opts, entry, .func_name = "infertrace_probe_calibration");
	LIBBPF_OPTS(bpf_uprobe_opts, ret, .func_name = "infertrace_probe_calibration", .retprobe = true);
	struct bpf_link *l1 = NULL, *l2 = NULL;
	double bare, probed;

	if (!rec->probes)
		return 0; /* no probes: nothing to estimate */
	bare = time_calls();
	/* pid 0: this process only; the programs see a non-target and return
	 * early, so the map work of a real hit (~1 µs) is not in the figure */
	l1 = bpf_program__attach_uprobe_opts(skel->progs.it_uprobe, 0, "/proc/self/exe", 0, &entry);
	l2 = l1 ? bpf_program__attach_uprobe_opts(skel->progs.it_uretprobe, 0, "/proc/self/exe", 0, &ret) : NULL;
	if (!l1 || !l2) {
		overhead.error = "calibration probe could not be placed";
		goto out;
	}
	probed = time_calls();
	overhead.cost_ns = probed > bare ? (probed - bare) / 2 : 0;
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	return 0; /* an estimate that failed never stops a recording */
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

static json_t *estimate(double hits, double base_ms, double *max_pct)
{
	json_t *o = json_object();
	double ms = hits * overhead.cost_ns / 1e6, pct = base_ms > 0 ? 100.0 * ms / base_ms : 0;

	json_object_set_new(o, "hits", json_real(hits));
	json_object_set_new(o, "estimated_ms", json_real(ms));
	json_object_set_new(o, "percent", json_real(pct));
	if (pct > *max_pct)
		*max_pct = pct;
	return o;
}

static int overhead_write(struct recording *rec, json_t *profile)
{
	json_t *o, *per = json_object(), *phases = json_object_get(profile, "phases");
	json_t *probes = json_object_get(profile, "probes"), *cycles = json_object_get(profile, "cycles");
	json_t *v;
	const char *name;
	double all_hits = 0, cycles_ms = 0, max_pct = 0;
	size_t i;

	if (!rec->probes)
		return 0;
	o = json_object();
	json_object_set_new(o, "cost_ns_per_hit", overhead.cost_ns >= 0 ? json_real(overhead.cost_ns) : json_null());
	json_object_set_new(o, "calibration_calls", json_integer(CALIBRATION_CALLS));
	if (overhead.error)
		json_object_set_new(o, "error", json_string(overhead.error));
	/* a phase's own entry and return probes fall about half inside the
	 * interval each: one hit per call; nested probes are not added */
	json_object_foreach(phases, name, v)
		json_object_set_new(per, name, estimate(num(v, "calls"), num(v, "total_ms"), &max_pct));
	json_object_set_new(o, "phases", per);
	/* every hit inside a cycle lengthens it: entry + return for timed probes */
	json_array_foreach(probes, i, v) {
		const char *role = json_string_value(json_object_get(v, "role"));
		double hits = num(v, "hits");

		all_hits += role && (!strcmp(role, "phase") || !strcmp(role, "cycle")) ? 2 * hits : hits;
	}
	json_array_foreach(cycles, i, v)
		cycles_ms += num(v, "duration_ms");
	json_object_set_new(o, "cycles", estimate(all_hits, cycles_ms, &max_pct));
	json_object_set_new(o, "max_percent", json_real(max_pct));
	json_object_set_new(o, "warning", json_boolean(max_pct > WARN_PERCENT));
	json_object_set_new(profile, "probes_overhead", o);
	if (max_pct > WARN_PERCENT)
		fprintf(stderr, "infertrace: warning: the probes themselves took about %.1f%% of a phase "
			"(%.1f µs per hit); probe fewer or coarser functions\n", max_pct, overhead.cost_ns / 1e3);
	return 0;
}

const struct concern overhead_concern = {
	.name = "overhead",
	.attach = overhead_attach,
	.write = overhead_write,
};
