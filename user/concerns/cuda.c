// SPDX-License-Identifier: BSD-2-Clause
/* CUDA concern (--preset cuda): places bpf/cuda.bpf.c's generic uprobe and
 * uretprobe on the CUDA runtime (libcudart) and driver (libcuda) functions
 * that launch kernels, copy memory and wait for the GPU: at attach in the
 * libraries the target loads at start, later in those it maps (dlopen).
 * Fills each cycle's cuda totals {kernel_launches, graph_launches,
 * memcpy_calls, memcpy_bytes, sync_calls, sync_wait_ms} and the run's, with
 * the libraries probed (struct model_cuda: profile.json's gpu.cuda). The
 * preset also makes the synchronizations a phase, `gpu_sync` (presets.c),
 * so the scheduler concern splits that wait into on- and off-CPU time.
 * Launches arrive with their stack: a thread running Python's Python
 * stack, any other's native user stack (IT_EV_CUDA_LAUNCH with a stack map
 * id under --call-graph fp, IT_EV_CUDA_LAUNCH_USTACK's copy, unwound on
 * arrival, under dwarf). Kept, and given to the model as
 * gpu_activity.launches, each distinct stack folded root first once, as
 * stacks.folded folds it, for the GPU join (analysis/gpu_join.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "map_dump.h"
#include "uprobe_links.h"
#include "probe_spec.h"
#include "python.h"
#include "stacks.h"
#include "unwind.h"
#include "ustack_table.h"
#include "vec.h"

#define MAX_FILES 16
#define CUDA_LIBS 2 /* libcuda and libcudart: once both are probed, mmaps need no look */
#define MAX_CLOSURE 512

struct cuda_fn {
	const char *lib;     /* library name, matched like a probe spec's OBJECT */
	const char *symbol;
	enum it_cuda_counter counter;
	unsigned int arg;    /* summed argument, 1-based; 0 none */
};

/* Memory copies: the size is the third argument of each of these. The
 * _ptds/_ptsz variants are the per-thread default stream entry points. */
