// SPDX-License-Identifier: BSD-2-Clause
/* The reader of the GPU activity channel (gpu_reader.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gpu_reader.h"
#include "model.h"
#include "target.h"
#include "vec.h"

#define MAX_CONNS 1024

struct conn {
	int fd;
	pid_t pid;          /* SO_PEERCRED: the sender's pid in the tracer's namespace */
	bool hello, bye;
	uint8_t *buf;
	size_t len;
};

struct gpu_reader {
	char dir[40], path[64];
	int listen_fd, wake[2];
	pthread_t thread;
	bool started, stopped;
	pthread_mutex_t lock;
	bool may_hold;
	VEC_OF(struct conn) conns;   /* thread-owned, but counted under lock */
	/* under lock */
	VEC_OF(struct model_gpu_process) procs;
	VEC_OF(struct model_gpu_op) ops;     /* mangled: index in names */
	VEC_OF(struct model_gpu_api) api;
	VEC_OF(struct model_gpu_calib) calib;
	VEC_OF(struct model_gpu_window) windows; /* mono_ns times, as the library read them */
	VEC_OF(char *) names;
	int32_t *name_slots;         /* open addressing over names; -1 empty */
	size_t name_cap;
	char notice[240];
	struct gpu_reader_counts counts;
	size_t open_conns, done_conns;
};

/* ---- kernel names, interned ---- */

static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static int32_t intern(struct gpu_reader *r, const char *s, size_t n)
{
	size_t mask, i;

	if ((r->names.n + 1) * 2 > r->name_cap) {
		size_t cap = r->name_cap ? r->name_cap * 2 : 256;
		int32_t *slots = malloc(cap * sizeof(*slots));

		if (!slots)
			return -1;
		for (size_t k = 0; k < cap; k++)
			slots[k] = -1;
		for (size_t k = 0; k < r->names.n; k++) {
			i = name_hash(r->names.v[k], strlen(r->names.v[k])) & (cap - 1);
			while (slots[i] >= 0)
				i = (i + 1) & (cap - 1);
			slots[i] = (int32_t)k;
		}
		free(r->name_slots);
		r->name_slots = slots;
		r->name_cap = cap;
	}
	mask = r->name_cap - 1;
	for (i = name_hash(s, n) & mask; r->name_slots[i] >= 0; i = (i + 1) & mask) {
		const char *o = r->names.v[r->name_slots[i]];

		if (!strncmp(o, s, n) && !o[n])
			return r->name_slots[i];
	}
	if (VEC_RESERVE(r->names.v, r->names.cap, r->names.n, 64))
		return -1;
	if (!(r->names.v[r->names.n] = strndup(s, n)))
		return -1;
	r->name_slots[i] = (int32_t)r->names.n;
	return (int32_t)r->names.n++;
}

/* ---- records ---- */

static struct model_gpu_process *process_of(struct gpu_reader *r, pid_t pid)
{
	for (size_t i = 0; i < r->procs.n; i++)
		if (r->procs.v[i].pid == pid)
			return &r->procs.v[i];
	return NULL;
}

static void notice(struct gpu_reader *r, pid_t pid, const char *text)
{
	if (!r->notice[0] || strcmp(r->notice, text)) {
		/* once per distinct line: every process of the target says the same */
		if (strcmp(r->notice, text))
			fprintf(stderr, "infertrace: GPU kernel timing (PID %d): %s\n", pid, text);
		snprintf(r->notice, sizeof(r->notice), "%s", text);
	}
}

static const size_t kind_size[] = {
	[IT_GPU_HELLO] = sizeof(struct it_gpu_hello),
	[IT_GPU_CALIB] = sizeof(struct it_gpu_calib),
	[IT_GPU_KERNEL] = offsetof(struct it_gpu_kernel, name),
	[IT_GPU_COPY] = sizeof(struct it_gpu_copy),
	[IT_GPU_SET] = sizeof(struct it_gpu_copy),
	[IT_GPU_API] = sizeof(struct it_gpu_api),
	[IT_GPU_DROPPED] = sizeof(struct it_gpu_dropped),
	[IT_GPU_NOTICE] = sizeof(struct it_gpu_notice),
	[IT_GPU_BYE] = sizeof(struct it_gpu_hdr),
	[IT_GPU_WINDOW] = sizeof(struct it_gpu_window),
};

