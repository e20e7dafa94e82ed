// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace tune`'s command line. Its options and record's are mixed
 * before the command; a name is tune's when tune_options[] has it, else
 * record's (record_options[]), checked here with record's own setters so a
 * bad value fails before the first run rather than in every run. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_codes.h"
#include "options.h"
#include "tune_options.h"
#include "vec.h"

enum {
	TK_OUTPUT = 'o',
	TK_QUIET = 'q',
	TK_HELP = 'h',
	TK_PARAM = 0x100,
	TK_METRIC,
	TK_CYCLES,
	TK_RUNS,
	TK_WARMUP,
	TK_GRID,
	TK_BASELINE,
	TK_FROM,
	TK_TARGET_PLATFORM,
	TK_FORCE,
};

/* keys in the order of the rows below */
static const int tune_keys[] = {
	TK_PARAM, TK_METRIC, TK_CYCLES, TK_RUNS, TK_WARMUP, TK_GRID, TK_BASELINE,
	TK_FROM, TK_TARGET_PLATFORM, TK_FORCE, TK_OUTPUT, TK_QUIET, TK_HELP,
};

const struct tune_option tune_options[] = {
	{ "param", 0, "NAME=V1,V2,...",
	  "A parameter and its values (repeatable): {NAME} in the command's arguments, or $NAME in its "
	  "environment, takes each value; the first value is the baseline" },
	{ "metric", 0, "METRIC",
	  "The per-cycle metric: tokens_per_s (the default where tokens are counted), cycle_ms (the "
	  "default otherwise), joules_per_token (where energy is measured) or phase:NAME (the phase's ms "
	  "per cycle)" },
	{ "cycles", 0, "N", "Cycles measured per run after the warm-up: the first N (default: all)" },
	{ "runs", 0, "R", "Runs of each setting, interleaved run by run (default 2)" },
	{ "warmup", 0, "N",
	  "Cycles left out at the start of each run (default: the rule, 1 cycle per 10 started, at least "
	  "1 when a run has 2 or more)" },
	{ "grid", 0, NULL,
	  "Run every combination of the parameters' values (default: one parameter at a time, in the "
	  "order given, the others at the best found so far)" },
	{ "baseline", 0, "NAME=VALUE", "The baseline's value of a parameter (repeatable; default its first value)" },
	{ "from", 0, "RUN_DIR",
	  "Parameters from a recording's recommendations that carry values: mapped to llama.cpp's flags "
	  "(-t, -c, -b, -ub, -ngl) or to {NAME} in the command; otherwise the --param lines to fill in "
	  "are printed" },
	{ "target-platform", 0, "NAME",
	  "The platform settings.json is for: refused unless the runs' machine is NAME (its CPU model, "
	  "machine model, GPU, architecture or host name names it)" },
	{ "force", 0, NULL, "Write settings.json for a --target-platform that is not the measured one" },
	{ "output", 'o', "DIR",
	  "Output directory (default ./infertrace-tune, which must be new or empty): the table, "
	  "settings.json and one record output directory per run" },
	{ "quiet", 'q', NULL, "No progress lines" },
	{ "help", 'h', NULL, "Show this help and exit" },
	{ NULL },
};

#define NTUNE (sizeof(tune_keys) / sizeof(tune_keys[0]))

static const char usage_line[] =
	"Usage: infertrace tune [--param NAME=V1,V2,...]... [--metric M] [--cycles N] [--runs R]\n"
	"                       [record options] -- COMMAND ... {NAME} ...\n"
	"       infertrace tune --from RUN_DIR [options] -- COMMAND ...\n";

