// SPDX-License-Identifier: BSD-2-Clause
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_file.h"
#include "gpu_channel.h"
#include "exit_codes.h"
#include "metrics.h"
#include "json_text.h"
#include "options.h"
#include "sysfs_readers.h"

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
"SECONDS, or on a signal (SIGINT, SIGTERM, SIGQUIT, SIGUSR1...); in every case\n"
"the outputs are written.\n"
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
"In a --config FILE (JSON object) each option is a key: its long name with '_'\n"
"for '-' (or an unambiguous prefix); repeatable options take arrays, NAME=VALUE\n"
"options objects. The command line wins over the file.\n"
"\n"
"OPTIONS:";

/* keys of the options without a short letter */
enum {
	OPTK_CYCLE = 0x100,
	OPTK_CYCLE_MARKER,
	OPTK_PHASE,
	OPTK_COUNT,
	OPTK_PRESET,
	OPTK_CONFIG,
	OPTK_COMM,
	OPTK_GPU,
	OPTK_CUPTI,
	OPTK_SIDE_PERIOD,
	OPTK_MIN_BLOCK,
	OPTK_OFFCPU_SAMPLE,
	OPTK_MAX_MEMORY,
	OPTK_CALL_GRAPH,
	OPTK_NO_FOLLOW,
	OPTK_STACK_ENTRIES,
	OPTK_CHECKPOINT,
	OPTK_THRESHOLD,
	OPTK_USAGE,
	OPTK_JIT_MAPS,
	OPTK_METRICS,
	OPTK_ROTATE,
	OPTK_USER,
	OPTK_SHARE_OUTPUTS,
	OPTK_KERNEL_ADDRESSES,
	OPTK_STRICT,
};

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || !isdigit((unsigned char)s[0]))
		return -1;
	*out = v;
	return 0;
}

/* A finite number of seconds in [min, max]: "nan", "inf" and negatives are refused. */
static int parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Phase and count names name files (stacks.NAME.folded) and JSON keys. */
static int check_name(const char *opt, const char *name, size_t len, char *err, size_t errlen)
{
	if (!len || len > MAX_NAME_LEN || name[0] == '.')
		goto bad;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			goto bad;
	return 0;
bad:
	return fail(err, errlen, "invalid --%s name '%.*s': use 1..%d letters, digits, '_', '-' or '.', "
		    "not starting with '.'", opt, (int)(len > 80 ? 80 : len), name, MAX_NAME_LEN);
}

static int set_named(const char *opt, const char *arg, struct named_spec *arr, int *n, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return fail(err, errlen, "--%s expects NAME=SPEC, got '%s'", opt, arg);
	if (check_name(opt, arg, eq - arg, err, errlen))
		return -EINVAL;
	/* a name given again (e.g. in --config, then on the command line): the later wins */
	for (int i = 0; i < *n; i++) {
		if (strlen(arr[i].name) == (size_t)(eq - arg) && !strncmp(arr[i].name, arg, eq - arg)) {
			char *specs = strdup(eq + 1);

			if (!specs)
				return fail(err, errlen, "out of memory");
			free(arr[i].specs);
			arr[i].specs = specs;
			return 0;
		}
	}
	if (*n >= MAX_NAMED_PROBES)
		return fail(err, errlen, "too many --%s options (at most %d)", opt, MAX_NAMED_PROBES);
	arr[*n].name = strndup(arg, eq - arg);
	arr[*n].specs = strdup(eq + 1);
	if (!arr[*n].name || !arr[*n].specs) {
		free(arr[*n].name);
		free(arr[*n].specs);
		return fail(err, errlen, "out of memory");
	}
	(*n)++;
	return 0;
}

static int set_output(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (!*arg)
		return fail(err, errlen, "the output directory (-o) must not be empty");
	if (strlen(arg) > MAX_OUTPUT_DIR_LEN)
		return fail(err, errlen, "the output directory (-o) is longer than %d characters", MAX_OUTPUT_DIR_LEN);
	o->output_dir = arg;
	return 0;
}

