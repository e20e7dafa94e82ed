// SPDX-License-Identifier: BSD-2-Clause
/* Shared by the libFuzzer harnesses: the readers under test take a path, so
 * the input is written to a file first. */
#ifndef INFERTRACE_FUZZ_COMMON_H
#define INFERTRACE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The input as a file; its path is static, rewritten for every input. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/infertrace-fuzz-%d%s", (int)getpid(), suffix);
	f = fopen(path, "we");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}

/* The input as a NUL-terminated string, or NULL. Freed by the caller. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = 0;
	}
	return s;
}

#endif
