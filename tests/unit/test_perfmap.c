// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for user/symbols/perfmap.c. Ground truth by construction: each
 * test writes the map lines itself, reads them at chosen times and checks
 * which entry each (address, time) resolves to. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "perfmap.h"

static char dir[] = "/tmp/it-perfmap-XXXXXX";
static char path[128];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static void append(const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static struct perfmap *open_map(void)
{
	struct perfmap *pm = perfmap__open(AT_FDCWD, path, getuid(), geteuid(), NULL);

	assert_non_null(pm);
	return pm;
}

static const char *name_at(struct perfmap *pm, uint64_t addr, uint64_t t)
{
	const struct perfmap_entry *e = perfmap__lookup(pm, addr, t, NULL);

	return e ? e->name : NULL;
}

/* Two pieces of code at the same address, seen at 100 and 200; a third one
 * overlapping the second's tail, seen at 300. */
static void test_reused_ranges_by_time(void **state)
{
	struct perfmap *pm;

	(void)state;
	unlink(path);
	append("1000 100 JS:*first /a/x.js:1:1\n");
	pm = open_map();
	assert_int_equal(perfmap__read(pm, 100), 1);
	append("1000 80 JS:*second /a/x.js:5:1\n");
	assert_int_equal(perfmap__read(pm, 200), 1);
	append("1040 100 JS:*third /a/x.js:9:1\n");
	assert_int_equal(perfmap__read(pm, 300), 1);
	assert_int_equal(perfmap__read(pm, 400), 0);

	/* at 150 only `first` was seen */
	assert_string_equal(name_at(pm, 0x1010, 150), "JS:*first /a/x.js:1:1");
	/* at 250 `second` is the newest covering 0x1010 */
	assert_string_equal(name_at(pm, 0x1010, 250), "JS:*second /a/x.js:5:1");
	/* 0x1090 lies beyond `second` (size 0x80): `first` still covers it */
	assert_string_equal(name_at(pm, 0x1090, 250), "JS:*first /a/x.js:1:1");
	/* at 350 `third` covers 0x1090 and is the newest */
	assert_string_equal(name_at(pm, 0x1090, 350), "JS:*third /a/x.js:9:1");
	assert_string_equal(name_at(pm, 0x1010, 350), "JS:*second /a/x.js:5:1");
	/* before anything was seen: the oldest seen after (written before the read) */
	assert_string_equal(name_at(pm, 0x1010, 50), "JS:*first /a/x.js:1:1");
	/* newest */
	assert_string_equal(name_at(pm, 0x1090, PERFMAP_TIME_NEWEST), "JS:*third /a/x.js:9:1");
	/* outside every entry */
	assert_null(name_at(pm, 0xfff, 350));
	assert_null(name_at(pm, 0x1140, 350));
	assert_null(name_at(pm, 0x2000, 350));
	perfmap__free(pm);
}

/* A line is consumed only once complete; the tail of an unfinished line waits. */
static void test_partial_line(void **state)
{
	struct perfmap *pm;

	(void)state;
	unlink(path);
	append("2000 10 a\n2010 1");
	pm = open_map();
	assert_int_equal(perfmap__read(pm, 1), 1);
	append("0 b\n");
	assert_int_equal(perfmap__read(pm, 2), 1);
	assert_string_equal(name_at(pm, 0x201f, 5), "b");
	assert_null(name_at(pm, 0x2020, 5));
	perfmap__free(pm);
}

static void test_garbage_and_huge_lines(void **state)
{
	const struct perfmap_stats *st;
	struct perfmap *pm;
	char *huge;
	size_t n = 3 * 65536 + 17; /* spans several read chunks */

	(void)state;
	unlink(path);
	append("garbage\n\n1000\n1000 10\n1000 10 \nzz 10 x\n1000 0 zero\n"
	       "1000 ffffffffffffffff overflow\n12345678901234567 10 toolong\n"
	       "0x3000 0x20 ok_hex\n");
	huge = malloc(n + 2);
	assert_non_null(huge);
	memcpy(huge, "4000 10 ", 8);
	memset(huge + 8, 'x', n - 8);
	huge[n] = '\n';
	huge[n + 1] = '\0';
	append(huge);
	free(huge);
	append("5000 10 after_huge\n");
	pm = open_map();
	assert_int_equal(perfmap__read(pm, 1), 2);
	st = perfmap__stats(pm);
	assert_int_equal(st->entries, 2);
	assert_int_equal(st->garbage, 8); /* the empty line is no garbage */
	assert_int_equal(st->huge, 1);
	assert_string_equal(name_at(pm, 0x3010, 1), "ok_hex");
	assert_null(name_at(pm, 0x4000, 1));
	assert_string_equal(name_at(pm, 0x5000, 1), "after_huge");
	perfmap__free(pm);
}

/* A huge line still being written (no newline yet) is skipped up to the
 * newline that eventually ends it. */
static void test_huge_unterminated(void **state)
{
	struct perfmap *pm;
	char buf[PERFMAP_MAX_LINE + 100];

	(void)state;
	unlink(path);
	memset(buf, 'y', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	append(buf);
	pm = open_map();
	assert_int_equal(perfmap__read(pm, 1), 0);
	append("yyy\n6000 10 next\n");
	assert_int_equal(perfmap__read(pm, 2), 1);
	assert_int_equal(perfmap__stats(pm)->huge, 1);
	assert_string_equal(name_at(pm, 0x6000, 2), "next");
	perfmap__free(pm);
}

/* A FIFO in place of the map: refused at once, without blocking. */
static void test_fifo(void **state)
{
	struct timespec a, b;
	struct perfmap *pm;

	(void)state;
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pm = perfmap__open(AT_FDCWD, path, getuid(), geteuid(), NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_null(pm);
	assert_int_equal(errno, EINVAL);
	assert_true(b.tv_sec - a.tv_sec < 2);
	unlink(path);
}

static void test_symlink_and_owner(void **state)
{
	char target[160];

	(void)state;
	unlink(path);
	snprintf(target, sizeof(target), "%s/real", dir);
	close(open(target, O_WRONLY | O_CREAT, 0600));
	assert_int_equal(symlink(target, path), 0);
	assert_null(perfmap__open(AT_FDCWD, path, getuid(), geteuid(), NULL));
	assert_int_equal(errno, ELOOP);
	unlink(path);
	/* a file owned by someone other than the process (and not root) */
	if (getuid() == 0) {
		append("1 1 x\n");
		assert_int_equal(chown(path, 12345, 12345), 0);
		assert_null(perfmap__open(AT_FDCWD, path, 1000, 1000, NULL));
		assert_int_equal(errno, EPERM);
		struct perfmap *pm = perfmap__open(AT_FDCWD, path, 12345, 12345, NULL);

		assert_non_null(pm);
		perfmap__free(pm);
	}
	unlink(path);
	unlink(target);
	assert_null(perfmap__open(AT_FDCWD, path, getuid(), geteuid(), NULL));
	assert_int_equal(errno, ENOENT);
}

static void check_pretty(const char *in, const char *want)
{
	char buf[256];

	perfmap__pretty(in, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_pretty(void **state)
{
	(void)state;
	check_pretty("JS:*hotInner /path/loop.js:1:18", "hotInner (loop.js:1)");
	check_pretty("LazyCompile:~outer /a/b/c.mjs:12:3", "outer (c.mjs:12)");
	check_pretty("JS:^f file:///x/y.js:3:1", "f (y.js:3)");
	check_pretty("JS:+g node:internal/timers:512:20", "g (timers:512)");
	check_pretty("JS:~ /x/anon.js:4:9", "(anonymous) (anon.js:4)");
	check_pretty("JS:*noloc", "noloc");
	check_pretty("Builtin:ArrayPrototypePush", "Builtin:ArrayPrototypePush");
	check_pretty("py::run_cycle:/srv/exp/loop.py", "run_cycle (loop.py)");
	check_pretty("weird;name\tx", "weird:name x");
}

static void test_tokens(void **state)
{
	(void)state;
	for (uint32_t id = 0; id < 5; id++) {
		uint64_t t = perfmap__token(id);

		assert_true(perfmap__is_token(t));
		assert_true(perfmap__is_token(t - 1));
		assert_int_equal(perfmap__token_id(t), id);
		assert_int_equal(perfmap__token_id(t - 1), id);
	}
	assert_false(perfmap__is_token(0x7fffffffffffull));
	assert_false(perfmap__is_token(0xffffffff81000000ull));
}

static void test_stack_shows(void **state)
{
	const char *frames[] = { "main", "outer (loop.js:3)", "hotInner (loop.js:1)", "Builtin:X" };

	(void)state;
	assert_true(perfmap__stack_shows(frames, 4, "hotInner"));
	assert_true(perfmap__stack_shows(frames, 4, "outer"));
	assert_true(perfmap__stack_shows(frames, 4, "Builtin:X"));
	assert_false(perfmap__stack_shows(frames, 4, "hot"));
	assert_false(perfmap__stack_shows(frames, 4, "loop.js"));
	assert_false(perfmap__stack_shows(frames, 2, "hotInner"));
}

static void test_set_env(void **state)
{
	(void)state;
	unsetenv("NODE_OPTIONS");
	unsetenv("PYTHONPERFSUPPORT");
	assert_int_equal(perfmap__set_env(), 0);
	assert_string_equal(getenv("NODE_OPTIONS"), PERFMAP_NODE_SWITCHES);
	/* Python frames are read natively: its perf trampolines stay off */
	assert_null(getenv("PYTHONPERFSUPPORT"));
	setenv("NODE_OPTIONS", "--max-old-space-size=100", 1);
	assert_int_equal(perfmap__set_env(), 0);
	assert_string_equal(getenv("NODE_OPTIONS"), "--max-old-space-size=100 " PERFMAP_NODE_SWITCHES);
	/* twice: not appended again */
	assert_int_equal(perfmap__set_env(), 0);
	assert_string_equal(getenv("NODE_OPTIONS"), "--max-old-space-size=100 " PERFMAP_NODE_SWITCHES);
}

/* The set reads our own map through /proc/self's root under our NSpid. */
static void test_set_own_process(void **state)
{
	struct perfmaps *set = perfmaps__new();
	char own[64];
	int fd;

	(void)state;
	snprintf(own, sizeof(own), "/tmp/perf-%d.map", (int)getpid());
	unlink(own);
	assert_int_equal(perfmaps__refresh(set, getpid()), 0); /* missing: quiet, retried */
	assert_false(perfmaps__has(set, getpid()));
	fd = open(own, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "7000 40 JS:*f /t.js:2:1\n", 24), 24);
	assert_int_equal(perfmaps__refresh(set, getpid()), 1);
	assert_true(perfmaps__has(set, getpid()));
	assert_non_null(perfmaps__lookup(set, getpid(), 0x7010, PERFMAP_TIME_NEWEST, NULL));
	perfmaps__forget(set, getpid());
	assert_false(perfmaps__has(set, getpid()));
	close(fd);
	unlink(own);
	perfmaps__free(set);
}

static void write_file(const char *file, const char *text, int flags)
{
	int fd = open(file, O_WRONLY | O_CREAT | flags, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A file truncated and written anew (V8 opens its map "w+"): shorter than
 * what was read, or as long with other first bytes. The old entries cover
 * nothing from then on; their ids still name them. */
static void test_rewritten_from_the_start(void **state)
{
	const struct perfmap_entry *e;
	struct perfmap *pm;
	uint32_t id;

	(void)state;
	unlink(path);
	append("5000 100 stale_one\n5100 100 stale_two\n5200 100 stale_three\n");
	pm = open_map();
	assert_int_equal(perfmap__read(pm, 10), 3);
	assert_string_equal(name_at(pm, 0x5010, 20), "stale_one");
	/* truncated, then one line: shorter than the 3 lines read */
	write_file(path, "5000 10 fresh_a\n", O_TRUNC);
	assert_int_equal(perfmap__read(pm, 30), 1);
	assert_int_equal(perfmap__stats(pm)->rewrites, 1);
	assert_string_equal(name_at(pm, 0x5005, 40), "fresh_a");
	/* the stale entries no longer cover their ranges, at any time */
	assert_null(name_at(pm, 0x5010, 40));
	assert_null(name_at(pm, 0x5110, 15));
	assert_null(name_at(pm, 0x5210, PERFMAP_TIME_NEWEST));
	e = perfmap__lookup(pm, 0x5005, 40, &id);
	assert_non_null(e);
	assert_int_equal(id, 3); /* ids go on after the retired ones */
	assert_string_equal(perfmap__entry(pm, 0)->name, "stale_one");
	/* rewritten again, longer than before: the first bytes differ */
	write_file(path, "6000 10 other_b\n6100 10 other_c\n", O_TRUNC);
	assert_int_equal(perfmap__read(pm, 50), 2);
	assert_int_equal(perfmap__stats(pm)->rewrites, 2);
	assert_null(name_at(pm, 0x5005, 60));
	assert_string_equal(name_at(pm, 0x6105, 60), "other_c");
	/* appended to: no rewrite */
	append("6200 10 other_d\n");
	assert_int_equal(perfmap__read(pm, 70), 1);
	assert_int_equal(perfmap__stats(pm)->rewrites, 2);
	assert_string_equal(name_at(pm, 0x6005, 80), "other_b");
	perfmap__free(pm);
}

static void set_mtime_ago(const char *file, time_t seconds)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= seconds;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, file, ts, 0), 0);
}

/* An earlier process's map at file, dated an hour back: set aside. */
static void plant_stale(struct perfmaps *set, const char *file, const char *text)
{
	write_file(file, text, O_TRUNC);
	set_mtime_ago(file, 3600);
	assert_int_equal(perfmaps__refresh(set, getpid()), 0);
	assert_false(perfmaps__has(set, getpid()));
}

/* A map left by an earlier process under our PID (written before we
 * started): not read; once written by "us", appended lines are read after
 * the stale ones, a rewritten file from its start. */
static void test_stale_map_of_a_recycled_pid(void **state)
{
	struct perfmaps *set = perfmaps__new();
	pid_t me = getpid();
	char own[64];

	(void)state;
	snprintf(own, sizeof(own), "/tmp/perf-%d.map", (int)me);
	unlink(own);
	plant_stale(set, own, "8000 40 stale_x\n8100 40 stale_y\n");
	assert_int_equal(perfmaps__refresh(set, me), 0); /* unchanged: still aside */
	assert_false(perfmaps__has(set, me));
	/* appended to (CPython opens it O_APPEND): only the new line */
	write_file(own, "8000 40 ours_x\n", O_APPEND);
	assert_int_equal(perfmaps__refresh(set, me), 1);
	assert_string_equal(perfmaps__lookup(set, me, 0x8010, PERFMAP_TIME_NEWEST, NULL)->name, "ours_x");
	assert_null(perfmaps__lookup(set, me, 0x8110, PERFMAP_TIME_NEWEST, NULL));
	perfmaps__forget(set, me);

	/* stale again, then truncated and written anew (V8's "w+") */
	plant_stale(set, own, "8000 40 stale_x\n8100 40 stale_y\n");
	write_file(own, "9000 40 ours_z\n", O_TRUNC);
	assert_int_equal(perfmaps__refresh(set, me), 1);
	assert_string_equal(perfmaps__lookup(set, me, 0x9010, PERFMAP_TIME_NEWEST, NULL)->name, "ours_z");
	assert_null(perfmaps__lookup(set, me, 0x8010, PERFMAP_TIME_NEWEST, NULL));
	perfmaps__forget(set, me);

	/* stale, then removed and made anew (another inode): read whole */
	plant_stale(set, own, "8000 40 stale_x\n");
	unlink(own);
	write_file(own, "8000 40 new_file_x\n8100 40 new_file_y\n", O_TRUNC);
	assert_int_equal(perfmaps__refresh(set, me), 2);
	perfmaps__forget(set, me);

	/* written after we started: ours */
	write_file(own, "8000 40 recent\n", O_TRUNC);
	assert_int_equal(perfmaps__refresh(set, me), 1);
	perfmaps__forget(set, me);
	unlink(own);
	perfmaps__free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reused_ranges_by_time),
		cmocka_unit_test(test_partial_line),
		cmocka_unit_test(test_garbage_and_huge_lines),
		cmocka_unit_test(test_huge_unterminated),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_symlink_and_owner),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_stack_shows),
		cmocka_unit_test(test_set_env),
		cmocka_unit_test(test_set_own_process),
		cmocka_unit_test(test_rewritten_from_the_start),
		cmocka_unit_test(test_stale_map_of_a_recycled_pid),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