static int set_frequency(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 1, 100000, &v))
		return fail(err, errlen, "invalid frequency '%s': expected 1..100000 Hz", arg);
	o->frequency = v;
	o->frequency_given = true;
	return 0;
}

static int set_duration(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	/* the upper bound only keeps the nanosecond arithmetic exact: ~31 years */
	if (parse_seconds(arg, 0, 1e9, &o->duration_s) || o->duration_s <= 0)
		return fail(err, errlen, "invalid duration '%s': expected a finite number of seconds > 0", arg);
	return 0;
}

static int set_pids(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;
	int ret = 0;

	if (!copy)
		return fail(err, errlen, "out of memory");
	if (!cfg && !(o->cli_target & CLI_TARGET_PIDS))
		o->npids = 0; /* the command line's PIDs replace the file's */
	if (!cfg)
		o->cli_target |= CLI_TARGET_PIDS;
	if (!*arg)
		ret = fail(err, errlen, "invalid PID '': expected a positive number");
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 1, INT_MAX, &v))
			ret = fail(err, errlen, "invalid PID '%s': expected a positive number", tok);
		else if (o->npids >= MAX_ROOT_PIDS)
			ret = fail(err, errlen, "too many PIDs (at most %d)", MAX_ROOT_PIDS);
		else
			o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return ret;
}

static int set_cycle(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (!*arg)
		return fail(err, errlen, "--cycle expects a probe spec");
	o->cycle_spec = arg;
	return 0;
}

static int set_cycle_marker(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (!*arg)
		return fail(err, errlen, "--cycle-marker expects a probe spec");
	o->cycle_marker_spec = arg;
	return 0;
}

static int set_phase(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	return set_named("phase", arg, o->phases, &o->nphases, err, errlen);
}

static int set_count(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	return set_named("count", arg, o->counts, &o->ncounts, err, errlen);
}

static int set_preset(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (!*arg)
		return fail(err, errlen, "--preset expects a preset name");
	if (o->npresets >= MAX_PRESETS)
		return fail(err, errlen, "too many --preset options (at most %d)", MAX_PRESETS);
	o->presets[o->npresets++] = arg;
	return 0;
}

static int set_config(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	/* read before the command line (record_opts__parse); only one file */
	if (o->config_file && strcmp(o->config_file, arg))
		return fail(err, errlen, "--config given twice ('%s', '%s'); give one file", o->config_file, arg);
	o->config_file = arg;
	return 0;
}

static int set_comm(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (!*arg || strlen(arg) >= 16)
		return fail(err, errlen, "invalid --comm '%s': expected a process name of 1..15 characters", arg);
	o->comm = arg;
	return 0;
}

static int set_user(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (run_as__resolve(arg, &o->run_as))
		return fail(err, errlen, "invalid --user '%s': no such user (give a name from /etc/passwd or a uid)",
			    arg);
	o->user = arg;
	return 0;
}

static int set_no_follow(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->no_follow_children = true;
	return 0;
}

static int set_call_graph(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (!strcmp(arg, "fp")) {
		o->call_graph = CALL_GRAPH_FP;
	} else if (!strncmp(arg, "dwarf", 5) && (arg[5] == 0 || arg[5] == ',')) {
		if (arg[5] == ',' && parse_uint(arg + 6, 512, 65528, &v))
			return fail(err, errlen, "invalid dwarf stack size '%s': expected 512..65528 bytes", arg + 6);
		o->call_graph = CALL_GRAPH_DWARF;
		if (arg[5] == ',')
			o->dwarf_stack_size = v & ~7ul;
	} else {
		return fail(err, errlen, "invalid --call-graph '%s': expected fp or dwarf[,SIZE]", arg);
	}
	return 0;
}

static int set_checkpoint(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (parse_seconds(arg, 0, 1e9, &o->checkpoint_s) || o->checkpoint_s < 0.1)
		return fail(err, errlen, "invalid --checkpoint '%s': expected a number of seconds >= 0.1", arg);
	return 0;
}

static int set_rotate(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 1, 1000000, &v))
		return fail(err, errlen, "invalid --rotate '%s': expected a number of periods >= 1", arg);
	o->rotate_keep = v;
	return 0;
}

