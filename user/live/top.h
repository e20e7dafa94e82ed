// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace top`: the live terminal view (ncurses) of a recording. It
 * draws model snapshots; it never reads the recording itself. While it runs,
 * the tracer's own messages go to a temporary file and are shown on the
 * terminal once the view ends. */
#ifndef INFERTRACE_TOP_H
#define INFERTRACE_TOP_H

#include <stdbool.h>

struct model;
struct top;

/* 0, or -ENOTTY (with a message) when stdin and stdout are not a terminal. */
int top__check_terminal(void);
/* Takes over the terminal. 0 or -errno. */
int top__start(struct top **out);
/* Before the first snapshot: shows n lines (proc_view.h's) until the next
 * screen; they are not kept as the last screen. */
void top__show(struct top *t, char lines[][256], int n);
/* The terminal's rows (at most those a screen holds) and columns. */
void top__size(struct top *t, int *rows, int *cols);
/* The programs are attached: says so until the first snapshot; NULL is fine. */
void top__waiting(struct top *t);
/* Draws a snapshot (MODEL_ANALYSED); "top functions" are those of the
 * samples since the previous one. metrics_url may be NULL. */
void top__draw(struct top *t, const struct model *m, const char *metrics_url);
/* Reads pending keys: true once `q` was pressed. */
bool top__quit_requested(struct top *t);
/* Gives the terminal back and shows the messages held meanwhile; NULL is fine. */
void top__end(struct top *t);

/* The view's lines for a snapshot, without the terminal: lines[i] (at most
 * nlines, each at most width columns), for tests. prev_leaves may be NULL.
 * Returns the number of lines. */
struct folded;
int top__format(const struct model *m, const struct folded *prev_leaves, const char *metrics_url,
		char lines[][256], int nlines, int width);

#endif
