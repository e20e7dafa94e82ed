// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: the option table feeds the command line and --config alike;
 * repeats, abbreviations, bad values, the -F limit; the message prefix, the
 * progress line, and the man page and completion made from the table. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "manpage.h"
#include "messages.h"
#include "options.h"
#include "progress.h"

static char tmpdir[] = "/tmp/it-options-XXXXXX";
static char errbuf[4096]; /* what the last parse printed on stderr */

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static const char *write_config(const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.json", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* record_opts__parse on a NULL-ended argv, stderr captured into errbuf */
static int parse(struct record_opts *o, const char *const *args)
{
	char *argv[64], path[256];
	int argc = 0, saved, fd, err;
	ssize_t n;

	argv[argc++] = "infertrace record";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fflush(stderr);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	assert_true(fd >= 0);
	saved = dup(2);
	dup2(fd, 2);
	err = record_opts__parse(o, argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, errbuf, sizeof(errbuf) - 1, 0);
	errbuf[n > 0 ? n : 0] = 0;
	close(fd);
	return err;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* What a parse set, as one JSON document (profile.json's config + the rest). */
static json_t *dump(const struct record_opts *o)
{
	json_t *j = record_opts__json(o), *pids = json_array();

	json_object_del(j, "config_file");
	for (int i = 0; i < o->npids; i++)
		json_array_append_new(pids, json_integer(o->pids[i]));
	json_object_set_new(j, "pids", pids);
	json_object_set_new(j, "command", json_boolean(o->command != NULL));
	json_object_set_new(j, "dwarf_stack_size", json_integer(o->dwarf_stack_size));
	json_object_set_new(j, "stack_entries", json_integer(o->stack_map_entries));
	json_object_set_new(j, "rotate_s", json_real(o->rotate_s));
	json_object_set_new(j, "rotate_keep", json_integer(o->rotate_keep));
	json_object_set_new(j, "verbose", json_boolean(o->verbose));
	json_object_set_new(j, "quiet", json_boolean(o->quiet));
	json_object_set_new(j, "share_outputs", json_boolean(o->share_outputs));
	json_object_set_new(j, "kernel_addresses", json_boolean(o->kernel_addresses));
	json_object_set_new(j, "strict", json_boolean(o->strict));
	json_object_set_new(j, "inference_pct", json_real(o->thresholds.inference_pct));
	json_object_set_new(j, "offcpu_pct", json_real(o->thresholds.offcpu_pct));
	return j;
}

/* One value of each option, as the command line and as --config spell it. */
static const struct {
	const char *name;
	const char *cli[5];
	const char *json;
} same[] = {
	{ "output", { "-o", "some/dir" }, "{\"output\": \"some/dir\"}" },
	{ "frequency", { "-F", "49" }, "{\"frequency\": 49}" },
	{ "duration", { "-d", "2.5" }, "{\"duration\": 2.5}" },
	{ "pid", { "-p", "1,2", "-p", "3" }, "{\"pid\": [1, 2, 3]}" },
	{ "cycle", { "--cycle", "lib:run" }, "{\"cycle\": \"lib:run\"}" },
	{ "cycle-marker", { "--cycle-marker", "m" }, "{\"cycle_marker\": \"m\"}" },
	{ "phase", { "--phase", "a=f,g", "--phase", "b.c-d=h" }, "{\"phases\": {\"a\": [\"f\", \"g\"], \"b.c-d\": \"h\"}}" },
	{ "count", { "--count", "tokens=lib:f" }, "{\"count\": \"tokens=lib:f\"}" },
	{ "preset", { "--preset", "sqlite", "--preset", "cuda" }, "{\"presets\": [\"sqlite\", \"cuda\"]}" },
	{ "comm", { "--comm", "worker" }, "{\"comm\": \"worker\"}" },
	{ "user", { "--user", "0" }, "{\"user\": \"0\"}" },
	{ "no-follow-children", { "--no-follow-children" }, "{\"follow_children\": false}" },
	{ "call-graph", { "--call-graph", "dwarf,8192" }, "{\"call_graph\": \"dwarf,8192\"}" },
	{ "stack-entries", { "--stack-entries", "4096" }, "{\"stack_entries\": 4096}" },
	{ "min-block-us", { "--min-block-us", "50" }, "{\"min-block-us\": 50}" },
	{ "offcpu-sample-us", { "--offcpu-sample-us", "250" }, "{\"offcpu_sample_us\": 250}" },
	{ "max-memory", { "--max-memory", "256" }, "{\"max_memory_mb\": 256}" },
	{ "checkpoint", { "--checkpoint", "2.5" }, "{\"checkpoint_s\": 2.5}" },
	{ "rotate", { "--checkpoint", "60", "--rotate", "24" }, "{\"checkpoint_s\": 60, \"rotate\": 24}" },
	{ "gpu", { "--gpu", "none" }, "{\"gpu\": \"none\"}" },
	{ "cupti", { "--cupti", "off" }, "{\"cupti\": \"off\"}" },
	{ "jit-maps", { "--jit-maps", "read" }, "{\"jit_maps\": \"read\"}" },
	{ "side-period", { "--side-period", "0.5" }, "{\"side_period_s\": 0.5}" },
	{ "threshold", { "--threshold", "inference_pct=70", "--threshold", "offcpu_pct=5" },
	  "{\"thresholds\": {\"inference_pct\": 70, \"offcpu_pct\": 5}}" },
	{ "metrics", { "--metrics", "[::1]:9464" }, "{\"metrics\": \"[::1]:9464\"}" },
	{ "quiet", { "-q" }, "{\"quiet\": true}" },
	{ "share-outputs", { "--share-outputs" }, "{\"share_outputs\": true}" },
	{ "kernel-addresses", { "--kernel-addresses" }, "{\"kernel_addresses\": true}" },
	{ "strict", { "--strict" }, "{\"strict\": true}" },
	{ "verbose", { "-v" }, "{\"verbose\": true}" },
};

static void test_table_drives_both_paths(void **state)
{
	(void)state;
	/* every option of the table that a file may set is exercised below */
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		bool found = false, negated;
		char err[256], key[64];

		if (opt->flags & OPTF_CLI_ONLY)
			continue;
		for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
			found |= !strcmp(same[i].name, opt->name);
		if (!found)
			fail_msg("option --%s has no case in test_table_drives_both_paths", opt->name);
		/* its config key is its name with '_' for '-' */
		snprintf(key, sizeof(key), "%s", opt->name);
		for (char *p = key; *p; p++)
			*p = *p == '-' ? '_' : *p;
		assert_ptr_equal(record_option__lookup(key, &negated, err, sizeof(err)), opt);
		assert_false(negated);
	}
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		struct record_opts a, b;
		const char *args[16] = { NULL };
		int n = 0;
		json_t *ja, *jb;

		for (int k = 0; k < 5 && same[i].cli[k]; k++)
			args[n++] = same[i].cli[k];
		if (strcmp(same[i].name, "pid")) {
			args[n++] = "--";
			args[n++] = "true";
		}
		assert_int_equal(parse(&a, args), 0);
		{
			const char *cargs[] = { "--config", write_config(same[i].json), "--", "true", NULL };

			if (!strcmp(same[i].name, "pid"))
				cargs[2] = NULL;
			if (parse(&b, cargs))
				fail_msg("%s: %s", same[i].json, errbuf);
		}
		ja = dump(&a);
		jb = dump(&b);
		if (!json_equal(ja, jb)) {
			char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);

			fail_msg("--%s: command line %s\n  != config %s", same[i].name, sa, sb);
		}
		json_decref(ja);
		json_decref(jb);
		record_opts__free(&a);
		record_opts__free(&b);
	}
}