/* One whole record of c (size bytes at p, its header checked). false: the
 * connection is malformed and is dropped. Called under lock. */
static bool on_record(struct gpu_reader *r, struct conn *c, const uint8_t *p, size_t size)
{
	struct it_gpu_hdr h;
	bool keep = r->may_hold;

	memcpy(&h, p, sizeof(h));
	if (h.kind < sizeof(kind_size) / sizeof(kind_size[0]) && kind_size[h.kind] && size < kind_size[h.kind])
		return false;
	if (!c->hello && h.kind != IT_GPU_HELLO)
		return false;
	r->counts.records++;
	switch (h.kind) {
	case IT_GPU_HELLO: {
		struct it_gpu_hello m;
		struct model_gpu_process *pr;

		memcpy(&m, p, sizeof(m));
		if (c->hello || m.magic != IT_GPU_MAGIC || m.wire_version != IT_GPU_WIRE_VERSION)
			return false;
		c->hello = true;
		if (!(pr = process_of(r, c->pid))) {
			if (VEC_RESERVE(r->procs.v, r->procs.cap, r->procs.n, 8))
				return true;
			pr = &r->procs.v[r->procs.n++];
			*pr = (struct model_gpu_process){ .pid = c->pid };
		}
		pr->cupti_version = m.cupti_version;
		memcpy(pr->cupti_path, m.cupti_path, sizeof(pr->cupti_path) - 1);
		return true;
	}
	case IT_GPU_CALIB: {
		struct it_gpu_calib m;

		memcpy(&m, p, sizeof(m));
		/* always kept: two per process, and the join needs them */
		if (!VEC_RESERVE(r->calib.v, r->calib.cap, r->calib.n, 16))
			r->calib.v[r->calib.n++] = (struct model_gpu_calib){ c->pid, m.cupti_ns, m.mono_ns };
		return true;
	}
	case IT_GPU_KERNEL:
	case IT_GPU_COPY:
	case IT_GPU_SET: {
		struct model_gpu_op op = { .tgid = c->pid, .name = -1, .mangled = -1, .cycle = -1, .launch_stack = -1 };

		if (h.kind == IT_GPU_KERNEL) {
			struct it_gpu_kernel k;

			memcpy(&k, p, offsetof(struct it_gpu_kernel, name));
			if (k.name_len > size - offsetof(struct it_gpu_kernel, name) || k.name_len > IT_GPU_NAME_MAX)
				return false;
			op.what = MODEL_GPU_KERNEL;
			op.device = k.device, op.stream = k.stream, op.correlation = k.correlation;
			op.cupti_start_ns = k.start_ns, op.cupti_end_ns = k.end_ns;
			if (keep && k.name_len)
				op.mangled = intern(r, (const char *)p + offsetof(struct it_gpu_kernel, name), k.name_len);
		} else {
			struct it_gpu_copy k;

			memcpy(&k, p, sizeof(k));
			op.what = h.kind == IT_GPU_COPY ? MODEL_GPU_COPY : MODEL_GPU_SET;
			op.dir = h.kind == IT_GPU_COPY && k.dir < IT_GPU_DIR_MAX ? (uint8_t)k.dir : IT_GPU_DIR_OTHER;
			op.device = k.device, op.stream = k.stream, op.correlation = k.correlation;
			op.cupti_start_ns = k.start_ns, op.cupti_end_ns = k.end_ns, op.bytes = k.bytes;
		}
		if (op.cupti_end_ns < op.cupti_start_ns)
			op.cupti_end_ns = op.cupti_start_ns;
		if (!keep || VEC_RESERVE(r->ops.v, r->ops.cap, r->ops.n, 1024))
			r->counts.dropped_budget++;
		else
			r->ops.v[r->ops.n++] = op;
		return true;
	}
	case IT_GPU_API: {
		struct it_gpu_api m;

		memcpy(&m, p, sizeof(m));
		if (!keep || VEC_RESERVE(r->api.v, r->api.cap, r->api.n, 1024))
			r->counts.dropped_budget++;
		else
			r->api.v[r->api.n++] = (struct model_gpu_api){ .pid = c->pid, .tid = (pid_t)m.tid,
								      .correlation = m.correlation, .cbid = m.cbid,
								      .domain = m.domain, .start_ns = m.start_ns,
								      .end_ns = m.end_ns < m.start_ns ? m.start_ns : m.end_ns };
		return true;
	}
	case IT_GPU_WINDOW: {
		struct it_gpu_window m;
		struct model_gpu_window *w = NULL;

		memcpy(&m, p, sizeof(m));
		for (size_t i = r->windows.n; i-- > 0 && !w;)
			if (r->windows.v[i].pid == c->pid)
				w = &r->windows.v[i];
		if (m.on) {
			/* always kept (one a second at most): the join needs them */
			if (w && !w->end_ns)
				w->end_ns = m.mono_ns; /* a close never sent */
			if (!VEC_RESERVE(r->windows.v, r->windows.cap, r->windows.n, 16))
				r->windows.v[r->windows.n++] = (struct model_gpu_window){
					.pid = c->pid, .start_ns = m.mono_ns, .every = m.every ? m.every : 1 };
		} else if (w && !w->end_ns && m.mono_ns >= w->start_ns) {
			w->end_ns = m.mono_ns;
			w->every = m.every ? m.every : 1;
		}
		return true;
	}
	case IT_GPU_DROPPED: {
		struct it_gpu_dropped m;

		memcpy(&m, p, sizeof(m));
		r->counts.cupti_dropped += m.records;
		return true;
	}
	case IT_GPU_NOTICE: {
		struct it_gpu_notice m;

		memcpy(&m, p, sizeof(m));
		m.text[sizeof(m.text) - 1] = 0;
		for (char *s = m.text; *s; s++)
			if (*s == '\n' || *s == '\r' || (unsigned char)*s < 0x20)
				*s = ' ';
		notice(r, c->pid, m.text);
		return true;
	}
	case IT_GPU_BYE: {
		struct model_gpu_process *pr = process_of(r, c->pid);

		if (pr)
			pr->said_bye = true;
		r->counts.byes++;
		if (!c->bye) {
			c->bye = true;
			r->done_conns++;
		}
		return true;
	}
	default:
		return true; /* a kind this tracer does not know: skipped */
	}
}