static const struct cuda_fn fns[] = {
	{ "libcudart", "cudaLaunchKernel", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaLaunchKernel_ptsz", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaLaunchKernelExC", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaLaunchKernelExC_ptsz", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaLaunchCooperativeKernel", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaLaunchCooperativeKernel_ptsz", IT_CUDA_LAUNCH, 0 },
	{ "libcudart", "cudaGraphLaunch", IT_CUDA_GRAPH, 0 },
	{ "libcudart", "cudaGraphLaunch_ptsz", IT_CUDA_GRAPH, 0 },
	{ "libcudart", "cudaMemcpy", IT_CUDA_MEMCPY, 3 },
	{ "libcudart", "cudaMemcpy_ptds", IT_CUDA_MEMCPY, 3 },
	{ "libcudart", "cudaMemcpyAsync", IT_CUDA_MEMCPY, 3 },
	{ "libcudart", "cudaMemcpyAsync_ptsz", IT_CUDA_MEMCPY, 3 },
	{ "libcudart", "cudaDeviceSynchronize", IT_CUDA_SYNC, 0 },
	{ "libcudart", "cudaStreamSynchronize", IT_CUDA_SYNC, 0 },
	{ "libcudart", "cudaStreamSynchronize_ptsz", IT_CUDA_SYNC, 0 },
	{ "libcuda", "cuLaunchKernel", IT_CUDA_LAUNCH, 0 },
	{ "libcuda", "cuLaunchKernel_ptsz", IT_CUDA_LAUNCH, 0 },
	/* cuBLAS on Hopper (CUDA 13, H200) launches its large GEMMs here, from
	 * its own static runtime: 100 of 100 4096x4096 matmuls in torch 2.11 */
	{ "libcuda", "cuLaunchKernelEx", IT_CUDA_LAUNCH, 0 },
	{ "libcuda", "cuLaunchKernelEx_ptsz", IT_CUDA_LAUNCH, 0 },
	{ "libcuda", "cuLaunchCooperativeKernel", IT_CUDA_LAUNCH, 0 },
	{ "libcuda", "cuLaunchCooperativeKernel_ptsz", IT_CUDA_LAUNCH, 0 },
	{ "libcuda", "cuGraphLaunch", IT_CUDA_GRAPH, 0 },
	{ "libcuda", "cuGraphLaunch_ptsz", IT_CUDA_GRAPH, 0 },
	{ "libcuda", "cuCtxSynchronize", IT_CUDA_SYNC, 0 },
	{ "libcuda", "cuStreamSynchronize", IT_CUDA_SYNC, 0 },
	{ "libcuda", "cuStreamSynchronize_ptsz", IT_CUDA_SYNC, 0 },
	{ "libcuda", "cuMemcpy", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyAsync", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyHtoD_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoH_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoD_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyHtoDAsync_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoHAsync_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoDAsync_v2", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpy_ptds", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyAsync_ptsz", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyHtoD_v2_ptds", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoH_v2_ptds", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyHtoDAsync_v2_ptsz", IT_CUDA_MEMCPY, 3 },
	{ "libcuda", "cuMemcpyDtoHAsync_v2_ptsz", IT_CUDA_MEMCPY, 3 },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

/* Where a launch's stack is. */
enum launch_kind {
	LAUNCH_PY = 0,     /* a `py_stacks` key */
	LAUNCH_FP = 1,     /* a `stackmap` id (--call-graph fp) */
	LAUNCH_NATIVE = 2, /* an entry of cuda_state.native (unwound copy) */
};

/* A launch's stack as it arrived: named at collect. */
struct cuda_launch {
	pid_t tgid, tid;
	uint64_t ts_ns;
	uint64_t stack;  /* by kind */
	uint64_t caller; /* LAUNCH_FP: the call's return address (it_cuda_launch_event) */
	uint32_t kind;   /* enum launch_kind */
};

struct cuda_state {
	char *files[MAX_FILES];   /* libraries probed */
	int nfiles;
	int nprobes;              /* functions probed */
	VEC_OF(struct cuda_launch) launches;
	/* distinct native launch stacks, unwound (dwarf) or read from the
	 * stack map at collect (fp), without thread or cycle */
	struct ustack_table native;
	uint64_t launches_not_kept; /* --max-memory reached, or a copy not unwound */
	/* at the last collect: launches whose stack could not be named, and
	 * those kept, by enum launch_kind */
	uint64_t unnamed;
	uint64_t by_kind[3];
	uint64_t copies, reused;  /* dwarf: stacks copied, and launches that named an earlier one */
	uint64_t rebuilds_seen;   /* the unwinder's module rebuilds when checks were last dropped */
};


static bool cuda_requested(const struct record_opts *o)
{
	for (int i = 0; i < o->npresets; i++)
		if (!strcmp(o->presets[i], "cuda"))
			return true;
	return false;
}

static int cuda_configure(struct recording *rec)
{
	/* the launch stacks' checks serve DWARF copies only */
	if (!cuda_requested(&rec->opts) || rec->opts.call_graph != CALL_GRAPH_DWARF)
		bpf_map__set_max_entries(rec->tracer.skel->maps.cuda_ustack_checks, 1);
	if (!cuda_requested(&rec->opts)) {
		bpf_program__set_autoload(rec->tracer.skel->progs.cuda_uprobe, false);
		bpf_program__set_autoload(rec->tracer.skel->progs.cuda_uretprobe, false);
		return 0;
	}
	rec->cuda = calloc(1, sizeof(*rec->cuda));
	return rec->cuda ? 0 : -ENOMEM;
}


/* Places the probes of every function the file has (pid -1: any process
 * mapping it; BPF keeps the targets, children included). */
static void place_in(struct recording *rec, const char *file)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	bool any = false;

	if (rec->cuda->nfiles >= MAX_FILES)
		return;
	for (int i = 0; i < rec->cuda->nfiles; i++)
		if (!strcmp(rec->cuda->files[i], file))
			return;
	for (size_t i = 0; i < NFNS; i++) {
		const struct cuda_fn *f = &fns[i];
		__u64 cookie = IT_CUDA_COOKIE(f->counter, f->arg) | (strcmp(f->lib, "libcudart") ? 0 : IT_CUDA_COOKIE_RUNTIME);
		uint64_t off;

		if (!probe_spec__name_matches(f->lib, file) || elf_symbol_offset(file, f->symbol, &off))
			continue;
		for (int ret = 0; ret < 2; ret++) {
			struct uprobe_link l;
			int err = uprobe_link__attach(&l, ret ? s->progs.cuda_uretprobe : s->progs.cuda_uprobe, ret, -1,
						      file, off, cookie);

			if (!err)
				err = tracer__keep_uprobe_link(&rec->tracer, &l);
			if (err) {
				fprintf(stderr, "infertrace: warning: probing %s in %s failed: %s\n", f->symbol, file,
					strerror(-err));
				break;
			}
		}
		rec->cuda->nprobes++;
		any = true;
	}
	if (any) {
		rec->cuda->files[rec->cuda->nfiles++] = strdup(file);
		if (rec->opts.verbose)
			fprintf(stderr, "infertrace: CUDA probes placed in %s\n", file);
	}
}

static bool is_cuda_lib(const char *path)
{
	return probe_spec__name_matches("libcudart", path) || probe_spec__name_matches("libcuda", path);
}

static void place_if_cuda(const char *file, void *rec)
{
	if (is_cuda_lib(file))
		place_in(rec, file);
}

static int cuda_attach(struct recording *rec)
{
	const struct record_opts *o = &rec->opts;
	char exe[PATH_MAX], *closure[MAX_CLOSURE];
	int n = -1;

	if (!rec->cuda)
		return 0;
	if (o->command && !resolve_command_path(o->command[0], exe, sizeof(exe)))
		n = elf_needed_closure(exe, closure, MAX_CLOSURE);
	for (int i = 0; i < n; i++) {
		if (is_cuda_lib(closure[i]))
			place_in(rec, closure[i]);
		free(closure[i]);
	}
	for (int i = 0; i < o->npids; i++)
		proc_exec_files(o->pids[i], place_if_cuda, rec);
	return 0;
}

static void keep_launch(struct cuda_state *st, struct recording *rec, const struct it_event_header *h,
			uint64_t stack, uint64_t caller, enum launch_kind kind)
{
	if (!recording__may_hold(rec) || VEC_RESERVE(st->launches.v, st->launches.cap, st->launches.n, 1024)) {
		st->launches_not_kept++;
		return;
	}
	st->launches.v[st->launches.n++] =
		(struct cuda_launch){ (pid_t)h->tgid, (pid_t)h->tid, h->ts_ns, stack, caller, kind };
}

/* The return address of the launch call whose stack e copied: the key of
 * its check, as cuda.bpf.c reads it at the call's entry. */
static uint64_t copy_caller(const struct it_ustack_event *e)
{
#ifdef IT_UREG_LR
	return e->regs[IT_UREG_LR];
#else
	uint64_t ra = 0;

	if (e->stack_size >= sizeof(ra))
		memcpy(&ra, e->stack, sizeof(ra));
	return ra;
#endif
}

/* After unwinding a copy into entry id: tells BPF what the unwinding
 * depended on, so that the thread's next launches from the same call site
 * with the same registers and words send the entry (as ref id + 1), not a
 * copy. */
static void publish_check(struct recording *rec, const struct it_ustack_event *e, uint32_t id,
			  const struct unwind_reads *reads)
{
	struct it_ustack_check c = { .ref = (uint64_t)id + 1 };
	/* the call site's stacks spread over its slots by entry */
	struct it_ustack_check_key k = { .tid = e->hdr.tid, .pad = id % IT_CUDA_CHECK_SLOTS, .pc = copy_caller(e) };

	ustack__check_fill(&c, e, reads);
	bpf_map_update_elem(bpf_map__fd(rec->tracer.skel->maps.cuda_ustack_checks), &k, &c, BPF_ANY);
}

/* The native stack of a launch into st->native: unwound from its copy, or
 * the entry an earlier copy's check named. Its entry, or -1 (no frame, a
 * malformed record, no memory). */
static int64_t native_entry(struct recording *rec, const struct it_ustack_event *e, size_t size)
{
	struct cuda_state *st = rec->cuda;
	/* callee-saved registers restored on the way are read too, and
	 * dropped after (see unwind.c) */
	uint32_t off[4 * IT_USTACK_CHECK_WORDS];
	struct unwind_reads reads = { .off = off, .max = 4 * IT_USTACK_CHECK_WORDS };
	__u64 ips[IT_MAX_STACK_DEPTH];
	struct it_label_key key;
	uint32_t id;
	int n;

	if (!rec->unwinder || size < sizeof(*e) || e->stack_size > size - sizeof(*e))
		return -1;
	if (!e->stack_size) {
		if (!e->reuse || e->reuse > st->native.n)
			return -1;
		st->reused++;
		return (int64_t)e->reuse - 1;
	}
	if (!recording__may_hold(rec))
		return -1;
	st->copies++;
	n = ustack__unwind_raw(rec->unwinder, rec->syms, e, size, ips, &reads);
	if (n <= 0)
		return -1;
	if (unwinder__stats(rec->unwinder)->rebuilds != st->rebuilds_seen) {
		/* a process's mappings changed: stacks unwind again */
		st->rebuilds_seen = unwinder__stats(rec->unwinder)->rebuilds;
		ustack__checks_drop(bpf_map__fd(rec->tracer.skel->maps.cuda_ustack_checks));
	}
	ustack__label_event(rec->syms, e, ips, n, &key);
	/* one entry per stack of a process, whoever launched from it */
	memset(&key, 0, sizeof(key));
	key.stack.tgid = e->hdr.tgid;
	key.stack.kstack_id = -1;
	key.cycle = IT_CYCLE_NONE;
	if (ustack_table__add_id(&st->native, &key, ips, n, 1, &id))
		return -1;
	/* as sched.c's checks: not without modules, nor cut at the depth limit */
	if (reads.status != UNWIND_NO_MODULES && reads.status != UNWIND_TOO_DEEP && !reads.overflow &&
	    reads.n <= IT_USTACK_CHECK_WORDS)
		publish_check(rec, e, id, &reads);
	return id;
}

static void cuda_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;
	struct cuda_state *st = rec->cuda;

	if (!st)
		return;
	/* a target mapped code: a CUDA library loaded with dlopen */
	if (h->type == IT_EV_MMAP && st->nfiles < CUDA_LIBS)
		proc_exec_files(h->tgid, place_if_cuda, rec);
	if (h->type == IT_EV_CUDA_LAUNCH && size >= sizeof(struct it_cuda_launch_event)) {
		const struct it_cuda_launch_event *e = data;

		if (e->pystack)
			keep_launch(st, rec, h, e->pystack, 0, LAUNCH_PY);
		else
			keep_launch(st, rec, h, (uint64_t)(uint32_t)e->ustack_id, e->caller, LAUNCH_FP);
	}
	if (h->type == IT_EV_CUDA_LAUNCH_USTACK) {
		int64_t id = native_entry(rec, data, size);

		if (id < 0)
			st->launches_not_kept++;
		else
			keep_launch(st, rec, h, (uint64_t)id, 0, LAUNCH_NATIVE);
	}
}

/* "f (a.py);g (b.py)": a recorded Python stack root first, its frames named
 * and cleaned as stacks.folded's Python frames are (symbols/stacks.c).
 * NULL when the stack is not in py_stacks; -ENOMEM in *err. */
static char *py_folded(pid_t tgid, uint64_t pystack, int *err)
{
	struct it_py_stack *py = malloc(sizeof(*py));
	char frame[512], *out = NULL;
	size_t len = 0, cap = 0;

	*err = 0;
	if (!py) {
		*err = -ENOMEM;
		return NULL;
	}
	if (python__stack(pystack, py)) {
		free(py);
		return NULL;
	}
	for (int i = (int)py->depth - 1; i >= 0; i--) {
		size_t n;

		python__frame_name(tgid, &py->frames[i], frame, sizeof(frame));
		for (char *c = frame; *c; c++)
			if (*c == ';')
				*c = ':';
			else if (*c == '\n')
				*c = '_';
		n = strlen(frame);
		/* room for ';', the frame and its NUL */
		if (VEC_RESERVE(out, cap, len + n + 1, 256)) {
			*err = -ENOMEM;
			free(out);
			out = NULL;
			break;
		}
		if (len)
			out[len++] = ';';
		memcpy(out + len, frame, n + 1);
		len += n;
	}
	free(py);
	return out;
}

/* A distinct launch stack: (kind, process, stack, caller). */
struct launch_key {
	uint32_t kind;
	pid_t tgid;
	uint64_t stack, caller;
};

static int cmp_key(const void *a, const void *b)
{
	const struct launch_key *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->caller > y->caller) - (x->caller < y->caller);
}

