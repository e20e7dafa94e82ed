// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "exit_codes.h"
#include "manpage.h"
#include "options.h"
#include "tune_options.h"

/* roff text: backslashes and hyphens escaped, no control character first */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void config_keys(FILE *f, const struct record_option *opt)
{
	const char *a = opt->aliases;

	fputs("Config key: ", f);
	for (const char *p = opt->name; *p; p++)
		fputc(*p == '-' ? '_' : *p, f);
	while (a && *a) {
		size_t n = strcspn(a, " ");

		fprintf(f, ", %.*s", (int)n, a);
		a += n;
		a += strspn(a, " ");
	}
	if (opt->flags & OPTF_ALIAS_NOT)
		fputs(" (the alias means the opposite)", f);
	if (opt->flags & OPTF_NAMED)
		fputs("; an object {NAME: VALUE}", f);
	else if (opt->flags & OPTF_REPEAT)
		fputs("; an array", f);
	fputs(".\n", f);
}

int manpage__write(FILE *f)
{
	fprintf(f, ".TH INFERTRACE 1 \"\" \"infertrace %s\" \"User Commands\"\n", INFERTRACE_VERSION);
	fputs(".SH NAME\ninfertrace \\- trace LLM\\-inference experiments with eBPF\n"
	      ".SH SYNOPSIS\n"
	      ".B infertrace record\n[\\fIOPTIONS\\fR] \\-\\- \\fICOMMAND\\fR [\\fIARGS\\fR...]\n.br\n"
	      ".B infertrace record\n[\\fIOPTIONS\\fR] \\-p \\fIPID\\fR[,\\fIPID\\fR...]\n.br\n"
	      ".B infertrace top\n[\\fIOPTIONS\\fR] (\\-p \\fIPID\\fR | \\-\\- \\fICOMMAND\\fR [\\fIARGS\\fR...])\n.br\n"
	      ".B infertrace report\n\\fIDIR\\fR|\\fIprofile.json\\fR\n.br\n"
	      ".B infertrace diff\n[\\-\\-threshold \\fIPCT\\fR] [\\-\\-flamegraph \\fIFILE\\fR] \\fIBASE\\fR \\fINEW\\fR\n.br\n"
	      ".B infertrace tune\n[\\-\\-param \\fINAME\\fR=\\fIV1\\fR,\\fIV2\\fR...]... [\\fIOPTIONS\\fR] \\-\\- "
	      "\\fICOMMAND\\fR ... {\\fINAME\\fR} ...\n"
	      ".SH DESCRIPTION\n"
	      "Traces an unmodified LLM\\-inference experiment with eBPF: per\\-cycle timings by named "
	      "phase, on/off\\-CPU time, memory, thermal and GPU side data, bottlenecks, folded stacks "
	      "and flame graphs. Runs as root (or with CAP_BPF and CAP_PERFMON).\n"
	      ".SH RECORD OPTIONS\n", f);
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		fputs(".TP\n", f);
		if (opt->key > 0 && opt->key < 0x100)
			fprintf(f, "\\fB\\-%c\\fR, ", opt->key);
		fputs("\\fB\\-\\-", f);
		roff(f, opt->name);
		fputs("\\fR", f);
		if (opt->arg) {
			fputs(" \\fI", f);
			roff(f, opt->arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff(f, opt->doc);
		fputs(".\n", f);
		if (!(opt->flags & OPTF_CLI_ONLY)) {
			fputs(".br\n", f);
			config_keys(f, opt);
		}
	}
	fputs(".SH CONFIG FILE\n"
	      "\\fB\\-\\-config\\fR \\fIFILE\\fR reads a JSON object whose keys are the options above "
	      "(long name with _ for \\-, an alias, or an unambiguous prefix) and \\fBcommand\\fR "
	      "(an array, the command's argv). Values are checked as on the command line. "
	      "The file is read first: the command line wins, and repeatable options add to the file's. "
	      "A flag set to false, or any key set to null, counts as not given.\n"
	      ".SH TOP\n"
	      "\\fBtop\\fR takes the options of \\fBrecord\\fR and shows the recording live in the "
	      "terminal, refreshed once a second; \\fBq\\fR or Ctrl\\-C ends it and the outputs are "
	      "written as by \\fBrecord\\fR. A launched command's output goes to command.log in the "
	      "output directory.\n"
	      ".SH REPORT AND DIFF\n"
	      "\\fBreport\\fR prints a text summary of a recording. \\fBdiff\\fR compares two recordings "
	      "with a 95% interval for each change (a bootstrap over the cycles) and exits 1 when a "
	      "figure got worse by more than \\fB\\-\\-threshold\\fR \\fIPCT\\fR percent (default 5) "
	      "and its interval excludes zero; \\fB\\-\\-flamegraph\\fR \\fIFILE\\fR also writes a differential flame graph "
	      "of NEW's stacks (red: a frame's share grew, blue: it shrank). Both take \\fB\\-h\\fR, "
	      "\\fB\\-\\-help\\fR.\n"
	      ".SH TUNE\n"
	      "\\fBtune\\fR runs \\fICOMMAND\\fR once per setting of the parameters, {\\fINAME\\fR} in its "
	      "arguments (or $\\fINAME\\fR in its environment) taking each value, every run traced by "
	      "\\fBrecord\\fR with the record options given (all but \\fB\\-o\\fR and \\fB\\-p\\fR) into its "
	      "own output directory, R runs of each setting interleaved run by run. It prints a table of "
	      "the settings with the median per\\-cycle metric and its 95% interval (a bootstrap over the "
	      "runs and their cycles, the warm\\-up cycles left out) and writes it to table.txt, with "
	      "settings.json beside it. A setting is chosen only when its interval and the baseline's do "
	      "not overlap; otherwise the table says \"no significant difference\". Ctrl\\-C keeps the "
	      "runs completed and prints the table so far.\n"
	      ".SH TUNE OPTIONS\n", f);
	for (const struct tune_option *t = tune_options; t->name; t++) {
		fputs(".TP\n", f);
		if (t->key)
			fprintf(f, "\\fB\\-%c\\fR, ", t->key);
		fputs("\\fB\\-\\-", f);
		roff(f, t->name);
		fputs("\\fR", f);
		if (t->arg) {
			fputs(" \\fI", f);
			roff(f, t->arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff(f, t->doc);
		fputs(".\n", f);
	}
	fputs(".SH EXIT STATUS\n", f);
#define IT_EXIT_MAN(name, value, what) fprintf(f, ".TP\n.B %d\n", value), roff(f, what), fputc('\n', f);
	IT_EXIT_CODES(IT_EXIT_MAN)
#undef IT_EXIT_MAN
	fputs(".SH FILES\nprofile.json, stacks.folded, offcpu.folded, wakeup.folded, gpu.folded, trace.json, "
	      "flamegraph.svg, offcpu.svg, report.html in the output directory.\n"
	      ".SH SEE ALSO\n.BR perf (1)\n", f);
	return ferror(f) ? -EIO : 0;
}

int completion__write_bash(FILE *f)
{
	fputs("# bash completion for infertrace (generated: infertrace --completion bash)\n"
	      "_infertrace()\n{\n"
	      "\tlocal cur prev sub\n"
	      "\tcur=${COMP_WORDS[COMP_CWORD]}\n"
	      "\tprev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tsub=${COMP_WORDS[1]}\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W 'record top report diff tune --help --version --man --completion' -- \"$cur\"))\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\tcase $sub in\n"
	      "\trecord|top)\n"
	      "\t\tcase $prev in\n", f);
	/* options whose argument is a file, a directory or a fixed choice */
	fputs("\t\t-o|--output) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
	      "\t\t--config) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f);
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		if (!opt->arg || !strchr(opt->arg, '|') || strchr(opt->arg, '['))
			continue;
		fprintf(f, "\t\t--%s) COMPREPLY=($(compgen -W '", opt->name);
		for (const char *p = opt->arg; *p; p++)
			fputc(*p == '|' ? ' ' : *p, f);
		fputs("' -- \"$cur\")); return ;;\n", f);
	}
	fputs("\t\tesac\n\t\tCOMPREPLY=($(compgen -W '", f);
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		if (opt->key > 0 && opt->key < 0x100)
			fprintf(f, "-%c ", opt->key);
		fprintf(f, "--%s ", opt->name);
	}
	fputs("' -- \"$cur\"))\n\t\t;;\n"
	      "\treport) COMPREPLY=($(compgen -W '-h --help' -f -- \"$cur\")) ;;\n"
	      "\tdiff) COMPREPLY=($(compgen -W '-h --help --threshold --flamegraph' -f -- \"$cur\")) ;;\n", f);
	/* tune: its own options and record's */
	fputs("\ttune)\n\t\tcase $prev in\n"
	      "\t\t-o|--output|--from) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
	      "\t\t--metric) COMPREPLY=($(compgen -W 'tokens_per_s cycle_ms joules_per_token phase:' -- \"$cur\")); return ;;\n"
	      "\t\tesac\n\t\tCOMPREPLY=($(compgen -W '", f);
	for (const struct tune_option *t = tune_options; t->name; t++) {
		if (t->key)
			fprintf(f, "-%c ", t->key);
		fprintf(f, "--%s ", t->name);
	}
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		bool tunes = false;

		for (const struct tune_option *t = tune_options; t->name; t++)
			tunes |= !strcmp(t->name, opt->name);
		/* -p: tune launches the command; help and the like are tune's own */
		if (!tunes && opt->key != 'p' && opt->set)
			fprintf(f, "--%s ", opt->name);
	}
	fputs("' -- \"$cur\"))\n\t\t;;\n"
	      "\tesac\n}\n"
	      "complete -o filenames -F _infertrace infertrace\n", f);
	return ferror(f) ? -EIO : 0;
}
