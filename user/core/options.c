// SPDX-License-Identifier: BSD-2-Clause
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_file.h"
#include "options.h"

static const char record_doc[] =
"Record an LLM-inference experiment: CPU samples with stacks, cycles and phases.\n"
"\n"
"USAGE:\n"
"  infertrace record [OPTIONS] -- COMMAND [ARGS...]\n"
"  infertrace record [OPTIONS] -p PID[,PID...]\n"
"\n"
"A launched COMMAND is started stopped, attached to, then released, so its\n"
"first instructions are sampled too. Threads and child processes forked after\n"
"the start are followed. Recording ends when the target exits, after -d\n"
"SECONDS, or on SIGINT/SIGTERM; in every case the outputs are written.\n"
"\n"
"PROBE SPEC: [OBJECT:]SYMBOL, OBJECT a path or a library name matched against\n"
"the target's mappings (libllama matches libllama.so.1); no OBJECT means the\n"
"main executable. usdt:OBJECT:PROVIDER:NAME names a USDT probe.\n"
"\n"
"EXAMPLES:\n"
"  infertrace record -- ./my_experiment --cycles 10\n"
"  infertrace record -F 999 -d 30 -p 1234,1240\n"
"  infertrace record --cycle run_cycle --phase llm_inference=libllama:llama_decode \\\n"
"      --count tokens=libllama:llama_decode -- ./loop\n"
"  infertrace record --preset llama.cpp -o out -- node driver.mjs\n"
"\n"
"OPTIONS:";

enum {
	OPT_CYCLE = 0x100,
	OPT_CYCLE_MARKER,
	OPT_PHASE,
	OPT_COUNT,
	OPT_PRESET,
	OPT_CONFIG,
	OPT_COMM,
	OPT_GPU,
	OPT_SIDE_PERIOD,
	OPT_MIN_BLOCK,
	OPT_CALL_GRAPH,
	OPT_NO_FOLLOW,
	OPT_STACK_ENTRIES,
	OPT_THRESHOLD,
	OPT_JIT_MAPS,
};

static const struct argp_option record_options[] = {
	{ "output", 'o', "DIR", 0, "Output directory (default ./infertrace-out)", 0 },
	{ "frequency", 'F', "HZ", 0, "CPU sampling frequency in Hz (default 99)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after this long (default: when the target exits)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "Trace these running processes (all their threads)", 0 },
	{ "cycle", OPT_CYCLE, "SPEC", 0, "Each call of this function is one experiment cycle", 1 },
	{ "cycle-marker", OPT_CYCLE_MARKER, "SPEC", 0, "Each call of this function starts a new cycle", 1 },
	{ "phase", OPT_PHASE, "NAME=SPEC[,SPEC]", 0, "Time inside these functions is phase NAME (repeatable)", 1 },
	{ "count", OPT_COUNT, "NAME=SPEC[,SPEC]", 0, "Count calls per cycle (repeatable); 'tokens' gives tokens/s", 1 },
	{ "preset", OPT_PRESET, "NAME", 0, "Built-in probe set: llama.cpp, sqlite, cuda (repeatable)", 1 },
	{ "config", OPT_CONFIG, "FILE", 0, "Read these options from a JSON file", 1 },
	{ "comm", OPT_COMM, "NAME", 0, "Also follow new processes named NAME", 2 },
	{ "no-follow-children", OPT_NO_FOLLOW, NULL, 0, "Do not follow child processes", 2 },
	{ "call-graph", OPT_CALL_GRAPH, "fp|dwarf[,SIZE]", 0, "User stacks: frame pointers, or a copy of SIZE bytes unwound with .eh_frame (default dwarf,65528)", 2 },
	{ "stack-entries", OPT_STACK_ENTRIES, "N", 0, "Distinct stacks kept in the kernel (default 16384)", 2 },
	{ "min-block-us", OPT_MIN_BLOCK, "US", 0, "Ignore off-CPU intervals shorter than this (default 1)", 2 },
	{ "jit-maps", OPT_JIT_MAPS, "on|read|off", 0, "JIT frame names from /tmp/perf-PID.map: on (default) also passes node's and Python's perf-map switches to the launched command; read only reads the maps", 2 },
	{ "gpu", OPT_GPU, "auto|nvml|jetson|none", 0, "GPU side data source (default auto)", 3 },
	{ "side-period", OPT_SIDE_PERIOD, "SECONDS", 0, "Side-data sampling period (default 1)", 3 },
	{ "threshold", OPT_THRESHOLD, "NAME=VALUE", 0, "Bottleneck rule threshold (repeatable): inference_pct=60, "
	  "database_pct=15, mode_pct=10, memory_pct=80, runq_pct=20, offcpu_pct=50, gpu_util_pct=70, "
	  "gpu_sync_pct=30, leak_mb_per_cycle=1", 3 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's debug output", 4 },
	{},
};

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int parse_named(struct argp_state *state, const char *opt, const char *arg,
		       struct named_spec *arr, int *n)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		argp_error(state, "--%s expects NAME=SPEC, got '%s'", opt, arg);
		return EINVAL;
	}
	if (*n >= MAX_NAMED_PROBES) {
		argp_error(state, "too many --%s options (at most %d)", opt, MAX_NAMED_PROBES);
		return EINVAL;
	}
	/* a name given again (e.g. in --config, then on the command line): the later wins */
	for (int i = 0; i < *n; i++) {
		if (strlen(arr[i].name) == (size_t)(eq - arg) && !strncmp(arr[i].name, arg, eq - arg)) {
			free(arr[i].specs);
			arr[i].specs = strdup(eq + 1);
			return 0;
		}
	}
	arr[*n].name = strndup(arg, eq - arg);
	arr[*n].specs = strdup(eq + 1);
	(*n)++;
	return 0;
}

