// SPDX-License-Identifier: BSD-2-Clause
/* Reading a whole BPF map (user/lib/map_dump.c) from real maps filled with
 * known entries: hash, per-CPU hash, array and LRU maps read by batches,
 * more entries than one batch holds, a hash bucket bigger than the room
 * left in a batch, the key-by-key walk forced, and a map type that refuses
 * batches. Every entry must be read exactly once. Making maps needs root
 * (CAP_BPF): without it the tests are skipped. */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "map_dump.h"

/* The library's calls of bpf_map_lookup_batch come here (the test's own
 * definition is linked before libbpf's): counted, and call number
 * enospc_call answers ENOSPC with nothing read, as the kernel does when a
 * hash bucket holds more entries than the room left in the call. */
static int batch_calls, enospc_call;

int bpf_map_lookup_batch(int fd, void *in_batch, void *out_batch, void *keys, void *values, __u32 *count,
			 const struct bpf_map_batch_opts *opts)
{
	static int (*real)(int, void *, void *, void *, void *, __u32 *, const struct bpf_map_batch_opts *);

	if (++batch_calls == enospc_call) {
		*count = 0;
		errno = ENOSPC;
		return -ENOSPC;
	}
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "bpf_map_lookup_batch");
	assert_non_null(real);
	return real(fd, in_batch, out_batch, keys, values, count, opts);
}

struct key {
	__u32 id;
	__u32 salt;
};

struct val {
	__u64 a;
	__u64 b;
};

static struct key key_of(__u32 i)
{
	return (struct key){ .id = i, .salt = i * 2654435761u };
}

static struct val val_of(__u32 i)
{
	return (struct val){ .a = (__u64)i * 7, .b = ~(__u64)i };
}

/* A map, or the test skipped where maps cannot be made: not root, or
 * under qemu-user (the arm64 tests), which has no bpf() to pass on. */
static int map_new(enum bpf_map_type type, __u32 ksize, __u32 vsize, __u32 max, __u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(type, "test_dump", ksize, vsize, max, &o);

	if (fd == -EPERM || fd == -EACCES || fd == -ENOSYS)
		skip();
	if (fd < 0)
		fail_msg("bpf_map_create(type %d): %s", type, strerror(-fd));
	return fd;
}

/* A hash-type map of n entries key_of(0..n), values val_of. */
static int hash_new(enum bpf_map_type type, __u32 n, __u32 max, __u32 flags)
{
	int fd = map_new(type, sizeof(struct key), sizeof(struct val), max, flags);

	for (__u32 i = 0; i < n; i++) {
		struct key k = key_of(i);
		struct val v = val_of(i);

		assert_int_equal(bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST), 0);
	}
	return fd;
}

/* Every entry of d is key_of(i) with val_of(i) for a distinct i < n, and
 * all n are there. */
static void check_hash(const struct map_dump *d, __u32 n)
{
	char *seen = calloc(n ? n : 1, 1);

	assert_non_null(seen);
	assert_int_equal(d->n, n);
	assert_int_equal(d->key_size, sizeof(struct key));
	assert_int_equal(d->value_size, sizeof(struct val));
	for (size_t i = 0; i < d->n; i++) {
		const struct key *k = map_dump__key(d, i);
		const struct val *v = map_dump__value(d, i);
		struct key want = key_of(k->id);
		struct val wantv = val_of(k->id);

		assert_true(k->id < n);
		assert_int_equal(seen[k->id], 0);
		seen[k->id] = 1;
		assert_memory_equal(k, &want, sizeof(want));
		assert_memory_equal(v, &wantv, sizeof(wantv));
	}
	free(seen);
}

/* Reads the hash map of n entries (flags: MAP_DUMP_WALK or 0) and checks
 * every entry came once, by the way asked. */
static void read_hash(struct map_dump *d, int fd, __u32 n, unsigned int flags)
{
	assert_int_equal(map_dump__read(d, fd, sizeof(struct key), sizeof(struct val), flags), 0);
	assert_int_equal(d->walked, !!(flags & MAP_DUMP_WALK));
	check_hash(d, n);
}

