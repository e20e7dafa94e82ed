// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: folded-stack writer (merge, sort, atomic write) and the
 * atomic file helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_helpers.h"

#include "atomic_file.h"
#include "folded.h"
#include "stacks.h"

static void test_merge_and_write(void **state)
{
	char *dir = th_tmpdir_new("folded"), path[256];
	struct folded f = {};
	char *text;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(folded__add(&f, "p;main;b", 2), 0);
	assert_int_equal(folded__add(&f, "p;main;a", 3), 0);
	assert_int_equal(folded__add(&f, "p;main;b", 5), 0);
	assert_int_equal(folded__add(&f, "p;main;a;x_[k]", 1), 0);
	assert_int_equal(f.total, 11);
	assert_int_equal(folded__write(&f, dir, "stacks.folded"), 0);
	assert_int_equal(f.n, 3);
	snprintf(path, sizeof(path), "%s/stacks.folded", dir);
	text = th_read_file(path);
	assert_non_null(text);
	/* sorted by stack, equal stacks merged, "stack count" per line */
	assert_string_equal(text, "p;main;a 3\np;main;a;x_[k] 1\np;main;b 7\n");
	free(text);
	folded__sort_by_count(&f);
	assert_string_equal(f.entries[0].stack, "p;main;b");
	assert_int_equal(f.entries[0].count, 7);
	folded__free(&f);
	folded__free(NULL);
	th_rm_tree(dir);
	free(dir);
}

static void test_read_back_and_leaves(void **state)
{
	char *dir = th_tmpdir_new("folded"), path[256];
	struct folded f = {}, in, leaves;

	(void)state;
	assert_non_null(dir);
	folded__add(&f, "p;main;a;hot", 3);
	folded__add(&f, "p;main;b;hot", 4);
	folded__add(&f, "p;main;cold", 2);
	assert_int_equal(folded__write(&f, dir, "s.folded"), 0);
	snprintf(path, sizeof(path), "%s/s.folded", dir);
	assert_int_equal(folded__read(path, &in), 0);
	assert_int_equal(in.n, 3);
	assert_int_equal(in.total, 9);
	assert_int_equal(folded__leaves(&in, &leaves), 0);
	/* leaf frames merged across callers, highest first */
	assert_int_equal(leaves.n, 2);
	assert_string_equal(leaves.entries[0].stack, "hot");
	assert_int_equal(leaves.entries[0].count, 7);
	assert_string_equal(leaves.entries[1].stack, "cold");
	folded__free(&in);
	assert_int_equal(folded__read("/nonexistent/s.folded", &in), -ENOENT);
	folded__free(&f);
	folded__free(&leaves);
	th_rm_tree(dir);
	free(dir);
}

static void test_empty_set_writes_empty_file(void **state)
{
	char *dir = th_tmpdir_new("folded"), path[256];
	struct folded f = {};
	FILE *fp;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(folded__write(&f, dir, "empty.folded"), 0);
	snprintf(path, sizeof(path), "%s/empty.folded", dir);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(fgetc(fp), EOF);
	fclose(fp);
	th_rm_tree(dir);
	free(dir);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_atomic_file_abort_leaves_nothing(void **state)
{
	char *dir = th_tmpdir_new("atomic");
	struct atomic_file *af;

	(void)state;
	assert_non_null(dir);
	af = atomic_file__open(dir, "profile.json");
	assert_non_null(af);
	fputs("{\"half\":", atomic_file__stream(af));
	assert_int_equal(count_entries(dir), 1); /* only the temp file */
	atomic_file__abort(af);
	assert_int_equal(count_entries(dir), 0);
	atomic_file__abort(NULL);
	th_rm_tree(dir);
	free(dir);
}

static void test_atomic_file_missing_dir_fails(void **state)
{
	(void)state;
	errno = 0;
	assert_null(atomic_file__open("/nonexistent-dir", "x"));
	assert_int_equal(errno, ENOENT);
}

static void test_root_symbols(void **state)
{
	(void)state;
	assert_true(stacks__is_root_symbol("main"));
	assert_true(stacks__is_root_symbol("start_thread"));
	assert_true(stacks__is_root_symbol("_start"));
	assert_false(stacks__is_root_symbol("mainloop"));
	assert_false(stacks__is_root_symbol(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_and_write),
		cmocka_unit_test(test_read_back_and_leaves),
		cmocka_unit_test(test_empty_set_writes_empty_file),
		cmocka_unit_test(test_atomic_file_abort_leaves_nothing),
		cmocka_unit_test(test_atomic_file_missing_dir_fails),
		cmocka_unit_test(test_root_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
