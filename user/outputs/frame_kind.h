// SPDX-License-Identifier: BSD-2-Clause
/* What kind of code a frame of a folded stack ran, read from its name alone
 * (the conventions of user/symbols): kernel frames end in `_[k]`, frames of
 * JIT code named by a perf map in `_[j]` (FlameGraph's marks), Python
 * frames are `qualname (file.py)` (read by BPF, or a perf-map trampoline's:
 * then with `_[j]`). Names without a mark, from folded files of other
 * tools, are read by their form: `name (file.js:line)`, V8's tags
 * (`Builtin:...`). The flame graphs colour by it; a diff or a folded file
 * read back has nothing else. */
#ifndef INFERTRACE_FRAME_KIND_H
#define INFERTRACE_FRAME_KIND_H

#include <stddef.h>

enum frame_kind {
	FRAME_NATIVE,  /* compiled code with a symbol, or an object+offset */
	FRAME_KERNEL,
	FRAME_PYTHON,
	FRAME_JIT,     /* JavaScript and other perf-map (JIT) code */
	FRAME_UNKNOWN, /* [unknown], [missing_user_stack] */
	FRAME_NKINDS,
};

/* The legend's words: "native", "kernel", "Python", "JIT / JS", "unknown". */
extern const char *const frame_kind_names[FRAME_NKINDS];

enum frame_kind frame_kind__of(const char *name, size_t len);

#endif