static int set_stack_entries(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 256, 1 << 22, &v))
		return fail(err, errlen, "invalid --stack-entries '%s': expected 256..4194304", arg);
	o->stack_map_entries = v;
	return 0;
}

static int set_offcpu_sample(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 0, 1000000, &v))
		return fail(err, errlen, "invalid --offcpu-sample-us '%s': expected 0..1000000", arg);
	o->offcpu_sample_us = v;
	return 0;
}

static int set_max_memory(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 1, 1u << 20, &v))
		return fail(err, errlen, "invalid --max-memory '%s': expected 1..1048576 (MB)", arg);
	o->max_memory_mb = v;
	return 0;
}

static int set_min_block(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	unsigned long v;

	(void)cfg;
	if (parse_uint(arg, 0, 1000000000, &v))
		return fail(err, errlen, "invalid --min-block-us '%s': expected 0..1000000000", arg);
	o->min_block_us = v;
	return 0;
}

static int set_gpu(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (strcmp(arg, "auto") && strcmp(arg, "nvml") && strcmp(arg, "jetson") && strcmp(arg, "none"))
		return fail(err, errlen, "invalid --gpu '%s': expected auto, nvml, jetson or none", arg);
	o->gpu_mode = arg;
	return 0;
}

static int set_cupti(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	uint32_t every;

	(void)cfg;
	if (strcmp(arg, "off") && it_gpu_sample_parse(arg, &every))
		return fail(err, errlen, "invalid --cupti '%s': expected auto, full, off or a number 1-%d", arg,
			    IT_GPU_SAMPLE_MAX);
	o->cupti = arg;
	return 0;
}

static int set_jit_maps(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (strcmp(arg, "on") && strcmp(arg, "read") && strcmp(arg, "off"))
		return fail(err, errlen, "invalid --jit-maps '%s': expected on, read or off", arg);
	o->jit_maps = arg;
	return 0;
}

static int set_side_period(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)cfg;
	if (parse_seconds(arg, 0.01, 86400, &o->side_period_s))
		return fail(err, errlen, "invalid --side-period '%s': expected seconds in 0.01..86400", arg);
	return 0;
}

static int set_threshold(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	double v;

	(void)cfg;
	if (!eq || eq == arg || eq - arg >= (long)sizeof(name))
		return fail(err, errlen, "--threshold expects NAME=VALUE, got '%s'", arg);
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	if (parse_seconds(eq + 1, 0, 1e12, &v) || rule_thresholds__set(&o->thresholds, name, v))
		return fail(err, errlen, "invalid --threshold '%s': expected NAME=VALUE, VALUE a finite "
			    "number >= 0 (names in 'infertrace record --help')", arg);
	return 0;
}

static int set_quiet(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->quiet = true;
	return 0;
}

static int set_share_outputs(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->share_outputs = true;
	return 0;
}

static int set_kernel_addresses(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->kernel_addresses = true;
	return 0;
}

static int set_strict(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->strict = true;
	return 0;
}

static int set_verbose(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	(void)arg, (void)cfg, (void)err, (void)errlen;
	o->verbose = true;
	return 0;
}

static int set_metrics(struct record_opts *o, const char *arg, bool cfg, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;

	(void)cfg;
	if (metrics__parse_addr(arg, &sa, &len, err, errlen))
		return -EINVAL;
	o->metrics = arg;
	return 0;
}

