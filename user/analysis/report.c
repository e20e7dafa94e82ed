// SPDX-License-Identifier: BSD-2-Clause
/* `report` and `diff`: load profile.json into the recording model and print
 * from it, with the same typed figures the recording computed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>

#include "diff.h"
#include "exit_codes.h"
#include "folded.h"
#include "gpu_view.h"
#include "llama_view.h"
#include "model.h"
#include "outputs.h"
#include "power_mode.h"
#include "profile.h"
#include "report.h"
#include "requests_view.h"
#include "split_view.h"
#include "suggest.h"
#include "tail.h"
#include "text.h"

/* DIR/profile.json or a .json file, into m; the directory of the outputs
 * into dir. 0, or non-zero with a message. */
static int load_model(const char *arg, struct model *m, char *dir, size_t dirlen)
{
	json_t *p = profile__load(arg);
	int err;

	if (!p)
		return -EINVAL;
	err = model__from_json(m, p, arg);
	json_decref(p);
	if (err) {
		model__free(m);
		return err;
	}
	snprintf(dir, dirlen, "%s", arg);
	if (strlen(dir) > 13 && !strcmp(dir + strlen(dir) - 13, "/profile.json"))
		dir[strlen(dir) - 13] = 0;
	else if (!strcmp(dir, "profile.json"))
		snprintf(dir, dirlen, ".");
	return 0;
}

/* text__figure into a buffer that lives until the end of the statement: for the
 * figures read from a profile, which may be absent (NaN) in any of them. */
#define FIG(v, prec) text__figure((char[40]){ 0 }, 40, (v), 0, (prec))

/* How a process ended: "exited with status 3", "crashed: killed by SIGSEGV". */
static const char *fate(const struct model_process *p, char *buf, size_t len)
{
	const char *abbrev = WIFSIGNALED(p->exit_status) ? sigabbrev_np(WTERMSIG(p->exit_status)) : NULL;

	if (WIFSIGNALED(p->exit_status))
		snprintf(buf, len, "crashed: killed by SIG%s", abbrev ? abbrev : "?");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(p->exit_status));
	return buf;
}

/* The targets' own fate, apart from the helpers they ran: a command that
 * failed at once leaves a short recording that is no experiment. */
static void print_fate(const struct model *m)
{
	size_t helpers_sig = 0, helpers_exit = 0;
	bool stopped = m->run.stop_reason && strcmp(m->run.stop_reason, "target exited");
	char buf[64];

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct model_process *p = &m->procs[i];

		if (!p->exited || (!p->root && p->exit_status == 0))
			continue;
		if (!p->root) {
			*(WIFSIGNALED(p->exit_status) ? &helpers_sig : &helpers_exit) += 1;
			continue;
		}
		if (stopped && WIFSIGNALED(p->exit_status) &&
		    (WTERMSIG(p->exit_status) == SIGTERM || WTERMSIG(p->exit_status) == SIGKILL))
			printf("Target: %s (pid %d) was ended by the recording (%s)\n", p->comm, (int)p->pid,
			       m->run.stop_reason);
		else if (p->exit_status)
			printf("Target: %s (pid %d) %s%s\n", p->comm, (int)p->pid, fate(p, buf, sizeof(buf)),
			       m->run.command && !WIFSIGNALED(p->exit_status) ? " (non-zero: check the command's own output)" : "");
	}
	if (helpers_sig + helpers_exit)
		printf("Helpers (processes the targets ran): %zu crashed (a signal), %zu exited non-zero (see "
		       "crashes in profile.json)\n", helpers_sig, helpers_exit);
}

