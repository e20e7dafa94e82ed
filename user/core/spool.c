// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "spool.h"

#define SPOOL_BUF (64u << 10)
#define SPOOL_READ (1u << 20)
#define SPOOL_MAX_RECORD 4096u

struct spool_header {
	uint32_t kind, size;
};

struct spool {
	int fd, dirfd;
	uint64_t end;              /* bytes written to the file */
	size_t nbuf;               /* bytes waiting in buf */
	uint64_t count[SPOOL_NKINDS];
	unsigned char buf[SPOOL_BUF];
};

int spool__open(struct spool **out, int dirfd)
{
	struct spool *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	s->fd = s->dirfd < 0 ? -1 :
		openat(dirfd, SPOOL_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		err = -errno;
		if (s->dirfd >= 0)
			close(s->dirfd);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
	const unsigned char *c = p;

	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int flush(struct spool *s)
{
	int err;

	if (!s->nbuf)
		return 0;
	err = write_all(s->fd, s->buf, s->nbuf, s->end);
	if (err) {
		/* a partial write is cut off: the file holds whole records */
		if (ftruncate(s->fd, (off_t)s->end)) {
			/* nothing more to do: the records after end are never read */
		}
		s->nbuf = 0;
		return err;
	}
	s->end += s->nbuf;
	s->nbuf = 0;
	return 0;
}

int spool__append(struct spool *s, enum spool_kind kind, const void *rec, uint32_t size)
{
	struct spool_header h = { .kind = kind, .size = size };
	int err;

	if (!s)
		return -EBADF;
	if (kind <= 0 || kind >= SPOOL_NKINDS || size > SPOOL_MAX_RECORD)
		return -EINVAL;
	if (s->nbuf + sizeof(h) + size > SPOOL_BUF) {
		/* a failed flush loses what waited: counted by the callers below */
		err = flush(s);
		if (err)
			return err;
	}
	memcpy(s->buf + s->nbuf, &h, sizeof(h));
	memcpy(s->buf + s->nbuf + sizeof(h), rec, size);
	s->nbuf += sizeof(h) + size;
	s->count[kind]++;
	return 0;
}

uint64_t spool__count(const struct spool *s, enum spool_kind kind)
{
	return s && kind > 0 && kind < SPOOL_NKINDS ? s->count[kind] : 0;
}

/* Every record in the file, in order: fn(ctx, header, record, offset just
 * past it). */
static int walk(struct spool *s, int (*fn)(void *ctx, const struct spool_header *h, const void *rec, uint64_t next),
		void *ctx)
{
	unsigned char *buf;
	uint64_t off = 0;  /* file offset of buf[0] */
	size_t have = 0, pos = 0;
	int err = flush(s);

	if (err)
		return err;
	buf = malloc(SPOOL_READ);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct spool_header h = {};

		if (have - pos >= sizeof(h))
			memcpy(&h, buf + pos, sizeof(h));
		if (have - pos < sizeof(h) || have - pos < sizeof(h) + (size_t)h.size) {
			/* the rest of a record: move it to the front, read on */
			ssize_t r;

			if (off + have >= s->end) {
				err = have == pos ? 0 : -EIO;
				break;
			}
			memmove(buf, buf + pos, have - pos);
			off += pos;
			have -= pos;
			pos = 0;
			r = pread(s->fd, buf + have, SPOOL_READ - have, (off_t)(off + have));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				err = r < 0 ? -errno : -EIO;
				break;
			}
			have += (size_t)r;
			if (off + have > s->end)
				have = (size_t)(s->end - off);
			continue;
		}
		if (h.size > SPOOL_MAX_RECORD) {
			err = -EIO;
			break;
		}
		pos += sizeof(h) + h.size;
		err = fn(ctx, &h, buf + pos - h.size, off + pos);
		if (err)
			break;
	}
	free(buf);
	return err;
}

struct each_ctx {
	enum spool_kind kind;
	int (*fn)(void *ctx, const void *rec, uint32_t size);
	void *ctx;
};

static int each_one(void *ctx, const struct spool_header *h, const void *rec, uint64_t next)
{
	struct each_ctx *e = ctx;

	(void)next;
	return h->kind == e->kind ? e->fn(e->ctx, rec, h->size) : 0;
}

int spool__each(struct spool *s, enum spool_kind kind, int (*fn)(void *ctx, const void *rec, uint32_t size),
		void *ctx)
{
	struct each_ctx e = { kind, fn, ctx };

	if (!s || !s->count[kind])
		return 0;
	return walk(s, each_one, &e);
}

/* In place: kept records move down, never past what was read (w <= next). */
struct filter_ctx {
	struct spool *s;
	bool (*keep)(void *ctx, enum spool_kind kind, const void *rec, uint32_t size);
	void *ctx;
	unsigned char *out;
	size_t nout;
	uint64_t w;
	uint64_t count[SPOOL_NKINDS];
};

static int filter_one(void *ctx, const struct spool_header *h, const void *rec, uint64_t next)
{
	struct filter_ctx *f = ctx;
	size_t len = sizeof(*h) + h->size;

	(void)next;
	if (!f->keep(f->ctx, (enum spool_kind)h->kind, rec, h->size))
		return 0;
	if (f->nout + len > SPOOL_BUF) {
		int err = write_all(f->s->fd, f->out, f->nout, f->w);

		if (err)
			return err;
		f->w += f->nout;
		f->nout = 0;
	}
	memcpy(f->out + f->nout, h, sizeof(*h));
	memcpy(f->out + f->nout + sizeof(*h), rec, h->size);
	f->nout += len;
	if (h->kind < SPOOL_NKINDS)
		f->count[h->kind]++;
	return 0;
}

int spool__filter(struct spool *s, bool (*keep)(void *ctx, enum spool_kind kind, const void *rec, uint32_t size),
		  void *ctx)
{
	struct filter_ctx f = { .s = s, .keep = keep, .ctx = ctx };
	int err;

	if (!s)
		return 0;
	f.out = malloc(SPOOL_BUF);
	if (!f.out)
		return -ENOMEM;
	err = walk(s, filter_one, &f);
	if (!err && f.nout)
		err = write_all(s->fd, f.out, f.nout, f.w);
	free(f.out);
	if (err)
		return err; /* a record moved down may now be twice in the file: rare (a write error), and safe to read */
	f.w += f.nout;
	if (ftruncate(s->fd, (off_t)f.w))
		return -errno;
	s->end = f.w;
	memcpy(s->count, f.count, sizeof(s->count));
	return 0;
}

static int add_sample(void *ctx, const void *rec, uint32_t size)
{
	struct model_trace_sample ts;

	if (size != sizeof(ts))
		return -EIO;
	memcpy(&ts, rec, sizeof(ts));
	return model__add_trace_sample(ctx, &ts);
}

static int add_interval(void *ctx, const void *rec, uint32_t size)
{
	struct model_offcpu_interval iv;

	if (size != sizeof(iv))
		return -EIO;
	memcpy(&iv, rec, sizeof(iv));
	return model__add_offcpu_interval(ctx, &iv);
}

int spool__load_trace(struct spool *s, struct model *m)
{
	int err = spool__each(s, SPOOL_TRACE_SAMPLE, add_sample, m);

	return err ? err : spool__each(s, SPOOL_OFFCPU, add_interval, m);
}

void spool__close(struct spool *s, bool remove)
{
	if (!s)
		return;
	close(s->fd);
	if (remove)
		unlinkat(s->dirfd, SPOOL_NAME, 0);
	close(s->dirfd);
	free(s);
}
