// SPDX-License-Identifier: BSD-2-Clause
/* Perf-map reader; see perfmap.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "perfmap.h"
#include "procfs.h"
#include "vec.h"

#define READ_CHUNK (64u << 10)  /* > PERFMAP_MAX_LINE: each chunk makes progress */
#define MAX_SCAN 65536          /* overlapping entries examined per lookup */

struct perfmap {
	int fd;
	uint64_t offset;        /* bytes consumed: up to the end of the last full line */
	bool skipping;          /* inside an over-long line, until its newline */
	struct perfmap_entry *ents;  /* in file order: index = age */
	uint32_t n;
	size_t cap;
	uint32_t *order;        /* entry indices sorted by start, valid up to n_sorted */
	uint32_t n_sorted;
	uint64_t max_size;
	struct perfmap_stats st;
	char *buf;
	char head[PERFMAP_HEAD];  /* the file's first bytes as read */
	uint32_t head_len;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* openat2 with RESOLVE_IN_ROOT keeps every symlink of the path inside the
 * process's root (a container's /tmp may be a link); kernels before 5.6
 * lack it, then plain openat (O_NOFOLLOW still guards the last step). */
static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (dirfd == AT_FDCWD)
		return open(path, flags);
	fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || errno == E2BIG))
		fd = openat(dirfd, path, flags);
	return fd;
}

struct perfmap *perfmap__open(int dirfd, const char *path, uid_t uid, uid_t euid, const struct procfs_creds *creds)
{
	struct perfmap *pm;
	struct stat st;
	int fd, err;

	fd = open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != uid && st.st_uid != euid) {
		err = EPERM;
		goto fail;
	}
	/* read as the process would: a root-only file it bind-mounted over
	 * its map path (its own mount namespace) is not its to show */
	if (creds && !procfs__creds_may_read(creds, st.st_uid, st.st_gid, st.st_mode)) {
		err = EACCES;
		goto fail;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm || !(pm->buf = malloc(READ_CHUNK))) {
		free(pm);
		err = ENOMEM;
		goto fail;
	}
	pm->fd = fd;
	return pm;
fail:
	close(fd);
	errno = err;
	return NULL;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	for (uint32_t i = 0; i < pm->n; i++) {
		free(pm->ents[i].name);
		free(pm->ents[i].pretty);
	}
	free(pm->ents);
	free(pm->order);
	free(pm->buf);
	if (pm->fd >= 0)
		close(pm->fd);
	free(pm);
}

static bool parse_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; digits < 17; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || digits > 16)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* One line, without its newline. Malformed lines are counted, not kept. */
static void parse_line(struct perfmap *pm, const char *line, size_t len, uint64_t seen)
{
	char tmp[PERFMAP_MAX_LINE + 1];
	const char *p = tmp;
	uint64_t start, size;
	size_t nlen;
	char *name;

	if (len > PERFMAP_MAX_LINE) {
		pm->st.huge++;
		return;
	}
	memcpy(tmp, line, len);
	tmp[len] = '\0';
	if (len && tmp[len - 1] == '\r')
		tmp[--len] = '\0';
	if (!len)
		return;
	if (memchr(tmp, '\0', len)) {
		pm->st.garbage++;
		return;
	}
	if (!parse_hex(&p, &start) || *p++ != ' ' || !parse_hex(&p, &size) || *p++ != ' ' ||
	    !size || size > PERFMAP_MAX_SIZE || start + size < start || !*p) {
		pm->st.garbage++;
		return;
	}
	if (pm->n >= PERFMAP_MAX_ENTRIES) {
		pm->st.dropped++;
		return;
	}
	if (VEC_RESERVE(pm->ents, pm->cap, pm->n, 256)) {
		pm->st.dropped++;
		return;
	}
	nlen = strlen(p);
	name = malloc(nlen + 1);
	if (!name) {
		pm->st.dropped++;
		return;
	}
	memcpy(name, p, nlen + 1);
	pm->ents[pm->n++] = (struct perfmap_entry){
		.start = start, .size = size, .seen_ns = seen, .name = name,
	};
	if (size > pm->max_size)
		pm->max_size = size;
	pm->st.entries++;
}

