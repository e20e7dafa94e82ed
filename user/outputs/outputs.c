// SPDX-License-Identifier: BSD-2-Clause
/* The writers of a recording's outputs, each reading only the model:
 *   profile.json    the contract (profile_json.c);
 *   *.folded        on-CPU and off-CPU stacks, all and per phase;
 *   trace.json      Chrome trace events (Perfetto, chrome://tracing,
 *                   speedscope): cycles, phase calls and blocked system
 *                   calls as nested spans per thread, samples as instant
 *                   events with their stacks in stackFrames (--call-graph
 *                   dwarf streams each sample with its time) or, without
 *                   per-sample times, a samples-per-cycle counter; GPU
 *                   kernels and copies on one track per device and
 *                   stream (trace_gpu.c);
 *   timeline.speedscope.json  the timed samples per thread (speedscope.c);
 *   flamegraph.svg  the on-CPU flame graph of stacks.folded;
 *   wakeup.folded   the stacks of the threads that woke a blocked thread
 *                   of their process, weighted by the us they ended;
 *   offcpu.svg      the off-CPU flame graph of offcpu.folded (us blocked);
 *   gpu.folded      kernel time (us) under the launch stacks (GPU timeline);
 *   report.html     one self-contained page: summary tables and the flame
 *                   graphs, each with a per-phase selector.
 * See docs/outputs.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html_text.h"
#include "atomic_file.h"
#include "gpu_view.h"
#include "llama_view.h"
#include "model.h"
#include "outputs.h"
#include "pprof.h"
#include "profile.h"
#include "speedscope.h"
#include "split_view.h"
#include "tail.h"
#include "trace_gpu.h"
#include "trace_requests.h"
#include "report_charts.h"
#include "requests_html.h"

/* ---- trace.json ---- */

/* Microseconds since the recording started; an event begun before it (a
 * phase already open on attach) is clipped to its start: viewers take
 * negative times badly. */
static double rel_us(const struct model *m, uint64_t ns)
{
	return ns > m->run.start_ns ? (double)(ns - m->run.start_ns) / 1e3 : 0.0;
}

static void json_str(FILE *f, const char *s);

/* trace.json's cycle lookup: the kernel's (pid, bpf_cycle) to the cycle's index. */
struct trace_cycle_key {
	pid_t pid;
	uint32_t bpf_cycle, index;
};

static int trace_cycle_cmp(const void *a, const void *b)
{
	const struct trace_cycle_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->bpf_cycle < y->bpf_cycle ? -1 : x->bpf_cycle > y->bpf_cycle;
}

/* Thread tracks named once each: the thread's own name (its comm, from the
 * records that carry it: --call-graph dwarf's samples and blocks, fp's
 * thread_comms); else "COMM" for a main thread, "COMM/TID" for another. */
struct trace_thread {
	pid_t pid, tid;
};

static int trace_thread_cmp(const void *a, const void *b)
{
	const struct trace_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void write_thread_names(const struct model *m, FILE *f, const char **sep)
{
	size_t n = 0, cap = m->ncalls + m->ntrace_samples + m->nprocs + m->noffcpu_intervals + m->gpu_activity.ops.n;
	struct trace_thread *t = cap ? malloc(cap * sizeof(*t)) : NULL;

	if (!t)
		return; /* names are a convenience: the tracks stay, numbered */
	for (size_t i = 0; i < m->nprocs; i++)
		t[n++] = (struct trace_thread){ m->procs[i].pid, m->procs[i].pid };
	for (size_t i = 0; i < m->ncalls; i++)
		t[n++] = (struct trace_thread){ m->calls[i].tgid, m->calls[i].tid };
	for (size_t i = 0; i < m->ntrace_samples; i++)
		t[n++] = (struct trace_thread){ m->trace_samples[i].tgid, m->trace_samples[i].tid };
	for (size_t i = 0; i < m->noffcpu_intervals; i++)
		t[n++] = (struct trace_thread){ m->offcpu_intervals[i].tgid, m->offcpu_intervals[i].tid };
	/* the threads that launched GPU work: their flows start there */
	for (size_t i = 0; i < m->gpu_activity.ops.n; i++)
		if (m->gpu_activity.ops.v[i].tid && m->gpu_activity.ops.v[i].launch_ns)
			t[n++] = (struct trace_thread){ m->gpu_activity.ops.v[i].tgid, m->gpu_activity.ops.v[i].tid };
	qsort(t, n, sizeof(*t), trace_thread_cmp);
	for (size_t i = 0; i < n; i++) {
		const char *comm = NULL;
		char name[64];

		if (i && !trace_thread_cmp(&t[i], &t[i - 1]))
			continue;
		for (size_t j = 0; j < m->nprocs && !comm; j++)
			if (m->procs[j].pid == t[i].pid)
				comm = m->procs[j].comm;
		if (model__thread_name(m, t[i].pid, t[i].tid))
			snprintf(name, sizeof(name), "%s", model__thread_name(m, t[i].pid, t[i].tid));
		else if (t[i].tid == t[i].pid)
			snprintf(name, sizeof(name), "%s", comm && *comm ? comm : "main");
		else
			snprintf(name, sizeof(name), "%s/%d", comm && *comm ? comm : "thread", t[i].tid);
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
			*sep, t[i].pid, t[i].tid);
		json_str(f, name);
		fprintf(f, "}}");
		*sep = ",\n";
	}
	free(t);
}

static void json_str(FILE *f, const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(d ? d : "\"\"", f);
	free(d);
	json_decref(j);
}

/* trace.json's stackFrames: every prefix of the samples' folded stacks is a
 * frame {name, parent}; a sample's sf is its stack's leaf frame. */
struct sf_node {
	const char *name; /* into model.names' stack string, len bytes */
	size_t len;
	int32_t parent, first_kid, next;
};

struct sf_tree {
	struct sf_node *v;
	size_t n, cap;
	int32_t *leaf_of; /* model.names index -> leaf frame; -2 not yet built */
	int32_t roots;
};

