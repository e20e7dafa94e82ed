// SPDX-License-Identifier: BSD-2-Clause
/* Outputs concern, last of the recording: from what the other concerns kept
 * and wrote into profile.json, writes
 *   trace.json      Chrome trace events (Perfetto, chrome://tracing): cycles
 *                   and phase calls as spans per thread, samples as instant
 *                   events (--call-graph dwarf streams each sample with its
 *                   time) or, without per-sample times, a samples-per-cycle
 *                   counter;
 *   flamegraph.svg  the on-CPU flame graph of stacks.folded;
 *   report.html     one self-contained page: summary tables and the flame graph.
 * See docs/outputs.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "concerns.h"
#include "outputs.h"
#include "probes.h"
#include "side.h"
#include "syms.h"

#define MAX_LOGGED_SAMPLES (1u << 20)

struct sample_mark {
	uint64_t ts_ns;
	uint64_t ip;
	pid_t tgid, tid;
	uint32_t phase;
};

static struct {
	struct sample_mark *marks;
	size_t n, cap;
	uint64_t dropped;
} samples_log;

static int outputs_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_ustack_event *e = data;

	(void)rec;
	if (e->hdr.type != IT_EV_USTACK || size < sizeof(*e))
		return 0;
	if (samples_log.n == samples_log.cap) {
		size_t cap = samples_log.cap ? samples_log.cap * 2 : 4096;
		struct sample_mark *m = cap <= MAX_LOGGED_SAMPLES ?
			realloc(samples_log.marks, cap * sizeof(*m)) : NULL;

		if (!m) {
			samples_log.dropped++;
			return 1;
		}
		samples_log.marks = m;
		samples_log.cap = cap;
	}
	samples_log.marks[samples_log.n++] = (struct sample_mark){
		.ts_ns = e->hdr.ts_ns, .tgid = e->hdr.tgid, .tid = e->hdr.tid, .phase = e->phase,
#if defined(__x86_64__)
		.ip = e->regs[16],
#elif defined(__aarch64__)
		.ip = e->regs[32],
#endif
	};
	return 1;
}

/* ---- trace.json ---- */

static double rel_us(const struct recording *rec, uint64_t ns)
{
	return ((double)ns - (double)rec->start_ns) / 1e3;
}

