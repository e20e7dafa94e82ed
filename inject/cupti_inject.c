// SPDX-License-Identifier: BSD-2-Clause
/* The CUPTI injection library (build/libinfertrace-cupti.so). The CUDA
 * driver loads it from CUDA_INJECTION64_PATH at cuInit and calls
 * InitializeInjection; it loads libcupti, turns CUPTI's activity records
 * into include/gpu_channel.h records and writes them to the tracer's unix
 * socket (INFERTRACE_GPU_CHANNEL). It never fails the target: whatever goes
 * wrong, it sends a notice (when it can) and steps aside.
 *
 * Threads: CUPTI calls bufferCompleted from its own worker thread or from
 * the thread that flushes; a flush thread calls cuptiActivityFlushAll every
 * INFERTRACE_GPU_FLUSH_MS and, when sampling, turns the activity kinds on
 * and off (INFERTRACE_GPU_SAMPLE: the windows in docs/side-data.md). Every
 * write to the socket holds send_lock for one batch of whole records, never
 * while calling CUPTI, so the flush thread and
 * CUPTI's worker cannot deadlock. Sends block, but each for at most
 * SEND_TIMEOUT_S (SO_SNDTIMEO): a tracer that stops reading makes the
 * library close the socket and go quiet rather than stall the target. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gpu_channel.h"
#include "cupti_abi.h"
#include "cupti_cbids.h"

#define EXPORT __attribute__((visibility("default")))
#define BUFFER_SIZE (2u << 20) /* CUPTI wants 1-8 MiB */
#define STAGE_SIZE (64u << 10)
#define SEND_TIMEOUT_S 2

static struct {
	pthread_mutex_t send_lock;
	int fd;              /* -1: quiet */
	pid_t pid;           /* the process that connected */
	int active;          /* activity enabled, callbacks registered */
	uint32_t version;
	char path[256];
	size_t dropped;      /* reported so far */
	pthread_t flusher;
	int flusher_on, stop;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	unsigned flush_ms;
	/* sampling, the flush thread's alone but for win_kernels */
	uint32_t sample;     /* IT_GPU_SAMPLE_ENV: 1 full, 0 auto, N fixed */
	uint32_t every;      /* the N in effect */
	unsigned window_ms;
	double kernel_cost_ns;
	int on;              /* the activity kinds are enabled */
	uint64_t win_start, next_on; /* CLOCK_MONOTONIC ns */
	uint64_t win_kernels;        /* kernels converted since win_start (atomic) */
	cuptiGetTimestamp_fn get_timestamp;
	cuptiActivityEnable_fn enable;
	cuptiActivityDisable_fn disable;
	cuptiActivityGetNextRecord_fn next_record;
	cuptiActivityGetNumDroppedRecords_fn num_dropped;
	cuptiActivityFlushAll_fn flush_all;
} g = {
	.send_lock = PTHREAD_MUTEX_INITIALIZER,
	.stop_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
};

static const uint32_t enabled_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

/* ---- the channel ---- */

/* Caller holds send_lock. A failed or timed-out send (the tracer gone or
 * stuck) closes the socket: a record cut in the middle would desynchronize
 * the stream, so nothing is sent after it. */