static int32_t sf_child(struct sf_tree *t, int32_t parent, const char *name, size_t len)
{
	int32_t *link = parent < 0 ? &t->roots : &t->v[parent].first_kid;

	for (int32_t k = *link; k >= 0; k = t->v[k].next)
		if (t->v[k].len == len && !memcmp(t->v[k].name, name, len))
			return k;
	if (VEC_RESERVE(t->v, t->cap, t->n, 256))
		return -1;
	link = parent < 0 ? &t->roots : &t->v[parent].first_kid; /* the growth moved it */
	t->v[t->n] = (struct sf_node){ name, len, parent, -1, *link };
	*link = (int32_t)t->n;
	return (int32_t)t->n++;
}

/* The leaf frame of folded stack model.names[stack], or -1. */
static int32_t sf_leaf(struct sf_tree *t, const struct model *m, int32_t stack)
{
	const char *s;
	int32_t at = -1;

	if (!t->leaf_of || stack < 0 || (size_t)stack >= m->nnames)
		return -1;
	if (t->leaf_of[stack] != -2)
		return t->leaf_of[stack];
	for (s = m->names[stack]; *s;) {
		size_t len = strcspn(s, ";");

		at = sf_child(t, at, s, len);
		if (at < 0)
			break;
		s += len + (s[len] == ';');
	}
	t->leaf_of[stack] = at;
	return at;
}

static void write_stack_frames(FILE *f, const struct sf_tree *t)
{
	fprintf(f, ",\n\"stackFrames\":{");
	for (size_t i = 0; i < t->n; i++) {
		char *name = strndup(t->v[i].name, t->v[i].len);

		fprintf(f, "%s\n\"%zu\":{\"name\":", i ? "," : "", i);
		json_str(f, name ? name : "[unknown]");
		free(name);
		if (t->v[i].parent >= 0)
			fprintf(f, ",\"parent\":\"%d\"", t->v[i].parent);
		fputc('}', f);
	}
	fputs("}", f);
}

/* trace.json's slices: cycles (on the process's main-thread track: a
 * marker may fire on any thread), outermost phase calls and blocked
 * intervals. speedscope makes one call tree per thread out of them and
 * Perfetto nests them per thread: each thread's slices must nest properly.
 * So times are whole microseconds (a viewer's ts + dur is then exact: with
 * fractions, a cycle could end after the next one began, and every later
 * cycle would nest in it), and a slice that overlaps another without
 * nesting is cut: a cycle beats a phase call, a phase call a blocked
 * interval (args.clipped says so); written per thread in time order. */
enum { SL_CYCLE, SL_PHASE, SL_OFFCPU };

struct trace_slice {
	pid_t pid, tid;
	uint64_t b, e; /* us since the start */
	uint32_t kind, idx;
	bool clipped;
};

static uint64_t whole_us(const struct model *m, uint64_t ns)
{
	return ns > m->run.start_ns ? (ns - m->run.start_ns) / 1000 : 0;
}

static int trace_slice_cmp(const void *a, const void *b)
{
	const struct trace_slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Cuts the sorted slices into a properly nested set per thread: a slice
 * ends no later than the one it starts in; one that starts inside a
 * lesser slice ends that one where it begins. */
static void nest_slices(struct trace_slice *v, size_t n, size_t *stack)
{
	size_t depth = 0;

	for (size_t i = 0; i < n; i++) {
		struct trace_slice *s = &v[i];

		if (i && (s->pid != v[i - 1].pid || s->tid != v[i - 1].tid))
			depth = 0;
		while (depth && v[stack[depth - 1]].e <= s->b)
			depth--;
		while (depth && s->e > v[stack[depth - 1]].e) {
			struct trace_slice *top = &v[stack[depth - 1]];

			if (top->kind > s->kind) {
				top->e = s->b;
				top->clipped = true;
				depth--;
				continue;
			}
			s->e = top->e;
			s->clipped = true;
		}
		stack[depth++] = i;
	}
}

static void write_slice(const struct model *m, FILE *f, const struct trace_slice *s,
			const struct trace_cycle_key *keys, struct sf_tree *sft)
{
	fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu,", s->pid, s->tid,
		(unsigned long long)s->b, (unsigned long long)(s->e - s->b));
	if (s->kind == SL_CYCLE) {
		const struct model_cycle *c = &m->cycles[s->idx];

		fprintf(f, "\"cat\":\"cycle\",\"name\":\"cycle %u\",\"args\":{\"index\":%u,\"duration_ms\":%.3f,"
			"\"samples\":%llu", c->index, c->index, c->duration_ms, (unsigned long long)c->samples);
		if (isfinite(c->tokens_per_second))
			fprintf(f, ",\"tokens_per_second\":%.3f", c->tokens_per_second);
	} else if (s->kind == SL_PHASE) {
		const struct model_phase_call *pc = &m->calls[s->idx];
		const char *name = pc->phase < IT_MAX_PHASES ? m->phase_names[pc->phase] : NULL;
		struct trace_cycle_key want = { pc->tgid, pc->bpf_cycle, 0 }, *c;

		c = keys ? bsearch(&want, keys, m->ncycles, sizeof(*keys), trace_cycle_cmp) : NULL;
		fprintf(f, "\"cat\":\"phase\",\"name\":");
		json_str(f, name ? name : "phase");
		/* args.cycle: the cycle's index as profile.json numbers it; null
		 * for a call outside every cycle */
		fprintf(f, ",\"args\":{\"cycle\":");
		if (c)
			fprintf(f, "%u", c->index);
		else
			fputs("null", f);
		fprintf(f, ",\"duration_ms\":%.3f",
			pc->exit_ns > pc->entry_ns ? (pc->exit_ns - pc->entry_ns) / 1e6 : 0.0);
	} else {
		const struct model_offcpu_interval *iv = &m->offcpu_intervals[s->idx];
		const char *reason = iv->reason < BLOCKED_NCLASSES ? blocked_class_names[iv->reason] : "other";
		int32_t sf = sf_leaf(sft, m, iv->stack);

		fprintf(f, "\"cat\":\"offcpu\",\"name\":\"%s\",", reason);
		if (sf >= 0)
			fprintf(f, "\"sf\":\"%d\",", sf);
		fprintf(f, "\"args\":{\"reason\":\"%s\",\"blocked_ms\":%.3f,\"phase\":", reason,
			(iv->end_ns - iv->start_ns) / 1e6);
		json_str(f, iv->phase && iv->phase < IT_MAX_PHASES && m->phase_names[iv->phase] ?
			 m->phase_names[iv->phase] : "");
		fputs(",\"stack\":", f);
		json_str(f, iv->stack >= 0 && (size_t)iv->stack < m->nnames ? m->names[iv->stack] : "");
	}
	if (s->clipped)
		fputs(",\"clipped\":true", f);
	fputs("}}", f);
}

