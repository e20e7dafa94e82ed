// SPDX-License-Identifier: BSD-2-Clause
/* Files written atomically and safely as root: a temporary file created
 * O_CREAT|O_EXCL|O_NOFOLLOW inside the output directory (opened
 * O_DIRECTORY|O_NOFOLLOW and checked), renamed over the final name only when
 * everything was written and flushed. Every operation after the directory is
 * opened is relative to its descriptor, so a planted symlink or a swapped path
 * component cannot redirect a write. */
#ifndef INFERTRACE_ATOMIC_FILE_H
#define INFERTRACE_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct atomic_file;

/* Opens DIR (refused unless safe, see atomic_dir__open) and a fresh temporary
 * file in it. NULL with errno set on failure; EPERM for an unsafe directory. */
struct atomic_file *atomic_file__open(const char *dir, const char *name);
FILE *atomic_file__stream(struct atomic_file *af);
/* Makes the file readable by its owner only (0600): for figures from
 * counters the kernel keeps root-only, such as RAPL energy. 0 or -errno. */
int atomic_file__private(struct atomic_file *af);
/* Flushes, fsyncs and renames into place; removes the temp file on any error.
 * Frees af in every case. 0 or -errno. */
int atomic_file__commit(struct atomic_file *af);
/* Drops the temp file. Accepts NULL. */
void atomic_file__abort(struct atomic_file *af);
/* Why writing to the stream failed: -ENOSPC for a full file system, else
 * -EIO. For a writer that gives up before committing. */
int atomic_file__error(struct atomic_file *af);

/* Files are written 0600 and directories made 0700 unless shared: 0644 and
 * 0755 (--share-outputs). Process-wide, set once before any output. */
void atomic_file__share(bool share);
mode_t atomic_file__mode(void);
mode_t atomic_dir__mode(void);
/* Root, the effective user or the invoking sudo user (SUDO_UID). */
bool atomic_file__trusted_uid(uid_t uid);

/* Opens DIR, resolved one component at a time (chase_dir: a symbolic link in
 * its path only when root or the invoking user owns it, never as its last
 * component), and checks it: owned by root, the effective user or the
 * invoking sudo user (SUDO_UID), and not writable by group or others unless
 * sticky. Returns the fd, or -errno: -EPERM for a refused directory or link
 * (WHY, if not NULL, says why in a few words), -ELOOP for a link. */
int atomic_dir__open(const char *dir, char *why, size_t whylen);
/* The same, creating missing directories (atomic_dir__mode(), handed to the
 * sudo user) as mkdir -p does. */
int atomic_dir__make(const char *dir, char *why, size_t whylen);
/* Under sudo as root: hands FD to SUDO_UID/SUDO_GID. No-op otherwise. */
void atomic_file__chown_invoker(int fd);

#endif