/* Parses what c holds; false: malformed. Called under lock. */
static bool parse(struct gpu_reader *r, struct conn *c)
{
	size_t off = 0;

	while (c->len - off >= sizeof(struct it_gpu_hdr)) {
		struct it_gpu_hdr h;

		memcpy(&h, c->buf + off, sizeof(h));
		if (h.size < sizeof(h))
			return false;
		if (c->len - off < h.size)
			break;
		if (!on_record(r, c, c->buf + off, h.size))
			return false;
		off += h.size;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return true;
}

static void conn_close(struct gpu_reader *r, size_t i, bool bad)
{
	struct conn *c = &r->conns.v[i];

	pthread_mutex_lock(&r->lock);
	if (bad)
		r->counts.bad_connections++;
	if (!c->bye)
		r->done_conns++;
	pthread_mutex_unlock(&r->lock);
	close(c->fd);
	free(c->buf);
	r->conns.v[i] = r->conns.v[--r->conns.n];
}

static void conn_accept(struct gpu_reader *r)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	if (r->conns.n >= MAX_CONNS || VEC_RESERVE(r->conns.v, r->conns.cap, r->conns.n, 8) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(fd);
		return;
	}
	c = &r->conns.v[r->conns.n++];
	*c = (struct conn){ .fd = fd, .pid = cred.pid };
	if (!(c->buf = malloc(GPU_READER_RECORD_MAX))) {
		close(fd);
		r->conns.n--;
		return;
	}
	pthread_mutex_lock(&r->lock);
	r->counts.connections++;
	r->open_conns++;
	pthread_mutex_unlock(&r->lock);
}