static int parse_pids(struct argp_state *state, struct record_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;
	int err = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 1, INT_MAX, &v)) {
			argp_error(state, "invalid PID '%s': expected a positive number", tok);
			err = EINVAL;
			break;
		}
		if (o->npids >= MAX_ROOT_PIDS) {
			argp_error(state, "too many PIDs (at most %d)", MAX_ROOT_PIDS);
			err = EINVAL;
			break;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static error_t record_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct record_opts *o = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case 'o':
		o->output_dir = arg;
		break;
	case 'F':
		if (parse_uint(arg, 1, 100000, &v))
			argp_error(state, "invalid frequency '%s': expected 1..100000 Hz", arg);
		o->frequency = v;
		break;
	case 'd':
		o->duration_s = strtod(arg, &end);
		if (*end || end == arg || o->duration_s <= 0)
			argp_error(state, "invalid duration '%s': expected seconds > 0", arg);
		break;
	case 'p':
		if (o->cli_target != 'p')
			o->npids = 0; /* the command line's PIDs replace the file's */
		o->cli_target = 'p';
		return parse_pids(state, o, arg);
	case OPT_CYCLE:
		o->cycle_spec = arg;
		break;
	case OPT_CYCLE_MARKER:
		o->cycle_marker_spec = arg;
		break;
	case OPT_PHASE:
		return parse_named(state, "phase", arg, o->phases, &o->nphases);
	case OPT_COUNT:
		return parse_named(state, "count", arg, o->counts, &o->ncounts);
	case OPT_PRESET:
		if (o->npresets >= (int)(sizeof(o->presets) / sizeof(o->presets[0])))
			argp_error(state, "too many --preset options");
		o->presets[o->npresets++] = arg;
		break;
	case OPT_CONFIG:
		o->config_file = arg;
		break;
	case OPT_COMM:
		o->comm = arg;
		break;
	case OPT_NO_FOLLOW:
		o->no_follow_children = true;
		break;
	case OPT_GPU:
		if (strcmp(arg, "auto") && strcmp(arg, "nvml") && strcmp(arg, "jetson") && strcmp(arg, "none"))
			argp_error(state, "invalid --gpu '%s': expected auto, nvml, jetson or none", arg);
		o->gpu_mode = arg;
		break;
	case OPT_JIT_MAPS:
		if (strcmp(arg, "on") && strcmp(arg, "read") && strcmp(arg, "off"))
			argp_error(state, "invalid --jit-maps '%s': expected on, read or off", arg);
		o->jit_maps = arg;
		break;
	case OPT_SIDE_PERIOD:
		o->side_period_s = strtod(arg, &end);
		if (*end || end == arg || o->side_period_s < 0.01)
			argp_error(state, "invalid --side-period '%s': expected seconds >= 0.01", arg);
		break;
	case OPT_MIN_BLOCK:
		if (parse_uint(arg, 0, 1000000000, &v))
			argp_error(state, "invalid --min-block-us '%s'", arg);
		o->min_block_us = v;
		break;
	case OPT_CALL_GRAPH:
		if (!strcmp(arg, "fp")) {
			o->call_graph = CALL_GRAPH_FP;
		} else if (!strncmp(arg, "dwarf", 5) && (arg[5] == 0 || arg[5] == ',')) {
			o->call_graph = CALL_GRAPH_DWARF;
			if (arg[5] == ',' && parse_uint(arg + 6, 512, 65528, &v))
				argp_error(state, "invalid dwarf stack size '%s': expected 512..65528 bytes", arg + 6);
			else if (arg[5] == ',')
				o->dwarf_stack_size = v & ~7ul;
		} else {
			argp_error(state, "invalid --call-graph '%s': expected fp or dwarf[,SIZE]", arg);
		}
		break;
	case OPT_STACK_ENTRIES:
		if (parse_uint(arg, 256, 1 << 22, &v))
			argp_error(state, "invalid --stack-entries '%s': expected 256..4194304", arg);
		o->stack_map_entries = v;
		break;
	case OPT_THRESHOLD: {
		char *eq = strchr(arg, '='), name[64];
		double v;

		if (!eq || eq - arg >= (long)sizeof(name)) {
			argp_error(state, "--threshold expects NAME=VALUE, got '%s'", arg);
			break;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		v = strtod(eq + 1, &end);
		if (*end || end == eq + 1 || rule_thresholds__set(&o->thresholds, name, v))
			argp_error(state, "invalid --threshold '%s': see 'infertrace record --help' for the names", arg);
		break;
	}
	case 'v':
		o->verbose = true;
		break;
	case ARGP_KEY_ARG:
		/* first non-option argument: the command; argp stops here (ARGP_IN_ORDER off,
		 * "--" handled by argp) and we take the rest verbatim */
		o->command = &state->argv[state->next - 1];
		o->cli_target = 'c';
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (o->cli_target && o->command && o->npids) {
			/* the command line's target replaces the --config file's */
			if (o->cli_target == 'p')
				o->command = NULL;
			else
				o->npids = 0;
		}
		if (!o->command && !o->npids)
			argp_error(state, "nothing to trace: give -p PID or -- COMMAND");
		if (o->command && o->npids)
			argp_error(state, "give either -p PID or a COMMAND, not both");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	static const struct argp argp = {
		.options = record_options,
		.parser = record_parse_opt,
		.args_doc = "[-- COMMAND [ARGS...]]",
		.doc = record_doc,
	};

	memset(o, 0, sizeof(*o));
	o->output_dir = "infertrace-out";
	o->frequency = 99;
	o->gpu_mode = "auto";
	o->side_period_s = 1.0;
	o->min_block_us = 1;
	/* dwarf: prebuilt llama.cpp/ggml libraries keep no frame pointers, and one
	 * llama.cpp frame alone is ~36 KiB, so complete stacks need a 64 KiB copy;
	 * it costs a few µs per sample in BPF (docs/unwinding.md) */
	o->call_graph = CALL_GRAPH_DWARF;
	o->dwarf_stack_size = 65528;
	o->stack_map_entries = 16384;
	rule_thresholds__defaults(&o->thresholds);
	/* --config FILE first: the command line wins */
	o->config_file = config_file__find_arg(argc, argv);
	if (o->config_file && config_file__apply(o, o->config_file, false))
		return EINVAL;
	return argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, o);
}

