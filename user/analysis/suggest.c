// SPDX-License-Identifier: BSD-2-Clause
/* A likely --cycle from the stacks' timeline; see suggest.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"
#include "vec.h"

#define NBUCKETS 4096

struct sframe {
	struct sframe *next;
	pid_t tid;
	uint32_t depth;
	char *name, *parent;   /* parent "" at the root */
	uint64_t last_obs;     /* the thread's observation it was last seen in */
	uint64_t *starts;      /* each burst's first observation time */
	size_t nstarts, capstarts;
};

struct sthread {
	pid_t tid;
	uint64_t nobs;
	uint64_t first_ts, last_ts;  /* its first and last observation */
};

struct suggest {
	struct sframe *buckets[NBUCKETS];
	struct sthread *threads;
	size_t nthreads, capthreads;
};

static uint64_t hash(pid_t tid, uint32_t depth, const char *name, const char *parent)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)tid << 20) ^ depth;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	for (; *parent; parent++)
		h = (h ^ (unsigned char)*parent) * 0x100000001b3ull;
	return h;
}

struct suggest *suggest__new(void)
{
	return calloc(1, sizeof(struct suggest));
}

void suggest__free(struct suggest *s)
{
	if (!s)
		return;
	for (int b = 0; b < NBUCKETS; b++)
		for (struct sframe *f = s->buckets[b], *n; f; f = n) {
			n = f->next;
			free(f->name);
			free(f->parent);
			free(f->starts);
			free(f);
		}
	free(s->threads);
	free(s);
}

static struct sthread *thread_of(struct suggest *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	if (VEC_RESERVE(s->threads, s->capthreads, s->nthreads, 16))
		return NULL;
	s->threads[s->nthreads] = (struct sthread){ .tid = tid };
	return &s->threads[s->nthreads++];
}

static struct sframe *frame_of(struct suggest *s, pid_t tid, uint32_t depth, const char *name, const char *parent)
{
	struct sframe **head = &s->buckets[hash(tid, depth, name, parent) % NBUCKETS], *f;

	for (f = *head; f; f = f->next)
		if (f->tid == tid && f->depth == depth && !strcmp(f->name, name) && !strcmp(f->parent, parent))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->tid = tid;
	f->depth = depth;
	f->name = strdup(name);
	f->parent = strdup(parent);
	if (!f->name || !f->parent) {
		free(f->name);
		free(f->parent);
		free(f);
		return NULL;
	}
	f->next = *head;
	*head = f;
	return f;
}

