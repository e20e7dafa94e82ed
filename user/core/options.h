// SPDX-License-Identifier: BSD-2-Clause
/* Options of `infertrace record`: one table (record_options[]) that the
 * command line (argp), --config FILE (JSON), the man page and the shell
 * completion are all made from. A new option is one row there. */
#ifndef INFERTRACE_OPTIONS_H
#define INFERTRACE_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "rules.h"
#include "target.h"

#define MAX_ROOT_PIDS 64
#define MAX_NAMED_PROBES 64
#define MAX_PRESETS 8
/* phase and count names become file names (stacks.NAME.folded) */
#define MAX_NAME_LEN 64
/* room left under PATH_MAX for the files written in the output directory */
#define MAX_OUTPUT_DIR_LEN (4096 - 128)

/* A --phase NAME=SPEC[,SPEC...] or --count NAME=SPEC[,...] option. */
struct named_spec {
	char *name;
	char *specs; /* comma-separated probe specs, as given */
};

enum call_graph_mode {
	CALL_GRAPH_FP = 0,
	CALL_GRAPH_DWARF = 1,
};

/* record_opts.cli_target bits: the command line named PIDs, a command */
enum {
	CLI_TARGET_PIDS = 1,
	CLI_TARGET_COMMAND = 2,
};

struct record_opts {
	const char *output_dir;
	unsigned int frequency;       /* Hz */
	bool frequency_given;         /* -F or "frequency" in --config */
	double duration_s;            /* 0: until the target exits or SIGINT */
	double checkpoint_s;          /* 0: no checkpoints while recording */
	double rotate_s;              /* with --rotate: the period (--checkpoint's); 0: none */
	unsigned int rotate_keep;     /* --rotate N: period directories kept; 0: no rotation */
	pid_t pids[MAX_ROOT_PIDS];
	int npids;
	char **command;               /* argv of the command to launch, NULL with -p */
	const char *cycle_spec;
	const char *cycle_marker_spec;
	struct named_spec phases[MAX_NAMED_PROBES];
	int nphases;
	struct named_spec counts[MAX_NAMED_PROBES];
	int ncounts;
	const char *presets[MAX_PRESETS];
	int npresets;
	const char *config_file;
	const char *comm;             /* --comm: also follow new processes with this name */
	const char *user;             /* --user as given; NULL: none */
	struct run_as run_as;         /* the launched command's user (--user, or sudo's) */
	const char *gpu_mode;         /* auto|nvml|jetson|none */
	const char *cupti;            /* --cupti auto|off: the injection library in a launched command */
	const char *jit_maps;         /* --jit-maps on|read|off (jit.c); NULL: on */
	double side_period_s;
	unsigned int min_block_us;    /* off-CPU intervals shorter than this are ignored */
	unsigned int offcpu_sample_us; /* shorter blocks share off-CPU stack copies (dwarf) */
	enum call_graph_mode call_graph;
	unsigned int dwarf_stack_size;
	unsigned int stack_map_entries;
	unsigned int max_memory_mb;   /* the tracer's RSS above which it keeps no more detail */
	struct rule_thresholds thresholds; /* --threshold NAME=VALUE */
	bool no_follow_children;
	bool verbose;
	bool quiet;                   /* -q: no progress line, no start line */
	bool share_outputs;           /* outputs 0644 in 0755 directories, not 0600/0700 */
	bool kernel_addresses;        /* raw kernel addresses kept in profile.pb.gz */
	bool strict;                  /* --strict: a spec that never matched fails the run */
	const char *metrics;          /* --metrics [ADDR:]PORT: serve /metrics while recording */
	bool top;                     /* `infertrace top`: the live terminal view */
	unsigned char cli_target;     /* CLI_TARGET_*: what the command line named as the target */
};

/* What --config takes for an option's value. */
enum option_value {
	OPTV_NONE = 0,   /* a flag: true (given) or false (not given) */
	OPTV_STRING = 1,
	OPTV_NUMBER = 2,
};

enum option_flags {
	OPTF_REPEAT = 1 << 0,   /* repeatable: repeats append; an array in --config */
	OPTF_NAMED = 1 << 1,    /* NAME=VALUE: an object {NAME: VALUE} in --config */
	OPTF_CLI_ONLY = 1 << 2, /* not a --config key (help, config itself) */
	OPTF_ALIAS_NOT = 1 << 3, /* a flag whose --config aliases mean its negation */
};

struct record_option {
	const char *name;     /* --NAME; in --config the key is NAME with '_' for '-' */
	int key;              /* the short option's letter, or a number > 0xff */
	const char *arg;      /* the argument's name in --help; NULL for a flag */
	enum option_value value;
	unsigned int flags;   /* enum option_flags */
	const char *aliases;  /* other --config keys, space-separated, or NULL */
	int group;            /* --help section */
	const char *doc;
	/* Sets the option from arg (NULL for a flag); from_config: arg comes
	 * from a --config file. On a bad value writes a one-line reason into err
	 * (no prefix) and returns -EINVAL. NULL: handled by the parser itself. */
	int (*set)(struct record_opts *o, const char *arg, bool from_config, char *err, size_t errlen);
};

/* The table, ending with a row whose name is NULL. */
extern const struct record_option record_options[];

/* The option a --config key names: its name or an alias ('-' or '_'), or an
 * unambiguous prefix of one, as argp takes long options. *negated: the key is
 * an alias that means the flag's negation. NULL with err set otherwise. */
const struct record_option *record_option__lookup(const char *key, bool *negated, char *err, size_t errlen);
/* Applies one value as the command line would. from_config: it comes from a
 * --config file (the command line's -p / COMMAND then replace the file's). */
int record_option__set(struct record_opts *o, const struct record_option *opt, const char *arg,
		       bool from_config, char *err, size_t errlen);

/* Defaults for every option. */
void record_opts__defaults(struct record_opts *o);
/* Checks what needs every option known (a target, -F against the kernel's
 * limit). Prints one line per problem; -EINVAL on error. */
int record_opts__finish(struct record_opts *o);
/* Parses argv of `record` (argv[0] is "record"): defaults, then --config
 * FILE, then the command line, which wins. On error prints a one-line
 * message naming the problem and returns non-zero. */
int record_opts__parse(struct record_opts *opts, int argc, char **argv);
void record_opts__free(struct record_opts *opts);
/* profile.json's `config`: what was asked. */
json_t *record_opts__json(const struct record_opts *opts);

#endif
