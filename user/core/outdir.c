// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "outdir.h"
#include "spool.h"
#include "vec.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The names a recording writes, known at its start: the one list of them. */
static const char *const claimed[] = {
	"profile.json", "profile.pb.gz", "trace.json", "flamegraph.svg", "offcpu.svg", "report.html",
	"timeline.speedscope.json", "stacks.folded", "offcpu.folded", "wakeup.folded", "gpu.folded",
};

bool output_dir__is_ours(const char *name)
{
	static const char *const also[] = {
		"command.log", /* `top`: the launched command's output */
		SPOOL_NAME,    /* a killed recording's spool */
	};

	for (size_t i = 0; i < sizeof(claimed) / sizeof(claimed[0]); i++)
		if (!strcmp(name, claimed[i]))
			return true;
	for (size_t i = 0; i < sizeof(also) / sizeof(also[0]); i++)
		if (!strcmp(name, also[i]))
			return true;
	/* per-phase stacks: stacks.PHASE.folded, offcpu.PHASE.folded */
	if ((!strncmp(name, "stacks.", 7) || !strncmp(name, "offcpu.", 7)) && has_suffix(name, ".folded") &&
	    strlen(name) > 7 + 7)
		return true;
	/* a temp file left by a killed run: .NAME.tmp.HEX */
	if (name[0] == '.') {
		const char *t = strstr(name, ".tmp.");

		if (t && t > name + 1) {
			char base[256];
			size_t n = (size_t)(t - name - 1);

			if (n < sizeof(base)) {
				memcpy(base, name + 1, n);
				base[n] = 0;
				return output_dir__is_ours(base) || !strcmp(base, "write-check");
			}
		}
	}
	return false;
}

static void remove_stale(int dirfd)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!output_dir__is_ours(de->d_name))
			continue;
		/* a file or a planted symlink: unlinkat removes the link itself */
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || S_ISDIR(st.st_mode))
			continue;
		unlinkat(dirfd, de->d_name, 0);
	}
	closedir(d);
}

/* A name taken by what remove_stale could not remove (a directory). */
static int check_free(const char *dir, int fd, const char *name)
{
	struct stat st;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	fprintf(stderr, "infertrace: refusing output directory '%s': '%s' in it is %s owned by uid %u, where an "
		"output goes; remove it or choose another with -o DIR\n", dir, name,
		S_ISDIR(st.st_mode) ? "a directory" : "a file", (unsigned)st.st_uid);
	return -EEXIST;
}

/* In a directory others may write to (sticky), an empty file of ours at
 * the name: no one else can remove or replace it, so nothing can be planted
 * there before the output is renamed over it. */
static int claim(struct output_dir *od, const char *dir, const char *name)
{
	struct output_claim *c;
	struct stat st;
	int fd;

	if (VEC_RESIZE(od->claims, od->nclaims + 1))
		return -ENOMEM;
	fd = openat(od->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, atomic_file__mode());
	if (fd < 0) {
		int err = -errno;

		if (err == -EEXIST)
			return check_free(dir, od->fd, name);
		fprintf(stderr, "infertrace: cannot write '%s/%s': %s; choose another with -o DIR\n", dir, name,
			strerror(-err));
		return err;
	}
	atomic_file__chown_invoker(fd);
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	c = &od->claims[od->nclaims];
	c->name = strdup(name);
	if (!c->name)
		return -ENOMEM;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	od->nclaims++;
	return 0;
}

static int claim_names(struct output_dir *od, const char *dir, const char *const *phases, size_t nphases)
{
	bool shared_dir;
	struct stat st;
	char name[256];
	int err = 0;

	if (fstat(od->fd, &st))
		return -errno;
	shared_dir = st.st_mode & (S_IWGRP | S_IWOTH);
	for (size_t i = 0; i < sizeof(claimed) / sizeof(claimed[0]) + 2 * nphases && !err; i++) {
		const char *n = name;

		if (i < sizeof(claimed) / sizeof(claimed[0]))
			n = claimed[i];
		else {
			size_t k = i - sizeof(claimed) / sizeof(claimed[0]);

			snprintf(name, sizeof(name), "%s.%s.folded", k % 2 ? "offcpu" : "stacks", phases[k / 2]);
		}
		err = shared_dir ? claim(od, dir, n) : check_free(dir, od->fd, n);
	}
	return err;
}

int output_dir__prepare(struct output_dir *od, const char *dir, const char *const *phases, size_t nphases)
{
	char why[256] = "";
	struct atomic_file *probe;
	int err;

	*od = (struct output_dir){ .fd = -1 };
	if (!dir || !*dir) {
		fprintf(stderr, "infertrace: the output directory name is empty; give one with -o DIR\n");
		return -EINVAL;
	}
	od->fd = atomic_dir__make(dir, why, sizeof(why));
	if (od->fd == -EPERM) {
		fprintf(stderr, "infertrace: refusing output directory '%s': %s; choose another with -o DIR\n",
			dir, why);
		return -EPERM;
	}
	if (od->fd == -ELOOP || od->fd == -ENOTDIR) {
		fprintf(stderr, "infertrace: refusing output directory '%s': not a directory (a symbolic link is not "
			"followed); give the real path with -o DIR\n", dir);
		return od->fd;
	}
	if (od->fd < 0) {
		err = od->fd;
		goto fail;
	}
	/* one recording per directory: a second would remove the first's
	 * outputs as stale, and the two would replace each other's */
	if (flock(od->fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		if (err == -EWOULDBLOCK) {
			fprintf(stderr, "infertrace: output directory '%s' is in use by another recording; wait for "
				"it to end or choose another with -o DIR\n", dir);
			output_dir__release(od);
			return -EBUSY;
		}
		goto fail;
	}
	remove_stale(od->fd);
	err = claim_names(od, dir, phases, nphases);
	if (err) {
		output_dir__release(od);
		return err;
	}
	probe = atomic_file__open(dir, "write-check");
	if (!probe) {
		err = -errno;
		goto fail;
	}
	atomic_file__abort(probe);
	return 0;
fail:
	fprintf(stderr, "infertrace: cannot write output directory '%s': %s; choose another with -o DIR\n",
		dir, strerror(-err));
	output_dir__release(od);
	return err;
}

void output_dir__release(struct output_dir *od)
{
	for (size_t i = 0; i < od->nclaims; i++) {
		struct output_claim *c = &od->claims[i];
		struct stat st;

		/* a name no output replaced: its empty claim goes */
		if (!fstatat(od->fd, c->name, &st, AT_SYMLINK_NOFOLLOW) && st.st_dev == c->dev &&
		    st.st_ino == c->ino && S_ISREG(st.st_mode) && !st.st_size)
			unlinkat(od->fd, c->name, 0);
		free(c->name);
	}
	free(od->claims);
	if (od->fd >= 0)
		close(od->fd);
	*od = (struct output_dir){ .fd = -1 };
}
