// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* CPython frames of the current thread, for the on-CPU samples and the
 * off-CPU stacks. User space puts the interpreter's offsets in `py_procs`
 * (user/symbols/python.c); here the thread's PyThreadState is found by its
 * thread id in the interpreter's thread list (cached per thread, checked at
 * each use since thread states are freed and reused), then its frames are
 * walked to the code objects. A stack is kept once in `py_stacks` under a
 * hash of its frames; a code object seen for the first time (or a new one
 * at a reused address) sends its names to user space, read here because the
 * process may be gone by the time user space could read them. */
#ifndef INFERTRACE_PYTHON_BPF_H
#define INFERTRACE_PYTHON_BPF_H

#include "maps.bpf.h"

#define PY_WALK_STEPS (IT_PY_MAX_FRAMES + 32) /* Python frames plus 3.12+ entry shims */
#define PY_THREADS_SCAN 256                   /* thread states searched for a new thread */
#define PY_STR_COMPACT (1u << 5)              /* PyASCIIObject.state bits */
#define PY_STR_ASCII (1u << 6)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct it_py_proc);
} py_procs SEC(".maps") SHARED;

/* Set by user space before its first py_procs entry: until then the
 * scheduler's hot paths skip the Python lookups (a hash miss each, at
 * every context switch of a process that is not Python). */
SHARED volatile __u32 py_procs_known;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64); /* hash of the frames, never 0 */
	__type(value, struct it_py_stack);
} py_stacks SEC(".maps") SHARED;

struct py_code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_code_key);
	__type(value, __u32); /* ident whose names were sent */
} py_code_seen SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, __u64); /* PyThreadState address */
} py_tstates SEC(".maps") SHARED;

/* Python stack of each blocked thread, taken at its switch-out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, __u64);
} py_offcpu SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct it_py_stack);
} py_scratch SEC(".maps") SHARED;

/* `py:` specs: observations of the target's Python stacks (IT_EV_PY_OBS)
 * at every sample and every switch out and in; user space turns them into
 * cycles and phases (user/analysis/pyspans.c). */
SHARED const volatile __u32 cfg_py_observe = 0;
/* phase id whose probe entries are observations too (IT_PY_OBS_PROBE); 0: none */
SHARED const volatile __u32 cfg_py_locate_phase = 0;

/* Code objects of `py:` functions: BPF adds them at their first sight
 * (py_watch_names), user space corrects them as their names arrive. Value:
 * the specs they are (bit i: spec i); their frames get a call identity in
 * each observation. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct py_code_key);
	__type(value, __u32);
} py_watch SEC(".maps") SHARED;

/* The specs' qualname and module hashes (pyspans__name_hash): a code object
 * whose names hash to one is watched from its first sight, before user
 * space has its name. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct it_py_watch_name);
	__type(value, __u32);
} py_watch_names SEC(".maps") SHARED;

/* `py:` specs as kernel edges: how many (0: none), and each one's role. */
SHARED const volatile __u32 cfg_py_edges = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_PY_EDGE_SPECS);
	__type(key, __u32);
	__type(value, struct it_py_spec);
} py_specs SEC(".maps") SHARED;

/* Per thread, what its last accepted observation showed of the specs. */
struct py_edge_thread {
	__u64 last_ns;  /* that observation, or the thread's switch-in since */
	__u64 root;     /* its root-most code object (0: no Python frames) */
	__u64 cand;     /* a different root seen once: accepted when seen again */
	__u64 call[IT_PY_EDGE_SPECS]; /* each spec's open call identity, 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct py_edge_thread);
} py_edge_threads SEC(".maps") SHARED;

/* The edges one observation applies: each spec's call identity in it. */
struct py_edge_scratch {
	__u64 next[IT_PY_EDGE_SPECS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_edge_scratch);
} py_edge_scratch SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct it_py_edge_res);
} py_edge_res SEC(".maps") SHARED;

/* bpf/probes.bpf.c: applies the observation py_stack_capture just made
 * (stack h) as cycle and phase edges of the thread; 1 when it moved one. */
extern int py_edges_observe(__u32 tgid, __u32 tid, __u64 now, __u64 h);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct it_py_obs_event);
} py_obs_scratch SEC(".maps") SHARED;

/* The last switch-out observation of each thread, sent again at its
 * switch-in: a thread off its CPU runs no Python. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct it_py_obs_event);
} py_obs_last SEC(".maps") SHARED;

static __always_inline __u64 py_ptr(__u64 addr)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

struct py_scan {
	__u64 ts;   /* the thread state looked at */
	__u64 want; /* the thread id it must hold */
	__u64 off_tid, off_next;
};

