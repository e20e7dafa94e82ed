// SPDX-License-Identifier: BSD-2-Clause
/* Perfetto's JSON importer ignores trace.json's sample stacks, and
 * speedscope reads them not either: this file is the samples' timeline in a
 * format a maintained viewer opens with its stacks (speedscope: Time Order
 * per thread, Left Heavy, Sandwich). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json_text.h"
#include "model.h"
#include "speedscope.h"
#include "vec.h"

/* The shared frames, each name once: the index speedscope's stacks name. */
struct frames {
	json_t *ids; /* name -> index */
	char **names;
	size_t n, cap;
};

struct timeline {
	const struct model *m;
	struct frames fr;
	char **text;        /* model.names index -> its stack as "[id,id,...]", root first */
	char *unknown;      /* a sample with no stack nor leaf */
	uint32_t *order;    /* the samples by (pid, tid, time) */
	uint64_t period_ns; /* one sample's weight */
};

static int32_t frame_id(struct frames *fr, const char *name, size_t len)
{
	char *key = strndup(name, len);
	json_t *v;

	if (!key)
		return -1;
	v = json_object_get(fr->ids, key);
	if (v) {
		free(key);
		return (int32_t)json_integer_value(v);
	}
	if (VEC_RESERVE(fr->names, fr->cap, fr->n, 256) ||
	    json_object_set_new_nocheck(fr->ids, key, json_integer((json_int_t)fr->n))) {
		free(key);
		return -1;
	}
	fr->names[fr->n] = key;
	return (int32_t)fr->n++;
}

