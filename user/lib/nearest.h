// SPDX-License-Identifier: BSD-2-Clause
/* The names nearest a misspelt one, for "did you mean" hints: edit distance
 * (insert, delete, substitute, swap two neighbours: "stpe" is one from
 * "step"), the few closest kept, ties in name order. */
#ifndef INFERTRACE_NEAREST_H
#define INFERTRACE_NEAREST_H

#include <stddef.h>

#define NEAREST_KEEP 3
#define NEAREST_MAX_LEN 256 /* longer names are not compared */

struct nearest {
	const char *want;            /* not owned */
	unsigned int max;            /* farther names are not kept */
	int n;
	char *names[NEAREST_KEEP];   /* owned, nearest first */
	unsigned int dist[NEAREST_KEEP];
};

/* Distance between a and b (n bytes of b), or max + 1 when it is more. */
unsigned int nearest__distance(const char *a, const char *b, size_t n, unsigned int max);
/* Starts a search for names near want: at most a third of its length
 * away, and at least 2. */
void nearest__init(struct nearest *nr, const char *want);
/* Offers the first n bytes of name (a symbol's version "@VER" cut off by
 * the caller); kept when among the nearest. 0 or -ENOMEM. */
int nearest__offer(struct nearest *nr, const char *name, size_t n);
/* "a, b, c" with each name after prefix; "" when none was near. Returns buf. */
const char *nearest__list(const struct nearest *nr, const char *prefix, char *buf, size_t len);
void nearest__free(struct nearest *nr);

#endif
