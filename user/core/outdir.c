// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "outdir.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool output_dir__is_ours(const char *name)
{
	static const char *const fixed[] = {
		"profile.json", "profile.pb.gz", "trace.json", "flamegraph.svg", "offcpu.svg", "report.html",
		"stacks.folded", "offcpu.folded",
		"command.log", /* `top`: the launched command's output */
	};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(name, fixed[i]))
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

/* mkdir -p; directories it creates go to the sudo user. */
static int make_dirs(const char *dir)
{
	char *copy = strdup(dir);
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; ; p++) {
		bool last = !*p;

		if (*p == '/' || last) {
			*p = 0;
			if (!mkdir(copy, 0755)) {
				int fd = open(copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				if (fd >= 0) {
					atomic_file__chown_invoker(fd);
					close(fd);
				}
			} else if (errno != EEXIST && last) {
				err = -errno;
			}
			if (last)
				break;
			*p = '/';
		}
	}
	free(copy);
	return err;
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

int output_dir__prepare(const char *dir)
{
	char why[128] = "";
	struct atomic_file *probe;
	int fd, err;

	if (!dir || !*dir) {
		fprintf(stderr, "infertrace: the output directory name is empty; give one with -o DIR\n");
		return -EINVAL;
	}
	err = make_dirs(dir);
	if (err)
		goto fail;
	fd = atomic_dir__open(dir, why, sizeof(why));
	if (fd == -EPERM) {
		fprintf(stderr, "infertrace: refusing output directory '%s': %s; others could plant files in it; "
			"choose another with -o DIR\n", dir, why);
		return fd;
	}
	if (fd == -ELOOP || fd == -ENOTDIR) {
		fprintf(stderr, "infertrace: refusing output directory '%s': not a directory (a symbolic link is not "
			"followed); give the real path with -o DIR\n", dir);
		return fd;
	}
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	remove_stale(fd);
	close(fd);
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
	return err;
}