static void send_locked(const void *buf, size_t n)
{
	const char *p = buf;

	while (n && g.fd >= 0) {
		ssize_t w = send(g.fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(g.fd);
			g.fd = -1;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void chan_send(const void *buf, size_t n)
{
	pthread_mutex_lock(&g.send_lock);
	send_locked(buf, n);
	pthread_mutex_unlock(&g.send_lock);
}

static void hdr(struct it_gpu_hdr *h, enum it_gpu_kind kind, size_t size)
{
	h->kind = (uint16_t)kind;
	h->size = (uint16_t)size;
	h->pid = (uint32_t)getpid();
}

static void send_notice(int fatal, const char *fmt, ...)
{
	struct it_gpu_notice n;
	va_list ap;

	memset(&n, 0, sizeof(n));
	hdr(&n.h, IT_GPU_NOTICE, sizeof(n));
	n.fatal = (uint32_t)fatal;
	va_start(ap, fmt);
	vsnprintf(n.text, sizeof(n.text), fmt, ap);
	va_end(ap);
	chan_send(&n, sizeof(n));
}

static void send_hello(void)
{
	struct it_gpu_hello h;

	memset(&h, 0, sizeof(h));
	hdr(&h.h, IT_GPU_HELLO, sizeof(h));
	h.magic = IT_GPU_MAGIC;
	h.wire_version = IT_GPU_WIRE_VERSION;
	h.cupti_version = g.version;
	h.sample_every = g.sample;
	snprintf(h.cupti_path, sizeof(h.cupti_path), "%s", g.path);
	chan_send(&h, sizeof(h));
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The pair whose CLOCK_MONOTONIC reads lie closest around
 * cuptiGetTimestamp, of a few: a read preempted between the two would be
 * off by up to the preemption. */
static void send_calib(void)
{
	struct it_gpu_calib c;
	uint64_t best = UINT64_MAX;

	memset(&c, 0, sizeof(c));
	hdr(&c.h, IT_GPU_CALIB, sizeof(c));
	for (int i = 0; i < 5; i++) {
		uint64_t before = mono_ns(), after, ts = 0;

		if (g.get_timestamp(&ts) != CUPTI_SUCCESS)
			return;
		after = mono_ns();
		if (after - before < best) {
			best = after - before;
			c.cupti_ns = ts;
			c.mono_ns = before + (after - before) / 2;
		}
	}
	chan_send(&c, sizeof(c));
}

static int connect_channel(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = SEND_TIMEOUT_S };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* ---- activity records → channel records ---- */

static int cbid_wanted(uint32_t kind, uint32_t cbid)
{
#define ONE(id, name) case id:
	if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
		switch (cbid) {
		IT_CUPTI_RUNTIME_CBIDS(ONE)
			return 1;
		}
	} else {
		switch (cbid) {
		IT_CUPTI_DRIVER_CBIDS(ONE)
			return 1;
		}
	}
#undef ONE
	return 0;
}

static uint32_t copy_dir(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return IT_GPU_DIR_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return IT_GPU_DIR_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return IT_GPU_DIR_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return IT_GPU_DIR_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return IT_GPU_DIR_PTOP;
	default:
		return IT_GPU_DIR_OTHER;
	}
}

/* Writes the channel record for r into out (room for one kernel record with
 * the longest name); returns its size, 0 for a record not forwarded. */
static size_t convert(const cupti_activity *r, char *out)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const cupti_kernel *k = (const cupti_kernel *)r;
		struct it_gpu_kernel o;
		size_t len = k->name ? strnlen(k->name, IT_GPU_NAME_MAX) : 0;
		size_t size = offsetof(struct it_gpu_kernel, name) + len;

		memset(&o, 0, sizeof(o));
		hdr(&o.h, IT_GPU_KERNEL, size);
		o.start_ns = k->start;
		o.end_ns = k->end;
		o.device = k->device;
		o.context = k->context;
		o.stream = k->stream;
		o.correlation = k->correlation;
		for (int i = 0; i < 3; i++) {
			o.grid[i] = (uint32_t)k->grid[i];
			o.block[i] = (uint32_t)k->block[i];
		}
		o.name_len = (uint16_t)len;
		memcpy(out, &o, offsetof(struct it_gpu_kernel, name));
		if (len)
			memcpy(out + offsetof(struct it_gpu_kernel, name), k->name, len);
		return size;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		struct it_gpu_copy o;

		memset(&o, 0, sizeof(o));
/* the fields memsets, copies and peer copies share, each at its own offset */
#define COPY_FIELDS(o, m, kind)                                                                    \
	do {                                                                                       \
		hdr(&(o).h, (kind), sizeof(o));                                                    \
		(o).start_ns = (m)->start;                                                         \
		(o).end_ns = (m)->end;                                                             \
		(o).bytes = (m)->bytes;                                                            \
		(o).device = (o).src_device = (o).dst_device = (m)->device;                        \
		(o).context = (m)->context;                                                        \
		(o).stream = (m)->stream;                                                          \
		(o).correlation = (m)->correlation;                                                \
	} while (0)
		if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
			COPY_FIELDS(o, (const cupti_memset *)r, IT_GPU_SET);
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			const cupti_memcpy *m = (const cupti_memcpy *)r;

			COPY_FIELDS(o, m, IT_GPU_COPY);
			o.dir = copy_dir(m->copy_kind);
		} else {
			const cupti_memcpy_p2p *m = (const cupti_memcpy_p2p *)r;

			COPY_FIELDS(o, m, IT_GPU_COPY);
			o.dir = IT_GPU_DIR_PTOP;
			o.src_device = m->src_device;
			o.dst_device = m->dst_device;
		}
#undef COPY_FIELDS
		memcpy(out, &o, sizeof(o));
		return sizeof(o);
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const cupti_api *a = (const cupti_api *)r;
		struct it_gpu_api o;

		if (!cbid_wanted(r->kind, a->cbid))
			return 0;
		memset(&o, 0, sizeof(o));
		hdr(&o.h, IT_GPU_API, sizeof(o));
		o.start_ns = a->start;
		o.end_ns = a->end;
		o.tid = a->thread;
		o.correlation = a->correlation;
		o.cbid = a->cbid;
		o.domain = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? IT_GPU_API_RUNTIME : IT_GPU_API_DRIVER;
		memcpy(out, &o, sizeof(o));
		return sizeof(o);
	}
	default:
		return 0;
	}
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	char *stage = malloc(STAGE_SIZE);
	cupti_activity *r = NULL;
	size_t used = 0, dropped = 0;

	(void)size;
	while (stage && g.fd >= 0 && g.pid == getpid() && g.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
		if (used + sizeof(struct it_gpu_kernel) + IT_GPU_NAME_MAX > STAGE_SIZE) {
			chan_send(stage, used);
			used = 0;
		}
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_fetch_add(&g.win_kernels, 1, __ATOMIC_RELAXED);
		used += convert(r, stage + used);
	}
	if (used)
		chan_send(stage, used);
	if (g.num_dropped && g.num_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		struct it_gpu_dropped d;

		memset(&d, 0, sizeof(d));
		hdr(&d.h, IT_GPU_DROPPED, sizeof(d));
		d.records = dropped;
		chan_send(&d, sizeof(d));
	}
	free(stage);
	free(buffer);
}