#define S OPTV_STRING
#define N OPTV_NUMBER
#define F OPTV_NONE
const struct record_option record_options[] = {
	{ "output", 'o', "DIR", S, 0, "output_dir", 0,
	  "Output directory (default ./infertrace-out)", set_output },
	{ "frequency", 'F', "HZ", N, 0, NULL, 0,
	  "CPU sampling frequency in Hz (default 99; 499 with a py:@callers phase, as the sqlite "
	  "preset's, timed from the samples); above the kernel's "
	  "perf_event_max_sample_rate it is lowered to it, with a warning", set_frequency },
	{ "duration", 'd', "SECONDS", N, 0, "duration_s", 0,
	  "Stop after this long (default: when the target exits)", set_duration },
	{ "pid", 'p', "PID[,PID...]", N, OPTF_REPEAT, "pids", 0,
	  "Trace these running processes (all their threads)", set_pids },
	{ "cycle", OPTK_CYCLE, "SPEC", S, 0, NULL, 1,
	  "Each call of this function is one experiment cycle", set_cycle },
	{ "cycle-marker", OPTK_CYCLE_MARKER, "SPEC", S, 0, NULL, 1,
	  "Each call of this function starts a new cycle", set_cycle_marker },
	{ "phase", OPTK_PHASE, "NAME=SPEC[,SPEC]", S, OPTF_REPEAT | OPTF_NAMED, "phases", 1,
	  "Time inside these functions is phase NAME (repeatable; NAME: letters, digits, _ - .)", set_phase },
	{ "count", OPTK_COUNT, "NAME=SPEC[,SPEC]", S, OPTF_REPEAT | OPTF_NAMED, "counts", 1,
	  "Count calls per cycle (repeatable); 'tokens' gives tokens/s", set_count },
	{ "preset", OPTK_PRESET, "NAME", S, OPTF_REPEAT, "presets", 1,
	  "Built-in probe set: llama.cpp, sqlite, cuda (repeatable)", set_preset },
	{ "strict", OPTK_STRICT, NULL, F, 0, NULL, 1,
	  "A spec that never matched (a probe never placed, a py: or js: function never seen) "
	  "fails the run with exit status 7, after the outputs are written", set_strict },
	{ "config", OPTK_CONFIG, "FILE", S, OPTF_CLI_ONLY, NULL, 1,
	  "Read options from a JSON file first (see above)", set_config },
	{ "comm", OPTK_COMM, "NAME", S, 0, NULL, 2,
	  "Also follow new processes named NAME", set_comm },
	{ "user", OPTK_USER, "USER", S, 0, NULL, 1,
	  "Run the launched COMMAND as USER (name or uid), not as root; under sudo the invoking "
	  "user is the default (--user root keeps root)", set_user },
	{ "no-follow-children", OPTK_NO_FOLLOW, NULL, F, OPTF_ALIAS_NOT, "follow_children", 2,
	  "Do not follow child processes", set_no_follow },
	{ "call-graph", OPTK_CALL_GRAPH, "fp|dwarf[,SIZE]", S, 0, NULL, 2,
	  "User stacks: frame pointers, or a copy of SIZE bytes unwound with .eh_frame (default dwarf,65528)",
	  set_call_graph },
	{ "stack-entries", OPTK_STACK_ENTRIES, "N", N, 0, NULL, 2,
	  "Distinct stacks kept in the kernel (default 16384)", set_stack_entries },
	{ "min-block-us", OPTK_MIN_BLOCK, "US", N, 0, NULL, 2,
	  "Ignore off-CPU intervals shorter than this (default 1)", set_min_block },
	{ "offcpu-sample-us", OPTK_OFFCPU_SAMPLE, "US", N, 0, NULL, 2,
	  "With dwarf stacks: blocks shorter than US share off-CPU stack copies, one per US of a "
	  "thread's short blocks in a phase, each weighing the blocks since the last; longer blocks "
	  "have their own (default 10000; 0: a copy for every block)", set_offcpu_sample },
	{ "max-memory", OPTK_MAX_MEMORY, "MB", N, 0, "max_memory_mb", 2,
	  "Once the tracer's RSS reaches MB (default 1024), it keeps no more labelled stacks, "
	  "timelines or power events, and counts them in lost instead; cycles, phase calls and trace "
	  "events go on (spooled to disk), and so do stacks and totals", set_max_memory },
	{ "jit-maps", OPTK_JIT_MAPS, "on|read|off", S, 0, NULL, 2,
	  "JIT frame names from /tmp/perf-PID.map: on (default) also passes node's and Python's "
	  "perf-map switches to the launched command; read only reads the maps", set_jit_maps },
	{ "checkpoint", OPTK_CHECKPOINT, "SECONDS", N, 0, "checkpoint_s", 2,
	  "Every SECONDS while recording, write profile.json, the folded stacks and profile.pb.gz "
	  "(each atomically) so that a killed tracer leaves its last checkpoint", set_checkpoint },
	{ "rotate", OPTK_ROTATE, "N", N, 0, NULL, 2,
	  "With --checkpoint SECONDS: one output directory per period of SECONDS (OUT/0000, OUT/0001 ...), "
	  "each with that period's complete outputs, keeping the last N; the model is reset between "
	  "periods (runs of days)", set_rotate },
	{ "share-outputs", OPTK_SHARE_OUTPUTS, NULL, F, 0, NULL, 2,
	  "Make the outputs readable by every local user (files 0644, new directories 0755); by default "
	  "only their owner (the sudo user, else root) reads them (0600, 0700)", set_share_outputs },
	{ "kernel-addresses", OPTK_KERNEL_ADDRESSES, NULL, F, 0, NULL, 2,
	  "Keep the kernel frames' raw addresses in profile.pb.gz (by default they are 0: kernel "
	  "addresses help an attacker defeat KASLR)", set_kernel_addresses },
	{ "gpu", OPTK_GPU, "auto|nvml|jetson|none", S, 0, NULL, 3,
	  "GPU side data source (default auto)", set_gpu },
	{ "cupti", OPTK_CUPTI, "auto|full|off|N", S, 0, NULL, 3,
	  "GPU kernel, copy and memset timing from CUPTI activity records in a launched command: the CUDA "
	  "driver loads infertrace's injection library (CUDA_INJECTION64_PATH, unless the command's "
	  "environment sets it), and each kernel is joined to the cycle and phase that launched it. auto "
	  "(default): records every kernel unless the launch rate would make that cost over 2.5%, then "
	  "one 1-second window in N, the cycles inside a window marked sampled; full: every kernel; N: "
	  "one window in N; off, or --gpu none, leaves the command's environment alone", set_cupti },
	{ "side-period", OPTK_SIDE_PERIOD, "SECONDS", N, 0, "side_period_s", 3,
	  "Side-data sampling period (default 1)", set_side_period },
	{ "threshold", OPTK_THRESHOLD, "NAME=VALUE", N, OPTF_REPEAT | OPTF_NAMED, "thresholds", 3,
	  "Bottleneck rule threshold (repeatable): inference_pct=60, database_pct=15, mode_pct=10, "
	  "memory_pct=80, runq_pct=20, offcpu_pct=50, gpu_util_pct=70, gpu_sync_pct=30, gpu_busy_pct=80, "
	  "launch_idle_pct=30, transfer_pct=30, leak_mb_per_cycle=1, "
	  "power_mw=1000 (power alert), power_capped_pct=5",
	  set_threshold },
	{ "metrics", OPTK_METRICS, "[ADDR:]PORT", S, 0, NULL, 4,
	  "Serve Prometheus metrics at http://ADDR:PORT/metrics while recording (ADDR default "
	  "127.0.0.1; PORT 0 picks a free one; another address exposes them to that network)", set_metrics },
	{ "quiet", 'q', NULL, F, 0, NULL, 4,
	  "No progress line and no start message (warnings and errors still shown)", set_quiet },
	{ "verbose", 'v', NULL, F, 0, NULL, 4,
	  "Show libbpf's debug output", set_verbose },
	{ "help", 'h', NULL, F, OPTF_CLI_ONLY, NULL, 5, "Show this help and exit", NULL },
	{ "usage", OPTK_USAGE, NULL, F, OPTF_CLI_ONLY, NULL, 5, "Show a short usage message and exit", NULL },
	{ "version", 'V', NULL, F, OPTF_CLI_ONLY, NULL, 5, "Print the version and exit", NULL },
	{ NULL },
};
#undef S
#undef N
#undef F

