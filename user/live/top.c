// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace top`: the live terminal view (top.h). */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screen_lines.h"
#include "folded.h"
#include "gpu_view.h"
#include "requests_view.h"
#include "model.h"
#include "split_view.h"
#include "stats.h"
#include "text.h"
#include "top.h"

#define MAX_LINES 200
#define TOP_PYTHON_ROWS 8 /* the inclusive Python rows: a loop's functions, not its imports */
#define TOP_THREAD_ROWS 6

struct top {
	SCREEN *screen;
	int saved_stderr;   /* the terminal's stderr, while messages go to log_fd */
	int log_fd;
	bool quit;
	struct folded prev_leaves; /* merged by name */
	bool have_prev;
	char lines[MAX_LINES][256];
	int nlines;         /* of the last screen drawn */
};

int top__check_terminal(void)
{
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		return 0;
	fprintf(stderr, "infertrace: top needs a terminal on stdin and stdout; use 'infertrace record' "
		"(with --metrics for a live view elsewhere)\n");
	return -ENOTTY;
}

int top__start(struct top **out)
{
	struct top *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->saved_stderr = t->log_fd = -1;
	/* messages meanwhile are kept, unnamed, and shown when the view ends */
	t->log_fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (t->log_fd < 0) {
		FILE *f = tmpfile();

		t->log_fd = f ? dup(fileno(f)) : -1;
		if (f)
			fclose(f);
	}
	if (t->log_fd >= 0) {
		fflush(stderr);
		t->saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (t->saved_stderr >= 0)
			dup2(t->log_fd, STDERR_FILENO);
	}
	t->screen = newterm(NULL, stdout, stdin);
	if (!t->screen) {
		err = -ENOTTY;
		top__end(t);
		fprintf(stderr, "infertrace: cannot start the terminal view (TERM=%s)\n",
			getenv("TERM") ? getenv("TERM") : "");
		return err;
	}
	/* Ctrl-C stays a signal (the recording's handler ends it); keys unbuffered */
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	erase();
	mvaddstr(0, 0, "infertrace top: starting (loading and verifying the BPF programs)...");
	refresh();
	*out = t;
	return 0;
}

void top__size(struct top *t, int *rows, int *cols)
{
	(void)t;
	getmaxyx(stdscr, *rows, *cols);
	if (*rows > MAX_LINES)
		*rows = MAX_LINES;
}

void top__show(struct top *t, char lines[][256], int n)
{
	int rows, cols;

	if (!t || t->nlines)
		return;
	getmaxyx(stdscr, rows, cols);
	erase();
	for (int i = 0; i < n && i < rows; i++)
		mvaddnstr(i, 0, lines[i], cols);
	refresh();
}

void top__waiting(struct top *t)
{
	if (!t || t->nlines)
		return;
	erase();
	mvaddstr(0, 0, "infertrace top: attached; waiting for the first snapshot...");
	refresh();
}

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct folded_entry *)a)->stack, ((const struct folded_entry *)b)->stack);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct folded_entry *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->stack, y->stack);
}

/* The leaves of m's on-CPU stacks, minus those of the previous snapshot
 * (both merged by name): the functions of the last interval, busiest first. */
static int interval_leaves(const struct model *m, const struct folded *prev, struct folded *cur,
			   struct folded *delta)
{
	memset(cur, 0, sizeof(*cur));
	memset(delta, 0, sizeof(*delta));
	/* a Python target's own frames, not its interpreter's (py-spy's view) */
	if (folded__leaves(m->oncpu_python.n ? &m->oncpu_python : &m->oncpu, cur))
		return -ENOMEM;
	folded__merge(cur);
	for (size_t i = 0; i < cur->n; i++) {
		const struct folded_entry *e = &cur->entries[i], *p = NULL;
		uint64_t before = 0;

		if (prev && prev->n)
			p = bsearch(e, prev->entries, prev->n, sizeof(*e), by_stack);
		if (p)
			before = p->count;
		if (e->count > before && folded__add(delta, e->stack, e->count - before))
			return -ENOMEM;
	}
	if (delta->n)
		qsort(delta->entries, delta->n, sizeof(*delta->entries), by_count_desc);
	return 0;
}

/* A Python frame as the stacks name it: "qualname (file.py)". */
static bool python_frame(const char *f, size_t n)
{
	return n > 5 && !memcmp(f + n - 4, ".py)", 4) && memchr(f, '(', n);
}

/* py-spy's %Total for Python: per Python function, the on-CPU samples of
 * the run so far whose stack holds it anywhere (once per stack, however
 * deep it recurses), most first; *total gets every on-CPU sample. */
