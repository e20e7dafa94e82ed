// SPDX-License-Identifier: BSD-2-Clause
/* Python frames concern: finds CPython in each followed process (at attach,
 * exec and each new executable mapping, e.g. libpython), gives BPF its
 * offsets (`py_procs`), follows forks (a child keeps its parent's
 * addresses) and keeps the names of the code objects BPF reports. The
 * stacks themselves are folded by stacks.c through python.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "probes.h"
#include "pyspans.h"
#include "suggest.h"
#include "python.h"
#include "syms.h"
#include "tracer.h"
#include "vec.h"


/* `py:@callers` (pyspans.h): every observation, replayed at collect with
 * the functions the phase's probes were called from. */
struct py_obs_rec {
	pid_t tgid, tid;
	uint64_t ts;
	uint64_t pystack;
	int kind;
};

#define PY_MAX_CALLERS 16

#define PY_CALLER_STACKS 8
/* the `py:` edges' own observation clock (on_py_tick): edges within ~0.5 ms;
 * a prime, so that it does not beat with -F or with a loop's own period */
#define PY_EDGE_HZ 997

struct py_caller {
	char name[256]; /* "qualname (file)" */
	uint64_t hits;
	/* a few of the Python stacks it was found on: a caller seen on
	 * another caller's stack is its ancestor */
	__u64 stacks[PY_CALLER_STACKS];
	pid_t tgids[PY_CALLER_STACKS];
	int nstacks;
};

struct py_state {
	int procs_fd;
	int watch_fd;
	struct py_obs_rec *log;
	size_t nlog, caplog;
	struct py_caller callers[PY_MAX_CALLERS];
	int ncallers;
	uint64_t located, unlocated; /* probe observations with / without a Python frame */
	struct suggest *suggest;     /* no cycle spec: the stacks' timeline */
	/* pids already found, or warned about: not looked at again until exec */
	pid_t done[4096];
	size_t ndone;
};


static bool py_done(const struct py_state *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->ndone; i++)
		if (ps->done[i] == pid)
			return true;
	return false;
}

static void py_forget(struct py_state *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->ndone; i++)
		if (ps->done[i] == pid) {
			ps->done[i] = ps->done[--ps->ndone];
			return;
		}
}

static void py_mark(struct py_state *ps, pid_t pid)
{
	if (ps->ndone < sizeof(ps->done) / sizeof(ps->done[0]))
		ps->done[ps->ndone++] = pid;
}

static void py_look(struct recording *rec, pid_t pid)
{
	struct py_state *ps = rec->python;
	struct it_py_proc pp;
	char what[512];
	__u32 key = pid;

	if (ps->procs_fd < 0 || py_done(ps, pid))
		return;
	switch (python__detect(pid, rec->syms, &pp, what, sizeof(what))) {
	case PY_DETECT_OK:
		rec->tracer.skel->bss->py_procs_known = 1; /* before the entry: see bpf/python.bpf.h */
		if (bpf_map_update_elem(ps->procs_fd, &key, &pp, BPF_ANY))
			fprintf(stderr, "infertrace: warning: Python %s in pid %d: %s; its stacks stay native\n",
				what, pid, strerror(errno));
		py_mark(ps, pid);
		break;
	case PY_DETECT_UNSUPPORTED:
		fprintf(stderr,
			"infertrace: warning: Python %s in pid %d is not supported (CPython 3.10 to 3.13); its stacks stay native\n",
			what, pid);
		py_mark(ps, pid);
		break;
	default:
		break;
	}
}

static int phase_of_function(void *ctx, const char *qualname, const char *file)
{
	const struct pyspans *sp = ctx;
	int spec = pyspans__match(sp, qualname, file), role, id;

	if (spec < 0)
		return 0;
	pyspans__spec_role(sp, spec, &role, &id);
	return role == IT_ROLE_PHASE ? id : 0;
}