#define NOPTIONS (sizeof(record_options) / sizeof(record_options[0]) - 1)

/* "min_block_us" and "min-block-us" are the same key */
static bool key_eq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];

		if (x != y || !x)
			return false;
	}
	return true;
}

/* Calls fn for the option's name and each alias; stops when fn returns true. */
static bool for_each_key(const struct record_option *opt, bool (*fn)(const char *k, size_t n, bool alias, void *ctx),
			 void *ctx)
{
	const char *a = opt->aliases;

	if (fn(opt->name, strlen(opt->name), false, ctx))
		return true;
	while (a && *a) {
		size_t n = strcspn(a, " ");

		if (fn(a, n, true, ctx))
			return true;
		a += n;
		a += strspn(a, " ");
	}
	return false;
}

struct lookup {
	const char *key;
	size_t len;
	bool exact, prefix, alias;
};

static bool match_key(const char *k, size_t n, bool alias, void *ctx)
{
	struct lookup *l = ctx;

	if (l->len == n && key_eq(l->key, k, n)) {
		l->exact = true;
		l->alias = alias;
		return true;
	}
	if (l->len < n && key_eq(l->key, k, l->len)) {
		l->prefix = true;
		l->alias = alias;
	}
	return false;
}

const struct record_option *record_option__lookup(const char *key, bool *negated, char *err, size_t errlen)
{
	const struct record_option *found = NULL, *opt;
	bool found_alias = false;
	int nprefix = 0;

	for (opt = record_options; opt->name; opt++) {
		struct lookup l = { .key = key, .len = strlen(key) };

		if (opt->flags & OPTF_CLI_ONLY)
			continue;
		for_each_key(opt, match_key, &l);
		if (l.exact) {
			*negated = l.alias && (opt->flags & OPTF_ALIAS_NOT);
			return opt;
		}
		if (l.prefix && l.len) {
			if (!nprefix++)
				found = opt, found_alias = l.alias;
			else
				found = NULL;
		}
	}
	if (found) {
		*negated = found_alias && (found->flags & OPTF_ALIAS_NOT);
		return found;
	}
	if (nprefix > 1)
		fail(err, errlen, "ambiguous option \"%s\" (the prefix of %d options)", key, nprefix);
	else
		fail(err, errlen, "unknown option \"%s\"; the options are those of 'infertrace record --help'", key);
	return NULL;
}