static void print_samples(const struct model *m)
{
	const struct model_samples *s = &m->samples;
	bool dwarf = !strcmp(s->call_graph, "dwarf");

	if (!s->present) {
		printf("Samples: none recorded\n");
		return;
	}
	printf("Samples: %s at %s Hz requested, %s Hz achieved over %s s of target CPU time\n",
	       FIG((double)s->total, 0), FIG((double)s->requested_hz, 0), FIG(s->achieved_hz, 1),
	       FIG(s->target_cpu_seconds, 2));
	printf("Stacks: %s%% complete (reach main/thread start)\n", FIG(s->stack_quality.complete_percent, 1));
	for (size_t i = 0; i < s->stack_quality.by_leaf_object.n; i++) {
		const struct model_leaf_object *v = &s->stack_quality.by_leaf_object.v[i];

		if (v->truncated_percent <= 20 || v->samples < 10)
			continue;
		/* the hint follows the mode the recording used */
		if (dwarf)
			printf("  warning: %.0f%% of stacks in %s end early with --call-graph dwarf (no CFI for the "
			       "code, or a stack deeper than the copy: try a larger --call-graph dwarf,SIZE)\n",
			       v->truncated_percent, v->name);
		else
			printf("  warning: %.0f%% of stacks in %s end early (no frame pointers?); "
			       "try --call-graph dwarf\n", v->truncated_percent, v->name);
	}
	if (model__lost(m, "samples") || model__lost(m, "events"))
		printf("WARNING: %llu samples and %llu events were lost: numbers are incomplete\n",
		       (unsigned long long)model__lost(m, "samples"), (unsigned long long)model__lost(m, "events"));
}

/* Start-up and tear-down, outside the cycles: not in the verdicts. */
static void print_edges(const struct model *m)
{
	const struct model_edge *edges[] = { &m->edges.startup, &m->edges.teardown };
	static const char *const labels[] = { "Start-up", "Tear-down" };

	for (int i = 0; i < 2 && m->edges.present; i++) {
		const struct model_edge *e = edges[i];

		printf("%s (outside the cycles): %.1f ms, %llu samples", labels[i], e->ms, (unsigned long long)e->samples);
		if (e->has_split)
			printf(", %.1f ms waiting for a CPU (%.0f%% of runnable time)", e->runq_wait_ms,
			       e->runq_share_percent);
		for (size_t j = 0; j < e->ntop; j++)
			printf("%s%s %.0f%%", j ? ", " : "; top: ",
			       e->top[j].name >= 0 && (size_t)e->top[j].name < m->nnames ? m->names[e->top[j].name] : "?",
			       e->top[j].percent);
		printf("\n");
	}
}

static void print_cycles(const struct model *m)
{
	const struct model_aggregates *a = &m->agg;
	char b[6][32];
	bool any = false;

	printf("\nCycles: %llu   avg %s ms   p50 %s   p95 %s   p99 %s   max %s ms\n",
	       (unsigned long long)a->total_cycles, text__figure(b[0], 32, a->avg_cycle_ms, 0, 2),
	       text__figure(b[1], 32, a->p50_cycle_ms, 0, 2), text__figure(b[2], 32, a->p95_cycle_ms, 0, 2),
	       text__figure(b[3], 32, a->p99_cycle_ms, 0, 2), text__figure(b[4], 32, a->max_cycle_ms, 0, 2));
	if (isfinite(a->avg_tokens_per_second))
		printf("Tokens/s: %.2f during the inference phase, %s over the whole cycle\n",
		       a->avg_tokens_per_second, FIG(a->avg_tokens_per_second_wall, 2));
	if (m->llama.present) {
		printf("llama.cpp: prompt %llu tokens in %s ms (%s tok/s), generation %llu tokens in %s ms (%s tok/s)",
		       (unsigned long long)m->llama.prompt_tokens, FIG(m->llama.prefill_ms, 1),
		       text__figure(b[0], 32, m->llama.prefill_tokens_per_s, 0, 1), (unsigned long long)m->llama.generated_tokens,
		       FIG(m->llama.decode_ms, 1), text__figure(b[1], 32, m->llama.decode_tokens_per_s, 0, 1));
		if (isfinite(m->llama.j_per_generated_token))
			printf(", %.3f J per generated token", m->llama.j_per_generated_token);
		printf("\n");
	}
	if (isfinite(a->peak_memory_mb))
		printf("Peak memory: %.1f MB\n", a->peak_memory_mb);
	print_edges(m);
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		any |= m->phases[ph].present;
	if (!any)
		return;
	printf("\n%-20s %10s %8s %8s %10s %10s %10s %16s\n", "phase", "total_ms", "calls", "%cycle",
	       "p50_ms", "p95_ms", "p99_ms", "outside_cycles");
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		const struct model_phase_summary *v = &m->phases[ph];
		char outside[64] = "-";

		if (!v->present)
			continue;
		if (v->outside_calls > 0)
			snprintf(outside, sizeof(outside), "%.1f ms/%llu", v->outside_thread_ms,
				 (unsigned long long)v->outside_calls);
		if (!v->calls) {
			printf("%-20s %10s %8s %8s %10s %10s %10s %16s\n", m->phase_names[ph], "-", "0", "-",
			       "-", "-", "-", outside);
			continue;
		}
		printf("%-20s %s %8llu %s%% %s %s %s %16s\n", m->phase_names[ph], text__figure(b[3], 32, v->total_ms, 10, 2),
		       (unsigned long long)v->calls, text__figure(b[4], 32, v->percent_of_cycle, 7, 1),
		       text__figure(b[0], 32, v->p50_ms, 10, 3),
		       text__figure(b[1], 32, v->p95_ms, 10, 3), text__figure(b[2], 32, v->p99_ms, 10, 3), outside);
	}
}

