// SPDX-License-Identifier: BSD-2-Clause
/* Reads the in-kernel stack counts after a recording, symbolizes them and
 * builds the folded stacks (all, and per phase) and the stack-quality and
 * per-process sample figures. */
#ifndef INFERTRACE_STACKS_H
#define INFERTRACE_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "folded.h"
#include <linux/types.h>

#include "infertrace.h"

struct tracer;
struct model;
struct syms_cache;
struct ksyms;

struct proc_samples {
	pid_t tgid;
	char comm[IT_COMM_LEN];
	uint64_t samples;
};

/* Per object (the object of the sampled leaf frame): how many of its samples
 * have a user stack that reaches a root (main, _start, start_thread...). */
struct object_quality {
	char *object;
	uint64_t samples;
	uint64_t complete;
};

struct stack_report {
	struct folded all;
	struct folded python;           /* the Python view of each stack (stacks.python.folded) */
	uint64_t python_view_samples;   /* samples whose Python view differs from their stack */
	struct folded by_phase[IT_MAX_PHASES];
	uint64_t phase_samples[IT_MAX_PHASES];
	struct proc_samples *procs;
	size_t nprocs, capprocs;
	struct object_quality *objects;
	size_t nobjects, capobjects;
	uint64_t total;
	uint64_t complete;
	uint64_t user_stack_missing; /* samples whose user stack could not be read */
	uint64_t distinct_stacks;
	char *last_line; /* the folded stack of the last stacks__add (trace.json's samples) */
	/* each native frame looked up once (stacks.c, frame_memo): a run's
	 * stacks share most of their frames */
	struct frame_memo *memo;
	size_t nmemo, capmemo;
};

/* Reads stack_counts/stackmap of the tracer and symbolizes every stack.
 * phase_names[id] names phase id (NULL: none). 0 or -errno. */
int stacks__collect(struct tracer *t, struct syms_cache *syms, struct ksyms *ksyms,
		    const char *const *phase_names, struct stack_report *out);
/* The same for any (struct it_stack_key -> __u64 count) map and the stack
 * map its ids point into, e.g. the off-CPU microseconds. */
int stacks__collect_maps(int counts_fd, int stack_fd, struct syms_cache *syms, struct ksyms *ksyms,
			 const char *const *phase_names, struct stack_report *out);
/* Adds count samples of one stack (e.g. unwound in user space) to a report
 * that stacks__collect* filled: uips and kips leaf first, zero-terminated
 * when shorter than IT_MAX_STACK_DEPTH; uips NULL with key->ustack_id < 0
 * folds as [missing_user_stack]; kips may be NULL. 0 or -ENOMEM. */
int stacks__add(struct stack_report *r, struct syms_cache *syms, struct ksyms *ksyms,
		const char *const *phase_names, const struct it_stack_key *key,
		const __u64 *uips, const __u64 *kips, __u64 count);
/* Whether a symbol is the root of a complete user stack. */
int stacks__is_root_symbol(const char *name);
/* The samples' stack quality (profile.json's samples.stack_quality) into
 * s. 0 or -ENOMEM. */
struct model_samples;
int stacks__quality(const struct stack_report *r, struct model_samples *s);
void stack_report__free(struct stack_report *r);

/* Typed stacks with labels and addresses for the model (profile.pb.gz).
 * Every entry of label_fd (struct it_label_key -> __u64) becomes one stack
 * with its thread and cycle; what an entry of base_fd (struct it_stack_key
 * -> __u64) counts beyond its labelled entries (the labelled map was full)
 * becomes one without them, so the totals stay those of base_fd. offcpu:
 * the counts are blocked nanoseconds, else samples. 0 or -errno. */
int stacks__to_model(int base_fd, int label_fd, int stack_fd, struct syms_cache *syms, struct ksyms *ksyms,
		     bool offcpu, struct model *m);
/* One stack into the model, as above (e.g. unwound in user space); tid 0
 * and has_cycle false leave those labels out. 0 or -ENOMEM. */
int stacks__add_model(struct model *m, struct syms_cache *syms, struct ksyms *ksyms,
		      const struct it_stack_key *key, pid_t tid, bool has_cycle, __u32 cycle,
		      const __u64 *uips, const __u64 *kips, __u64 count, bool offcpu);

#endif
