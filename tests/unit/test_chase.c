// SPDX-License-Identifier: BSD-2-Clause
/* Resolving a directory one component at a time (user/lib/chase.c), in a
 * scratch directory: which links are followed, what is created, and how. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "chase.h"

static char root[64];

static const char *at(const char *rel)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
	return buf[i];
}

static int setup(void **st)
{
	(void)st;
	snprintf(root, sizeof(root), "/tmp/test_chase.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **st)
{
	char cmd[128];

	(void)st;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static const struct chase_opts self = { .trusted = { (uid_t)-1, (uid_t)-1 } };

static void same_dir(int fd, const char *path)
{
	struct stat a, b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	close(fd);
}

static void test_plain_and_dots(void **st)
{
	(void)st;
	assert_int_equal(mkdir(at("a"), 0700), 0);
	assert_int_equal(mkdir(at("a/b"), 0700), 0);
	same_dir(chase_dir(at("a//b/"), &self, NULL, 0), at("a/b"));
	same_dir(chase_dir(at("a/./b/.."), &self, NULL, 0), at("a"));
	assert_int_equal(chase_dir(at("a/missing"), &self, NULL, 0), -ENOENT);
	assert_int_equal(chase_dir("", &self, NULL, 0), -EINVAL);
}

static void test_links(void **st)
{
	struct chase_opts o = { .trusted = { geteuid(), (uid_t)-1 } };
	char why[200] = "";
	FILE *f;

	(void)st;
	assert_int_equal(mkdir(at("real"), 0700), 0);
	assert_int_equal(mkdir(at("real/out"), 0700), 0);
	assert_int_equal(symlink(at("real"), at("abs")), 0);
	assert_int_equal(symlink("real", at("rel")), 0);
	assert_int_equal(symlink("loop", at("loop")), 0);
	f = fopen(at("file"), "w");
	assert_non_null(f);
	fclose(f);
	/* the owner's (or root's) link in the middle: followed */
	same_dir(chase_dir(at("abs/out"), &o, NULL, 0), at("real/out"));
	same_dir(chase_dir(at("rel/out"), &o, NULL, 0), at("real/out"));
	/* never the last component */
	assert_int_equal(chase_dir(at("abs"), &o, NULL, 0), -ELOOP);
	assert_int_equal(chase_dir(at("loop/x"), &o, NULL, 0), -ELOOP);
	assert_int_equal(chase_dir(at("file/x"), &o, NULL, 0), -ENOTDIR);
	assert_int_equal(chase_dir(at("file"), &o, NULL, 0), -ENOTDIR);
	/* a link whose owner is not trusted: refused, named */
	if (geteuid() != 0) {
		assert_int_equal(chase_dir(at("abs/out"), &self, why, sizeof(why)), -EPERM);
		assert_non_null(strstr(why, "'abs' in its path is a symbolic link owned by uid"));
	} else {
		assert_int_equal(lchown(at("abs"), 54321, 54321), 0);
		assert_int_equal(chase_dir(at("abs/out"), &o, why, sizeof(why)), -EPERM);
		assert_non_null(strstr(why, "'abs' in its path is a symbolic link owned by uid 54321"));
	}
}

static int created;

static void count_created(int fd)
{
	(void)fd;
	created++;
}

static void test_create(void **st)
{
	struct chase_opts o = { .trusted = { geteuid(), (uid_t)-1 }, .mkdir_mode = 0700, .created = count_created };
	mode_t old = umask(0);
	struct stat s;

	(void)st;
	same_dir(chase_dir(at("n1/n2/n3"), &o, NULL, 0), at("n1/n2/n3"));
	umask(old);
	assert_int_equal(created, 3);
	assert_int_equal(stat(at("n1/n2"), &s), 0);
	assert_int_equal(s.st_mode & 07777, 0700);
	/* existing directories are taken as they are */
	same_dir(chase_dir(at("n1/n2/n3"), &o, NULL, 0), at("n1/n2/n3"));
	assert_int_equal(created, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_dots),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_create),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
