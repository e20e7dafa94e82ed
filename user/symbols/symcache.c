// SPDX-License-Identifier: BSD-2-Clause
/* Symbol tables cached by build-id; see symcache.h.
 *
 * File <hex build-id>.syms: a header, nsyms fixed-size entries sorted as
 * they were given, then the names (NUL-terminated). Native byte order:
 * the cache belongs to this machine. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symcache.h"

#define SYMCACHE_DEFAULT_DIR "/var/cache/infertrace"
#define SYMCACHE_MAGIC "ITSYMS02"
#define SYMCACHE_MAX_FILE (1ull << 31)

struct symcache {
	int dirfd;
	char *dir;
};

/* A loaded table's names: the file mapped read-only, in place. */
struct symcache_blob {
	void *addr;
	size_t len;
};

struct hdr {
	char magic[8];
	uint64_t flags;
	uint64_t nsyms;
	uint64_t strsize;
};

struct ent {
	uint64_t addr, size;
	uint32_t name;
	uint8_t bind;
	uint8_t pad[3];
};

/* the directory may hold only what root wrote */
static bool trusted(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

struct symcache *symcache__open(const char *dir, const char **why)
{
	struct symcache *c;
	struct stat st;
	int fd;

	*why = NULL;
	if (!dir)
		dir = getenv("INFERTRACE_CACHE_DIR");
	if (!dir || !*dir)
		dir = SYMCACHE_DEFAULT_DIR;
	if (strcmp(dir, "off") == 0)
		return NULL;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		*why = "cannot be created";
		return NULL;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*why = "is not a directory (or is a symbolic link)";
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || !trusted(&st)) {
		*why = "is not owned by root, or others may write to it";
		close(fd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		close(fd);
		*why = "out of memory";
		return NULL;
	}
	c->dirfd = fd;
	return c;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c->dir);
	free(c);
}

const char *symcache__dir(const struct symcache *c)
{
	return c->dir;
}

static int file_name(char *buf, size_t len, const unsigned char *id, size_t idlen, const char *suffix)
{
	size_t o = 0;

	if (!idlen || idlen > 64 || len < idlen * 2 + strlen(suffix) + 1)
		return -EINVAL;
	for (size_t i = 0; i < idlen; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", id[i]);
	snprintf(buf + o, len - o, "%s", suffix);
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* The file is mapped, not read: a table's names are used where they lie
 * (a lookup touches a few of its pages), and the entries are read once to
 * check them, without copying megabytes into fresh memory page by page
 * (libtorch_cpu's table is 2.5 MiB). MAP_PRIVATE: a cache file replaced
 * meanwhile is renamed over, never written in place. */
int symcache__load(struct symcache *c, const unsigned char *id, size_t idlen, struct symcache_sym **syms,
		   size_t *nsyms, struct symcache_blob **blob, unsigned *flags)
{
	struct symcache_sym *out = NULL;
	struct symcache_blob *b = NULL;
	const struct ent *ents;
	const char *strs;
	void *map = MAP_FAILED;
	char name[160];
	struct stat st;
	struct hdr h;
	int fd, err;

	*syms = NULL;
	*blob = NULL;
	*nsyms = 0;
	if (!c || file_name(name, sizeof(name), id, idlen, ".syms"))
		return -ENOENT;
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = -EINVAL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !trusted(&st) || (uint64_t)st.st_size > SYMCACHE_MAX_FILE ||
	    (uint64_t)st.st_size < sizeof(h))
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	memcpy(&h, map, sizeof(h));
	if (memcmp(h.magic, SYMCACHE_MAGIC, sizeof(h.magic)) || h.nsyms > SYMCACHE_MAX_FILE / sizeof(struct ent) ||
	    h.strsize > SYMCACHE_MAX_FILE || sizeof(h) + h.nsyms * sizeof(struct ent) + h.strsize != (uint64_t)st.st_size)
		goto out;
	ents = (const struct ent *)((const char *)map + sizeof(h));
	strs = (const char *)(ents + h.nsyms);
	if (h.nsyms && (!h.strsize || strs[h.strsize - 1]))
		goto out;
	out = malloc(h.nsyms ? h.nsyms * sizeof(*out) : 1);
	b = malloc(sizeof(*b));
	if (!out || !b) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < h.nsyms; i++) {
		if (ents[i].name >= h.strsize)
			goto out;
		out[i] = (struct symcache_sym){ ents[i].addr, ents[i].size, strs + ents[i].name, ents[i].bind };
	}
	*b = (struct symcache_blob){ map, (size_t)st.st_size };
	*syms = out;
	*blob = b;
	*nsyms = h.nsyms;
	*flags = (unsigned)h.flags;
	out = NULL;
	b = NULL;
	map = MAP_FAILED;
	err = 0;
out:
	free(out);
	free(b);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	return err;
}

void symcache__blob_free(struct symcache_blob *b)
{
	if (!b)
		return;
	munmap(b->addr, b->len);
	free(b);
}

int symcache__store(struct symcache *c, const unsigned char *id, size_t idlen, const struct symcache_sym *syms,
		    size_t nsyms, unsigned flags)
{
	char name[160], tmp[200];
	struct hdr h = { .magic = SYMCACHE_MAGIC, .flags = flags, .nsyms = nsyms };
	struct ent *ents = NULL;
	char *strs = NULL;
	int fd, err;
	size_t len, o = 0;

	if (!c || file_name(name, sizeof(name), id, idlen, ".syms"))
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	ents = calloc(nsyms ? nsyms : 1, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < nsyms; i++) {
		len = strlen(syms[i].name) + 1;
		if (h.strsize + len > UINT32_MAX) {
			err = -E2BIG;
			goto out;
		}
		ents[i] = (struct ent){ .addr = syms[i].addr, .size = syms[i].size, .name = (uint32_t)h.strsize,
					.bind = syms[i].bind };
		h.strsize += len;
	}
	strs = malloc(h.strsize ? h.strsize : 1);
	if (!strs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nsyms; o += strlen(syms[i].name) + 1, i++)
		memcpy(strs + o, syms[i].name, strlen(syms[i].name) + 1);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, &h, sizeof(h));
	if (!err)
		err = write_all(fd, ents, nsyms * sizeof(*ents));
	if (!err)
		err = write_all(fd, strs, h.strsize);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(c->dirfd, tmp, c->dirfd, name))
		err = -errno;
	if (err)
		unlinkat(c->dirfd, tmp, 0);
out:
	free(strs);
	free(ents);
	return err;
}
