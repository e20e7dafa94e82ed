// SPDX-License-Identifier: BSD-2-Clause
/* --config FILE: JSON with the fields of the record options, e.g.
 *   {"output": "out", "frequency": 199, "cycle": "run_cycle",
 *    "phases": {"llm_inference": "libllama:llama_decode"},
 *    "counts": {"tokens": "libllama:llama_decode"}, "presets": ["sqlite"],
 *    "command": ["./loop", "--n", "10"]}
 * Applied before the command line: options given there win. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config_file.h"

/* strings the options point to: they live until the process exits */
static char **kept;
static size_t nkept;

static void free_kept(void)
{
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
	kept = NULL;
	nkept = 0;
}

static char *keep(char *p)
{
	char **v = realloc(kept, (nkept + 1) * sizeof(*v));

	if (!v)
		return p;
	if (!kept)
		atexit(free_kept);
	kept = v;
	kept[nkept++] = p;
	return p;
}

static int bad(const char *path, const char *key, const char *want)
{
	fprintf(stderr, "infertrace: %s: \"%s\" must be %s\n", path, key, want);
	return -EINVAL;
}

static int get_uint(const char *path, const char *key, json_t *v, long min, long max, unsigned long *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		char want[96];

		snprintf(want, sizeof(want), "an integer in %ld..%ld", min, max);
		return bad(path, key, want);
	}
	*out = json_integer_value(v);
	return 0;
}

/* {"NAME": "SPEC[,SPEC]" | ["SPEC", ...]} into arr (names given twice: the later wins) */
static int get_named(const char *path, const char *key, json_t *v, struct named_spec *arr, int *n)
{
	const char *name;
	json_t *spec;

	if (!json_is_object(v))
		return bad(path, key, "an object {NAME: SPEC or [SPEC, ...]}");
	json_object_foreach(v, name, spec) {
		char *specs = NULL;
		size_t len = 0;

		if (json_is_string(spec) && json_string_length(spec)) {
			specs = strdup(json_string_value(spec));
		} else if (json_is_array(spec) && json_array_size(spec)) {
			FILE *m = open_memstream(&specs, &len);
			size_t i;
			json_t *s;

			json_array_foreach(spec, i, s) {
				if (!json_is_string(s) || !json_string_length(s)) {
					fclose(m);
					free(specs);
					return bad(path, key, "an object whose values are specs or arrays of specs");
				}
				fprintf(m, "%s%s", i ? "," : "", json_string_value(s));
			}
			fclose(m);
		} else {
			return bad(path, key, "an object whose values are specs or arrays of specs");
		}
		if (!*name || *n >= MAX_NAMED_PROBES) {
			free(specs);
			return bad(path, key, "at most 64 non-empty names");
		}
		arr[*n].name = strdup(name);
		arr[*n].specs = specs;
		(*n)++;
	}
	return 0;
}

static const char *str_of(json_t *v)
{
	return json_is_string(v) ? keep(strdup(json_string_value(v))) : NULL;
}