static void test_config_repeats_append_and_command_line_wins(void **state)
{
	const char *cfg = write_config("{\"phases\": {\"a\": \"f\", \"b\": \"g\"}, \"preset\": \"sqlite\", "
				       "\"frequency\": 49, \"output\": \"from-file\", "
				       "\"command\": [\"sleep\", \"1\"]}");
	const char *args[] = { "--config", cfg, "--phase", "c=h", "--phase", "a=i", "--preset", "cuda",
			       "-F", "199", NULL };
	struct record_opts o;

	(void)state;
	assert_int_equal(parse(&o, args), 0);
	/* repeats append; a name given again takes the later spec */
	assert_int_equal(o.nphases, 3);
	assert_string_equal(o.phases[0].name, "a");
	assert_string_equal(o.phases[0].specs, "i");
	assert_string_equal(o.phases[2].name, "c");
	assert_int_equal(o.npresets, 2);
	assert_string_equal(o.presets[0], "sqlite");
	assert_string_equal(o.presets[1], "cuda");
	/* scalars: the command line wins, the file's others stay */
	assert_int_equal(o.frequency, 199);
	assert_string_equal(o.output_dir, "from-file");
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "sleep");
	record_opts__free(&o);

	/* the file names both a command and PIDs, and the command line neither: refused */
	cfg = write_config("{\"pid\": 5, \"command\": [\"true\"]}");
	{
		const char *a1[] = { "--config", cfg, NULL };

		assert_int_not_equal(parse(&o, a1), 0);
		assert_non_null(strstr(errbuf, "not both"));
		record_opts__free(&o);
	}

	cfg = write_config("{\"pid\": [5, 6], \"output\": \"x\"}");
	{
		const char *a2[] = { "--config", cfg, "-p", "7", NULL };

		assert_int_equal(parse(&o, a2), 0);
		/* the command line's -p replaces the file's */
		assert_int_equal(o.npids, 1);
		assert_int_equal(o.pids[0], 7);
		record_opts__free(&o);
	}
	{
		const char *a3[] = { "--conf", cfg, "--", "true", NULL };

		/* --config abbreviated as argp allows: still read first */
		assert_int_equal(parse(&o, a3), 0);
		assert_string_equal(o.output_dir, "x");
		assert_null(o.npids ? "pids kept" : NULL);
		record_opts__free(&o);
	}
	{
		/* the command line itself names both: refused as the file's pair is */
		const char *a4[] = { "-p", "7", "--", "true", NULL };
		const char *a5[] = { "--user", "nobody", "-p", "7", NULL };

		assert_int_not_equal(parse(&o, a4), 0);
		assert_non_null(strstr(errbuf, "not both"));
		record_opts__free(&o);
		assert_int_not_equal(parse(&o, a5), 0);
		assert_non_null(strstr(errbuf, "--user"));
		record_opts__free(&o);
	}
}

