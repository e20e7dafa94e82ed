// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace tune`: the command. It puts the parameters in (--param, or
 * --from a recording's advice), runs every setting R times interleaved
 * run by run (tune_run.c: each a child `record` into its own directory),
 * reads each run back as `report` does, and states the result
 * (tune_stats.c): the table on stdout and in table.txt, settings.json.
 * It lives here, above the analysis it reads and beside the writers it
 * uses; only main.c calls it. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "exit_codes.h"
#include "model.h"
#include "profile.h"
#include "settings_json.h"
#include "tracer.h"
#include "tune.h"
#include "tune_from.h"
#include "tune_options.h"
#include "tune_run.h"
#include "tune_stats.h"
#include "vec.h"

extern char **environ;

/* settings a grid may have */
#define TUNE_MAX_SETTINGS 1000

struct tune_cmd {
	struct tune_opts opts;
	struct tune_result t;
	struct tune_from_plan plan;
	char **env;           /* the environment the runs start from */
	double run_s;         /* the runs' time so far, for the estimate */
	unsigned int runs_timed;
	int fail_status;      /* a run's failing exit status; 0: none */
	bool stopped;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the table ---- */

/* A figure with prec decimals, or a dash: never nan. */
static const char *figp(char *buf, size_t len, double v, int prec, const char *unit)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f%s", prec, v, unit);
	return buf;
}

/* one precision for the whole table: 4 significant digits of its largest median */
static int table_prec(const struct tune_result *t)
{
	double top = 0;

	for (size_t i = 0; i < t->nsettings; i++)
		if (isfinite(t->settings[i].row.median) && fabs(t->settings[i].row.median) > top)
			top = fabs(t->settings[i].row.median);
	return top >= 1000 ? 0 : top >= 100 ? 1 : top >= 10 ? 2 : 3;
}

static void print_evidence_change(FILE *f, const struct tune_result *t)
{
	const struct tune_setting *bs = &t->settings[t->base], *vs = &t->settings[t->versus];
	const struct tune_evidence *b = &bs->ev, *c = &vs->ev;
	char x[32], y[32];

	fprintf(f, "evidence, baseline %s -> %s %s: run-queue share %s -> %s", bs->label,
		t->best == t->versus ? "best" : "next best", vs->label, figp(x, sizeof(x), b->runq_share_pct, 1, "%"),
		figp(y, sizeof(y), c->runq_share_pct, 1, "%"));
	fprintf(f, "; on-CPU %s -> %s per cycle", figp(x, sizeof(x), b->oncpu_ms_per_cycle, 1, " ms"),
		figp(y, sizeof(y), c->oncpu_ms_per_cycle, 1, " ms"));
	fprintf(f, " (%s -> %s threads running)", figp(x, sizeof(x), b->cpus_busy, 2, ""),
		figp(y, sizeof(y), c->cpus_busy, 2, ""));
	fprintf(f, "; GPU busy %s -> %s", figp(x, sizeof(x), b->gpu_busy_pct, 0, "%"),
		figp(y, sizeof(y), c->gpu_busy_pct, 0, "%"));
	fprintf(f, "; behind other processes %s -> %s per cycle", figp(x, sizeof(x), b->runq_others_ms_per_cycle, 2, " ms"),
		figp(y, sizeof(y), c->runq_others_ms_per_cycle, 2, " ms"));
	fprintf(f, "; throttled runs %zu of %zu -> %zu of %zu\n", b->throttled_runs, b->runs, c->throttled_runs,
		c->runs);
}

/* Why a setting's verdict against the baseline was withheld: the wait
 * behind other processes per cycle on each side (the main thread's), and
 * the medians without it (tune_metric__own). */
static void print_withheld(FILE *f, const struct tune_result *t, const struct tune_setting *s, int prec)
{
	const struct tune_setting *b = &t->settings[t->base];
	char x[32], y[32], u[32], v[32];

	fprintf(f, "withheld: %s against the baseline %s: the difference is the wait behind other processes: "
		"%s vs %s ms per cycle; without it the medians are %s vs %s %s, no significant difference\n",
		s->label, b->label, figp(x, sizeof(x), s->ev.runq_others_ms_per_cycle, 2, ""),
		figp(y, sizeof(y), b->ev.runq_others_ms_per_cycle, 2, ""), figp(u, sizeof(u), s->row.own_median, prec, ""),
		figp(v, sizeof(v), b->row.own_median, prec, ""), t->metric.unit);
}

