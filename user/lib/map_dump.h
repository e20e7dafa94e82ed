// SPDX-License-Identifier: BSD-2-Clause
/* A whole BPF map read into memory: its keys and values, two arrays.
 *
 * Why: a walk with bpf_map_get_next_key and bpf_map_lookup_elem costs two
 * system calls an entry, paid at the end of every recording (and of every
 * snapshot) for each map the concerns collect. BPF_MAP_LOOKUP_BATCH reads
 * hundreds of entries a call (the buffers grow through vec.h, so a map of
 * n entries takes about log2(n) calls). Kernels before 5.6 and map types
 * without batch operations refuse them (EINVAL, ENOTSUPP, EOPNOTSUPP):
 * their maps are walked key by key, as before. Either way the entries come
 * in no particular order, each once, unless the map changes under the
 * read: an entry added or deleted meanwhile may be missed, and a walk whose
 * last key was deleted starts again from the first. */
#ifndef INFERTRACE_MAP_DUMP_H
#define INFERTRACE_MAP_DUMP_H

#include <stdbool.h>
#include <stddef.h>

struct map_dump {
	unsigned char *keys, *values; /* n entries, key_size and value_size bytes each */
	size_t n, cap;
	size_t key_size;
	/* an entry's value: a per-CPU map's holds every possible CPU's, each
	 * rounded up to 8 bytes, as bpf_map_lookup_elem writes them */
	size_t value_size;
	bool walked; /* read key by key: the map refused batches, or MAP_DUMP_WALK */
};

enum map_dump_flags {
	MAP_DUMP_WALK = 1, /* key by key even where batches work (the tests' fallback) */
};

/* Reads every entry of the map fd into *d (whatever it held before is
 * freed). key_size and value_size are the map's (one CPU's value for a
 * per-CPU map), as the caller's types have them. 0, or -errno with d
 * empty: -EINVAL when the map's sizes differ, -ENOMEM, or the kernel's
 * error for an fd that is not a map. */
int map_dump__read(struct map_dump *d, int fd, size_t key_size, size_t value_size, unsigned int flags);

static inline const void *map_dump__key(const struct map_dump *d, size_t i)
{
	return d->keys + i * d->key_size;
}

static inline const void *map_dump__value(const struct map_dump *d, size_t i)
{
	return d->values + i * d->value_size;
}

/* Frees the arrays; d is left empty (freeing it again does nothing). */
void map_dump__free(struct map_dump *d);

#endif