static void test_config_abbreviations_and_aliases(void **state)
{
	struct record_opts o;

	(void)state;
	{
		const char *args[] = { "--config", write_config("{\"freq\": 7, \"output_dir\": \"d\", "
								"\"duration_s\": 3, \"no_follow\": true}"),
				       "--", "true", NULL };

		assert_int_equal(parse(&o, args), 0);
		assert_int_equal(o.frequency, 7);
		assert_string_equal(o.output_dir, "d");
		assert_true(o.duration_s == 3);
		assert_true(o.no_follow_children);
		record_opts__free(&o);
	}
	{
		const char *args[] = { "--config", write_config("{\"c\": \"x\"}"), "--", "true", NULL };

		assert_int_not_equal(parse(&o, args), 0);
		assert_non_null(strstr(errbuf, "ambiguous option \"c\""));
		assert_int_equal(lines(errbuf), 1);
		record_opts__free(&o);
	}
}

static void test_unknown_config_key(void **state)
{
	const char *args[] = { "--config", write_config("{\"frequency\": 49, \"frequncy\": 3}"), "--", "true", NULL };
	struct record_opts o;

	(void)state;
	assert_int_not_equal(parse(&o, args), 0);
	assert_int_equal(lines(errbuf), 1);
	assert_non_null(strstr(errbuf, "unknown option \"frequncy\""));
	assert_non_null(strstr(errbuf, "config.json"));
	record_opts__free(&o);
}

