// SPDX-License-Identifier: BSD-2-Clause
/* CPython offsets and the split of a recorded stack into eval-loop calls. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "python.h"

static void test_table(void **state)
{
	struct it_py_proc o;

	(void)state;
	assert_int_equal(python__table_offsets(0x030a0df0, &o), 0);
	assert_true(o.flags & IT_PY_FRAME_OBJECT);
	assert_true(o.flags & IT_PY_TID_PTHREAD);
	assert_int_equal(python__table_offsets(0x030b07f0, &o), 0);
	assert_true(o.flags & IT_PY_IS_ENTRY);
	assert_int_equal(o.ts_tid, 160);
	assert_int_equal(python__table_offsets(0x030c01f0, &o), 0);
	assert_true(o.flags & IT_PY_OWNER);
	assert_int_equal(python__table_offsets(0x030900f0, &o), -ENOTSUP);
	assert_int_equal(python__table_offsets(0x030d00f0, &o), -ENOTSUP); /* 3.13: from the target */
}

static void put(unsigned char *d, size_t off, uint64_t v)
{
	memcpy(d + off, &v, sizeof(v));
}

static void test_debug_offsets(void **state)
{
	unsigned char d[584] = {};
	struct it_py_proc o;

	(void)state;
	assert_int_equal(python__debug_offsets(d, sizeof(d), &o), -EINVAL);
	memcpy(d, "xdebugpy", 8);
	put(d, 8, 0x030d00f0);
	put(d, 40, 632);   /* interpreters_head */
	put(d, 72, 7344);  /* threads_head */
	put(d, 200, 160);  /* native_thread_id */
	put(d, 240, 0);    /* executable */
	put(d, 264, 70);   /* owner */
	put(d, 296, 128);  /* qualname */
	put(d, 560, 40);   /* asciiobject_size */
	put(d, 256, 72);   /* localsplus */
	put(d, 320, 52);   /* argcount */
	put(d, 328, 96);   /* localsplusnames */
	assert_int_equal(python__debug_offsets(d, sizeof(d), &o), 0);
	assert_int_equal(o.fr_localsplus, 72);
	assert_int_equal(o.co_argcount, 52);
	assert_int_equal(o.co_nlocals, 96);
	assert_int_equal(o.rt_interp_head, 632);
	assert_int_equal(o.interp_threads, 7344);
	assert_int_equal(o.ts_tid, 160);
	assert_int_equal(o.fr_entry, 70);
	assert_int_equal(o.co_name, 128);
	assert_int_equal(o.str_compact_data, 56);
	assert_int_equal(o.flags, IT_PY_OWNER | IT_PY_NLOCALS_TUPLE);
	assert_int_equal(python__debug_offsets(d, 100, &o), -EINVAL);
	put(d, 8, 0x030e00f0); /* 3.14 changed the struct's own layout */
	assert_int_equal(python__debug_offsets(d, sizeof(d), &o), -ENOTSUP);
}

static void test_segments(void **state)
{
	static struct it_py_stack s;
	int st[8], en[8];

	(void)state;
	/* leaf first: spin, f | g (entry) | <module> (entry) */
	s.depth = 4;
	s.frames[1].flags = IT_PY_FRAME_ENTRY;
	s.frames[2].flags = IT_PY_FRAME_ENTRY;
	s.frames[3].flags = IT_PY_FRAME_ENTRY;
	assert_int_equal(python__segments(&s, st, en, 8), 3);
	assert_int_equal(st[0], 0);
	assert_int_equal(en[0], 2);
	assert_int_equal(st[1], 2);
	assert_int_equal(en[1], 3);
	assert_int_equal(st[2], 3);
	assert_int_equal(en[2], 4);
	/* no entry flag at the root: the last frame still closes the call */
	s.frames[3].flags = 0;
	assert_int_equal(python__segments(&s, st, en, 8), 3);
	assert_int_equal(en[2], 4);
	assert_int_equal(python__segments(&s, st, en, 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_debug_offsets),
		cmocka_unit_test(test_segments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