static void print_energy(const struct model *m)
{
	const struct model_energy_figures *ef = &m->energy;
	const struct model_energy *e = &ef->cycles;
	bool pw = m->run.system.has_power && power_mode__any(&m->run.system.power);
	size_t i;
	char b[4][32], mode[200];

	if (pw) {
		power_mode__describe(&m->run.system.power, mode, sizeof(mode));
		printf("\nPower mode: %s\n", mode);
	}
	if (!ef->present)
		return;
	if (e->present) {
		printf("%sEnergy over %llu cycles (resolution %.0f ms; %llu shorter cycles left out):", pw ? "" : "\n",
		       (unsigned long long)ef->cycles_measured, ef->side.resolution_ms, (unsigned long long)ef->cycles_left_out);
		for (int d = 0; d < MODEL_EN_NDOMAINS; d++)
			if (isfinite(e->j[d]))
				printf("  %.*s %.2f J", (int)strlen(model_energy_keys[d]) - 2, model_energy_keys[d], e->j[d]);
		printf("\n  total %s J, %s J per cycle, tokens/J %s, peak %s W\n", text__figure(b[0], 32, e->total_j, 0, 2),
		       text__figure(b[1], 32, ef->cycles_measured ? e->total_j / ef->cycles_measured : NAN, 0, 3),
		       text__figure(b[2], 32, e->tokens_per_joule, 0, 3), text__figure(b[3], 32, ef->side.peak_w, 0, 1));
	} else {
		printf("%sEnergy: not measured per cycle\n", pw ? "" : "\n");
	}
	for (i = 0; i < ef->side.missing.n; i++)
		printf("  no %s energy: %s\n", ef->side.missing.v[i].domain, ef->side.missing.v[i].reason);
}

static const char *name_of(const struct model *m, int32_t i)
{
	return i >= 0 && (size_t)i < m->nnames ? m->names[i] : "?";
}

static void print_probe_overhead(const struct model *m)
{
	const struct model_probe_cost *pc = &m->probe_cost;

	if (!pc->derived || isnan(pc->cost_ns))
		return;
	printf("\nProbe cost: %.1f us per hit (measured at start-up)", pc->cost_ns / 1e3);
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		if (pc->phases[ph].present && m->phase_names[ph])
			printf("; %s ~%s ms (%s%%)", m->phase_names[ph], FIG(pc->phases[ph].estimated_ms, 2),
			       FIG(pc->phases[ph].percent, 1));
	printf("; cycles ~%s%%\n", FIG(pc->cycles.present ? pc->cycles.percent : NAN, 1));
	for (size_t i = 0; i < pc->preset_probes.n; i++) {
		const struct model_preset_probe_cost *v = &pc->preset_probes.v[i];

		if (v->over_limit)
			printf("WARNING: preset probe %s costs ~%s%% of phase %s (%s hits; a preset's limit is 2%%); "
			       "time the phase by its callers instead (docs/probes.md)\n", name_of(m, v->spec),
			       FIG(v->percent_of_phase, 1), name_of(m, v->phase), FIG(v->hits, 0));
	}
	if (pc->max_percent > 5.0)
		printf("WARNING: the probes themselves inflate phase times by up to %.1f%%; "
		       "probe fewer or coarser functions\n", pc->max_percent);
}