/* One step of the search through the interpreter's thread states: a
 * bpf_loop callback, verified once rather than PY_THREADS_SCAN times (the
 * unrolled search was ~60,000 of sched_on_switch's verified instructions). */
static int py_scan_step(__u32 i, struct py_scan *c)
{
	if (!c->ts || py_ptr(c->ts + c->off_tid) == c->want)
		return 1;
	c->ts = py_ptr(c->ts + c->off_next);
	return 0;
}

/* The thread state of thread tid, 0 when it has none (yet). */
static __always_inline __u64 py_thread_state(const struct it_py_proc *pp, __u32 tid)
{
	__u64 want = tid, ts, *cached;

	if (pp->flags & IT_PY_TID_PTHREAD) {
#if defined(__TARGET_ARCH_x86)
		/* glibc's pthread_self() is the thread pointer, the fs base */
		struct task_struct *task = bpf_get_current_task_btf();

		want = task->thread.fsbase;
#else
		return 0;
#endif
	}
	cached = bpf_map_lookup_elem(&py_tstates, &tid);
	if (cached && *cached && py_ptr(*cached + pp->ts_tid) == want)
		return *cached;
	struct py_scan c = {
		.ts = py_ptr(py_ptr(pp->runtime + pp->rt_interp_head) + pp->interp_threads),
		.want = want,
		.off_tid = pp->ts_tid,
		.off_next = pp->ts_next,
	};

	bpf_loop(PY_THREADS_SCAN, py_scan_step, &c, 0);
	/* found, unless the list ended or was longer than the scan */
	if (!c.ts || py_ptr(c.ts + c.off_tid) != want)
		return 0;
	ts = c.ts;
	bpf_map_update_elem(&py_tstates, &tid, &ts, BPF_ANY);
	return ts;
}

/* Reads a CPython str: its kind and up to IT_PY_STR bytes of data (the
 * last ones when tail is set). */
static __always_inline void py_str(const struct it_py_proc *pp, __u64 s, int tail, char *buf, __u32 *kind,
				   __u32 *bytes)
{
	__u32 state = 0, k;
	__u64 len = 0, data, n;

	*kind = 0;
	*bytes = 0;
	if (!s || bpf_probe_read_user(&state, sizeof(state), (void *)(s + pp->str_state)) ||
	    bpf_probe_read_user(&len, sizeof(len), (void *)(s + pp->str_length)) || !(state & PY_STR_COMPACT))
		return;
	if (state & PY_STR_ASCII) {
		k = 1;
		data = s + pp->str_ascii_data;
	} else {
		k = (state >> 2) & 7;
		data = s + pp->str_compact_data;
	}
	if (k != 1 && k != 2 && k != 4)
		return;
	n = len * k;
	if (tail && n > IT_PY_STR) {
		data += n - IT_PY_STR;
		n = IT_PY_STR;
	}
	if (n > IT_PY_STR)
		n = IT_PY_STR;
	if (n && bpf_probe_read_user(buf, n, (void *)data))
		return;
	*kind = k;
	*bytes = n;
}

/* A code object's names for py_watch_first_sight (per CPU). */
struct py_names {
	char name[IT_PY_STR];
	char file[IT_PY_STR];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_names);
} py_names_scratch SEC(".maps") SHARED;

/* bpf/probes.bpf.c: watches the code object when its qualname (in
 * py_names_scratch) is a spec's; a global function, verified once. */
extern int py_watch_first_sight(__u32 tgid, __u64 code, __u32 name_bytes, __u32 file_bytes);

static __always_inline void py_send_code(const struct it_py_proc *pp, __u32 tgid, __u64 code, __u32 ident,
					 __u64 name, __u64 file)
{
	struct it_py_code_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		stat_inc(IT_STAT_PY_CODE_LOST);
		return;
	}
	event_header(&e->hdr, IT_EV_PY_CODE, tgid, (__u32)id, bpf_ktime_get_ns());
	e->code = code;
	e->ident = ident;
	e->firstlineno = 0;
	bpf_probe_read_user(&e->firstlineno, sizeof(e->firstlineno), (void *)(code + pp->co_firstlineno));
	py_str(pp, name, 0, e->name, &e->name_kind, &e->name_bytes);
	py_str(pp, file, 1, e->file, &e->file_kind, &e->file_bytes);
	if (cfg_py_observe && e->name_kind == 1) {
		__u32 zero = 0;
		struct py_names *nm = bpf_map_lookup_elem(&py_names_scratch, &zero);

		if (nm) {
			__builtin_memcpy(nm->name, e->name, IT_PY_STR);
			__builtin_memcpy(nm->file, e->file, IT_PY_STR);
			py_watch_first_sight(tgid, code, e->name_bytes, e->file_kind == 1 ? e->file_bytes : 0);
		}
	}
	bpf_ringbuf_submit(e, lazy_wakeup());
}

