// SPDX-License-Identifier: BSD-2-Clause
/* The /proc parsers over buffers (user/lib/procfs.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "procfs.h"

static void test_stat_after_last_paren(void **st)
{
	unsigned long long ticks = 0;

	(void)st;
	/* a comm with ") R" inside: the fields start after the last ')' */
	const char *s = "42 (x) R 1 (y) S 1 2 3 4 5 6 7 8 9 10 11 30 12 0\n";

	assert_int_equal(procfs__stat_state(s), 'S');
	assert_int_equal(procfs__stat_ticks(s, &ticks), 0);
	assert_int_equal(ticks, 11 + 30); /* utime, stime: fields 14 and 15 */
	assert_int_equal(procfs__stat_state("42 (x"), 0);
	assert_int_equal(procfs__stat_state("42 (x)"), 0);
	assert_int_not_equal(procfs__stat_ticks("42 (x) R 1 2", &ticks), 0);
}

static void test_stat_starttime(void **st)
{
	unsigned long long t = 0;

	(void)st;
	/* fields 3..21, then starttime 12345 (field 22), then vsize */
	const char *s = "7 (a) b) S 1 7 7 0 -1 4194560 10 0 0 0 11 30 0 0 20 0 1 0 12345 1000 50\n";

	assert_int_equal(procfs__stat_starttime(s, &t), 0);
	assert_int_equal(t, 12345);
	assert_int_not_equal(procfs__stat_starttime("7 (a) S 1 7 7 0 -1 4194560 10", &t), 0);
	assert_int_not_equal(procfs__stat_starttime("7 (a", &t), 0);
}

static void test_status(void **st)
{
	uid_t uid, euid;

	(void)st;
	const char *s = "Name:\ta b\nTgid:\t42\nUid:\t1000\t0\t0\t0\nNSpid:\t42\t7\nPPid:\t3\n";

	assert_int_equal(procfs__status_tgid(s), 42);
	assert_int_equal(procfs__status_nspid(s, 42, &uid, &euid), 7);
	assert_int_equal(uid, 1000);
	assert_int_equal(euid, 0);
	/* NSpid's last field only: the next line's number is not taken */
	assert_int_equal(procfs__status_nspid("NSpid:\t42\n3\n", 42, &uid, &euid), 42);
	assert_int_equal(uid, (uid_t)-1);
	assert_int_equal(procfs__status_tgid("Name:\tTgid: 5\n"), -1);
}

/* A process's file-access credentials, and the read check made with them:
 * nobody (65534) in its own user namespace, with every capability there,
 * may not read a root-only file; root in ours may. */
static void test_creds_may_read(void **st)
{
	const char *status = "Name:\tsh\nUid:\t1000\t1000\t1000\t65534\nGid:\t100\t100\t100\t65534\n"
			     "Groups:\t27 44 \nCapEff:\t000001ffffffffff\n";
	struct procfs_creds c;

	(void)st;
	assert_int_equal(procfs__status_creds(status, &c), 0);
	assert_int_equal(c.fsuid, 65534);
	assert_int_equal(c.fsgid, 65534);
	assert_int_equal(c.ngroups, 2);
	assert_int_equal(c.groups[1], 44);
	assert_true(c.cap_eff & 6);
	c.init_userns = false; /* its capabilities are its own namespace's */
	assert_false(procfs__creds_may_read(&c, 0, 0, 0600));
	assert_false(procfs__creds_may_read(&c, 0, 0, 0640));
	assert_true(procfs__creds_may_read(&c, 0, 0, 0644));
	assert_true(procfs__creds_may_read(&c, 65534, 0, 0600));
	assert_false(procfs__creds_may_read(&c, 65534, 0, 0060)); /* the owner's bits decide for the owner */
	assert_true(procfs__creds_may_read(&c, 0, 44, 0640));    /* a supplementary group */
	c.init_userns = true;
	assert_true(procfs__creds_may_read(&c, 0, 0, 0600));
	c.cap_eff = 0;
	assert_false(procfs__creds_may_read(&c, 0, 0, 0600));
	assert_int_equal(procfs__status_creds("Name:\tx\n", &c), -EINVAL);
}

static void test_meminfo(void **st)
{
	(void)st;
	const char *s = "MemTotalX:  1 kB\nMemTotal:       16318412 kB\nMemFree: 2 kB\n";

	assert_int_equal(procfs__meminfo_kb(s, "MemTotal"), 16318412);
	assert_int_equal(procfs__meminfo_kb(s, "MemFree"), 2);
	assert_int_equal(procfs__meminfo_kb(s, "Nope"), -1);
}

static void test_stat_comm(void **st)
{
	char comm[8];

	(void)st;
	/* between the first '(' and the last ')': a name may hold both */
	assert_int_equal(procfs__stat_comm("42 (a) (b) S 1", comm, sizeof(comm)), 0);
	assert_string_equal(comm, "a) (b");
	assert_int_equal(procfs__stat_comm("42 (0123456789) S 1", comm, sizeof(comm)), 0);
	assert_string_equal(comm, "0123456");
	assert_int_equal(procfs__stat_comm("42 () S", comm, sizeof(comm)), 0);
	assert_string_equal(comm, "");
	assert_int_equal(procfs__stat_comm("42 )x( S", comm, sizeof(comm)), -EINVAL);
	assert_int_equal(procfs__stat_comm("42 (x S", comm, sizeof(comm)), -EINVAL);
}

static void test_cpu_ticks(void **st)
{
	unsigned long long busy = 0, total = 0;

	(void)st;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	assert_int_equal(procfs__cpu_ticks("cpu  100 2 30 500 7 1 2 3 40 0\ncpu0 1 1 1 1\n", &busy, &total), 0);
	assert_int_equal(total, 100 + 2 + 30 + 500 + 7 + 1 + 2 + 3);
	assert_int_equal(busy, 100 + 2 + 30 + 1 + 2 + 3);
	/* a kernel older than 2.6: four fields */
	assert_int_equal(procfs__cpu_ticks("cpu 1 2 3 4\n", &busy, &total), 0);
	assert_int_equal(total, 10);
	assert_int_equal(busy, 6);
	assert_int_equal(procfs__cpu_ticks("cpu0 1 2 3 4\n", &busy, &total), -EINVAL);
	assert_int_equal(procfs__cpu_ticks("intr 1 2\n", &busy, &total), -EINVAL);
}

static void test_maps_line(void **st)
{
	struct procfs_map m;

	(void)st;
	assert_int_equal(procfs__maps_line("7f00-7f10 r-xp 00001000 08:01 1234   /usr/lib/a b.so (deleted)\n", &m), 0);
	assert_true(m.start == 0x7f00 && m.end == 0x7f10 && m.offset == 0x1000 && m.ino == 1234);
	assert_int_equal(m.maj, 8);
	assert_string_equal(m.perm, "r-xp");
	assert_int_equal(m.path_len, strlen("/usr/lib/a b.so (deleted)"));
	assert_memory_equal(m.path, "/usr/lib/a b.so (deleted)", m.path_len);
	assert_int_equal(procfs__maps_line("7f00-7f10 rwxp 0 00:00 0 \n", &m), 0);
	assert_int_equal(m.path_len, 0);
	/* a permission field too short to have an x column */
	assert_int_not_equal(procfs__maps_line("7f00-7f10 r 0 00:00 0\n", &m), 0);
	assert_int_not_equal(procfs__maps_line("garbage\n", &m), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_after_last_paren),
		cmocka_unit_test(test_stat_starttime),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_creds_may_read),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_stat_comm),
		cmocka_unit_test(test_cpu_ticks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