void tune__print_table(FILE *f, const struct tune_result *t)
{
	const struct tune_opts *o = t->opts;
	const struct tune_metric *mt = &t->metric;
	size_t width = 7, wlo = SIZE_MAX, whi = 0;
	char a[32], b[32], c[32];
	int prec = table_prec(t);

	for (size_t i = 0; i < t->nsettings; i++) {
		const struct tune_setting *s = &t->settings[i];

		if (strlen(s->label) > width)
			width = strlen(s->label);
		if (s->nruns && s->warmup_lo < wlo)
			wlo = s->warmup_lo;
		if (s->nruns && s->warmup_hi > whi)
			whi = s->warmup_hi;
	}
	if (!t->complete)
		fprintf(f, "INCOMPLETE (%s): the table holds the runs completed, %zu of %zu\n", t->stop_reason,
			t->runs_done, t->runs_planned);
	if (!t->have_metric) {
		fprintf(f, "no run completed: nothing to compare\n");
		return;
	}
	fprintf(f, "metric: %s, the median per cycle in %s (%s is better); 95%% intervals: a bootstrap over the "
		"runs and their cycles\n", mt->name, mt->unit, mt->higher_is_better ? "higher" : "lower");
	if (o->warmup < 0)
		fprintf(f, "warm-up left out: %s", TUNE_WARMUP_RULE);
	else
		fprintf(f, "warm-up left out: the first %d cycle%s of each run (--warmup)", o->warmup,
			o->warmup == 1 ? "" : "s");
	if (whi && wlo == whi)
		fprintf(f, "; here %zu per run", wlo);
	else if (whi)
		fprintf(f, "; here %zu..%zu per run", wlo, whi);
	if (o->cycles)
		fprintf(f, "; then at most %u cycles per run (--cycles)", o->cycles);
	fputs("\n", f);
	fprintf(f, "%-*s %5s %7s %12s %23s %25s  %s\n", (int)width, "setting", "runs", "cycles", "median",
		"95% interval", "change vs baseline", "verdict");
	for (size_t i = 0; i < t->nsettings; i++) {
		const struct tune_setting *s = &t->settings[i];
		const struct tune_row *r = &s->row;
		char ci[80] = "-", ch[80] = "-";

		if (isfinite(r->lo))
			snprintf(ci, sizeof(ci), "%s..%s", figp(a, sizeof(a), r->lo, prec, ""),
				 figp(b, sizeof(b), r->hi, prec, ""));
		if (isfinite(r->change_pct) && isfinite(r->change_lo))
			snprintf(ch, sizeof(ch), "%+.1f%% (%+.1f..%+.1f)", r->change_pct, r->change_lo, r->change_hi);
		else if (isfinite(r->change_pct))
			snprintf(ch, sizeof(ch), "%+.1f%%", r->change_pct);
		fprintf(f, "%-*s %5zu %7zu %12s %23s %25s  %s%s%s\n", (int)width, s->label, s->nruns, r->n,
			figp(c, sizeof(c), r->median, prec, ""), ci, ch, tune_verdict__name(r->verdict),
			t->best == (int)i ? ", best" : "", t->chosen == i && t->significant ? ", chosen" : "");
	}
	for (size_t i = 0; i < t->nsettings; i++)
		if (t->settings[i].row.verdict == TUNE_V_WITHHELD)
			print_withheld(f, t, &t->settings[i], prec);
	if (t->best < 0)
		return;
	{
		const struct tune_setting *base = &t->settings[t->base], *best = &t->settings[t->best];
		const struct tune_setting *ch = &t->settings[t->chosen];

		if (t->significant) {
			fprintf(f, "chosen: %s: %s %s against %s at the baseline %s: %+.1f%% (95%% interval %+.1f%%..%+.1f%%)\n",
				ch->label, mt->name, figp(a, sizeof(a), ch->row.median, prec, ""),
				figp(b, sizeof(b), base->row.median, prec, ""),
				base->label, ch->row.change_pct, ch->row.change_lo, ch->row.change_hi);
		} else if (!isfinite(base->row.lo) || !isfinite(best->row.lo)) {
			fprintf(f, "no verdict: %s has too few cycles for an interval of its median (%d or more are "
				"needed); keeping the baseline %s\n", !isfinite(base->row.lo) ? base->label : best->label,
				2 * 5, base->label);
		} else if (t->best == (int)t->base) {
			fprintf(f, "the baseline %s is the best setting measured; keeping it\n", base->label);
		} else if (best->row.verdict == TUNE_V_WITHHELD) {
			fprintf(f, "no verdict: the best, %s (%s), differs from the baseline %s (%s) by the wait "
				"behind other processes (above); keeping the baseline\n", best->label,
				figp(a, sizeof(a), best->row.median, prec, ""), base->label,
				figp(b, sizeof(b), base->row.median, prec, ""));
		} else {
			fprintf(f, "no significant difference: the best, %s (%s), and the baseline %s (%s) %s; keeping "
				"the baseline\n", best->label, figp(a, sizeof(a), best->row.median, prec, ""), base->label,
				figp(b, sizeof(b), base->row.median, prec, ""),
				tune_row__overlap(&best->row, &base->row)
					? "have overlapping intervals"
					: "differ by less than their runs vary from run to run (t-test on the runs' "
					  "medians, 1% level)");
		}
		/* the settings the chosen one cannot be told from */
		if (t->significant) {
			bool any = false;

			for (size_t i = 0; i < t->nsettings; i++)
				if (i != t->chosen && tune_row__overlap(&t->settings[i].row, &ch->row)) {
					fprintf(f, "%s%s", any ? ", " : "as good within the intervals: ", t->settings[i].label);
					any = true;
				}
			if (any)
				fputc('\n', f);
		}
		if (t->versus >= 0)
			print_evidence_change(f, t);
	}
}