static void test_hash_batches(void **st)
{
	struct map_dump d = { 0 };
	int fd;

	(void)st;
	/* 5000 entries: the first batch's 256 and several doubled ones */
	fd = hash_new(BPF_MAP_TYPE_HASH, 5000, 8192, 0);
	batch_calls = 0;
	read_hash(&d, fd, 5000, 0);
	/* 2,730 entries of 24 bytes in the first call, the rest in one more */
	assert_in_range(batch_calls, 2, 3);
	/* read again into the same dump: the old contents go */
	read_hash(&d, fd, 5000, 0);
	/* the walk reads the same */
	read_hash(&d, fd, 5000, MAP_DUMP_WALK);
	map_dump__free(&d);
	map_dump__free(&d);
	close(fd);
}

static void test_lru_hash(void **st)
{
	struct map_dump d = { 0 };
	int fd;

	(void)st;
	fd = hash_new(BPF_MAP_TYPE_LRU_HASH, 3000, 16384, 0);
	read_hash(&d, fd, 3000, 0);
	map_dump__free(&d);
	close(fd);
}

/* Full maps of 1 to 64 entries, whose first batch asks for no more than
 * the map's size (a zero seed: the same buckets on every run). */
static void test_small_full_maps(void **st)
{
	struct map_dump d = { 0 };

	(void)st;
	for (__u32 n = 1; n <= 64; n++) {
		int fd = hash_new(BPF_MAP_TYPE_HASH, n, n, BPF_F_ZERO_SEED);

		read_hash(&d, fd, n, 0);
		close(fd);
	}
	map_dump__free(&d);
}

/* A bucket bigger than the room left: the arrays grow and the same
 * position is asked again, at the start and half-way. */
static void test_bucket_outgrows_room(void **st)
{
	struct map_dump d = { 0 };
	int fd;

	(void)st;
	fd = hash_new(BPF_MAP_TYPE_HASH, 5000, 8192, 0);
	for (enospc_call = 1; enospc_call <= 2; enospc_call++) {
		batch_calls = 0;
		read_hash(&d, fd, 5000, 0);
		/* refused first, the doubled arrays take all 5,000 in the
		 * next call; refused second, the same position is asked
		 * again, with the rest read in a third */
		assert_int_equal(batch_calls, enospc_call + 1);
	}
	enospc_call = 0;
	map_dump__free(&d);
	close(fd);
}

static void test_empty(void **st)
{
	struct map_dump d = { 0 };
	int fd;

	(void)st;
	fd = hash_new(BPF_MAP_TYPE_HASH, 0, 1024, 0);
	read_hash(&d, fd, 0, 0);
	read_hash(&d, fd, 0, MAP_DUMP_WALK);
	map_dump__free(&d);
	close(fd);
}

/* Per-CPU values of 4 bytes: each CPU's rounded up to 8. */
static void test_percpu_hash(void **st)
{
	int ncpus = libbpf_num_possible_cpus(), fd;
	size_t stride = 8 * (size_t)ncpus;
	unsigned char *buf;
	struct map_dump d = { 0 };
	const __u32 n = 1000;

	(void)st;
	assert_true(ncpus > 0);
	fd = map_new(BPF_MAP_TYPE_PERCPU_HASH, sizeof(__u64), sizeof(__u32), 2048, 0);
	buf = calloc(1, stride);
	assert_non_null(buf);
	for (__u32 i = 0; i < n; i++) {
		__u64 k = (__u64)i << 32 | 0xabcdu;

		for (int c = 0; c < ncpus; c++) {
			__u32 v = i * 1000 + (__u32)c;

			memcpy(buf + 8 * (size_t)c, &v, sizeof(v));
		}
		assert_int_equal(bpf_map_update_elem(fd, &k, buf, BPF_NOEXIST), 0);
	}
	for (unsigned int flags = 0; flags <= MAP_DUMP_WALK; flags += MAP_DUMP_WALK) {
		char seen[1000] = { 0 };

		assert_int_equal(map_dump__read(&d, fd, sizeof(__u64), sizeof(__u32), flags), 0);
		assert_int_equal(d.walked, flags == MAP_DUMP_WALK);
		assert_int_equal(d.n, n);
		assert_int_equal(d.value_size, stride);
		for (size_t i = 0; i < d.n; i++) {
			__u64 k;
			__u32 id;

			memcpy(&k, map_dump__key(&d, i), sizeof(k));
			id = (__u32)(k >> 32);
			assert_int_equal(k & 0xffffffffu, 0xabcdu);
			assert_true(id < n);
			assert_int_equal(seen[id], 0);
			seen[id] = 1;
			for (int c = 0; c < ncpus; c++) {
				__u32 v;

				memcpy(&v, (const unsigned char *)map_dump__value(&d, i) + 8 * (size_t)c, sizeof(v));
				assert_int_equal(v, id * 1000 + (__u32)c);
			}
		}
	}
	map_dump__free(&d);
	free(buf);
	close(fd);
}