struct py_walk {
	__u32 tgid;
	__u32 n;
	__u64 frame;
	__u64 hash;
};

/* A read of the walk failed (a page not present in this context): the stack
 * may lack frames or an identity. Kept in the scratch stack, not the walk's
 * state, whose size counts against the samples' 512-byte BPF stack. */
static __always_inline void py_walk_incomplete(void)
{
	__u32 zero = 0;
	struct it_py_stack *s = bpf_map_lookup_elem(&py_scratch, &zero);

	if (s)
		s->incomplete = 1;
}

#define PY_CALL_ARGS 4   /* arguments hashed into a call's identity */
#define PY_OB_TYPE 8     /* PyObject.ob_type */
#define PY_CELL_REF 16   /* PyCellObject.ob_ref */
#define PY_CALLER_LOCALS 8 /* caller's local slots hashed into it */

/* Folds the first n (at most max, a constant) pointer slots at base into h;
 * a failed read marks the walk incomplete (the identity would differ).
 * Only the n slots are read: a frame just pushed at the end of the data
 * stack may have an untouched page after it, which a fixed-size read ran
 * into (the call's first observation then had another identity, and a
 * `py:` phase two calls). */
static __always_inline __u64 py_slots_hash(__u64 h, __u64 base, __u64 n, const __u32 max, __u64 cell_type)
{
	__u64 v[PY_CALLER_LOCALS] = {};

	if (n > max)
		n = max;
	if (!n || max > PY_CALLER_LOCALS || n > PY_CALLER_LOCALS)
		return h;
	if (bpf_probe_read_user(v, n * sizeof(__u64), (void *)base)) {
		py_walk_incomplete();
		return h;
	}
	for (int i = 0; i < PY_CALLER_LOCALS; i++) {
		if (i >= n)
			break;
		if (cell_type && v[i] && py_ptr(v[i] + PY_OB_TYPE) == cell_type)
			v[i] = py_ptr(v[i] + PY_CELL_REF); /* the cell's content, as before MAKE_CELL */
		h = (h ^ v[i]) * 0x100000001b3ull;
	}
	return h;
}

/* A frame of a watched function: its identity for this call is its address,
 * its first arguments and its caller's first local slots (a loop's variable),
 * none of which change while the call runs. */
static __always_inline void py_watch_frame(const struct it_py_proc *pp, struct py_walk *w, __u64 fr, __u64 code,
					   __u32 specs)
{
	__u32 zero = 0, k;
	struct it_py_obs_event *o = bpf_map_lookup_elem(&py_obs_scratch, &zero);
	__u64 h = (0xcbf29ce484222325ull ^ fr) * 0x100000001b3ull, caller = w->frame, ccode, n = 0;
	int argc = 0, nl = 0;

	if (!o)
		return;
	k = o->nwatch;
	/* deeper recursion: the last slot keeps the root-most frame, the call */
	if (k >= IT_PY_OBS_WATCH)
		k = IT_PY_OBS_WATCH - 1;
	if (bpf_probe_read_user(&argc, sizeof(argc), (void *)(code + pp->co_argcount)))
		py_walk_incomplete();
	if (argc > 0)
		h = py_slots_hash(h, fr + pp->fr_localsplus, argc, PY_CALL_ARGS, pp->cell_type);
	if (caller) {
		ccode = py_ptr(caller + pp->fr_code) & ~7ull;
		if (pp->flags & IT_PY_NLOCALS_TUPLE) {
			n = py_ptr(py_ptr(ccode + pp->co_nlocals) + 16); /* ob_size */
		} else {
			if (bpf_probe_read_user(&nl, sizeof(nl), (void *)(ccode + pp->co_nlocals)))
				py_walk_incomplete();
			n = nl > 0 ? nl : 0;
		}
		h = py_slots_hash(h, caller + pp->fr_localsplus, n, PY_CALLER_LOCALS, 0);
	}
	o->watch[k].code = code;
	o->watch[k].call = h ? h : 1;
	o->watch[k].depth = w->n;
	o->watch[k].specs = specs;
	o->nwatch = k + 1;
}