static void test_bad_values(void **state)
{
	static const char *const bad_json[] = {
		"{\"duration\": -1}", "{\"duration\": 0}", "{\"frequency\": 0}", "{\"frequency\": 100001}",
		"{\"frequency\": 9.5}", "{\"frequency\": \"99\"}", "{\"output\": \"\"}", "{\"output\": 3}",
		"{\"phases\": {\"../x\": \"f\"}}", "{\"phases\": {\".hidden\": \"f\"}}", "{\"phases\": {\"x\": 3}}",
		"{\"phases\": {\"a/b\": \"f\"}}", "{\"threshold\": {\"inference_pct\": -1}}",
		"{\"threshold\": {\"no_such\": 1}}", "{\"side_period\": 0}", "{\"gpu\": \"cuda\"}", "{\"jit_maps\": \"maybe\"}",
		"{\"call_graph\": \"dwarf,1\"}", "{\"pid\": [1, -2]}", "{\"pid\": \"1\"}", "{\"verbose\": 1}",
		"{\"config\": \"other.json\"}", "{\"command\": []}", "[1]", "{\"frequency\": ",
	};
	static const char *const bad_cli[][3] = {
		{ "-d", "nan" }, { "-d", "inf" }, { "-d", "-1" }, { "-d", "1e400" }, { "--side-period", "nan" },
		{ "--side-period", "-0.5" }, { "-o", "" }, { "-F", "0" }, { "-F", "-5" }, { "-F", "1x" },
		{ "--phase", "nospec" }, { "--phase", "=f" }, { "--count", "a/b=f" },
		{ "--phase", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=f" },
		{ "--threshold", "inference_pct=inf" }, { "--min-block-us", "-1" }, { "-p", "0" }, { "-p", "" },
		{ "--comm", "" }, { "--call-graph", "lbr" },
	};
	struct record_opts o;
	char longname[80];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
		const char *args[] = { "--config", write_config(bad_json[i]), "--", "true", NULL };

		if (!parse(&o, args))
			fail_msg("accepted %s", bad_json[i]);
		if (lines(errbuf) != 1 || strncmp(errbuf, "infertrace: ", 12))
			fail_msg("%s: not one line: %s", bad_json[i], errbuf);
		record_opts__free(&o);
	}
	for (size_t i = 0; i < sizeof(bad_cli) / sizeof(bad_cli[0]); i++) {
		const char *args[] = { bad_cli[i][0], bad_cli[i][1], "--", "true", NULL };

		if (!parse(&o, args))
			fail_msg("accepted %s '%s'", bad_cli[i][0], bad_cli[i][1]);
		if (lines(errbuf) != 1)
			fail_msg("%s '%s': not one line: %s", bad_cli[i][0], bad_cli[i][1], errbuf);
		record_opts__free(&o);
	}
	/* the longest name allowed passes */
	memset(longname, 'a', MAX_NAME_LEN);
	snprintf(longname + MAX_NAME_LEN, sizeof(longname) - MAX_NAME_LEN, "=f");
	{
		const char *args[] = { "--phase", longname, "--", "true", NULL };

		assert_int_equal(parse(&o, args), 0);
		record_opts__free(&o);
	}
	/* what names may hold is said */
	{
		const char *args[] = { "--phase", "x/y=f", "--", "true", NULL };

		assert_int_not_equal(parse(&o, args), 0);
		assert_non_null(strstr(errbuf, "letters, digits"));
		record_opts__free(&o);
	}
}

