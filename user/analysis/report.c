// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "folded.h"
#include "profile.h"
#include "report.h"

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_samples(json_t *p)
{
	json_t *s = json_object_get(p, "samples"), *q = json_object_get(s, "stack_quality");
	json_t *objs = json_object_get(q, "by_leaf_object"), *v, *lost = json_object_get(p, "lost");
	const char *key;

	printf("Samples: %.0f at %.0f Hz requested, %.1f Hz achieved over %.2f s of target CPU time\n",
	       num(s, "total"), num(s, "requested_hz"), num(s, "achieved_hz"), num(s, "target_cpu_seconds"));
	printf("Stacks: %.1f%% complete (reach main/thread start)\n", num(q, "complete_percent"));
	json_object_foreach(objs, key, v) {
		if (num(v, "truncated_percent") > 20 && num(v, "samples") >= 10)
			printf("  warning: %.0f%% of stacks in %s end early (no frame pointers?); "
			       "try --call-graph dwarf\n", num(v, "truncated_percent"), key);
	}
	if (num(lost, "samples") > 0 || num(lost, "events") > 0)
		printf("WARNING: %.0f samples and %.0f events were lost: numbers are incomplete\n",
		       num(lost, "samples"), num(lost, "events"));
}

static void print_cycles(json_t *p)
{
	json_t *a = json_object_get(p, "aggregate_metrics"), *phases = json_object_get(p, "phases"), *v;
	const char *key;

	if (!json_object_size(a))
		return;
	printf("\nCycles: %.0f   avg %.2f ms   p50 %.2f   p95 %.2f   p99 %.2f   max %.2f ms\n",
	       num(a, "total_cycles"), num(a, "avg_cycle_ms"), num(a, "p50_cycle_ms"),
	       num(a, "p95_cycle_ms"), num(a, "p99_cycle_ms"), num(a, "max_cycle_ms"));
	if (!isnan(num(a, "avg_tokens_per_second")))
		printf("Tokens/s: %.2f during the inference phase, %.2f over the whole cycle\n",
		       num(a, "avg_tokens_per_second"), num(a, "avg_tokens_per_second_wall"));
	if (!isnan(num(a, "peak_memory_mb")))
		printf("Peak memory: %.1f MB\n", num(a, "peak_memory_mb"));
	if (!json_object_size(phases))
		return;
	printf("\n%-20s %10s %8s %8s %10s %10s %10s %16s\n", "phase", "total_ms", "calls", "%cycle",
	       "p50_ms", "p95_ms", "p99_ms", "outside_cycles");
	json_object_foreach(phases, key, v) {
		json_t *out = json_object_get(v, "outside_cycles");
		char outside[64] = "-";

		if (num(out, "calls") > 0)
			snprintf(outside, sizeof(outside), "%.1f ms/%.0f", num(out, "thread_ms"), num(out, "calls"));
		printf("%-20s %10.2f %8.0f %7.1f%% %10.3f %10.3f %10.3f %16s\n", key, num(v, "total_ms"),
		       num(v, "calls"), num(v, "percent_of_cycle"), num(v, "p50_ms"), num(v, "p95_ms"),
		       num(v, "p99_ms"), outside);
	}
}

static void print_probe_overhead(json_t *p)
{
	json_t *o = json_object_get(p, "probes_overhead"), *phases = json_object_get(o, "phases"), *v;
	const char *key;

	if (!json_is_object(o) || isnan(num(o, "cost_ns_per_hit")))
		return;
	printf("\nProbe cost: %.1f us per hit (measured at start-up)", num(o, "cost_ns_per_hit") / 1e3);
	json_object_foreach(phases, key, v)
		printf("; %s ~%.2f ms (%.1f%%)", key, num(v, "estimated_ms"), num(v, "percent"));
	printf("; cycles ~%.1f%%\n", num(json_object_get(o, "cycles"), "percent"));
	if (num(o, "max_percent") > 5.0)
		printf("WARNING: the probes themselves inflate phase times by up to %.1f%%; "
		       "probe fewer or coarser functions\n", num(o, "max_percent"));
}

static void print_list(json_t *p, const char *section, const char *title)
{
	json_t *arr = json_object_get(p, section), *v;
	size_t i;

	if (!json_array_size(arr))
		return;
	printf("\n%s:\n", title);
	json_array_foreach(arr, i, v) {
		json_t *t = json_object_get(v, "type"), *title_v = json_object_get(v, "title");
		json_t *sev = json_object_get(v, "severity"), *prio = json_object_get(v, "priority");
		json_t *desc = json_object_get(v, "description");

		printf("  - [%s] %s%s%s\n", json_is_string(sev) ? json_string_value(sev) :
		       json_is_string(prio) ? json_string_value(prio) : "-",
		       json_is_string(t) ? json_string_value(t) : json_is_string(title_v) ? json_string_value(title_v) : "?",
		       json_is_string(desc) ? ": " : "", json_is_string(desc) ? json_string_value(desc) : "");
	}
}

