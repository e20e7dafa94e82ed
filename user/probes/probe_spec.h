// SPDX-License-Identifier: BSD-2-Clause
/* Probe specs: `[OBJECT:]SYMBOL` and `usdt:OBJECT:PROVIDER:NAME[:END]`.
 * OBJECT is a path, or a library name matched against the target's libraries
 * (libllama matches libllama.so.1 and libllama.v0.5.0.so); none means the
 * main executable. Symbols are found with libelf in .symtab and .dynsym. */
#ifndef INFERTRACE_PROBE_SPEC_H
#define INFERTRACE_PROBE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nearest;

enum spec_kind {
	SPEC_FUNCTION,
	SPEC_USDT,
};

struct probe_spec {
	enum spec_kind kind;
	char *object;    /* as given; NULL: the main executable */
	char *symbol;    /* function, or USDT probe name (begin of a pair) */
	char *provider;  /* USDT */
	char *usdt_end;  /* USDT pair: probe that ends the phase/cycle, or NULL */
	char *text;      /* the spec as written */
};

/* Parses one spec. On error writes a one-line reason into err. 0 or -EINVAL. */
int probe_spec__parse(const char *text, struct probe_spec *out, char *err, size_t errlen);
void probe_spec__free(struct probe_spec *s);
/* Whether OBJECT is a path (contains '/') rather than a library name. */
bool probe_spec__object_is_path(const struct probe_spec *s);
/* Whether a file's basename matches a library name (libllama ~ libllama.so.1,
 * libllama.v0.5.0.so, libggml-cpu ~ libggml-cpu-haswell.so). */
bool probe_spec__name_matches(const char *name, const char *path);

/* File offset of SYMBOL in the ELF file at path (exact name, or a C++
 * function whose demangled name without parameters equals it). 0, -ENOENT
 * when absent, or -errno when the file cannot be read. */
int elf_symbol_offset(const char *path, const char *symbol, uint64_t *offset);
/* Offers every function symbol of the ELF file to nr (nearest.h), for the
 * names nearest a symbol it lacks. 0 or -errno. */
int elf_nearest_symbols(const char *path, struct nearest *nr);
/* Whether the ELF file has the USDT note PROVIDER:NAME. 0, -ENOENT, -errno. */
int elf_has_usdt(const char *path, const char *provider, const char *name);

/* The libraries a program loads at start-up: the DT_NEEDED closure of the
 * executable, found with the dynamic loader's search rules (RPATH, 
 * LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default directories). Returns the
 * number of paths stored in paths[] (malloc'd strings), or -errno. */
int elf_needed_closure(const char *exe, char **paths, int max);
/* Calls fn(path, ctx) for every file a live process maps executable (as
 * /proc/PID/maps lists it; deleted files left out). 0 or -errno. */
int proc_exec_files(pid_t pid, void (*fn)(const char *path, void *ctx), void *ctx);
/* Resolves a command name through PATH like execvp. 0 or -ENOENT. */
int resolve_command_path(const char *cmd, char *out, size_t len);

#endif