/* ---- the runs ---- */

static int load_run(const char *dir, struct model *m)
{
	json_t *p = profile__load(dir);
	int err;

	if (!p)
		return -EINVAL;
	err = model__from_json(m, p, dir);
	json_decref(p);
	if (err)
		model__free(m);
	return err;
}

static int push_str(char ***arr, size_t *n, const char *s)
{
	char **a;

	if (VEC_RESIZE(*arr, *n + 2))
		return -ENOMEM;
	a = *arr;
	a[*n] = strdup(s);
	if (!a[*n])
		return -ENOMEM;
	a[++*n] = NULL;
	return 0;
}

/* A completed run into its setting's figures. */
static int count_run(struct tune_cmd *c, struct tune_setting *s, const char *run_dir)
{
	struct tune_result *t = &c->t;
	struct model m;
	size_t *idx = NULL, n, left = 0, k = 0;
	double *x = NULL, *own;
	char err[160];
	int e, ph;

	e = load_run(run_dir, &m);
	if (e)
		return e;
	if (!t->have_metric) {
		if (c->opts.metric)
			tune_metric__parse(c->opts.metric, &t->metric, err, sizeof(err));
		else
			tune_metric__default(&m, &t->metric);
		t->have_metric = true;
		/* the platform as profile.json states it (settings.json copies it) */
		t->system = model__section_json(&m, "system");
		t->gpu = model__section_json(&m, "gpu");
	}
	n = tune__measured(&m, c->opts.warmup, c->opts.cycles, &idx, &left);
	if (n == (size_t)-1) {
		model__free(&m);
		return -ENOMEM;
	}
	x = calloc(2 * (n + 1), sizeof(*x));
	if (!x) {
		e = -ENOMEM;
		goto out;
	}
	own = x + n + 1;
	ph = t->metric.kind == TUNE_M_PHASE_MS ? model__phase_id(&m, t->metric.phase) : -1;
	for (size_t i = 0; i < n; i++)
		if (tune_metric__cycle(&m, &t->metric, &m.cycles[idx[i]], &x[k])) {
			own[k] = tune_metric__own(&t->metric, &m.cycles[idx[i]], ph, x[k]);
			k++;
		}
	if (!k)
		fprintf(stderr, "infertrace: warning: %s: no measured cycle has %s (%zu cycles, %zu left out as warm-up)\n",
			run_dir, t->metric.name, m.ncycles, left);
	e = tune_row__add_run(&s->row, x, own, k);
	if (!e)
		e = push_str(&s->runs, &s->nruns, run_dir);
	if (!e) {
		tune_evidence__add_run(&s->ev, &m, idx, n);
		if (s->nruns == 1 || left < s->warmup_lo)
			s->warmup_lo = left;
		if (left > s->warmup_hi)
			s->warmup_hi = left;
	}
out:
	free(x);
	free(idx);
	model__free(&m);
	return e;
}