int suggest__observe(struct suggest *s, pid_t tid, uint64_t ts, const char *const *frames, int n)
{
	struct sthread *t = thread_of(s, tid);

	if (!t)
		return -ENOMEM;
	if (!t->nobs++)
		t->first_ts = ts;
	t->last_ts = ts;
	for (int i = 0; i < n; i++) {
		struct sframe *f = frame_of(s, tid, i, frames[i], i ? frames[i - 1] : "");

		if (!f)
			return -ENOMEM;
		if (f->last_obs != t->nobs - 1 || !f->nstarts) {
			if (VEC_RESERVE(f->starts, f->capstarts, f->nstarts, 16))
				return -ENOMEM;
			f->starts[f->nstarts++] = ts;
		}
		f->last_obs = t->nobs;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median spacing of a frame's bursts when they are regular: at least
 * 75% of the spacings within half a period of the median; 0 otherwise. */
static double period_ns(const struct sframe *f)
{
	size_t n = f->nstarts - 1, near = 0;
	uint64_t *d;
	double med;

	if (f->nstarts < SUGGEST_MIN_BURSTS)
		return 0;
	d = malloc(n * sizeof(*d));
	if (!d)
		return 0;
	for (size_t i = 0; i < n; i++)
		d[i] = f->starts[i + 1] - f->starts[i];
	qsort(d, n, sizeof(*d), cmp_u64);
	med = (double)d[n >> 1];
	for (size_t i = 0; i < n; i++)
		near += fabs((double)d[i] - med) <= med / 2;
	free(d);
	return med > 0 && near * 4 >= n * 3 ? med : 0;
}

static bool module_level(const char *name)
{
	return !strncmp(name, "<module>", 8);
}

/* A loop's frame: regular bursts over at least SUGGEST_MIN_SPAN of its
 * thread's observed time (a burst pattern at start-up, certificates parsed
 * or modules imported, is not the experiment's loop), and not a module's
 * top level, which runs once. */
static bool loop_frame(const struct suggest *s, const struct sframe *f)
{
	uint64_t span = 0;

	if (module_level(f->name) || period_ns(f) <= 0)
		return false;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == f->tid)
			span = s->threads[i].last_ts - s->threads[i].first_ts;
	return (double)(f->starts[f->nstarts - 1] - f->starts[0]) >= SUGGEST_MIN_SPAN * (double)span;
}

/* Whether the frame that calls the steps at `level` holds the whole loop
 * rather than running once per iteration: never seen leaving (fewer than
 * SUGGEST_MIN_BURSTS bursts), and a program's main or a function the
 * module's top level called. A run_cycle called from main in a tight loop
 * is never seen leaving either, but --cycle on it gives the iterations;
 * on main it would give one cycle. */
static bool caller_holds_loop(const struct suggest *s, pid_t tid, uint32_t level, const char *caller)
{
	size_t n = strlen(caller);
	bool main_fn = !strcmp(caller, "main") || (n > 6 && !strncmp(caller, "main (", 6));

	for (int b = 0; level && b < NBUCKETS; b++)
		for (const struct sframe *f = s->buckets[b]; f; f = f->next)
			if (f->tid == tid && f->depth == level - 1 && !strcmp(f->name, caller) &&
			    f->nstarts < SUGGEST_MIN_BURSTS && (main_fn || module_level(f->parent)))
				return true;
	return false;
}

bool suggest__result(const struct suggest *s, struct suggestion *out)
{
	const struct sframe *best = NULL, *first = NULL;
	uint32_t level = UINT32_MAX;
	size_t nlevel = 0;
	pid_t tid = 0;

	/* the root-most level with periodic frames; the thread with most bursts there */
	for (int b = 0; b < NBUCKETS; b++)
		for (const struct sframe *f = s->buckets[b]; f; f = f->next)
			if (loop_frame(s, f) && (!best || f->depth < level || (f->depth == level && f->nstarts > best->nstarts))) {
				level = f->depth;
				best = f;
			}
	if (!best)
		return false;
	tid = best->tid;
	/* its periodic siblings under the same caller: the loop's steps */
	for (int b = 0; b < NBUCKETS; b++)
		for (const struct sframe *f = s->buckets[b]; f; f = f->next)
			if (f->tid == tid && f->depth == level && !strcmp(f->parent, best->parent) && loop_frame(s, f)) {
				nlevel++;
				if (!first || f->starts[0] < first->starts[0])
					first = f;
			}
	/* a lone periodic frame among siblings that burst about as often but
	 * irregularly (a step split or merged by the samples that fell in it)
	 * is one of the loop's steps too: their caller is the iteration */
	const struct sframe *earliest = first;

	if (nlevel == 1 && *best->parent)
		for (int b = 0; b < NBUCKETS; b++)
			for (const struct sframe *f = s->buckets[b]; f; f = f->next)
				if (f != best && f->tid == tid && f->depth == level && !strcmp(f->parent, best->parent) &&
				    f->nstarts >= SUGGEST_MIN_BURSTS && f->nstarts * 2 >= best->nstarts) {
					nlevel++;
					if (f->starts[0] < earliest->starts[0])
						earliest = f;
				}
	memset(out, 0, sizeof(*out));
	out->tid = tid;
	out->bursts = first->nstarts;
	out->period_ms = period_ns(first) / 1e6;
	if (nlevel == 1 || !*best->parent) {
		snprintf(out->name, sizeof(out->name), "%s", best->name);
		out->bursts = best->nstarts;
		out->period_ms = period_ns(best) / 1e6;
	} else if (module_level(best->parent) || caller_holds_loop(s, tid, level, best->parent)) {
		/* the steps' caller runs once (the module's top level, or a
		 * function holding the whole loop, such as main): as --cycle it
		 * would give one cycle; each iteration starts with the first step */
		snprintf(out->name, sizeof(out->name), "%s", earliest->name);
		out->marker = true;
	} else {
		snprintf(out->name, sizeof(out->name), "%s", best->parent);
	}
	return true;
}

enum frame_kind { FRAME_NATIVE, FRAME_PY, FRAME_JS };

/* `qualname (file.py)` is a Python frame, `name (file.js:LINE)` a perf
 * map's JIT frame (perfmap__pretty); anything else native. */
static enum frame_kind frame_kind(const char *name, size_t *bare)
{
	const char *open = strrchr(name, '(');
	size_t n = strlen(name);

	*bare = n;
	if (!open || open == name || open[-1] != ' ' || name[n - 1] != ')')
		return FRAME_NATIVE;
	*bare = (size_t)(open - 1 - name);
	return n >= 4 && !strncmp(name + n - 4, ".py)", 4) ? FRAME_PY : FRAME_JS;
}

const char *suggest__option(const struct suggestion *g)
{
	size_t bare;

	if (frame_kind(g->name, &bare) == FRAME_JS)
		return "--phase";
	return g->marker ? "--cycle-marker" : "--cycle";
}

const char *suggest__noun(const char *option)
{
	return option && !strcmp(option, "--phase") ? "phase" : "cycle";
}

void suggest__format(const struct suggestion *g, char *buf, size_t len)
{
	size_t bare;
	enum frame_kind k = frame_kind(g->name, &bare);

	if (k == FRAME_JS) {
		/* js: specs are observed at samples: phases only */
		snprintf(buf, len, "--phase loop=js:%.*s (a JavaScript loop, seen in %llu periodic bursts, period %.0f ms; "
			 "js: specs time phases, cycles need a native function or USDT probe run once per iteration)",
			 (int)bare, g->name, (unsigned long long)g->bursts, g->period_ms);
		return;
	}
	snprintf(buf, len, "%s %s%.*s (seen in %llu periodic bursts, period %.0f ms)", suggest__option(g),
		 k == FRAME_PY ? "py:" : "", (int)bare, g->name, (unsigned long long)g->bursts, g->period_ms);
}
