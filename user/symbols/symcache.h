// SPDX-License-Identifier: BSD-2-Clause
/* A cache of indexed symbol tables across runs, keyed by GNU build-id, as
 * perf's build-id cache keeps files: the function symbols a first run read
 * from a file (its .symtab, debuginfo or .dynsym, through libdwfl), stored
 * so that a later run that samples the same build reads them back instead.
 *
 * The directory (default /var/cache/infertrace, INFERTRACE_CACHE_DIR;
 * "off" disables) is created 0700 and used only when it is a directory
 * owned by root and writable by no one else; a file in it only when it is
 * a regular file owned by root, written by no one else, and well formed.
 * Files are written whole under a temporary name, then renamed. */
#ifndef INFERTRACE_SYMCACHE_H
#define INFERTRACE_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

struct symcache;
struct symcache_blob;

struct symcache_sym {
	uint64_t addr, size;
	const char *name;
	uint8_t bind;
};

/* The cache at dir (NULL: INFERTRACE_CACHE_DIR, else the default). NULL
 * when disabled or refused; then *why (static) says why, or is NULL when
 * it was turned off. */
struct symcache *symcache__open(const char *dir, const char **why);
void symcache__free(struct symcache *c); /* accepts NULL */
const char *symcache__dir(const struct symcache *c);

/* flags of a stored table */
#define SYMCACHE_DEBUGINFO 1u /* read from separate debuginfo */

/* The table stored for build-id id: *syms (malloc'd) and *blob (the
 * names, freed with symcache__blob_free) are the caller's, *flags the
 * store's. 0, -ENOENT (none), or -errno (unreadable or malformed: ignored,
 * and replaced by the next store). */
int symcache__load(struct symcache *c, const unsigned char *id, size_t idlen, struct symcache_sym **syms,
		   size_t *nsyms, struct symcache_blob **blob, unsigned *flags);
void symcache__blob_free(struct symcache_blob *b); /* accepts NULL */
/* Stores a table for build-id id. 0 or -errno. */
int symcache__store(struct symcache *c, const unsigned char *id, size_t idlen, const struct symcache_sym *syms,
		    size_t nsyms, unsigned flags);

#endif