static void print_top_functions(const char *dir)
{
	char path[4096];
	struct folded st, leaf = {};

	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	if (folded__read(path, &st))
		return;
	folded__leaves(&st, &leaf);
	folded__free(&st);
	printf("\nTop on-CPU functions (leaf frames):\n");
	for (size_t i = 0; i < leaf.n && i < 10; i++)
		printf("  %6.2f%%  %s\n", leaf.total ? 100.0 * leaf.entries[i].count / leaf.total : 0,
		       leaf.entries[i].stack);
	folded__free(&leaf);
}

int cmd_report(int argc, char **argv)
{
	json_t *p, *cmd, *v;
	char dir[4096];
	size_t i;

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 ? stdout : stderr,
			"Usage: infertrace report DIR|profile.json\n"
			"Prints a text summary of a recording: samples and stack quality, cycles,\n"
			"phases, bottlenecks and recommendations, top functions.\n");
		return argc == 2 ? IT_EXIT_OK : IT_EXIT_USAGE;
	}
	p = profile__load(argv[1]);
	if (!p)
		return IT_EXIT_TARGET;
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	if (strlen(dir) > 13 && !strcmp(dir + strlen(dir) - 13, "/profile.json"))
		dir[strlen(dir) - 13] = 0;
	else if (!strcmp(dir, "profile.json"))
		strcpy(dir, ".");
	printf("infertrace report — %s\n", argv[1]);
	cmd = json_object_get(p, "command");
	printf("Command:");
	json_array_foreach(cmd, i, v)
		printf(" %s", json_string_value(v));
	printf("%s\nDuration: %.2f s   stopped by: %s\n", json_array_size(cmd) ? "" : " (attached to PIDs)",
	       num(p, "duration_s"), json_string_value(json_object_get(p, "stop_reason")) ?: "?");
	print_samples(p);
	print_cycles(p);
	print_probe_overhead(p);
	print_list(p, "bottlenecks", "Bottlenecks");
	print_list(p, "recommendations", "Recommendations");
	print_list(p, "alerts", "Alerts");
	print_top_functions(dir);
	json_decref(p);
	return 0;
}

/* One compared figure; lower is better for all of them. */
static int diff_row(const char *name, double base, double new_v, double threshold_pct)
{
	double change;

	if (isnan(base) || isnan(new_v) || base <= 0)
		return 0;
	change = 100.0 * (new_v - base) / base;
	printf("%-28s %12.3f %12.3f %+9.1f%% %8.2fx  %s\n", name, base, new_v, change, base / (new_v > 0 ? new_v : 1e-9),
	       change > threshold_pct ? "REGRESSION" : change < -threshold_pct ? "faster" : "");
	return change > threshold_pct;
}

int cmd_diff(int argc, char **argv)
{
	double threshold = 5.0;
	json_t *b, *n, *bp, *np, *v;
	const char *key;
	int regressions = 0;
	char *end;

	/* diff [--threshold PCT] BASE NEW */
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: infertrace diff [--threshold PCT] BASE NEW (record directories or profile.json files)\n"
		       "Exits 1 when any time grew by more than PCT%% (default 5).\n");
		return IT_EXIT_OK;
	}
	if (argc == 5 && !strcmp(argv[1], "--threshold")) {
		threshold = strtod(argv[2], &end);
		if (*end || end == argv[2] || !isfinite(threshold) || threshold < 0) {
			fprintf(stderr, "infertrace: invalid --threshold '%s': expected a finite percentage >= 0\n", argv[2]);
			return IT_EXIT_USAGE;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "Usage: infertrace diff [--threshold PCT] BASE NEW (record directories or profile.json files)\n"
			"Exits 1 when any time grew by more than PCT%% (default 5).\n");
		return IT_EXIT_USAGE;
	}
	b = profile__load(argv[1]);
	n = b ? profile__load(argv[2]) : NULL;
	if (!b || !n) {
		json_decref(b);
		return IT_EXIT_TARGET;
	}
	printf("%-28s %12s %12s %10s %9s\n", "metric", "base", "new", "change", "speedup");
	regressions += diff_row("duration_s", num(b, "duration_s"), num(n, "duration_s"), threshold);
	static const char *const agg[] = { "avg_cycle_ms", "p50_cycle_ms", "p95_cycle_ms", "p99_cycle_ms", "max_cycle_ms" };
	for (size_t i = 0; i < sizeof(agg) / sizeof(agg[0]); i++)
		regressions += diff_row(agg[i], num(json_object_get(b, "aggregate_metrics"), agg[i]),
					num(json_object_get(n, "aggregate_metrics"), agg[i]), threshold);
	bp = json_object_get(b, "phases");
	np = json_object_get(n, "phases");
	json_object_foreach(bp, key, v) {
		char label[64];
		json_t *nv = json_object_get(np, key);
		double bc = num(v, "calls"), nc = num(nv, "calls");

		snprintf(label, sizeof(label), "phase %s ms/call", key);
		if (bc > 0 && nc > 0)
			regressions += diff_row(label, num(v, "total_ms") / bc, num(nv, "total_ms") / nc, threshold);
	}
	if (regressions)
		printf("regression: some times grew by more than %.1f%%\n", threshold);
	else
		printf("no regression\n");
	json_decref(b);
	json_decref(n);
	return regressions ? IT_EXIT_REGRESSION : IT_EXIT_OK;
}