static ssize_t pread_full(int fd, char *buf, size_t len, off_t off)
{
	ssize_t got;

	do
		got = pread(fd, buf, len, off);
	while (got < 0 && errno == EINTR);
	return got;
}

/* Whether the file no longer starts as it did when read, or is shorter
 * than what was read: written anew from its start. */
static bool rewritten(struct perfmap *pm)
{
	char head[PERFMAP_HEAD];
	struct stat st;

	if (!fstat(pm->fd, &st) && (uint64_t)st.st_size < pm->offset)
		return true;
	return pm->head_len && (pread_full(pm->fd, head, pm->head_len, 0) != (ssize_t)pm->head_len ||
				memcmp(head, pm->head, pm->head_len));
}

/* The entries read so far no longer cover anything; their names stay for
 * the tokens that carry their ids. */
static void retire(struct perfmap *pm)
{
	for (uint32_t i = 0; i < pm->n; i++)
		pm->ents[i].size = 0;
	pm->offset = 0;
	pm->skipping = false;
	pm->head_len = 0;
	pm->st.rewrites++;
}

/* The file's first PERFMAP_HEAD bytes (fewer when it is shorter). */
static uint32_t read_head(int fd, char *head)
{
	ssize_t got = pread_full(fd, head, PERFMAP_HEAD, 0);

	return got > 0 ? (uint32_t)got : 0;
}

static void keep_head(struct perfmap *pm)
{
	pm->head_len = read_head(pm->fd, pm->head);
}

int perfmap__file(const struct perfmap *pm, struct perfmap_file *f)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	if (fstat(pm->fd, &st))
		return -errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = (uint64_t)st.st_size;
	f->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	f->head_len = read_head(pm->fd, f->head);
	return 0;
}

void perfmap__start_at(struct perfmap *pm, uint64_t offset)
{
	if (pm->offset || pm->n)
		return;
	pm->offset = offset;
	keep_head(pm);
}

int perfmap__read(struct perfmap *pm, uint64_t seen)
{
	uint32_t before = pm->n;
	uint64_t total = 0;

	if ((pm->offset || pm->skipping) && rewritten(pm))
		retire(pm);

	while (total < PERFMAP_MAX_READ && pm->n < PERFMAP_MAX_ENTRIES) {
		ssize_t got = pread_full(pm->fd, pm->buf, READ_CHUNK, (off_t)pm->offset);
		size_t used = 0;
		char *nl;

		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		while ((nl = memchr(pm->buf + used, '\n', (size_t)got - used))) {
			size_t len = (size_t)(nl - (pm->buf + used));

			if (pm->skipping) {
				pm->skipping = false;
				pm->st.huge++;
			} else {
				parse_line(pm, pm->buf + used, len, seen);
			}
			used += len + 1;
		}
		/* the rest has no newline yet: a line being written, or an
		 * over-long one, skipped up to its newline */
		if (pm->skipping || (size_t)got - used > PERFMAP_MAX_LINE) {
			pm->skipping = true;
			used = (size_t)got;
		}
		pm->offset += used;
		pm->st.bytes += used;
		total += used;
		if ((size_t)got < READ_CHUNK)
			break;
	}
	/* until the first bytes are all there: what the next read compares */
	if (pm->head_len < sizeof(pm->head) && pm->offset)
		keep_head(pm);
	return (int)(pm->n - before);
}

static const struct perfmap *sort_ctx;

