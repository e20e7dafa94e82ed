// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "outdir.h"
#include "rotate.h"
#include "vec.h"

struct cycle_mark {
	pid_t pid;
	uint32_t cycle;
	bool here;
};

struct rotation_base {
	struct folded oncpu, oncpu_python, offcpu;
	struct folded oncpu_ph[IT_MAX_PHASES], offcpu_ph[IT_MAX_PHASES];
	/* what earlier periods held, by key: merged (sorted) for count_of */
	struct folded ls_samples, ls_offcpu; /* labelled stack key → samples, off-CPU ns */
	struct folded lost;                  /* counter name → value */
	VEC_OF(struct cycle_mark) written;   /* per pid, the highest bpf_cycle written */
	uint64_t hist[IT_MAX_PHASES][IT_HIST_SLOTS];
	double outside_ms[IT_MAX_PHASES];
	uint64_t outside_calls[IT_MAX_PHASES], samples[IT_MAX_PHASES];
};

static void base_free(struct rotation_base *b)
{
	if (!b)
		return;
	folded__free(&b->oncpu);
	folded__free(&b->oncpu_python);
	folded__free(&b->offcpu);
	for (int i = 0; i < IT_MAX_PHASES; i++) {
		folded__free(&b->oncpu_ph[i]);
		folded__free(&b->offcpu_ph[i]);
	}
	folded__free(&b->ls_samples);
	folded__free(&b->ls_offcpu);
	folded__free(&b->lost);
	free(b->written.v);
	free(b);
}

/* cur becomes cur less base (both merged, sorted by stack); the cumulative
 * cur is kept in save. */
static int folded_less(struct folded *cur, const struct folded *base, struct folded *save)
{
	struct folded out = {};
	size_t j = 0;

	folded__merge(cur);
	for (size_t i = 0; i < cur->n; i++) {
		const struct folded_entry *e = &cur->entries[i];
		uint64_t b = 0;
		int c = 1;

		if (folded__add(save, e->stack, e->count))
			goto nomem;
		while (base && j < base->n && (c = strcmp(base->entries[j].stack, e->stack)) < 0)
			j++;
		if (base && j < base->n && !c)
			b = base->entries[j].count;
		if (e->count > b && folded__add(&out, e->stack, e->count - b))
			goto nomem;
	}
	folded__free(cur);
	*cur = out;
	return 0;
nomem:
	folded__free(&out);
	return -ENOMEM;
}

/* A labelled stack's identity across snapshots: its labels and frames by
 * name and address (indexes into names differ between snapshots). */
static char *lstack_key(const struct model *m, const struct model_lstack *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "%d/%d/%u/%d/%d/%u/%s|", s->pid, s->tid, s->bpf_cycle, s->has_cycle, s->kernel_only, s->phase,
		s->comm >= 0 && (size_t)s->comm < m->nnames ? m->names[s->comm] : "");
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct model_frame *fr = &m->frames[s->first + i];

		fprintf(f, "%llx:%s;", (unsigned long long)fr->addr,
			fr->name >= 0 && (size_t)fr->name < m->nnames ? m->names[fr->name] : "");
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int entry_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct folded_entry *)e)->stack);
}

/* What a merged set holds for key; 0 when nothing. */
static uint64_t count_of(const struct folded *f, const char *key)
{
	const struct folded_entry *e = f->n ? bsearch(key, f->entries, f->n, sizeof(*f->entries), entry_cmp) : NULL;

	return e ? e->count : 0;
}

/* The highest cycle written for pid; false when none. */
static bool written_of(const struct rotation_base *b, pid_t pid, uint32_t *cycle)
{
	for (size_t i = 0; b && i < b->written.n; i++)
		if (b->written.v[i].pid == pid) {
			*cycle = b->written.v[i].cycle;
			return true;
		}
	return false;
}

/* Where a labelled stack's cycle went: this period, a later one (still
 * open), an earlier one, none (no cycle), or one not seen yet (its start
 * still in the ring buffer, or a marker cycle dropped as empty). */