static void write_slices(const struct model *m, FILE *f, const char **sep, const struct trace_cycle_key *keys,
			 struct sf_tree *sft)
{
	size_t n = 0, cap = m->ncycles + m->ncalls + m->noffcpu_intervals;
	struct trace_slice *v = cap ? malloc(cap * sizeof(*v)) : NULL;
	size_t *stack = cap ? malloc(cap * sizeof(*stack)) : NULL;

	if (!v || !stack) {
		free(v);
		free(stack);
		return;
	}
	for (size_t i = 0; i < m->ncycles; i++)
		if (m->cycles[i].end_ns)
			v[n++] = (struct trace_slice){ m->cycles[i].pid, m->cycles[i].pid,
						       whole_us(m, m->cycles[i].start_ns),
						       whole_us(m, m->cycles[i].end_ns), SL_CYCLE, (uint32_t)i, false };
	for (size_t i = 0; i < m->ncalls; i++)
		v[n++] = (struct trace_slice){ m->calls[i].tgid, m->calls[i].tid, whole_us(m, m->calls[i].entry_ns),
					       whole_us(m, m->calls[i].exit_ns), SL_PHASE, (uint32_t)i, false };
	for (size_t i = 0; i < m->noffcpu_intervals; i++)
		v[n++] = (struct trace_slice){ m->offcpu_intervals[i].tgid, m->offcpu_intervals[i].tid,
					       whole_us(m, m->offcpu_intervals[i].start_ns),
					       whole_us(m, m->offcpu_intervals[i].end_ns), SL_OFFCPU, (uint32_t)i, false };
	for (size_t i = 0; i < n; i++)
		if (v[i].e < v[i].b)
			v[i].e = v[i].b;
	qsort(v, n, sizeof(*v), trace_slice_cmp);
	nest_slices(v, n, stack);
	for (size_t i = 0; i < n; i++) {
		fputs(*sep, f);
		write_slice(m, f, &v[i], keys, sft);
		*sep = ",\n";
	}
	free(v);
	free(stack);
}


int outputs__side_counters(const struct side_series *sr, int pid, uint64_t base_ns, json_t *events)
{
	int added = 0;

	for (size_t r = 0; r < sr->nrows; r++) {
		double ts_us = ((double)sr->ts[r] - (double)base_ns) / 1000.0;

		for (size_t c0 = 0, c1; c0 < sr->cols.n; c0 = c1) {
			json_t *args = json_object(), *ev;

			for (c1 = c0; c1 < sr->cols.n && !strcmp(sr->cols.v[c1].series, sr->cols.v[c0].series); c1++) {
				double v = sr->v[r * sr->cols.n + c1];

				if (!isnan(v)) /* three decimals, as the side sampler keeps them */
					json_object_set_new(args, sr->cols.v[c1].name, json_real(round(v * 1000.0) / 1000.0));
			}
			if (!json_object_size(args)) {
				json_decref(args);
				continue;
			}
			ev = json_pack("{s:s, s:s, s:f, s:i, s:o}", "name", sr->cols.v[c0].series, "ph", "C", "ts", ts_us,
				       "pid", pid, "args", args);
			if (ev && !json_array_append_new(events, ev))
				added++;
		}
	}
	return added;
}

/* A reading from before the start (a baseline) has no place on the
 * timeline. */
static void write_side_counters(FILE *f, const struct model *m, const char **sep)
{
	json_t *events = json_array(), *ev;
	size_t i;

	outputs__side_counters(&m->side.series, m->nprocs ? m->procs[0].pid : 0, m->run.start_ns, events);
	json_array_foreach(events, i, ev) {
		if (json_number_value(json_object_get(ev, "ts")) < 0)
			continue;
		fputs(*sep, f);
		json_dumpf(ev, f, JSON_COMPACT);
		*sep = ",\n";
	}
	json_decref(events);
}