static void json_str(FILE *f, const char *s)
{
	json_t *j = json_string(s ? s : "");
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(d ? d : "\"\"", f);
	free(d);
	json_decref(j);
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int write_trace(struct recording *rec, json_t *profile)
{
	struct atomic_file *af = atomic_file__open(rec->opts.output_dir, "trace.json");
	json_t *cycles = json_object_get(profile, "cycles"), *c;
	const struct phase_call *calls = NULL;
	size_t ncalls = 0, i;
	const char *sep = "";
	FILE *f;

	if (!af)
		return -errno;
	f = atomic_file__stream(af);
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"infertrace\",\"time_origin\":"
		"\"recording start (CLOCK_MONOTONIC %llu ns)\"},\"traceEvents\":[\n",
		(unsigned long long)rec->start_ns);
	for (i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];

		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
			sep, p->pid, p->pid);
		json_str(f, p->comm);
		fprintf(f, "}}");
		sep = ",\n";
	}
	/* cycles: on the process's main-thread track (a marker may fire on any thread) */
	json_array_foreach(cycles, i, c) {
		double start = num(c, "start_ns"), end = num(c, "end_ns");
		int pid = (int)num(c, "pid");

		if (isnan(start) || isnan(end))
			continue;
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"cycle\",\"name\":\"cycle %zu\",\"pid\":%d,\"tid\":%d,"
			"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"index\":%zu,\"duration_ms\":%.3f,\"samples\":%.0f",
			sep, i, pid, pid, rel_us(rec, (uint64_t)start), (end - start) / 1e3, i,
			(end - start) / 1e6, isnan(num(c, "samples")) ? 0 : num(c, "samples"));
		if (!isnan(num(c, "tokens_per_second")))
			fprintf(f, ",\"tokens_per_second\":%.3f", num(c, "tokens_per_second"));
		fprintf(f, "}}");
		sep = ",\n";
		/* without per-sample times: samples per cycle as a counter */
		if (!samples_log.n && !isnan(num(c, "samples"))) {
			fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"samples per cycle\",\"pid\":%d,\"ts\":%.3f,"
				"\"args\":{\"samples\":%.0f}}", pid, rel_us(rec, (uint64_t)start), num(c, "samples"));
			fprintf(f, ",\n{\"ph\":\"C\",\"name\":\"samples per cycle\",\"pid\":%d,\"ts\":%.3f,"
				"\"args\":{\"samples\":0}}", pid, rel_us(rec, (uint64_t)end));
		}
	}
	calls = probes__phase_calls(rec, &ncalls);
	for (i = 0; calls && i < ncalls; i++) {
		const struct phase_call *pc = &calls[i];
		const char *name = pc->phase < IT_MAX_PHASES ? rec->phase_names[pc->phase] : NULL;

		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"phase\",\"name\":", sep);
		json_str(f, name ? name : "phase");
		fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"cycle\":%u}}",
			pc->tgid, pc->tid, rel_us(rec, pc->entry_ns), (pc->exit_ns - pc->entry_ns) / 1e3, pc->cycle);
		sep = ",\n";
	}
	for (i = 0; i < samples_log.n; i++) {
		const struct sample_mark *m = &samples_log.marks[i];
		char frame[256];

		syms_cache__format(rec->syms, m->tgid, m->ip, frame, sizeof(frame));
		fprintf(f, "%s{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":", sep);
		json_str(f, frame);
		fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"phase\":", m->tgid, m->tid,
			rel_us(rec, m->ts_ns));
		json_str(f, m->phase && m->phase < IT_MAX_PHASES && rec->phase_names[m->phase] ?
			 rec->phase_names[m->phase] : "");
		fprintf(f, "}}");
		sep = ",\n";
	}
	/* side data (temperatures, clocks, load, GPU) as counter tracks */
	json_t *counters = json_array(), *ev;

	side__trace_counters(rec, counters, rec->procs.n ? rec->procs.procs[0].pid : 0);
	json_array_foreach(counters, i, ev) {
		fputs(sep, f);
		json_dumpf(ev, f, JSON_COMPACT);
		sep = ",\n";
	}
	json_decref(counters);
	fprintf(f, "\n]}\n");
	return atomic_file__commit(af);
}

/* ---- flamegraph.svg ---- */

static int write_svg_file(const struct recording *rec, const struct folded *st, const char *title)
{
	struct atomic_file *af = atomic_file__open(rec->opts.output_dir, "flamegraph.svg");
	int err;

	if (!af)
		return -errno;
	err = flamegraph__write_svg(st, title, "samples", atomic_file__stream(af));
	if (err) {
		atomic_file__abort(af);
		return err;
	}
	return atomic_file__commit(af);
}

/* ---- report.html ---- */

static void h(FILE *f, const char *s)
{
	outputs__xml_escape(f, s ? s : "");
}

static void row_num(FILE *f, const char *name, double v, const char *fmt)
{
	fprintf(f, "<tr><th>");
	h(f, name);
	fprintf(f, "</th><td>");
	if (isnan(v))
		fprintf(f, "-");
	else
		fprintf(f, fmt, v);
	fprintf(f, "</td></tr>\n");
}

static void html_phases(FILE *f, json_t *profile)
{
	json_t *phases = json_object_get(profile, "phases"), *v;
	json_t *po = json_object_get(json_object_get(profile, "probes_overhead"), "phases");
	const char *name;

	if (!json_object_size(phases))
		return;
	fprintf(f, "<h2>Phases</h2><table><tr><th>phase</th><th>total ms</th><th>calls</th><th>%% of cycle</th>"
		"<th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>probe cost %%</th></tr>\n");
	json_object_foreach(phases, name, v) {
		fprintf(f, "<tr><td>");
		h(f, name);
		fprintf(f, "</td><td>%.2f</td><td>%.0f</td><td>%.1f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
			"<td>%.2f</td></tr>\n", num(v, "total_ms"), num(v, "calls"), num(v, "percent_of_cycle"),
			num(v, "p50_ms"), num(v, "p95_ms"), num(v, "p99_ms"),
			num(json_object_get(po, name), "percent"));
	}
	fprintf(f, "</table>\n");
}