static int python_attach(struct recording *rec)
{
	struct py_state *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	rec->python = ps;
	ps->procs_fd = bpf_map__fd(rec->tracer.skel->maps.py_procs);
	ps->watch_fd = bpf_map__fd(rec->tracer.skel->maps.py_watch);
	if (probes__pyspans(rec))
		python__set_phase_fn(phase_of_function, probes__pyspans(rec));
	for (int i = 0; i < pyspans__nspecs(probes__pyspans(rec)); i++) {
		const struct pyspans *sp = probes__pyspans(rec);
		struct it_py_watch_name key = {
			.name = pyspans__name_hash(pyspans__spec_qualname(sp, i)),
			.module = pyspans__spec_module_hash(sp, i),
		};
		int fd = bpf_map__fd(rec->tracer.skel->maps.py_watch_names);
		__u32 specs = 0, k = i;
		struct it_py_spec spec = {};
		int role, id;

		/* specs of one name and module share the entry */
		bpf_map_lookup_elem(fd, &key, &specs);
		specs |= 1u << i;
		bpf_map_update_elem(fd, &key, &specs, BPF_ANY);
		pyspans__spec_role(sp, i, &role, &id);
		if (!pyspans__is_callers(sp, i)) {
			spec.role = role;
			spec.id = id;
		}
		bpf_map_update_elem(bpf_map__fd(rec->tracer.skel->maps.py_specs), &k, &spec, BPF_ANY);
	}
	python__set_stacks_fd(bpf_map__fd(rec->tracer.skel->maps.py_stacks));
	if (bpf_program__fd(rec->tracer.skel->progs.on_py_tick) >= 0) {
		int err = tracer__attach_cpu_clock(&rec->tracer, rec->tracer.skel->progs.on_py_tick, PY_EDGE_HZ);

		if (err < 0)
			return err;
	}
	if (probes__whole_run(rec)) {
		ps->suggest = suggest__new();
		if (!ps->suggest)
			return -ENOMEM;
	}
	/* a target that execs or maps an interpreter not found yet is stopped
	 * until py_look has run, so that its start-up has Python frames too */
	rec->tracer.skel->bss->pending_python = ps->procs_fd >= 0;
	for (int i = 0; i < rec->opts.npids; i++)
		py_look(rec, rec->opts.pids[i]);
	return 0;
}

/* Splits "qualname (file)" as python__frame_name writes it. */
static bool split_frame_name(char *name, char **qual, char **file)
{
	char *open = strrchr(name, '(');
	size_t n = strlen(name);

	if (!open || open == name || open[-1] != ' ' || name[n - 1] != ')')
		return false;
	open[-1] = 0;
	name[n - 1] = 0;
	*qual = name;
	*file = open + 1;
	return true;
}

/* The specs a frame's function is (bit i: spec i). */
static uint32_t specs_of_frame(const struct pyspans *sp, pid_t tgid, const struct it_py_frame *f)
{
	char name[512], *qual, *file;

	python__frame_name(tgid, f, name, sizeof(name));
	if (!split_frame_name(name, &qual, &file))
		return 0;
	return pyspans__match_mask(sp, qual, file);
}

/* A code object of a `py:` function: BPF gives its frames a call identity
 * and applies its edges. BPF watched it at first sight by its qualname and
 * file's basename; the whole name decides (a module given as a path). */
static void watch_code(struct py_state *ps, struct pyspans *sp, const struct it_py_code_event *e)
{
	struct it_py_frame f = { .code = e->code, .ident = e->ident };
	struct { __u32 tgid, pad; __u64 code; } key = { .tgid = e->hdr.tgid, .code = e->code };
	__u32 specs = specs_of_frame(sp, e->hdr.tgid, &f), had = 0;

	if (specs)
		bpf_map_update_elem(ps->watch_fd, &key, &specs, BPF_ANY);
	else if (!bpf_map_lookup_elem(ps->watch_fd, &key, &had))
		bpf_map_delete_elem(ps->watch_fd, &key);
}

static void observe(struct pyspans *sp, const struct it_py_obs_event *e)
{
	static struct it_py_stack st;
	struct pyspan_hit hits[IT_PY_MAX_FRAMES];
	int nhits = 0;

	if (e->pystack && python__stack(e->pystack, &st))
		return; /* the stack was not kept: this observation says nothing */
	if (e->incomplete)
		return; /* calls may be missing from it or look new (as the kernel's edges defer it) */
	for (__u32 i = 0; e->pystack && i < st.depth && i < IT_PY_MAX_FRAMES; i++) {
		uint32_t specs = specs_of_frame(sp, e->hdr.tgid, &st.frames[i]);
		uint64_t call = 0;

		for (__u32 w = 0; specs && w < e->nwatch && w < IT_PY_OBS_WATCH; w++)
			if (e->watch[w].depth == i && e->watch[w].code == st.frames[i].code)
				call = e->watch[w].call;
		for (int spec = 0; specs && spec < PYSPANS_MAX_SPECS && nhits < IT_PY_MAX_FRAMES; spec++)
			if (specs & (1u << spec))
				hits[nhits++] = (struct pyspan_hit){
					.spec = spec, .depth = st.depth - 1 - i, .call = call,
				};
	}
	pyspans__observe(sp, e->hdr.tgid, e->hdr.tid, e->hdr.ts_ns, e->kind, hits, nhits);
}

