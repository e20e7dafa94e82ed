/* On-CPU sampling concern: after the run, reads the stack counts from BPF,
 * writes stacks.folded and stacks.<phase>.folded, and profile.json's
 * `samples` and `lost`. (The perf_event programs are attached by tracer.c.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "concerns.h"
#include "stacks.h"
#include "syms.h"

static json_t *samples_json(const struct recording *rec, const struct stack_report *sr,
			    const char *const *phase_names, const __u64 *stats)
{
	json_t *s = json_object(), *per = json_array(), *by_phase = json_object();
	double cpu_s = process_table__cpu_seconds(&rec->procs);

	if (rec->launched && rec->cmd.exited && rec->cmd.cpu_s > cpu_s)
		cpu_s = rec->cmd.cpu_s; /* rusage also counts children it reaped */
	json_object_set_new(s, "total", json_integer(sr->total));
	json_object_set_new(s, "event", json_string("cpu-clock"));
	json_object_set_new(s, "requested_hz", json_integer(rec->opts.frequency));
	json_object_set_new(s, "target_cpu_seconds", json_real(cpu_s));
	json_object_set_new(s, "achieved_hz", cpu_s > 0 ? json_real(sr->total / cpu_s) : json_null());
	json_object_set_new(s, "sampling_cpus", json_integer(rec->tracer.nsampling_cpus));
	json_object_set_new(s, "call_graph", json_string(rec->opts.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp"));
	for (size_t i = 0; i < sr->nprocs; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(sr->procs[i].tgid));
		json_object_set_new(o, "comm", json_string(sr->procs[i].comm));
		json_object_set_new(o, "samples", json_integer(sr->procs[i].samples));
		json_array_append_new(per, o);
	}
	json_object_set_new(s, "per_process", per);
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		if (!phase_names[i])
			continue;
		json_t *o = json_object();

		json_object_set_new(o, "samples", json_integer(sr->phase_samples[i]));
		json_object_set_new(o, "percent", json_real(sr->total ? 100.0 * sr->phase_samples[i] / sr->total : 0));
		json_object_set_new(by_phase, phase_names[i], o);
	}
	json_object_set_new(s, "by_phase", by_phase);
	json_object_set_new(s, "stack_quality", stacks__quality_json(sr));
	json_object_set_new(s, "stack_collisions",
			    json_integer(stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]));
	return s;
}

static json_t *lost_json(const __u64 *stats)
{
	json_t *l = json_object();

	json_object_set_new(l, "samples", json_integer(stats[IT_STAT_LOST_SAMPLES]));
	json_object_set_new(l, "events", json_integer(stats[IT_STAT_RINGBUF_LOST] +
						     stats[IT_STAT_LOST_EVENTS] +
						     stats[IT_STAT_THREADS_FULL]));
	json_object_set_new(l, "stack_collisions",
			    json_integer(stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]));
	json_object_set_new(l, "children_not_followed", json_integer(stats[IT_STAT_TARGETS_FULL]));
	return l;
}

static int write_folded(const struct recording *rec, struct stack_report *sr)
{
	int err = folded__write(&sr->all, rec->opts.output_dir, "stacks.folded");

	for (int i = 1; i < IT_MAX_PHASES && !err; i++) {
		char name[128];

		if (!rec->phase_names[i])
			continue;
		snprintf(name, sizeof(name), "stacks.%s.folded", rec->phase_names[i]);
		err = folded__write(&sr->by_phase[i], rec->opts.output_dir, name);
	}
	if (err)
		fprintf(stderr, "infertrace: writing folded stacks to '%s' failed: %s\n",
			rec->opts.output_dir, strerror(-err));
	return err;
}

static int sampling_write(struct recording *rec, json_t *profile)
{
	struct stack_report sr;
	__u64 stats[IT_STAT_MAX];
	int err;

	tracer__stats(&rec->tracer, stats);
	json_object_set_new(profile, "lost", lost_json(stats));
	err = stacks__collect(&rec->tracer, rec->syms, rec->ksyms, rec->phase_names, &sr);
	if (err) {
		fprintf(stderr, "infertrace: reading the stack counts failed: %s\n", strerror(-err));
		goto out;
	}
	json_object_set_new(profile, "samples", samples_json(rec, &sr, rec->phase_names, stats));
	err = write_folded(rec, &sr);
	fprintf(stderr, "infertrace: %llu samples\n", (unsigned long long)sr.total);
	if (stats[IT_STAT_LOST_SAMPLES] || stats[IT_STAT_RINGBUF_LOST])
		fprintf(stderr, "infertrace: warning: %llu samples and %llu events lost; numbers are incomplete\n",
			(unsigned long long)stats[IT_STAT_LOST_SAMPLES],
			(unsigned long long)stats[IT_STAT_RINGBUF_LOST]);
out:
	stack_report__free(&sr);
	return err;
}

const struct concern sampling_concern = {
	.name = "sampling",
	.write = sampling_write,
};
