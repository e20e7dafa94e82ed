// SPDX-License-Identifier: BSD-2-Clause
/* Symbolization of user and kernel addresses, built on elfutils libdwfl.
 *
 * A syms_cache holds, per process, the executable mappings captured from
 * /proc/PID/maps while the process lived (so stacks of processes that have
 * exited still symbolize), and per ELF file one opened module (shared by all
 * processes mapping it). Debug info is found through build-id or
 * .gnu_debuglink under /usr/lib/debug when installed; .symtab then .dynsym
 * otherwise. C++ names are demangled. */
#ifndef INFERTRACE_SYMS_H
#define INFERTRACE_SYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct syms_cache;

struct sym_info {
	const char *name;     /* demangled symbol name, NULL when unknown */
	const char *object;   /* basename of the mapped file, NULL when the address is in no file mapping */
	const char *path;     /* full path of the mapped file, NULL likewise */
	uint64_t sym_offset;  /* address - symbol start, when name != NULL */
	uint64_t obj_offset;  /* address as an offset into the object (ELF vaddr), for obj+0x... */
	bool jit;             /* named by the process's perf map (object "[jit]") */
	bool root;            /* a stack's outermost frame, named or not (syms_cache__mark_root) */
};

struct syms_cache *syms_cache__new(void);

/* What symbolization cost the tracer: CPU time of the calling thread
 * (CLOCK_THREAD_CPUTIME_ID) spent in each part, with counts. */
struct syms_stats {
	uint64_t captures, capture_ns;     /* /proc/PID/maps reads */
	uint64_t captures_skipped;         /* asked for by mmaps the last read had seen */
	uint64_t files, file_ns;           /* files opened (ELF headers, program headers) */
	uint64_t symtabs, symtab_ns;       /* symbol tables indexed (first lookup in a file) */
	uint64_t symtab_syms;              /* function symbols indexed */
	uint64_t symtabs_cached;           /* of symtabs: read from the symbol cache (symcache.h) */
	uint64_t symtabs_stored;           /* written to it */
};
const struct syms_stats *syms_cache__stats(const struct syms_cache *cache);
/* The symbol cache's directory, NULL when none is used (not needed yet,
 * turned off, or refused: *why says why, else NULL). */
const char *syms_cache__symcache(const struct syms_cache *cache, const char **why);
/* CPU time of the calling thread, ns (the clock syms_stats uses). */
uint64_t syms__thread_cpu_ns(void);
void syms_cache__free(struct syms_cache *cache); /* accepts NULL */

/* Reads /proc/PID/maps now and keeps its executable file mappings (replacing
 * an older capture of the same pid only when the read succeeds). 0 or -errno. */
int syms_cache__capture(struct syms_cache *cache, pid_t pid);
/* Same, for a capture asked for by an mmap or exec at since_ns
 * (CLOCK_MONOTONIC, as BPF's ktime): its mappings name the samples taken
 * from then on (syms_cache__file_tokenize). */
int syms_cache__capture_at(struct syms_cache *cache, pid_t pid, uint64_t since_ns);
/* Whether a capture exists for pid. */
bool syms_cache__has(const struct syms_cache *cache, pid_t pid);
/* Copies the captured mappings of `from` to `to` (a forked child that exited
 * before it could be read shares its parent's mappings). 0 or -errno. */
int syms_cache__inherit(struct syms_cache *cache, pid_t from, pid_t to);

/* One captured executable file mapping, for an unwinder that builds its own
 * view of the process (libdwfl modules at process addresses). */
struct syms_mapping {
	uint64_t start, end;
	uint64_t bias;        /* process address - ELF vaddr */
	const char *path;     /* as /proc/PID/maps named it */
	const char *opened;   /* the path that opened as the mapped regular file, or NULL */
	bool elf;             /* the file opened as ELF (bias is meaningful) */
	uint64_t offset;      /* file offset of start, as /proc/PID/maps gave it */
	const unsigned char *build_id; /* the file's GNU build-id; NULL when none was read */
	size_t build_id_len;
};

/* Changes whenever pid's capture is replaced (0: none): a view built from
 * the mappings is still current while this stays the same. */
uint64_t syms_cache__generation(struct syms_cache *cache, pid_t pid);

/* The captured mapping that holds addr in pid. 0, or -ENOENT. */
int syms_cache__mapping_of(struct syms_cache *cache, pid_t pid, uint64_t addr, struct syms_mapping *out);

/* Calls fn for each captured executable file mapping of pid, in address
 * order. Returns the number of mappings, or -ENOENT when pid has none. */
int syms_cache__mappings(struct syms_cache *cache, pid_t pid,
			 void (*fn)(void *arg, const struct syms_mapping *m), void *arg);