/* ---- sampling windows ---- */

static void send_window(int on, uint64_t mono, uint64_t kernels, uint64_t counted_from)
{
	struct it_gpu_window w;

	memset(&w, 0, sizeof(w));
	hdr(&w.h, IT_GPU_WINDOW, sizeof(w));
	w.mono_ns = mono;
	w.on = (uint32_t)on;
	w.every = g.every;
	w.kernels = kernels;
	w.counted_from_ns = counted_from;
	chan_send(&w, sizeof(w));
}

/* auto: the N that keeps the tracing cost near IT_GPU_COST_TARGET_PCT of a
 * launch-bound thread, from the kernels a window of win_ns recorded. With
 * activity on, each kernel took the host c more: the share f = rate x c of
 * the traced time was tracing, so untraced time grew by f / (1 - f); one
 * window in N spreads that over N. */
static uint32_t every_for(uint64_t kernels, uint64_t win_ns)
{
	double f = win_ns ? (double)kernels * g.kernel_cost_ns / (double)win_ns : 0;
	double cost = f >= 0.95 ? 19.0 : f / (1 - f);
	double n = cost * 100.0 / IT_GPU_COST_TARGET_PCT;

	return n <= 1 ? 1 : n >= IT_GPU_SAMPLE_MAX ? IT_GPU_SAMPLE_MAX : (uint32_t)n + (n > (uint32_t)n);
}

/* Turns the activity on or off. Not 0: CUPTI's error when it refused (another
 * client took it); the kinds then stay off. */
static int set_kinds(int on)
{
	size_t n = sizeof(enabled_kinds) / sizeof(enabled_kinds[0]);

	for (size_t i = 0; i < n; i++) {
		int err;

		if (!on) {
			g.disable(enabled_kinds[i]);
		} else if ((err = g.enable(enabled_kinds[i]))) {
			for (size_t k = 0; k < i; k++)
				g.disable(enabled_kinds[k]);
			return err;
		}
	}
	return 0;
}

static uint64_t window_ns(void)
{
	return (uint64_t)g.window_ms * 1000000u;
}

/* One step of the flush thread when sampling: a window that has lasted
 * window_ms closes (or, at N = 1, goes on); an off period that is over
 * opens the next window. */
