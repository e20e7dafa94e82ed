// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "infertrace.skel.h"
#include "comm.h"
#include "python.h"
#include "stacks.h"
#include "syms.h"
#include "tracer.h"

#define FRAME_LEN 512

int stacks__is_root_symbol(const char *name)
{
	static const char *const roots[] = {
		"main", "_start", "__libc_start_main", "__libc_start_call_main",
		"__libc_start_main_impl", "start_thread", "clone", "clone3",
		"__clone", "__clone3", "thread_start",
	};

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(name, roots[i]))
			return 1;
	return 0;
}

/* A growable string for one folded line. */
struct line {
	char *buf;
	size_t len, cap;
};

static int line_append(struct line *l, const char *s)
{
	size_t n = strlen(s);

	if (l->len + n + 2 > l->cap) {
		size_t cap = (l->cap + n + 2) * 2;
		char *b = realloc(l->buf, cap);

		if (!b)
			return -ENOMEM;
		l->buf = b;
		l->cap = cap;
	}
	if (l->len)
		l->buf[l->len++] = ';';
	memcpy(l->buf + l->len, s, n + 1);
	l->len += n;
	return 0;
}

static struct proc_samples *proc_entry(struct stack_report *r, const struct it_stack_key *k)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].tgid == (pid_t)k->tgid)
			return &r->procs[i];
	struct proc_samples *p = realloc(r->procs, (r->nprocs + 1) * sizeof(*p));

	if (!p)
		return NULL;
	r->procs = p;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tgid = k->tgid;
	memcpy(p->comm, k->comm, IT_COMM_LEN);
	p->comm[IT_COMM_LEN - 1] = 0;
	comm__sanitize(p->comm);
	return p;
}

static struct object_quality *object_entry(struct stack_report *r, const char *object)
{
	for (size_t i = 0; i < r->nobjects; i++)
		if (!strcmp(r->objects[i].object, object))
			return &r->objects[i];
	struct object_quality *o = realloc(r->objects, (r->nobjects + 1) * sizeof(*o));

	if (!o)
		return NULL;
	r->objects = o;
	o = &r->objects[r->nobjects++];
	memset(o, 0, sizeof(*o));
	o->object = strdup(object);
	return o->object ? o : NULL;
}

/* Frames are not allowed to contain the folded format's separators. */
static void sanitize_frame(char *s)
{
	for (; *s; s++)
		if (*s == ';')
			*s = ':';
		else if (*s == ' ' || *s == '\n')
			*s = '_';
}

/* How deep the tracing machinery's frames can reach at the leaf of a stack
 * taken in a tracepoint program. */
#define TRACING_FRAMES_MAX 6

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool is_tracing_frame(const char *name)
{
	return name && (starts_with(name, "bpf_prog_") || starts_with(name, "bpf_trace_run") ||
			starts_with(name, "__traceiter_") || starts_with(name, "__bpf_trace_"));
}

