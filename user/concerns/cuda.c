// SPDX-License-Identifier: BSD-2-Clause
/* CUDA concern (--preset cuda): places bpf/cuda.bpf.c's generic uprobe and
 * uretprobe on the CUDA runtime (libcudart) and driver (libcuda) functions
 * that launch kernels, copy memory and wait for the GPU: at attach in the
 * libraries the target loads at start, later in those it maps (dlopen).
 * Writes cycles[i].cuda {kernel_launches, graph_launches, memcpy_calls, memcpy_bytes,
 * sync_calls, sync_wait_ms} and gpu.cuda (totals, libraries probed). The
 * preset also makes the synchronizations a phase, `gpu_sync` (presets.c),
 * so the scheduler concern splits that wait into on- and off-CPU time.
 * Launches by threads running Python arrive with their Python stack
 * (IT_EV_CUDA_LAUNCH): kept, and given to the model as
 * gpu_activity.launches, each stack folded root first as the samples'
 * Python frames are, for the GPU join (analysis/gpu_join.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "uprobe_links.h"
#include "probe_spec.h"
#include "python.h"
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

/* A launch's Python stack as it arrived: the stack is resolved at collect. */
struct cuda_launch {
	pid_t tgid, tid;
	uint64_t ts_ns;
	uint64_t pystack;
};

struct cuda_state {
	char *files[MAX_FILES];   /* libraries probed */
	int nfiles;
	int nprobes;              /* functions probed */
	VEC_OF(struct cuda_launch) launches;
	uint64_t launches_not_kept; /* --max-memory reached */
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

static void cuda_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;

	if (!rec->cuda)
		return;
	/* a target mapped code: a CUDA library loaded with dlopen */
	if (h->type == IT_EV_MMAP && rec->cuda->nfiles < CUDA_LIBS)
		proc_exec_files(h->tgid, place_if_cuda, rec);
	if (h->type == IT_EV_CUDA_LAUNCH && size >= sizeof(struct it_cuda_launch_event)) {
		const struct it_cuda_launch_event *e = data;
		struct cuda_state *st = rec->cuda;

		if (!recording__may_hold(rec) || VEC_RESERVE(st->launches.v, st->launches.cap, st->launches.n, 1024)) {
			st->launches_not_kept++;
			return;
		}
		st->launches.v[st->launches.n++] = (struct cuda_launch){ (pid_t)e->hdr.tgid, (pid_t)e->hdr.tid,
									 e->hdr.ts_ns, e->pystack };
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
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

/* The launches into m->gpu_activity.launches, sorted by (tgid, tid, ts_ns),
 * each distinct Python stack folded once (a stack's key holds its process). */
static int launches_to_model(const struct cuda_state *st, struct model *m)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	size_t n = st->launches.n, nkeys = 0;
	uint64_t *keys = NULL;
	int32_t *ids = NULL;
	int err = 0;

	free(a->launches.v);
	memset(&a->launches, 0, sizeof(a->launches));
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
		keys[i] = st->launches.v[i].pystack;
	qsort(keys, n, sizeof(*keys), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!nkeys || keys[nkeys - 1] != keys[i])
			keys[nkeys++] = keys[i];
	for (size_t i = 0; i < nkeys; i++)
		ids[i] = -2; /* not folded yet */
	for (size_t i = 0; i < n && !err; i++) {
		const struct cuda_launch *l = &st->launches.v[i];
		const uint64_t *k = bsearch(&l->pystack, keys, nkeys, sizeof(*keys), cmp_u64);
		int32_t *id = &ids[k - keys];

		if (*id == -2) {
			char *s = py_folded(l->tgid, l->pystack, &err);

			*id = s ? model__intern(m, s) : -1;
			if (s && *id < 0)
				err = -ENOMEM;
			free(s);
		}
		if (*id >= 0)
			a->launches.v[a->launches.n++] = (struct model_gpu_launch){ l->tgid, l->tid, l->ts_ns, *id };
	}
	if (!err)
		qsort(a->launches.v, a->launches.n, sizeof(*a->launches.v), cmp_launch);
out:
	free(keys);
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

static json_t *totals_json(const struct it_cuda_total t[IT_CUDA_MAX])
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:f}",
			 "kernel_launches", (json_int_t)t[IT_CUDA_LAUNCH].calls,
			 "graph_launches", (json_int_t)t[IT_CUDA_GRAPH].calls,
			 "memcpy_calls", (json_int_t)t[IT_CUDA_MEMCPY].calls,
			 "memcpy_bytes", (json_int_t)t[IT_CUDA_MEMCPY].sum,
			 "sync_calls", (json_int_t)t[IT_CUDA_SYNC].calls,
			 "sync_wait_ms", t[IT_CUDA_SYNC].sum / 1e6);
}

/* `gpu.cuda` is this concern's: the gpu section's owner (side) leaves it
 * to the writer to put it there. */
static int cuda_collect(struct recording *rec, struct model *m)
{
	int fd = bpf_map__fd(rec->tracer.skel->maps.cuda_counts);
	json_t *o, *libs;
	struct it_cuda_total all[IT_CUDA_MAX] = {};
	struct it_cuda_key key, next, *prev = NULL;

	if (!rec->cuda)
		return 0;
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct it_cuda_total t[IT_CUDA_MAX] = {};

		for (__u32 k = 1; k < IT_CUDA_MAX; k++)
			t[k] = lookup(fd, c->pid, c->bpf_cycle, k);
		model__cycle_detail(c, "cuda", totals_json(t));
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct it_cuda_total t;

		key = next;
		prev = &key;
		if (key.counter < IT_CUDA_MAX && !bpf_map_lookup_elem(fd, &key, &t)) {
			all[key.counter].calls += t.calls;
			all[key.counter].sum += t.sum;
		}
	}
	if (launches_to_model(rec->cuda, m))
		return -ENOMEM;
	if (rec->cuda->launches_not_kept && model__add_lost(m, "gpu_launch_stacks", rec->cuda->launches_not_kept))
		return -ENOMEM;
	o = totals_json(all);
	libs = json_array();
	for (int k = 0; k < rec->cuda->nfiles; k++)
		json_array_append_new(libs, json_string(rec->cuda->files[k]));
	json_object_set_new(o, "libraries", libs);
	json_object_set_new(o, "functions_probed", json_integer(rec->cuda->nprobes));
	if (!rec->cuda->nfiles && !m->snapshot)
		fprintf(stderr, "infertrace: warning: --preset cuda: the target never loaded libcudart or libcuda\n");
	json_decref(m->cuda);
	m->cuda = o;
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