/* "threads=2 ctx=512" as a directory name: threads-2_ctx-512 */
static void dir_name(char *buf, size_t len, size_t index, const char *label)
{
	size_t at = (size_t)snprintf(buf, len, "s%zu.", index + 1);

	for (const char *p = label; *p && at + 1 < len && at < 120; p++)
		buf[at++] = *p == '=' ? '-' : *p == ' ' ? '_' :
			    (isalnum((unsigned char)*p) || strchr("._+-", *p)) ? *p : '_';
	buf[at < len ? at : len - 1] = 0;
}

static void print_log_tail(const char *path)
{
	char buf[2048];
	FILE *f = fopen(path, "r");
	long size;
	size_t n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0, SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	fprintf(stderr, "infertrace: the end of %s:\n", path);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		fprintf(stderr, "  | %s\n", line);
}

static void progress(const struct tune_cmd *c, const struct tune_setting *s, unsigned int k)
{
	const struct tune_result *t = &c->t;
	char eta[64];

	if (c->opts.quiet)
		return;
	tune_run__eta(eta, sizeof(eta), c->runs_timed ? c->run_s / c->runs_timed : 0,
		      (unsigned int)(t->runs_planned - t->runs_done));
	/* a setting met again in a later stage has more runs than --runs */
	if (k <= c->opts.runs)
		fprintf(stderr, "infertrace: run %zu/%zu: %s (run %u of %u); runs done:", t->runs_done + 1,
			t->runs_planned, s->label, k, c->opts.runs);
	else
		fprintf(stderr, "infertrace: run %zu/%zu: %s (run %u); runs done:", t->runs_done + 1, t->runs_planned,
			s->label, k);
	for (size_t i = 0; i < t->nsettings && i < 8; i++)
		fprintf(stderr, "%s %s %zu", i ? "," : "", t->settings[i].label, t->settings[i].nruns);
	if (t->nsettings > 8)
		fprintf(stderr, ", ...");
	fprintf(stderr, "; %s\n", eta);
}

