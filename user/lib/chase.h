// SPDX-License-Identifier: BSD-2-Clause
/* Resolving a directory path as root, one component at a time (openat with
 * O_NOFOLLOW, as systemd's chase() does), so that a symbolic link another
 * user planted anywhere in the path cannot send a write elsewhere. */
#ifndef INFERTRACE_CHASE_H
#define INFERTRACE_CHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct chase_opts {
	/* Besides root, the owners whose symbolic links are followed (the
	 * effective user, the invoking sudo user); -1 for none. */
	uid_t trusted[2];
	/* Missing directories are created with this mode (0: not created),
	 * and each is passed to created(fd) if set. */
	mode_t mkdir_mode;
	void (*created)(int fd);
};

/* Opens the directory PATH (O_RDONLY|O_DIRECTORY|O_CLOEXEC). A symbolic link
 * in the middle of the path is followed only when root or a trusted user
 * owns it and the directory holding it is owned by root or by the link's
 * owner; the last component is never a link. Returns the fd or -errno:
 * -EPERM for a refused link (WHY, if not NULL, says which in a few words),
 * -ELOOP for a last component that is a link or too many links,
 * -ENOTDIR for a component that is not a directory. */
int chase_dir(const char *path, const struct chase_opts *o, char *why, size_t whylen);

#endif