int record_option__set(struct record_opts *o, const struct record_option *opt, const char *arg,
		       bool from_config, char *err, size_t errlen)
{
	if (!opt->set)
		return fail(err, errlen, "--%s cannot be set here", opt->name);
	return opt->set(o, arg, from_config, err, errlen);
}

static const struct record_option *by_key(int key)
{
	for (const struct record_option *opt = record_options; opt->name; opt++)
		if (opt->key == key)
			return opt;
	return NULL;
}

/* argp's options, made from the table */
static const struct argp_option *argp_options(void)
{
	static struct argp_option a[NOPTIONS + 1];

	if (!a[0].key) {
		for (size_t i = 0; i < NOPTIONS; i++) {
			const struct record_option *opt = &record_options[i];

			a[i] = (struct argp_option){ .name = opt->name, .key = opt->key, .arg = opt->arg,
						     .doc = opt->doc, .group = opt->group };
		}
	}
	return a;
}

static void print_error(const char *msg)
{
	fprintf(stderr, "infertrace: %s\n", msg);
}

static error_t record_parse_opt(int key, char *arg, struct argp_state *state)
{
	struct record_opts *o = state->input;
	const struct record_option *opt;
	char err[512];

	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP); /* exits 0 */
		return 0;
	case OPTK_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		return 0;
	case 'V':
		printf("infertrace %s\n", INFERTRACE_VERSION);
		exit(IT_EXIT_OK);
	case ARGP_KEY_ARG:
		/* first non-option argument: the command; argp stops here (ARGP_IN_ORDER,
		 * "--" handled by argp) and we take the rest verbatim */
		o->command = &state->argv[state->next - 1];
		o->cli_target |= CLI_TARGET_COMMAND;
		state->next = state->argc;
		return 0;
	default:
		opt = by_key(key);
		if (!opt)
			return ARGP_ERR_UNKNOWN;
		if (record_option__set(o, opt, arg, false, err, sizeof(err))) {
			print_error(err);
			return EINVAL;
		}
		return 0;
	}
}

