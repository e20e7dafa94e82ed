// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "map_dump.h"
#include "vec.h"

/* The first batch asks for about this many bytes of entries (at least 16
 * entries, at most the map's size); the arrays then double as needed. */
#define FIRST_BATCH_BYTES 65536

void map_dump__free(struct map_dump *d)
{
	free(d->keys);
	free(d->values);
	memset(d, 0, sizeof(*d));
}

/* Room for entry `last` (and all before it) in both arrays, one capacity. */
static int reserve(struct map_dump *d, size_t last, size_t first)
{
	size_t c;

	if (last < d->cap)
		return 0;
	c = vec_grown(d->cap, last, d->key_size > d->value_size ? d->key_size : d->value_size, first);
	if (!c || vec__resize((void **)&d->keys, c, d->key_size) || vec__resize((void **)&d->values, c, d->value_size))
		return -ENOMEM;
	d->cap = c;
	return 0;
}

static bool is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

/* The walk every map type allows: bpf_map_get_next_key then
 * bpf_map_lookup_elem, an entry deleted between the two skipped. tok holds
 * two keys (the previous one and the next). */
static int walk(struct map_dump *d, int fd, unsigned char *tok, size_t first)
{
	unsigned char *prev = NULL, *next = tok;

	d->n = 0;
	d->walked = true;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (reserve(d, d->n, first))
			return -ENOMEM;
		if (!bpf_map_lookup_elem(fd, next, d->values + d->n * d->value_size)) {
			memcpy(d->keys + d->n * d->key_size, next, d->key_size);
			d->n++;
		}
		prev = next;
		next = next == tok ? tok + d->key_size : tok;
	}
	return 0;
}

/* Reads by batches. 0 done, 1 refused (walk instead), -ENOMEM. tok holds
 * two batch positions (in and out): a hash map's is a bucket's index, an
 * array's a key. */
static int batches(struct map_dump *d, int fd, unsigned char *tok, size_t toksize, size_t first)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	unsigned char *in = NULL, *out = tok;

	for (;;) {
		__u32 count;
		int err;

		/* a quarter of the arrays free at least: a call filling
		 * the last few places would only end at a bigger bucket */
		if (reserve(d, d->n + d->cap / 4, first))
			return -ENOMEM;
		count = (__u32)(d->cap - d->n < UINT32_MAX ? d->cap - d->n : UINT32_MAX);
		err = bpf_map_lookup_batch(fd, in, out, d->keys + d->n * d->key_size,
					   d->values + d->n * d->value_size, &count, &opts);
		/* refused (EINVAL before 5.6, the kernel's ENOTSUPP for a
		 * map type without batches, EOPNOTSUPP), or failed half-way:
		 * the walk reads it all again */
		if (err && err != -ENOENT && err != -ENOSPC)
			return 1;
		if (err == -ENOSPC && !count) {
			/* a hash bucket holds more entries than there was room
			 * for: more room, the same position */
			if (reserve(d, d->cap, first))
				return -ENOMEM;
			continue;
		}
		d->n += count;
		if (err == -ENOENT)
			return 0;
		in = out;
		out = out == tok ? tok + toksize : tok;
	}
}

int map_dump__read(struct map_dump *d, int fd, size_t key_size, size_t value_size, unsigned int flags)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	unsigned char *tok = NULL;
	size_t first, toksize;
	int err, ncpus;

	map_dump__free(d);
	if (fd < 0)
		return -EBADF;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	if (info.key_size != key_size || info.value_size != value_size || !key_size || !value_size)
		return -EINVAL;
	d->key_size = key_size;
	d->value_size = value_size;
	if (is_percpu(info.type)) {
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			return ncpus < 0 ? ncpus : -EINVAL;
		d->value_size = ((value_size + 7) & ~(size_t)7) * (size_t)ncpus;
	}
	first = FIRST_BATCH_BYTES / (d->key_size + d->value_size);
	if (first < 16)
		first = 16;
	if (info.max_entries && info.max_entries < first)
		first = info.max_entries;
	/* a batch position is a key (arrays) or a __u32 (hash maps) */
	toksize = key_size > sizeof(__u64) ? key_size : sizeof(__u64);
	tok = calloc(2, toksize);
	if (!tok)
		return -ENOMEM;
	err = flags & MAP_DUMP_WALK ? 1 : batches(d, fd, tok, toksize, first);
	if (err == 1)
		err = walk(d, fd, tok, first);
	free(tok);
	if (err)
		map_dump__free(d);
	return err;
}
