// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "model.h"
#include "perfmap.h"
#include "stacks.h"
#include "syms.h"
#include "unwind.h"
#include "ustack_table.h"

/* One distinct unwound stack. */
struct ustack_ent {
	uint64_t hash;
	struct it_label_key key;
	uint64_t weight;
	uint32_t id; /* in the order added: ustack_table__add_id's */
	int n;
	__u64 ips[]; /* leaf first */
};

uint64_t ustack__event_ip(const struct it_ustack_event *e)
{
#ifdef IT_UREG_PC
	return e->regs[IT_UREG_PC];
#else
	(void)e;
	return 0;
#endif
}

void ustack__check_fill(struct it_ustack_check *c, const struct it_ustack_event *e,
			const struct unwind_reads *reads)
{
	c->tgid = e->hdr.tgid;
	c->nwords = (__u32)reads->n;
	c->pc = ustack__event_ip(e);
	c->sp = e->sp;
#ifdef IT_UREG_FP
	c->fp = e->regs[IT_UREG_FP];
#endif
#ifdef IT_UREG_LR
	c->lr = e->regs[IT_UREG_LR];
#endif
	if (reads->fp_used)
		c->flags |= IT_USTACK_CHECK_FP;
	for (int i = 0; i < reads->n; i++) {
		c->off[i] = reads->off[i];
		memcpy(&c->val[i], e->stack + reads->off[i], sizeof(c->val[i]));
	}
}

void ustack__checks_drop(int checks_fd)
{
	struct it_ustack_check_key k;

	while (checks_fd >= 0 && bpf_map_get_next_key(checks_fd, NULL, &k) == 0)
		if (bpf_map_delete_elem(checks_fd, &k))
			break;
}

int ustack__unwind_raw(struct unwinder *u, struct syms_cache *syms, const struct it_ustack_event *e, size_t size,
		       __u64 ips[IT_MAX_STACK_DEPTH], struct unwind_reads *reads)
{
	int n = 0, status;

	if (size < sizeof(*e) || e->stack_size > size - sizeof(*e))
		return -1;
	/* __u64 and uint64_t: the same 64-bit unsigned type under two names */
	status = unwinder__unwind_reads(u, e->hdr.tgid, e->hdr.tid, (const uint64_t *)e->regs, IT_UREGS, e->sp,
					e->stack, e->stack_size, (uint64_t *)ips, IT_MAX_STACK_DEPTH, &n, reads);
	/* the outermost frame's function has no caller by its call-frame
	 * information: the stack is whole, named or not (looked up as stacks.c
	 * looks up a caller: its return address less one) */
	if (status == UNWIND_OK && n > 0 && syms)
		syms_cache__mark_root(syms, (pid_t)e->hdr.tgid, n > 1 ? ips[n - 1] - 1 : ips[0]);
	return n;
}

void ustack__label_event(struct syms_cache *syms, const struct it_ustack_event *e, __u64 *ips, int n,
			 struct it_label_key *key)
{
	memset(key, 0, sizeof(*key));
	key->stack.tgid = e->hdr.tgid;
	key->stack.phase = e->phase;
	key->stack.kstack_id = e->kstack_id;
	key->stack.pystack = e->pystack;
	memcpy(key->stack.comm, e->comm, IT_COMM_LEN);
	key->tid = e->hdr.tid;
	key->cycle = e->cycle;
	/* JIT frames named now, at the record's time (perf maps reuse addresses) */
	syms_cache__jit_tokenize(syms, e->hdr.tgid, (uint64_t *)ips, n, e->hdr.ts_ns);
	/* library frames too: a dlclose may give their addresses to another file */
	syms_cache__file_tokenize(syms, e->hdr.tgid, (uint64_t *)ips, n, e->hdr.ts_ns);
	/* no frame at all: folded as [missing_user_stack], like an fp stack id < 0 */
	key->stack.ustack_id = n ? 0 : -1;
}

int ustack__unwind_event(struct unwinder *u, struct syms_cache *syms, const struct it_ustack_event *e,
			 size_t size, __u64 ips[IT_MAX_STACK_DEPTH], struct it_label_key *key)
{
	int n = ustack__unwind_raw(u, syms, e, size, ips, NULL);

	if (n >= 0)
		ustack__label_event(syms, e, ips, n, key);
	return n;
}