/* A folded stack ("root;...;leaf") as speedscope's list of frame ids. */
static char *stack_text(struct frames *fr, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *sep = "";
	bool ok = f != NULL;

	if (f)
		fputc('[', f);
	while (ok && *s) {
		size_t n = strcspn(s, ";");
		int32_t id = frame_id(fr, s, n);

		ok = id >= 0;
		fprintf(f, "%s%d", sep, id);
		sep = ",";
		s += n + (s[n] == ';');
	}
	if (f) {
		fputc(']', f);
		ok = !ferror(f) && ok;
		fclose(f);
	}
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The sample's stack: its line of stacks.folded, else its leaf alone. */
static const char *sample_text(struct timeline *t, const struct model_trace_sample *s)
{
	int32_t at = s->stack >= 0 && (size_t)s->stack < t->m->nnames ? s->stack :
		     s->frame >= 0 && (size_t)s->frame < t->m->nnames ? s->frame : -1;

	if (at < 0)
		return t->unknown ? t->unknown : (t->unknown = stack_text(&t->fr, "[unknown]"));
	if (!t->text[at])
		t->text[at] = stack_text(&t->fr, t->m->names[at]);
	return t->text[at];
}

static int by_thread_time(const void *a, const void *b, void *arg)
{
	const struct model_trace_sample *v = arg, *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void json_out(FILE *f, const char *s)
{
	json_t *j = json_text(s);
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(d ? d : "\"\"", f);
	free(d);
	json_decref(j);
}

/* Where the sample's period began, from the recording's start (a
 * cpu-clock sample stands for the period before it), and no earlier than
 * the sample before it on the thread's timeline. */
static uint64_t period_start(const struct timeline *t, const struct model_trace_sample *s, uint64_t after)
{
	uint64_t at = s->ts_ns > t->m->run.start_ns ? s->ts_ns - t->m->run.start_ns : 0;

	at = at > t->period_ns ? at - t->period_ns : 0;
	return at > after ? at : after;
}

/* One thread's profile, order[from, to). A sample sits at its time, so
 * that its place on speedscope's time axis is the recording's: it lasts
 * until the next one begins when that is less than 1.5 periods away (one
 * run of the thread reads as one bar, timer jitter and a sample less than
 * a period after the last, from another CPU's timer, alike), else one
 * period, the rest of the gap an empty stack (the thread not sampled).
 * Weights are nanoseconds, at least 1 (speedscope drops a weight of 0).
 * The samples then their weights, in the same walk. */
static void write_thread(struct timeline *t, FILE *f, size_t from, size_t to, uint64_t end)
{
	const struct model_trace_sample *v = t->m->trace_samples, *first = &v[t->order[from]];
	const char *name = model__thread_name(t->m, first->tgid, first->tid);
	const struct model_process *p = name ? NULL : model__find_process(t->m, first->tgid);
	uint64_t last = 0, at;
	char label[64];

	if (!name)
		name = p && p->comm[0] ? p->comm : "thread";
	snprintf(label, sizeof(label), "%s (tid %d)", name, first->tid);
	for (size_t i = from; i < to; i++)
		last = period_start(t, &v[t->order[i]], last) + 1;
	last += t->period_ns - 1;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	json_out(f, label);
	fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%llu",
		(unsigned long long)(last > end ? last : end));
	for (int pass = 0; pass < 2; pass++) {
		const char *sep = "";
		uint64_t next;

		fputs(pass ? ",\n\"weights\":[" : ",\n\"samples\":[", f);
		at = period_start(t, &v[t->order[from]], 0);
		if (at) {
			if (pass)
				fprintf(f, "%llu", (unsigned long long)at);
			else
				fputs("[]", f);
			sep = ",";
		}
		for (size_t i = from; i < to; i++) {
			uint64_t w = t->period_ns;

			next = i + 1 < to ? period_start(t, &v[t->order[i + 1]], at + 1) : at + w;
			if (next - at < w + w / 2)
				w = next - at;
			if (pass)
				fprintf(f, "%s%llu", sep, (unsigned long long)w);
			else
				fprintf(f, "%s%s", sep, sample_text(t, &v[t->order[i]]));
			sep = ",";
			if (next > at + w) {
				if (pass)
					fprintf(f, ",%llu", (unsigned long long)(next - at - w));
				else
					fputs(",[]", f);
			}
			at = next;
		}
		fputc(']', f);
	}
	fputc('}', f);
}

static void timeline_free(struct timeline *t)
{
	for (size_t i = 0; t->text && i < t->m->nnames; i++)
		free(t->text[i]);
	free(t->text);
	for (size_t i = 0; i < t->fr.n; i++)
		free(t->fr.names[i]);
	free(t->fr.names);
	json_decref(t->fr.ids);
	free(t->unknown);
	free(t->order);
}

static bool same_thread(const struct model_trace_sample *a, const struct model_trace_sample *b)
{
	return a->tgid == b->tgid && a->tid == b->tid;
}

int speedscope__encode(const struct model *m, FILE *f)
{
	json_t *freq = json_object_get(m->run.config, "frequency");
	uint64_t hz = json_is_integer(freq) && json_integer_value(freq) > 0 ? (uint64_t)json_integer_value(freq) : 99;
	struct timeline t = { .m = m, .period_ns = 1000000000ull / hz };
	const struct model_trace_sample *v = m->trace_samples;
	size_t n = m->ntrace_samples, busiest = 0, most = 0, nprof = 0;
	uint64_t end = m->run.end_ns > m->run.start_ns ? m->run.end_ns - m->run.start_ns : 0;
	int err = -ENOMEM;

	t.fr.ids = json_object();
	t.text = m->nnames ? calloc(m->nnames, sizeof(*t.text)) : NULL;
	t.order = n ? malloc(n * sizeof(*t.order)) : NULL;
	if (!t.fr.ids || (m->nnames && !t.text) || (n && !t.order))
		goto out;
	for (size_t i = 0; i < n; i++)
		t.order[i] = (uint32_t)i;
	if (n)
		qsort_r(t.order, n, sizeof(*t.order), by_thread_time, (void *)v);
	/* every stack's frames first: the shared list comes before the profiles */
	for (size_t i = 0; i < n; i++)
		if (!sample_text(&t, &v[t.order[i]]))
			goto out;
	for (size_t from = 0, i; from < n; from = i) {
		for (i = from + 1; i < n && same_thread(&v[t.order[i]], &v[t.order[from]]); i++)
			;
		if (i - from > most) {
			most = i - from;
			busiest = nprof;
		}
		nprof++;
	}
	fprintf(f, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		"\"exporter\":\"infertrace %s\",\"name\":\"infertrace timeline\",\"activeProfileIndex\":%zu,\n"
		"\"shared\":{\"frames\":[", INFERTRACE_VERSION, busiest);
	for (size_t i = 0; i < t.fr.n; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_out(f, t.fr.names[i]);
		fputc('}', f);
	}
	fputs("]},\n\"profiles\":[", f);
	for (size_t from = 0, i; from < n; from = i) {
		for (i = from + 1; i < n && same_thread(&v[t.order[i]], &v[t.order[from]]); i++)
			;
		fputs(from ? ",\n" : "\n", f);
		write_thread(&t, f, from, i, end);
	}
	fputs("]}\n", f);
	err = ferror(f) ? -EIO : 0;
out:
	timeline_free(&t);
	return err;
}

int speedscope__write(const struct model *m, const char *dir)
{
	struct atomic_file *af = atomic_file__open(dir, "timeline.speedscope.json");
	int err;

	if (!af)
		return -errno;
	err = speedscope__encode(m, atomic_file__stream(af));
	if (err) {
		if (err == -EIO)
			err = atomic_file__error(af);
		atomic_file__abort(af);
		return err;
	}
	return atomic_file__commit(af);
}