/* Run k of setting si. 0: counted (or a stop came: c->stopped); -1: it failed. */
static int run_one(struct tune_cmd *c, size_t si, unsigned int k)
{
	struct tune_setting *s = &c->t.settings[si];
	struct tune_values v = {};
	char name[160], run_dir[4096], log_path[4200], why[128], note[4200];
	char **argv = NULL, **envp = NULL;
	int fd = -1, log_fd = -1, status, e;
	double t0;

	if (!s->dir) {
		dir_name(name, sizeof(name), si, s->label);
		if (asprintf(&s->dir, "%s/%s", c->opts.output_dir, name) < 0) {
			s->dir = NULL;
			return -1;
		}
	}
	fd = atomic_dir__make(s->dir, why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr, "infertrace: cannot make %s: %s\n", s->dir, fd == -EPERM ? why : strerror(-fd));
		c->fail_status = IT_EXIT_OUTPUT;
		return -1;
	}
	snprintf(run_dir, sizeof(run_dir), "%s/run%u", s->dir, k);
	snprintf(name, sizeof(name), "run%u.log", k);
	snprintf(log_path, sizeof(log_path), "%s/%s", s->dir, name);
	log_fd = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, atomic_file__mode());
	close(fd);
	if (log_fd < 0) {
		fprintf(stderr, "infertrace: cannot create %s: %s\n", log_path, strerror(errno));
		c->fail_status = IT_EXIT_OUTPUT;
		return -1;
	}
	for (int p = 0; p < c->opts.nparams; p++)
		v.values[p] = c->opts.params[p].values[s->value[p]];
	argv = tune_subst__argv(&c->opts, &v);
	envp = tune_subst__env(c->env, &c->opts, &v);
	if (!argv || !envp) {
		e = -ENOMEM;
		goto out;
	}
	progress(c, s, k);
	t0 = now_s();
	status = tune_run__record(&c->opts, argv, envp, run_dir, log_fd);
	if (status < 0) {
		fprintf(stderr, "infertrace: cannot start a run: %s\n", strerror(-status));
		c->fail_status = IT_EXIT_RUNTIME;
		e = -1;
		goto out;
	}
	if (tune_run__stopped()) {
		/* stopped part way: a normal run directory, but not a whole run */
		c->stopped = true;
		snprintf(note, sizeof(note), "%s (interrupted)", run_dir);
		e = push_str(&s->left, &s->nleft, note) ? -1 : 0;
		goto out;
	}
	if (status) {
		fprintf(stderr, "infertrace: the run of %s failed (record exited with status %d); its log is %s\n",
			s->label, status, log_path);
		print_log_tail(log_path);
		snprintf(note, sizeof(note), "%s (failed: status %d)", run_dir, status);
		push_str(&s->left, &s->nleft, note);
		c->fail_status = status > 0 && status <= IT_EXIT_UNMATCHED ? status : IT_EXIT_RUNTIME;
		snprintf(c->t.stop_reason, sizeof(c->t.stop_reason), "a run of %.40s failed with status %d", s->label,
			 status);
		e = -1;
		goto out;
	}
	c->run_s += now_s() - t0;
	c->runs_timed++;
	e = count_run(c, s, run_dir);
	if (e) {
		fprintf(stderr, "infertrace: cannot read the run %s: %s\n", run_dir, strerror(-e));
		c->fail_status = IT_EXIT_OUTPUT;
		snprintf(c->t.stop_reason, sizeof(c->t.stop_reason), "a run of %.40s could not be read", s->label);
		e = -1;
		goto out;
	}
	c->t.runs_done++;
out:
	if (log_fd >= 0)
		close(log_fd);
	tune_subst__free(argv);
	tune_subst__free(envp);
	return e ? -1 : 0;
}

/* The settings of a stage, R runs each, interleaved run by run; the
 * round's first setting turns so that none always runs first. */
static int run_stage(struct tune_cmd *c, const size_t *set, size_t n)
{
	for (unsigned int r = 0; r < c->opts.runs; r++)
		for (size_t j = 0; j < n; j++) {
			size_t si = set[(j + r) % n];

			if (tune_run__stopped()) {
				c->stopped = true;
				return 0;
			}
			if (run_one(c, si, c->t.settings[si].nruns + c->t.settings[si].nleft + 1))
				return -1;
			if (c->stopped)
				return 0;
		}
	return 0;
}

/* Every combination of the values, as setting indexes into set. */
static int grid_settings(struct tune_cmd *c, size_t **set, size_t *n)
{
	int value[TUNE_MAX_PARAMS] = { 0 };
	size_t total = 1;

	for (int p = 0; p < c->opts.nparams; p++) {
		total *= (size_t)c->opts.params[p].nvalues;
		if (total > TUNE_MAX_SETTINGS) {
			fprintf(stderr, "infertrace: --grid gives more than %d settings; tune fewer values\n",
				TUNE_MAX_SETTINGS);
			return -E2BIG;
		}
	}
	*set = calloc(total, sizeof(**set));
	if (!*set)
		return -ENOMEM;
	/* the baseline first: it is the setting every other one is held against */
	for (int p = 0; p < c->opts.nparams; p++)
		value[p] = c->opts.params[p].baseline;
	for (*n = 0; *n < total;) {
		int si = tune_result__setting(&c->t, value), p;

		if (si < 0) {
			free(*set);
			*set = NULL;
			return -ENOMEM;
		}
		(*set)[(*n)++] = (size_t)si;
		for (p = 0; p < c->opts.nparams; p++) {
			value[p] = (value[p] + 1) % c->opts.params[p].nvalues;
			if (value[p] != c->opts.params[p].baseline)
				break;
		}
		if (p == c->opts.nparams)
			break;
	}
	return 0;
}

