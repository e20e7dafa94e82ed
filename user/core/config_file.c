// SPDX-License-Identifier: BSD-2-Clause
/* --config FILE: a JSON object whose keys are the options of the table in
 * options.c (record_options[]), e.g.
 *   {"output": "out", "frequency": 199, "cycle": "run_cycle",
 *    "phases": {"llm_inference": "libllama:llama_decode"},
 *    "counts": {"tokens": "libllama:llama_decode"}, "presets": ["sqlite"],
 *    "threshold": {"inference_pct": 70}, "command": ["./loop", "--n", "10"]}
 * Each value is turned into the text the command line would take and given
 * to the same setter, so the checks, the repeats and the abbreviations are
 * the command line's. Applied before the command line: options given there
 * win; repeatable ones add to the file's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config_file.h"
#include "model.h"
#include "vec.h"

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

static void *keep(void *p)
{
	bool first = !kept;

	if (!p)
		return NULL;
	if (VEC_RESIZE(kept, nkept + 1)) {
		free(p);
		return NULL;
	}
	if (first)
		atexit(free_kept);
	kept[nkept++] = p;
	return p;
}

static int bad(const char *path, const char *key, const char *want)
{
	fprintf(stderr, "infertrace: %s: \"%s\" must be %s\n", path, key, want);
	return -EINVAL;
}

/* A scalar as the command line would spell it; NULL if v is not of the kind. */
static char *scalar_text(json_t *v, enum option_value kind)
{
	char *s = NULL;

	if (kind == OPTV_STRING && json_is_string(v))
		s = strdup(json_string_value(v));
	else if (kind == OPTV_NUMBER && json_is_integer(v) &&
		 asprintf(&s, "%lld", (long long)json_integer_value(v)) < 0)
		s = NULL;
	else if (kind == OPTV_NUMBER && json_is_real(v) && asprintf(&s, "%.17g", json_real_value(v)) < 0)
		s = NULL;
	return s;
}

static const char *kind_name(enum option_value kind)
{
	return kind == OPTV_NUMBER ? "a number" : "a string";
}

static int set_text(struct record_opts *o, const struct record_option *opt, const char *path,
		    const char *key, char *text)
{
	char err[512];

	if (!keep(text)) {
		fprintf(stderr, "infertrace: %s: out of memory\n", path);
		return -ENOMEM;
	}
	if (record_option__set(o, opt, text, true, err, sizeof(err))) {
		fprintf(stderr, "infertrace: %s: \"%s\": %s\n", path, key, err);
		return -EINVAL;
	}
	return 0;
}

/* {"NAME": VALUE or [VALUE, ...]} → NAME=VALUE[,VALUE...], once per NAME */
static int apply_named(struct record_opts *o, const struct record_option *opt, const char *path,
		       const char *key, json_t *v)
{
	char want[128];
	const char *name;
	json_t *val;

	snprintf(want, sizeof(want), "an object {NAME: %s or [%s, ...]}", kind_name(opt->value),
		 kind_name(opt->value));
	json_object_foreach(v, name, val) {
		char *text = NULL, *one;
		size_t len = 0, i;
		FILE *m;
		json_t *e;

		if (!json_is_array(val)) {
			if (!(one = scalar_text(val, opt->value)))
				return bad(path, key, want);
			if (asprintf(&text, "%s=%s", name, one) < 0)
				text = NULL;
			free(one);
		} else {
			if (!json_array_size(val) || !(m = open_memstream(&text, &len)))
				return bad(path, key, want);
			fprintf(m, "%s=", name);
			json_array_foreach(val, i, e) {
				if (!(one = scalar_text(e, opt->value))) {
					fclose(m);
					free(text);
					return bad(path, key, want);
				}
				fprintf(m, "%s%s", i ? "," : "", one);
				free(one);
			}
			fclose(m);
		}
		if (set_text(o, opt, path, key, text))
			return -EINVAL;
	}
	return 0;
}

static int apply_command(struct record_opts *o, const char *path, json_t *v, bool cli_target)
{
	size_t i, n = json_array_size(v);
	json_t *a;
	char **argv;

	if (!json_is_array(v) || !n)
		return bad(path, "command", "a non-empty array of strings (argv)");
	argv = keep(calloc(n + 1, sizeof(*argv)));
	if (!argv)
		return -ENOMEM;
	json_array_foreach(v, i, a) {
		if (!json_is_string(a) || !(argv[i] = keep(strdup(json_string_value(a)))))
			return bad(path, "command", "a non-empty array of strings (argv)");
	}
	if (!cli_target)
		o->command = argv;
	return 0;
}

