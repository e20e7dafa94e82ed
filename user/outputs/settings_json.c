// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "json_text.h"
#include "settings_json.h"
#include "tune_stats.h"

/* ---- the platform ---- */

json_t *settings__platform(const json_t *system, const json_t *gpu)
{
	static const char *const keys[] = { "cpu_model", "machine_model", "arch", "cpus", "mem_total_mb", "kernel",
					    "hostname", "power" };
	json_t *p = json_object(), *gpus = json_array(), *d;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(system, keys[i]);

		json_object_set_new(p, keys[i], v ? json_deep_copy(v) : json_null());
	}
	json_array_foreach(json_object_get(gpu, "devices"), i, d)
		if (json_is_string(json_object_get(d, "name")))
			json_array_append(gpus, json_object_get(d, "name"));
	json_object_set_new(p, "gpus", gpus);
	return p;
}

static void lower_cat(char *hay, size_t len, const char *s)
{
	size_t at = strlen(hay);

	for (; s && *s && at + 2 < len; s++)
		hay[at++] = (char)tolower((unsigned char)*s);
	if (at + 1 < len)
		hay[at++] = '\n';
	hay[at] = 0;
}

bool settings__platform_is(const json_t *platform, const char *name, char *described, size_t len)
{
	static const char *const keys[] = { "cpu_model", "machine_model", "arch", "hostname" };
	char hay[2048] = "", word[128];
	json_t *g, *nv = json_object_get(json_object_get(json_object_get(platform, "power"), "nvpmodel"), "name");
	const char *cpu = json_string_value(json_object_get(platform, "cpu_model"));
	const char *board = json_string_value(json_object_get(platform, "machine_model"));
	const char *arch = json_string_value(json_object_get(platform, "arch"));
	size_t i, words = 0;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		lower_cat(hay, sizeof(hay), json_string_value(json_object_get(platform, keys[i])));
	json_array_foreach(json_object_get(platform, "gpus"), i, g)
		lower_cat(hay, sizeof(hay), json_string_value(g));
	lower_cat(hay, sizeof(hay), json_string_value(nv));
	snprintf(described, len, "%s%s%s (%s, %lld CPUs%s%s)", board ? board : "", board && cpu ? ", " : "",
		 cpu ? cpu : board ? "" : "a machine of unknown model", arch ? arch : "?",
		 (long long)json_integer_value(json_object_get(platform, "cpus")),
		 json_array_size(json_object_get(platform, "gpus")) ? ", GPU " : "",
		 json_array_size(json_object_get(platform, "gpus")) ?
		 json_string_value(json_array_get(json_object_get(platform, "gpus"), 0)) : "");
	for (const char *s = name; *s;) {
		size_t n = strcspn(s, "_-. ");

		if (n) {
			if (n >= sizeof(word))
				return false;
			for (size_t k = 0; k < n; k++)
				word[k] = (char)tolower((unsigned char)s[k]);
			word[n] = 0;
			if (!strstr(hay, word))
				return false;
			words++;
		}
		s += n;
		s += strspn(s, "_-. ");
	}
	return words > 0;
}

/* ---- the document ---- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *interval(double lo, double hi)
{
	return isfinite(lo) && isfinite(hi) ? json_pack("[f,f]", lo, hi) : json_null();
}

/* A value as the command line gave it: a number when it is one */
static json_t *value_json(const char *v)
{
	char *end;
	long long n;

	if (*v && (isdigit((unsigned char)*v) || (*v == '-' && isdigit((unsigned char)v[1])))) {
		errno = 0;
		n = strtoll(v, &end, 10);
		if (!*end && !errno)
			return json_integer(n);
	}
	return json_text(v);
}

static json_t *values_of(const struct tune_result *t, const struct tune_setting *s, bool runner_names)
{
	json_t *o = json_object();

	for (int p = 0; p < t->opts->nparams; p++)
		json_object_set_new(o, runner_names ? t->as[p] : t->opts->params[p].name,
				    value_json(t->opts->params[p].values[s->value[p]]));
	return o;
}