static int py_step(__u32 i, struct py_walk *w)
{
	__u32 zero = 0, tgid = w->tgid, ident, flags = 0;
	struct it_py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct it_py_stack *s = bpf_map_lookup_elem(&py_scratch, &zero);
	struct py_code_key ck = { .tgid = tgid };
	__u64 fr = w->frame, code, name, file;
	__u32 *seen;
	__u8 entry = 0;

	(void)i;
	if (!pp || !s || !fr)
		return 1;
	if (bpf_probe_read_user(&w->frame, sizeof(w->frame), (void *)(fr + pp->fr_previous))) {
		w->frame = 0;
		s->incomplete = 1;
	}
	if (pp->flags & (IT_PY_IS_ENTRY | IT_PY_OWNER))
		bpf_probe_read_user(&entry, 1, (void *)(fr + pp->fr_entry));
	if ((pp->flags & IT_PY_OWNER) && entry == IT_PY_OWNED_BY_CSTACK) {
		/* the shim frame an eval-loop call pushes: the frame before it
		 * (leaf side) was the first that call ran */
		__u32 last = w->n - 1;

		if (w->n && last < IT_PY_MAX_FRAMES)
			s->frames[last].flags |= IT_PY_FRAME_ENTRY;
		return 0;
	}
	/* 3.14 tags f_executable's low bits; objects are 8-byte aligned */
	code = py_ptr(fr + pp->fr_code) & ~7ull;
	if (!code) {
		stat_inc(IT_STAT_PY_READ_ERR);
		s->incomplete = 1;
		return 0;
	}
	if (w->n >= IT_PY_MAX_FRAMES) {
		s->truncated = 1;
		return 1;
	}
	name = py_ptr(code + pp->co_name);
	file = py_ptr(code + pp->co_filename);
	ident = (__u32)(name ^ (name >> 32)) * 31 ^ (__u32)(file ^ (file >> 32));
	if ((pp->flags & IT_PY_FRAME_OBJECT) || ((pp->flags & IT_PY_IS_ENTRY) && entry))
		flags = IT_PY_FRAME_ENTRY;
	ck.code = code;
	seen = bpf_map_lookup_elem(&py_code_seen, &ck);
	if (!seen || *seen != ident) {
		py_send_code(pp, tgid, code, ident, name, file);
		bpf_map_update_elem(&py_code_seen, &ck, &ident, BPF_ANY);
	}
	if (cfg_py_observe) {
		__u32 *specs = bpf_map_lookup_elem(&py_watch, &ck);

		if (specs)
			py_watch_frame(pp, w, fr, code, *specs);
	}
	__u32 n = w->n;

	if (n < IT_PY_MAX_FRAMES) {
		s->frames[n].code = code;
		s->frames[n].ident = ident;
		s->frames[n].flags = flags;
	}
	w->hash = (w->hash ^ code) * 0x100000001b3ull;
	w->hash = (w->hash ^ ident) * 0x100000001b3ull;
	w->n = n + 1;
	return 0;
}

/* The current thread's Python stack (a key of `py_stacks`), 0 when the
 * process is no known Python or the thread runs no Python code. */
static __always_inline __u64 py_stack_capture(__u32 tgid, __u32 tid)
{
	struct it_py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = { .tgid = tgid, .hash = 0xcbf29ce484222325ull ^ tgid };
	__u32 zero = 0;
	struct it_py_stack *s;
	__u64 ts, h;

	if (!pp)
		return 0;
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (cfg_py_observe) {
		struct it_py_obs_event *o = bpf_map_lookup_elem(&py_obs_scratch, &zero);

		if (o)
			o->nwatch = 0;
	}
	ts = py_thread_state(pp, tid);
	if (!s || !ts)
		return 0;
	w.frame = py_ptr(ts + pp->ts_frame);
	if (pp->flags & IT_PY_CFRAME)
		w.frame = py_ptr(w.frame + pp->cframe_current);
	if (!w.frame)
		return 0;
	s->tgid = tgid;
	s->truncated = 0;
	s->incomplete = 0;
	bpf_loop(PY_WALK_STEPS, py_step, &w, 0);
	/* entry flags are set after a frame is hashed: hash them now */
	s = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!s || !w.n)
		return 0;
	s->depth = w.n;
	h = w.hash;
	for (int i = 0; i < IT_PY_MAX_FRAMES; i++) {
		if (i >= w.n)
			break;
		if (s->frames[i].flags)
			h = (h ^ (i + 1)) * 0x100000001b3ull;
	}
	h ^= h >> 29;
	if (!h)
		h = 1;
	if (!bpf_map_lookup_elem(&py_stacks, &h) && bpf_map_update_elem(&py_stacks, &h, s, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&py_stacks, &h)) {
		stat_inc(IT_STAT_PY_STACKS_FULL);
		return 0;
	}
	return h;
}