static int write_trace(const struct model *m, const char *dir)
{
	struct sf_tree sft = { .roots = -1 };
	struct atomic_file *af = atomic_file__open(dir, "trace.json");
	struct trace_cycle_key *keys;
	const char *sep = "";
	size_t i;
	FILE *f;

	if (!af)
		return -errno;
	f = atomic_file__stream(af);
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"infertrace\",\"time_origin\":"
		"\"recording start (CLOCK_MONOTONIC %llu ns)\"},\"traceEvents\":[\n",
		(unsigned long long)m->run.start_ns);
	for (i = 0; i < m->nprocs; i++) {
		const struct model_process *p = &m->procs[i];

		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
			sep, p->pid, p->pid);
		json_str(f, p->comm);
		fprintf(f, "}}");
		sep = ",\n";
	}
	write_thread_names(m, f, &sep);
	keys = m->ncycles ? malloc(m->ncycles * sizeof(*keys)) : NULL;
	for (i = 0; keys && i < m->ncycles; i++)
		keys[i] = (struct trace_cycle_key){ m->cycles[i].pid, m->cycles[i].bpf_cycle, m->cycles[i].index };
	if (keys)
		qsort(keys, m->ncycles, sizeof(*keys), trace_cycle_cmp);
	/* stack frames are a convenience: without memory the samples and
	 * blocked intervals stay, bare */
	sft.leaf_of = (m->ntrace_samples || m->noffcpu_intervals) && m->nnames ?
		malloc(m->nnames * sizeof(*sft.leaf_of)) : NULL;
	for (i = 0; sft.leaf_of && i < m->nnames; i++)
		sft.leaf_of[i] = -2;
	write_slices(m, f, &sep, keys, &sft);
	trace_gpu__write(m, f, &sep);
	trace_requests__write(m, f, &sep);
	/* without per-sample times: samples per cycle as a counter */
	for (i = 0; !m->ntrace_samples && i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!c->end_ns)
			continue;
		fprintf(f, "%s{\"ph\":\"C\",\"name\":\"samples per cycle\",\"pid\":%d,\"ts\":%.3f,"
			"\"args\":{\"samples\":%llu}}", sep, c->pid, rel_us(m, c->start_ns), (unsigned long long)c->samples);
		fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"samples per cycle\",\"pid\":%d,\"ts\":%.3f,"
			"\"args\":{\"samples\":0}}", c->pid, rel_us(m, c->end_ns));
		sep = ",\n";
	}
	for (i = 0; i < m->ntrace_samples; i++) {
		const struct model_trace_sample *ts = &m->trace_samples[i];
		int32_t sf = sf_leaf(&sft, m, ts->stack);

		fprintf(f, "%s{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":", sep);
		json_str(f, ts->frame >= 0 && (size_t)ts->frame < m->nnames ? m->names[ts->frame] : "[unknown]");
		if (sf >= 0)
			fprintf(f, ",\"sf\":\"%d\"", sf);
		fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"phase\":", ts->tgid, ts->tid,
			rel_us(m, ts->ts_ns));
		json_str(f, ts->phase && ts->phase < IT_MAX_PHASES && m->phase_names[ts->phase] ?
			 m->phase_names[ts->phase] : "");
		if (ts->jit)
			fprintf(f, ",\"jit\":true");
		fprintf(f, "}}");
		sep = ",\n";
	}
	/* side data (temperatures, clocks, load, GPU) as counter tracks */
	write_side_counters(f, m, &sep);
	free(keys);
	fprintf(f, "\n]");
	write_stack_frames(f, &sft);
	fprintf(f, "}\n");
	free(sft.v);
	free(sft.leaf_of);
	return atomic_file__commit(af);
}

/* ---- flamegraph.svg, offcpu.svg ---- */

static const struct flamegraph_opts fg_oncpu = { "On-CPU flame graph", "samples", FLAMEGRAPH_ONCPU, NULL };
static const struct flamegraph_opts fg_offcpu = {
	"Off-CPU flame graph (time blocked)", "us blocked", FLAMEGRAPH_OFFCPU, NULL
};

int flamegraph__write_file(const char *dir, const char *name, const struct folded *st,
			   const struct flamegraph_opts *o)
{
	struct atomic_file *af = atomic_file__open(dir, name);
	int err;

	if (!af)
		return -errno;
	err = flamegraph__write(st, o, atomic_file__stream(af));
	if (err) {
		if (err == -EIO) /* the stream's: say why (a full disk) */
			err = atomic_file__error(af);
		atomic_file__abort(af);
		return err;
	}
	return atomic_file__commit(af);
}

/* ---- which files a recording writes ---- */

/* A phase with no stacks gets no folded file: an empty one makes
 * flamegraph.pl fail. */
static bool folded_empty(const struct folded *f)
{
	return !f->n || !f->total;
}

/* What one writing of the outputs did: profile.json's "outputs", the files
 * written beside it and those not written with the reason (docs/outputs.md).
 * Each output is written on its own: one that fails loses only itself. */
struct out_log {
	const char *dir;
	const char *what; /* "" or "checkpoint: " in the messages */
	json_t *files, *not_written;
	int err;          /* the first failure */
};

static void not_written(struct out_log *lg, const char *name, const char *why)
{
	json_t *n = json_object();

	json_object_set_new(n, "file", json_string(name));
	json_object_set_new(n, "reason", json_string(why));
	json_array_append_new(lg->not_written, n);
}

/* Records how writing NAME went; a failure is named on stderr. */
static void out_done(struct out_log *lg, const char *name, int err)
{
	char why[200];

	if (!err) {
		json_array_append_new(lg->files, json_string(name));
		return;
	}
	fprintf(stderr, "infertrace: %swriting %s/%s failed: %s\n", lg->what, lg->dir, name, strerror(-err));
	snprintf(why, sizeof(why), "writing it failed: %s", strerror(-err));
	not_written(lg, name, why);
	if (!lg->err)
		lg->err = err;
}

/* The files a recording has no content for: stacks not recorded, a phase
 * with no stacks (an empty folded file makes flamegraph.pl fail). */
static void out_log_init(struct out_log *lg, const struct model *m, const char *dir, const char *what)
{
	static const char *const base[2] = { "stacks", "offcpu" };
	char name[160], why[200];

	*lg = (struct out_log){ .dir = dir, .what = what, .files = json_array(), .not_written = json_array() };
	for (int k = 0; k < 2; k++) {
		bool have = k ? m->have_offcpu : m->have_oncpu;
		const struct folded *by_phase = k ? m->offcpu_us_by_phase : m->oncpu_by_phase;

		snprintf(name, sizeof(name), "%s.folded", base[k]);
		if (!have) {
			not_written(lg, name, k ? "off-CPU stacks were not recorded" : "on-CPU samples were not recorded");
			continue;
		}
		for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
			if (!m->phase_names[ph] || !folded_empty(&by_phase[ph]))
				continue;
			snprintf(name, sizeof(name), "%s.%s.folded", base[k], m->phase_names[ph]);
			snprintf(why, sizeof(why), "no %s in phase %s", k ? "off-CPU time" : "samples", m->phase_names[ph]);
			not_written(lg, name, why);
		}
	}
}

static void out_log_free(struct out_log *lg)
{
	json_decref(lg->files);
	json_decref(lg->not_written);
}

/* "outputs" for profile.json, written last: the files before it and itself */
static json_t *outputs_json(const struct out_log *lg)
{
	json_t *o = json_object(), *files = json_copy(lg->files);

	json_array_insert_new(files, 0, json_string("profile.json"));
	json_object_set_new(o, "files", files);
	json_object_set_new(o, "not_written", json_copy(lg->not_written));
	return o;
}

/* ---- report.html ---- */

static void h(FILE *f, const char *s)
{
	html_text__escape(f, s);
}


