// SPDX-License-Identifier: BSD-2-Clause
/* A likely --cycle for a loop recorded without one. Fed each observation of
 * a thread's stack (root first, with its time), it finds the frames that
 * appear and disappear periodically (bursts: runs of consecutive
 * observations holding the frame at the same depth under the same caller).
 * The root-most level where periodic frames occur is the outermost loop's
 * body: one periodic function there is the iteration itself; several are
 * its steps, and their common caller runs once per iteration (unless it is
 * the module level, then the first step is a cycle marker). No periodic
 * frame (at least SUGGEST_MIN_BURSTS regular bursts spanning at least
 * SUGGEST_MIN_SPAN of the thread's observed time): no suggestion. */
#ifndef INFERTRACE_SUGGEST_H
#define INFERTRACE_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SUGGEST_MIN_BURSTS 3
#define SUGGEST_MIN_SPAN 0.25  /* of the thread's observed time the bursts must span */

struct suggest;

struct suggestion {
	char name[256];      /* the function, as the stacks write it */
	bool marker;         /* --cycle-marker rather than --cycle */
	uint64_t bursts;     /* periodic bursts seen */
	double period_ms;    /* their median spacing */
	pid_t tid;
};

struct suggest *suggest__new(void);
void suggest__free(struct suggest *s);
/* One observation of thread tid at ts: frames root first. 0 or -ENOMEM. */
int suggest__observe(struct suggest *s, pid_t tid, uint64_t ts, const char *const *frames, int n);
/* true and *out filled when a loop was found. */
bool suggest__result(const struct suggest *s, struct suggestion *out);
/* "--cycle py:run_cycle (seen in 15 periodic bursts, period 50 ms)";
 * prefix "py:" for Python frames (`qualname (file.py)`); a JavaScript
 * frame (`name (file.js:LINE)`) is suggested as `--phase loop=js:name`,
 * since js: specs cannot bound cycles. */
void suggest__format(const struct suggestion *g, char *buf, size_t len);
/* The option of the suggestion: --cycle, --cycle-marker or --phase. */
const char *suggest__option(const struct suggestion *g);
/* What an option suggests, for "suggested ...:" lines: "phase" for
 * --phase, else "cycle". */
const char *suggest__noun(const char *option);

/* The native samples' suggestion (sampling concern: DWARF samples carry
 * their time), for processes without Python frames; the python concern
 * writes whichever it has, its own first. */
struct recording;
bool sampling__suggest(const struct recording *rec, struct suggestion *out);

#endif
