// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "infertrace.skel.h"
#include "comm.h"
#include "model.h"
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

	/* room for ';', s and its NUL */
	if (VEC_RESERVE(l->buf, l->cap, l->len + n + 1, 256))
		return -ENOMEM;
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
	struct proc_samples *p;

	if (VEC_RESERVE(r->procs, r->capprocs, r->nprocs, 8))
		return NULL;
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
	struct object_quality *o;

	if (VEC_RESERVE(r->objects, r->capobjects, r->nobjects, 8))
		return NULL;
	o = &r->objects[r->nobjects++];
	memset(o, 0, sizeof(*o));
	o->object = strdup(object);
	return o->object ? o : NULL;
}

/* A frame keeps its name (C++ `operator()(int) const`, `name (file.js:12)`)
 * except for what the folded format cannot hold: `;` separates frames and a
 * line is one stack. Spaces stay: readers split the count off at the last
 * space, as FlameGraph's do. */
static void sanitize_frame(char *s)
{
	for (; *s; s++)
		if (*s == ';')
			*s = ':';
		else if (*s == '\n' || *s == '\r')
			*s = ' ';
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

/* Stacks taken in tracepoint programs start in the tracing machinery. */
static void skip_tracing_frames(struct ksyms *ksyms, const __u64 **kips, int *nk)
{
	for (int i = 0, last = -1; ksyms && i < *nk && i < TRACING_FRAMES_MAX; i++) {
		if (is_tracing_frame(ksyms__map_addr(ksyms, (*kips)[i], &(uint64_t){0})))
			last = i;
		if (i == *nk - 1 || i == TRACING_FRAMES_MAX - 1) {
			*kips += last + 1;
			*nk -= last + 1;
			break;
		}
	}
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

/* Whether a native frame is the interpreter's own (its executable or
 * libpython): the Python view folds it into the Python frame running it. */
static bool interpreter_object(const char *object)
{
	const char *b = object ? strrchr(object, '/') : NULL;

	b = b ? b + 1 : object;
	return b && (!strncmp(b, "python", 6) || !strncmp(b, "libpython", 9));
}

/* A native frame of a process as fold_one uses it, looked up and named
 * once per report: the stacks of a run share most of their frames (the
 * loop's callers, the interpreter's), and each lookup resolved the
 * address three times and formatted it once. Within a report the symbol
 * cache's answers for an address do not change (it is filled by then). */
struct frame_memo {
	uint64_t ip;     /* looked up as is: a caller's return address less one */
	pid_t tgid;
	bool used;       /* false: a free slot */
	bool have;       /* syms_cache__resolve knew the address */
	bool root;       /* a stack's outermost frame, by its mark or its name */
	bool eval;       /* the interpreter's eval loop */
	bool interp;     /* in the interpreter's own object */
	const char *object; /* the syms cache's string (NULL: none) */
	char *frame;     /* its folded name: sanitized, JIT frames marked */
};

static struct frame_memo *memo_slot(struct frame_memo *tab, size_t cap, pid_t tgid, uint64_t ip)
{
	size_t i = (size_t)(((ip ^ ((uint64_t)(uint32_t)tgid << 47)) * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);

	while (tab[i].used && (tab[i].tgid != tgid || tab[i].ip != ip))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* The memo of (tgid, ip), filled on first sight; NULL without memory. */
static const struct frame_memo *frame_memo(struct stack_report *r, struct syms_cache *syms, pid_t tgid, uint64_t ip)
{
	char frame[FRAME_LEN];
	struct frame_memo *m;
	struct sym_info si;

	if (r->capmemo) {
		m = memo_slot(r->memo, r->capmemo, tgid, ip);
		if (m->used)
			return m;
	}
	if ((r->nmemo + 1) * 2 > r->capmemo) {
		size_t cap = r->capmemo ? r->capmemo * 2 : 1024;
		struct frame_memo *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (size_t i = 0; i < r->capmemo; i++)
			if (r->memo[i].used)
				*memo_slot(tab, cap, r->memo[i].tgid, r->memo[i].ip) = r->memo[i];
		free(r->memo);
		r->memo = tab;
		r->capmemo = cap;
	}
	m = memo_slot(r->memo, r->capmemo, tgid, ip);
	*m = (struct frame_memo){ .ip = ip, .tgid = tgid };
	m->have = syms_cache__resolve(syms, tgid, ip, &si) == 0;
	m->root = m->have && (si.root || stacks__is_root_symbol(si.name));
	m->eval = m->have && si.name && !strcmp(si.name, PY_EVAL_SYMBOL);
	m->interp = m->have && interpreter_object(si.object);
	m->object = m->have ? si.object : NULL;
	syms_cache__format(syms, tgid, ip, frame, sizeof(frame));
	if (m->have && si.jit) /* FlameGraph's mark of JIT frames, as _[k] of kernel ones */
		strncat(frame, "_[j]", sizeof(frame) - strlen(frame) - 1);
	sanitize_frame(frame);
	m->frame = strdup(frame);
	if (!m->frame)
		return NULL; /* the slot stays free */
	m->used = true;
	r->nmemo++;
	return m;
}

/* Builds the folded line of one key, and its Python view in *pl (py-spy's
 * default: from the first Python frame on, the interpreter's own native
 * frames left out; the same line when the stack has no Python frames);
 * updates the quality figures. */
static int fold_one(struct stack_report *r, struct syms_cache *syms, struct ksyms *ksyms,
		    const struct it_stack_key *k, const __u64 *uips, const __u64 *kips,
		    __u64 count, struct line *l, struct line *pl)
{
	char frame[FRAME_LEN], comm[IT_COMM_LEN + 1];
	const char *leaf_object = "[unknown]";
	struct object_quality *oq;
	const struct frame_memo *fm;
	int nu = uips ? stack_depth(uips) : 0, nk = kips ? stack_depth(kips) : 0;
	int complete = 0, err, nseg = 0, neval = 0;
	int seg_start[IT_PY_MAX_FRAMES], seg_end[IT_PY_MAX_FRAMES];
	struct it_py_stack py;

	bool py_seen = false; /* the Python view: a Python frame appended */

	l->len = 0;
	pl->len = 0;
	memcpy(comm, k->comm, IT_COMM_LEN);
	comm[IT_COMM_LEN] = 0;
	comm__sanitize(comm);
	sanitize_frame(comm);
	err = line_append(l, comm[0] ? comm : "[unknown]");
	if (!err)
		err = line_append(pl, comm[0] ? comm : "[unknown]");
	if (!uips && k->ustack_id < 0 && !err) {
		err = line_append(l, "[missing_user_stack]");
		if (!err)
			err = line_append(pl, "[missing_user_stack]");
	}
	if (k->pystack && python__stack(k->pystack, &py) == 0) {
		nseg = python__segments(&py, seg_start, seg_end, IT_PY_MAX_FRAMES);
		for (int i = 0; i < nu; i++) {
			fm = frame_memo(r, syms, (pid_t)k->tgid, i ? uips[i] - 1 : uips[i]);
			if (!fm)
				return -ENOMEM;
			neval += fm->eval;
		}
		/* the leaf-most eval-loop calls are the surest: segments and eval
		 * frames are matched from the leaf; Python calls whose native
		 * frames the unwinder did not reach go first, at the root */
		for (int j = nseg - 1; j >= neval && !err; j--) {
			err = fold_py_segment(l, k->tgid, &py, seg_start[j], seg_end[j]);
			if (!err)
				err = fold_py_segment(pl, k->tgid, &py, seg_start[j], seg_end[j]);
			py_seen = true;
		}
	}
	for (int i = nu - 1, eval = 0; i >= 0 && !err; i--) {
		/* callers' entries are return addresses, which may already lie in
		 * the next function (a call to a noreturn function ends its caller):
		 * look up the call instruction instead, as perf does */
		fm = frame_memo(r, syms, (pid_t)k->tgid, i ? uips[i] - 1 : uips[i]);
		if (!fm)
			return -ENOMEM;
		if (fm->root)
			complete = 1;
		if (i == 0 && fm->object)
			leaf_object = fm->object;
		if (nseg && fm->eval) {
			/* the eval frame counted eval-th from the root runs the
			 * segment (neval - 1 - eval) from the leaf */
			int j = neval - 1 - eval++;

			if (j < nseg) {
				err = fold_py_segment(l, k->tgid, &py, seg_start[j], seg_end[j]);
				if (!err)
					err = fold_py_segment(pl, k->tgid, &py, seg_start[j], seg_end[j]);
				py_seen = true;
				continue;
			}
		}
		err = line_append(l, fm->frame);
		/* with Python frames: nothing root-ward of the first, and no
		 * frame of the interpreter's own below it */
		if (!err && (!nseg || (py_seen && !fm->interp)))
			err = line_append(pl, fm->frame);
	}
	skip_tracing_frames(ksyms, &kips, &nk);
	for (int i = nk - 1; i >= 0 && !err; i--) {
		uint64_t off;
		const char *name = ksyms ? ksyms__map_addr(ksyms, i ? kips[i] - 1 : kips[i], &off) : NULL;

		snprintf(frame, sizeof(frame), "%s_[k]", name ? name : "[unknown]");
		sanitize_frame(frame);
		err = line_append(l, frame);
		if (!err)
			err = line_append(pl, frame);
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
	struct line l = {}, pl = {};
	int err;

	if (!ps)
		return -ENOMEM;
	ps->samples += count;
	r->total += count;
	r->distinct_stacks++;
	err = fold_one(r, syms, ksyms, key, uips, kips, count, &l, &pl);
	if (!err)
		err = folded__add(&r->all, l.buf, count);
	if (!err)
		err = folded__add(&r->python, pl.buf, count);
	if (!err && pl.len != l.len)
		r->python_view_samples += count;
	free(pl.buf);
	/* no probe's phase: a `py:` phase whose function is on the stack */
	int phase = key->phase ? (int)key->phase : python__stack_phase(key->pystack, key->tgid);

	if (!err && phase > 0 && phase < IT_MAX_PHASES) {
		r->phase_samples[phase] += count;
		if (phase_names && phase_names[phase])
			err = folded__add(&r->by_phase[phase], l.buf, count);
	}
	free(r->last_line);
	r->last_line = l.buf;
	return err;
}

int stacks__quality(const struct stack_report *r, struct model_samples *s)
{
	s->stack_quality.stacks = r->total;
	s->stack_quality.complete = r->complete;
	s->stack_quality.complete_percent = r->total ? 100.0 * r->complete / r->total : 0;
	s->stack_quality.user_stack_missing = r->user_stack_missing;
	s->stack_quality.distinct_stacks = r->distinct_stacks;
	s->stack_quality.by_leaf_object.n = 0;
	for (size_t i = 0; i < r->nobjects; i++) {
		const struct object_quality *o = &r->objects[i];
		struct model_leaf_object *e;

		if (VEC_RESERVE(s->stack_quality.by_leaf_object.v, s->stack_quality.by_leaf_object.cap,
				s->stack_quality.by_leaf_object.n, 16))
			return -ENOMEM;
		e = &s->stack_quality.by_leaf_object.v[s->stack_quality.by_leaf_object.n++];
		*e = (struct model_leaf_object){ .samples = o->samples, .complete = o->complete,
						 .truncated = o->samples - o->complete,
						 .truncated_percent = o->samples ? 100.0 * (o->samples - o->complete) / o->samples : 0 };
		snprintf(e->name, sizeof(e->name), "%s", o->object);
	}
	return 0;
}

void stack_report__free(struct stack_report *r)
{
	if (!r)
		return;
	folded__free(&r->all);
	folded__free(&r->python);
	for (int i = 0; i < IT_MAX_PHASES; i++)
		folded__free(&r->by_phase[i]);
	for (size_t i = 0; i < r->nobjects; i++)
		free(r->objects[i].object);
	free(r->objects);
	free(r->procs);
	free(r->last_line);
	for (size_t i = 0; i < r->capmemo; i++)
		free(r->memo[i].frame);
	free(r->memo);
	memset(r, 0, sizeof(*r));
}

/* ---- typed stacks for the model (profile.pb.gz) ---- */

static int32_t model_mapping_of(struct model *m, struct syms_cache *syms, pid_t pid, uint64_t addr)
{
	struct model_mapping mp = {};
	struct syms_mapping sm;
	int32_t path;

	if (syms_cache__mapping_of(syms, pid, addr, &sm))
		return -1;
	path = model__intern(m, sm.path ? sm.path : "[unknown]");
	if (path < 0)
		return -1;
	mp.start = sm.start;
	mp.limit = sm.end;
	mp.file_offset = sm.offset;
	mp.path = path;
	for (size_t i = 0; sm.build_id && i < sm.build_id_len && 2 * i + 2 < sizeof(mp.build_id); i++)
		snprintf(mp.build_id + 2 * i, 3, "%02x", sm.build_id[i]);
	return model__add_mapping(m, &mp);
}

int stacks__add_model(struct model *m, struct syms_cache *syms, struct ksyms *ksyms,
		      const struct it_stack_key *key, pid_t tid, bool has_cycle, __u32 cycle,
		      const __u64 *uips, const __u64 *kips, __u64 count, bool offcpu)
{
	struct model_frame frames[2 * IT_MAX_STACK_DEPTH + 1];
	struct model_lstack ls = {
		.pid = (pid_t)key->tgid, .tid = tid, .bpf_cycle = cycle, .has_cycle = has_cycle,
		.phase = key->phase,
	};
	int nu = uips ? stack_depth(uips) : 0, nk = kips ? stack_depth(kips) : 0;
	char frame[FRAME_LEN], comm[IT_COMM_LEN + 1];
	int32_t kmap = -1;
	uint32_t n = 0;

	if (offcpu)
		ls.offcpu_ns = count;
	else
		ls.samples = count;
	memcpy(comm, key->comm, IT_COMM_LEN);
	comm[IT_COMM_LEN] = 0;
	comm__sanitize(comm);
	ls.comm = model__intern(m, comm[0] ? comm : "[unknown]");
	skip_tracing_frames(ksyms, &kips, &nk);
	if (nk) {
		struct model_mapping km = { .kernel = true, .path = model__intern(m, "[kernel.kallsyms]") };

		/* one mapping over the whole kernel half of the address space */
		km.start = 1ull << 63;
		km.limit = ~0ull;
		kmap = km.path < 0 ? -1 : model__add_mapping(m, &km);
	}
	/* leaf first: the kernel's frames are above the user stack */
	for (int i = 0; i < nk; i++) {
		uint64_t off, ip = i ? kips[i] - 1 : kips[i];
		const char *name = ksyms ? ksyms__map_addr(ksyms, ip, &off) : NULL;

		snprintf(frame, sizeof(frame), "%s_[k]", name ? name : "[unknown]");
		frames[n++] = (struct model_frame){ .addr = ip, .name = model__intern(m, frame), .mapping = kmap };
	}
	if (!uips && key->ustack_id < 0)
		frames[n++] = (struct model_frame){ .name = model__intern(m, "[missing_user_stack]"), .mapping = -1 };
	for (int i = 0; i < nu; i++) {
		/* a caller's entry is a return address: name the call, as the folded stacks do */
		uint64_t ip = i ? uips[i] - 1 : uips[i];

		syms_cache__format(syms, (pid_t)key->tgid, ip, frame, sizeof(frame));
		frames[n++] = (struct model_frame){
			.addr = syms_cache__address(syms, ip), .name = model__intern(m, frame),
			.mapping = model_mapping_of(m, syms, (pid_t)key->tgid, ip),
		};
	}
	if (ls.comm < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (frames[i].name < 0)
			return -ENOMEM;
	return model__add_lstack(m, &ls, frames, n);
}

struct base_ent {
	struct it_stack_key key;
	__u64 count;
};

static int base_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct base_ent *)a)->key, &((const struct base_ent *)b)->key,
		      sizeof(struct it_stack_key));
}

static int add_keyed(struct model *m, struct syms_cache *syms, struct ksyms *ksyms, int stack_fd,
		     const struct it_stack_key *key, pid_t tid, bool has_cycle, __u32 cycle, __u64 count,
		     bool offcpu)
{
	__u64 uips[IT_MAX_STACK_DEPTH], kips[IT_MAX_STACK_DEPTH];
	bool have_u = key->ustack_id >= 0 && bpf_map_lookup_elem(stack_fd, &key->ustack_id, uips) == 0;
	bool have_k = key->kstack_id >= 0 && bpf_map_lookup_elem(stack_fd, &key->kstack_id, kips) == 0;

	return stacks__add_model(m, syms, ksyms, key, tid, has_cycle, cycle, have_u ? uips : NULL,
				 have_k ? kips : NULL, count, offcpu);
}

int stacks__to_model(int base_fd, int label_fd, int stack_fd, struct syms_cache *syms, struct ksyms *ksyms,
		     bool offcpu, struct model *m)
{
	struct it_label_key lk, lnext, *lprev = NULL;
	struct it_stack_key k, next, *prev = NULL;
	struct base_ent *base = NULL, *b;
	size_t n = 0, cap = 0;
	__u64 count;
	int err = 0;

	/* the labelled map first: a sample counted meanwhile is then in the
	 * base map too, and the remainder is never negative */
	while (!err && label_fd >= 0 && bpf_map_get_next_key(label_fd, lprev, &lnext) == 0) {
		lk = lnext;
		lprev = &lk;
		if (bpf_map_lookup_elem(label_fd, &lk, &count) || !count)
			continue;
		if (VEC_RESERVE(base, cap, n, 1024)) {
			err = -ENOMEM;
			break;
		}
		/* kept as (key, count) until the base map is read */
		base[n].key = lk.stack;
		base[n].count = count;
		n++;
		err = add_keyed(m, syms, ksyms, stack_fd, &lk.stack, (pid_t)lk.tid, lk.cycle != IT_CYCLE_NONE,
				lk.cycle, count, offcpu);
	}
	if (err)
		goto out;
	/* the labelled counts per stack key, then what the base map has beyond them */
	if (n)
		qsort(base, n, sizeof(*base), base_cmp);
	{
		size_t w = 0;

		for (size_t i = 0; i < n; i++) {
			if (w && !base_cmp(&base[w - 1], &base[i]))
				base[w - 1].count += base[i].count;
			else
				base[w++] = base[i];
		}
		n = w;
	}
	while (!err && bpf_map_get_next_key(base_fd, prev, &next) == 0) {
		struct base_ent want = { 0 };

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(base_fd, &k, &count))
			continue;
		want.key = k;
		b = n ? bsearch(&want, base, n, sizeof(*base), base_cmp) : NULL;
		if (b)
			count = count > b->count ? count - b->count : 0;
		if (count)
			err = add_keyed(m, syms, ksyms, stack_fd, &k, 0, false, 0, count, offcpu);
	}
out:
	free(base);
	return err;
}
