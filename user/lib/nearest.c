// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nearest.h"

static unsigned int min3(unsigned int a, unsigned int b, unsigned int c)
{
	unsigned int m = a < b ? a : b;

	return m < c ? m : c;
}

/* Optimal string alignment over three rows; a row whose every cell is past
 * max ends the walk early. */
unsigned int nearest__distance(const char *a, const char *b, size_t nb, unsigned int max)
{
	unsigned int rows[3][NEAREST_MAX_LEN + 1], *pp = rows[0], *prev = rows[1], *cur = rows[2];
	size_t na = strlen(a);

	if (na > NEAREST_MAX_LEN || nb > NEAREST_MAX_LEN)
		return max + 1;
	if ((na > nb ? na - nb : nb - na) > max)
		return max + 1;
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned int)j;
	for (size_t i = 1; i <= na; i++) {
		unsigned int best;
		unsigned int *t;

		cur[0] = (unsigned int)i;
		best = cur[0];
		for (size_t j = 1; j <= nb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1];

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
			if (cur[j] < best)
				best = cur[j];
		}
		if (best > max)
			return max + 1;
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb] > max ? max + 1 : prev[nb];
}

void nearest__init(struct nearest *nr, const char *want)
{
	size_t third = strlen(want) / 3;

	memset(nr, 0, sizeof(*nr));
	nr->want = want;
	nr->max = third > 2 ? (unsigned int)third : 2;
}

/* Whether (d, name) sorts before slot i. */
static bool before(const struct nearest *nr, unsigned int d, const char *name, size_t n, int i)
{
	int c;

	if (d != nr->dist[i])
		return d < nr->dist[i];
	c = strncmp(name, nr->names[i], n);
	return c < 0 || (c == 0 && nr->names[i][n]);
}

int nearest__offer(struct nearest *nr, const char *name, size_t n)
{
	unsigned int limit = nr->n == NEAREST_KEEP ? nr->dist[NEAREST_KEEP - 1] : nr->max;
	unsigned int d = nearest__distance(nr->want, name, n, limit);
	int at;

	if (d > limit || d == 0)
		return 0;
	for (int i = 0; i < nr->n; i++)
		if (!strncmp(nr->names[i], name, n) && !nr->names[i][n])
			return 0;
	for (at = 0; at < nr->n && !before(nr, d, name, n, at); at++)
		;
	if (at == NEAREST_KEEP)
		return 0;
	char *copy = strndup(name, n);

	if (!copy)
		return -ENOMEM;
	if (nr->n == NEAREST_KEEP)
		free(nr->names[--nr->n]);
	memmove(&nr->names[at + 1], &nr->names[at], (nr->n - at) * sizeof(nr->names[0]));
	memmove(&nr->dist[at + 1], &nr->dist[at], (nr->n - at) * sizeof(nr->dist[0]));
	nr->names[at] = copy;
	nr->dist[at] = d;
	nr->n++;
	return 0;
}

const char *nearest__list(const struct nearest *nr, const char *prefix, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = 0;
	for (int i = 0; i < nr->n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s%s", i ? ", " : "", prefix, nr->names[i]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}

void nearest__free(struct nearest *nr)
{
	for (int i = 0; i < nr->n; i++)
		free(nr->names[i]);
	nr->n = 0;
}
