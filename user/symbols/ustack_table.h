// SPDX-License-Identifier: BSD-2-Clause
/* Stacks unwound in user space from the copies BPF sends (struct
 * it_ustack_event): unwinding one record, and a table of the distinct
 * stacks with their weights (samples, or blocked nanoseconds) that is
 * added to a stack report at the end, beside the kernel's stack counts. */
#ifndef INFERTRACE_USTACK_TABLE_H
#define INFERTRACE_USTACK_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "infertrace.h"

struct unwinder;
struct syms_cache;
struct ksyms;
struct stack_report;
struct ustack_ent;

struct model;

struct ustack_table {
	struct ustack_ent **tab; /* open addressing, cap a power of two */
	size_t n, cap;
	uint64_t records, bad_records, unwound_frames;
	uint64_t unlabelled;     /* weights kept without thread and cycle (table full) */
};

/* Distinct (stack, thread, cycle) entries kept with their labels; beyond
 * this, new stacks are kept without thread and cycle, so memory stays
 * bounded over long runs (about 64 MiB at most). */
#define USTACK_TABLE_MAX_LABELLED 65536

/* Unwinds one record of `size` bytes into ips (leaf first) and its key
 * (process, phase, kernel stack id, comm; ustack_id 0, or -1 when no frame
 * was found; thread and cycle). JIT frames are replaced by their perf-map
 * tokens at the record's time. Returns the number of frames, or -1 for a
 * malformed record. */
int ustack__unwind_event(struct unwinder *u, struct syms_cache *syms, const struct it_ustack_event *e,
			 size_t size, __u64 ips[IT_MAX_STACK_DEPTH], struct it_label_key *key);
struct unwind_reads;
/* The unwinding half of ustack__unwind_event: ips not yet named (JIT and
 * library frames as addresses), and the stack words it read into *reads
 * when not NULL. A stack unwound to its outermost frame marks that frame in
 * syms (when not NULL: syms_cache__mark_root). Returns the number of
 * frames, or -1 for a malformed record. */
int ustack__unwind_raw(struct unwinder *u, struct syms_cache *syms, const struct it_ustack_event *e, size_t size,
		       __u64 ips[IT_MAX_STACK_DEPTH], struct unwind_reads *reads);
/* The naming half: the record's key, and its JIT and library frames named
 * as of the record's time (ips from ustack__unwind_raw, maybe of an earlier
 * record of the same stack). */
void ustack__label_event(struct syms_cache *syms, const struct it_ustack_event *e, __u64 *ips, int n,
			 struct it_label_key *key);
/* The record's pc (the leaf before unwinding). */
uint64_t ustack__event_ip(const struct it_ustack_event *e);
/* What the unwinding of record e depended on, for BPF to compare a later
 * record with (its registers and the stack words in *reads); the caller
 * sets c->ref and the key. */
void ustack__check_fill(struct it_ustack_check *c, const struct it_ustack_event *e,
			const struct unwind_reads *reads);
/* Drops every check in BPF's map checks_fd (< 0: none): after the stacks
 * they name are gone, or the unwinding they depended on changed. */
void ustack__checks_drop(int checks_fd);

/* Adds weight to the stack (key, ips[0..n)). 0 or -ENOMEM. */
int ustack_table__add(struct ustack_table *t, const struct it_label_key *key, const __u64 *ips, int n,
		      uint64_t weight);
/* The same, and *id (when not NULL) the stack's entry: 0 .. t->n - 1, in
 * the order the entries were made. */
/* --max-memory reached: the stack is counted without its thread and cycle
 * labels (as when the table is full), so that no new labelled entry grows
 * the table; `weight` is counted in t->unlabelled. */
void ustack_table__strip_labels(struct ustack_table *t, struct it_label_key *k, uint64_t weight);
int ustack_table__add_id(struct ustack_table *t, const struct it_label_key *key, const __u64 *ips, int n,
			 uint64_t weight, uint32_t *id);
/* Adds every stack to a report, with its kernel stack read from the stack
 * map kstack_fd (the one the records' kstack_id point into), and, when m is
 * not NULL, to the model's labelled stacks (profile.pb.gz; offcpu: the
 * weights are blocked nanoseconds). 0 or -errno. */
int ustack_table__report(const struct ustack_table *t, int kstack_fd, struct syms_cache *syms,
			 struct ksyms *ksyms, const char *const *phase_names, struct stack_report *sr,
			 struct model *m, bool offcpu);
/* The same, and names[id] (t->n of them, when not NULL) the entry's folded
 * stack, as in stacks.folded, in model.names; -1 where it could not be
 * interned. */
int ustack_table__report_named(const struct ustack_table *t, int kstack_fd, struct syms_cache *syms,
			       struct ksyms *ksyms, const char *const *phase_names, struct stack_report *sr,
			       struct model *m, bool offcpu, int32_t *names);
/* Calls fn with every stack: its entry (ustack_table__add_id's id), key,
 * frames (leaf first) and weight; stops at fn's first non-zero return,
 * which it returns. */
typedef int (*ustack_table_fn)(void *arg, uint32_t id, const struct it_label_key *key, const __u64 *ips, int n,
			       uint64_t weight);
int ustack_table__each(const struct ustack_table *t, ustack_table_fn fn, void *arg);
void ustack_table__free(struct ustack_table *t);

#endif