static int order_cmp(const void *a, const void *b)
{
	const struct perfmap_entry *x = &sort_ctx->ents[*(const uint32_t *)a];
	const struct perfmap_entry *y = &sort_ctx->ents[*(const uint32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int perfmap__index(struct perfmap *pm)
{
	uint32_t *o;

	if (pm->n_sorted == pm->n)
		return 0;
	if (VEC_RESIZE(pm->order, pm->n ? pm->n : 1))
		return -ENOMEM;
	o = pm->order;
	for (uint32_t i = pm->n_sorted; i < pm->n; i++)
		o[i] = i;
	sort_ctx = pm;
	qsort(o, pm->n, sizeof(*o), order_cmp);
	pm->n_sorted = pm->n;
	return 0;
}

const struct perfmap_entry *perfmap__lookup(struct perfmap *pm, uint64_t addr, uint64_t t, uint32_t *id)
{
	uint32_t lo = 0, hi, scanned = 0;
	int64_t before = -1, after = -1;

	if (!pm || perfmap__index(pm))
		return NULL;
	hi = pm->n_sorted;
	while (lo < hi) {  /* first entry starting above addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (pm->ents[pm->order[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* entries may overlap (reused addresses): every one starting within
	 * max_size below addr may cover it */
	while (lo > 0 && scanned++ < MAX_SCAN) {
		uint32_t i = pm->order[--lo];
		const struct perfmap_entry *e = &pm->ents[i];

		if (addr - e->start >= pm->max_size)
			break;
		if (addr - e->start >= e->size)
			continue;
		if (e->seen_ns <= t) {
			if ((int64_t)i > before)
				before = i;
		} else if (after < 0 || (int64_t)i < after) {
			after = i;
		}
	}
	if (before < 0)
		before = after;
	if (before < 0)
		return NULL;
	if (id)
		*id = (uint32_t)before;
	return &pm->ents[before];
}

const struct perfmap_entry *perfmap__entry(const struct perfmap *pm, uint32_t id)
{
	return pm && id < pm->n ? &pm->ents[id] : NULL;
}

const struct perfmap_stats *perfmap__stats(const struct perfmap *pm)
{
	return &pm->st;
}

static void copy_frame(char *dst, size_t len, const char *src, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n && src[i] && j + 1 < len; i++) {
		char c = src[i];

		dst[j++] = c == ';' ? ':' : (c == '\n' || c == '\t') ? ' ' : c;
	}
	if (len)
		dst[j] = '\0';
}

void perfmap__pretty(const char *name, char *buf, size_t len)
{
	static const char *const v8[] = { "JS:", "LazyCompile:", "Function:", "Script:" };
	const char *p = NULL, *sp, *loc, *base, *end;
	char tmp[PERFMAP_MAX_LINE + 64];

	for (size_t i = 0; i < sizeof(v8) / sizeof(v8[0]); i++)
		if (!strncmp(name, v8[i], strlen(v8[i])))
			p = name + strlen(v8[i]);
	if (p) {
		if (*p && strchr("*~^+", *p))
			p++;
		sp = strrchr(p, ' ');
		if (!sp) {
			copy_frame(buf, len, *p ? p : "(anonymous)", SIZE_MAX);
			return;
		}
		loc = sp + 1;
		end = loc + strlen(loc);
		/* file:line:col -> file:line; the file's directory dropped */
		const char *c1 = strrchr(loc, ':');

		if (c1 && c1 > loc) {
			const char *c2 = c1 - 1;

			while (c2 > loc && *c2 != ':')
				c2--;
			if (*c2 == ':' && c1 - c2 > 1 && strspn(c2 + 1, "0123456789") == (size_t)(c1 - c2 - 1))
				end = c1;
		}
		base = loc;
		for (const char *s = loc; s < end; s++)
			if (*s == '/')
				base = s + 1;
		snprintf(tmp, sizeof(tmp), "%.*s (%.*s)", sp > p ? (int)(sp - p) : (int)strlen("(anonymous)"),
			 sp > p ? p : "(anonymous)", (int)(end - base), base);
		copy_frame(buf, len, tmp, SIZE_MAX);
		return;
	}
	if (!strncmp(name, "py::", 4)) {
		p = name + 4;
		sp = strchr(p, ':');
		if (sp) {
			loc = sp + 1;
			base = strrchr(loc, '/');
			snprintf(tmp, sizeof(tmp), "%.*s (%s)", (int)(sp - p), p, base ? base + 1 : loc);
			copy_frame(buf, len, tmp, SIZE_MAX);
			return;
		}
	}
	copy_frame(buf, len, name, SIZE_MAX);
}

const char *perfmap_entry__pretty(const struct perfmap_entry *e)
{
	struct perfmap_entry *w = (struct perfmap_entry *)e; /* a cache of the entry's own */
	char buf[PERFMAP_MAX_LINE + 64];

	if (!w->pretty) {
		perfmap__pretty(e->name, buf, sizeof(buf));
		w->pretty = strdup(buf);
	}
	return w->pretty ? w->pretty : e->name;
}

/* ---- per-process set ---- */

/* PM_STALE: a map an earlier process left under this PID, not read until
 * the process writes it */
enum pm_state { PM_PENDING, PM_STALE, PM_OPEN, PM_GIVEN_UP };

struct pm_proc {
	pid_t pid;
	enum pm_state state;
	bool warned_bad_lines;
	struct perfmap *pm;
	char path[64];
	uint64_t start_real_ns;         /* the process's start (CLOCK_REALTIME); 0: unknown */
	struct perfmap_file stale;      /* PM_STALE: the stale map as first seen */
};

struct perfmaps {
	struct pm_proc *procs;
	size_t n, cap;
};

struct perfmaps *perfmaps__new(void)
{
	return calloc(1, sizeof(struct perfmaps));
}

void perfmaps__free(struct perfmaps *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		perfmap__free(set->procs[i].pm);
	free(set->procs);
	free(set);
}

static struct pm_proc *set_find(struct perfmaps *set, pid_t pid)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->procs[i].pid == pid)
			return &set->procs[i];
	return NULL;
}

pid_t perfmap__nspid(pid_t pid, uid_t *uid, uid_t *euid)
{
	char path[64], buf[8192];

	*uid = *euid = (uid_t)-1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (procfs__read(path, buf, sizeof(buf)) < 0)
		return pid;
	return procfs__status_nspid(buf, pid, uid, euid);
}

int perfmap__creds(pid_t pid, struct procfs_creds *c)
{
	char path[64], buf[8192];
	struct stat self, them;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (procfs__read(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	err = procfs__status_creds(buf, c);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	c->init_userns = !stat("/proc/self/ns/user", &self) && !stat(path, &them) && self.st_ino == them.st_ino &&
			 self.st_dev == them.st_dev;
	return 0;
}

/* When pid started, on the clock of file times; 0 when /proc does not say. */
static uint64_t process_start_real_ns(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks;
	uint64_t boot_now, real_now, start_boot;
	long hz = sysconf(_SC_CLK_TCK);

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hz <= 0 || procfs__read(path, buf, sizeof(buf)) <= 0 || procfs__stat_starttime(buf, &ticks))
		return 0;
	boot_now = clock_ns(CLOCK_BOOTTIME);
	real_now = clock_ns(CLOCK_REALTIME);
	start_boot = ticks * (1000000000ull / (uint64_t)hz);
	if (start_boot > boot_now || boot_now - start_boot > real_now)
		return 0;
	return real_now - (boot_now - start_boot);
}

/* A just opened map of p: whether it is to be read now. The stale map an
 * earlier process left is kept aside until the file changes; then its
 * lines are skipped when the new ones were appended after them. */
static bool take_map(struct pm_proc *p, struct perfmap *pm)
{
	struct perfmap_file f;

	if (perfmap__file(pm, &f))
		return true;
	if (p->state == PM_STALE && f.dev == p->stale.dev && f.ino == p->stale.ino) {
		if (f.mtime_ns == p->stale.mtime_ns && f.size == p->stale.size)
			return false;
		if (f.size >= p->stale.size && f.head_len >= p->stale.head_len &&
		    !memcmp(f.head, p->stale.head, p->stale.head_len))
			perfmap__start_at(pm, p->stale.size);
		return true;
	}
	if (p->start_real_ns && f.mtime_ns + PERFMAP_STALE_SLACK_NS < p->start_real_ns) {
		p->state = PM_STALE;
		p->stale = f;
		return false;
	}
	return true;
}

int perfmaps__refresh(struct perfmaps *set, pid_t pid)
{
	struct pm_proc *p = set_find(set, pid);
	const struct perfmap_stats *st;
	uid_t uid, euid;
	int root, n;

	if (!p) {
		if (VEC_RESERVE(set->procs, set->cap, set->n, 16))
			return -ENOMEM;
		p = &set->procs[set->n++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	if (p->state == PM_GIVEN_UP)
		return 0;
	if (p->state == PM_PENDING || p->state == PM_STALE) {
		char root_path[64];
		pid_t ns = perfmap__nspid(pid, &uid, &euid);
		struct procfs_creds creds;
		bool have_creds = !perfmap__creds(pid, &creds);

		if (!p->start_real_ns)
			p->start_real_ns = process_start_real_ns(pid);
		snprintf(root_path, sizeof(root_path), "/proc/%d/root", (int)pid);
		snprintf(p->path, sizeof(p->path), "tmp/perf-%d.map", (int)ns);
		root = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root < 0) {
			p->state = PM_GIVEN_UP; /* the process is gone; nothing to read, ever */
			return 0;
		}
		/* no credentials: the process is gone, or /proc hides them */
		p->pm = have_creds ? perfmap__open(root, p->path, uid, euid, &creds) : NULL;
		if (!have_creds)
			errno = EACCES;
		n = errno;
		close(root);
		if (!p->pm) {
			if (n == ENOENT)
				return 0; /* not written (yet): retried at the next refresh */
			fprintf(stderr, "infertrace: warning: perf map /%s of PID %d ignored (%s); "
				"its JIT frames stay unnamed\n", p->path, (int)pid,
				n == EINVAL ? "not a regular file" : n == EPERM ? "owned by another user" :
				n == EACCES ? "the process itself may not read it" :
				n == ELOOP ? "a symbolic link" : strerror(n));
			p->state = PM_GIVEN_UP;
			return -n;
		}
		if (!take_map(p, p->pm)) {
			perfmap__free(p->pm);
			p->pm = NULL;
			return 0;
		}
		p->state = PM_OPEN;
	}
	n = perfmap__read(p->pm, 0);
	if (n > 0) {
		/* seen after the read: each entry was written before this time */
		uint64_t t = clock_ns(CLOCK_MONOTONIC);

		for (uint32_t i = p->pm->n - (uint32_t)n; i < p->pm->n; i++)
			p->pm->ents[i].seen_ns = t;
	}
	st = perfmap__stats(p->pm);
	if (!p->warned_bad_lines && (st->garbage || st->huge || st->dropped)) {
		p->warned_bad_lines = true;
		fprintf(stderr, "infertrace: warning: perf map /%s of PID %d has malformed, over-long "
			"(> %d bytes) or surplus (> %u) lines; they are skipped\n",
			p->path, (int)pid, PERFMAP_MAX_LINE, PERFMAP_MAX_ENTRIES);
	}
	return n;
}

void perfmaps__refresh_all(struct perfmaps *set)
{
	for (size_t i = 0; set && i < set->n; i++)
		perfmaps__refresh(set, set->procs[i].pid);
}

void perfmaps__forget(struct perfmaps *set, pid_t pid)
{
	struct pm_proc *p = set ? set_find(set, pid) : NULL;

	if (!p)
		return;
	perfmap__free(p->pm);
	*p = set->procs[--set->n];
}

bool perfmaps__has(struct perfmaps *set, pid_t pid)
{
	struct pm_proc *p = set ? set_find(set, pid) : NULL;

	return p && p->pm;
}

const struct perfmap_entry *perfmaps__lookup(struct perfmaps *set, pid_t pid, uint64_t addr,
					     uint64_t t_ns, uint32_t *id)
{
	struct pm_proc *p = set ? set_find(set, pid) : NULL;

	return p && p->pm ? perfmap__lookup(p->pm, addr, t_ns, id) : NULL;
}

const struct perfmap_entry *perfmaps__entry(struct perfmaps *set, pid_t pid, uint32_t id)
{
	struct pm_proc *p = set ? set_find(set, pid) : NULL;

	return p && p->pm ? perfmap__entry(p->pm, id) : NULL;
}

int perfmap__set_env(void)
{
	const char *old = getenv("NODE_OPTIONS");
	char *v;
	int err = 0;

	if (!old || !*old) {
		err = setenv("NODE_OPTIONS", PERFMAP_NODE_SWITCHES, 1);
	} else if (!strstr(old, "--perf-basic-prof")) {
		if (asprintf(&v, "%s %s", old, PERFMAP_NODE_SWITCHES) < 0)
			return -ENOMEM;
		err = setenv("NODE_OPTIONS", v, 1);
		free(v);
	}
	/* no PYTHONPERFSUPPORT: Python frames are read from the interpreter's
	 * own frames (user/symbols/python.c); its perf trampolines would add a
	 * JIT frame per Python call and their cost */
	return err ? -errno : 0;
}

bool perfmap__stack_shows(const char *const *frames, int n, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++) {
		const char *f = frames[i];

		if (f && !strncmp(f, name, len) && (f[len] == '\0' || !strncmp(f + len, " (", 2)))
			return true;
	}
	return false;
}