static void sample_step(void)
{
	uint64_t now = mono_ns(), win_ns = window_ns();

	if (g.on && now >= g.win_start + win_ns) {
		uint64_t kernels;

		g.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* this window's kernels, counted */
		kernels = __atomic_exchange_n(&g.win_kernels, 0, __ATOMIC_RELAXED);
		g.every = g.sample ? g.sample : every_for(kernels, now - g.win_start);
		if (g.every <= 1) {
			g.win_start = now;
			return;
		}
		/* the close is stamped before activity goes off, so every op
		 * launched inside [open, close] is recorded; the second flush
		 * counts the ops launched since the first. The off period counts
		 * from the close the tracer is told of: N - 1 whole windows off */
		now = mono_ns();
		set_kinds(0);
		g.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		kernels += __atomic_exchange_n(&g.win_kernels, 0, __ATOMIC_RELAXED);
		send_window(0, now, kernels, g.win_start);
		g.on = 0;
		g.next_on = now + (g.every - 1) * win_ns;
	} else if (!g.on && g.next_on && now >= g.next_on) {
		/* the count starts before activity comes on (records of the last
		 * window's late kernels are not this one's); the open is stamped
		 * after, so the window the tracer is told of is all recorded */
		__atomic_store_n(&g.win_kernels, 0, __ATOMIC_RELAXED);
		if (set_kinds(1)) {
			g.next_on = 0;
			send_notice(1, "CUPTI refused activity tracing when a sampling window opened (another "
				    "CUPTI client?): GPU kernel timing off from here");
			return;
		}
		g.on = 1;
		g.win_start = mono_ns();
		send_window(1, g.win_start, 0, 0);
	}
}

/* ---- flushing ---- */

static void *flusher(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&g.stop_lock);
	while (!g.stop) {
		uint64_t wait_ns = (uint64_t)g.flush_ms * 1000000u, now = mono_ns();

		/* a sampling edge due sooner than the next flush is met on time */
		if (g.sample != 1) {
			uint64_t edge = g.on ? g.win_start + window_ns() : g.next_on;

			if (edge && edge > now && edge - now < wait_ns)
				wait_ns = edge - now;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(wait_ns / 1000000000u);
		until.tv_nsec += (long)(wait_ns % 1000000000u);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!g.stop && pthread_cond_timedwait(&g.stop_cond, &g.stop_lock, &until) != ETIMEDOUT)
			;
		if (g.stop)
			break;
		pthread_mutex_unlock(&g.stop_lock);
		g.flush_all(0);
		send_calib();
		if (g.sample != 1)
			sample_step();
		pthread_mutex_lock(&g.stop_lock);
	}
	pthread_mutex_unlock(&g.stop_lock);
	return NULL;
}

static void at_exit(void)
{
	struct it_gpu_hdr bye;

	if (!g.active || g.pid != getpid())
		return;
	if (g.flusher_on) {
		pthread_mutex_lock(&g.stop_lock);
		g.stop = 1;
		pthread_cond_signal(&g.stop_cond);
		pthread_mutex_unlock(&g.stop_lock);
		pthread_join(g.flusher, NULL);
		g.flusher_on = 0;
	}
	g.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	send_calib();
	hdr(&bye, IT_GPU_BYE, sizeof(bye));
	chan_send(&bye, sizeof(bye));
	g.active = 0;
}

/* fork: the child has no flush thread, and CUPTI's state in a forked child
 * is not to be trusted; the child closes its copy of the socket and stays
 * quiet (its records would carry the parent's timeline anyway). */
static void fork_prepare(void)
{
	pthread_mutex_lock(&g.send_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&g.send_lock);
}

static void fork_child(void)
{
	pthread_mutex_init(&g.send_lock, NULL);
	if (g.fd >= 0)
		close(g.fd);
	g.fd = -1;
	g.flusher_on = 0;
}

/* ---- finding libcupti ---- */

struct looked {
	char where[200];
	size_t len;
};

static void looked_add(struct looked *l, const char *what)
{
	int n = snprintf(l->where + l->len, sizeof(l->where) - l->len, "%s%s", l->len ? ", " : "", what);

	if (n > 0)
		l->len = l->len + (size_t)n < sizeof(l->where) ? l->len + (size_t)n : sizeof(l->where) - 1;
}