/* The first pass: only --config FILE (any spelling argp takes), so that the
 * file is read before the command line's options, which win. */
static error_t config_parse_opt(int key, char *arg, struct argp_state *state)
{
	const char **config = state->input;

	if (key == OPTK_CONFIG && !*config)
		*config = arg;
	else if (key == ARGP_KEY_ARG)
		state->next = state->argc;
	return 0;
}

void record_opts__defaults(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->output_dir = "infertrace-out";
	o->frequency = 99;
	o->gpu_mode = "auto";
	o->cupti = "auto";
	o->side_period_s = 1.0;
	o->min_block_us = 1;
	/* short blocks cost as much to copy and unwind as they last: sampled,
	 * one stack per 10 ms of a thread's blocked time, as -F 99 takes one
	 * per 10 ms of its CPU time (at 1 ms, the copies and their unwinding
	 * slowed the llama.cpp demo's cycles by ~2.5 points: BENCHMARKS.md) */
	o->offcpu_sample_us = 10000;
	o->max_memory_mb = 1024;
	/* dwarf: prebuilt llama.cpp/ggml libraries keep no frame pointers, and one
	 * llama.cpp frame alone is ~36 KiB, so complete stacks need a 64 KiB copy;
	 * it costs a few µs per sample in BPF (docs/unwinding.md) */
	o->call_graph = CALL_GRAPH_DWARF;
	o->dwarf_stack_size = 65528;
	o->stack_map_entries = 16384;
	rule_thresholds__defaults(&o->thresholds);
}

/* The kernel refuses perf events above this rate (it also lowers it by
 * itself when sampling takes too long); 0 when unknown. */
static unsigned long kernel_max_sample_rate(void)
{
	char path[256];
	long long v;

	if (sysfs_path(path, sizeof(path), "/proc/sys/kernel/perf_event_max_sample_rate") ||
	    sysfs_read_ll(path, &v) || v <= 0)
		return 0;
	return v;
}

int record_opts__finish(struct record_opts *o)
{
	unsigned long max_rate = kernel_max_sample_rate();

	if (o->cli_target == (CLI_TARGET_PIDS | CLI_TARGET_COMMAND)) {
		print_error(o->user ? "give either -p PID or a COMMAND, not both (--user applies to the COMMAND)"
			    : "give either -p PID or a COMMAND, not both");
		return -EINVAL;
	}
	if (o->cli_target && o->command && o->npids) {
		/* the command line's target replaces the --config file's */
		if (o->cli_target == CLI_TARGET_PIDS)
			o->command = NULL;
		else
			o->npids = 0;
	}
	if (!o->command && !o->npids) {
		print_error("nothing to trace: give -p PID or -- COMMAND");
		return -EINVAL;
	}
	if (o->command && o->npids) {
		print_error("give either -p PID or a COMMAND, not both");
		return -EINVAL;
	}
	if (o->user && !o->command) {
		print_error(o->npids ? "--user applies to a launched COMMAND, not to -p PID: a running process keeps "
			    "its own user; drop --user" : "--user applies to a launched COMMAND; a running PID keeps its own user");
		return -EINVAL;
	}
	/* under sudo the command runs as whoever ran sudo, as it would without us */
	if (o->command && !o->user && getenv("SUDO_UID") && run_as__resolve(getenv("SUDO_UID"), &o->run_as))
		memset(&o->run_as, 0, sizeof(o->run_as));
	if (o->run_as.set && o->run_as.uid == 0)
		o->run_as.set = false; /* root: nothing to drop */
	if (o->rotate_keep) {
		/* a period is the checkpoint interval: each checkpoint closes one */
		if (o->checkpoint_s < 1) {
			print_error(o->checkpoint_s > 0 ? "--rotate needs --checkpoint of at least 1 second"
				    : "--rotate N needs --checkpoint SECONDS, the length of a period");
			return -EINVAL;
		}
		o->rotate_s = o->checkpoint_s;
	}
	/* like perf: run at the kernel's limit rather than fail, and say so */
	if (max_rate && o->frequency > max_rate) {
		fprintf(stderr, "infertrace: warning: -F %u Hz is above the kernel's limit of %lu Hz "
			"(/proc/sys/kernel/perf_event_max_sample_rate); sampling at %lu Hz\n",
			o->frequency, max_rate, max_rate);
		o->frequency = max_rate;
	}
	return 0;
}