/* What the tracer cost: its own process, and its BPF programs' run time,
 * which the traced tasks paid. */
static void print_self_cost(const struct model *m)
{
	const struct model_self *s = &m->self;
	const struct model_bpf_prog *top = s->bpf.programs.n ? &s->bpf.programs.v[0] : NULL;

	if (!s->present)
		return;
	printf("\nTracer cost: %s s CPU (%s s start-up, %s%% of one CPU while recording), "
	       "peak RSS %s MB, %s wake-ups/s\n", FIG(s->cpu_s, 2), FIG(s->startup_cpu_s, 2),
	       FIG(s->percent_of_one_cpu, 1), FIG(s->max_rss_mb, 1), FIG(s->wakeups_per_s, 0));
	if (!s->bpf.available) {
		printf("  BPF programs: run time not measured (%s)\n", s->bpf.reason[0] ? s->bpf.reason : "?");
		return;
	}
	printf("  BPF programs: %s s in the traced tasks (%s%% of one CPU), %s runs", FIG(s->bpf.cpu_s, 3),
	       FIG(s->bpf.percent_of_one_cpu, 2), FIG((double)s->bpf.runs, 0));
	if (top)
		printf("; most: %s, %s runs of %s us", top->name, FIG((double)top->runs, 0), FIG(top->ns_per_run / 1e3, 2));
	printf("\n");
}

/* `py:` specs: how finely their edges are placed (docs/python.md). */
static void print_py_resolution(const struct model *m)
{
	for (size_t i = 0; i < m->probes.n; i++) {
		const struct model_probe_python *py = &m->probes.v[i].python;

		if (!m->probes.v[i].has_python)
			continue;
		printf("\nPython phases (py: specs): %llu observations; edges placed between two observations "
		       "within %s ms on average, %s ms at most\n", (unsigned long long)py->observations,
		       FIG(py->resolution_ms_mean, 2), FIG(py->resolution_ms_max, 2));
		return;
	}
}

/* A phase timed by its Python callers (py:@callers): which way it was
 * timed, by the callers found or from the native calls, and why. */
static void print_timed_by(const struct model *m)
{
	for (size_t i = 0; i < m->probes.n; i++) {
		const struct model_probe *p = &m->probes.v[i];
		const char *phase = model__name(m, p->phase);
		const char *why = p->native_because >= 0 ? model__name(m, p->native_because) : NULL;

		if (!p->timed_by[0] || !phase)
			continue;
		if (!strcmp(p->timed_by, "python_callers")) {
			printf("%s: timed by its Python callers:", phase);
			for (size_t j = 0; j < p->callers.n; j++)
				printf("%s %s", j ? "," : "", model__name(m, p->callers.v[j]));
			printf("\n");
		} else {
			printf("%s: timed from its native calls%s%s%s\n", phase, why ? " (" : "", why ? why : "",
			       why ? ")" : "");
		}
	}
}

static void print_findings(const struct model *m)
{
	const struct model_suggestion *sg = &m->suggested_cycle;

	if (sg->present)
		printf("\nSuggested %s: %s\n", suggest__noun(sg->option), sg->text);
	if (m->nfindings)
		printf("\nBottlenecks:\n");
	for (size_t i = 0; i < m->nfindings; i++)
		printf("  - [%s] %s\n", m->findings[i].severity, m->findings[i].type);
	if (m->nrecs)
		printf("\nRecommendations:\n");
	for (size_t i = 0; i < m->nrecs; i++)
		printf("  - [%s] %s%s%s\n", m->recs[i].priority ? m->recs[i].priority : "-",
		       m->recs[i].title ? m->recs[i].title : "?", m->recs[i].description ? ": " : "",
		       m->recs[i].description ? m->recs[i].description : "");
}

