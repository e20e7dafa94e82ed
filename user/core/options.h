// SPDX-License-Identifier: BSD-2-Clause
/* Command-line options of `infertrace record` (and the same fields read from
 * --config JSON). */
#ifndef INFERTRACE_OPTIONS_H
#define INFERTRACE_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

#include <jansson.h>

#include "rules.h"

#define MAX_ROOT_PIDS 64
#define MAX_NAMED_PROBES 64

/* A --phase NAME=SPEC[,SPEC...] or --count NAME=SPEC[,...] option. */
struct named_spec {
	char *name;
	char *specs; /* comma-separated probe specs, as given */
};

enum call_graph_mode {
	CALL_GRAPH_FP = 0,
	CALL_GRAPH_DWARF = 1,
};

struct record_opts {
	const char *output_dir;
	unsigned int frequency;       /* Hz */
	double duration_s;            /* 0: until the target exits or SIGINT */
	pid_t pids[MAX_ROOT_PIDS];
	int npids;
	char **command;               /* argv of the command to launch, NULL with -p */
	const char *cycle_spec;
	const char *cycle_marker_spec;
	struct named_spec phases[MAX_NAMED_PROBES];
	int nphases;
	struct named_spec counts[MAX_NAMED_PROBES];
	int ncounts;
	const char *presets[8];
	int npresets;
	const char *config_file;
	const char *comm;             /* --comm: also follow new processes with this name */
	const char *gpu_mode;         /* auto|nvml|jetson|none */
	const char *jit_maps;         /* --jit-maps on|read|off (jit.c); NULL: on */
	double side_period_s;
	unsigned int min_block_us;    /* off-CPU intervals shorter than this are ignored */
	enum call_graph_mode call_graph;
	unsigned int dwarf_stack_size;
	unsigned int stack_map_entries;
	struct rule_thresholds thresholds; /* --threshold NAME=VALUE */
	bool no_follow_children;
	bool verbose;
	char cli_target;              /* 'p' or 'c': the command line named PIDs or a command */
};

/* Parses argv of `record` (argv[0] is "record"). On error prints a one-line
 * message naming the problem and returns non-zero. */
int record_opts__parse(struct record_opts *opts, int argc, char **argv);
void record_opts__free(struct record_opts *opts);
/* profile.json's `config`: what was asked. */
json_t *record_opts__json(const struct record_opts *opts);

#endif
