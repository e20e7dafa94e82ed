// SPDX-License-Identifier: BSD-2-Clause
/* infertrace: a kernel-level tracer for LLM-inference experiments. */
#include <stdio.h>
#include <string.h>

#include "exit_codes.h"
#include "manpage.h"
#include "messages.h"
#include "record.h"
#include "report.h"
#include "tune.h"

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
"  top [OPTIONS] (-p PID | -- COMMAND)     a recording shown live in the terminal; q ends it\n"
"  report DIR|profile.json                 text summary of a recording\n"
"  diff [--threshold PCT] [--flamegraph FILE] BASE NEW\n"
"                                          compare two recordings; exit 1 on regression\n"
"  tune [--param NAME=V1,V2..]... [OPTIONS] -- COMMAND ... {NAME} ...\n"
"                                          run the command per setting, interleaved: a table\n"
"                                          with intervals and settings.json\n"
"\n"
"Options:\n"
"  -h, --help      this text ('infertrace COMMAND --help' for a command's options)\n"
"  -V, --version   print the version\n"
"  --man           print the manual page (roff; 'make man' writes build/infertrace.1)\n"
"  --completion bash  print the bash completion script\n"
"\n"
"Examples:\n"
"  infertrace record -o out -- ./llama-cli -m model.gguf -p hello -n 64\n"
"  infertrace record --preset llama.cpp -d 60 -p $(pidof llama-server)\n"
"  infertrace report out\n"
"  infertrace diff baseline/ out/\n"
"  infertrace tune --param threads=1,2 --preset llama.cpp -- ./llama-cli -m m.gguf -t {threads}\n"
"\n"
"Outputs (in the record directory): profile.json, stacks.folded, offcpu.folded, wakeup.folded,\n"
"trace.json, flamegraph.svg, report.html. See README.md.\n";

static void print_exit_codes(FILE *f)
{
	fputs("\nExit status:\n", f);
#define IT_EXIT_LINE(name, value, what) fprintf(f, "  %d  %s\n", value, what);
	IT_EXIT_CODES(IT_EXIT_LINE)
#undef IT_EXIT_LINE
}

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record },
	{ "top", cmd_top },
	{ "report", cmd_report },
	{ "diff", cmd_diff },
	{ "tune", cmd_tune },
};

int main(int argc, char **argv)
{
	char prog[64];

	if (argc < 2) {
		fputs(usage, stderr);
		return IT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		print_exit_codes(stdout);
		return IT_EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("infertrace %s\n", INFERTRACE_VERSION);
		return IT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--man"))
		return manpage__write(stdout) ? IT_EXIT_OUTPUT : IT_EXIT_OK;
	if (!strcmp(argv[1], "--completion")) {
		if (argc != 3 || strcmp(argv[2], "bash")) {
			fprintf(stderr, "infertrace: --completion expects 'bash'\n");
			return IT_EXIT_USAGE;
		}
		return completion__write_bash(stdout) ? IT_EXIT_OUTPUT : IT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		/* messages and argp's usage say "infertrace SUBCOMMAND" */
		messages__init(subcommands[i].name);
		snprintf(prog, sizeof(prog), "infertrace %s", subcommands[i].name);
		argv[1] = prog;
		return subcommands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "infertrace: unknown command '%s'; see 'infertrace --help'\n", argv[1]);
	return IT_EXIT_USAGE;
}