static json_t *evidence_json(const struct tune_evidence *e)
{
	return json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "runs", (json_int_t)e->runs, "cycles",
			 (json_int_t)e->cycles, "runq_share_percent", num_or_null(e->runq_share_pct),
			 "runq_wait_others_ms_per_cycle", num_or_null(e->runq_others_ms_per_cycle),
			 "oncpu_ms_per_cycle", num_or_null(e->oncpu_ms_per_cycle), "cpus_busy", num_or_null(e->cpus_busy),
			 "gpu_busy_percent", num_or_null(e->gpu_busy_pct), "throttled_runs", (json_int_t)e->throttled_runs,
			 "max_temp_c", num_or_null(e->max_temp_c));
}

static json_t *strings(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_text(v[i]));
	return a;
}

static json_t *setting_json(const struct tune_result *t, size_t i)
{
	const struct tune_setting *s = &t->settings[i];
	const struct tune_row *r = &s->row;
	json_t *o = json_object();

	json_object_set_new(o, "setting", json_text(s->label));
	json_object_set_new(o, "values", values_of(t, s, false));
	json_object_set_new(o, "runs", strings(s->runs, s->nruns));
	json_object_set_new(o, "runs_not_counted", strings(s->left, s->nleft));
	json_object_set_new(o, "cycles", json_integer((json_int_t)r->n));
	json_object_set_new(o, "warmup_cycles_left_out",
			    s->nruns ? json_pack("[I,I]", (json_int_t)s->warmup_lo, (json_int_t)s->warmup_hi) : json_null());
	json_object_set_new(o, "median", num_or_null(r->median));
	json_object_set_new(o, "interval", interval(r->lo, r->hi));
	json_object_set_new(o, "own_median", num_or_null(r->own_median));
	json_object_set_new(o, "own_interval", interval(r->own_lo, r->own_hi));
	json_object_set_new(o, "change_percent", num_or_null(r->change_pct));
	json_object_set_new(o, "change_interval_percent", interval(r->change_lo, r->change_hi));
	json_object_set_new(o, "verdict", json_string(tune_verdict__name(r->verdict)));
	json_object_set_new(o, "best", json_boolean(t->best == (int)i));
	json_object_set_new(o, "evidence", evidence_json(&s->ev));
	return o;
}

