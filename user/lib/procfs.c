// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

ssize_t procfs__read(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			buf[n] = 0;
			return r;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

char procfs__stat_state(const char *buf)
{
	const char *p = strrchr(buf, ')');

	return p && p[1] == ' ' ? p[2] : 0;
}

int procfs__stat_ticks(const char *buf, unsigned long long *ticks)
{
	const char *p = strrchr(buf, ')');
	unsigned long long utime, stime;

	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &utime, &stime) != 2)
		return -EINVAL;
	*ticks = utime + stime;
	return 0;
}

int procfs__stat_starttime(const char *buf, unsigned long long *ticks)
{
	const char *p = strrchr(buf, ')');

	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 ticks) != 1)
		return -EINVAL;
	return 0;
}

int procfs__stat_comm(const char *buf, char *out, size_t len)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	size_t n;

	if (!len || !open || !close || close < open)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > len - 1)
		n = len - 1;
	memcpy(out, open + 1, n);
	out[n] = 0;
	return 0;
}

int procfs__cpu_ticks(const char *buf, unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	int n;

	if (strncmp(buf, "cpu ", 4)) /* all CPUs' line, not cpu0's */
		return -EINVAL;
	/* user nice system idle, then iowait irq softirq steal (2.6 on) */
	n = sscanf(buf + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]);
	if (n < 4)
		return -EINVAL;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];
	return 0;
}

/* Each line of buf in turn: the next line's start, or NULL at the end. */
static const char *next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : NULL;
}

pid_t procfs__status_tgid(const char *buf)
{
	int tgid;

	for (const char *l = buf; l && *l; l = next_line(l))
		if (sscanf(l, "Tgid: %d", &tgid) == 1)
			return tgid;
	return -1;
}

pid_t procfs__status_nspid(const char *buf, pid_t pid, uid_t *uid, uid_t *euid)
{
	pid_t ns = pid;

	*uid = *euid = (uid_t)-1;
	for (const char *l = buf; l && *l; l = next_line(l)) {
		unsigned int r, e;

		if (!strncmp(l, "Uid:", 4) && sscanf(l + 4, "%u %u", &r, &e) == 2) {
			*uid = r;
			*euid = e;
		} else if (!strncmp(l, "NSpid:", 6)) {
			/* the last field is the innermost namespace's pid; the
			 * line ends at '\n' (strtol would skip it as a space) */
			const char *s = l + 6, *end = strchr(s, '\n');
			char *endp;
			long v;

			for (;;) {
				v = strtol(s, &endp, 10);
				if (endp == s || (end && endp > end))
					break;
				if (v > 0 && v <= INT32_MAX)
					ns = (pid_t)v;
				s = endp;
			}
		}
	}
	return ns;
}

int procfs__status_creds(const char *buf, struct procfs_creds *c)
{
	bool uid = false, gid = false;

	memset(c, 0, sizeof(*c));
	for (const char *l = buf; l && *l; l = next_line(l)) {
		unsigned int r, e, sv, fs;
		unsigned long long cap;

		if (!strncmp(l, "Uid:", 4) && sscanf(l + 4, "%u %u %u %u", &r, &e, &sv, &fs) == 4) {
			c->fsuid = fs;
			uid = true;
		} else if (!strncmp(l, "Gid:", 4) && sscanf(l + 4, "%u %u %u %u", &r, &e, &sv, &fs) == 4) {
			c->fsgid = fs;
			gid = true;
		} else if (!strncmp(l, "CapEff:", 7) && sscanf(l + 7, "%llx", &cap) == 1) {
			c->cap_eff = cap;
		} else if (!strncmp(l, "Groups:", 7)) {
			const char *q = l + 7, *end = strchr(q, '\n');
			char *endp;

			while (c->ngroups < PROCFS_MAX_GROUPS) {
				unsigned long v = strtoul(q, &endp, 10);

				if (endp == q || (end && endp > end))
					break;
				c->groups[c->ngroups++] = (gid_t)v;
				q = endp;
			}
		}
	}
	return uid && gid ? 0 : -EINVAL;
}

bool procfs__creds_may_read(const struct procfs_creds *c, uid_t owner, gid_t group, mode_t mode)
{
	const uint64_t dac = 1ull << 1 | 1ull << 2; /* CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH */
	bool in_group = c->fsgid == group;

	if (c->init_userns && (c->cap_eff & dac))
		return true;
	if (c->fsuid == owner)
		return mode & 0400;
	for (int i = 0; i < c->ngroups && !in_group; i++)
		in_group = c->groups[i] == group;
	return in_group ? mode & 0040 : mode & 0004;
}

long procfs__meminfo_kb(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	long kb;

	for (const char *l = buf; l && *l; l = next_line(l))
		if (!strncmp(l, key, klen) && l[klen] == ':' && sscanf(l + klen + 1, " %ld kB", &kb) == 1)
			return kb;
	return -1;
}

int procfs__maps_line(const char *line, struct procfs_map *m)
{
	int n = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &m->start, &m->end, m->perm, &m->offset,
		   &m->maj, &m->min, &m->ino, &n) < 7 || !n || strlen(m->perm) < 3)
		return -EINVAL;
	m->path = line + n;
	m->path_len = strcspn(m->path, "\n");
	return 0;
}
