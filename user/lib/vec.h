// SPDX-License-Identifier: BSD-2-Clause
/* Growing arrays, the one way every concern grows its tables.
 *
 * A table is a pointer, a count and a capacity. VEC_RESERVE makes room for
 * element n (doubling the capacity from `first`, as often as it takes), which
 * is how a table grows one element or many at a time. Parallel arrays that
 * share one capacity take the new capacity from vec_grown() and are each
 * resized with VEC_RESIZE, the capacity stored once all of them succeeded;
 * VEC_RESIZE alone sets an array's exact size (a table of n + 1 for a
 * terminator, a copy trimmed to its count). Every failure is -ENOMEM with the
 * array untouched. tools/check_growth.py keeps realloc() out of user/ except
 * here. */
#ifndef INFERTRACE_VEC_H
#define INFERTRACE_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The capacity that holds element n, from capacity cap: cap itself when it
 * does already, else doubled (from `first` when cap is 0) until it does. 0
 * when that many elem-sized items do not fit in memory's size. */
static inline size_t vec_grown(size_t cap, size_t n, size_t elem, size_t first)
{
	size_t c = cap ? cap : first ? first : 1;

	while (c <= n) {
		if (c > SIZE_MAX / 2)
			return 0;
		c *= 2;
	}
	return c > SIZE_MAX / elem ? 0 : c;
}

/* *arr becomes an array of exactly c elem-sized items (c > 0), its first
 * items kept. 0, or -ENOMEM with the array untouched. */
static inline int vec__resize(void **arr, size_t c, size_t elem)
{
	void *p;

	if (!c || c > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* Makes room for element n of an array of elem-sized items whose capacity is
 * *cap (doubling, from `first`). 0, or -ENOMEM with the array untouched. */
static inline int vec__reserve(void **arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t c;

	if (n < *cap)
		return 0;
	c = vec_grown(*cap, n, elem, first);
	if (!c || vec__resize(arr, c, elem))
		return -ENOMEM;
	*cap = c;
	return 0;
}

/* A growing array of T as a member: { T *v; size_t n, cap; }, grown with
 * VEC_RESERVE(x.v, x.cap, x.n, first). */
#define VEC_OF(T) struct { T *v; size_t n, cap; }

/* Room for element n of arr (k more after n: element n + k - 1). */
#define VEC_RESERVE(arr, cap, n, first) vec__reserve((void **)&(arr), &(cap), (n), sizeof(*(arr)), (first))

/* arr holds exactly c elements (c > 0). */
#define VEC_RESIZE(arr, c) vec__resize((void **)&(arr), (c), sizeof(*(arr)))

/* A copy of n elem-sized items; NULL when n is 0 or on ENOMEM. */
static inline void *vec__dup(const void *v, size_t n, size_t elem)
{
	void *p = n ? malloc(n * elem) : NULL;

	if (p)
		memcpy(p, v, n * elem);
	return p;
}

/* dst (a VEC_OF, empty) becomes a copy of src: 0 or -ENOMEM. */
#define VEC_DUP(dst, src)                                                                     \
	((src).n && !((dst).v = vec__dup((src).v, (src).n, sizeof(*(src).v))) ? -ENOMEM         \
									       : ((dst).n = (dst).cap = (src).n, 0))

#endif