/* The leaf Python frame at a probe of the callers' phase: the function
 * that called into the library (a C method pushes no Python frame). */
static void locate(struct recording *rec, struct py_state *ps, const struct it_py_obs_event *e)
{
	static struct it_py_stack st;
	char name[256];
	int i;

	if (!e->pystack || python__stack(e->pystack, &st)) {
		ps->unlocated++;
		return;
	}
	python__frame_name(e->hdr.tgid, &st.frames[0], name, sizeof(name));
	/* module-level code is no function to time: it would be the run;
	 * its statements are timed natively instead */
	if (!strncmp(name, "<module> (", 10)) {
		char why[360];

		ps->unlocated++;
		snprintf(why, sizeof(why), "its Python caller is module-level code, %s, which cannot be timed whole",
			 name);
		probes__wake_fallback(rec, why);
		return;
	}
	ps->located++;
	for (i = 0; i < ps->ncallers; i++)
		if (!strcmp(ps->callers[i].name, name))
			break;
	if (i == ps->ncallers) {
		if (ps->ncallers == PY_MAX_CALLERS)
			return;
		snprintf(ps->callers[i].name, sizeof(ps->callers[i].name), "%s", name);
		ps->ncallers++;
	}
	ps->callers[i].hits++;
	for (int k = 0; k < ps->callers[i].nstacks; k++)
		if (ps->callers[i].stacks[k] == e->pystack)
			return;
	if (ps->callers[i].nstacks < PY_CALLER_STACKS) {
		ps->callers[i].tgids[ps->callers[i].nstacks] = e->hdr.tgid;
		ps->callers[i].stacks[ps->callers[i].nstacks++] = e->pystack;
	}
}

static void log_obs(struct py_state *ps, const struct it_py_obs_event *e)
{
	if (VEC_RESERVE(ps->log, ps->caplog, ps->nlog, 4096))
		return;
	ps->log[ps->nlog++] = (struct py_obs_rec){ .tgid = e->hdr.tgid, .tid = e->hdr.tid, .ts = e->hdr.ts_ns,
						   .pystack = e->pystack, .kind = e->kind };
}

/* The observation's Python stack, root first, for the cycle suggestion; a
 * switch-in repeats its switch-out. */
static void suggest_observe(struct py_state *ps, const struct it_py_obs_event *e)
{
	static struct it_py_stack st;
	static char names[IT_PY_MAX_FRAMES][256];
	const char *frames[IT_PY_MAX_FRAMES];
	int n = 0;

	if (e->kind == IT_PY_OBS_IN)
		return;
	if (e->pystack && python__stack(e->pystack, &st))
		return;
	for (int i = e->pystack ? (int)st.depth - 1 : -1; i >= 0 && n < IT_PY_MAX_FRAMES; i--, n++) {
		python__frame_name(e->hdr.tgid, &st.frames[i], names[n], sizeof(names[n]));
		/* imports (importlib's frozen frames) recur at start-up: no loop */
		if (strstr(names[n], " (<frozen "))
			break;
		frames[n] = names[n];
	}
	suggest__observe(ps->suggest, e->hdr.tid, e->hdr.ts_ns, frames, n);
}

