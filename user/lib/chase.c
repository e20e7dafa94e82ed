// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chase.h"

#define MAX_LINKS 40 /* the kernel's own limit on links in one lookup */

static bool trusted(const struct chase_opts *o, uid_t uid)
{
	return uid == 0 || uid == o->trusted[0] || uid == o->trusted[1];
}

/* The root directory, where an absolute path's walk begins: through
 * /proc/self/root where /proc is there, which an emulator's path prefix
 * (qemu-user -L, the arm64 tests) does not redirect as it does "/". */
static int open_root(void)
{
	int fd = open("/proc/self/root", O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd >= 0 ? fd : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Sets *fd to the next component's O_PATH fd, creating a missing directory
 * when asked. -errno on failure. */
static int step(int dirfd, const char *name, const struct chase_opts *o, int *fd)
{
	for (int tries = 0; tries < 2; tries++) {
		int nfd;

		*fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (*fd >= 0 || errno != ENOENT || !o->mkdir_mode)
			return *fd >= 0 ? 0 : -errno;
		if (mkdirat(dirfd, name, o->mkdir_mode)) {
			if (errno == EEXIST)
				continue; /* made meanwhile: look again */
			return -errno;
		}
		nfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			return -errno;
		/* exactly the mode asked, whatever the umask */
		if (fchmod(nfd, o->mkdir_mode)) {
			int err = -errno;

			close(nfd);
			return err;
		}
		if (o->created)
			o->created(nfd);
		*fd = nfd;
		return 0;
	}
	return -EEXIST;
}

int chase_dir(const char *path, const struct chase_opts *o, char *why, size_t whylen)
{
	char *todo, *next = NULL, name[NAME_MAX + 1];
	int fd, links = 0, err = 0;

	if (!path || !*path)
		return -EINVAL;
	todo = strdup(path);
	if (!todo)
		return -ENOMEM;
	fd = *path == '/' ? open_root() : open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	for (char *p = todo; ; ) {
		struct stat st, dst;
		size_t len;
		int child;
		bool last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			goto out;
		}
		memcpy(name, p, len);
		name[len] = 0;
		p += len;
		while (*p == '/')
			p++;
		last = !*p;
		if (!strcmp(name, "."))
			continue;
		err = step(fd, name, o, &child);
		if (err)
			goto out;
		if (fstat(child, &st)) {
			err = -errno;
			close(child);
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			fd = child;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(child);
			err = -ENOTDIR;
			goto out;
		}
		/* a symbolic link: never the directory itself, only a trusted
		 * owner's, in a directory no one else could have put it into */
		if (last) {
			close(child);
			err = -ELOOP;
			goto out;
		}
		if (fstat(fd, &dst)) {
			err = -errno;
			close(child);
			goto out;
		}
		if (!trusted(o, st.st_uid) || (dst.st_uid != 0 && dst.st_uid != st.st_uid)) {
			if (why) {
				if (!trusted(o, st.st_uid))
					snprintf(why, whylen, "'%s' in its path is a symbolic link owned by uid %u, "
						 "neither root nor the invoking user", name, (unsigned)st.st_uid);
				else
					snprintf(why, whylen, "'%s' in its path is a symbolic link in a directory "
						 "owned by uid %u", name, (unsigned)dst.st_uid);
			}
			close(child);
			err = -EPERM;
			goto out;
		}
		if (++links > MAX_LINKS) {
			close(child);
			err = -ELOOP;
			goto out;
		}
		{
			char target[PATH_MAX];
			ssize_t n = readlinkat(child, "", target, sizeof(target) - 1);
			size_t rest = strlen(p);

			close(child);
			if (n <= 0) {
				err = n < 0 ? -errno : -ENOENT;
				goto out;
			}
			target[n] = 0;
			next = malloc((size_t)n + 1 + rest + 1);
			if (!next) {
				err = -ENOMEM;
				goto out;
			}
			sprintf(next, "%s/%s", target, p);
			if (*target == '/') {
				close(fd);
				fd = open_root();
				if (fd < 0) {
					err = -errno;
					goto out;
				}
			}
			free(todo);
			todo = next;
			next = NULL;
			p = todo;
		}
	}
	{
		int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		err = dfd < 0 ? -errno : 0;
		close(fd);
		fd = dfd;
	}
out:
	free(todo);
	free(next);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}
