// SPDX-License-Identifier: BSD-2-Clause
/* `py:` specs: calls of Python functions from stack observations; see pyspans.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "infertrace.h"
#include "pyspans.h"
#include "vec.h"

_Static_assert(PYSPANS_MAX_SPECS == IT_PY_EDGE_SPECS, "one kernel edge slot per py: spec");

struct pyspec {
	char *text, *module, *qualname; /* module NULL: any file */
	int role, id;
};

struct open_call {
	bool active;
	bool ending;         /* absent from the last observation: ends at end_ns
			      * unless the next one shows the same call again */
	uint32_t depth;
	uint64_t call, start_ns, end_ns;
};

struct pythread {
	pid_t tgid, tid;
	uint64_t last_ns;
	int last_kind;
	struct open_call open[PYSPANS_MAX_SPECS];
};

struct pyspans {
	struct pyspec specs[PYSPANS_MAX_SPECS];
	int nspecs;
	struct pythread *threads;
	size_t nthreads, capthreads;
	struct pyspan_call *calls, *extra;
	size_t ncalls, capcalls, nextra;
	uint64_t observations, edges;
	double edge_sum_ms, edge_max_ms;
	bool hold_off;                    /* --max-memory reached: calls are counted, not kept */
	uint64_t not_kept[2];             /* [0] phase calls, [1] cycles */
};

void pyspans__set_hold(struct pyspans *p, bool hold)
{
	p->hold_off = !hold;
}

uint64_t pyspans__not_kept(const struct pyspans *p, bool cycles)
{
	return p ? p->not_kept[cycles] : 0;
}

bool pyspans__is_spec(const char *text)
{
	return text && !strncmp(text, "py:", 3);
}

struct pyspans *pyspans__new(void)
{
	return calloc(1, sizeof(struct pyspans));
}

void pyspans__free(struct pyspans *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nspecs; i++) {
		free(p->specs[i].text);
		free(p->specs[i].module);
		free(p->specs[i].qualname);
	}
	free(p->threads);
	free(p->calls);
	free(p->extra);
	free(p);
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == ' ' || *s == ':' || *s == ';')
			return false;
	return true;
}

int pyspans__add_spec(struct pyspans *p, const char *text, int role, int id, char *err, size_t errlen)
{
	const char *body = text + 3, *colon;
	struct pyspec *s;

	if (!pyspans__is_spec(text)) {
		snprintf(err, errlen, "'%s' is not a py: spec", text);
		return -EINVAL;
	}
	if (p->nspecs >= PYSPANS_MAX_SPECS) {
		snprintf(err, errlen, "too many py: specs (at most %d)", PYSPANS_MAX_SPECS);
		return -E2BIG;
	}
	s = &p->specs[p->nspecs];
	memset(s, 0, sizeof(*s));
	colon = strchr(body, ':');
	if (colon) {
		s->module = strndup(body, colon - body);
		s->qualname = strdup(colon + 1);
	} else {
		s->qualname = strdup(body);
	}
	s->text = strdup(text);
	if (!s->text || !s->qualname || (colon && !s->module)) {
		free(s->text);
		free(s->module);
		free(s->qualname);
		return -ENOMEM;
	}
	if (!name_ok(s->qualname) || (s->module && !name_ok(s->module))) {
		snprintf(err, errlen, "'%s': expected py:QUALNAME or py:MODULE:QUALNAME "
			 "(e.g. py:run_cycle, py:train.py:Model.step)", text);
		free(s->text);
		free(s->module);
		free(s->qualname);
		return -EINVAL;
	}
	s->role = role;
	s->id = id;
	p->nspecs++;
	return 0;
}

bool pyspans__is_callers(const struct pyspans *p, int spec)
{
	return p && spec >= 0 && spec < p->nspecs && !p->specs[spec].module &&
	       !strcmp(p->specs[spec].qualname, PYSPANS_CALLERS);
}

int pyspans__callers_spec(const struct pyspans *p)
{
	for (int i = 0; p && i < p->nspecs; i++)
		if (pyspans__is_callers(p, i))
			return i;
	return -1;
}

