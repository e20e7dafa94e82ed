// SPDX-License-Identifier: BSD-2-Clause
/* Which names in an output directory a run owns (user/core/outdir.c), and the
 * safety checks on the directory itself (user/lib/atomic_file.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "atomic_file.h"
#include "outdir.h"

static void test_ours(void **st)
{
	(void)st;
	assert_true(output_dir__is_ours("profile.json"));
	assert_true(output_dir__is_ours("stacks.folded"));
	assert_true(output_dir__is_ours("profile.pb.gz"));
	assert_true(output_dir__is_ours(".profile.pb.gz.tmp.1a2b"));
	assert_true(output_dir__is_ours("stacks.decode.folded"));
	assert_true(output_dir__is_ours("offcpu.prefill.folded"));
	assert_true(output_dir__is_ours(".profile.json.tmp.0123abcd"));
	assert_true(output_dir__is_ours(".write-check.tmp.99"));
	assert_false(output_dir__is_ours("stacks.txt"));
	assert_false(output_dir__is_ours("notes.folded"));
	assert_false(output_dir__is_ours("profile.json.bak"));
	assert_false(output_dir__is_ours(".bashrc"));
	assert_false(output_dir__is_ours(".notes.tmp.1"));
	assert_false(output_dir__is_ours(".tmp."));
}

static void test_dir_checks(void **st)
{
	char tmpl[] = "/tmp/it-unit-XXXXXX", why[128];
	int fd;

	(void)st;
	assert_non_null(mkdtemp(tmpl));
	chmod(tmpl, 0777);
	assert_int_equal(atomic_dir__open(tmpl, why, sizeof(why)), -EPERM);
	chmod(tmpl, 01777);
	fd = atomic_dir__open(tmpl, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	chmod(tmpl, 0775);
	assert_int_equal(atomic_dir__open(tmpl, why, sizeof(why)), -EPERM);
	chmod(tmpl, 0755);
	fd = atomic_dir__open(tmpl, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(atomic_dir__open("", why, sizeof(why)), -EINVAL);
	/* a name with a slash would escape the directory */
	assert_null(atomic_file__open(tmpl, "../x"));
	assert_int_equal(errno, EINVAL);
	rmdir(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ours),
		cmocka_unit_test(test_dir_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
