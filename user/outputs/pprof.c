// SPDX-License-Identifier: BSD-2-Clause
/* profile.pb.gz: the model's labelled stacks in the pprof format, a gzip'd
 * protocol buffer of the message `perftools.profiles.Profile`, as publicly
 * described in github.com/google/pprof/proto/profile.proto. Read by
 * `go tool pprof`, Pyroscope, Parca and Grafana.
 *
 * The encoder is the few lines of the protobuf wire format it needs
 * (protobuf.dev/programming-guides/encoding): a field is a key varint
 * (field number << 3 | wire type) then a varint (type 0) or a length varint
 * and bytes (type 2: strings, nested messages, packed repeated integers).
 * Fields left at their default (0, empty) are not written, as proto3 does.
 *
 * The messages, as this writer uses them (field numbers from profile.proto):
 *   Profile   1 sample_type ValueType*  2 sample Sample*  3 mapping Mapping*
 *             4 location Location*  5 function Function*  6 string_table string*
 *             9 time_nanos  10 duration_nanos  11 period_type ValueType
 *             12 period  13 comment (string index)*  14 default_sample_type
 *   ValueType 1 type  2 unit                        (string indexes)
 *   Sample    1 location_id* (packed, leaf first)  2 value* (packed)  3 label Label*
 *   Label     1 key  2 str                          (string indexes)
 *   Mapping   1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename
 *             6 build_id  7 has_functions
 *   Location  1 id  2 mapping_id  3 address  4 line Line*
 *   Line      1 function_id
 *   Function  1 id  2 name  3 system_name
 * string_table[0] is "" as the format requires. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "atomic_file.h"
#include "model.h"
#include "pprof.h"
#include "vec.h"

/* ---- wire format ---- */

struct pb {
	unsigned char *buf;
	size_t len, cap;
	bool oom;
};

static void pb_put(struct pb *b, const void *p, size_t n)
{
	if (b->oom || !n)
		return;
	/* room for bytes len .. len + n - 1 */
	if (VEC_RESERVE(b->buf, b->cap, b->len + n - 1, 256)) {
		b->oom = true;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = v & 0x7f;
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_put(b, tmp, n);
}

/* A varint field (int64 fields carry two's complement, as uint64). */
static void pb_uint(struct pb *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | 0);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, int field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_put(b, p, n);
}

/* A nested message, written from its own buffer; the buffer is reset. */
static void pb_msg(struct pb *b, int field, struct pb *sub)
{
	if (sub->oom)
		b->oom = true;
	pb_bytes(b, field, sub->buf, sub->len);
	sub->len = 0;
}

static void pb_free(struct pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* ---- tables: strings, functions, locations ---- */

struct strtab {
	char **s;         /* owned copies */
	size_t n, cap;
	int64_t *idx; /* open addressing: slot -> string index + 1 */
	size_t icap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The index of s in the string table, copied in when new. -1: ENOMEM. */
static int64_t str_id(struct strtab *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->icap) {
		size_t icap = t->icap ? t->icap * 2 : 1024;
		int64_t *idx = calloc(icap, sizeof(*idx));

		if (!idx)
			return -1;
		for (size_t i = 0; i < t->n; i++) {
			for (j = hash_str(t->s[i]) & (icap - 1); idx[j]; j = (j + 1) & (icap - 1))
				;
			idx[j] = (int64_t)i + 1;
		}
		free(t->idx);
		t->idx = idx;
		t->icap = icap;
	}
	for (j = hash_str(s) & (t->icap - 1); t->idx[j]; j = (j + 1) & (t->icap - 1))
		if (!strcmp(t->s[t->idx[j] - 1], s))
			return t->idx[j] - 1;
	if (VEC_RESERVE(t->s, t->cap, t->n, 256))
		return -1;
	if (!(t->s[t->n] = strdup(s)))
		return -1;
	t->idx[j] = (int64_t)t->n + 1;
	return (int64_t)t->n++;
}

/* A location: one (mapping, address, function) triple. */
struct loc {
	int32_t mapping, name;
	uint64_t addr;
};

struct loctab {
	struct loc *v;
	size_t n, cap;
	uint32_t *idx; /* slot -> location index + 1 */
	size_t icap;
};

static uint64_t hash_loc(const struct loc *l)
{
	uint64_t h = l->addr * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)(uint32_t)l->mapping * 0xff51afd7ed558ccdull;
	h ^= (uint64_t)(uint32_t)l->name * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 31);
}