int pyspans__set_extra(struct pyspans *p, const struct pyspan_call *calls, size_t n)
{
	struct pyspan_call *c = n ? malloc(n * sizeof(*c)) : NULL;

	if (n && !c)
		return -ENOMEM;
	if (n)
		memcpy(c, calls, n * sizeof(*c));
	free(p->extra);
	p->extra = c;
	p->nextra = n;
	return 0;
}

int pyspans__nspecs(const struct pyspans *p)
{
	return p ? p->nspecs : 0;
}

bool pyspans__has_role(const struct pyspans *p, int role)
{
	for (int i = 0; p && i < p->nspecs; i++)
		if (p->specs[i].role == role)
			return true;
	return false;
}

const char *pyspans__spec_text(const struct pyspans *p, int spec)
{
	return spec >= 0 && spec < p->nspecs ? p->specs[spec].text : "";
}

const char *pyspans__spec_qualname(const struct pyspans *p, int spec)
{
	return spec >= 0 && spec < p->nspecs ? p->specs[spec].qualname : "";
}

void pyspans__spec_role(const struct pyspans *p, int spec, int *role, int *id)
{
	*role = spec >= 0 && spec < p->nspecs ? p->specs[spec].role : 0;
	*id = spec >= 0 && spec < p->nspecs ? p->specs[spec].id : 0;
}

/* MODULE names the file: `train`, `train.py` or a path ending in either. */
static bool module_matches(const char *module, const char *file)
{
	const char *base = strrchr(file, '/');
	size_t n = strlen(module);

	base = base ? base + 1 : file;
	if (!strcmp(module, file) || !strcmp(module, base))
		return true;
	return !strncmp(base, module, n) && !strcmp(base + n, ".py");
}

uint32_t pyspans__match_mask(const struct pyspans *p, const char *qualname, const char *file)
{
	uint32_t mask = 0;

	for (int i = 0; p && i < p->nspecs && i < PYSPANS_MAX_SPECS; i++) {
		const struct pyspec *s = &p->specs[i];

		if (!strcmp(s->qualname, qualname) && (!s->module || (file && module_matches(s->module, file))))
			mask |= 1u << i;
	}
	return mask;
}

uint64_t pyspans__spec_module_hash(const struct pyspans *p, int spec)
{
	const char *m = p->specs[spec].module, *base;
	size_t n;
	uint64_t h = 0xcbf29ce484222325ull;

	if (!m)
		return 0;
	base = strrchr(m, '/');
	base = base ? base + 1 : m;
	n = strlen(base);
	if (n >= 3 && !strcmp(base + n - 3, ".py"))
		n -= 3;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)base[i]) * 0x100000001b3ull;
	return h;
}

int pyspans__match(const struct pyspans *p, const char *qualname, const char *file)
{
	for (int i = 0; p && i < p->nspecs; i++) {
		const struct pyspec *s = &p->specs[i];

		if (!strcmp(s->qualname, qualname) && (!s->module || (file && module_matches(s->module, file))))
			return i;
	}
	return -1;
}

static struct pythread *thread_of(struct pyspans *p, pid_t tgid, pid_t tid)
{
	struct pythread *t;

	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid && p->threads[i].tgid == tgid)
			return &p->threads[i];
	if (VEC_RESERVE(p->threads, p->capthreads, p->nthreads, 16))
		return NULL;
	t = &p->threads[p->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tgid = tgid;
	t->tid = tid;
	return t;
}

static int add_call(struct pyspans *p, const struct pythread *t, int spec, uint64_t start, uint64_t end)
{
	if (p->hold_off) {
		p->not_kept[p->specs[spec].role == IT_ROLE_CYCLE]++;
		return 0;
	}
	if (VEC_RESERVE(p->calls, p->capcalls, p->ncalls, 256))
		return -ENOMEM;
	p->calls[p->ncalls++] = (struct pyspan_call){
		.tgid = t->tgid, .tid = t->tid, .spec = spec, .role = p->specs[spec].role,
		.id = p->specs[spec].id, .start_ns = start, .end_ns = end < start ? start : end,
	};
	return 0;
}