static int cmp_launch(const void *a, const void *b)
{
	const struct model_gpu_launch *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts_ns > y->ts_ns) - (x->ts_ns < y->ts_ns);
}

/* Names the native stacks: names[entry], in model.names. */
struct native_names {
	struct recording *rec;
	struct model *m;
	struct stack_report sr;
	int32_t *names;
};

/* One native stack as stacks.folded folds it (its frames named, `;` in a
 * name replaced), less the process name that line starts with. */
static int name_native(void *arg, uint32_t id, const struct it_label_key *key, const __u64 *ips, int n,
		       uint64_t weight)
{
	struct native_names *nn = arg;
	__u64 u[IT_MAX_STACK_DEPTH] = {};
	const char *line;
	int err;

	(void)weight;
	memcpy(u, ips, (size_t)(n < IT_MAX_STACK_DEPTH ? n : IT_MAX_STACK_DEPTH) * sizeof(*u));
	err = stacks__add(&nn->sr, nn->rec->syms, NULL, NULL, &key->stack, u, NULL, 1);
	if (err)
		return err;
	line = nn->sr.last_line ? strchr(nn->sr.last_line, ';') : NULL;
	nn->names[id] = line ? model__intern(nn->m, line + 1) : -1;
	return line && nn->names[id] < 0 ? -ENOMEM : 0;
}