/* The stages: one for --grid (or one parameter), else one per parameter,
 * each varying it with the others at the best so far. */
static int run_all(struct tune_cmd *c)
{
	struct tune_opts *o = &c->opts;
	struct tune_result *t = &c->t;
	int cur[TUNE_MAX_PARAMS] = { 0 };
	size_t *set = NULL, n = 0;
	int err = 0, si;

	for (int p = 0; p < o->nparams; p++)
		cur[p] = o->params[p].baseline;
	si = tune_result__setting(t, cur);
	if (si < 0)
		return -ENOMEM;
	t->base = t->chosen = (size_t)si;
	if (o->grid || o->nparams == 1) {
		err = grid_settings(c, &set, &n);
		if (err)
			return err;
		t->runs_planned = n * o->runs;
		err = run_stage(c, set, n);
		free(set);
		return err;
	}
	for (int p = 0; p < o->nparams; p++)
		t->runs_planned += (size_t)o->params[p].nvalues * o->runs;
	set = calloc(TUNE_MAX_VALUES, sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (int p = 0; p < o->nparams && !err && !c->stopped; p++) {
		struct tune_row rows[TUNE_MAX_VALUES];
		int value[TUNE_MAX_PARAMS];
		size_t stage_base = 0, pick;
		bool sig;

		memcpy(value, cur, sizeof(value));
		for (int v = 0; v < o->params[p].nvalues; v++) {
			value[p] = v;
			si = tune_result__setting(t, value);
			if (si < 0) {
				err = -ENOMEM;
				break;
			}
			set[v] = (size_t)si;
			if (v == cur[p])
				stage_base = (size_t)v;
		}
		n = (size_t)o->params[p].nvalues;
		if (err || run_stage(c, set, n)) {
			err = err ? err : -1;
			break;
		}
		if (c->stopped)
			break;
		/* this parameter's best, held against the stage's own current setting */
		for (size_t j = 0; j < n; j++) {
			tune_row__figures(&t->settings[set[j]].row);
			rows[j] = t->settings[set[j]].row;
		}
		if (!t->have_metric)
			break;
		pick = tune_rows__choose(rows, n, stage_base, t->metric.higher_is_better, &sig);
		cur[p] = (int)pick;
		if (!o->quiet)
			fprintf(stderr, "infertrace: %s: %s (%s)\n", o->params[p].name, o->params[p].values[cur[p]],
				sig ? "better: its interval is clear of the current value's" :
				tune_rows__best(rows, n, t->metric.higher_is_better) == (int)stage_base ?
				"kept: the best measured" : "kept: no significant difference from the best");
	}
	free(set);
	si = tune_result__setting(t, cur);
	if (si >= 0)
		t->chosen = (size_t)si;
	return err;
}

/* ---- set-up ---- */

static int env_put(char ***env, const char *entry)
{
	size_t n = strcspn(entry, "="), k = 0;
	char **e;

	for (; (*env)[k]; k++)
		if (!strncmp((*env)[k], entry, n) && (*env)[k][n] == '=') {
			free((*env)[k]);
			(*env)[k] = strdup(entry);
			return (*env)[k] ? 0 : -ENOMEM;
		}
	if (VEC_RESIZE(*env, k + 2))
		return -ENOMEM;
	e = *env;
	e[k] = strdup(entry);
	e[k + 1] = NULL;
	return e[k] ? 0 : -ENOMEM;
}

static char **env_copy(void)
{
	size_t n = 0;
	char **e;

	while (environ[n])
		n++;
	e = calloc(n + 1, sizeof(*e));
	for (size_t i = 0; e && i < n; i++)
		if (!(e[i] = strdup(environ[i]))) {
			tune_subst__free(e);
			return NULL;
		}
	return e;
}

static void print_command(FILE *f, char *const *argv)
{
	for (size_t i = 0; argv[i]; i++)
		fprintf(f, " %s", argv[i]);
	fputc('\n', f);
}

/* --from: the parameters the run's advice gives. 0 to go on; 1 when only
 * the --param lines could be printed (nothing to run); else an exit status. */
static int from_advice(struct tune_cmd *c)
{
	struct tune_opts *o = &c->opts;
	const char *given[TUNE_MAX_PARAMS + 1] = { NULL };
	struct model m;
	char err[256];

	for (int p = 0; p < o->nparams; p++)
		given[p] = o->params[p].name;
	if (load_run(o->from, &m))
		return IT_EXIT_TARGET;
	if (tune_from__plan(&m, o->command, c->env, given, &c->plan)) {
		model__free(&m);
		return IT_EXIT_RUNTIME;
	}
	model__free(&m);
	printf("from %s: %zu recommendation%s with a value a runner takes\n", o->from, c->plan.nprops,
	       c->plan.nprops == 1 ? "" : "s");
	for (size_t i = 0; i < c->plan.nprops; i++) {
		const struct tune_proposal *p = &c->plan.props[i];

		printf("  %s: %s -> %s (%s: %s)\n", p->name, *p->current ? p->current : "?", p->recommended, p->title,
		       p->why);
	}
	for (size_t i = 0; i < c->plan.nskipped; i++)
		printf("  left out: %s\n", c->plan.skipped[i]);
	for (size_t i = 0; i < c->plan.nparams; i++)
		if (tune_opts__add_param(o, c->plan.params[i], err, sizeof(err))) {
			fprintf(stderr, "infertrace: %s\n", err);
			return IT_EXIT_USAGE;
		}
	for (size_t i = 0; i < c->plan.nenv_set; i++)
		if (env_put(&c->env, c->plan.env_set[i]))
			return IT_EXIT_RUNTIME;
	c->t.runner = c->plan.runner;
	if (c->plan.nparams) {
		for (int n = 0; c->plan.argv[n]; n++)
			o->ncommand = n + 1;
		o->command = c->plan.argv;
		printf("runs:");
		for (size_t i = 0; i < c->plan.nenv_set; i++)
			printf(" %s", c->plan.env_set[i]);
		print_command(stdout, o->command);
	}
	if (c->plan.nunplaced) {
		printf("%s is not a runner tune knows (llama.cpp's llama-cli, llama-server): put {NAME} where it takes "
		       "each value, then give:\n", o->command[0]);
		for (size_t i = 0; i < c->plan.nunplaced; i++)
			printf("  --param %s\n", c->plan.unplaced[i]);
	}
	fflush(stdout);
	if (o->nparams)
		return 0;
	if (!c->plan.nprops) {
		fprintf(stderr, "infertrace: %s has no recommendation with a value tune can run\n", o->from);
		return IT_EXIT_TARGET;
	}
	return 1;
}

/* The output directory: made, and new or empty (a run directory of an
 * earlier tune would be read as this one's). */
static int prepare_output(const char *dir)
{
	char why[128];
	int fd = atomic_dir__make(dir, why, sizeof(why)), dfd;
	struct dirent *d;
	DIR *dp;
	bool empty = true;

	if (fd < 0) {
		fprintf(stderr, "infertrace: cannot use %s: %s\n", dir, fd == -EPERM ? why : strerror(-fd));
		return -1;
	}
	dfd = dup(fd);
	close(fd);
	dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dp) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			empty = false;
	closedir(dp);
	if (!empty) {
		fprintf(stderr, "infertrace: %s is not empty: give a new directory with -o\n", dir);
		return -1;
	}
	return 0;
}

