// SPDX-License-Identifier: BSD-2-Clause
/* Built-in probe sets (--preset NAME). Preset probes may name libraries the
 * target loads later (dlopen): they are placed when the library is mapped,
 * and symbols a library version lacks are skipped. */
#ifndef INFERTRACE_PRESETS_H
#define INFERTRACE_PRESETS_H

struct preset_probe {
	const char *name;   /* phase or count name */
	const char *specs;  /* comma-separated probe specs */
};

#define PRESET_MAX_NAMED 4 /* phases, and counts, per preset */

struct preset {
	const char *name;
	const char *description;
	const char *cycle_marker;      /* NULL: none */
	struct preset_probe phases[PRESET_MAX_NAMED];
	struct preset_probe counts[PRESET_MAX_NAMED];
};

const struct preset *preset__find(const char *name);
/* "llama.cpp, sqlite, ..." for error messages. */
const char *preset__names(void);

#endif
