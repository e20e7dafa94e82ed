// SPDX-License-Identifier: BSD-2-Clause
/* CPython offsets and the split of a recorded stack into eval-loop calls. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>

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

/* A stack of depth frames whose codes start at base. */
static void make_stack(struct it_py_stack *s, __u32 depth, __u64 base)
{
	memset(s, 0xa5, sizeof(*s)); /* what lies past the depth is no frame */
	s->tgid = 42;
	s->depth = depth;
	s->truncated = 0;
	s->incomplete = depth == 2;
	for (__u32 i = 0; i < depth; i++)
		s->frames[i] = (struct it_py_frame){ .code = base + i, .ident = (__u32)(base + 7 * i),
						     .flags = i == depth - 1 ? IT_PY_FRAME_ENTRY : 0 };
}

static int stacks_map(__u32 entries)
{
	return bpf_map_create(BPF_MAP_TYPE_HASH, "it_test_pystk", sizeof(__u64), sizeof(struct it_py_stack),
			      entries, NULL);
}

/* python__stack reads each key's stack from the map once and gives the
 * same stack as the map every time after (truth: the map's own value),
 * frames past the depth zeroed; a missing key is read again (BPF may
 * insert it later); beyond the cache's bound stacks are read each time; a
 * new map drops what the old one gave. */
static void test_stack_cache(void **state)
{
	static struct it_py_stack want, got;
	const int n = 5000; /* past the cache's 4096 */
	int fd = stacks_map((__u32)n + 8), fd2;
	uint64_t r0;

	(void)state;
	if (fd < 0)
		skip(); /* no BPF here (not root) */
	python__reset();
	python__set_stacks_fd(fd);
	for (int i = 1; i <= n; i++) {
		__u64 key = (__u64)i * 1000003u;

		make_stack(&want, (__u32)(i % 40) + 1, (__u64)i << 20);
		assert_int_equal(bpf_map_update_elem(fd, &key, &want, BPF_NOEXIST), 0);
	}
	r0 = python__stack_reads();
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 1; i <= n; i++) {
			__u64 key = (__u64)i * 1000003u;
			__u32 depth = (__u32)(i % 40) + 1;

			make_stack(&want, depth, (__u64)i << 20);
			memset(&want.frames[depth], 0, sizeof(want.frames) - depth * sizeof(want.frames[0]));
			assert_int_equal(python__stack(key, &got), 0);
			assert_memory_equal(&got, &want, sizeof(got));
		}
	}
	/* the first 4096 stacks read once; the rest read in each pass */
	assert_int_equal(python__stack_reads() - r0, (uint64_t)n + 2 * (uint64_t)(n - 4096));

	/* a key not in the map yet: found once BPF inserts it */
	__u64 late = 99;

	r0 = python__stack_reads();
	assert_int_equal(python__stack(late, &got), -ENOENT);
	make_stack(&want, 3, 0x7000);
	assert_int_equal(bpf_map_update_elem(fd, &late, &want, BPF_NOEXIST), 0);
	assert_int_equal(python__stack(late, &got), 0);
	assert_int_equal(got.depth, 3);
	assert_int_equal(got.frames[2].code, 0x7002);
	assert_int_equal(python__stack_reads() - r0, 2);
	assert_int_equal(python__stack(0, &got), -ENOENT);

	/* another map: the same key names its own stack there */
	fd2 = stacks_map(8);
	assert_true(fd2 >= 0);
	__u64 key1 = 1000003u;

	make_stack(&want, 5, 0x9000);
	assert_int_equal(bpf_map_update_elem(fd2, &key1, &want, BPF_NOEXIST), 0);
	python__set_stacks_fd(fd2);
	assert_int_equal(python__stack(key1, &got), 0);
	assert_int_equal(got.depth, 5);
	assert_int_equal(got.frames[0].code, 0x9000);
	python__reset();
	close(fd2);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_debug_offsets),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_stack_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