static int apply_key(struct record_opts *o, const char *path, const char *key, json_t *v, bool cli_target)
{
	const struct record_option *opt;
	char err[512], want[128];
	bool negated;
	size_t i;
	json_t *e;

	/* the command is not an option but the command line's operands */
	if (!strcmp(key, "command"))
		return apply_command(o, path, v, cli_target);
	opt = record_option__lookup(key, &negated, err, sizeof(err));
	if (!opt) {
		fprintf(stderr, "infertrace: %s: %s\n", path, err);
		return -EINVAL;
	}
	if (json_is_null(v))
		return 0; /* null: not given, the default stays */
	if (opt->value == OPTV_NONE) {
		if (!json_is_boolean(v))
			return bad(path, key, "true or false");
		/* false: not given, as a flag left off the command line */
		return json_is_true(v) != negated ? record_option__set(o, opt, NULL, true, err, sizeof(err)) : 0;
	}
	if ((opt->flags & OPTF_NAMED) && json_is_object(v))
		return apply_named(o, opt, path, key, v);
	if (json_is_array(v) && (opt->flags & OPTF_REPEAT)) {
		snprintf(want, sizeof(want), "%s or an array of them", (opt->flags & OPTF_NAMED) ?
			 "an object {NAME: VALUE}, \"NAME=VALUE\"" : kind_name(opt->value));
		json_array_foreach(v, i, e) {
			/* NAME=VALUE items are strings whatever the value's kind */
			char *text = scalar_text(e, (opt->flags & OPTF_NAMED) ? OPTV_STRING : opt->value);

			if (!text)
				return bad(path, key, want);
			if (set_text(o, opt, path, key, text))
				return -EINVAL;
		}
		return 0;
	}
	{
		char *text = scalar_text(v, (opt->flags & OPTF_NAMED) ? OPTV_STRING : opt->value);

		if (!text) {
			if (opt->flags & OPTF_NAMED)
				snprintf(want, sizeof(want), "an object {NAME: %s or [%s, ...]}",
					 kind_name(opt->value), kind_name(opt->value));
			else
				snprintf(want, sizeof(want), "%s%s", kind_name(opt->value),
					 (opt->flags & OPTF_REPEAT) ? " or an array of them" : "");
			return bad(path, key, want);
		}
		return set_text(o, opt, path, key, text);
	}
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

/* name: its spec, or [specs] (a hand-written profile) */
static int asked_specs(struct model *m, json_t *named, struct model_specs *out)
{
	const char *name;
	json_t *v, *e;
	size_t i;

	json_object_foreach(named, name, v) {
		json_t *one = json_is_array(v) ? NULL : v;

		for (i = 0; one || i < json_array_size(v); i++) {
			e = one ? one : json_array_get(v, i);
			if (json_is_string(e)) {
				if (VEC_RESERVE(out->v, out->cap, out->n, 8))
					return -ENOMEM;
				out->v[out->n++] = (struct model_spec){ model__intern(m, name),
									model__intern(m, json_string_value(e)) };
			}
			if (one)
				break;
		}
	}
	return 0;
}

int config_file__asked(json_t *config, struct model *m)
{
	struct model_asked *a = &m->run.asked;
	json_t *freq = json_object_get(config, "frequency"), *v;
	size_t i;

	model__clear_asked(a);
	a->frequency = json_is_integer(freq) && json_integer_value(freq) > 0 && json_integer_value(freq) <= INT_MAX ?
		       (int)json_integer_value(freq) : 0;
	v = json_object_get(config, "cycle");
	a->cycle = json_is_string(v) ? model__intern(m, json_string_value(v)) : -1;
	v = json_object_get(config, "cycle_marker");
	a->cycle_marker = json_is_string(v) ? model__intern(m, json_string_value(v)) : -1;
	json_array_foreach(json_object_get(config, "presets"), i, v) {
		if (!json_is_string(v))
			continue;
		if (VEC_RESERVE(a->presets.v, a->presets.cap, a->presets.n, 4))
			return -ENOMEM;
		a->presets.v[a->presets.n++] = model__intern(m, json_string_value(v));
	}
	a->kernel_addresses = json_is_true(json_object_get(config, "kernel_addresses"));
	if (asked_specs(m, json_object_get(config, "phases"), &a->phases) ||
	    asked_specs(m, json_object_get(config, "counts"), &a->counts))
		return -ENOMEM;
	return 0;
}