/* Resolves a user address of pid. Returns 0 when the address falls in a
 * captured mapping (out->name may still be NULL: no symbol covers it),
 * -ENOENT otherwise (out->object NULL), -ENOMEM. Strings live as long as
 * the cache. */
int syms_cache__resolve(struct syms_cache *cache, pid_t pid, uint64_t addr, struct sym_info *out);
/* Notes that the frame at addr (looked up as syms_cache__resolve takes it:
 * a caller's return address less one) was the outermost frame of a stack
 * the unwinder followed to its end: its call-frame information says it has
 * no caller (a thread's or the program's first function). Kept per file
 * offset, so that a stack ending there reads as complete when the function
 * has no name (glibc's clone3 and start_thread without libc6-dbg). */
void syms_cache__mark_root(struct syms_cache *cache, pid_t pid, uint64_t addr);

/* Formats one user frame the way stacks.folded shows it (no ' ' or ';':
 * FlameGraph splits on them; see frame__copy in syms.c for C++ names):
 * the demangled name without offset; "libfoo.so+0x1234" (object basename +
 * ELF vaddr, what addr2line takes) when no symbol covers the address; or
 * "[unknown]" when the address is in no captured mapping. Always fills buf
 * (truncating); returns what syms_cache__resolve returned. */
int syms_cache__format(struct syms_cache *cache, pid_t pid, uint64_t addr, char *buf, size_t len);

/* JIT code named by perf maps (perfmap.h). Where an address lies in no
 * captured file mapping (anonymous executable memory, or none), resolve and
 * format ask the process's perf map: a token (perfmap__token) names the entry
 * chosen at the sample's time; a plain address gets the newest entry (stacks
 * aggregated in the kernel carry no time). JIT frames keep the runtime's form
 * `name (file.js:line)`, spaces included. On by default. */
void syms_cache__jit_enable(struct syms_cache *cache, bool on);
/* Reads the new lines of pid's perf map (opening it on first sight). */
void syms_cache__jit_refresh(struct syms_cache *cache, pid_t pid);
/* The perf maps (NULL when off). */
struct perfmaps *syms_cache__jit_maps(struct syms_cache *cache);
/* Whether pid has a perf map open. */
bool syms_cache__jit_has(struct syms_cache *cache, pid_t pid);
/* Replaces, in a user stack of pid taken at t_ns (leaf first: the sampled pc,
 * then return addresses), every frame that lies in no captured mapping and
 * that the perf map names at t_ns by that entry's token, so that aggregation
 * keeps the name valid when the sample was taken. Reads the map first.
 * Returns the number of frames replaced. */
int syms_cache__jit_tokenize(struct syms_cache *cache, pid_t pid, uint64_t *ips, int n, uint64_t t_ns);

/* Library frames across a dlclose: a captured mapping may later hold
 * another file at the same address. Replaces, in a user stack of pid taken
 * at t_ns (leaf first), every frame in a file mapping by a token naming that
 * mapping as captured at t_ns (the newest capture read at or before t_ns
 * that maps it, else the oldest read after), so that aggregation keeps the
 * file the address had when the sample was taken. A token is a
 * non-canonical address (top 16 bits SYMS_FILE_TOKEN_TAG), odd, so that
 * token - 1 (a caller's return-address adjustment) names the address - 1.
 * resolve, format and mapping_of take tokens; syms_cache__address gives the
 * address back. Returns the number of frames replaced. */
#define SYMS_FILE_TOKEN_TAG 0x4d46ull
static inline bool syms__is_file_token(uint64_t addr)
{
	return (addr >> 48) == SYMS_FILE_TOKEN_TAG;
}
int syms_cache__file_tokenize(struct syms_cache *cache, pid_t pid, uint64_t *ips, int n, uint64_t t_ns);
/* The process address a token stands for; any other address unchanged. */
uint64_t syms_cache__address(const struct syms_cache *cache, uint64_t addr);

/* Kernel symbols from /proc/kallsyms. */
struct ksyms;
/* NULL with errno set on failure; errno EPERM when every address reads 0
 * (kptr_restrict, or no CAP_SYSLOG): the names alone are no use. */
struct ksyms *ksyms__load(void);
struct ksyms *ksyms__load_file(const char *path); /* same, another file (tests) */
void ksyms__free(struct ksyms *ksyms);     /* accepts NULL */
/* Name of the function containing addr, or NULL. */
const char *ksyms__map_addr(const struct ksyms *ksyms, uint64_t addr, uint64_t *offset);

/* Demangles a C++ (Itanium ABI) name into buf; returns buf, or `name` itself
 * when it is not mangled. */
const char *syms__demangle(const char *name, char *buf, size_t len);

#endif
