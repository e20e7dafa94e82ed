// SPDX-License-Identifier: BSD-2-Clause
/* Growing arrays, the one way every concern grows its tables. */
#ifndef INFERTRACE_VEC_H
#define INFERTRACE_VEC_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for element n of an array of elem-sized items whose capacity is
 * *cap (doubling, from `first`). 0, or -ENOMEM with the array untouched. */
static inline int vec__reserve(void **arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* A growing array of T as a member: { T *v; size_t n, cap; }, grown with
 * VEC_RESERVE(x.v, x.cap, x.n, first). */
#define VEC_OF(T) struct { T *v; size_t n, cap; }

#define VEC_RESERVE(arr, cap, n, first) vec__reserve((void **)&(arr), &(cap), (n), sizeof(*(arr)), (first))

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
