// SPDX-License-Identifier: BSD-2-Clause
/* The live concern: `top` and `--metrics`. Both read snapshots of the
 * recording (recording__build(rec, &m, false)), taken on the recording's own
 * thread in the tick hook: once a second for `top`, and for /metrics only
 * when a scrape asks (metrics.h), so the HTTP thread never touches the
 * recording. One snapshot serves both. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "concerns.h"
#include "metrics.h"
#include "model.h"
#include "top.h"

#define TOP_REFRESH_NS 1000000000ull

struct live_state {
	struct metrics_server *metrics;
	struct top *top;
	uint64_t last_top_ns;
};

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
	 * which would otherwise pass on a blank terminal */
	if (rec->opts.top)
		return top__start(&ls->top);
	return 0;
}

/* last in the concern list: every other concern has attached. The view
 * names kernel frames too: record hands it the kernel symbols once the
 * command is released (record.c). */
static int live_attach(struct recording *rec)
{
	struct live_state *ls = rec->live;

	if (!ls || !rec->opts.top)
		return 0;
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