static void html_cycles(FILE *f, json_t *profile)
{
	json_t *a = json_object_get(profile, "aggregate_metrics"), *cycles = json_object_get(profile, "cycles"), *c;
	size_t i;

	fprintf(f, "<h2>Cycles</h2><table>\n");
	row_num(f, "cycles", num(a, "total_cycles"), "%.0f");
	row_num(f, "average ms", num(a, "avg_cycle_ms"), "%.3f");
	row_num(f, "p50 ms", num(a, "p50_cycle_ms"), "%.3f");
	row_num(f, "p95 ms", num(a, "p95_cycle_ms"), "%.3f");
	row_num(f, "p99 ms", num(a, "p99_cycle_ms"), "%.3f");
	row_num(f, "max ms", num(a, "max_cycle_ms"), "%.3f");
	row_num(f, "tokens/s (average)", num(a, "avg_tokens_per_second"), "%.2f");
	row_num(f, "peak memory MB", num(a, "peak_memory_mb"), "%.1f");
	fprintf(f, "</table>\n");
	if (!json_array_size(cycles))
		return;
	fprintf(f, "<details><summary>per cycle</summary><table><tr><th>#</th><th>pid</th><th>ms</th>"
		"<th>samples</th><th>tokens/s</th></tr>\n");
	json_array_foreach(cycles, i, c) {
		if (i >= 1000)
			break;
		fprintf(f, "<tr><td>%zu</td><td>%.0f</td><td>%.3f</td><td>%.0f</td><td>%.2f</td></tr>\n", i,
			num(c, "pid"), num(c, "duration_ms"), num(c, "samples"), num(c, "tokens_per_second"));
	}
	fprintf(f, "</table></details>\n");
}