static void row_num(FILE *f, const char *name, double v, const char *fmt)
{
	fprintf(f, "<tr><th>");
	h(f, name);
	fprintf(f, "</th>");
	html_text__num_cell(f, v, fmt);
	fprintf(f, "</tr>\n");
}

static void html_phases(FILE *f, const struct model *m)
{
	const struct model_probe_cost *pc = &m->probe_cost;
	bool any = false;

	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		any |= m->phases[ph].present;
	if (!any)
		return;
	fprintf(f, "<h2>Phases</h2><table><tr><th>phase</th><th>total ms</th><th>calls</th><th>%% of cycle</th>"
		"<th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>probe cost %%</th></tr>\n");
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		const struct model_phase_summary *v = &m->phases[ph];

		if (!v->present)
			continue;
		fprintf(f, "<tr><td>");
		h(f, m->phase_names[ph]);
		/* a phase not called in the cycles: dashes, as in the text report */
		if (v->calls)
			fprintf(f, "</td><td>%.2f</td><td>%llu</td><td>%.1f</td>", v->total_ms,
				(unsigned long long)v->calls, v->percent_of_cycle);
		else
			fprintf(f, "</td><td>-</td><td>0</td><td>-</td>");
		html_text__num_cell(f, v->p50_ms, "%.3f");
		html_text__num_cell(f, v->p95_ms, "%.3f");
		html_text__num_cell(f, v->p99_ms, "%.3f");
		html_text__num_cell(f, pc->derived && pc->phases[ph].present ? pc->phases[ph].percent : NAN, "%.2f");
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
	split_view__html_phases(f, m);
}