static int python_inclusive(const struct model *m, struct folded *out, uint64_t *total)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	*total = 0;
	for (size_t i = 0; i < m->oncpu.n && !err; i++) {
		const struct folded_entry *e = &m->oncpu.entries[i];
		const char *seen[64];
		size_t nseen = 0, len[64];

		*total += e->count;
		for (const char *f = e->stack, *end; *f && !err; f = *end ? end + 1 : end) {
			size_t n, k;

			end = strchr(f, ';');
			if (!end)
				end = f + strlen(f);
			n = (size_t)(end - f);
			if (f == e->stack || !python_frame(f, n))
				continue; /* the first is the process name */
			for (k = 0; k < nseen && (len[k] != n || memcmp(seen[k], f, n)); k++)
				;
			if (k < nseen || nseen == sizeof(seen) / sizeof(seen[0]))
				continue;
			seen[nseen] = f;
			len[nseen++] = n;
			{
				char *name = strndup(f, n);

				err = name ? folded__add(out, name, e->count) : -ENOMEM;
				free(name);
			}
		}
	}
	folded__merge(out);
	folded__sort_by_count(out);
	return err;
}

struct thread_samples {
	pid_t pid, tid;
	uint64_t samples;
};

static int by_thread(const void *a, const void *b)
{
	const struct thread_samples *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int by_samples_desc(const void *a, const void *b)
{
	const struct thread_samples *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return by_thread(a, b);
}

/* THREADS: the on-CPU samples of the run so far per thread (those the
 * labelled stacks name a thread for), busiest first, each by its own name
 * (its comm as its samples saw it; else its process's): only for two
 * threads or more. */
static int thread_rows(const struct model *m, char lines[][256], int *nl, int nlines, int width)
{
	struct thread_samples *t = m->nlstacks ? calloc(m->nlstacks, sizeof(*t)) : NULL;
	uint64_t all = 0;
	size_t n = 0, k = 0;

	if (m->nlstacks && !t)
		return -ENOMEM;
	for (size_t i = 0; i < m->nlstacks; i++)
		if (m->lstacks[i].tid && m->lstacks[i].samples)
			t[n++] = (struct thread_samples){ m->lstacks[i].pid, m->lstacks[i].tid, m->lstacks[i].samples };
	if (n)
		qsort(t, n, sizeof(*t), by_thread);
	for (size_t i = 0; i < n; i++) {
		all += t[i].samples;
		if (k && !by_thread(&t[k - 1], &t[i]))
			t[k - 1].samples += t[i].samples;
		else
			t[k++] = t[i];
	}
	if (k >= 2) {
		qsort(t, k, sizeof(*t), by_samples_desc);
		screen__line(lines, nl, nlines, width, "THREADS (on-CPU samples, run so far: %llu)", (unsigned long long)all);
		screen__line(lines, nl, nlines, width, "%8s %7s %8s  %s", "SAMPLES", "SHARE", "TID", "NAME");
		for (size_t i = 0; i < k && i < TOP_THREAD_ROWS; i++) {
			const char *name = model__thread_name(m, t[i].pid, t[i].tid);
			const struct model_process *p = name ? NULL : model__find_process(m, t[i].pid);

			screen__line(lines, nl, nlines, width, "%8llu %6.1f%% %8d  %s", (unsigned long long)t[i].samples,
			     100.0 * t[i].samples / all, (int)t[i].tid, name ? name : p && p->comm[0] ? p->comm : "?");
		}
		screen__line(lines, nl, nlines, width, "%s", "");
	}
	free(t);
	return 0;
}

/* "12.5%", or "-" for a share that does not exist */
static void pct(char *buf, double v)
{
	if (isfinite(v))
		snprintf(buf, 16, "%.1f%%", v);
	else
		snprintf(buf, 16, "-");
}

static int format(const struct model *m, const struct folded *prev, struct folded *cur_out,
		  const char *metrics_url, char lines[][256], int nlines, int width)
{
	double *ms = calloc(m->ncycles + 1, sizeof(double)), p50, p95, tps = NAN, rss = model__rss_now_mb(m);
	const struct model_cycle *last = NULL;
	const struct model_sched_figures *s = &m->sched;
	struct folded cur, delta;
	unsigned long el = m->run.duration_s > 0 ? (unsigned long)m->run.duration_s : 0;
	size_t n = 0;
	int nl = 0;
	char buf[256], pids[64] = "";

	if (!ms)
		return -ENOMEM;
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!c->end_ns || c->open_at_end)
			continue;
		ms[n++] = (c->end_ns - c->start_ns) / 1e6;
		if (!last || c->end_ns > last->end_ns)
			last = c;
	}
	p50 = stats__percentile(ms, n, 50);
	p95 = stats__percentile(ms, n, 95);
	free(ms);
	for (size_t i = 0, off = 0; i < m->run.npids && off < sizeof(pids) - 12; i++)
		off += snprintf(pids + off, sizeof(pids) - off, "%s%d", i ? "," : "", (int)m->run.pids[i]);
	/* what matters first: a narrow terminal cuts the end */
	screen__line(lines, &nl, nlines, width, "%02lu:%02lu:%02lu  q: quit  %s (PID %s)%s%s", el / 3600, el / 60 % 60,
	     el % 60, m->run.command && m->run.command[0] ? m->run.command[0] : m->nprocs ? m->procs[0].comm : "?",
	     pids, metrics_url ? "  metrics " : "", metrics_url ? metrics_url : "");
	if (last) {
		tps = last->tokens_per_second;
		screen__line(lines, &nl, nlines, width, "cycles %zu  last %.1f ms  p50 %.1f ms  p95 %.1f ms", n,
		     (last->end_ns - last->start_ns) / 1e6, p50, p95);
		if (last->split.present) {
			char parts[3][16];

			/* the last cycle's main thread: its own on-CPU / run queue / blocked */
			pct(parts[0], split_view__percent(&last->split, last->split.oncpu_ms));
			pct(parts[1], split_view__percent(&last->split, last->split.runq_ms));
			pct(parts[2], split_view__percent(&last->split, last->split.offcpu_ms));
			screen__line(lines, &nl, nlines, width, "last cycle: on-CPU %s  run queue %s  blocked %s", parts[0],
			     parts[1], parts[2]);
		}
	} else {
		screen__line(lines, &nl, nlines, width, "cycles 0 (%s)",
		     m->cycles_source && !strcmp(m->cycles_source, "whole_run") ?
		     "no --cycle: the whole run is one cycle, ended at exit" : "none ended yet");
	}
	if (!isnan(tps))
		screen__line(lines, &nl, nlines, width, "tokens/s %.1f (last cycle)  %.1f (average)", tps,
		     m->agg.avg_tokens_per_second);
	if (s->available && s->oncpu_ms + s->runq_wait_ms + s->offcpu_ms > 0) {
		double t = s->oncpu_ms + s->runq_wait_ms + s->offcpu_ms;

		screen__line(lines, &nl, nlines, width, "threads: on-CPU %.1f%%  run queue %.1f%%  blocked %.1f%%",
		     100 * s->oncpu_ms / t, 100 * s->runq_wait_ms / t, 100 * s->offcpu_ms / t);
	}
	if (!isnan(rss))
		screen__line(lines, &nl, nlines, width, "RSS %.1f MB (peak %.1f MB)", rss,
		     m->memory.available ? m->memory.peak_mb : rss);
	buf[0] = 0;
	if (!isnan(m->side.now_temp_c))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "temp %.1f C  ", m->side.now_temp_c);
	if (!isnan(m->side.now_cpu_mhz))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "CPU %.0f MHz  ", m->side.now_cpu_mhz);
	if (!isnan(m->side.now_gpu_util_pct))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "GPU %.0f%%  ", m->side.now_gpu_util_pct);
	if (!isnan(m->side.now_gpu_mhz))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "GPU %.0f MHz  ", m->side.now_gpu_mhz);
	if (!isnan(m->side.now_gpu_temp_c))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "GPU %.0f C  ", m->side.now_gpu_temp_c);
	if (buf[0])
		screen__line(lines, &nl, nlines, width, "%s", buf);
	gpu_view__live_line(m, buf, sizeof(buf));
	if (buf[0])
		screen__line(lines, &nl, nlines, width, "%s", buf);
	requests_view__live_line(m, buf, sizeof(buf));
	if (buf[0])
		screen__line(lines, &nl, nlines, width, "%s", buf);
	snprintf(buf, sizeof(buf), "lost: samples %llu  events %llu", (unsigned long long)model__lost(m, "samples"),
		 (unsigned long long)model__lost(m, "events"));
	for (size_t i = 0; i < m->nlost; i++)
		if (m->lost[i].value && strcmp(m->lost[i].name, "samples") && strcmp(m->lost[i].name, "events"))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  %s %llu", m->lost[i].name,
				 (unsigned long long)m->lost[i].value);
	screen__line(lines, &nl, nlines, width, "%s", buf);
	screen__line(lines, &nl, nlines, width, "%s", "");
	screen__line(lines, &nl, nlines, width, "%-24s %7s %12s %9s %7s %7s %7s", "PHASE", "SHARE", "TOTAL ms", "CALLS",
	     "ON-CPU", "RUNQ", "BLOCKED");
	for (int p = 1; p < IT_MAX_PHASES; p++) {
		const struct model_phase_summary *ph = &m->phases[p];
		struct model_split sp;
		char parts[3][16];

		if (!m->phase_names[p])
			continue;
		/* the phase's on-CPU / run-queue / blocked shares over the cycles so far */
		split_view__phase(m, p, &sp);
		pct(parts[0], split_view__percent(&sp, sp.oncpu_ms));
		pct(parts[1], split_view__percent(&sp, sp.runq_ms));
		pct(parts[2], split_view__percent(&sp, sp.offcpu_ms));
		screen__line(lines, &nl, nlines, width, "%-24.24s %6.1f%% %12.1f %9llu %7s %7s %7s", m->phase_names[p],
		     ph->present ? ph->percent_of_cycle : 0.0, ph->present ? ph->total_ms : 0.0,
		     (unsigned long long)(ph->present ? ph->calls : 0), parts[0], parts[1], parts[2]);
	}
	screen__line(lines, &nl, nlines, width, "%s", "");
	{
		struct folded py;
		uint64_t all = 0;

		if (python_inclusive(m, &py, &all)) {
			folded__free(&py);
			return -ENOMEM;
		}
		if (py.n && all) {
			screen__line(lines, &nl, nlines, width, "PYTHON FUNCTIONS (on-CPU samples with it on the stack, run so far: %llu)",
			     (unsigned long long)all);
			screen__line(lines, &nl, nlines, width, "%8s %7s  %s", "SAMPLES", "TOTAL", "FUNCTION");
			for (size_t i = 0; i < py.n && i < TOP_PYTHON_ROWS; i++)
				screen__line(lines, &nl, nlines, width, "%8llu %6.1f%%  %s",
				     (unsigned long long)py.entries[i].count, 100.0 * py.entries[i].count / all,
				     py.entries[i].stack);
			screen__line(lines, &nl, nlines, width, "%s", "");
		}
		folded__free(&py);
	}
	if (thread_rows(m, lines, &nl, nlines, width))
		return -ENOMEM;
	if (interval_leaves(m, prev, &cur, &delta)) {
		folded__free(&cur);
		folded__free(&delta);
		return -ENOMEM;
	}
	uint64_t total = 0;

	for (size_t i = 0; i < delta.n; i++)
		total += delta.entries[i].count;
	screen__line(lines, &nl, nlines, width, "TOP FUNCTIONS (on-CPU samples since the last refresh: %llu)",
	     (unsigned long long)total);
	for (size_t i = 0; i < delta.n && nl < nlines; i++)
		screen__line(lines, &nl, nlines, width, "%8llu %6.1f%%  %s", (unsigned long long)delta.entries[i].count,
		     100.0 * delta.entries[i].count / total, delta.entries[i].stack);
	folded__free(&delta);
	if (cur_out)
		*cur_out = cur;
	else
		folded__free(&cur);
	return nl;
}