/* An array has every index: 3000 of them, more than one batch. */
static void test_array(void **st)
{
	struct map_dump d = { 0 };
	const __u32 n = 3000;
	int fd;

	(void)st;
	fd = map_new(BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct val), n, 0);
	for (__u32 i = 0; i < n; i++) {
		struct val v = val_of(i);

		assert_int_equal(bpf_map_update_elem(fd, &i, &v, BPF_ANY), 0);
	}
	for (unsigned int flags = 0; flags <= MAP_DUMP_WALK; flags += MAP_DUMP_WALK) {
		char seen[3000] = { 0 };

		assert_int_equal(map_dump__read(&d, fd, sizeof(__u32), sizeof(struct val), flags), 0);
		assert_int_equal(d.walked, flags == MAP_DUMP_WALK);
		assert_int_equal(d.n, n);
		for (size_t i = 0; i < d.n; i++) {
			__u32 k = *(const __u32 *)map_dump__key(&d, i);
			struct val want = val_of(k);

			assert_true(k < n);
			assert_int_equal(seen[k], 0);
			seen[k] = 1;
			assert_memory_equal(map_dump__value(&d, i), &want, sizeof(want));
		}
	}
	map_dump__free(&d);
	close(fd);
}

/* A device map has no batch operations (ENOTSUPP): it is walked, and its
 * unset slots, which the walk's keys name but a look-up does not find, are
 * left out. */
static void test_refused_batches(void **st)
{
	struct map_dump d = { 0 };
	__u32 slots[] = { 3, 17, 40 }, lo = 1, none = 0, k = 0;
	int fd;

	(void)st;
	fd = map_new(BPF_MAP_TYPE_DEVMAP, sizeof(__u32), sizeof(__u32), 64, 0);
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		assert_int_equal(bpf_map_update_elem(fd, &slots[i], &lo, BPF_ANY), 0);
	/* the kernel does refuse them */
	assert_true(bpf_map_lookup_batch(fd, NULL, &k, &k, &none, &(__u32){ 1 }, NULL) < 0);
	assert_true(errno == 524 /* ENOTSUPP */ || errno == EOPNOTSUPP || errno == EINVAL);
	assert_int_equal(map_dump__read(&d, fd, sizeof(__u32), sizeof(__u32), 0), 0);
	assert_true(d.walked);
	assert_int_equal(d.n, 3);
	for (size_t i = 0; i < d.n; i++) {
		__u32 key = *(const __u32 *)map_dump__key(&d, i);

		assert_true(key == 3 || key == 17 || key == 40);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(key, *(const __u32 *)map_dump__key(&d, j));
		assert_int_equal(*(const __u32 *)map_dump__value(&d, i), lo);
	}
	map_dump__free(&d);
	close(fd);
}

/* Sizes other than the map's, and an fd that is no map: errors, d empty. */
static void test_errors(void **st)
{
	struct map_dump d = { 0 };
	int fd;

	(void)st;
	fd = hash_new(BPF_MAP_TYPE_HASH, 10, 64, 0);
	assert_int_equal(map_dump__read(&d, fd, sizeof(struct key), sizeof(struct val) + 8, 0), -EINVAL);
	assert_int_equal(d.n, 0);
	assert_null(d.keys);
	assert_int_equal(map_dump__read(&d, fd, sizeof(__u32), sizeof(struct val), 0), -EINVAL);
	assert_int_equal(map_dump__read(&d, -1, sizeof(struct key), sizeof(struct val), 0), -EBADF);
	assert_true(map_dump__read(&d, STDIN_FILENO, sizeof(struct key), sizeof(struct val), 0) < 0);
	assert_int_equal(d.n, 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_batches), cmocka_unit_test(test_lru_hash),
		cmocka_unit_test(test_small_full_maps), cmocka_unit_test(test_bucket_outgrows_room),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_percpu_hash), cmocka_unit_test(test_array),
		cmocka_unit_test(test_refused_batches), cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
