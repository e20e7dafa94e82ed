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
#define PRESET_MAX_ARGS 8  /* calls whose arguments a preset reads */

/* llama.cpp's decode call: each batch is timed in the prompt or generation
 * phase and its tokens counted by its size; a prompt batch at position 0
 * starts a cycle (unless --cycle or --cycle-marker is given). */
struct preset_batch {
	const char *specs;
	const char *prompt_phase, *generate_phase;
	const char *prompt_count, *generate_count;
};

struct preset_args {
	const char *specs;
	int which;           /* enum it_llama_arg */
};

struct preset {
	const char *name;
	const char *description;
	const char *cycle_marker;      /* NULL: none */
	struct preset_batch batch;     /* .specs NULL: none */
	struct preset_args args[PRESET_MAX_ARGS];
	struct preset_probe phases[PRESET_MAX_NAMED];
	struct preset_probe counts[PRESET_MAX_NAMED];
	/* probes of a phase placed only when the phase cannot be timed by
	 * its Python callers (module-level code called the library) */
	struct preset_probe fallback[PRESET_MAX_NAMED];
};

const struct preset *preset__find(const char *name);
/* "llama.cpp, sqlite, ..." for error messages. */
const char *preset__names(void);

#endif
