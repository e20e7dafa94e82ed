// SPDX-License-Identifier: BSD-2-Clause
/* The live concern: `top` and `--metrics`. Both read snapshots of the
 * recording (recording__build(rec, &m, false)), taken on the recording's own
 * thread in the tick hook: once a second for `top`, and for /metrics only
 * when a scrape asks (metrics.h), so the HTTP thread never touches the
 * recording. One snapshot serves both. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "concerns.h"
#include "deadline.h"
#include "metrics.h"
#include "model.h"
#include "proc_view.h"
#include "procfs.h"
#include "top.h"

#define TOP_REFRESH_NS 1000000000ull
/* the view before the programs are attached: its first CPU shares after
 * 0.25 s, then every 0.5 s */
#define LOADING_FIRST_NS 250000000ull
#define LOADING_REFRESH_NS 500000000ull
#define LOADING_LINES 64

/* While the recording's thread loads, verifies and attaches the BPF
 * programs (seconds), `top` shows figures read from /proc (proc_view.h)
 * from its own thread: the only one that touches the terminal meanwhile. */
struct loading_view {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;              /* under lock */
	struct top *top;
	struct proc_view pv;
	double start_s;         /* the tracer's start, CLOCK_BOOTTIME seconds */
	char lines[LOADING_LINES][256];
};

struct live_state {
	struct metrics_server *metrics;
	struct top *top;
	uint64_t last_top_ns;
	struct loading_view loading;
};

static double boottime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The tracer's own start (its /proc/self/stat starttime, 10 ms steps), or now. */
static double tracer_start_s(void)
{
	char buf[1024];
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz > 0 && procfs__read("/proc/self/stat", buf, sizeof(buf)) > 0 && !procfs__stat_starttime(buf, &ticks))
		return (double)ticks / hz;
	return boottime_s();
}

static void *loading_run(void *arg)
{
	struct loading_view *lv = arg;
	uint64_t wait_ns = LOADING_FIRST_NS;
	struct timespec until;

	pthread_mutex_lock(&lv->lock);
	while (!lv->stop) {
		int rows, cols, n;

		pthread_mutex_unlock(&lv->lock);
		top__size(lv->top, &rows, &cols);
		if (rows > LOADING_LINES)
			rows = LOADING_LINES;
		n = proc_view__read(&lv->pv, recording__now_ns()) ? -ENOMEM :
		    proc_view__format(&lv->pv, boottime_s() - lv->start_s, lv->lines, rows, cols > 0 ? cols - 1 : 0);
		if (n >= 0)
			top__show(lv->top, lv->lines, n);
		top__quit_requested(lv->top); /* a `q` now ends the run once it starts */
		until = deadline_in(wait_ns);
		wait_ns = LOADING_REFRESH_NS;
		pthread_mutex_lock(&lv->lock);
		while (!lv->stop && pthread_cond_timedwait(&lv->wake, &lv->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&lv->lock);
	return NULL;
}

static int loading_start(struct loading_view *lv, struct top *top, const struct record_opts *o)
{
	pthread_condattr_t ca;
	int err;

	lv->top = top;
	lv->start_s = tracer_start_s();
	proc_view__init(&lv->pv, o->pids, o->command ? 0 : o->npids, o->command ? o->command[0] : NULL);
	pthread_mutex_init(&lv->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lv->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&lv->thread, NULL, loading_run, lv);
	lv->started = !err;
	if (err) {
		pthread_cond_destroy(&lv->wake);
		pthread_mutex_destroy(&lv->lock);
	}
	return -err;
}

/* The terminal is the recording thread's again once this returns. */
static void loading_stop(struct loading_view *lv)
{
	if (!lv->started)
		return;
	pthread_mutex_lock(&lv->lock);
	lv->stop = true;
	pthread_cond_signal(&lv->wake);
	pthread_mutex_unlock(&lv->lock);
	pthread_join(lv->thread, NULL);
	lv->started = false;
	pthread_cond_destroy(&lv->wake);
	pthread_mutex_destroy(&lv->lock);
	proc_view__free(&lv->pv);
}

static int live_configure(struct recording *rec)
{
	struct live_state *ls;
	int err;

	if (!rec->opts.metrics && !rec->opts.top)
		return 0;
	/* before the target starts: no terminal, a bad address or a port in use
	 * ends the run while nothing has begun */
	if (rec->opts.top && top__check_terminal())
		return -EINVAL;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	rec->live = ls;
	if (rec->opts.metrics) {
		err = metrics_server__start(&ls->metrics, rec->opts.metrics);
		if (err)
			return err;
		if (!rec->opts.quiet || rec->opts.top)
			fprintf(stderr, "infertrace: serving metrics at %s\n", metrics_server__url(ls->metrics));
	}
	/* the view at once: loading and verifying the programs takes seconds,
	 * shown with figures from /proc meanwhile rather than a blank terminal */
	if (!rec->opts.top)
		return 0;
	err = top__start(&ls->top);
	if (!err && loading_start(&ls->loading, ls->top, &rec->opts))
		fprintf(stderr, "infertrace: warning: no view while the BPF programs load: cannot start its thread\n");
	return err;
}

/* last in the concern list: every other concern has attached. The view
 * names kernel frames too: record hands it the kernel symbols its loader
 * thread read, before the command is released (record.c). */
static int live_attach(struct recording *rec)
{
	struct live_state *ls = rec->live;

	if (!ls || !rec->opts.top)
		return 0;
	loading_stop(&ls->loading);
	top__waiting(ls->top);
	return 0;
}

static void live_tick(struct recording *rec)
{
	struct live_state *ls = rec->live;
	uint64_t now = recording__now_ns();
	bool for_top, for_metrics;
	struct model m;

	if (!ls)
		return;
	if (ls->top && top__quit_requested(ls->top))
		rec->stop_request = "q";
	for_top = ls->top && now - ls->last_top_ns >= TOP_REFRESH_NS;
	for_metrics = ls->metrics && metrics_server__wanted(ls->metrics, now);
	if (!for_top && !for_metrics)
		return;
	if (recording__build(rec, &m, false))
		return; /* the next tick tries again */
	if (for_top || ls->top) {
		top__draw(ls->top, &m, ls->metrics ? metrics_server__url(ls->metrics) : NULL);
		ls->last_top_ns = now;
	}
	if (ls->metrics) {
		char *text = metrics__render(&m);

		if (text)
			metrics_server__publish(ls->metrics, text, now);
	}
	model__free(&m);
}

/* the recording ended: the terminal back before the closing messages */
static void live_stop(struct recording *rec)
{
	struct live_state *ls = rec->live;

	if (!ls)
		return;
	loading_stop(&ls->loading);
	top__end(ls->top);
	ls->top = NULL;
	metrics_server__stop(ls->metrics);
	ls->metrics = NULL;
}

static void live_cleanup(struct recording *rec)
{
	live_stop(rec);
	free(rec->live);
	rec->live = NULL;
}

const struct concern live_concern = {
	.name = "live",
	.configure = live_configure,
	.attach = live_attach,
	.tick = live_tick,
	.stop = live_stop,
	.cleanup = live_cleanup,
};