/* The fp launches' stacks, read from the stack map, into st->native; each
 * such key's stack becomes its entry there (UINT64_MAX: none). */
static int fp_to_native(struct recording *rec, struct launch_key *keys, size_t nkeys)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.stackmap);

	for (size_t i = 0; i < nkeys; i++) {
		__u64 ips[IT_MAX_STACK_DEPTH] = {};
		struct it_label_key key = { .stack = { .tgid = keys[i].tgid, .kstack_id = -1 }, .cycle = IT_CYCLE_NONE };
		__u32 sid = (__u32)keys[i].stack;
		uint32_t id;
		int n = 0;

		if (keys[i].kind != LAUNCH_FP)
			continue;
		keys[i].stack = UINT64_MAX;
		if (bpf_map_lookup_elem(fd, &sid, ips))
			continue;
		while (n < IT_MAX_STACK_DEPTH && ips[n])
			n++;
		if (!n)
			continue;
		/* the caller the walk from the entry missed, unless the kernel
		 * added it (recent x86-64 kernels do at some function entries) */
		if (keys[i].caller && (n < 2 || ips[1] != keys[i].caller)) {
			if (n == IT_MAX_STACK_DEPTH)
				n--;
			memmove(ips + 2, ips + 1, (size_t)(n - 1) * sizeof(*ips));
			ips[1] = keys[i].caller;
			n++;
		}
		if (ustack_table__add_id(&rec->cuda->native, &key, ips, n, 0, &id))
			return -ENOMEM;
		keys[i].stack = id;
	}
	return 0;
}

