// SPDX-License-Identifier: BSD-2-Clause
/* JIT frame names from perf maps (/tmp/perf-PID.map), the convention of
 * V8/node (--perf-basic-prof), Python 3.12+ (-X perf), the JVM with
 * perf-map-agent, .NET and LuaJIT: one `START SIZE NAME` line (hex START
 * and SIZE) per piece of generated code, appended as code is made.
 *
 * A map only grows and runtimes reuse code addresses (V8's GC frees code,
 * new code lands at the same place), so every entry keeps the time it was
 * first seen (CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns) and an
 * address is resolved at a time T: among the entries covering it, the
 * newest seen at or before T wins; when none was seen yet (the line was
 * written just before T and read after it), the oldest seen after T.
 *
 * A map can also be rewritten from its start: V8 opens it "w+", so a node
 * whose PID is recycled truncates the stale map an earlier process left.
 * A read that finds the file shorter than what was read, or its first
 * bytes changed, retires every entry read so far (they cover nothing from
 * then on; their ids stay valid for tokens already made) and reads the file
 * again from its start.
 *
 * The map is untrusted input (any local user can write /tmp): opened with
 * O_NONBLOCK|O_NOFOLLOW inside the process's root, it must be a regular file
 * owned by the process's uid or root; lines longer than PERFMAP_MAX_LINE and
 * malformed lines are skipped and counted; at most PERFMAP_MAX_ENTRIES
 * entries are kept per process. Not thread-safe. */
#ifndef INFERTRACE_PERFMAP_H
#define INFERTRACE_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_LINE 4096           /* bytes, newline excluded */
#define PERFMAP_MAX_ENTRIES (1u << 20)  /* per process; later lines are counted as dropped */
#define PERFMAP_MAX_SIZE (64ull << 20)  /* larger sizes are malformed lines */
#define PERFMAP_MAX_READ (16u << 20)    /* bytes read per refresh, so a runaway writer cannot stall the tracer */
#define PERFMAP_TIME_NEWEST UINT64_MAX  /* resolve against the newest entry */

struct perfmap_entry {
	uint64_t start, size;
	uint64_t seen_ns;   /* first read at (CLOCK_MONOTONIC) */
	char *name;         /* as the runtime wrote it */
	char *pretty;       /* frame form (perfmap__pretty), made on first use */
};

struct perfmap_stats {
	uint64_t entries, garbage, huge, dropped, bytes;
	uint64_t rewrites;  /* times the file was found rewritten from its start */
};

#define PERFMAP_HEAD 64     /* first bytes kept to tell a rewritten file */

/* What a map file is and holds now: to tell a stale map (an earlier
 * process's, under a recycled PID) from the one the process writes. */
struct perfmap_file {
	dev_t dev;
	ino_t ino;
	uint64_t size;
	uint64_t mtime_ns;          /* CLOCK_REALTIME */
	char head[PERFMAP_HEAD];    /* its first head_len bytes */
	uint32_t head_len;
};

/* ---- one map file ---- */
struct perfmap;

/* Opens path (O_NONBLOCK|O_NOFOLLOW) relative to dirfd (AT_FDCWD: as is),
 * beneath dirfd when it is a process's root; checks a regular file owned
 * by uid or root. NULL with errno set: ENOENT, ELOOP (a symlink), EINVAL
 * (not a regular file: a FIFO, a device), EPERM (another owner). */
struct procfs_creds;
/* creds: the process's own, which must allow it to read the file (NULL: no
 * such check); else NULL with errno EACCES. */
struct perfmap *perfmap__open(int dirfd, const char *path, uid_t uid, uid_t euid, const struct procfs_creds *creds);
void perfmap__free(struct perfmap *pm); /* accepts NULL */
/* Reads the complete lines added since the last read; their entries are
 * seen at now_ns. Returns the number of new entries, or -errno. */
int perfmap__read(struct perfmap *pm, uint64_t now_ns);
/* The open file's identity, size, modification time and first bytes.
 * 0, or -errno. */
int perfmap__file(const struct perfmap *pm, struct perfmap_file *f);
/* Reading starts at offset instead of the start (nothing read yet): the
 * end of a stale part that the process's own lines were appended to. */
void perfmap__start_at(struct perfmap *pm, uint64_t offset);
/* Entry covering addr valid at t_ns (PERFMAP_TIME_NEWEST: newest), with its
 * index in *id when id is not NULL; NULL when none covers addr. */
