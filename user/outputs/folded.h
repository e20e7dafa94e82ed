// SPDX-License-Identifier: BSD-2-Clause
/* Folded stacks ("frame;frame;frame count" per line, root first), the input
 * format of FlameGraph's flamegraph.pl and speedscope. */
#ifndef INFERTRACE_FOLDED_H
#define INFERTRACE_FOLDED_H

#include <stddef.h>
#include <stdint.h>

struct folded_entry {
	char *stack;
	uint64_t count;
};

struct folded {
	struct folded_entry *entries;
	size_t n, cap;
	uint64_t total;
};

/* Adds count to stack (copied). 0 or -ENOMEM. */
int folded__add(struct folded *f, const char *stack, uint64_t count);
/* Sorts by stack and merges equal stacks (idempotent). */
void folded__merge(struct folded *f);
/* Writes DIR/NAME atomically, merged and sorted. 0 or -errno. */
int folded__write(struct folded *f, const char *dir, const char *name);
/* Sorts a merged set by count, highest first (for "top stacks"). */
void folded__sort_by_count(struct folded *f);
/* Reads a folded-stacks file ("frame;frame count" lines), merged. 0 or -errno. */
int folded__read(const char *path, struct folded *out);
/* The leaf frame of every stack of in, merged, highest count first: the
 * "top functions". 0 or -ENOMEM. */
int folded__leaves(const struct folded *in, struct folded *out);
void folded__free(struct folded *f);

#endif