/* The launches into m->gpu_activity.launches, sorted by (tgid, tid, ts_ns),
 * each distinct stack folded once (a Python stack's key holds its
 * process). A launch whose stack could not be named counts as not kept. */
static int launches_to_model(struct recording *rec, struct model *m)
{
	struct cuda_state *st = rec->cuda;
	struct model_gpu_activity *a = &m->gpu_activity;
	struct native_names nn = { .rec = rec, .m = m };
	size_t n = st->launches.n, nkeys = 0;
	struct launch_key *keys = NULL, *fp = NULL;
	int32_t *ids = NULL;
	int err = 0;

	free(a->launches.v);
	memset(&a->launches, 0, sizeof(a->launches));
	memset(st->by_kind, 0, sizeof(st->by_kind));
	st->unnamed = 0;
	if (!n)
		return 0;
	keys = malloc(n * sizeof(*keys));
	ids = malloc(n * sizeof(*ids));
	a->launches.v = malloc(n * sizeof(*a->launches.v));
	if (!keys || !ids || !a->launches.v) {
		err = -ENOMEM;
		goto out;
	}
	a->launches.cap = n;
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct launch_key){ st->launches.v[i].kind, st->launches.v[i].tgid, st->launches.v[i].stack,
					       st->launches.v[i].caller };
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++)
		if (!nkeys || cmp_key(&keys[nkeys - 1], &keys[i]))
			keys[nkeys++] = keys[i];
	/* the fp keys as read: the launches still name their stack ids */
	fp = malloc(nkeys * sizeof(*fp));
	if (!fp) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(fp, keys, nkeys * sizeof(*fp));
	err = fp_to_native(rec, fp, nkeys);
	if (!err && st->native.n) {
		nn.names = malloc(st->native.n * sizeof(*nn.names));
		err = nn.names ? ustack_table__each(&st->native, name_native, &nn) : -ENOMEM;
	}
	for (size_t i = 0; i < nkeys && !err; i++) {
		uint64_t entry = keys[i].kind == LAUNCH_FP ? fp[i].stack : keys[i].stack;

		ids[i] = -1;
		if (keys[i].kind == LAUNCH_PY) {
			char *s = py_folded(keys[i].tgid, keys[i].stack, &err);

			ids[i] = s ? model__intern(m, s) : -1;
			if (s && ids[i] < 0)
				err = -ENOMEM;
			free(s);
		} else if (entry < st->native.n) {
			ids[i] = nn.names[entry];
		}
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct cuda_launch *l = &st->launches.v[i];
		struct launch_key k = { l->kind, l->tgid, l->stack, l->caller };
		const struct launch_key *f = bsearch(&k, keys, nkeys, sizeof(*keys), cmp_key);
		int32_t id = ids[f - keys];

		if (id < 0) {
			st->unnamed++;
			continue;
		}
		st->by_kind[l->kind]++;
		a->launches.v[a->launches.n++] = (struct model_gpu_launch){ l->tgid, l->tid, l->ts_ns, id };
	}
	if (!err)
		qsort(a->launches.v, a->launches.n, sizeof(*a->launches.v), cmp_launch);