enum lstack_fate { LS_NONE, LS_HERE, LS_LATER, LS_EARLIER, LS_UNSEEN };

static int mark_cmp(const void *a, const void *b)
{
	const struct cycle_mark *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

static enum lstack_fate lstack_fate(const struct model_lstack *s, const struct cycle_mark *marks, size_t n,
				    const struct rotation_base *b)
{
	struct cycle_mark want = { .pid = s->pid, .cycle = s->bpf_cycle }, *hit;
	uint32_t w;

	if (!s->has_cycle)
		return LS_NONE;
	hit = n ? bsearch(&want, marks, n, sizeof(*marks), mark_cmp) : NULL;
	if (hit)
		return hit->here ? LS_HERE : LS_LATER;
	if (written_of(b, s->pid, &w) && s->bpf_cycle <= w)
		return LS_EARLIER;
	return LS_UNSEEN;
}

/* Labelled stacks (profile.pb.gz): those of a cycle go with the period the
 * cycle is in, whole; the rest, less what earlier periods held. Only the
 * rest is kept for the next period, so what is kept does not grow with the
 * number of cycles. */
static int lstacks_less(struct model *m, const struct cycle_mark *marks, size_t nmarks, bool final,
			const struct rotation_base *base, struct rotation_base *save)
{
	size_t w = 0;

	for (size_t i = 0; i < m->nlstacks; i++) {
		struct model_lstack s = m->lstacks[i];
		enum lstack_fate fate = lstack_fate(&s, marks, nmarks, base);
		uint64_t bs, bo;
		char *key;

		/* a cycle not seen yet may be one later: its stacks wait for it
		 * (the last period takes them as they are) */
		if (fate == LS_LATER || fate == LS_EARLIER || (fate == LS_UNSEEN && !final))
			continue;
		if (fate == LS_HERE) {
			m->lstacks[w++] = s;
			continue;
		}
		key = lstack_key(m, &s);
		if (!key)
			return -ENOMEM;
		if (folded__add(&save->ls_samples, key, s.samples) || folded__add(&save->ls_offcpu, key, s.offcpu_ns)) {
			free(key);
			return -ENOMEM;
		}
		bs = base ? count_of(&base->ls_samples, key) : 0;
		bo = base ? count_of(&base->ls_offcpu, key) : 0;
		free(key);
		s.samples = s.samples > bs ? s.samples - bs : 0;
		s.offcpu_ns = s.offcpu_ns > bo ? s.offcpu_ns - bo : 0;
		if (s.samples || s.offcpu_ns)
			m->lstacks[w++] = s;
	}
	m->nlstacks = w;
	folded__merge(&save->ls_samples);
	folded__merge(&save->ls_offcpu);
	return 0;
}

/* The highest cycle written per process, earlier periods' and this one's. */
static int mark_written(const struct cycle_mark *marks, size_t n, const struct rotation_base *base,
			struct rotation_base *save)
{
	for (size_t i = 0; base && i < base->written.n; i++) {
		if (VEC_RESERVE(save->written.v, save->written.cap, save->written.n, 8))
			return -ENOMEM;
		save->written.v[save->written.n++] = base->written.v[i];
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (!marks[i].here)
			continue;
		while (k < save->written.n && save->written.v[k].pid != marks[i].pid)
			k++;
		if (k == save->written.n) {
			if (VEC_RESERVE(save->written.v, save->written.cap, save->written.n, 8))
				return -ENOMEM;
			save->written.v[save->written.n++] = marks[i];
		} else if (save->written.v[k].cycle < marks[i].cycle) {
			save->written.v[k].cycle = marks[i].cycle;
		}
	}
	return 0;
}

static bool in_period(uint64_t t, uint64_t from, uint64_t to, bool final)
{
	return t >= from && (final || t < to);
}

int rotation__slice(struct rotation *r, struct model *m, uint64_t from, uint64_t to, bool final)
{
	struct rotation_base *b = r->base, *save;
	struct cycle_mark *marks = NULL;
	size_t w, nmarks;
	int err = model__require(m, MODEL_COLLECTED, "rotation");

	if (err)
		return err;
	base_free(r->pending);
	r->pending = save = calloc(1, sizeof(*save));
	if (!save)
		return -ENOMEM;
	marks = m->ncycles ? calloc(m->ncycles, sizeof(*marks)) : NULL;
	if (m->ncycles && !marks)
		return -ENOMEM;
	/* each cycle in the period in which it ended; one still open waits
	 * for a later period (the last one takes whatever is open at the end) */
	w = 0;
	for (size_t i = 0; i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];

		marks[i] = (struct cycle_mark){ .pid = c->pid, .cycle = c->bpf_cycle };

		/* cycles written earlier are forgotten by the probes concern, so
		 * one whose end was read late still counts, once; `py:` cycles
		 * are rebuilt from every observation and need the lower bound */
		if ((c->end_ns >= from || !c->observed) && (final || (c->end_ns < to && !c->open_at_end)))
			marks[i].here = true, m->cycles[w++] = *c;
		else
			model__cycle_release(c);
	}
	nmarks = m->ncycles;
	m->ncycles = w;
	if (nmarks > 1)
		qsort(marks, nmarks, sizeof(*marks), mark_cmp);
	w = 0;
	for (size_t i = 0; i < m->ncalls; i++)
		if (in_period(m->calls[i].exit_ns, from, to, final))
			m->calls[w++] = m->calls[i];
	m->ncalls = w;
	w = 0;
	for (size_t i = 0; i < m->ntrace_samples; i++)
		if (in_period(m->trace_samples[i].ts_ns, from, to, final))
			m->trace_samples[w++] = m->trace_samples[i];
	m->ntrace_samples = w;

	/* counted since the start: less what earlier periods counted */
	err = folded_less(&m->oncpu, b ? &b->oncpu : NULL, &save->oncpu);
	if (!err)
		err = folded_less(&m->oncpu_python, b ? &b->oncpu_python : NULL, &save->oncpu_python);
	if (!err)
		err = folded_less(&m->offcpu_us, b ? &b->offcpu : NULL, &save->offcpu);
	for (int p = 0; p < IT_MAX_PHASES && !err; p++) {
		err = folded_less(&m->oncpu_by_phase[p], b ? &b->oncpu_ph[p] : NULL, &save->oncpu_ph[p]);
		if (!err)
			err = folded_less(&m->offcpu_us_by_phase[p], b ? &b->offcpu_ph[p] : NULL, &save->offcpu_ph[p]);
	}
	if (!err)
		err = lstacks_less(m, marks, nmarks, final, b, save);
	if (!err)
		err = mark_written(marks, nmarks, b, save);
	free(marks);
	if (err)
		return err;
	for (int p = 0; p < IT_MAX_PHASES; p++) {
		for (int s = 0; s < IT_HIST_SLOTS; s++) {
			save->hist[p][s] = m->phase_hist_us[p][s];
			if (b)
				m->phase_hist_us[p][s] -= b->hist[p][s] < m->phase_hist_us[p][s] ? b->hist[p][s]
												 : m->phase_hist_us[p][s];
		}
		save->outside_ms[p] = m->phase_outside_thread_ms[p];
		save->outside_calls[p] = m->phase_outside_calls[p];
		save->samples[p] = m->phase_samples[p];
		if (b) {
			m->phase_outside_thread_ms[p] -= b->outside_ms[p];
			if (m->phase_outside_thread_ms[p] < 0)
				m->phase_outside_thread_ms[p] = 0;
			m->phase_outside_calls[p] -= b->outside_calls[p] < m->phase_outside_calls[p] ?
						     b->outside_calls[p] : m->phase_outside_calls[p];
			m->phase_samples[p] -= b->samples[p] < m->phase_samples[p] ? b->samples[p] : m->phase_samples[p];
		}
	}
	for (size_t i = 0; i < m->nlost; i++) {
		struct model_counter *c = &m->lost[i];
		uint64_t was = b ? count_of(&b->lost, c->name) : 0;

		if (folded__add(&save->lost, c->name, c->value))
			return -ENOMEM;
		c->value = c->value > was ? c->value - was : 0;
	}
	folded__merge(&save->lost);

	/* the period's time range */
	m->run.start_wall_s += (double)(int64_t)(from - m->run.start_ns) / 1e9;
	m->run.start_ns = from;
	m->run.end_ns = to;
	m->run.duration_s = (to - from) / 1e9;
	return 0;
}