void tune_opts__help(FILE *f)
{
	fputs(usage_line, f);
	fputs("\nRuns COMMAND once per setting of the parameters, each run traced by 'infertrace record' with\n"
	      "the record options given, R runs of each setting interleaved run by run, and prints a table\n"
	      "of the settings with the median per-cycle metric and its 95% interval (a bootstrap over the\n"
	      "runs and their cycles). The best setting is chosen only when its interval and the baseline's\n"
	      "do not overlap; otherwise it says \"no significant difference\" and keeps the baseline.\n"
	      "Ctrl-C keeps the runs completed and prints the table so far.\n"
	      "\nOutputs in DIR: table.txt (the table), settings.json (the chosen values, the platform, the\n"
	      "metric and its interval, the evidence, the run directories; docs/tune.md), and\n"
	      "DIR/sN.SETTING/runK/, a record output directory per run (report and diff read them).\n"
	      "\nExamples:\n"
	      "  infertrace tune --param threads=1,2 --preset llama.cpp -- \\\n"
	      "      node demo/driver.mjs --model demo/models/bench.gguf --threads {threads}\n"
	      "  infertrace tune --param t=2,4,8 --param c=512,2048 --grid -- llama-cli -m m.gguf -t {t} -c {c}\n"
	      "  OMP_NUM_THREADS='$threads' infertrace tune --param threads=1,2,4 --cycle run_cycle -- ./loop\n"
	      "  infertrace tune --from infertrace-out -- llama-cli -m m.gguf -t 8 -p hello\n"
	      "\nOptions:\n", f);
	for (const struct tune_option *t = tune_options; t->name; t++) {
		char head[64];

		if (t->key)
			snprintf(head, sizeof(head), "-%c, --%s%s%s", t->key, t->name, t->arg ? " " : "",
				 t->arg ? t->arg : "");
		else
			snprintf(head, sizeof(head), "    --%s%s%s", t->name, t->arg ? " " : "", t->arg ? t->arg : "");
		fprintf(f, "  %-30s", head);
		/* the doc wrapped at 100 columns, under its column */
		for (const char *d = t->doc; *d;) {
			size_t n = strlen(d), cut = n;

			if (n > 67) {
				cut = 67;
				while (cut && d[cut] != ' ')
					cut--;
				if (!cut)
					cut = 67;
			}
			fprintf(f, "%s%.*s\n", d == t->doc ? " " : "                                 ", (int)cut, d);
			d += cut;
			d += strspn(d, " ");
		}
	}
	fputs("\nEvery option of 'infertrace record' (see 'infertrace record --help') but -o and -p is passed to\n"
	      "each run.\n", f);
}

