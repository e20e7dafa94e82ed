// SPDX-License-Identifier: BSD-2-Clause
/* infertrace: a kernel-level tracer for LLM-inference experiments. */
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "report.h"

static const char usage[] =
"Usage: infertrace COMMAND [OPTIONS]\n"
"\n"
"Traces an unmodified LLM-inference experiment with eBPF: per-cycle timings by\n"
"named phase, on/off-CPU time, memory, thermal and GPU side data, bottlenecks,\n"
"folded stacks and flame graphs. Runs as root (or with CAP_BPF+CAP_PERFMON).\n"
"\n"
"Commands:\n"
"  record [OPTIONS] -- COMMAND [ARGS...]   trace a command from its first instruction\n"
"  record [OPTIONS] -p PID[,PID...]        trace running processes\n"
"  report DIR|profile.json                 text summary of a recording\n"
"  diff [--threshold PCT] BASE NEW         compare two recordings; exit 1 on regression\n"
"\n"
"Options:\n"
"  -h, --help      this text ('infertrace record --help' for record's options)\n"
"  -V, --version   print the version\n"
"\n"
"Examples:\n"
"  infertrace record -o out -- ./llama-cli -m model.gguf -p hello -n 64\n"
"  infertrace record --preset llama.cpp -d 60 -p $(pidof llama-server)\n"
"  infertrace report out\n"
"  infertrace diff baseline/ out/\n"
"\n"
"Outputs (in the record directory): profile.json, stacks.folded, offcpu.folded,\n"
"trace.json, flamegraph.svg, report.html. See README.md.\n";

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record },
	{ "report", cmd_report },
	{ "diff", cmd_diff },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("infertrace %s\n", INFERTRACE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "infertrace: unknown command '%s'; see 'infertrace --help'\n", argv[1]);
	return 2;
}