void record_opts__free(struct record_opts *o)
{
	for (int i = 0; i < o->nphases; i++) {
		free(o->phases[i].name);
		free(o->phases[i].specs);
	}
	for (int i = 0; i < o->ncounts; i++) {
		free(o->counts[i].name);
		free(o->counts[i].specs);
	}
	o->nphases = o->ncounts = 0;
}

static json_t *named_json(const struct named_spec *arr, int n)
{
	json_t *o = json_object();

	for (int i = 0; i < n; i++)
		json_object_set_new(o, arr[i].name, json_string(arr[i].specs));
	return o;
}

json_t *record_opts__json(const struct record_opts *o)
{
	json_t *c = json_object(), *presets = json_array();

	json_object_set_new(c, "output_dir", json_string(o->output_dir));
	json_object_set_new(c, "frequency", json_integer(o->frequency));
	json_object_set_new(c, "duration_s", o->duration_s > 0 ? json_real(o->duration_s) : json_null());
	json_object_set_new(c, "cycle", o->cycle_spec ? json_string(o->cycle_spec) : json_null());
	json_object_set_new(c, "cycle_marker", o->cycle_marker_spec ? json_string(o->cycle_marker_spec) : json_null());
	json_object_set_new(c, "phases", named_json(o->phases, o->nphases));
	json_object_set_new(c, "counts", named_json(o->counts, o->ncounts));
	for (int i = 0; i < o->npresets; i++)
		json_array_append_new(presets, json_string(o->presets[i]));
	json_object_set_new(c, "presets", presets);
	json_object_set_new(c, "call_graph", json_string(o->call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp"));
	json_object_set_new(c, "follow_children", json_boolean(!o->no_follow_children));
	json_object_set_new(c, "comm", o->comm ? json_string(o->comm) : json_null());
	json_object_set_new(c, "gpu", json_string(o->gpu_mode));
	json_object_set_new(c, "side_period_s", json_real(o->side_period_s));
	json_object_set_new(c, "min_block_us", json_integer(o->min_block_us));
	json_object_set_new(c, "config_file", o->config_file ? json_string(o->config_file) : json_null());
	return c;
}