/* The location id (1-based) of l. 0: ENOMEM. */
static uint64_t loc_id(struct loctab *t, const struct loc *l)
{
	size_t j;

	if ((t->n + 1) * 2 > t->icap) {
		size_t icap = t->icap ? t->icap * 2 : 4096;
		uint32_t *idx = calloc(icap, sizeof(*idx));

		if (!idx)
			return 0;
		for (size_t i = 0; i < t->n; i++) {
			for (j = hash_loc(&t->v[i]) & (icap - 1); idx[j]; j = (j + 1) & (icap - 1))
				;
			idx[j] = (uint32_t)i + 1;
		}
		free(t->idx);
		t->idx = idx;
		t->icap = icap;
	}
	for (j = hash_loc(l) & (t->icap - 1); t->idx[j]; j = (j + 1) & (t->icap - 1)) {
		const struct loc *o = &t->v[t->idx[j] - 1];

		if (o->addr == l->addr && o->mapping == l->mapping && o->name == l->name)
			return t->idx[j];
	}
	if (VEC_RESERVE(t->v, t->cap, t->n, 1024))
		return 0;
	t->v[t->n] = *l;
	t->idx[j] = (uint32_t)t->n + 1;
	return ++t->n;
}

/* (pid, bpf_cycle) -> the cycle's index, for the `cycle` label. */
struct cycle_ref {
	pid_t pid;
	uint32_t bpf_cycle, index;
};

static int cycle_ref_cmp(const void *a, const void *b)
{
	const struct cycle_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->bpf_cycle < y->bpf_cycle ? -1 : x->bpf_cycle > y->bpf_cycle;
}

/* ---- the profile ---- */

struct writer {
	const struct model *m;
	struct strtab st;
	struct loctab lt;
	struct cycle_ref *cycles;
	size_t ncycles;
	uint64_t *map_id;  /* model mapping -> pprof id: files first, the kernel last */
	struct pb out, msg, sub, packed;
	bool kernel_addresses; /* --kernel-addresses: else kernel frames are at 0 */
	bool oom;
};

static int64_t sid(struct writer *w, const char *s)
{
	int64_t i = str_id(&w->st, s ? s : "");

	if (i < 0)
		w->oom = true;
	return i < 0 ? 0 : i;
}

static void value_type(struct writer *w, int field, const char *type, const char *unit)
{
	pb_uint(&w->sub, 1, (uint64_t)sid(w, type));
	pb_uint(&w->sub, 2, (uint64_t)sid(w, unit));
	pb_msg(&w->out, field, &w->sub);
}

static void label(struct writer *w, const char *key, const char *value)
{
	pb_uint(&w->sub, 1, (uint64_t)sid(w, key));
	pb_uint(&w->sub, 2, (uint64_t)sid(w, value));
	pb_msg(&w->msg, 3, &w->sub);
}

static const char *name_of(const struct model *m, int32_t i)
{
	return i >= 0 && (size_t)i < m->nnames ? m->names[i] : "[unknown]";
}

/* Label values are strings (Pyroscope and Parca keep only string labels). */
static void sample(struct writer *w, const struct model_lstack *s, uint64_t period_ns)
{
	const struct model *m = w->m;
	char num[32];

	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct model_frame *f = &m->frames[s->first + i];
		struct loc l = { .mapping = f->mapping, .name = f->name, .addr = f->addr };

		/* a raw kernel address would tell anyone who reads the file
		 * where KASLR put the kernel */
		if (!w->kernel_addresses && f->mapping >= 0 && (size_t)f->mapping < m->nmappings &&
		    m->mappings[f->mapping].kernel)
			l.addr = 0;
		uint64_t id = loc_id(&w->lt, &l);

		if (!id)
			w->oom = true;
		pb_varint(&w->packed, id);
	}
	pb_msg(&w->msg, 1, &w->packed);
	pb_varint(&w->packed, s->samples);
	pb_varint(&w->packed, s->samples * period_ns);
	pb_varint(&w->packed, s->offcpu_ns);
	pb_msg(&w->msg, 2, &w->packed);
	if (s->phase && s->phase < IT_MAX_PHASES && m->phase_names[s->phase])
		label(w, "phase", m->phase_names[s->phase]);
	else if (s->phase == IT_PHASE_UNATTRIBUTED)
		label(w, "phase", "[unattributed]");
	if (s->has_cycle && w->ncycles) {
		struct cycle_ref want = { .pid = s->pid, .bpf_cycle = s->bpf_cycle }, *c;

		c = bsearch(&want, w->cycles, w->ncycles, sizeof(want), cycle_ref_cmp);
		if (c) {
			snprintf(num, sizeof(num), "%u", c->index);
			label(w, "cycle", num);
		}
	}
	snprintf(num, sizeof(num), "%d", (int)s->pid);
	label(w, "pid", num);
	label(w, "comm", name_of(m, s->comm));
	if (s->tid) {
		const char *tname = model__thread_name(m, s->pid, s->tid);

		snprintf(num, sizeof(num), "%d", (int)s->tid);
		label(w, "thread", num);
		/* the thread's own name (its comm) where a record carried it */
		if (tname)
			label(w, "thread_name", tname);
	}
	pb_msg(&w->out, 2, &w->msg);
}