static void html_list(FILE *f, json_t *profile, const char *section, const char *title)
{
	json_t *arr = json_object_get(profile, section), *v;
	size_t i;

	if (!json_array_size(arr))
		return;
	fprintf(f, "<h2>");
	h(f, title);
	fprintf(f, "</h2><ul>\n");
	json_array_foreach(arr, i, v) {
		json_t *t = json_object_get(v, "type"), *ti = json_object_get(v, "title");
		json_t *sev = json_object_get(v, "severity"), *pr = json_object_get(v, "priority");
		json_t *d = json_object_get(v, "description");

		fprintf(f, "<li><b>[");
		h(f, json_string_value(sev) ? json_string_value(sev) : json_string_value(pr));
		fprintf(f, "] ");
		h(f, json_string_value(t) ? json_string_value(t) : json_string_value(ti));
		fprintf(f, "</b> ");
		h(f, json_string_value(d));
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

static void html_samples(FILE *f, json_t *profile, const struct folded *st)
{
	json_t *s = json_object_get(profile, "samples"), *q = json_object_get(s, "stack_quality");
	json_t *objs = json_object_get(q, "by_leaf_object"), *v;
	json_t *lost = json_object_get(profile, "lost");
	struct folded leaf = {};
	const char *name;

	fprintf(f, "<h2>Samples</h2><table>\n");
	row_num(f, "samples", num(s, "total"), "%.0f");
	row_num(f, "requested Hz", num(s, "requested_hz"), "%.0f");
	row_num(f, "achieved Hz", num(s, "achieved_hz"), "%.1f");
	fprintf(f, "<tr><th>call graph</th><td>");
	h(f, json_string_value(json_object_get(s, "call_graph")));
	fprintf(f, "</td></tr>\n");
	row_num(f, "complete stacks %", num(q, "complete_percent"), "%.1f");
	row_num(f, "lost samples", num(lost, "samples"), "%.0f");
	row_num(f, "lost events", num(lost, "events"), "%.0f");
	fprintf(f, "</table>\n<h3>Stack quality by leaf object</h3><table><tr><th>object</th><th>samples</th>"
		"<th>truncated %%</th></tr>\n");
	json_object_foreach(objs, name, v) {
		fprintf(f, "<tr><td>");
		h(f, name);
		fprintf(f, "</td><td>%.0f</td><td>%.1f</td></tr>\n", num(v, "samples"), num(v, "truncated_percent"));
	}
	fprintf(f, "</table>\n");
	for (size_t i = 0; i < st->n; i++) {
		const char *semi = strrchr(st->entries[i].stack, ';');

		folded__add(&leaf, semi ? semi + 1 : st->entries[i].stack, st->entries[i].count);
	}
	folded__merge(&leaf);
	folded__sort_by_count(&leaf);
	fprintf(f, "<h3>Top on-CPU functions (leaf frames)</h3><table><tr><th>%%</th><th>function</th></tr>\n");
	for (size_t i = 0; i < leaf.n && i < 15; i++) {
		fprintf(f, "<tr><td>%.2f</td><td>", leaf.total ? 100.0 * leaf.entries[i].count / leaf.total : 0);
		h(f, leaf.entries[i].stack);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	folded__free(&leaf);
}

static int write_html(struct recording *rec, json_t *profile, const struct folded *st)
{
	struct atomic_file *af = atomic_file__open(rec->opts.output_dir, "report.html");
	json_t *cmd = json_object_get(profile, "command"), *v;
	json_t *po = json_object_get(profile, "probes_overhead");
	size_t i;
	FILE *f;

	if (!af)
		return -errno;
	f = atomic_file__stream(af);
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>infertrace report</title>\n"
		"<style>body{font-family:sans-serif;margin:20px;max-width:1240px}table{border-collapse:collapse;"
		"margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f0f0}"
		".warn{color:#b00;font-weight:bold}</style></head><body>\n<h1>infertrace report</h1>\n<p>Command: <code>");
	json_array_foreach(cmd, i, v) {
		h(f, json_string_value(v));
		fputc(' ', f);
	}
	fprintf(f, "</code><br>Duration: %.2f s, stopped by ", num(profile, "duration_s"));
	h(f, json_string_value(json_object_get(profile, "stop_reason")));
	fprintf(f, "</p>\n");
	html_cycles(f, profile);
	html_phases(f, profile);
	if (po && !isnan(num(po, "cost_ns_per_hit"))) {
		fprintf(f, "<p%s>Probe cost: %.1f µs per hit measured at start-up; the probes took about %.2f%% "
			"of a phase at most%s</p>\n", json_is_true(json_object_get(po, "warning")) ? " class=\"warn\"" : "",
			num(po, "cost_ns_per_hit") / 1e3, num(po, "max_percent"),
			json_is_true(json_object_get(po, "warning")) ? ": phase times are inflated" : ".");
	}
	html_list(f, profile, "bottlenecks", "Bottlenecks");
	html_list(f, profile, "recommendations", "Recommendations");
	html_samples(f, profile, st);
	fprintf(f, "<h2>On-CPU flame graph</h2>\n<div style=\"overflow-x:auto\">\n");
	flamegraph__write_svg(st, "On-CPU flame graph", "samples", f);
	fprintf(f, "</div>\n<p>Outputs beside this page: profile.json, stacks.folded, offcpu.folded, "
		"trace.json (open in https://ui.perfetto.dev), flamegraph.svg.</p>\n</body></html>\n");
	return atomic_file__commit(af);
}

static int outputs_write(struct recording *rec, json_t *profile)
{
	char path[4096];
	struct folded st = {};
	int err, e;

	snprintf(path, sizeof(path), "%s/stacks.folded", rec->opts.output_dir);
	if (folded__read(path, &st))
		folded__free(&st); /* no stacks: empty graph */
	err = write_trace(rec, profile);
	e = write_svg_file(rec, &st, "On-CPU flame graph");
	if (!err)
		err = e;
	e = write_html(rec, profile, &st);
	if (!err)
		err = e;
	if (err)
		fprintf(stderr, "infertrace: writing trace.json, flamegraph.svg or report.html to '%s' failed: %s\n",
			rec->opts.output_dir, strerror(-err));
	if (samples_log.dropped) {
		json_t *lost = json_object_get(profile, "lost");

		json_object_set_new(lost, "trace_samples_not_kept", json_integer(samples_log.dropped));
	}
	folded__free(&st);
	return err;
}

static void outputs_cleanup(struct recording *rec)
{
	(void)rec;
	free(samples_log.marks);
	memset(&samples_log, 0, sizeof(samples_log));
}

const struct concern outputs_concern = {
	.name = "outputs",
	.on_event = outputs_on_event,
	.write = outputs_write,
	.cleanup = outputs_cleanup,
};