static void test_frequency_kernel_limit(void **state)
{
	char dir[512], file[600];
	const char *args[] = { "-F", "5000", "--", "true", NULL };
	const char *ok[] = { "-F", "999", "--", "true", NULL };
	struct record_opts o;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "mkdir -p %s/proc/sys/kernel", tmpdir);
	assert_int_equal(system(dir), 0);
	snprintf(file, sizeof(file), "%s/proc/sys/kernel/perf_event_max_sample_rate", tmpdir);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("1000\n", f);
	fclose(f);
	setenv("INFERTRACE_SYSFS_ROOT", tmpdir, 1);
	assert_int_equal(parse(&o, args), 0);
	assert_int_equal(o.frequency, 1000);
	assert_int_equal(lines(errbuf), 1);
	assert_non_null(strstr(errbuf, "1000 Hz"));
	assert_non_null(strstr(errbuf, "perf_event_max_sample_rate"));
	record_opts__free(&o);
	assert_int_equal(parse(&o, ok), 0);
	assert_int_equal(o.frequency, 999);
	assert_string_equal(errbuf, "");
	record_opts__free(&o);
	unsetenv("INFERTRACE_SYSFS_ROOT");
}

static void test_message_prefix(void **state)
{
	char out[256];
	bool start = true;
	size_t n;
	const char *in = "infertrace: one\nlibbpf: two\ninfertrace: three infertrace: x\n";

	(void)state;
	n = messages__rewrite("infertrace record", in, strlen(in), out, sizeof(out), &start);
	out[n] = 0;
	assert_string_equal(out, "infertrace record: one\nlibbpf: two\ninfertrace record: three infertrace: x\n");
	/* a line written in two pieces is rewritten once */
	start = true;
	n = messages__rewrite("infertrace diff", "infertrace: a", 13, out, sizeof(out), &start);
	assert_false(start);
	n += messages__rewrite("infertrace diff", "infertrace: b\n", 14, out + n, sizeof(out) - n, &start);
	out[n] = 0;
	assert_string_equal(out, "infertrace diff: ainfertrace: b\n");
	assert_true(start);
	/* too small a buffer: the needed length, as snprintf */
	start = true;
	assert_int_equal(messages__rewrite("infertrace record", "infertrace: 12345\n", 18, out, 4, &start),
			 strlen("infertrace record: 12345\n"));
}

static void test_progress_line(void **state)
{
	char line[256];

	(void)state;
	progress__format(line, sizeof(line), 3725.4, 12, 34567, 8);
	assert_non_null(strstr(line, "01:02:05"));
	assert_non_null(strstr(line, "cycles 12"));
	assert_non_null(strstr(line, "samples 34567"));
	assert_non_null(strstr(line, "lost 8"));
	assert_null(strchr(line, '\n'));
}

static void test_man_and_completion_list_every_option(void **state)
{
	char *man = NULL, *comp = NULL;
	size_t mlen = 0, clen = 0;
	FILE *m = open_memstream(&man, &mlen), *c = open_memstream(&comp, &clen);

	(void)state;
	assert_int_equal(manpage__write(m), 0);
	assert_int_equal(completion__write_bash(c), 0);
	fclose(m);
	fclose(c);
	assert_non_null(strstr(man, ".TH INFERTRACE 1"));
	assert_non_null(strstr(man, "EXIT STATUS"));
	assert_non_null(strstr(comp, "complete -o filenames -F _infertrace infertrace"));
	for (const struct record_option *opt = record_options; opt->name; opt++) {
		char want[256], esc[128], *e = esc;

		for (const char *p = opt->name; *p; p++) {
			if (*p == '-')
				*e++ = '\\';
			*e++ = *p;
		}
		*e = 0;
		snprintf(want, sizeof(want), "\\fB\\-\\-%s\\fR", esc);
		if (!strstr(man, want))
			fail_msg("man page lacks %s", want);
		snprintf(want, sizeof(want), " --%s ", opt->name);
		if (!strstr(comp, want))
			fail_msg("completion lacks%s", want);
	}
	free(man);
	free(comp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_drives_both_paths),
		cmocka_unit_test(test_config_repeats_append_and_command_line_wins),
		cmocka_unit_test(test_config_abbreviations_and_aliases),
		cmocka_unit_test(test_unknown_config_key),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_frequency_kernel_limit),
		cmocka_unit_test(test_message_prefix),
		cmocka_unit_test(test_progress_line),
		cmocka_unit_test(test_man_and_completion_list_every_option),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