json_t *settings__json(const struct tune_result *t, const json_t *platform, bool platform_ok)
{
	const struct tune_opts *o = t->opts;
	json_t *doc = json_object(), *params = json_array(), *settings = json_array(), *dirs = json_array();
	json_t *cmd = json_array(), *chosen, *base, *metric;
	const struct tune_setting *c = t->nsettings ? &t->settings[t->chosen] : NULL;
	const struct tune_setting *b = t->nsettings ? &t->settings[t->base] : NULL;

	json_object_set_new(doc, "schema_version", json_string(SETTINGS_SCHEMA_VERSION));
	json_object_set_new(doc, "tool", json_pack("{s:s,s:s}", "name", "infertrace", "version", INFERTRACE_VERSION));
	json_object_set_new(doc, "created_at", json_string(t->started_at));
	json_object_set_new(doc, "complete", json_boolean(t->complete));
	json_object_set_new(doc, "stop_reason", t->complete ? json_null() : json_text(t->stop_reason));
	for (size_t i = 0; t->command && t->command[i]; i++)
		json_array_append_new(cmd, json_text(t->command[i]));
	json_object_set_new(doc, "command", cmd);
	json_object_set_new(doc, "runner", t->runner ? json_string(t->runner) : json_null());
	for (int p = 0; p < o->nparams; p++) {
		json_t *vals = json_array();

		for (int v = 0; v < o->params[p].nvalues; v++)
			json_array_append_new(vals, value_json(o->params[p].values[v]));
		json_array_append_new(params, json_pack("{s:o,s:o,s:o,s:o}", "name", json_text(o->params[p].name),
							"as", json_text(t->as[p]), "values", vals, "baseline",
							value_json(o->params[p].values[o->params[p].baseline])));
	}
	json_object_set_new(doc, "parameters", params);
	json_object_set_new(doc, "search", json_string(o->grid ? "grid" : "one_at_a_time"));
	json_object_set_new(doc, "runs_per_setting", json_integer(o->runs));
	json_object_set_new(doc, "runs_planned", json_integer((json_int_t)t->runs_planned));
	json_object_set_new(doc, "runs_done", json_integer((json_int_t)t->runs_done));
	metric = json_pack("{s:s,s:s,s:b,s:s,s:f,s:s,s:o,s:o}", "name", t->metric.name, "unit",
			   t->metric.unit ? t->metric.unit : "", "higher_is_better", t->metric.higher_is_better,
			   "statistic", "median of the cycles", "level_percent", TUNE_LEVEL_PCT, "interval",
			   "bootstrap: runs drawn with replacement, then cycles inside each",
			   "warmup", o->warmup < 0 ? json_string(TUNE_WARMUP_RULE) : json_integer(o->warmup),
			   "cycles_per_run", o->cycles ? json_integer(o->cycles) : json_string("all"));
	json_object_set_new(doc, "metric", t->have_metric ? metric : json_null());
	if (!t->have_metric)
		json_decref(metric);
	chosen = c ? json_pack("{s:o,s:o,s:o,s:o,s:o}", "values", values_of(t, c, true), "parameters",
			       values_of(t, c, false), "setting", json_text(c->label), "median",
			       num_or_null(c->row.median), "interval", interval(c->row.lo, c->row.hi)) : json_null();
	base = b ? json_pack("{s:o,s:o,s:o,s:o,s:o}", "values", values_of(t, b, true), "parameters",
			     values_of(t, b, false), "setting", json_text(b->label), "median", num_or_null(b->row.median),
			     "interval", interval(b->row.lo, b->row.hi)) : json_null();
	json_object_set_new(doc, "chosen", chosen);
	json_object_set_new(doc, "baseline", base);
	json_object_set_new(doc, "significant", json_boolean(t->significant));
	json_object_set_new(doc, "margin", c && t->chosen != t->base ?
			    json_pack("{s:o,s:o}", "percent", num_or_null(c->row.change_pct), "interval_percent",
				      interval(c->row.change_lo, c->row.change_hi)) : json_null());
	json_object_set_new(doc, "best", t->best >= 0 ? json_text(t->settings[t->best].label) : json_null());
	json_object_set_new(doc, "platform", json_deep_copy(platform));
	json_object_set_new(doc, "target_platform", o->target_platform ? json_text(o->target_platform) : json_null());
	json_object_set_new(doc, "target_platform_matches", o->target_platform ? json_boolean(platform_ok) : json_null());
	json_object_set_new(doc, "forced", json_boolean(o->force && o->target_platform && !platform_ok));
	/* what changed from the baseline to the best (to the next best when the baseline is best) */
	json_object_set_new(doc, "evidence", b && t->versus >= 0 ?
			    json_pack("{s:o,s:o,s:o}", "baseline", evidence_json(&b->ev), "versus",
				      json_text(t->settings[t->versus].label), "other",
				      evidence_json(&t->settings[t->versus].ev)) : json_null());
	for (size_t i = 0; i < t->nsettings; i++) {
		json_array_append_new(settings, setting_json(t, i));
		for (size_t k = 0; k < t->settings[i].nruns; k++)
			json_array_append_new(dirs, json_text(t->settings[i].runs[k]));
	}
	json_object_set_new(doc, "settings", settings);
	json_object_set_new(doc, "run_dirs", dirs);
	return doc;
}

int settings__write(const json_t *doc, const char *dir)
{
	struct atomic_file *af = atomic_file__open(dir, "settings.json");

	if (!af)
		return -errno;
	if (json_dumpf(doc, atomic_file__stream(af), JSON_INDENT(2) | JSON_REAL_PRECISION(10))) {
		int err = atomic_file__error(af);

		atomic_file__abort(af);
		return err;
	}
	fputc('\n', atomic_file__stream(af));
	return atomic_file__commit(af);
}