static int apply_key(struct record_opts *o, const char *path, const char *key, json_t *v, bool cli_target)
{
	unsigned long u;
	int err = 0;

	if (!strcmp(key, "output") || !strcmp(key, "output_dir")) {
		if (!(o->output_dir = str_of(v)))
			return bad(path, key, "a directory name");
	} else if (!strcmp(key, "frequency")) {
		if (!(err = get_uint(path, key, v, 1, 100000, &u)))
			o->frequency = u;
	} else if (!strcmp(key, "duration") || !strcmp(key, "duration_s")) {
		if (!json_is_number(v) || json_number_value(v) <= 0)
			return bad(path, key, "a number of seconds > 0");
		o->duration_s = json_number_value(v);
	} else if (!strcmp(key, "pid") || !strcmp(key, "pids")) {
		size_t i;
		json_t *p;

		if (json_is_integer(v)) {
			json_t *a = json_array();

			json_array_append(a, v);
			err = apply_key(o, path, key, a, cli_target);
			json_decref(a);
			return err;
		}
		if (!json_is_array(v))
			return bad(path, key, "a PID or an array of PIDs");
		json_array_foreach(v, i, p) {
			if (get_uint(path, key, p, 1, INT_MAX, &u) || o->npids >= MAX_ROOT_PIDS)
				return bad(path, key, "a PID or an array of at most 64 PIDs");
			if (!cli_target)
				o->pids[o->npids++] = u;
		}
	} else if (!strcmp(key, "command")) {
		size_t i, n = json_array_size(v);
		json_t *a;

		if (!json_is_array(v) || !n)
			return bad(path, key, "a non-empty array of strings (argv)");
		char **argv = (char **)keep((char *)calloc(n + 1, sizeof(*argv)));

		json_array_foreach(v, i, a) {
			if (!json_is_string(a))
				return bad(path, key, "a non-empty array of strings (argv)");
			argv[i] = keep(strdup(json_string_value(a)));
		}
		if (!cli_target)
			o->command = argv;
	} else if (!strcmp(key, "cycle")) {
		if (!json_is_null(v) && !(o->cycle_spec = str_of(v)))
			return bad(path, key, "a probe spec");
	} else if (!strcmp(key, "cycle_marker")) {
		if (!json_is_null(v) && !(o->cycle_marker_spec = str_of(v)))
			return bad(path, key, "a probe spec");
	} else if (!strcmp(key, "phases")) {
		return get_named(path, key, v, o->phases, &o->nphases);
	} else if (!strcmp(key, "counts")) {
		return get_named(path, key, v, o->counts, &o->ncounts);
	} else if (!strcmp(key, "presets") || !strcmp(key, "preset")) {
		size_t i;
		json_t *p;

		if (json_is_string(v)) {
			if (o->npresets < 8)
				o->presets[o->npresets++] = str_of(v);
			return 0;
		}
		if (!json_is_array(v))
			return bad(path, key, "a preset name or an array of names");
		json_array_foreach(v, i, p) {
			if (!json_is_string(p) || o->npresets >= 8)
				return bad(path, key, "an array of at most 8 preset names");
			o->presets[o->npresets++] = str_of(p);
		}
	} else if (!strcmp(key, "comm")) {
		if (!json_is_null(v) && !(o->comm = str_of(v)))
			return bad(path, key, "a process name");
	} else if (!strcmp(key, "gpu")) {
		const char *g = json_string_value(v);

		if (!g || (strcmp(g, "auto") && strcmp(g, "nvml") && strcmp(g, "jetson") && strcmp(g, "none")))
			return bad(path, key, "one of auto, nvml, jetson, none");
		o->gpu_mode = str_of(v);
	} else if (!strcmp(key, "call_graph")) {
		const char *g = json_string_value(v);

		if (g && !strcmp(g, "fp")) {
			o->call_graph = CALL_GRAPH_FP;
		} else if (g && !strncmp(g, "dwarf", 5) && (g[5] == 0 || g[5] == ',')) {
			char *end;
			unsigned long size = g[5] ? strtoul(g + 6, &end, 10) : o->dwarf_stack_size;

			if (g[5] && (*end || size < 512 || size > 65528))
				return bad(path, key, "\"fp\" or \"dwarf[,SIZE]\" with SIZE 512..65528");
			o->call_graph = CALL_GRAPH_DWARF;
			o->dwarf_stack_size = size & ~7ul;
		} else {
			return bad(path, key, "\"fp\" or \"dwarf[,SIZE]\"");
		}
	} else if (!strcmp(key, "side_period") || !strcmp(key, "side_period_s")) {
		if (!json_is_number(v) || json_number_value(v) < 0.01)
			return bad(path, key, "a number of seconds >= 0.01");
		o->side_period_s = json_number_value(v);
	} else if (!strcmp(key, "min_block_us")) {
		if (!(err = get_uint(path, key, v, 0, 1000000000, &u)))
			o->min_block_us = u;
	} else if (!strcmp(key, "stack_entries")) {
		if (!(err = get_uint(path, key, v, 256, 1 << 22, &u)))
			o->stack_map_entries = u;
	} else if (!strcmp(key, "follow_children")) {
		if (!json_is_boolean(v))
			return bad(path, key, "true or false");
		o->no_follow_children = !json_is_true(v);
	} else if (!strcmp(key, "verbose")) {
		if (!json_is_boolean(v))
			return bad(path, key, "true or false");
		o->verbose = json_is_true(v);
	} else {
		fprintf(stderr, "infertrace: %s: unknown option \"%s\"; options: output, frequency, duration, "
			"pid, command, cycle, cycle_marker, phases, counts, presets, comm, gpu, call_graph, "
			"side_period, min_block_us, stack_entries, follow_children, verbose\n", path, key);
		return -EINVAL;
	}
	return err;
}

int config_file__apply(struct record_opts *o, const char *path, bool cli_target)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr), *v;
	const char *key;
	int err = 0;

	if (!root) {
		fprintf(stderr, "infertrace: --config %s: line %d: %s\n", path, jerr.line, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		fprintf(stderr, "infertrace: --config %s: expected a JSON object of options\n", path);
		json_decref(root);
		return -EINVAL;
	}
	json_object_foreach(root, key, v) {
		err = apply_key(o, path, key, v, cli_target);
		if (err)
			break;
	}
	json_decref(root);
	return err;
}

const char *config_file__find_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}