static void html_cycles(FILE *f, const struct model *m)
{
	const struct model_aggregates *a = &m->agg;
	bool split = split_view__any(m);
	char bl[256];

	fprintf(f, "<h2>Cycles</h2><table>\n");
	row_num(f, "cycles", (double)a->total_cycles, "%.0f");
	row_num(f, "average ms", a->avg_cycle_ms, "%.3f");
	row_num(f, "p50 ms", a->p50_cycle_ms, "%.3f");
	row_num(f, "p95 ms", a->p95_cycle_ms, "%.3f");
	row_num(f, "p99 ms", a->p99_cycle_ms, "%.3f");
	row_num(f, "max ms", a->max_cycle_ms, "%.3f");
	row_num(f, "tokens/s (average)", a->avg_tokens_per_second, "%.2f");
	row_num(f, "peak memory MB", a->peak_memory_mb, "%.1f");
	fprintf(f, "</table>\n");
	if (!m->ncycles)
		return;
	fprintf(f, "<details open><summary>per cycle</summary>");
	if (split)
		fprintf(f, "<p>On-CPU, run queue and blocked: the cycle's main thread.</p>");
	fprintf(f, "<table><tr><th>#</th><th>pid</th><th>ms</th><th>samples</th><th>tokens/s</th><th>J</th>");
	if (split)
		fprintf(f, "<th>on-CPU ms</th><th>run queue ms</th><th>blocked ms</th><th>blocked in (ms)</th>");
	fprintf(f, "</tr>\n");
	for (size_t i = 0; i < m->ncycles && i < 1000; i++) {
		const struct model_cycle *c = &m->cycles[i];
		const struct model_split *s = &c->split;

		fprintf(f, "<tr><td>%u</td><td>%d</td><td>%.3f</td><td>%llu</td>", c->index, c->pid, c->duration_ms,
			(unsigned long long)c->samples);
		html_text__num_cell(f, c->tokens_per_second, "%.2f");
		html_text__num_cell(f, c->energy.present ? c->energy.total_j : NAN, "%.3f");
		if (split) {
			html_text__num_cell(f, s->present ? s->oncpu_ms : NAN, "%.2f");
			html_text__num_cell(f, s->present ? s->runq_ms : NAN, "%.2f");
			html_text__num_cell(f, s->present ? s->offcpu_ms : NAN, "%.2f");
			fprintf(f, "<td>%s</td>", split_view__blocked(s, bl, sizeof(bl))[0] ? bl : "-");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table></details>\n");
}

static void power_str_row(FILE *f, const char *name, const char *v)
{
	if (!v[0])
		return;
	fprintf(f, "<tr><th>%s</th><td>", name);
	h(f, v);
	fprintf(f, "</td></tr>\n");
}

static void power_num_row(FILE *f, const char *name, double v)
{
	if (!isnan(v))
		fprintf(f, "<tr><th>%s</th><td>%.1f</td></tr>\n", name, v);
}

static void html_energy(FILE *f, const struct model *m)
{
	const struct model_energy_figures *ef = &m->energy;
	const struct power_mode *pw = &m->run.system.power;
	bool any = m->run.system.has_power && power_mode__any(pw);
	bool measured = ef->present && (ef->cycles.present || isfinite(ef->side.peak_w));
	size_t i;

	/* no energy measured and no power mode known: the charts' "not
	 * measured" line names power and why, once, not a row per domain
	 * before the bottlenecks */
	if (!measured && !any)
		return;
	fprintf(f, "<h2>Energy and power mode</h2><table>\n");
	if (any) {
		power_str_row(f, "governor", pw->governor);
		power_str_row(f, "energy_performance_preference", pw->epp);
		power_str_row(f, "scaling_driver", pw->driver);
		if (pw->has_nvpmodel) {
			fprintf(f, "<tr><th>nvpmodel</th><td>%d ", pw->nvpmodel_id);
			h(f, pw->nvpmodel_name);
			fprintf(f, "</td></tr>\n");
		}
		power_num_row(f, "emc_mhz", pw->emc_mhz);
		power_num_row(f, "emc_max_mhz", pw->emc_max_mhz);
		power_num_row(f, "gpu_mhz", pw->gpu_mhz);
		power_num_row(f, "gpu_max_mhz", pw->gpu_max_mhz);
	}
	if (ef->cycles.present) {
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			if (isfinite(ef->cycles.j[d]))
				row_num(f, model_energy_keys[d], ef->cycles.j[d], "%.3f");
		row_num(f, "total J over the cycles", ef->cycles.total_j, "%.3f");
		row_num(f, "J per cycle", ef->cycles_measured ? ef->cycles.total_j / ef->cycles_measured : NAN, "%.3f");
		row_num(f, "tokens per joule", ef->cycles.tokens_per_joule, "%.3f");
		row_num(f, "cycles left out (shorter than the period)", (double)ef->cycles_left_out, "%.0f");
	}
	if (!measured) {
		fprintf(f, "</table>\n");
		return;
	}
	row_num(f, "resolution ms", ef->side.resolution_ms, "%.0f");
	row_num(f, "peak W", ef->side.peak_w, "%.1f");
	for (i = 0; i < ef->side.missing.n; i++) {
		fprintf(f, "<tr><th>no ");
		h(f, ef->side.missing.v[i].domain);
		fprintf(f, " energy</th><td>");
		h(f, ef->side.missing.v[i].reason);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

/* The GPU section: the text report's, as it prints it. */
static void html_gpu(FILE *f, const struct model *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *t = open_memstream(&text, &len);

	if (!t)
		return;
	gpu_view__print(t, m);
	if (fclose(t) || !len) {
		free(text);
		return;
	}
	fprintf(f, "<h2>GPU</h2>\n<pre>");
	h(f, text[0] == '\n' ? text + 1 : text);
	fprintf(f, "</pre>\n");
	free(text);
}

static void html_findings(FILE *f, const struct model *m)
{
	if (m->nfindings) {
		fprintf(f, "<h2>Bottlenecks</h2><ul>\n");
		for (size_t i = 0; i < m->nfindings; i++) {
			fprintf(f, "<li><b>[");
			h(f, m->findings[i].severity);
			fprintf(f, "] ");
			h(f, m->findings[i].type);
			fprintf(f, "</b></li>\n");
		}
		fprintf(f, "</ul>\n");
	}
	if (m->nrecs) {
		fprintf(f, "<h2>Recommendations</h2><ul>\n");
		for (size_t i = 0; i < m->nrecs; i++) {
			fprintf(f, "<li><b>[");
			h(f, m->recs[i].priority);
			fprintf(f, "] ");
			h(f, m->recs[i].title);
			fprintf(f, "</b> ");
			h(f, m->recs[i].description);
			fprintf(f, "</li>\n");
		}
		fprintf(f, "</ul>\n");
	}
}

static void html_samples(FILE *f, const struct model *m)
{
	const struct model_samples *s = &m->samples;
	/* a Python target's own frames, not its interpreter's (py-spy's view) */
	bool python_view = !folded_empty(&m->oncpu_python);
	struct folded leaf = {};

	fprintf(f, "<h2>Samples</h2><table>\n");
	row_num(f, "samples", s->present ? (double)s->total : NAN, "%.0f");
	row_num(f, "requested Hz", s->present ? (double)s->requested_hz : NAN, "%.0f");
	row_num(f, "achieved Hz", s->present ? s->achieved_hz : NAN, "%.1f");
	fprintf(f, "<tr><th>call graph</th><td>");
	h(f, s->present ? s->call_graph : NULL);
	fprintf(f, "</td></tr>\n");
	row_num(f, "complete stacks %", s->present ? s->stack_quality.complete_percent : NAN, "%.1f");
	row_num(f, "lost samples", (double)model__lost(m, "samples"), "%.0f");
	row_num(f, "lost events", (double)model__lost(m, "events"), "%.0f");
	fprintf(f, "</table>\n<h3>Stack quality by leaf object</h3><table><tr><th>object</th><th>samples</th>"
		"<th>truncated %%</th></tr>\n");
	for (size_t i = 0; i < s->stack_quality.by_leaf_object.n; i++) {
		const struct model_leaf_object *v = &s->stack_quality.by_leaf_object.v[i];

		fprintf(f, "<tr><td>");
		h(f, v->name);
		fprintf(f, "</td><td>%.0f</td><td>%.1f</td></tr>\n", (double)v->samples, v->truncated_percent);
	}
	fprintf(f, "</table>\n");
	folded__leaves(python_view ? &m->oncpu_python : &m->oncpu, &leaf);
	fprintf(f, "<h3>Top on-CPU functions (leaf frames%s)</h3><table class=\"top-functions\"><tr><th>%%</th>"
		"<th>function</th></tr>\n", python_view ? "; the interpreter's own frames folded into the Python "
		"function running them" : "");
	for (size_t i = 0; i < leaf.n && i < 15; i++) {
		fprintf(f, "<tr><td>%.2f</td><td>", leaf.total ? 100.0 * leaf.entries[i].count / leaf.total : 0);
		h(f, leaf.entries[i].stack);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	folded__free(&leaf);
}

/* The phase selectors: each shows its graph for the phase chosen; the
 * choice is kept in the URL fragment (#phase=NAME), as the graphs keep
 * their search and zoom, so a link opens the page on that phase. */
static const char phase_script[] =
"<script>(function () {\n"
"function params() { return new URLSearchParams(location.hash.slice(1)); }\n"
"document.querySelectorAll('select.fg-phase').forEach(function (s) {\n"
"  s.addEventListener('change', function () {\n"
"    var p = params();\n"
"    document.querySelectorAll('div.fg-view[data-kind=\"' + s.dataset.kind + '\"]').forEach(function (d) {\n"
"      d.style.display = d.dataset.phase === s.value ? '' : 'none'; });\n"
"    if (s.value) p.set('phase', s.value); else p.delete('phase');\n"
"    history.replaceState(null, '', '#' + p.toString());\n"
"  });\n"
"  var want = params().get('phase');\n"
"  if (want && [].some.call(s.options, function (o) { return o.value === want; })) {\n"
"    s.value = want; s.dispatchEvent(new Event('change'));\n"
"  }\n"
"});\n"
"})();</script>\n";

/* One flame graph with its phase selector: every phase's graph is drawn
 * into the page, hidden but the one selected ("all stacks" first). */
static void html_flamegraph(FILE *f, const struct model *m, const char *kind, const struct folded *all,
			    const struct folded *by_phase, const struct flamegraph_opts *o)
{
	struct flamegraph_opts po = *o;
	char title[200];

	fprintf(f, "<h2>");
	h(f, o->title);
	fprintf(f, "</h2>\n<p>Stacks: <select class=\"fg-phase\" data-kind=\"%s\"><option value=\"\">all stacks"
		"</option>", kind);
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		if (!m->phase_names[ph] || folded_empty(&by_phase[ph]))
			continue;
		fprintf(f, "<option value=\"");
		h(f, m->phase_names[ph]);
		fprintf(f, "\">phase ");
		h(f, m->phase_names[ph]);
		fprintf(f, "</option>");
	}
	fprintf(f, "</select></p>\n<div class=\"fg-view\" data-kind=\"%s\" data-phase=\"\" "
		"style=\"overflow-x:auto\">\n", kind);
	flamegraph__write(all, o, f);
	fprintf(f, "</div>\n");
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		if (!m->phase_names[ph] || folded_empty(&by_phase[ph]))
			continue;
		snprintf(title, sizeof(title), "%s: phase %s", o->title, m->phase_names[ph]);
		po.title = title;
		fprintf(f, "<div class=\"fg-view\" data-kind=\"%s\" data-phase=\"", kind);
		h(f, m->phase_names[ph]);
		fprintf(f, "\" style=\"overflow-x:auto;display:none\">\n");
		flamegraph__write(&by_phase[ph], &po, f);
		fprintf(f, "</div>\n");
	}
}

/* Links to every file beside the page, and the files not written with why. */
static void html_outputs(FILE *f, const struct out_log *lg)
{
	json_t *o = outputs_json(lg), *v;
	size_t i;

	fprintf(f, "<h2>Outputs</h2><p>Beside this page:");
	json_array_foreach(json_object_get(o, "files"), i, v) {
		const char *name = json_string_value(v);

		if (!strcmp(name, "report.html"))
			continue;
		fprintf(f, "%s <a href=\"", i ? "," : "");
		h(f, name);
		fprintf(f, "\">");
		h(f, name);
		fprintf(f, "</a>%s", !strcmp(name, "trace.json") ? " (open in https://ui.perfetto.dev)" :
			!strcmp(name, "timeline.speedscope.json") ? " (open in https://www.speedscope.app)" : "");
	}
	fprintf(f, ".</p>\n");
	if (json_array_size(json_object_get(o, "not_written"))) {
		fprintf(f, "<p>Not written:</p><ul>\n");
		json_array_foreach(json_object_get(o, "not_written"), i, v) {
			fprintf(f, "<li><code>");
			h(f, json_string_value(json_object_get(v, "file")));
			fprintf(f, "</code>: ");
			h(f, json_string_value(json_object_get(v, "reason")));
			fprintf(f, "</li>\n");
		}
		fprintf(f, "</ul>\n");
	}
	json_decref(o);
}

static int write_html(const struct model *m, const char *dir, const struct out_log *lg)
{
	struct atomic_file *af = atomic_file__open(dir, "report.html");
	FILE *f;

	if (!af)
		return -errno;
	if (side_energy__root_only(&m->energy.side) && atomic_file__private(af)) {
		atomic_file__abort(af);
		return -EIO;
	}
	f = atomic_file__stream(af);
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>infertrace report</title>\n"
		"<style>body{font-family:sans-serif;margin:20px;max-width:1240px}table{border-collapse:collapse;"
		"margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f0f0}"
		".warn{color:#b00;font-weight:bold}</style></head><body>\n<h1>infertrace report</h1>\n<p>Command: <code>");
	for (char **a = m->run.command; a && *a; a++) {
		h(f, *a);
		fputc(' ', f);
	}
	fprintf(f, "</code><br>Duration: %.2f s, stopped by ", m->run.duration_s);
	h(f, m->run.stop_reason ? m->run.stop_reason : "?");
	fprintf(f, "</p>\n");
	report_charts__write(f, m);
	html_cycles(f, m);
	html_phases(f, m);
	html_energy(f, m);
	llama__html(f, m);
	requests_html__write(f, m);
	html_gpu(f, m);
	if (m->probe_cost.present && isfinite(m->probe_cost.cost_ns)) {
		fprintf(f, "<p%s>Probe cost: %.1f µs per hit measured at start-up; the probes took about %.2f%% "
			"of a phase at most%s</p>\n", m->probe_cost.warning ? " class=\"warn\"" : "",
			m->probe_cost.cost_ns / 1e3, m->probe_cost.derived ? m->probe_cost.max_percent : NAN,
			m->probe_cost.warning ? ": phase times are inflated" : ".");
	}
	html_findings(f, m);
	tail__html(f, m);
	html_samples(f, m);
	html_flamegraph(f, m, "oncpu", &m->oncpu, m->oncpu_by_phase, &fg_oncpu);
	if (m->have_offcpu)
		html_flamegraph(f, m, "offcpu", &m->offcpu_us, m->offcpu_us_by_phase, &fg_offcpu);
	fprintf(f, "%s", phase_script);
	html_outputs(f, lg);
	fprintf(f, "</body></html>\n");
	return atomic_file__commit(af);
}

/* ---- folded stacks ---- */

/* folded__write merges and sorts in place: write a copy, the model stays as it is. */
static int write_folded_copy(const struct folded *src, const char *dir, const char *name)
{
	struct folded copy = {};
	int err = 0;

	for (size_t i = 0; i < src->n && !err; i++)
		err = folded__add(&copy, src->entries[i].stack, src->entries[i].count);
	if (!err)
		err = folded__write(&copy, dir, name);
	folded__free(&copy);
	return err;
}

static void write_folded_set(struct out_log *lg, const char *base, const struct folded *all,
			     const struct folded *by_phase, const struct model *m)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.folded", base);
	out_done(lg, name, write_folded_copy(all, lg->dir, name));
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		if (!m->phase_names[ph] || folded_empty(&by_phase[ph]))
			continue; /* listed in profile.json's outputs.not_written */
		snprintf(name, sizeof(name), "%s.%s.folded", base, m->phase_names[ph]);
		out_done(lg, name, write_folded_copy(&by_phase[ph], lg->dir, name));
	}
}

