// SPDX-License-Identifier: BSD-2-Clause
/* `top` before the BPF programs are attached (proc_view.h). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screen_lines.h"
#include "proc_view.h"
#include "procfs.h"
#include "text.h"

#define PROC_VIEW_THREAD_ROWS 8

void proc_view__init(struct proc_view *v, const pid_t *pids, int npids, const char *held_command)
{
	memset(v, 0, sizeof(*v));
	v->clk_tck = sysconf(_SC_CLK_TCK);
	if (v->clk_tck <= 0)
		v->clk_tck = 100;
	v->pids = pids;
	v->npids = npids;
	v->held_command = held_command;
}

static void sample_free(struct proc_sample *s)
{
	free(s->targets.v);
	free(s->threads.v);
	memset(s, 0, sizeof(*s));
}

static int by_thread_id(const void *a, const void *b)
{
	const struct proc_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void proc_view__push(struct proc_view *v, struct proc_sample *s)
{
	/* by id, for the next sample's look-ups (a process of thousands of threads) */
	if (s->threads.n)
		qsort(s->threads.v, s->threads.n, sizeof(*s->threads.v), by_thread_id);
	sample_free(&v->prev);
	v->prev = v->cur;
	v->cur = *s;
	memset(s, 0, sizeof(*s));
}

/* The threads of process pid into s (those that exit meanwhile are left out). */
static int read_threads(struct proc_sample *s, pid_t pid)
{
	char path[64], buf[1024];
	struct dirent *d;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!err && (d = readdir(dir))) {
		struct proc_thread t = { .pid = pid };
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		t.tid = (pid_t)tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
		if (procfs__read(path, buf, sizeof(buf)) <= 0 || procfs__stat_ticks(buf, &t.ticks) ||
		    procfs__stat_comm(buf, t.comm, sizeof(t.comm)))
			continue;
		err = VEC_RESERVE(s->threads.v, s->threads.cap, s->threads.n, 16);
		if (!err)
			s->threads.v[s->threads.n++] = t;
	}
	closedir(dir);
	return err;
}

/* A process's CPU time, name and RSS into t (t->gone when unreadable). */
static void read_process(struct proc_target *t, pid_t pid)
{
	char path[64], buf[4096];

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->rss_kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	t->gone = procfs__read(path, buf, sizeof(buf)) <= 0 || procfs__stat_ticks(buf, &t->ticks) ||
		  procfs__stat_comm(buf, t->comm, sizeof(t->comm));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!t->gone && procfs__read(path, buf, sizeof(buf)) > 0)
		t->rss_kb = procfs__meminfo_kb(buf, "VmRSS");
}

int proc_view__read(struct proc_view *v, uint64_t now_ns)
{
	struct proc_sample s = { .ns = now_ns, .load1 = NAN, .mem_total_kb = -1, .mem_avail_kb = -1 };
	char buf[4096];
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int err = 0;

	s.ncpus = n > 0 ? (int)n : 0;
	if (procfs__read("/proc/stat", buf, sizeof(buf)) > 0)
		s.have_cpu = !procfs__cpu_ticks(buf, &s.cpu_busy, &s.cpu_total);
	if (procfs__read("/proc/loadavg", buf, sizeof(buf)) > 0 && sscanf(buf, "%lf", &s.load1) != 1)
		s.load1 = NAN;
	if (procfs__read("/proc/meminfo", buf, sizeof(buf)) > 0) {
		s.mem_total_kb = procfs__meminfo_kb(buf, "MemTotal");
		s.mem_avail_kb = procfs__meminfo_kb(buf, "MemAvailable");
	}
	read_process(&s.self, getpid());
	for (int i = 0; i < v->npids && !err; i++) {
		struct proc_target t;

		read_process(&t, v->pids[i]);
		err = VEC_RESERVE(s.targets.v, s.targets.cap, s.targets.n, 4);
		if (!err)
			s.targets.v[s.targets.n++] = t;
		if (!err && !t.gone)
			err = read_threads(&s, t.pid);
	}
	if (err) {
		sample_free(&s);
		return err;
	}
	proc_view__push(v, &s);
	return 0;
}

/* The same thread in the previous sample, or NULL. */
static const struct proc_thread *prev_thread(const struct proc_view *v, const struct proc_thread *t)
{
	if (!v->prev.threads.n)
		return NULL;
	return bsearch(t, v->prev.threads.v, v->prev.threads.n, sizeof(*t), by_thread_id);
}

static const struct proc_target *prev_target(const struct proc_view *v, pid_t pid)
{
	for (size_t i = 0; i < v->prev.targets.n; i++)
		if (v->prev.targets.v[i].pid == pid && !v->prev.targets.v[i].gone)
			return &v->prev.targets.v[i];
	return NULL;
}

struct thread_row {
	const struct proc_thread *t;
	double pct; /* of one CPU over the last interval; NAN without one */
};

static int by_busy(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	if (!isnan(x->pct) && !isnan(y->pct) && x->pct != y->pct)
		return x->pct < y->pct ? 1 : -1;
	if (x->t->ticks != y->t->ticks)
		return x->t->ticks < y->t->ticks ? 1 : -1;
	return x->t->tid < y->t->tid ? -1 : x->t->tid > y->t->tid;
}

/* "  RSS 20.0 MB  CPU 90.0% (last 0.50 s)  CPU time 1.95 s" of t, its share
 * over the last interval only with a previous read p. */