static int write_table(const struct tune_result *t, const char *dir)
{
	struct atomic_file *af = atomic_file__open(dir, "table.txt");

	if (!af)
		return -errno;
	tune__print_table(atomic_file__stream(af), t);
	return atomic_file__commit(af);
}

static int finish(struct tune_cmd *c)
{
	struct tune_opts *o = &c->opts;
	struct tune_result *t = &c->t;
	json_t *platform, *doc;
	char described[512];
	bool ok = true;
	int err, rc = c->fail_status;

	t->complete = !c->stopped && !c->fail_status && t->runs_done == t->runs_planned;
	if (c->stopped)
		snprintf(t->stop_reason, sizeof(t->stop_reason), "stopped by %s", sigabbrev_np(tune_run__stopped()) ?
			 sigabbrev_np(tune_run__stopped()) : "a signal");
	tune_result__conclude(t, !o->grid && o->nparams > 1);
	fflush(stderr);
	tune__print_table(stdout, t);
	fflush(stdout);
	err = write_table(t, o->output_dir);
	if (err) {
		fprintf(stderr, "infertrace: cannot write %s/table.txt: %s\n", o->output_dir, strerror(-err));
		rc = rc ? rc : IT_EXIT_OUTPUT;
	}
	platform = settings__platform(t->system, t->gpu);
	if (o->target_platform) {
		ok = settings__platform_is(platform, o->target_platform, described, sizeof(described));
		if (!ok && !o->force) {
			fprintf(stderr, "infertrace: not writing settings.json: the runs were measured on %s, not on %s; "
				"settings tuned on one machine are not evidence for another (--force writes it anyway)\n",
				described, o->target_platform);
			json_decref(platform);
			return rc ? rc : IT_EXIT_USAGE;
		}
		if (!ok)
			fprintf(stderr, "infertrace: warning: settings.json is for %s but was measured on %s (--force)\n",
				o->target_platform, described);
	}
	doc = settings__json(t, platform, ok);
	json_decref(platform);
	err = doc ? settings__write(doc, o->output_dir) : -ENOMEM;
	json_decref(doc);
	if (err) {
		fprintf(stderr, "infertrace: cannot write %s/settings.json: %s\n", o->output_dir, strerror(-err));
		return rc ? rc : IT_EXIT_OUTPUT;
	}
	fprintf(stderr, "infertrace: %s: table.txt, settings.json and the runs' directories in %s/\n",
		t->complete ? "done" : "stopped", o->output_dir);
	return rc;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_cmd c = {};
	struct tune_metric mt;
	char err[256];
	int rc;

	rc = tune_opts__parse(&c.opts, argc, argv);
	if (rc) {
		tune_opts__free(&c.opts); /* what was parsed before the mistake */
		return rc > 0 ? IT_EXIT_OK : IT_EXIT_USAGE;
	}
	tune_run__catch_signals();
	c.t.opts = &c.opts;
	c.env = env_copy();
	if (!c.env) {
		rc = IT_EXIT_RUNTIME;
		goto out;
	}
	if (c.opts.metric && tune_metric__parse(c.opts.metric, &mt, err, sizeof(err))) {
		fprintf(stderr, "infertrace: %s\n", err);
		rc = IT_EXIT_USAGE;
		goto out;
	}
	if (c.opts.from) {
		rc = from_advice(&c);
		if (rc) {
			rc = rc == 1 ? IT_EXIT_OK : rc;
			goto out;
		}
	}
	for (int p = 0; p < c.opts.nparams; p++)
		if (!tune_subst__where(&c.opts, c.env, c.opts.params[p].name, c.t.as[p], sizeof(c.t.as[p]))) {
			fprintf(stderr, "infertrace: --param %s: {%s} appears nowhere in the command (nor $%s in its "
				"environment)\n", c.opts.params[p].name, c.opts.params[p].name, c.opts.params[p].name);
			rc = IT_EXIT_USAGE;
			goto out;
		}
	if (!tracer__have_privileges()) {
		fprintf(stderr, "infertrace: needs root (or CAP_BPF and CAP_PERFMON) for its runs; run it with sudo\n");
		rc = IT_EXIT_PRIVILEGE;
		goto out;
	}
	if (prepare_output(c.opts.output_dir)) {
		rc = IT_EXIT_OUTPUT;
		goto out;
	}
	c.t.command = c.opts.command;
	profile__iso_time((double)time(NULL), c.t.started_at, sizeof(c.t.started_at));
	if (!c.opts.quiet)
		fprintf(stderr, "infertrace: %d parameter%s, %u run%s per setting, interleaved; warm-up left out: %s\n",
			c.opts.nparams, c.opts.nparams == 1 ? "" : "s", c.opts.runs, c.opts.runs == 1 ? "" : "s",
			c.opts.warmup < 0 ? TUNE_WARMUP_RULE : "--warmup");
	rc = run_all(&c);
	if (rc && !c.fail_status)
		c.fail_status = IT_EXIT_RUNTIME;
	rc = finish(&c);
out:
	tune_result__free(&c.t);
	tune_from__free(&c.plan);
	tune_subst__free(c.env);
	tune_opts__free(&c.opts);
	return rc;
}
