// SPDX-License-Identifier: BSD-2-Clause
/* Memory concern: RSS of the followed processes from kmem:rss_stat (see
 * bpf/memory.bpf.c), sampled for a bounded timeline every tick, peaks per
 * process and per cycle, page faults (counted with the scheduler's on-CPU
 * time) and the growth of RSS across cycles. Writes `memory`,
 * `cycles[i].rss_peak_mb` and `aggregate_metrics.peak_memory_mb`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "sched.h"
#include "sched_logic.h"
#include "stats.h"

#define TIMELINE_MAX 512
#define MB (1024.0 * 1024.0)

struct mem_state {
	bool enabled;
	uint64_t *t;   /* ns since the recording began */
	double *mb;    /* summed RSS of the live followed processes */
	size_t n, cap;
};

static struct mem_state *mem_state;

static int memory_configure(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;

	mem_state = calloc(1, sizeof(*mem_state));
	if (!mem_state)
		return -ENOMEM;
	s->rodata->cfg_page_size = sysconf(_SC_PAGESIZE);
	mem_state->enabled = sched__have_tracepoint("kmem", "rss_stat");
	if (!mem_state->enabled) {
		bpf_program__set_autoload(s->progs.mem_on_rss_stat, false);
		fprintf(stderr, "infertrace: note: this kernel lacks kmem:rss_stat; RSS is read at "
			"context switches and scheduler ticks only\n");
	}
	return 0;
}

static int memory_attach(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;

	if (!mem_state->enabled)
		return 0;
	s->links.mem_on_rss_stat = bpf_program__attach(s->progs.mem_on_rss_stat);
	if (!s->links.mem_on_rss_stat) {
		int err = -errno;

		fprintf(stderr, "infertrace: attaching kmem:rss_stat failed: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/* Summed RSS of the followed processes alive now. */
static void memory_tick(struct recording *rec)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.mem_rss);
	struct it_mem_key key, next, *prev = NULL;
	struct it_mem_value v;
	uint64_t sum = 0, now = recording__now_ns();

	if (!mem_state || !mem_state->enabled)
		return;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct traced_proc *p;

		key = next;
		prev = &key;
		if (key.cycle != IT_CYCLE_NONE || bpf_map_lookup_elem(fd, &key, &v))
			continue;
		p = process_table__find(&rec->procs, key.tgid);
		if (p && p->exited)
			continue;
		sum += v.rss_bytes;
	}
	if (mem_state->n == mem_state->cap) {
		size_t cap = mem_state->cap ? mem_state->cap * 2 : 1024;
		uint64_t *t = realloc(mem_state->t, cap * sizeof(*t));
		double *mb;

		if (!t)
			return;
		mem_state->t = t;
		mb = realloc(mem_state->mb, cap * sizeof(*mb));
		if (!mb)
			return;
		mem_state->mb = mb;
		mem_state->cap = cap;
	}
	mem_state->t[mem_state->n] = now > rec->start_ns ? now - rec->start_ns : 0;
	mem_state->mb[mem_state->n++] = sum / MB;
}

static bool mem_lookup(int fd, __u32 tgid, __u32 cycle, struct it_mem_value *v)
{
	struct it_mem_key k = { .tgid = tgid, .cycle = cycle };

	return bpf_map_lookup_elem(fd, &k, v) == 0;
}

/* cycles[i].rss_peak_mb; the growth across each process's cycles (RSS at
 * each cycle's last change), the steepest process's figure returned. */