static void python_on_event(struct recording *rec, const void *data, size_t size)
{
	struct py_state *ps = rec->python;
	const struct it_event_header *h = data;
	const struct it_proc_event *pe = data;
	struct it_py_proc pp;
	__u32 parent, child;

	if (!ps)
		return;
	switch (h->type) {
	case IT_EV_PY_CODE:
		if (size >= sizeof(struct it_py_code_event)) {
			python__add_code(data);
			if (pyspans__nspecs(probes__pyspans(rec)))
				watch_code(ps, probes__pyspans(rec), data);
		}
		return;
	case IT_EV_PY_OBS:
		if (size >= sizeof(struct it_py_obs_event) && ps->suggest)
			suggest_observe(ps, data);
		if (size >= sizeof(struct it_py_obs_event) && probes__pyspans(rec)) {
			pyspans__set_hold(probes__pyspans(rec), recording__may_hold(rec));
			observe(probes__pyspans(rec), data);
			if (pyspans__callers_spec(probes__pyspans(rec)) >= 0) {
				log_obs(ps, data);
				if (((const struct it_py_obs_event *)data)->kind == IT_PY_OBS_PROBE)
					locate(rec, ps, data);
			}
		}
		return;
	case IT_EV_FORK:
		parent = pe->parent_tgid;
		child = h->tgid;
		if (ps->procs_fd < 0 || bpf_map_lookup_elem(ps->procs_fd, &parent, &pp))
			return;
		/* the parent's entry set it already: a child is no first */
		if (bpf_map_update_elem(ps->procs_fd, &child, &pp, BPF_ANY) == 0)
			py_mark(ps, h->tgid);
		return;
	case IT_EV_EXEC:
		child = h->tgid;
		if (ps->procs_fd >= 0)
			bpf_map_delete_elem(ps->procs_fd, &child);
		py_forget(ps, h->tgid);
		py_look(rec, h->tgid);
		return;
	case IT_EV_MMAP:
		py_look(rec, h->tgid);
		return;
	default:
		return;
	}
}

/* A caller is kept unless it is seen below another caller on the latter's
 * stacks: `main` creating the table and `db_write` inserting the rows are
 * both callers, and timing main whole would time the whole run. Its own
 * calls stay timed by the phase's native probes. */
static bool caller_kept(const struct py_state *ps, int c)
{
	static struct it_py_stack st;
	char name[256];

	for (int o = 0; o < ps->ncallers; o++) {
		if (o == c)
			continue;
		for (int k = 0; k < ps->callers[o].nstacks; k++) {
			if (python__stack(ps->callers[o].stacks[k], &st))
				continue;
			for (__u32 i = 1; i < st.depth && i < IT_PY_MAX_FRAMES; i++) {
				python__frame_name(ps->callers[o].tgids[k], &st.frames[i], name, sizeof(name));
				if (!strcmp(name, ps->callers[c].name))
					return false;
			}
		}
	}
	return true;
}

/* `py:@callers`: the located functions as `py:FILE:QUALNAME` phases of the
 * same id, timed from the whole observation log; their calls stand in for
 * the callers spec's (pyspans__set_extra). */
static int replay_callers(struct py_state *ps, struct pyspans *main)
{
	static struct it_py_stack st;
	int cs = pyspans__callers_spec(main), role, id, err = 0;
	struct pyspans *sp;
	struct pyspan_call *calls = NULL;
	size_t ncalls = 0;

	if (cs < 0 || !ps->located)
		return 0;
	pyspans__spec_role(main, cs, &role, &id);
	sp = pyspans__new();
	if (!sp)
		return -ENOMEM;
	for (int i = 0; i < ps->ncallers; i++) {
		char buf[300], *qual, *file, text[320], errbuf[128];

		if (!caller_kept(ps, i))
			continue;
		snprintf(buf, sizeof(buf), "%s", ps->callers[i].name);
		if (!split_frame_name(buf, &qual, &file))
			continue;
		snprintf(text, sizeof(text), "py:%s:%s", file, qual);
		if (pyspans__add_spec(sp, text, role, id, errbuf, sizeof(errbuf)) == -ENOMEM) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t k = 0; k < ps->nlog; k++) {
		const struct py_obs_rec *r = &ps->log[k];
		struct pyspan_hit hits[IT_PY_MAX_FRAMES];
		int nhits = 0;

		if (r->pystack && python__stack(r->pystack, &st))
			continue;
		for (__u32 i = 0; r->pystack && i < st.depth && i < IT_PY_MAX_FRAMES; i++) {
			uint32_t specs = specs_of_frame(sp, r->tgid, &st.frames[i]);

			if (specs)
				hits[nhits++] = (struct pyspan_hit){
					.spec = __builtin_ctz(specs), .depth = st.depth - 1 - i,
				};
		}
		if (pyspans__observe(sp, r->tgid, r->tid, r->ts, r->kind, hits, nhits)) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = pyspans__calls(sp, &calls, &ncalls);
	for (size_t k = 0; !err && k < ncalls; k++)
		calls[k].spec = cs;
	if (!err)
		err = pyspans__set_extra(main, calls, ncalls);
out:
	free(calls);
	pyspans__free(sp);
	return err;
}

const char *python_concern__callers(const struct recording *rec, char *buf, size_t len)
{
	const struct py_state *ps = rec->python;
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; ps && i < ps->ncallers; i++)
		if (caller_kept(ps, i) && off < len)
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "", ps->callers[i].name);
	return buf;
}

