// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for user/analysis/sched_logic.c: blocked-stack classes, the
 * wall-time split and timeline reduction (percentiles and slopes: test_stats). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_logic.h"

static void test_classify(void **state)
{
	const char *sleep[] = { "__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep" };
	const char *lock[] = { "__schedule", "schedule", "futex_wait_queue", "futex_wait", "do_futex" };
	const char *io[] = { "__schedule", "schedule", "io_schedule", "folio_wait_bit_common" };
	const char *other[] = { "__schedule", "schedule", "something_else" };

	(void)state;
	assert_int_equal(blocked_classify(sleep, 4), BLOCKED_SLEEP);
	assert_int_equal(blocked_classify(lock, 5), BLOCKED_LOCK);
	assert_int_equal(blocked_classify(io, 4), BLOCKED_IO);
	assert_int_equal(blocked_classify(other, 3), BLOCKED_OTHER);
	assert_int_equal(blocked_classify(NULL, 0), BLOCKED_OTHER);
}

static void test_waker_interrupt(void **state)
{
	/* a condition variable signalled by a thread, a pipe written by one */
	const char *signal[] = { "try_to_wake_up", "wake_up_q", "futex_wake", "do_futex", "__x64_sys_futex",
				 "do_syscall_64", "entry_SYSCALL_64_after_hwframe" };
	const char *pipe[] = { "try_to_wake_up", "autoremove_wake_function", "__wake_up_common", "pipe_write",
			       "vfs_write", "ksys_write", "do_syscall_64" };
	/* a sleep's timer expiring while a sibling thread ran */
	const char *timer[] = { "try_to_wake_up", "hrtimer_wakeup", "__hrtimer_run_queues", "hrtimer_interrupt",
				"__sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
				"asm_sysvec_apic_timer_interrupt" };
	const char *arm[] = { "try_to_wake_up", "hrtimer_wakeup", "gic_handle_irq", "el0_interrupt" };

	(void)state;
	assert_false(blocked_waker_is_interrupt(signal, 7));
	assert_false(blocked_waker_is_interrupt(pipe, 7));
	assert_true(blocked_waker_is_interrupt(timer, 7));
	assert_true(blocked_waker_is_interrupt(arm, 4));
	assert_false(blocked_waker_is_interrupt(NULL, 0));
	assert_string_equal(blocked_class_names[BLOCKED_THREAD], "waiting_for_thread");
}

static void test_wall_split(void **state)
{
	struct wall_split w;

	(void)state;
	wall_split(&w, 30000000, 20000000, 100000, 9800000);
	assert_in_range((int)(w.unattributed_ms * 1000), 99, 101);
	assert_true(w.unattributed_percent < 0.34 && w.unattributed_percent > 0.33);
	wall_split(&w, 10000000, 11000000, 0, 0); /* seen parts exceed the wall */
	assert_true(w.unattributed_ms < -0.99 && w.unattributed_percent > 9.99);
	wall_split(&w, 0, 0, 0, 0);
	assert_true(w.unattributed_percent == 0);
}

static void test_timeline(void **state)
{
	uint64_t t[2000];
	double v[2000];
	size_t n;

	(void)state;
	for (int i = 0; i < 2000; i++) {
		t[i] = i;
		v[i] = i == 1234 ? 999 : 1;
	}
	n = timeline_reduce(t, v, 2000, 512);
	assert_int_equal(n, 512);
	for (size_t i = 1; i < n; i++)
		assert_true(t[i] > t[i - 1]);
	int found = 0;

	for (size_t i = 0; i < n; i++)
		found |= v[i] == 999 && t[i] == 1234;
	assert_true(found); /* the peak survives */
	assert_int_equal(timeline_reduce(t, v, 10, 512), 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_waker_interrupt),
		cmocka_unit_test(test_wall_split),
		cmocka_unit_test(test_timeline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
