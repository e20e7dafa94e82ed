// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "folded.h"
#include "vec.h"

int folded__add(struct folded *f, const char *stack, uint64_t count)
{
	if (VEC_RESERVE(f->entries, f->cap, f->n, 64))
		return -ENOMEM;
	f->entries[f->n].stack = strdup(stack);
	if (!f->entries[f->n].stack)
		return -ENOMEM;
	f->entries[f->n].count = count;
	f->n++;
	f->total += count;
	return 0;
}

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct folded_entry *)a)->stack, ((const struct folded_entry *)b)->stack);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct folded_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

void folded__merge(struct folded *f)
{
	size_t w = 0;

	if (!f->n)
		return;
	qsort(f->entries, f->n, sizeof(*f->entries), by_stack);
	for (size_t r = 1; r < f->n; r++) {
		if (!strcmp(f->entries[w].stack, f->entries[r].stack)) {
			f->entries[w].count += f->entries[r].count;
			free(f->entries[r].stack);
		} else {
			f->entries[++w] = f->entries[r];
		}
	}
	f->n = w + 1;
}

void folded__sort_by_count(struct folded *f)
{
	if (!f->n)
		return;
	qsort(f->entries, f->n, sizeof(*f->entries), by_count_desc);
}

int folded__write(struct folded *f, const char *dir, const char *name)
{
	struct atomic_file *af;
	FILE *out;

	folded__merge(f);
	af = atomic_file__open(dir, name);
	if (!af)
		return -errno;
	out = atomic_file__stream(af);
	for (size_t i = 0; i < f->n; i++)
		fprintf(out, "%s %" PRIu64 "\n", f->entries[i].stack, f->entries[i].count);
	return atomic_file__commit(af);
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->entries[i].stack);
	free(f->entries);
	memset(f, 0, sizeof(*f));
}

int folded__read(const char *path, struct folded *out)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f = fopen(path, "re");

	memset(out, 0, sizeof(*out));
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0 && !err) {
		char *sp;

		line[strcspn(line, "\n")] = 0;
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		err = folded__add(out, line, strtoull(sp + 1, NULL, 10));
	}
	free(line);
	fclose(f);
	if (!err)
		folded__merge(out);
	return err;
}

int folded__leaves(const struct folded *in, struct folded *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < in->n && !err; i++) {
		const char *semi = strrchr(in->entries[i].stack, ';');

		err = folded__add(out, semi ? semi + 1 : in->entries[i].stack, in->entries[i].count);
	}
	folded__merge(out);
	folded__sort_by_count(out);
	return err;
}
