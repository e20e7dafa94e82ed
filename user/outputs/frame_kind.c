// SPDX-License-Identifier: BSD-2-Clause
#include <stdbool.h>
#include <string.h>

#include "frame_kind.h"

const char *const frame_kind_names[FRAME_NKINDS] = {
	[FRAME_NATIVE] = "native", [FRAME_KERNEL] = "kernel", [FRAME_PYTHON] = "Python",
	[FRAME_JIT] = "JIT / JS", [FRAME_UNKNOWN] = "unknown",
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

static bool starts_with(const char *s, size_t n, const char *prefix)
{
	size_t m = strlen(prefix);

	return n >= m && !memcmp(s, prefix, m);
}

/* V8's perf-map tags that perfmap__pretty keeps (it strips JS:, LazyCompile:,
 * Function: and Script: into `name (file.js:line)`); a C++ scope would have
 * two colons. */
static bool v8_tagged(const char *s, size_t n)
{
	static const char *const tags[] = { "Builtin:", "BytecodeHandler:", "Stub:", "RegExp:", "Eval:", "Handler:" };

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		size_t m = strlen(tags[i]);

		if (starts_with(s, n, tags[i]) && (n == m || s[m] != ':'))
			return true;
	}
	return false;
}

/* The location of `name (LOC)`: the last " (" of a name ending in ")". */
static bool location(const char *s, size_t n, const char **loc, size_t *len)
{
	if (n < 4 || s[n - 1] != ')')
		return false;
	for (size_t i = n - 1; i-- > 0;)
		if (s[i] == '(' && i > 0 && s[i - 1] == ' ') {
			*loc = s + i + 1;
			*len = n - i - 2;
			return *len > 0;
		}
	return false;
}

/* file:line, as perfmap__pretty writes a JIT frame's location */
static bool file_line(const char *loc, size_t len)
{
	size_t digits = 0;

	while (digits < len && loc[len - 1 - digits] >= '0' && loc[len - 1 - digits] <= '9')
		digits++;
	return digits && digits < len - 1 && loc[len - 1 - digits] == ':';
}

enum frame_kind frame_kind__of(const char *name, size_t len)
{
	bool jit = ends_with(name, len, "_[j]");
	const char *loc;
	size_t n;

	if (ends_with(name, len, "_[k]"))
		return FRAME_KERNEL;
	if (jit)
		len -= 4;
	if (starts_with(name, len, "[unknown_python]"))
		return FRAME_PYTHON;
	if (starts_with(name, len, "[unknown]") || starts_with(name, len, "[missing"))
		return FRAME_UNKNOWN;
	if (!location(name, len, &loc, &n))
		return jit || v8_tagged(name, len) ? FRAME_JIT : FRAME_NATIVE;
	/* python.c names a frame by its code object's file's base name; a
	 * frozen module's is <frozen NAME>, exec'd text's <string>, none `?` */
	if (ends_with(loc, n, ".py") || ends_with(loc, n, ".pyw") || ends_with(loc, n, ".pyx") ||
	    starts_with(loc, n, "<frozen ") || (n == 8 && !memcmp(loc, "<string>", 8)) || (n == 1 && *loc == '?'))
		return FRAME_PYTHON;
	if (jit || file_line(loc, n) || ends_with(loc, n, ".js") || ends_with(loc, n, ".mjs") ||
	    ends_with(loc, n, ".cjs"))
		return FRAME_JIT;
	return FRAME_NATIVE;
}