static void process_figures(const struct proc_view *v, const struct proc_target *t, const struct proc_target *p,
			    double dt, char *buf, size_t len)
{
	buf[0] = 0;
	if (t->rss_kb >= 0)
		snprintf(buf, len, "  RSS %.1f MB", t->rss_kb / 1024.0);
	if (p && !p->gone && dt > 0 && t->ticks >= p->ticks)
		snprintf(buf + strlen(buf), len - strlen(buf), "  CPU %.1f%% (last %.2f s)",
			 100.0 * (t->ticks - p->ticks) / v->clk_tck / dt, dt);
	snprintf(buf + strlen(buf), len - strlen(buf), "  CPU time %.2f s", (double)t->ticks / v->clk_tck);
}

static int format_targets(const struct proc_view *v, double dt, char lines[][256], int *nl, int nlines, int width)
{
	const struct proc_sample *c = &v->cur;
	struct thread_row *rows = c->threads.n ? calloc(c->threads.n, sizeof(*rows)) : NULL;
	char pct[32], figures[128];

	if (c->threads.n && !rows)
		return -ENOMEM;
	screen__line(lines, nl, nlines, width, "%s", "");
	screen__line(lines, nl, nlines, width, "TARGETS (read from /proc until the programs are attached)");
	for (size_t i = 0; i < c->targets.n; i++) {
		const struct proc_target *t = &c->targets.v[i];

		if (t->gone) {
			screen__line(lines, nl, nlines, width, "PID %d: not readable (exited?)", (int)t->pid);
			continue;
		}
		process_figures(v, t, prev_target(v, t->pid), dt, figures, sizeof(figures));
		screen__line(lines, nl, nlines, width, "PID %d %s:%s", (int)t->pid, t->comm, figures);
	}
	for (size_t i = 0; i < c->threads.n; i++) {
		const struct proc_thread *p = prev_thread(v, &c->threads.v[i]);

		rows[i].t = &c->threads.v[i];
		rows[i].pct = p && dt > 0 && rows[i].t->ticks >= p->ticks ?
			      100.0 * (rows[i].t->ticks - p->ticks) / v->clk_tck / dt : NAN;
	}
	if (c->threads.n) {
		qsort(rows, c->threads.n, sizeof(*rows), by_busy);
		screen__line(lines, nl, nlines, width, "%8s %7s %10s  %s", "TID", "CPU%", "CPU TIME s", "NAME");
		for (size_t i = 0; i < c->threads.n && i < PROC_VIEW_THREAD_ROWS; i++) {
			if (isnan(rows[i].pct))
				snprintf(pct, sizeof(pct), "-");
			else
				snprintf(pct, sizeof(pct), "%.1f%%", rows[i].pct);
			screen__line(lines, nl, nlines, width, "%8d %7s %10.2f  %s", (int)rows[i].t->tid, pct,
			     (double)rows[i].t->ticks / v->clk_tck, rows[i].t->comm);
		}
		if (c->threads.n > PROC_VIEW_THREAD_ROWS)
			screen__line(lines, nl, nlines, width, "(%zu threads)", c->threads.n);
	}
	free(rows);
	return 0;
}

int proc_view__format(const struct proc_view *v, double loading_s, char lines[][256], int nlines, int width)
{
	const struct proc_sample *c = &v->cur, *p = &v->prev;
	unsigned long el = loading_s > 0 ? (unsigned long)loading_s : 0;
	double dt = c->ns && p->ns && c->ns > p->ns ? (c->ns - p->ns) / 1e9 : 0;
	char buf[256];
	int nl = 0;

	screen__line(lines, &nl, nlines, width, "%02lu:%02lu:%02lu  loading and verifying the BPF programs (%.1f s); "
	     "until they run, figures read from /proc", el / 3600, el / 60 % 60, el % 60, loading_s);
	if (v->held_command)
		screen__line(lines, &nl, nlines, width, "command: %s, held at its start until the programs are attached",
		     v->held_command);
	if (!c->ns)
		return nl;
	snprintf(buf, sizeof(buf), "machine:");
	if (c->ncpus)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " %d CPUs", c->ncpus);
	if (dt > 0 && c->have_cpu && p->have_cpu && c->cpu_total > p->cpu_total && c->cpu_busy >= p->cpu_busy)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  busy %.1f%% (last %.2f s)",
			 100.0 * (c->cpu_busy - p->cpu_busy) / (c->cpu_total - p->cpu_total), dt);
	if (!isnan(c->load1))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  load average %.2f", c->load1);
	if (c->mem_avail_kb >= 0 && c->mem_total_kb > 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "  memory available %.0f MB of %.0f MB",
			 c->mem_avail_kb / 1024.0, c->mem_total_kb / 1024.0);
	screen__line(lines, &nl, nlines, width, "%s", buf);
	if (!c->self.gone) {
		process_figures(v, &c->self, p->ns ? &p->self : NULL, dt, buf, sizeof(buf));
		screen__line(lines, &nl, nlines, width, "tracer (PID %d):%s", (int)c->self.pid, buf);
	}
	if (c->targets.n && format_targets(v, dt, lines, &nl, nlines, width))
		return -ENOMEM;
	return nl;
}

void proc_view__free(struct proc_view *v)
{
	sample_free(&v->prev);
	sample_free(&v->cur);
}