int top__format(const struct model *m, const struct folded *prev_leaves, const char *metrics_url,
		char lines[][256], int nlines, int width)
{
	return format(m, prev_leaves, NULL, metrics_url, lines, nlines, width);
}

void top__draw(struct top *t, const struct model *m, const char *metrics_url)
{
	struct folded cur = { 0 };
	int rows, cols, n;

	getmaxyx(stdscr, rows, cols);
	if (rows > MAX_LINES)
		rows = MAX_LINES;
	n = format(m, t->have_prev ? &t->prev_leaves : NULL, &cur, metrics_url, t->lines, rows,
		   cols > 0 ? cols - 1 : 0);
	if (n < 0)
		return;
	folded__free(&t->prev_leaves);
	t->prev_leaves = cur;
	t->have_prev = true;
	t->nlines = n;
	erase();
	for (int i = 0; i < n; i++)
		mvaddnstr(i, 0, t->lines[i], cols);
	refresh();
}

bool top__quit_requested(struct top *t)
{
	int c;

	while ((c = getch()) != ERR)
		if (c == 'q' || c == 'Q')
			t->quit = true;
	return t->quit;
}

void top__end(struct top *t)
{
	char buf[4096];
	ssize_t n;

	if (!t)
		return;
	if (t->screen) {
		endwin();
		delscreen(t->screen);
		/* the terminal's own screen is back (curses drew on the alternate
		 * one): the last screen again, so that the final figures stay */
		for (int i = 0; i < t->nlines; i++)
			printf("%s\n", t->lines[i]);
		fflush(stdout);
	}
	if (t->saved_stderr >= 0) {
		fflush(stderr);
		dup2(t->saved_stderr, STDERR_FILENO);
		close(t->saved_stderr);
	}
	if (t->log_fd >= 0) {
		lseek(t->log_fd, 0, SEEK_SET);
		while ((n = read(t->log_fd, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, n) < 0)
				break;
		close(t->log_fd);
	}
	folded__free(&t->prev_leaves);
	free(t);
}