/* Reads what c has; false: it ended or is malformed (*bad). */
static bool conn_read(struct gpu_reader *r, struct conn *c, bool *bad)
{
	for (;;) {
		ssize_t n = read(c->fd, c->buf + c->len, GPU_READER_RECORD_MAX - c->len);
		bool ok;

		if (n == 0) {
			*bad = c->len > 0; /* it ended inside a record: truncated */
			return false;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->len += (size_t)n;
		pthread_mutex_lock(&r->lock);
		ok = parse(r, c);
		pthread_mutex_unlock(&r->lock);
		/* a whole buffer that holds no whole record: its size field
		 * says more than GPU_READER_RECORD_MAX */
		if (!ok || c->len == GPU_READER_RECORD_MAX) {
			*bad = true;
			return false;
		}
	}
}

static void *reader_run(void *arg)
{
	struct gpu_reader *r = arg;
	struct pollfd *pfd = NULL;
	size_t cap = 0;

	for (;;) {
		size_t n = r->conns.n + 2;

		if (VEC_RESERVE(pfd, cap, n - 1, 8))
			break;
		pfd[0] = (struct pollfd){ .fd = r->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = r->listen_fd, .events = POLLIN };
		for (size_t i = 0; i < r->conns.n; i++)
			pfd[i + 2] = (struct pollfd){ .fd = r->conns.v[i].fd, .events = POLLIN };
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* connections first: what is pending is read before a stop */
		for (size_t i = n - 2; i-- > 0;) {
			bool bad = false;

			if (pfd[i + 2].revents && !conn_read(r, &r->conns.v[i], &bad))
				conn_close(r, i, bad);
		}
		if (pfd[1].revents & POLLIN)
			conn_accept(r);
		if (pfd[0].revents)
			break;
	}
	free(pfd);
	/* what is already here is read: connections not yet accepted, bytes
	 * not yet read */
	for (size_t before = SIZE_MAX; r->conns.n != before;) {
		before = r->conns.n;
		conn_accept(r);
	}
	for (size_t i = r->conns.n; i-- > 0;) {
		bool bad = false;

		conn_read(r, &r->conns.v[i], &bad);
		conn_close(r, i, bad);
	}
	return NULL;
}

int gpu_reader__open(struct gpu_reader **out, const struct run_as *as)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gpu_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->listen_fd = r->wake[0] = r->wake[1] = -1;
	r->may_hold = true;
	pthread_mutex_init(&r->lock, NULL);
	snprintf(r->dir, sizeof(r->dir), "/tmp/infertrace-gpu.XXXXXX");
	if (!mkdtemp(r->dir)) {
		r->dir[0] = 0;
		err = -errno;
		goto fail;
	}
	snprintf(r->path, sizeof(r->path), "%s/channel", r->dir);
	memcpy(sa.sun_path, r->path, strlen(r->path) + 1); /* 35 bytes: fits */
	r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(r->path, 0600) || listen(r->listen_fd, 64) || pipe2(r->wake, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	/* the target's user alone may connect: the directory is its, 0700 */
	if (as && as->set && (chown(r->path, as->uid, as->gid) || chown(r->dir, as->uid, as->gid))) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&r->thread, NULL, reader_run, r);
	if (err)
		goto fail;
	r->started = true;
	*out = r;
	return 0;
fail:
	gpu_reader__free(r);
	return err;
}

const char *gpu_reader__path(const struct gpu_reader *r)
{
	return r->path;
}