static int stack_depth(const __u64 *ips)
{
	int n = 0;

	while (n < IT_MAX_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Appends the Python frames [start, end) of a stack (leaf first), root
 * first. Their names keep their spaces: `qualname (file.py)`. */
static int fold_py_segment(struct line *l, pid_t tgid, const struct it_py_stack *py, int start, int end)
{
	char frame[FRAME_LEN];
	int err = 0;

	for (int i = end - 1; i >= start && !err; i--) {
		python__frame_name(tgid, &py->frames[i], frame, sizeof(frame));
		for (char *c = frame; *c; c++)
			if (*c == ';')
				*c = ':';
			else if (*c == '\n')
				*c = '_';
		err = line_append(l, frame);
	}
	return err;
}

/* Builds the folded line of one key; updates the quality figures. */
static int fold_one(struct stack_report *r, struct syms_cache *syms, struct ksyms *ksyms,
		    const struct it_stack_key *k, const __u64 *uips, const __u64 *kips,
		    __u64 count, struct line *l)
{
	char frame[FRAME_LEN], comm[IT_COMM_LEN + 1];
	const char *leaf_object = "[unknown]";
	struct object_quality *oq;
	struct sym_info si;
	int nu = uips ? stack_depth(uips) : 0, nk = kips ? stack_depth(kips) : 0;
	int complete = 0, err, nseg = 0, neval = 0;
	int seg_start[IT_PY_MAX_FRAMES], seg_end[IT_PY_MAX_FRAMES];
	struct it_py_stack py;

	l->len = 0;
	memcpy(comm, k->comm, IT_COMM_LEN);
	comm[IT_COMM_LEN] = 0;
	comm__sanitize(comm);
	sanitize_frame(comm);
	err = line_append(l, comm[0] ? comm : "[unknown]");
	if (!uips && k->ustack_id < 0 && !err)
		err = line_append(l, "[missing_user_stack]");
	if (k->pystack && python__stack(k->pystack, &py) == 0) {
		nseg = python__segments(&py, seg_start, seg_end, IT_PY_MAX_FRAMES);
		for (int i = 0; i < nu; i++) {
			uint64_t ip = i ? uips[i] - 1 : uips[i];

			neval += syms_cache__resolve(syms, k->tgid, ip, &si) == 0 && si.name &&
				 !strcmp(si.name, PY_EVAL_SYMBOL);
		}
		/* the leaf-most eval-loop calls are the surest: segments and eval
		 * frames are matched from the leaf; Python calls whose native
		 * frames the unwinder did not reach go first, at the root */
		for (int j = nseg - 1; j >= neval && !err; j--)
			err = fold_py_segment(l, k->tgid, &py, seg_start[j], seg_end[j]);
	}
	for (int i = nu - 1, eval = 0; i >= 0 && !err; i--) {
		/* callers' entries are return addresses, which may already lie in
		 * the next function (a call to a noreturn function ends its caller):
		 * look up the call instruction instead, as perf does */
		uint64_t ip = i ? uips[i] - 1 : uips[i];
		int have = syms_cache__resolve(syms, k->tgid, ip, &si) == 0;

		if (have && stacks__is_root_symbol(si.name))
			complete = 1;
		if (i == 0 && have && si.object)
			leaf_object = si.object;
		if (nseg && have && si.name && !strcmp(si.name, PY_EVAL_SYMBOL)) {
			/* the eval frame counted eval-th from the root runs the
			 * segment (neval - 1 - eval) from the leaf */
			int j = neval - 1 - eval++;

			if (j < nseg) {
				err = fold_py_segment(l, k->tgid, &py, seg_start[j], seg_end[j]);
				continue;
			}
		}
		syms_cache__format(syms, k->tgid, ip, frame, sizeof(frame));
		sanitize_frame(frame);
		err = line_append(l, frame);
	}
	/* stacks taken in tracepoint programs start in the tracing machinery */
	for (int i = 0, last = -1; ksyms && i < nk && i < TRACING_FRAMES_MAX; i++) {
		if (is_tracing_frame(ksyms__map_addr(ksyms, kips[i], &(uint64_t){0})))
			last = i;
		if (i == nk - 1 || i == TRACING_FRAMES_MAX - 1) {
			kips += last + 1;
			nk -= last + 1;
			break;
		}
	}
	for (int i = nk - 1; i >= 0 && !err; i--) {
		uint64_t off;
		const char *name = ksyms ? ksyms__map_addr(ksyms, i ? kips[i] - 1 : kips[i], &off) : NULL;

		snprintf(frame, sizeof(frame), "%s_[k]", name ? name : "[unknown]");
		sanitize_frame(frame);
		err = line_append(l, frame);
	}
	if (err)
		return err;
	if (!uips)
		r->user_stack_missing += count;
	oq = object_entry(r, leaf_object);
	if (!oq)
		return -ENOMEM;
	oq->samples += count;
	if (complete) {
		oq->complete += count;
		r->complete += count;
	}
	return 0;
}

int stacks__collect(struct tracer *t, struct syms_cache *syms, struct ksyms *ksyms,
		    const char *const *phase_names, struct stack_report *r)
{
	return stacks__collect_maps(bpf_map__fd(t->skel->maps.stack_counts),
				    bpf_map__fd(t->skel->maps.stackmap), syms, ksyms, phase_names, r);
}

int stacks__collect_maps(int counts_fd, int stack_fd, struct syms_cache *syms, struct ksyms *ksyms,
			 const char *const *phase_names, struct stack_report *r)
{
	struct it_stack_key key, next, *prev = NULL;
	__u64 uips[IT_MAX_STACK_DEPTH], kips[IT_MAX_STACK_DEPTH], count;
	int err = 0;

	memset(r, 0, sizeof(*r));
	while (bpf_map_get_next_key(counts_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(counts_fd, &key, &count))
			continue;
		bool have_u = key.ustack_id >= 0 &&
			      bpf_map_lookup_elem(stack_fd, &key.ustack_id, uips) == 0;
		bool have_k = key.kstack_id >= 0 &&
			      bpf_map_lookup_elem(stack_fd, &key.kstack_id, kips) == 0;

		err = stacks__add(r, syms, ksyms, phase_names, &key, have_u ? uips : NULL,
				  have_k ? kips : NULL, count);
		if (err)
			break;
	}
	return err;
}

int stacks__add(struct stack_report *r, struct syms_cache *syms, struct ksyms *ksyms,
		const char *const *phase_names, const struct it_stack_key *key,
		const __u64 *uips, const __u64 *kips, __u64 count)
{
	struct proc_samples *ps = proc_entry(r, key);
	struct line l = {};
	int err;

	if (!ps)
		return -ENOMEM;
	ps->samples += count;
	r->total += count;
	r->distinct_stacks++;
	err = fold_one(r, syms, ksyms, key, uips, kips, count, &l);
	if (!err)
		err = folded__add(&r->all, l.buf, count);
	/* no probe's phase: a `py:` phase whose function is on the stack */
	int phase = key->phase ? (int)key->phase : python__stack_phase(key->pystack, key->tgid);

	if (!err && phase > 0 && phase < IT_MAX_PHASES) {
		r->phase_samples[phase] += count;
		if (phase_names && phase_names[phase])
			err = folded__add(&r->by_phase[phase], l.buf, count);
	}
	free(l.buf);
	return err;
}

json_t *stacks__quality_json(const struct stack_report *r)
{
	json_t *q = json_object(), *objs = json_object();

	json_object_set_new(q, "stacks", json_integer(r->total));
	json_object_set_new(q, "complete", json_integer(r->complete));
	json_object_set_new(q, "complete_percent",
			    json_real(r->total ? 100.0 * r->complete / r->total : 0));
	json_object_set_new(q, "user_stack_missing", json_integer(r->user_stack_missing));
	json_object_set_new(q, "distinct_stacks", json_integer(r->distinct_stacks));
	for (size_t i = 0; i < r->nobjects; i++) {
		const struct object_quality *o = &r->objects[i];
		json_t *e = json_object();

		json_object_set_new(e, "samples", json_integer(o->samples));
		json_object_set_new(e, "complete", json_integer(o->complete));
		json_object_set_new(e, "truncated", json_integer(o->samples - o->complete));
		json_object_set_new(e, "truncated_percent",
				    json_real(o->samples ? 100.0 * (o->samples - o->complete) / o->samples : 0));
		json_object_set_new(objs, o->object, e);
	}
	json_object_set_new(q, "by_leaf_object", objs);
	return q;
}

void stack_report__free(struct stack_report *r)
{
	if (!r)
		return;
	folded__free(&r->all);
	for (int i = 0; i < IT_MAX_PHASES; i++)
		folded__free(&r->by_phase[i]);
	for (size_t i = 0; i < r->nobjects; i++)
		free(r->objects[i].object);
	free(r->objects);
	free(r->procs);
	memset(r, 0, sizeof(*r));
}