static void *open_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct link_map *m = NULL;

	if (h && dlinfo(h, RTLD_DI_LINKMAP, &m) == 0 && m && m->l_name && m->l_name[0])
		snprintf(g.path, sizeof(g.path), "%s", m->l_name);
	else if (h)
		snprintf(g.path, sizeof(g.path), "%s", path);
	return h;
}

/* the first libcupti.so* matching pattern, loaded */
static void *open_glob(const char *pattern, struct looked *l)
{
	glob_t gl;
	void *h = NULL;

	looked_add(l, pattern);
	if (glob(pattern, 0, NULL, &gl))
		return NULL;
	for (size_t i = 0; i < gl.gl_pathc && !h; i++)
		h = open_lib(gl.gl_pathv[i]);
	globfree(&gl);
	return h;
}

/* (2) a libcupti the process has mapped, (3) one beside the CUDA libraries
 * it has mapped: pip wheels keep it in site-packages/nvidia/cuda_cupti/lib
 * (CUDA 12) or nvidia/cu13/lib (CUDA 13); a toolkit in lib64 or
 * extras/CUPTI/lib64 next to it. */
static void *open_from_maps(struct looked *l)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096], pat[4200], done[8][512];
	int ndone = 0;
	void *h = NULL;

	if (!f)
		return NULL;
	looked_add(l, "mapped libraries");
	while (!h && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *nv, *base;
		int seen = 0;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = '\0';
		base = strrchr(path, '/') + 1;
		if (!strncmp(base, "libcupti.so", 11)) {
			h = open_lib(path);
			break;
		}
		if (strncmp(base, "libcuda", 7) && strncmp(base, "libcublas", 9) && strncmp(base, "libnv", 4))
			continue;
		for (int i = 0; i < ndone; i++)
			seen |= !strncmp(done[i], path, (size_t)(base - path));
		if (seen || base - path >= (long)sizeof(done[0]))
			continue;
		if (ndone < 8) {
			memcpy(done[ndone], path, (size_t)(base - path));
			done[ndone++][base - path] = '\0';
		}
		nv = strstr(path, "-packages/nvidia/");
		if (nv) {
			nv[strlen("-packages/nvidia/")] = '\0';
			snprintf(pat, sizeof(pat), "%scuda_cupti/lib/libcupti.so*", path);
			if ((h = open_glob(pat, l)))
				break;
			snprintf(pat, sizeof(pat), "%scu13/lib/libcupti.so*", path);
			if ((h = open_glob(pat, l)))
				break;
			snprintf(pat, sizeof(pat), "%s*/lib/libcupti.so*", path);
			h = open_glob(pat, l);
			continue;
		}
		base[0] = '\0';
		snprintf(pat, sizeof(pat), "%slibcupti.so*", path);
		if ((h = open_glob(pat, l)))
			break;
		snprintf(pat, sizeof(pat), "%s../extras/CUPTI/lib64/libcupti.so*", path);
		h = open_glob(pat, l);
	}
	fclose(f);
	return h;
}

static void *find_cupti(struct looked *l)
{
	const char *env = getenv(IT_GPU_CUPTI_LIB_ENV), *home = getenv("CUDA_HOME");
	char pat[4200];
	void *h;

	if (env && *env) {
		/* told which: no other is tried */
		looked_add(l, env);
		return open_lib(env);
	}
	if ((h = open_from_maps(l)))
		return h;
	if (home && *home) {
		snprintf(pat, sizeof(pat), "%s/extras/CUPTI/lib64/libcupti.so*", home);
		if ((h = open_glob(pat, l)))
			return h;
		snprintf(pat, sizeof(pat), "%s/lib64/libcupti.so*", home);
		if ((h = open_glob(pat, l)))
			return h;
	}
	if ((h = open_glob("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so*", l)) ||
	    (h = open_glob("/usr/local/cuda/lib64/libcupti.so*", l)))
		return h;
	looked_add(l, "the loader's path");
	if ((h = open_lib("libcupti.so")))
		return h;
	if ((h = open_lib("libcupti.so.13")))
		return h;
	return open_lib("libcupti.so.12");
}

/* ---- set-up ---- */

/* IT_GPU_SAMPLE_ENV: 1 full (unset or junk: the tracer checked what it
 * set), 0 auto, N fixed */