static int build_cycles(struct writer *w)
{
	const struct model *m = w->m;

	w->cycles = calloc(m->ncycles ? m->ncycles : 1, sizeof(*w->cycles));
	if (!w->cycles)
		return -ENOMEM;
	for (size_t i = 0; i < m->ncycles; i++)
		w->cycles[w->ncycles++] = (struct cycle_ref){
			.pid = m->cycles[i].pid, .bpf_cycle = m->cycles[i].bpf_cycle, .index = m->cycles[i].index,
		};
	qsort(w->cycles, w->ncycles, sizeof(*w->cycles), cycle_ref_cmp);
	return 0;
}

/* 0: the executable of a traced root process (its name begins with the
 * process's comm), 1: other files, 2: the kernel. */
static int mapping_rank(const struct model *m, const struct model_mapping *mp)
{
	const char *path = name_of(m, mp->path), *base = strrchr(path, '/');

	if (mp->kernel)
		return 2;
	base = base ? base + 1 : path;
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].root && m->procs[i].comm[0] &&
		    !strncmp(base, m->procs[i].comm, strlen(m->procs[i].comm)))
			return 0;
	return 1;
}

static int encode(struct writer *w)
{
	const struct model *m = w->m;
	uint64_t hz = m->run.asked.frequency > 0 ? (uint64_t)m->run.asked.frequency : 99;
	uint64_t period_ns = 1000000000ull / hz;
	char text[256];
	bool *used;

	sid(w, ""); /* string_table[0] */
	value_type(w, 1, "samples", "count");
	value_type(w, 1, "cpu", "nanoseconds");
	value_type(w, 1, "offcpu", "nanoseconds");
	for (size_t i = 0; i < m->nlstacks; i++)
		sample(w, &m->lstacks[i], period_ns);
	/* pprof takes the first mapping for the main binary */
	w->map_id = calloc(m->nmappings ? m->nmappings : 1, sizeof(*w->map_id));
	if (!w->map_id)
		return -ENOMEM;
	for (int rank = 0, id = 1; rank < 3; rank++)
		for (size_t i = 0; i < m->nmappings; i++)
			if (mapping_rank(m, &m->mappings[i]) == rank)
				w->map_id[i] = id++;
	for (int rank = 0; rank < 3; rank++)
	for (size_t i = 0; i < m->nmappings; i++) {
		const struct model_mapping *mp = &m->mappings[i];

		if (mapping_rank(m, mp) != rank)
			continue;
		pb_uint(&w->msg, 1, w->map_id[i]);
		pb_uint(&w->msg, 2, mp->start);
		pb_uint(&w->msg, 3, mp->limit);
		pb_uint(&w->msg, 4, mp->file_offset);
		pb_uint(&w->msg, 5, (uint64_t)sid(w, name_of(m, mp->path)));
		pb_uint(&w->msg, 6, (uint64_t)sid(w, mp->build_id));
		pb_uint(&w->msg, 7, 1); /* frames are named: no symbolization needed */
		pb_msg(&w->out, 3, &w->msg);
	}
	for (size_t i = 0; i < w->lt.n; i++) {
		const struct loc *l = &w->lt.v[i];

		pb_uint(&w->msg, 1, i + 1);
		pb_uint(&w->msg, 2, l->mapping >= 0 ? w->map_id[l->mapping] : 0);
		pb_uint(&w->msg, 3, l->addr);
		/* one function per frame name: its id is the name's index + 1 */
		pb_uint(&w->sub, 1, (uint64_t)l->name + 1);
		pb_msg(&w->msg, 4, &w->sub);
		pb_msg(&w->out, 4, &w->msg);
	}
	used = calloc(m->nnames ? m->nnames : 1, sizeof(*used));
	if (!used)
		return -ENOMEM;
	for (size_t j = 0; j < w->lt.n; j++)
		if (w->lt.v[j].name >= 0 && (size_t)w->lt.v[j].name < m->nnames)
			used[w->lt.v[j].name] = true;
	for (size_t i = 0; i < m->nnames; i++) {
		if (!used[i])
			continue;
		pb_uint(&w->msg, 1, i + 1);
		pb_uint(&w->msg, 2, (uint64_t)sid(w, m->names[i]));
		pb_uint(&w->msg, 3, (uint64_t)sid(w, m->names[i]));
		pb_msg(&w->out, 5, &w->msg);
	}
	free(used);
	pb_uint(&w->out, 9, (uint64_t)llround(m->run.start_wall_s * 1e9));
	pb_uint(&w->out, 10, (uint64_t)llround(m->run.duration_s * 1e9));
	value_type(w, 11, "cpu", "nanoseconds");
	pb_uint(&w->out, 12, period_ns);
	snprintf(text, sizeof(text), "infertrace %s, cpu-clock sampling at %llu Hz; off-CPU time from "
		 "scheduler tracepoints", INFERTRACE_VERSION, (unsigned long long)hz);
	pb_uint(&w->out, 13, (uint64_t)sid(w, text));
	if (m->snapshot) {
		snprintf(text, sizeof(text), "checkpoint: recording start + 0 s .. + %.3f s", m->run.duration_s);
		pb_uint(&w->out, 13, (uint64_t)sid(w, text));
	}
	pb_uint(&w->out, 14, (uint64_t)sid(w, "cpu"));
	/* the string table last: every index above is now final */
	for (size_t i = 0; i < w->st.n; i++)
		pb_bytes(&w->out, 6, w->st.s[i], strlen(w->st.s[i]));
	return w->oom || w->out.oom || w->msg.oom || w->sub.oom || w->packed.oom ? -ENOMEM : 0;
}