const struct perfmap_entry *perfmap__lookup(struct perfmap *pm, uint64_t addr, uint64_t t_ns, uint32_t *id);
const struct perfmap_entry *perfmap__entry(const struct perfmap *pm, uint32_t id);
/* The entry's frame form (perfmap__pretty), made once and kept; its raw
 * name when memory runs out. */
const char *perfmap_entry__pretty(const struct perfmap_entry *e);
const struct perfmap_stats *perfmap__stats(const struct perfmap *pm);

/* Frame form of a runtime's name into buf: V8's `JS:*name /dir/file.js:L:C`
 * (also LazyCompile:, Function:, Script:; tier marks * ~ ^ + dropped)
 * becomes `name (file.js:L)`, an empty name `(anonymous)`; CPython's
 * `py::qualname:/dir/file.py` becomes `qualname (file.py)`; anything else is
 * kept as written. ';' becomes ':' and newlines ' ' (folded format). */
void perfmap__pretty(const char *name, char *buf, size_t len);

/* ---- the maps of every traced process ---- */
struct perfmaps;

struct perfmaps *perfmaps__new(void);
void perfmaps__free(struct perfmaps *set); /* accepts NULL */
/* Opens pid's map if not yet (through /proc/PID/root, under the pid the
 * process has in its own namespace) and reads its new lines. A missing map
 * is retried at the next refresh; a hostile or unreadable one gets one
 * warning and is given up. A map last written more than
 * PERFMAP_STALE_SLACK_NS before the process started is an earlier
 * process's (PIDs are recycled; /tmp keeps the maps): it is not read, and
 * is looked at again at each refresh. Once the process writes it, reading
 * starts after the stale lines when they are still its start (appended
 * to, as CPython does), else at the start (rewritten, as V8 does).
 * Returns new entries, 0, or -errno. */
int perfmaps__refresh(struct perfmaps *set, pid_t pid);
/* process start (ticks of 10 ms, rounded down) against file times (coarse
 * clock) and a clock that NTP may have stepped since: generous */
#define PERFMAP_STALE_SLACK_NS 1000000000ull
void perfmaps__refresh_all(struct perfmaps *set);
/* Forgets pid (it exited and its pid may be reused): keeps nothing. */
void perfmaps__forget(struct perfmaps *set, pid_t pid);
/* Whether pid has an open map. */
bool perfmaps__has(struct perfmaps *set, pid_t pid);
const struct perfmap_entry *perfmaps__lookup(struct perfmaps *set, pid_t pid, uint64_t addr,
					     uint64_t t_ns, uint32_t *id);
const struct perfmap_entry *perfmaps__entry(struct perfmaps *set, pid_t pid, uint32_t id);
/* The pid a process has in its innermost PID namespace (NSpid), pid itself
 * when /proc says nothing more; uid and euid from the same file. */
pid_t perfmap__nspid(pid_t pid, uid_t *uid, uid_t *euid);
/* pid's file-access credentials, and whether its user namespace is ours
 * (where its capabilities count); 0 or -errno. */
int perfmap__creds(pid_t pid, struct procfs_creds *c);

/* A resolved JIT frame travels through stack aggregation as a token in
 * place of its address: a non-canonical address (top 16 bits 0x4a49, 'JI'),
 * never a user or kernel address, naming the entry. Tokens are odd so that
 * token - 1 (a caller's return-address adjustment) decodes the same. */
#define PERFMAP_TOKEN_TAG 0x4a49ull
static inline uint64_t perfmap__token(uint32_t id)
{
	return (PERFMAP_TOKEN_TAG << 48) | ((uint64_t)id << 1) | 1;
}
static inline bool perfmap__is_token(uint64_t addr)
{
	return (addr >> 48) == PERFMAP_TOKEN_TAG;
}
static inline uint32_t perfmap__token_id(uint64_t addr)
{
	return (uint32_t)((addr & 0xffffffffffffull) >> 1);
}

/* ---- launching a command with the runtimes' switches ---- */
/* Appends V8's perf-map switches to NODE_OPTIONS in this process's
 * environment, for a child to inherit. 0 or -errno. */
int perfmap__set_env(void);
/* functions only: plain --perf-basic-prof also logs code events to an
 * isolate-*-v8.log in the command's working directory (node 20) */
#define PERFMAP_NODE_SWITCHES "--perf-basic-prof-only-functions --interpreted-frames-native-stack"

/* ---- js: phases ---- */
/* Whether a stack (frames in pretty form, any order) shows function `name`:
 * a frame whose name part (before " (") equals it exactly. */
bool perfmap__stack_shows(const char *const *frames, int n, const char *name);

#endif