static double annotate_cycles(struct recording *rec, json_t *cycles, int fd, bool *have)
{
	double best = 0, *ys = calloc(json_array_size(cycles) + 1, sizeof(double));
	size_t i;
	json_t *c;

	*have = false;
	if (!ys)
		return 0;
	/* each cycle names the index its data was tagged with in BPF */
	for (size_t pi = 0; pi < rec->procs.n; pi++) {
		pid_t pid = rec->procs.procs[pi].pid;
		size_t ny = 0;
		uint64_t last = 0;
		bool have_last = false;

		json_array_foreach(cycles, i, c) {
			struct it_mem_value v;
			__u32 cyc;

			if (json_integer_value(json_object_get(c, "pid")) != pid)
				continue;
			cyc = json_integer_value(json_object_get(c, "bpf_cycle"));
			/* no change of RSS in the cycle: it stayed where it was */
			if (!mem_lookup(fd, pid, cyc, &v)) {
				if (!have_last)
					continue;
				v.peak_bytes = v.rss_bytes = last;
			}
			last = v.rss_bytes;
			have_last = true;
			json_object_set_new(c, "rss_peak_mb", json_real(v.peak_bytes / MB));
			json_object_set_new(c, "rss_end_mb", json_real(v.rss_bytes / MB));
			ys[ny++] = v.rss_bytes / MB;
		}
		if (ny >= 2) {
			double s = stats__slope(ys, ny);

			if (!*have || s > best)
				best = s;
			*have = true;
		}
	}
	free(ys);
	return best;
}

static int memory_write(struct recording *rec, json_t *profile)
{
	json_t *mem = json_object(), *per = json_array(), *tl = json_array();
	json_t *agg = json_object_get(profile, "aggregate_metrics"), *cycles = json_object_get(profile, "cycles");
	int fd = bpf_map__fd(rec->tracer.skel->maps.mem_rss);
	struct sched_entry *times = NULL;
	size_t ntimes = 0;
	uint64_t peak = 0, minflt = 0, majflt = 0;
	double growth = 0;
	bool have_growth = false;

	if (!mem_state)
		return 0;
	json_object_set_new(mem, "source", json_string(mem_state->enabled ? "mm counters (CO-RE) at switches, ticks and kmem:rss_stat" : "mm counters (CO-RE) at switches and ticks"));
	for (size_t i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];
		struct it_mem_value v;
		json_t *o;

		if (!mem_lookup(fd, p->pid, IT_CYCLE_NONE, &v))
			continue;
		o = json_object();
		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "comm", json_string(p->comm));
		json_object_set_new(o, "peak_mb", json_real(v.peak_bytes / MB));
		json_object_set_new(o, "last_mb", json_real(v.rss_bytes / MB));
		json_array_append_new(per, o);
		if (v.peak_bytes > peak)
			peak = v.peak_bytes;
	}
	if (!sched__read_times(&rec->tracer, &times, &ntimes)) {
		for (size_t i = 0; i < ntimes; i++) {
			minflt += times[i].v.minflt;
			majflt += times[i].v.majflt;
		}
		free(times);
	}
	memory_tick(rec);
	mem_state->n = timeline_reduce(mem_state->t, mem_state->mb, mem_state->n, TIMELINE_MAX);
	for (size_t i = 0; i < mem_state->n; i++)
		json_array_append_new(tl, json_pack("{s:f,s:f}", "t_s", mem_state->t[i] / 1e9,
						    "rss_mb", mem_state->mb[i]));
	if (json_is_array(cycles))
		growth = annotate_cycles(rec, cycles, fd, &have_growth);
	json_object_set_new(mem, "peak_mb", json_real(peak / MB));
	json_object_set_new(mem, "per_process", per);
	json_object_set_new(mem, "timeline", tl);
	json_object_set_new(mem, "timeline_max_points", json_integer(TIMELINE_MAX));
	json_object_set_new(mem, "faults", json_pack("{s:I,s:I}", "minor", (json_int_t)minflt,
						     "major", (json_int_t)majflt));
	json_object_set_new(mem, "growth_mb_per_cycle", have_growth ? json_real(growth) : json_null());
	if (json_is_object(agg))
		json_object_set_new(agg, "peak_memory_mb", json_real(peak / MB));
	json_object_set_new(profile, "memory", mem);
	return 0;
}

static void memory_cleanup(struct recording *rec)
{
	(void)rec;
	if (!mem_state)
		return;
	free(mem_state->t);
	free(mem_state->mb);
	free(mem_state);
	mem_state = NULL;
}

const struct concern memory_concern = {
	.name = "memory",
	.configure = memory_configure,
	.attach = memory_attach,
	.tick = memory_tick,
	.write = memory_write,
	.cleanup = memory_cleanup,
};