int record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	const struct argp argp = {
		.options = argp_options(),
		.parser = record_parse_opt,
		.args_doc = "[-- COMMAND [ARGS...]]",
		.doc = record_doc,
	};
	const struct argp config_argp = { .options = argp.options, .parser = config_parse_opt };
	const char *config = NULL;
	int err;

	record_opts__defaults(o);
	argp_err_exit_status = IT_EXIT_USAGE;
	argp_parse(&config_argp, argc, argv, ARGP_IN_ORDER | ARGP_NO_ERRS | ARGP_NO_HELP | ARGP_SILENT,
		   NULL, &config);
	if (config) {
		o->config_file = config;
		if (config_file__apply(o, config, false))
			return -EINVAL;
	}
	err = argp_parse(&argp, argc, argv, ARGP_IN_ORDER | ARGP_NO_HELP, NULL, o);
	if (err)
		return -err;
	return record_opts__finish(o);
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
		json_object_set_new(o, arr[i].name, json_text(arr[i].specs));
	return o;
}

json_t *record_opts__json(const struct record_opts *o)
{
	json_t *c = json_object(), *presets = json_array();

	json_object_set_new(c, "output_dir", json_text(o->output_dir));
	json_object_set_new(c, "frequency", json_integer(o->frequency));
	json_object_set_new(c, "duration_s", o->duration_s > 0 ? json_real(o->duration_s) : json_null());
	if (o->checkpoint_s > 0)
		json_object_set_new(c, "checkpoint_s", json_real(o->checkpoint_s));
	if (o->rotate_keep)
		json_object_set_new(c, "rotate", json_integer(o->rotate_keep));
	json_object_set_new(c, "cycle", o->cycle_spec ? json_text(o->cycle_spec) : json_null());
	json_object_set_new(c, "cycle_marker", o->cycle_marker_spec ? json_text(o->cycle_marker_spec) : json_null());
	json_object_set_new(c, "phases", named_json(o->phases, o->nphases));
	json_object_set_new(c, "counts", named_json(o->counts, o->ncounts));
	for (int i = 0; i < o->npresets; i++)
		json_array_append_new(presets, json_text(o->presets[i]));
	json_object_set_new(c, "presets", presets);
	json_object_set_new(c, "call_graph", json_text(o->call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp"));
	json_object_set_new(c, "follow_children", json_boolean(!o->no_follow_children));
	json_object_set_new(c, "comm", o->comm ? json_text(o->comm) : json_null());
	if (o->run_as.set)
		json_object_set_new(c, "user", json_text(o->run_as.name));
	json_object_set_new(c, "gpu", json_text(o->gpu_mode));
	json_object_set_new(c, "cupti", json_text(o->cupti ? o->cupti : "auto"));
	json_object_set_new(c, "side_period_s", json_real(o->side_period_s));
	json_object_set_new(c, "min_block_us", json_integer(o->min_block_us));
	json_object_set_new(c, "offcpu_sample_us", json_integer(o->offcpu_sample_us));
	json_object_set_new(c, "max_memory_mb", json_integer(o->max_memory_mb));
	json_object_set_new(c, "strict", json_boolean(o->strict));
	json_object_set_new(c, "jit_maps", json_text(o->jit_maps ? o->jit_maps : "on"));
	json_object_set_new(c, "metrics", o->metrics ? json_text(o->metrics) : json_null());
	json_object_set_new(c, "config_file", o->config_file ? json_text(o->config_file) : json_null());
	json_object_set_new(c, "share_outputs", json_boolean(o->share_outputs));
	json_object_set_new(c, "kernel_addresses", json_boolean(o->kernel_addresses));
	return c;
}