out:
	stack_report__free(&nn.sr);
	free(nn.names);
	free(keys);
	free(fp);
	free(ids);
	return err;
}

static struct it_cuda_total lookup(int fd, __u32 tgid, __u32 cycle, __u32 counter)
{
	struct it_cuda_key k = { .tgid = tgid, .cycle = cycle, .counter = counter };
	struct it_cuda_total t = {};

	bpf_map_lookup_elem(fd, &k, &t);
	return t;
}

static struct model_cuda_totals totals_of(const struct it_cuda_total t[IT_CUDA_MAX])
{
	return (struct model_cuda_totals){
		.present = true,
		.kernel_launches = t[IT_CUDA_LAUNCH].calls,
		.graph_launches = t[IT_CUDA_GRAPH].calls,
		.memcpy_calls = t[IT_CUDA_MEMCPY].calls,
		.memcpy_bytes = t[IT_CUDA_MEMCPY].sum,
		.sync_calls = t[IT_CUDA_SYNC].calls,
		.sync_wait_ms = t[IT_CUDA_SYNC].sum / 1e6,
	};
}

/* `gpu.cuda` is this concern's: the gpu section's owner (side) leaves it
 * to the writer to put it there. */
static int cuda_collect(struct recording *rec, struct model *m)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.cuda_counts);
	struct model_cuda *cu = &m->cuda;
	struct it_cuda_total all[IT_CUDA_MAX] = {};
	struct map_dump d = { 0 };
	__u64 stats[IT_STAT_MAX];
	uint64_t not_kept, native;
	int err;

	if (!rec->cuda)
		return 0;
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct it_cuda_total t[IT_CUDA_MAX] = {};

		for (__u32 k = 1; k < IT_CUDA_MAX; k++)
			t[k] = lookup(fd, c->pid, c->bpf_cycle, k);
		c->cuda = totals_of(t);
	}
	err = map_dump__read(&d, fd, sizeof(struct it_cuda_key), sizeof(struct it_cuda_total), 0);
	for (size_t i = 0; i < d.n; i++) {
		const struct it_cuda_key *key = map_dump__key(&d, i);
		const struct it_cuda_total *t = map_dump__value(&d, i);

		if (key->counter < IT_CUDA_MAX) {
			all[key->counter].calls += t->calls;
			all[key->counter].sum += t->sum;
		}
	}
	map_dump__free(&d);
	if (err)
		return err;
	if (launches_to_model(rec, m))
		return -ENOMEM;
	native = rec->cuda->by_kind[LAUNCH_FP] + rec->cuda->by_kind[LAUNCH_NATIVE];
	tracer__stats(&rec->tracer, stats);
	not_kept = rec->cuda->launches_not_kept + rec->cuda->unnamed + stats[IT_STAT_CUDA_STACK_LOST];
	if (not_kept && model__add_lost(m, "gpu_launch_stacks", not_kept))
		return -ENOMEM;
	cu->totals = totals_of(all);
	cu->launch_stacks.python = rec->cuda->by_kind[LAUNCH_PY];
	cu->launch_stacks.native = native;
	cu->launch_stacks.not_kept = not_kept;
	cu->launch_stacks.copies = rec->cuda->copies;
	cu->launch_stacks.reused = rec->cuda->reused;
	cu->libraries.n = 0;
	for (int k = 0; k < rec->cuda->nfiles; k++) {
		int32_t name = model__intern(m, rec->cuda->files[k]);

		if (name < 0 || VEC_RESERVE(cu->libraries.v, cu->libraries.cap, cu->libraries.n, 4))
			return -ENOMEM;
		cu->libraries.v[cu->libraries.n++] = name;
	}
	cu->functions_probed = rec->cuda->nprobes;
	if (!rec->cuda->nfiles && !m->snapshot)
		fprintf(stderr, "infertrace: warning: --preset cuda: the target never loaded libcudart or libcuda\n");
	return 0;
}

static void cuda_cleanup(struct recording *rec)
{
	(void)rec;
	if (!rec->cuda)
		return;
	for (int i = 0; i < rec->cuda->nfiles; i++)
		free(rec->cuda->files[i]);
	free(rec->cuda->launches.v);
	ustack_table__free(&rec->cuda->native);
	free(rec->cuda);
	rec->cuda = NULL;
}

const struct concern cuda_concern = {
	.name = "cuda",
	.configure = cuda_configure,
	.attach = cuda_attach,
	.on_event = cuda_on_event,
	.collect = cuda_collect,
	.cleanup = cuda_cleanup,
};