static int gzip_to(FILE *f, const unsigned char *p, size_t n)
{
	unsigned char buf[65536];
	z_stream zs = {};
	int zr;

	/* windowBits 15 + 16: a gzip header and trailer, as pprof reads */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)p;
	zs.avail_in = (uInt)n;
	do {
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		zr = deflate(&zs, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		if (fwrite(buf, 1, sizeof(buf) - zs.avail_out, f) != sizeof(buf) - zs.avail_out) {
			zr = Z_ERRNO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int pprof__encode(const struct model *m, unsigned char **out, size_t *len)
{
	struct writer w = {
		.m = m, .kernel_addresses = m->run.asked.kernel_addresses,
	};
	int err = build_cycles(&w);

	if (!err)
		err = encode(&w);
	pb_free(&w.msg);
	pb_free(&w.sub);
	pb_free(&w.packed);
	for (size_t i = 0; i < w.st.n; i++)
		free(w.st.s[i]);
	free(w.st.s);
	free(w.st.idx);
	free(w.lt.v);
	free(w.lt.idx);
	free(w.cycles);
	free(w.map_id);
	if (err) {
		pb_free(&w.out);
		return err;
	}
	*out = w.out.buf;
	*len = w.out.len;
	return 0;
}

int pprof__write(const struct model *m, const char *dir)
{
	struct atomic_file *af;
	unsigned char *buf;
	size_t len;
	int err = pprof__encode(m, &buf, &len);

	if (err)
		return err;
	af = atomic_file__open(dir, "profile.pb.gz");
	if (!af) {
		err = -errno;
		free(buf);
		return err;
	}
	err = gzip_to(atomic_file__stream(af), buf, len);
	free(buf);
	if (err) {
		atomic_file__abort(af);
		return err;
	}
	return atomic_file__commit(af);
}
