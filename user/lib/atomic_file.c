// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "atomic_file.h"
#include "chase.h"

/* Owner-only unless shared (--share-outputs): profiles hold the traced
 * processes' memory layout and what they ran. */
static bool shared;

struct atomic_file {
	FILE *f;
	int dirfd;
	char tmp[300];
	char *name;
};

/* SUDO_UID/SUDO_GID as ids, or -1 when not under sudo or malformed. */
static long sudo_id(const char *var)
{
	const char *s = getenv(var);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > INT32_MAX)
		return -1;
	return v;
}

void atomic_file__chown_invoker(int fd)
{
	long uid = sudo_id("SUDO_UID"), gid = sudo_id("SUDO_GID");

	if (geteuid() != 0 || uid < 0 || gid < 0)
		return;
	/* best effort: a filesystem without ownership (vfat) keeps root's */
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		return;
}

void atomic_file__share(bool share)
{
	shared = share;
}

mode_t atomic_file__mode(void)
{
	return shared ? 0644 : 0600;
}

mode_t atomic_dir__mode(void)
{
	return shared ? 0755 : 0700;
}

bool atomic_file__trusted_uid(uid_t uid)
{
	long sudo_uid = sudo_id("SUDO_UID");

	return uid == 0 || uid == geteuid() || (sudo_uid >= 0 && uid == (uid_t)sudo_uid);
}

static int dir_open(const char *dir, bool create, char *why, size_t whylen)
{
	long sudo_uid = sudo_id("SUDO_UID");
	struct chase_opts co = {
		.trusted = { geteuid(), sudo_uid >= 0 ? (uid_t)sudo_uid : (uid_t)-1 },
		.mkdir_mode = create ? atomic_dir__mode() : 0,
		.created = atomic_file__chown_invoker,
	};
	struct stat st;
	int fd, err;

	if (!dir || !*dir) {
		if (why)
			snprintf(why, whylen, "empty directory name");
		return -EINVAL;
	}
	fd = chase_dir(dir, &co, why, whylen);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!atomic_file__trusted_uid(st.st_uid)) {
		if (why)
			snprintf(why, whylen, "owned by uid %u, neither root nor the invoking user",
				 (unsigned)st.st_uid);
		close(fd);
		return -EPERM;
	}
	/* others could swap names in it under us, unless sticky */
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		if (why)
			snprintf(why, whylen, "writable by %s without the sticky bit; others could plant files in it",
				 st.st_mode & S_IWOTH ? "everyone" : "its group");
		close(fd);
		return -EPERM;
	}
	return fd;
}

int atomic_dir__open(const char *dir, char *why, size_t whylen)
{
	return dir_open(dir, false, why, whylen);
}

int atomic_dir__make(const char *dir, char *why, size_t whylen)
{
	return dir_open(dir, true, why, whylen);
}

/* Creates a temp file no one else can have predicted or planted. */
static int open_tmp(struct atomic_file *af)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)af ^ (uint64_t)tries;
		snprintf(af->tmp, sizeof(af->tmp), ".%.200s.tmp.%016llx", af->name, (unsigned long long)r);
		fd = openat(af->dirfd, af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && fchmod(fd, atomic_file__mode())) {
			int err = errno;

			close(fd);
			unlinkat(af->dirfd, af->tmp, 0);
			errno = err;
			return -1;
		}
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int atomic_file__private(struct atomic_file *af)
{
	return fchmod(fileno(af->f), 0600) ? -errno : 0;
}

struct atomic_file *atomic_file__open(const char *dir, const char *name)
{
	struct atomic_file *af;
	int err, fd;

	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		errno = EINVAL;
		return NULL;
	}
	af = calloc(1, sizeof(*af));
	if (!af)
		return NULL;
	af->dirfd = -1;
	af->name = strdup(name);
	if (!af->name) {
		err = ENOMEM;
		goto fail;
	}
	af->dirfd = atomic_dir__open(dir, NULL, 0);
	if (af->dirfd < 0) {
		err = -af->dirfd;
		goto fail;
	}
	fd = open_tmp(af);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	atomic_file__chown_invoker(fd);
	af->f = fdopen(fd, "w");
	if (!af->f) {
		err = errno;
		close(fd);
		unlinkat(af->dirfd, af->tmp, 0);
		goto fail;
	}
	return af;
fail:
	if (af->dirfd >= 0)
		close(af->dirfd);
	free(af->name);
	free(af);
	errno = err;
	return NULL;
}

FILE *atomic_file__stream(struct atomic_file *af)
{
	return af->f;
}

static void atomic_file__free(struct atomic_file *af)
{
	close(af->dirfd);
	free(af->name);
	free(af);
}

/* A write that failed inside stdio left only the error flag, its errno long
 * overwritten: a full file system is by far the likeliest cause, and the one
 * the user must be told of. */
static int lost_write_error(FILE *f)
{
	struct statvfs sv;

	return !fstatvfs(fileno(f), &sv) && sv.f_bavail == 0 ? -ENOSPC : -EIO;
}

int atomic_file__error(struct atomic_file *af)
{
	return ferror(af->f) ? lost_write_error(af->f) : -EIO;
}

int atomic_file__commit(struct atomic_file *af)
{
	int err = 0;

	if (ferror(af->f))
		err = lost_write_error(af->f);
	errno = 0;
	if (!err && (fflush(af->f) || fsync(fileno(af->f))))
		err = errno ? -errno : -EIO;
	if (fclose(af->f) && !err)
		err = -errno;
	/* renameat replaces whatever has the final name, a symlink included,
	 * without following it */
	if (!err && renameat(af->dirfd, af->tmp, af->dirfd, af->name))
		err = -errno;
	if (err)
		unlinkat(af->dirfd, af->tmp, 0);
	atomic_file__free(af);
	return err;
}

void atomic_file__abort(struct atomic_file *af)
{
	if (!af)
		return;
	fclose(af->f);
	unlinkat(af->dirfd, af->tmp, 0);
	atomic_file__free(af);
}
