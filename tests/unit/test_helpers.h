// SPDX-License-Identifier: BSD-2-Clause
/* Helpers shared by the unit tests (header-only): temp directories, whole
 * files written and read back, and JSON look-ups. Include after <cmocka.h>. */
#ifndef INFERTRACE_TEST_HELPERS_H
#define INFERTRACE_TEST_HELPERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

/* a within eps of b (this cmocka has no assert_double_equal) */
#define assert_near(a, b, eps)                                                                      \
	do {                                                                                        \
		double a_ = (a), b_ = (b);                                                          \
		if (!(fabs(a_ - b_) <= (eps)))                                                      \
			fail_msg("%s = %g, want %g", #a, a_, b_);                                   \
	} while (0)

/* A new directory /tmp/infertrace-NAME-XXXXXX; free() it after th_rm_tree().
 * The test fails if it cannot be made. */
static inline __attribute__((returns_nonnull)) char *th_tmpdir_new(const char *name)
{
	char tmpl[256], *dir;

	snprintf(tmpl, sizeof(tmpl), "/tmp/infertrace-%s-XXXXXX", name);
	dir = mkdtemp(tmpl) ? strdup(tmpl) : NULL;
	if (!dir) {
		fail_msg("cannot make a temp directory %s: %s", tmpl, strerror(errno));
		abort(); /* not reached: fail_msg leaves the test */
	}
	return dir;
}

static inline int th_rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

/* Removes root and everything under it (no-op for NULL). */
static inline void th_rm_tree(const char *root)
{
	if (root)
		nftw(root, th_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* path := text (the test fails if it cannot be written). */
static inline void th_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The whole file as a NUL-terminated string to free(), or NULL when it
 * cannot be opened. */
static inline char *th_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	{
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;

		assert_non_null(m);
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		fclose(m);
	}
	fclose(f);
	return buf;
}

/* j[k1][k2]...; NULL-terminated keys; NULL where a key is missing. */
static inline json_t *th_jget(json_t *j, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, j);
	while (j && (k = va_arg(ap, const char *)))
		j = json_object_get(j, k);
	va_end(ap);
	return j;
}

/* A JSON number's value; the test fails when j is not a number. */
static inline double th_jnum(json_t *j)
{
	if (!json_is_number(j))
		fail_msg("not a number");
	return json_number_value(j);
}

#endif
