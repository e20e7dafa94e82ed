// SPDX-License-Identifier: BSD-2-Clause
/* Parsers of /proc files over a buffer already read: a process's own name
 * (comm) sits in /proc/PID/stat and /proc/PID/status and may hold any byte
 * but NUL, so the parsers take any bytes (tests/fuzz/fuzz_proc.c). */
#ifndef INFERTRACE_PROCFS_H
#define INFERTRACE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads at most len - 1 bytes of path into buf, NUL-terminated (a /proc file
 * is read in one go). Bytes read, or -errno. */
ssize_t procfs__read(const char *path, char *buf, size_t len);

/* /proc/PID/stat: the fields resume after the last ')' (comm may hold
 * spaces and ')'). The state letter, or 0. */
char procfs__stat_state(const char *buf);
/* utime + stime in clock ticks; 0, or -EINVAL. */
int procfs__stat_ticks(const char *buf, unsigned long long *ticks);
/* starttime (field 22): the process's start in clock ticks after boot
 * (CLOCK_BOOTTIME, rounded down); 0, or -EINVAL. */
int procfs__stat_starttime(const char *buf, unsigned long long *ticks);

/* comm, the bytes between the first '(' and the last ')', cut to fit
 * len - 1 bytes and NUL-terminated; 0, or -EINVAL. */
int procfs__stat_comm(const char *buf, char *out, size_t len);

/* /proc/stat: its first line's ticks of all CPUs in all and busy (all but
 * idle and iowait; guest time is inside user time); 0, or -EINVAL. */
int procfs__cpu_ticks(const char *buf, unsigned long long *busy, unsigned long long *total);

/* /proc/PID/status: Tgid, or -1. */
pid_t procfs__status_tgid(const char *buf);
/* /proc/PID/status: the innermost NSpid (pid when none) and the real and
 * effective uid of Uid: ((uid_t)-1 when absent). */
pid_t procfs__status_nspid(const char *buf, pid_t pid, uid_t *uid, uid_t *euid);

/* What a process's file accesses are checked with, from /proc/PID/status. */
#define PROCFS_MAX_GROUPS 64
struct procfs_creds {
	uid_t fsuid;
	gid_t fsgid;
	gid_t groups[PROCFS_MAX_GROUPS];
	int ngroups;
	uint64_t cap_eff;
	bool init_userns;  /* set by the caller: its capabilities count only there */
};
/* 0, or -EINVAL when the Uid:/Gid: lines are missing. */
int procfs__status_creds(const char *buf, struct procfs_creds *c);
/* Whether a process with these credentials may read a file of this owner,
 * group and mode (its mode bits; CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH
 * in the initial user namespace read anything). */
bool procfs__creds_may_read(const struct procfs_creds *c, uid_t owner, gid_t group, mode_t mode);

/* /proc/meminfo: the value of KEY in kB, or -1. */
long procfs__meminfo_kb(const char *buf, const char *key);

/* One line of /proc/PID/maps. */
struct procfs_map {
	unsigned long long start, end, offset, ino;
	unsigned int maj, min;
	char perm[8];
	const char *path; /* in the line, to its end or '\n' ("" for anonymous) */
	size_t path_len;
};
/* 0, or -EINVAL when line is not a maps line. */
int procfs__maps_line(const char *line, struct procfs_map *m);

#endif