int pyspans__observe(struct pyspans *p, pid_t tgid, pid_t tid, uint64_t ts, int kind,
		     const struct pyspan_hit *hits, int nhits)
{
	struct pythread *t = thread_of(p, tgid, tid);
	const struct pyspan_hit *now[PYSPANS_MAX_SPECS] = {};
	bool first, edge = false;
	uint64_t b;

	if (!t)
		return -ENOMEM;
	p->observations++;
	for (int i = 0; i < nhits; i++)
		if (hits[i].spec >= 0 && hits[i].spec < p->nspecs &&
		    (!now[hits[i].spec] || hits[i].depth < now[hits[i].spec]->depth))
			now[hits[i].spec] = &hits[i];
	first = !t->last_ns;
	if (!first && kind == IT_PY_OBS_IN && t->last_kind == IT_PY_OBS_OUT) {
		/* its switch-out's stack again: nothing ran in between */
		t->last_ns = ts > t->last_ns ? ts : t->last_ns;
		t->last_kind = kind;
		return 0;
	}
	if (!first && ts < t->last_ns)
		ts = t->last_ns; /* records of one thread from two CPUs, a little out of order */
	/* after a switch-out the thread ran nothing: a change shows only once it
	 * ran again, at a time no observation bounds better than this one */
	b = first ? ts : t->last_kind == IT_PY_OBS_OUT ? ts : t->last_ns + (ts - t->last_ns) / 2;
	for (int s = 0; s < p->nspecs; s++) {
		struct open_call *o = &t->open[s];
		const struct pyspan_hit *h = now[s];
		bool same = o->active && h && h->depth == o->depth;

		if (o->ending) {
			/* a stack caught while CPython was changing it (a thread
			 * stopped between two pointer stores) may lack frames: the
			 * same call seen again just after it never ended */
			if (same && o->call && h->call == o->call) {
				o->ending = false;
				continue;
			}
			if (add_call(p, t, s, o->start_ns, o->end_ns))
				return -ENOMEM;
			o->active = o->ending = false;
		} else if (same && (!o->call || !h->call || o->call == h->call)) {
			if (!o->call)
				o->call = h->call;
			continue;
		}
		if (o->active && !h) {
			o->ending = true;
			o->end_ns = b;
			edge = true;
			continue;
		}
		if (o->active) {
			if (add_call(p, t, s, o->start_ns, b))
				return -ENOMEM;
			o->active = false;
			edge = true;
		}
		if (h) {
			o->active = true;
			o->depth = h->depth;
			o->call = h->call;
			o->start_ns = b;
			edge = edge || !first;
		}
	}
	if (edge && !first && t->last_kind != IT_PY_OBS_OUT) {
		double half = (ts - t->last_ns) / 2e6;

		p->edges++;
		p->edge_sum_ms += half;
		if (half > p->edge_max_ms)
			p->edge_max_ms = half;
	}
	t->last_ns = ts;
	t->last_kind = kind;
	return 0;
}

int pyspans__calls(const struct pyspans *p, struct pyspan_call **out, size_t *n)
{
	size_t total = p->ncalls + p->nextra, k;

	for (size_t i = 0; i < p->nthreads; i++)
		for (int s = 0; s < p->nspecs; s++)
			total += p->threads[i].open[s].active;
	*out = NULL;
	*n = 0;
	if (!total)
		return 0;
	*out = malloc(total * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	if (p->ncalls) /* memcpy's source must not be NULL, even for 0 bytes */
		memcpy(*out, p->calls, p->ncalls * sizeof(**out));
	k = p->ncalls;
	if (p->nextra)
		memcpy(*out + k, p->extra, p->nextra * sizeof(**out));
	k += p->nextra;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct pythread *t = &p->threads[i];

		for (int s = 0; s < p->nspecs; s++) {
			if (!t->open[s].active)
				continue;
			(*out)[k++] = (struct pyspan_call){
				.tgid = t->tgid, .tid = t->tid, .spec = s, .role = p->specs[s].role,
				.id = p->specs[s].id, .start_ns = t->open[s].start_ns,
				.end_ns = t->open[s].ending ? t->open[s].end_ns : t->last_ns,
				.open = !t->open[s].ending,
			};
		}
	}
	*n = k;
	return 0;
}

void pyspans__resolution(const struct pyspans *p, struct pyspans_resolution *r)
{
	memset(r, 0, sizeof(*r));
	if (!p)
		return;
	r->observations = p->observations;
	r->edges = p->edges;
	r->mean_ms = p->edges ? p->edge_sum_ms / p->edges : 0;
	r->max_ms = p->edge_max_ms;
}