/* stacks.python.folded: the on-CPU stacks' Python view, where a stack had
 * Python frames (symbols/stacks.c). A phase named "python" keeps the name
 * for its own stacks. */
static void write_python_view(struct out_log *lg, const struct model *m)
{
	if (folded_empty(&m->oncpu_python))
		return;
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		if (m->phase_names[ph] && !strcmp(m->phase_names[ph], "python")) {
			not_written(lg, "stacks.python.folded (Python view)", "a phase is named python");
			return;
		}
	out_done(lg, "stacks.python.folded", write_folded_copy(&m->oncpu_python, lg->dir, "stacks.python.folded"));
}

/* wakeup.folded: written where a thread ended another's block. */
static void write_wakeup(struct out_log *lg, const struct model *m)
{
	if (!m->have_wakeup)
		not_written(lg, "wakeup.folded", "off-CPU stacks were not recorded");
	else if (folded_empty(&m->wakeup_us))
		not_written(lg, "wakeup.folded", "no thread of a target woke another");
	else
		out_done(lg, "wakeup.folded", write_folded_copy(&m->wakeup_us, lg->dir, "wakeup.folded"));
}

/* gpu.folded: kernel time under the launch stacks, with the GPU timeline. */
static void write_gpu_folded(struct out_log *lg, const struct model *m)
{
	const struct model_gpu_activity *a = &m->gpu_activity;

	if (!a->source || strcmp(a->source, "cupti"))
		return;
	if (folded_empty(&a->folded))
		not_written(lg, "gpu.folded", "no kernel ran in the recording");
	else
		out_done(lg, "gpu.folded", write_folded_copy(&a->folded, lg->dir, "gpu.folded"));
}