static uint32_t sample_mode(void)
{
	const char *s = getenv(IT_GPU_SAMPLE_ENV);
	uint32_t every;

	return s && !it_gpu_sample_parse(s, &every) ? every : 1;
}

static unsigned window_ms(void)
{
	const char *s = getenv(IT_GPU_WINDOW_MS_ENV);
	long v = s ? atol(s) : 0;

	return v > 0 && v < 3600000 ? (unsigned)v : IT_GPU_WINDOW_MS_DEFAULT;
}

static double kernel_cost_ns(void)
{
	const char *s = getenv(IT_GPU_KERNEL_COST_ENV);
	double v = s ? atof(s) : 0;

	return v > 0 && v < 1e9 ? v : IT_GPU_KERNEL_COST_NS;
}

static unsigned flush_ms(void)
{
	const char *s = getenv(IT_GPU_FLUSH_MS_ENV);
	long v = s ? atol(s) : 0;

	return v > 0 && v < 3600000 ? (unsigned)v : 200;
}

#define SYM(lib, name) ((name##_fn)dlsym(lib, #name))

EXPORT int InitializeInjection(void)
{
	const char *chan = getenv(IT_GPU_CHANNEL_ENV);
	struct looked looked = { .len = 0 };
	cuptiGetVersion_fn get_version;
	cuptiSetThreadIdType_fn set_tid_type;
	cuptiActivityRegisterCallbacks_fn register_callbacks;
	void *lib;
	int err;

	if (!chan || !*chan || g.fd >= 0)
		return 1;
	g.fd = connect_channel(chan);
	if (g.fd < 0)
		return 1;
	g.pid = getpid();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	lib = find_cupti(&looked);
	if (!lib) {
		send_hello();
		send_notice(1, "libcupti not found (looked in %s): GPU kernel timing off", looked.where);
		return 1;
	}
	get_version = SYM(lib, cuptiGetVersion);
	set_tid_type = SYM(lib, cuptiSetThreadIdType);
	register_callbacks = SYM(lib, cuptiActivityRegisterCallbacks);
	g.get_timestamp = SYM(lib, cuptiGetTimestamp);
	g.enable = SYM(lib, cuptiActivityEnable);
	g.disable = SYM(lib, cuptiActivityDisable);
	g.next_record = SYM(lib, cuptiActivityGetNextRecord);
	g.num_dropped = SYM(lib, cuptiActivityGetNumDroppedRecords);
	g.flush_all = SYM(lib, cuptiActivityFlushAll);
	g.sample = sample_mode();
	g.every = g.sample ? g.sample : 1;
	g.window_ms = window_ms();
	g.kernel_cost_ns = kernel_cost_ns();
	if (!get_version || !set_tid_type || !register_callbacks || !g.get_timestamp || !g.enable ||
	    !g.disable || !g.next_record || !g.flush_all) {
		send_hello();
		send_notice(1, "%s lacks CUPTI's activity API: GPU kernel timing off", g.path);
		return 1;
	}
	if (get_version(&g.version) != CUPTI_SUCCESS)
		g.version = 0;
	send_hello();
	if (!IT_CUPTI_VERSION_OK(g.version)) {
		send_notice(1, "CUPTI API version %u is not one whose record layouts infertrace knows "
			    "(" IT_CUPTI_VERSIONS "): GPU kernel timing off", g.version);
		return 1;
	}
	send_calib();
	set_tid_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	err = register_callbacks(buffer_requested, buffer_completed);
	if (!err)
		err = set_kinds(1);
	if (err) {
		send_notice(1, "CUPTI refused activity tracing (error %d): the target runs its own CUPTI "
			    "client (torch.profiler, Nsight); GPU kernel timing off", err);
		return 1;
	}
	g.active = 1;
	g.on = 1;
	g.win_start = mono_ns();
	if (g.sample != 1)
		send_window(1, g.win_start, 0, 0);
	g.flush_ms = flush_ms();
	{
		pthread_condattr_t ca;
		pthread_attr_t ta;
		sigset_t all, old;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&g.stop_cond, &ca);
		pthread_condattr_destroy(&ca);
		pthread_attr_init(&ta);
		pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_JOINABLE);
		/* the target's signals are not ours to take */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		g.flusher_on = !pthread_create(&g.flusher, &ta, flusher, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&ta);
	}
	atexit(at_exit);
	return 1;
}