static int fail(const char *fmt, const char *a, const char *b)
{
	fputs("infertrace: ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -EINVAL;
}

static int parse_count(const char *opt, const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end, lim[32];
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!errno && end != s && !*end && isdigit((unsigned char)*s) && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	snprintf(lim, sizeof(lim), "%lu..%lu", min, max);
	fprintf(stderr, "infertrace: invalid --%s '%s': expected a number in %s\n", opt, s, lim);
	return -EINVAL;
}

static bool param_name_ok(const char *s, size_t n)
{
	if (!n || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static struct tune_param *find_param(struct tune_opts *o, const char *name, size_t n)
{
	for (int i = 0; i < o->nparams; i++)
		if (strlen(o->params[i].name) == n && !strncmp(o->params[i].name, name, n))
			return &o->params[i];
	return NULL;
}

int tune_opts__add_param(struct tune_opts *o, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '='), *v;
	struct tune_param *p;

	if (!eq || !param_name_ok(arg, eq - arg) || !eq[1]) {
		snprintf(err, errlen, "--param expects NAME=V1,V2,... (NAME: letters, digits, _), got '%s'", arg);
		return -EINVAL;
	}
	if (find_param(o, arg, eq - arg)) {
		snprintf(err, errlen, "--param %.*s given twice; give its values once", (int)(eq - arg), arg);
		return -EINVAL;
	}
	if (o->nparams >= TUNE_MAX_PARAMS) {
		snprintf(err, errlen, "too many --param options (at most %d)", TUNE_MAX_PARAMS);
		return -EINVAL;
	}
	p = &o->params[o->nparams];
	memset(p, 0, sizeof(*p));
	p->name = strndup(arg, eq - arg);
	if (!p->name)
		goto nomem;
	for (v = eq + 1;;) {
		size_t n = strcspn(v, ",");

		if (!n) {
			snprintf(err, errlen, "--param %s: an empty value in '%s'", p->name, eq + 1);
			goto bad;
		}
		if (p->nvalues >= TUNE_MAX_VALUES) {
			snprintf(err, errlen, "--param %s: more than %d values", p->name, TUNE_MAX_VALUES);
			goto bad;
		}
		for (int i = 0; i < p->nvalues; i++)
			if (strlen(p->values[i]) == n && !strncmp(p->values[i], v, n)) {
				snprintf(err, errlen, "--param %s: value '%.*s' given twice", p->name, (int)n, v);
				goto bad;
			}
		p->values[p->nvalues] = strndup(v, n);
		if (!p->values[p->nvalues])
			goto nomem;
		p->nvalues++;
		if (!v[n])
			break;
		v += n + 1;
	}
	o->nparams++;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
bad:
	free(p->name);
	for (int i = 0; i < p->nvalues; i++)
		free(p->values[i]);
	memset(p, 0, sizeof(*p));
	return -EINVAL;
}

/* --baseline NAME=VALUE, applied once every --param is known: a value not
 * listed becomes the parameter's first */
static int apply_baseline(struct tune_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct tune_param *p = eq ? find_param(o, arg, eq - arg) : NULL;
	char *v;

	if (!eq || !eq[1])
		return fail("--baseline expects NAME=VALUE, got '%s'%s", arg, "");
	if (!p)
		return fail("--baseline '%s': no --param names it%s", arg, "");
	for (int i = 0; i < p->nvalues; i++)
		if (!strcmp(p->values[i], eq + 1)) {
			p->baseline = i;
			return 0;
		}
	if (p->nvalues >= TUNE_MAX_VALUES)
		return fail("--baseline '%s': --param %s has no room for another value", arg, p->name);
	v = strdup(eq + 1);
	if (!v)
		return -ENOMEM;
	memmove(p->values + 1, p->values, p->nvalues * sizeof(*p->values));
	p->values[0] = v;
	p->nvalues++;
	p->baseline = 0;
	return 0;
}

/* An option by name (exact, else an unambiguous prefix over both tables, as
 * argp takes them): *t tune's, or *r record's. */
static int lookup_long(const char *name, size_t n, const struct tune_option **t, const struct record_option **r)
{
	int hits = 0;

	*t = NULL;
	*r = NULL;
	for (const struct tune_option *x = tune_options; x->name; x++)
		if (strlen(x->name) == n && !strncmp(x->name, name, n)) {
			*t = x;
			return 0;
		}
	for (const struct record_option *x = record_options; x->name; x++)
		if (strlen(x->name) == n && !strncmp(x->name, name, n)) {
			*r = x;
			return 0;
		}
	for (const struct tune_option *x = tune_options; x->name; x++)
		if (!strncmp(x->name, name, n))
			*t = x, hits++;
	for (const struct record_option *x = record_options; x->name; x++)
		if (!strncmp(x->name, name, n))
			*r = x, hits++;
	if (hits == 1)
		return 0;
	*t = NULL;
	*r = NULL;
	return hits ? -EEXIST : -ENOENT;
}

static void lookup_short(int key, const struct tune_option **t, const struct record_option **r)
{
	*t = NULL;
	*r = NULL;
	for (const struct tune_option *x = tune_options; x->name; x++)
		if (x->key == key) {
			*t = x;
			return;
		}
	for (const struct record_option *x = record_options; x->name; x++)
		if (x->key == key) {
			*r = x;
			return;
		}
}

static int tune_key(const struct tune_option *t)
{
	return tune_keys[t - tune_options];
}

static int push_arg(struct tune_opts *o, const char *a)
{
	char **n;

	if (VEC_RESIZE(o->record_args, o->nrecord_args + 2))
		return -ENOMEM;
	n = o->record_args;
	n[o->nrecord_args] = strdup(a);
	if (!n[o->nrecord_args])
		return -ENOMEM;
	n[++o->nrecord_args] = NULL;
	return 0;
}

/* A record option: checked with record's own setter, then kept for the runs. */
static int take_record_option(struct tune_opts *o, struct record_opts *scratch, const struct record_option *r,
			      const char *val)
{
	char err[512], flag[80];
	int e;

	if (r->key == 'p')
		return fail("tune launches COMMAND for each run: -p PID cannot be tuned%s%s", "", "");
	if (r->key == 'V') {
		printf("infertrace %s\n", INFERTRACE_VERSION);
		return 1;
	}
	if (!r->set)
		return fail("--%s cannot be given to tune%s", r->name, "");
	e = record_option__set(scratch, r, val, false, err, sizeof(err));
	if (e)
		return fail("%s%s", err, "");
	if (r->key == 'q')
		return 0; /* every run is quiet: its messages go to its log */
	snprintf(flag, sizeof(flag), "--%s", r->name);
	if (push_arg(o, flag) || (val && push_arg(o, val)))
		return -ENOMEM;
	return 0;
}

static int take_tune_option(struct tune_opts *o, const struct tune_option *t, const char *given,
			    const char ***baselines, int *nbaselines)
{
	const char *val = given ? given : "";
	unsigned long v;
	char err[256];

	if (t->arg && !given)
		return fail("--%s expects a value%s", t->name, "");
	switch (tune_key(t)) {
	case TK_HELP:
		tune_opts__help(stdout);
		return 1;
	case TK_PARAM:
		if (tune_opts__add_param(o, val, err, sizeof(err)))
			return fail("%s%s", err, "");
		return 0;
	case TK_METRIC:
		o->metric = val;
		return 0;
	case TK_CYCLES:
		if (parse_count("cycles", val, 1, 1000000, &v))
			return -EINVAL;
		o->cycles = v;
		return 0;
	case TK_RUNS:
		if (parse_count("runs", val, 1, TUNE_MAX_RUNS, &v))
			return -EINVAL;
		o->runs = v;
		return 0;
	case TK_WARMUP:
		if (parse_count("warmup", val, 0, 1000000, &v))
			return -EINVAL;
		o->warmup = (int)v;
		return 0;
	case TK_GRID:
		o->grid = true;
		return 0;
	case TK_BASELINE: {
		if (VEC_RESIZE(*baselines, *nbaselines + 1))
			return -ENOMEM;
		(*baselines)[(*nbaselines)++] = val;
		return 0;
	}
	case TK_FROM:
		o->from = val;
		return 0;
	case TK_TARGET_PLATFORM:
		if (!*val)
			return fail("--target-platform expects a name%s%s", "", "");
		o->target_platform = val;
		return 0;
	case TK_FORCE:
		o->force = true;
		return 0;
	case TK_OUTPUT:
		if (!*val || strlen(val) > PATH_MAX - 512)
			return fail("invalid -o '%s': expected a directory name%s", val, "");
		o->output_dir = val;
		return 0;
	case TK_QUIET:
		o->quiet = true;
		return 0;
	}
	return -EINVAL;
}

int tune_opts__parse(struct tune_opts *o, int argc, char **argv)
{
	struct record_opts scratch;
	const char **baselines = NULL;
	int nbaselines = 0, i, err = 0;

	memset(o, 0, sizeof(*o));
	o->output_dir = TUNE_DEFAULT_OUTPUT;
	o->runs = TUNE_DEFAULT_RUNS;
	o->warmup = -1;
	record_opts__defaults(&scratch);
	for (i = 1; i < argc && !err; i++) {
		const char *a = argv[i], *val = NULL;
		const struct tune_option *t;
		const struct record_option *r;
		bool takes;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			int e = lookup_long(name, n, &t, &r);

			if (e) {
				err = fail(e == -EEXIST ? "ambiguous option '%s'%s" :
					   "unknown option '%s'; see 'infertrace tune --help'%s", a, "");
				break;
			}
			takes = t ? t->arg != NULL : r->arg != NULL;
			if (eq && !takes) {
				err = fail("--%.*s takes no value%s", t ? t->name : r->name, "");
				break;
			}
			val = eq ? eq + 1 : NULL;
		} else {
			lookup_short((unsigned char)a[1], &t, &r);
			if (!t && !r) {
				err = fail("unknown option '%s'; see 'infertrace tune --help'%s", a, "");
				break;
			}
			takes = t ? t->arg != NULL : r->arg != NULL;
			if (a[2] && !takes) {
				err = fail("unknown option '%s' (short options are given one at a time)%s", a, "");
				break;
			}
			val = a[2] ? a + 2 : NULL;
		}
		if (takes && !val) {
			if (i + 1 >= argc) {
				err = fail("%s expects a value%s", a, "");
				break;
			}
			val = argv[++i];
		}
		err = t ? take_tune_option(o, t, val, &baselines, &nbaselines) : take_record_option(o, &scratch, r, val);
	}
	record_opts__free(&scratch);
	for (int b = 0; !err && b < nbaselines; b++)
		err = apply_baseline(o, baselines[b]);
	free(baselines);
	if (err)
		return err;
	if (i >= argc)
		return fail("no COMMAND to tune: give it after -- (see 'infertrace tune --help')%s%s", "", "");
	o->command = argv + i;
	o->ncommand = argc - i;
	if (!o->nparams && !o->from)
		return fail("nothing to tune: give --param NAME=V1,V2,... or --from RUN_DIR%s%s", "", "");
	return 0;
}

void tune_opts__free(struct tune_opts *o)
{
	for (int i = 0; i < o->nparams; i++) {
		free(o->params[i].name);
		for (int v = 0; v < o->params[i].nvalues; v++)
			free(o->params[i].values[v]);
	}
	o->nparams = 0;
	for (int i = 0; i < o->nrecord_args; i++)
		free(o->record_args[i]);
	free(o->record_args);
	o->record_args = NULL;
	o->nrecord_args = 0;
}