static void print_alerts(const struct model *m)
{
	if (!m->alerts.n)
		return;
	printf("\nAlerts:\n");
	for (size_t i = 0; i < m->alerts.n; i++) {
		const struct model_alert *a = &m->alerts.v[i];

		printf("  - %s%s%s\n", a->type[0] ? a->type : "?", a->description[0] ? ": " : "", a->description);
	}
}

static void print_top_functions(const char *dir)
{
	char path[4200];
	struct folded st, leaf = {};

	bool python_view = true;

	/* a Python target's own frames, not its interpreter's (py-spy's view) */
	snprintf(path, sizeof(path), "%s/stacks.python.folded", dir);
	if (folded__read(path, &st)) {
		python_view = false;
		snprintf(path, sizeof(path), "%s/stacks.folded", dir);
		if (folded__read(path, &st))
			return;
	}
	folded__leaves(&st, &leaf);
	folded__free(&st);
	printf("\nTop on-CPU functions (leaf frames%s):\n",
	       python_view ? "; the interpreter's own frames folded into the Python function running them" : "");
	for (size_t i = 0; i < leaf.n && i < 10; i++)
		printf("  %6.2f%%  %s\n", leaf.total ? 100.0 * leaf.entries[i].count / leaf.total : 0,
		       leaf.entries[i].stack);
	folded__free(&leaf);
}

static int report_main(int argc, char **argv)
{
	struct model m;
	char dir[4096];

	if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 ? stdout : stderr,
			"Usage: infertrace report DIR|profile.json\n"
			"Prints a text summary of a recording: samples and stack quality, cycles,\n"
			"phases and their on-CPU / run-queue / blocked split, bottlenecks and\n"
			"recommendations, top functions.\n");
		return argc == 2 ? IT_EXIT_OK : IT_EXIT_USAGE;
	}
	if (load_model(argv[1], &m, dir, sizeof(dir)))
		return IT_EXIT_TARGET;
	printf("infertrace report — %s\n", argv[1]);
	printf("Command:");
	for (char **a = m.run.command; a && *a; a++)
		printf(" %s", *a);
	printf("%s\nDuration: %s s   stopped by: %s\n", m.run.command ? "" : " (attached to PIDs)",
	       FIG(m.run.duration_s, 2), m.run.stop_reason ? m.run.stop_reason : "?");
	print_fate(&m);
	print_samples(&m);
	print_cycles(&m);
	split_view__print(stdout, &m);
	print_energy(&m);
	gpu_view__print(stdout, &m);
	requests_view__print(stdout, &m);
	print_probe_overhead(&m);
	print_self_cost(&m);
	print_py_resolution(&m);
	print_timed_by(&m);
	print_findings(&m);
	tail__print(stdout, &m);
	print_alerts(&m);
	print_top_functions(dir);
	model__free(&m);
	return 0;
}

/* diff's differential flame graph: NEW's stacks.folded coloured by the
 * change of each frame's share from BASE's. 0, or an exit code with a
 * message. */
static int write_diff_flamegraph(const char *base_dir, const char *new_dir, const char *out)
{
	struct flamegraph_opts o = { "Differential flame graph (red: grew, blue: shrank)", "samples",
				     FLAMEGRAPH_DIFF, NULL };
	struct folded b = {}, n = {};
	char path[4200], *slash, dir[4096];
	int err;

	snprintf(path, sizeof(path), "%s/stacks.folded", base_dir);
	err = folded__read(path, &b);
	if (!err) {
		snprintf(path, sizeof(path), "%s/stacks.folded", new_dir);
		err = folded__read(path, &n);
	}
	if (err) {
		fprintf(stderr, "infertrace: cannot read '%s' for the differential flame graph: %s\n", path,
			strerror(-err));
		folded__free(&b);
		return IT_EXIT_TARGET;
	}
	o.base = &b;
	snprintf(dir, sizeof(dir), "%s", out);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	err = flamegraph__write_file(slash ? (*dir ? dir : "/") : ".", slash ? slash + 1 : out, &n, &o);
	folded__free(&b);
	folded__free(&n);
	if (err) {
		fprintf(stderr, "infertrace: cannot write '%s': %s\n", out, strerror(-err));
		return IT_EXIT_OUTPUT;
	}
	printf("differential flame graph: %s\n", out);
	return 0;
}