static uint64_t stack_hash(const struct it_label_key *k, const __u64 *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *b = (const unsigned char *)k;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	for (int i = 0; i < n; i++)
		h = (h ^ ips[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int tab_grow(struct ustack_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct ustack_ent **tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct ustack_ent *e = t->tab[i];
		size_t j;

		if (!e)
			continue;
		for (j = e->hash & (cap - 1); tab[j]; j = (j + 1) & (cap - 1))
			;
		tab[j] = e;
	}
	free(t->tab);
	t->tab = tab;
	t->cap = cap;
	return 0;
}

int ustack_table__add(struct ustack_table *t, const struct it_label_key *k, const __u64 *ips, int n,
		      uint64_t weight)
{
	return ustack_table__add_id(t, k, ips, n, weight, NULL);
}

void ustack_table__strip_labels(struct ustack_table *t, struct it_label_key *k, uint64_t weight)
{
	if (!k->tid && k->cycle == IT_CYCLE_NONE)
		return;
	*k = (struct it_label_key){ .stack = k->stack, .cycle = IT_CYCLE_NONE };
	t->unlabelled += weight;
}

int ustack_table__add_id(struct ustack_table *t, const struct it_label_key *k, const __u64 *ips, int n,
			 uint64_t weight, uint32_t *id)
{
	uint64_t h = stack_hash(k, ips, n);
	struct ustack_ent *e;
	size_t j;

	if ((t->n + 1) * 2 > t->cap && tab_grow(t))
		return -ENOMEM;
	for (j = h & (t->cap - 1); (e = t->tab[j]); j = (j + 1) & (t->cap - 1)) {
		if (e->hash == h && e->n == n && !memcmp(&e->key, k, sizeof(*k)) &&
		    !memcmp(e->ips, ips, n * sizeof(*ips))) {
			e->weight += weight;
			if (id)
				*id = e->id;
			return 0;
		}
	}
	if (t->n >= USTACK_TABLE_MAX_LABELLED && (k->tid || k->cycle != IT_CYCLE_NONE)) {
		struct it_label_key bare = { .stack = k->stack, .cycle = IT_CYCLE_NONE };

		t->unlabelled += weight;
		return ustack_table__add_id(t, &bare, ips, n, weight, id);
	}
	e = malloc(sizeof(*e) + n * sizeof(*ips));
	if (!e)
		return -ENOMEM;
	e->hash = h;
	e->key = *k;
	e->weight = weight;
	e->n = n;
	e->id = (uint32_t)t->n;
	memcpy(e->ips, ips, n * sizeof(*ips));
	t->tab[j] = e;
	t->n++;
	if (id)
		*id = e->id;
	return 0;
}

int ustack_table__report(const struct ustack_table *t, int kstack_fd, struct syms_cache *syms,
			 struct ksyms *ksyms, const char *const *phase_names, struct stack_report *sr,
			 struct model *m, bool offcpu)
{
	return ustack_table__report_named(t, kstack_fd, syms, ksyms, phase_names, sr, m, offcpu, NULL);
}

int ustack_table__report_named(const struct ustack_table *t, int kstack_fd, struct syms_cache *syms,
			       struct ksyms *ksyms, const char *const *phase_names, struct stack_report *sr,
			       struct model *m, bool offcpu, int32_t *names)
{
	__u64 uips[IT_MAX_STACK_DEPTH], kips[IT_MAX_STACK_DEPTH];
	int err = 0;

	for (size_t i = 0; i < t->cap && !err; i++) {
		struct ustack_ent *e = t->tab[i];
		bool have_k;

		if (!e)
			continue;
		memset(uips, 0, sizeof(uips));
		memcpy(uips, e->ips, e->n * sizeof(*uips));
		have_k = e->key.stack.kstack_id >= 0 &&
			 bpf_map_lookup_elem(kstack_fd, &e->key.stack.kstack_id, kips) == 0;
		err = stacks__add(sr, syms, ksyms, phase_names, &e->key.stack, e->n ? uips : NULL,
				  have_k ? kips : NULL, e->weight);
		if (!err && names && m && sr->last_line)
			names[e->id] = model__intern(m, sr->last_line);
		if (!err && m)
			err = stacks__add_model(m, syms, ksyms, &e->key.stack, (pid_t)e->key.tid,
						e->key.cycle != IT_CYCLE_NONE, e->key.cycle, e->n ? uips : NULL,
						have_k ? kips : NULL, e->weight, offcpu);
	}
	return err;
}

int ustack_table__each(const struct ustack_table *t, ustack_table_fn fn, void *arg)
{
	int err = 0;

	for (size_t i = 0; i < t->cap && !err; i++)
		if (t->tab[i])
			err = fn(arg, t->tab[i]->id, &t->tab[i]->key, t->tab[i]->ips, t->tab[i]->n, t->tab[i]->weight);
	return err;
}

void ustack_table__free(struct ustack_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->tab[i]);
	free(t->tab);
	memset(t, 0, sizeof(*t));
}