/* timeline.speedscope.json: written where samples carry their times. */
static void write_timeline(struct out_log *lg, const struct model *m, const char *dir)
{
	const char *cg = json_string_value(json_object_get(m->run.config, "call_graph"));

	if (m->ntrace_samples)
		out_done(lg, "timeline.speedscope.json", speedscope__write(m, dir));
	else if (!m->have_oncpu)
		not_written(lg, "timeline.speedscope.json", "on-CPU samples were not recorded");
	else if (cg && !strcmp(cg, "fp"))
		not_written(lg, "timeline.speedscope.json", "samples carry no times with --call-graph fp");
	else
		not_written(lg, "timeline.speedscope.json", "no sample was kept with its time");
}

/* Removes NAME, written already, to make room for profile.json. */
static bool give_way(struct out_log *lg, const char *name)
{
	json_t *v;
	size_t i;
	int fd;

	json_array_foreach(lg->files, i, v) {
		if (strcmp(json_string_value(v), name))
			continue;
		fd = atomic_dir__open(lg->dir, NULL, 0);
		if (fd < 0 || unlinkat(fd, name, 0)) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		close(fd);
		json_array_remove(lg->files, i);
		if (!lg->err)
			lg->err = -ENOSPC;
		not_written(lg, name, "removed to make room for profile.json: the file system is full");
		fprintf(stderr, "infertrace: %sremoved %s/%s to make room for profile.json\n", lg->what, lg->dir, name);
		return true;
	}
	return false;
}

/* profile.json, last: its outputs list what was written. It is the one
 * output the others are read with: on a full file system the largest of
 * the views written before it give way to it. */
static void write_profile(const struct model *m, struct out_log *lg)
{
	static const char *const views[] = {
		"report.html", "offcpu.svg", "flamegraph.svg", "timeline.speedscope.json", "trace.json",
	};
	json_t *profile = model__to_json(m);
	int err = -ENOMEM;

	for (size_t i = 0; profile; ) {
		json_object_set_new(profile, "outputs", outputs_json(lg));
		err = profile__write(profile, lg->dir);
		if (err != -ENOSPC)
			break;
		while (i < sizeof(views) / sizeof(views[0]) && !give_way(lg, views[i]))
			i++;
		if (i == sizeof(views) / sizeof(views[0]))
			break;
	}
	json_decref(profile);
	out_done(lg, "profile.json", err);
}

/* The folded stacks (per phase too), the wakers' and profile.pb.gz: what
 * a checkpoint and the end of a recording both write first. */
static void write_stacks(struct out_log *lg, const struct model *m, const char *dir)
{
	if (m->have_oncpu) {
		write_folded_set(lg, "stacks", &m->oncpu, m->oncpu_by_phase, m);
		write_python_view(lg, m);
	}
	if (m->have_offcpu)
		write_folded_set(lg, "offcpu", &m->offcpu_us, m->offcpu_us_by_phase, m);
	write_wakeup(lg, m);
	write_gpu_folded(lg, m);
	out_done(lg, "profile.pb.gz", pprof__write(m, dir));
}

int outputs__write_checkpoint(const struct model *m, const char *dir)
{
	struct out_log lg;
	int err = model__require(m, MODEL_ANALYSED, "the checkpoint writers");

	if (err)
		return err;
	out_log_init(&lg, m, dir, "checkpoint: ");
	/* the stacks and profile.pb.gz first: profile.json, whose time range
	 * says what the checkpoint covers, is replaced last */
	write_stacks(&lg, m, dir);
	write_profile(m, &lg);
	err = lg.err;
	out_log_free(&lg);
	return err;
}

int outputs__write_all(const struct model *m, const char *dir)
{
	struct out_log lg;
	int err = model__require(m, MODEL_ANALYSED, "the writers");

	if (err)
		return err;
	out_log_init(&lg, m, dir, "");
	write_stacks(&lg, m, dir);
	out_done(&lg, "trace.json", write_trace(m, dir));
	write_timeline(&lg, m, dir);
	out_done(&lg, "flamegraph.svg", flamegraph__write_file(dir, "flamegraph.svg", &m->oncpu, &fg_oncpu));
	if (m->have_offcpu)
		out_done(&lg, "offcpu.svg", flamegraph__write_file(dir, "offcpu.svg", &m->offcpu_us, &fg_offcpu));
	/* its links: the files above and profile.json, written next */
	out_done(&lg, "report.html", write_html(m, dir, &lg));
	write_profile(m, &lg);
	err = lg.err;
	out_log_free(&lg);
	return err;
}