void gpu_reader__set_hold(struct gpu_reader *r, bool may_hold)
{
	pthread_mutex_lock(&r->lock);
	r->may_hold = may_hold;
	pthread_mutex_unlock(&r->lock);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether every connection so far, those still to be accepted included,
 * said BYE or ended. */
static bool all_done(struct gpu_reader *r)
{
	struct pollfd p = { .fd = r->listen_fd, .events = POLLIN };
	bool done;

	pthread_mutex_lock(&r->lock);
	done = r->done_conns >= r->open_conns;
	pthread_mutex_unlock(&r->lock);
	return done && poll(&p, 1, 0) == 0;
}

void gpu_reader__stop(struct gpu_reader *r, int wait_ms)
{
	uint64_t until = now_ms() + (uint64_t)(wait_ms > 0 ? wait_ms : 0);

	if (!r || !r->started || r->stopped)
		return;
	while (!all_done(r) && now_ms() < until)
		nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000000L }, NULL);
	if (write(r->wake[1], "x", 1) != 1)
		pthread_cancel(r->thread);
	pthread_join(r->thread, NULL);
	r->stopped = true;
}

void gpu_reader__free(struct gpu_reader *r)
{
	if (!r)
		return;
	gpu_reader__stop(r, 0);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	if (r->wake[0] >= 0)
		close(r->wake[0]);
	if (r->wake[1] >= 0)
		close(r->wake[1]);
	if (r->path[0])
		unlink(r->path);
	if (r->dir[0])
		rmdir(r->dir);
	for (size_t i = 0; i < r->names.n; i++)
		free(r->names.v[i]);
	free(r->names.v);
	free(r->name_slots);
	free(r->procs.v);
	free(r->ops.v);
	free(r->api.v);
	free(r->calib.v);
	free(r->windows.v);
	free(r->conns.v);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void gpu_reader__counts(struct gpu_reader *r, struct gpu_reader_counts *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->counts;
	pthread_mutex_unlock(&r->lock);
}

#define COPY_VEC(dst, src)                                                                    \
	((src).n && !((dst).v = malloc((src).n * sizeof(*(src).v)))                              \
		 ? -ENOMEM                                                                     \
		 : ((src).n ? memcpy((dst).v, (src).v, (src).n * sizeof(*(src).v)) : NULL,    \
		    (dst).n = (dst).cap = (src).n, 0))

int gpu_reader__collect(struct gpu_reader *r, struct model *m)
{
	struct model_gpu_activity *a = &m->gpu_activity;
	int32_t *map = NULL;
	int err = 0;

	pthread_mutex_lock(&r->lock);
	free(a->processes.v);
	free(a->ops.v);
	free(a->api.v);
	free(a->calib.v);
	free(a->windows.v);
	memset(&a->windows, 0, sizeof(a->windows));
	memset(&a->processes, 0, sizeof(a->processes));
	memset(&a->ops, 0, sizeof(a->ops));
	memset(&a->api, 0, sizeof(a->api));
	memset(&a->calib, 0, sizeof(a->calib));
	if (COPY_VEC(a->processes, r->procs) || COPY_VEC(a->ops, r->ops) || COPY_VEC(a->api, r->api) ||
	    COPY_VEC(a->windows, r->windows) ||
	    COPY_VEC(a->calib, r->calib) || (r->names.n && !(map = malloc(r->names.n * sizeof(*map))))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->names.n; i++)
		if ((map[i] = model__intern(m, r->names.v[i])) < 0) {
			err = -ENOMEM;
			goto out;
		}
	for (size_t i = 0; i < a->ops.n; i++)
		if (a->ops.v[i].mangled >= 0)
			a->ops.v[i].mangled = map && (size_t)a->ops.v[i].mangled < r->names.n ? map[a->ops.v[i].mangled]
											       : -1;
	a->present = a->present || r->counts.connections > 0 || r->notice[0];
	if (r->ops.n || r->calib.n)
		a->source = "cupti";
	if (r->notice[0])
		snprintf(a->notice, sizeof(a->notice), "%s", r->notice);
	a->sample_every = 1;
	for (size_t i = 0; i < r->windows.n; i++)
		if (r->windows.v[i].every > a->sample_every)
			a->sample_every = r->windows.v[i].every;
	a->dropped = r->counts.cupti_dropped + r->counts.dropped_budget;
	a->dropped_budget = r->counts.dropped_budget;
	a->channel_errors = r->counts.bad_connections;
out:
	pthread_mutex_unlock(&r->lock);
	free(map);
	return err;
}