void python_concern__edge_resolution(const struct recording *rec, struct pyspans_resolution *r)
{
	int n = libbpf_num_possible_cpus(), fd = bpf_map__fd(rec->tracer.skel->maps.py_edge_res);
	struct it_py_edge_res *v = n > 0 ? calloc(n, sizeof(*v)) : NULL;
	__u32 zero = 0;
	uint64_t sum = 0, max = 0;

	memset(r, 0, sizeof(*r));
	if (v && !bpf_map_lookup_elem(fd, &zero, v))
		for (int i = 0; i < n; i++) {
			r->observations += v[i].observations;
			r->edges += v[i].edges;
			sum += v[i].half_ns_sum;
			if (v[i].half_ns_max > max)
				max = v[i].half_ns_max;
		}
	r->mean_ms = r->edges ? sum / 1e6 / r->edges : 0;
	r->max_ms = max / 1e6;
	free(v);
}

/* Before the probes concern's spans, which read the callers' calls. */
static int python_spans(struct recording *rec, struct model *m)
{
	(void)m;
	if (rec->python && probes__pyspans(rec))
		return replay_callers(rec->python, probes__pyspans(rec));
	return 0;
}

/* record's last lines: the likely --cycle of a loop recorded without one */
static void python_stop(struct recording *rec)
{
	struct py_state *ps = rec->python;
	struct suggestion g;
	char line[512];

	if ((ps && ps->suggest && suggest__result(ps->suggest, &g)) || sampling__suggest(rec, &g)) {
		suggest__format(&g, line, sizeof(line));
		fprintf(stderr, "infertrace: suggested %s: %s\n", suggest__noun(suggest__option(&g)), line);
	}
}

/* Python stacks that kept only their native frames, and code objects whose
 * names never arrived (their frames read `[unknown_python] (?)`). */
static int python_collect(struct recording *rec, struct model *m)
{
	__u64 stats[IT_STAT_MAX];
	__u64 full, unread;

	{
		const struct py_state *ps = rec->python;
		struct suggestion g;
		char line[512];

		if ((ps && ps->suggest && suggest__result(ps->suggest, &g)) || sampling__suggest(rec, &g)) {
			struct model_suggestion *sg = &m->suggested_cycle;

			suggest__format(&g, line, sizeof(line));
			*sg = (struct model_suggestion){ .present = true, .bursts = g.bursts, .period_ms = g.period_ms };
			snprintf(sg->option, sizeof(sg->option), "%s", suggest__option(&g));
			snprintf(sg->function, sizeof(sg->function), "%s", g.name);
			snprintf(sg->text, sizeof(sg->text), "%s", line);
		}
	}
	tracer__stats(&rec->tracer, stats);
	full = stats[IT_STAT_PY_STACKS_FULL] + stats[IT_STAT_PY_READ_ERR];
	unread = stats[IT_STAT_PY_CODE_LOST];
	if (full && model__add_lost(m, "python_stacks", full))
		return -ENOMEM;
	if (unread && model__add_lost(m, "python_code_names", unread))
		return -ENOMEM;
	return 0;
}

static void python_cleanup(struct recording *rec)
{
	python__reset();
	if (rec->python) {
		free(((struct py_state *)rec->python)->log);
		suggest__free(((struct py_state *)rec->python)->suggest);
	}
	free(rec->python);
	rec->python = NULL;
}

const struct concern python_concern = {
	.name = "python",
	.attach = python_attach,
	.on_event = python_on_event,
	.spans = python_spans,
	.stop = python_stop,
	.collect = python_collect,
	.cleanup = python_cleanup,
};
