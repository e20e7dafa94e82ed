// SPDX-License-Identifier: BSD-2-Clause
/* Kernel symbols from /proc/kallsyms: text symbols only, sorted by address,
 * looked up by binary search. Names live in one pool so that loading the
 * ~200k symbols of a distribution kernel is a handful of allocations. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syms.h"
#include "vec.h"

struct ksym {
	uint64_t addr;
	size_t name_off;  /* into pool while loading; pool may move */
	const char *name;
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *pool;
};

void ksyms__free(struct ksyms *ksyms)
{
	if (!ksyms)
		return;
	free(ksyms->syms);
	free(ksyms->pool);
	free(ksyms);
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* same address (aliases): keep the order deterministic */
	return x->name_off < y->name_off ? -1 : x->name_off > y->name_off;
}

struct ksyms *ksyms__load_file(const char *path)
{
	size_t cap = 0, pool_len = 0, pool_cap = 0, line_cap = 0, nlen, i;
	struct ksyms *ksyms = NULL;
	char *line = NULL, *p;
	unsigned long long addr;
	bool any_addr = false;
	FILE *f = NULL;
	char type;
	int err = 0, n;

	f = fopen(path, "re");
	if (!f) {
		err = errno;
		goto cleanup;
	}
	ksyms = calloc(1, sizeof(*ksyms));
	if (!ksyms) {
		err = ENOMEM;
		goto cleanup;
	}
	/* "ffffffff821fb620 T schedule" or "... t name\t[module]" */
	while (getline(&line, &line_cap, f) > 0) {
		n = 0;
		if (sscanf(line, "%llx %c %n", &addr, &type, &n) < 2 || !n)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr)
			any_addr = true;
		p = line + n;
		nlen = strcspn(p, " \t\n");
		if (!nlen)
			continue;
		if (VEC_RESERVE(ksyms->syms, cap, ksyms->nr, 4096) ||
		    VEC_RESERVE(ksyms->pool, pool_cap, pool_len + nlen, 1 << 20)) {
			err = ENOMEM;
			goto cleanup;
		}
		/* the pool grew above before the first copy */
		memcpy(ksyms->pool + pool_len, p, nlen); // NOLINT(clang-analyzer-core.NonNullParamChecker)
		ksyms->pool[pool_len + nlen] = '\0';
		ksyms->syms[ksyms->nr++] = (struct ksym){ .addr = addr, .name_off = pool_len };
		pool_len += nlen + 1;
	}
	if (ferror(f)) {
		err = EIO;
		goto cleanup;
	}
	/* kptr_restrict (or no CAP_SYSLOG) shows every address as 0: the names
	 * are there but useless, and mapping would return nonsense. */
	if (!any_addr) {
		err = EPERM;
		goto cleanup;
	}
	if (ksyms->nr > 1) /* an address with no name leaves syms NULL */
		qsort(ksyms->syms, ksyms->nr, sizeof(*ksyms->syms), ksym_cmp);
	for (i = 0; i < ksyms->nr; i++)
		ksyms->syms[i].name = ksyms->pool + ksyms->syms[i].name_off;

cleanup:
	free(line);
	if (f)
		fclose(f);
	if (err) {
		ksyms__free(ksyms);
		errno = err;
		return NULL;
	}
	return ksyms;
}

struct ksyms *ksyms__load(void)
{
	return ksyms__load_file("/proc/kallsyms");
}

const char *ksyms__map_addr(const struct ksyms *ksyms, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;
	const struct ksym *s;

	if (!ksyms || !ksyms->nr)
		return NULL;
	/* last symbol whose address is <= addr */
	hi = ksyms->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ksyms->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &ksyms->syms[lo - 1];
	/* aliases share an address: answer the first kallsyms lists */
	while (s > ksyms->syms && s[-1].addr == s->addr)
		s--;
	if (offset)
		*offset = addr - s->addr;
	return s->name;
}