/* At a thread's voluntary switch-out: keeps its Python stack for the
 * off-CPU interval that begins. */
static __always_inline __u64 py_offcpu_capture(__u32 tgid, __u32 tid)
{
	__u64 h;

	if (!py_procs_known || !bpf_map_lookup_elem(&py_procs, &tgid))
		return 0;
	h = py_stack_capture(tgid, tid);
	if (h)
		bpf_map_update_elem(&py_offcpu, &tid, &h, BPF_ANY);
	else
		bpf_map_delete_elem(&py_offcpu, &tid);
	return h;
}

/* Sends the observation py_stack_capture just made (stack h: 0 for none).
 * A switch-out's is kept for the thread's switch-in. */
static __always_inline void py_observe_emit(__u32 tgid, __u32 tid, __u32 kind, __u64 h, __u64 now)
{
	struct it_py_obs_event *o;
	__u32 zero = 0;

	if (!cfg_py_observe || !py_procs_known || !bpf_map_lookup_elem(&py_procs, &tgid))
		return;
	o = bpf_map_lookup_elem(&py_obs_scratch, &zero);
	if (!o)
		return;
	if (!h)
		o->nwatch = 0;
	/* the stack as it is now: its edges first, so that what this
	 * observation tags (the sample, the block that begins) is the new state */
	if (cfg_py_edges && kind != IT_PY_OBS_PROBE) {
		/* the edges' own clock tells user space only of edges */
		if (!py_edges_observe(tgid, tid, now, h) && kind == IT_PY_OBS_TICK)
			return;
	}
	o = bpf_map_lookup_elem(&py_obs_scratch, &zero);
	if (!o)
		return;
	event_header(&o->hdr, IT_EV_PY_OBS, tgid, tid, now);
	o->pystack = h;
	o->kind = kind;
	{
		struct it_py_stack *s = h ? bpf_map_lookup_elem(&py_scratch, &zero) : NULL;

		o->incomplete = s ? s->incomplete : 0;
	}
	if (bpf_ringbuf_output(&events, o, sizeof(*o), lazy_wakeup()))
		stat_inc(IT_STAT_RINGBUF_LOST);
	if (kind == IT_PY_OBS_OUT)
		bpf_map_update_elem(&py_obs_last, &tid, o, BPF_ANY);
}

/* At a switch-out (either kind) of a thread of a Python process. */
static __always_inline void py_observe_out(__u32 tgid, __u32 tid, __u64 now)
{
	__u64 h;

	if (!cfg_py_observe || !py_procs_known || !bpf_map_lookup_elem(&py_procs, &tgid))
		return;
	h = py_stack_capture(tgid, tid);
	py_observe_emit(tgid, tid, IT_PY_OBS_OUT, h, now);
}

/* At a switch-in: the switch-out's stack again, at this instant. Runs on the
 * previous task (no access to this thread's memory): nothing is read. */
static __always_inline void py_observe_in(__u32 tid, __u64 now)
{
	struct it_py_obs_event *o;

	if (!cfg_py_observe || !py_procs_known)
		return;
	if (cfg_py_edges) {
		struct py_edge_thread *pt = bpf_map_lookup_elem(&py_edge_threads, &tid);

		/* off its CPU it ran nothing: an edge lies after this instant */
		if (pt)
			pt->last_ns = now;
	}
	o = bpf_map_lookup_elem(&py_obs_last, &tid);
	if (!o)
		return;
	o->hdr.ts_ns = now;
	o->hdr.cpu = bpf_get_smp_processor_id();
	o->kind = IT_PY_OBS_IN;
	if (bpf_ringbuf_output(&events, o, sizeof(*o), lazy_wakeup()))
		stat_inc(IT_STAT_RINGBUF_LOST);
	bpf_map_delete_elem(&py_obs_last, &tid);
}

static __always_inline __u64 py_offcpu_stack(__u32 tid)
{
	__u64 *h = py_procs_known ? bpf_map_lookup_elem(&py_offcpu, &tid) : NULL;

	return h ? *h : 0;
}

#endif