#define DIFF_USAGE "Usage: infertrace diff [--threshold PCT] [--flamegraph FILE] BASE NEW " \
	"(record directories or profile.json files)\n"

static int diff_main(int argc, char **argv)
{
	double threshold = 5.0;
	const char *svg = NULL;
	struct model b, n;
	char bdir[4096], ndir[4096];
	int regressions, rc;
	char *end;
	int i;

	/* diff [--threshold PCT] [--flamegraph FILE] BASE NEW */
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf(DIFF_USAGE "Each change has a 95%% interval, a bootstrap over the cycles of both runs.\n"
		       "Exits 1 on a regression: a change worse than PCT%% (default 5) whose interval excludes zero,\n"
		       "or a figure present on one side only.\n"
		       "--flamegraph FILE writes a differential flame graph of NEW's stacks.folded (e.g. diff.svg):\n"
		       "frame widths are NEW's, red frames grew and blue frames shrank in share of all samples.\n");
		return IT_EXIT_OK;
	}
	for (i = 1; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--threshold")) {
			threshold = strtod(argv[i + 1], &end);
			if (*end || end == argv[i + 1] || !isfinite(threshold) || threshold < 0) {
				fprintf(stderr, "infertrace: invalid --threshold '%s': expected a finite percentage >= 0\n",
					argv[i + 1]);
				return IT_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--flamegraph") && *argv[i + 1]) {
			svg = argv[i + 1];
		} else {
			break;
		}
	}
	argv += i - 1;
	argc -= i - 1;
	if (argc != 3) {
		fprintf(stderr, DIFF_USAGE "Exits 1 when a figure got worse by more than PCT%% (default 5) and its 95%% "
			"interval excludes zero, or a figure is missing from one side.\n");
		return IT_EXIT_USAGE;
	}
	if (load_model(argv[1], &b, bdir, sizeof(bdir)))
		return IT_EXIT_TARGET;
	if (load_model(argv[2], &n, ndir, sizeof(ndir))) {
		model__free(&b);
		return IT_EXIT_TARGET;
	}
	regressions = diff__compare(&b, &n, threshold);
	if (regressions)
		printf("regression: a figure got worse by more than %.1f%% and its 95%% interval excludes zero, "
		       "or a figure is missing\n", threshold);
	else
		printf("no regression\n");
	model__free(&b);
	model__free(&n);
	rc = svg ? write_diff_flamegraph(bdir, ndir, svg) : 0;
	if (rc)
		return rc;
	return regressions ? IT_EXIT_REGRESSION : IT_EXIT_OK;
}

/* Runs fn with stdout collected, then prints what it wrote escaped for a
 * terminal (text__escape, newlines kept): names in a profile come from the
 * traced program (symbols, perf maps, argv) or from whoever wrote the file,
 * and must not reach the terminal as escape sequences. */
static int through_term(int (*fn)(int, char **), int argc, char **argv)
{
	FILE *real = stdout, *mem;
	char *buf = NULL, *clean;
	size_t len = 0, need;
	int rc;

	fflush(stdout);
	mem = open_memstream(&buf, &len);
	if (!mem)
		return fn(argc, argv);
	stdout = mem;
	rc = fn(argc, argv);
	fclose(mem);
	stdout = real;
	need = text__escape(buf, len, TEXT_CONTROLS | TEXT_KEEP_NEWLINE, NULL, 0);
	clean = malloc(need + 1);
	if (clean) {
		text__escape(buf, len, TEXT_CONTROLS | TEXT_KEEP_NEWLINE, clean, need + 1);
		fwrite(clean, 1, need, stdout);
	}
	fflush(stdout);
	free(clean);
	free(buf);
	return clean ? rc : IT_EXIT_RUNTIME;
}

int cmd_report(int argc, char **argv)
{
	return through_term(report_main, argc, argv);
}

int cmd_diff(int argc, char **argv)
{
	return through_term(diff_main, argc, argv);
}