void rotation__commit(struct rotation *r)
{
	base_free(r->base);
	r->base = r->pending;
	r->pending = NULL;
}

void rotation__free(struct rotation *r)
{
	base_free(r->base);
	base_free(r->pending);
	r->base = r->pending = NULL;
}

void rotation__dir(const char *out, unsigned int n, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%04u", out, n);
}

int rotation__mkdir(const char *out, unsigned int n)
{
	char dir[4096];

	rotation__dir(out, n, dir, sizeof(dir));
	return rotation__mkdir_path(dir);
}

int rotation__mkdir_path(const char *dir)
{
	int fd = atomic_dir__make(dir, NULL, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* NAME in OUT is something this run cannot write into: not a directory, or
 * one another user owns or could plant files in. */
static bool name_taken(int outfd, const char *name, char *why, size_t whylen)
{
	struct stat st;

	if (fstatat(outfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	if (!S_ISDIR(st.st_mode))
		snprintf(why, whylen, "'%s' is not a directory", name);
	else if (!atomic_file__trusted_uid(st.st_uid))
		snprintf(why, whylen, "'%s' is a directory owned by uid %u", name, (unsigned)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, whylen, "'%s' is writable by others", name);
	else
		return false;
	return true;
}

bool rotation__taken(const char *out, unsigned int n, char *why, size_t whylen)
{
	char name[32];
	int fd = atomic_dir__open(out, NULL, 0);
	bool taken;

	if (fd < 0)
		return false; /* the write will say why */
	snprintf(name, sizeof(name), "%04u", n);
	taken = name_taken(fd, name, why, whylen);
	snprintf(name, sizeof(name), ".%04u.tmp", n);
	taken = taken || name_taken(fd, name, why, whylen);
	close(fd);
	return taken;
}

/* Removes this tool's files from DIR, then DIR itself. */
int rotation__remove_path(const char *dir)
{
	int fd = atomic_dir__open(dir, NULL, 0), dfd;
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return fd;
	dfd = dup(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!output_dir__is_ours(de->d_name) && strcmp(de->d_name, "profile.pb.gz"))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || S_ISDIR(st.st_mode))
			continue;
		unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	close(fd);
	return rmdir(dir) ? -errno : 0;
}

int rotation__remove(const char *out, unsigned int n)
{
	char dir[4096];

	rotation__dir(out, n, dir, sizeof(dir));
	return rotation__remove_path(dir);
}

void rotation__remove_stale(const char *out)
{
	int fd = atomic_dir__open(out, NULL, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name), i;
		char dir[4096], why[200];

		const char *name = de->d_name;
		bool tmp = name[0] == '.' && n > 4 && !strcmp(name + n - 4, ".tmp");

		/* NNNN, or .NNNN.tmp left by a killed run */
		if (tmp) {
			name++;
			n -= 5;
		}
		for (i = 0; i < n && isdigit((unsigned char)name[i]); i++)
			;
		if (n < 4 || i != n)
			continue;
		/* another user's: passed over when its period comes (skip_taken) */
		if (name_taken(fd, de->d_name, why, sizeof(why)))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", out, de->d_name);
		if (rotation__remove_path(dir) && errno != ENOENT)
			fprintf(stderr, "infertrace: warning: left %s from an earlier run: it holds other files\n", dir);
	}
	closedir(d);
}
