// SPDX-License-Identifier: BSD-2-Clause
/* CPython support: finds the interpreter in a process and the offsets of the
 * structures bpf/python.bpf.h walks, keeps the names of the code objects BPF
 * reports, and folds a recorded Python stack into the native one.
 *
 * Detection reads the target itself: the `_PyRuntime` symbol of the
 * executable or libpython (ELF .dynsym/.symtab), the version from the
 * `_Py_DebugOffsets` at its start, read from the file's initial data (3.13+, cookie "xdebugpy"; the offsets are
 * then taken from there too), else from `Py_Version` (3.11+), else from the
 * file name (python3.10, libpython3.10.so). 3.10 to 3.12 use a table.
 *
 * A Python frame is written `qualname (file.py)`: co_qualname (co_name on
 * 3.10) and the basename of co_filename. Python frames take the place of
 * the native eval-loop frames (_PyEval_EvalFrameDefault) that ran them. */
#ifndef INFERTRACE_PYTHON_H
#define INFERTRACE_PYTHON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "infertrace.h"

struct syms_cache;

#define PY_EVAL_SYMBOL "_PyEval_EvalFrameDefault"

/* Offsets for a version from our table (3.10..3.12). 0 or -ENOTSUP. */
int python__table_offsets(uint32_t version, struct it_py_proc *out);
/* Offsets from a 3.13-layout _Py_DebugOffsets copy (dbg, len bytes) read
 * from the start of _PyRuntime. 0, -EINVAL (no cookie) or -ENOTSUP. */
int python__debug_offsets(const void *dbg, size_t len, struct it_py_proc *out);

enum py_detect {
	PY_DETECT_NONE = 0,        /* no interpreter in the process (yet) */
	PY_DETECT_OK = 1,          /* *out filled */
	PY_DETECT_UNSUPPORTED = 2, /* an interpreter whose version we cannot walk */
};

/* Looks for an interpreter among pid's captured mappings. `what` receives
 * "3.11 (/usr/bin/python3.11)" or why it is unsupported. */
enum py_detect python__detect(pid_t pid, struct syms_cache *syms, struct it_py_proc *out, char *what,
			      size_t len);

/* Names of code objects, from IT_EV_PY_CODE records. */
int python__add_code(const struct it_py_code_event *e);
/* "qualname (file.py)" of a recorded frame; "[unknown_python] (?)" when its
 * record was lost. Always fills buf. */
void python__frame_name(pid_t tgid, const struct it_py_frame *f, char *buf, size_t len);
/* Where recorded stacks are read from (`py_stacks` map fd; -1: none). */
void python__set_stacks_fd(int fd);
/* The recorded stack of key pystack: frames past its depth zeroed. 0, or
 * -ENOENT. Each key's stack is read from the map once and kept (a key's
 * value never changes), up to a bound; python__stack_reads counts the map
 * reads made. */
int python__stack(__u64 pystack, struct it_py_stack *out);
uint64_t python__stack_reads(void);
/* Splits a stack (frames leaf first) into its eval-loop calls: starts[j] is
 * the leaf-most frame of call j (leaf first), ends[j] one past its root-most.
 * Returns the number of calls (at most max). */
int python__segments(const struct it_py_stack *s, int *starts, int *ends, int max);
/* `py:` phases: fn gives the phase id of a function (qualname, file), 0 for
 * none; python__stack_phase then gives a recorded stack's innermost such
 * phase (0: none), for the per-phase stacks of samples no probe tagged. */
void python__set_phase_fn(int (*fn)(void *ctx, const char *qualname, const char *file), void *ctx);
int python__stack_phase(__u64 pystack, pid_t tgid);
/* Calls fn with each code object's "qualname (file.py)" known so far (the
 * same name may come once per process). */
void python__each_name(void (*fn)(const char *name, void *ctx), void *ctx);
/* Frees the names. */
void python__reset(void);

#endif
