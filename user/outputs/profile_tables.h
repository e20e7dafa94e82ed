// SPDX-License-Identifier: BSD-2-Clause
/* The section tables of profile.json, one file per part (profile_*.c),
 * walked by the profile table of profile_json.c for the writer and the
 * loader alike: a section's table as JF_OBJ, or a writer and reader in
 * json_fields' JF_FN form where a section is more than its fields (base:
 * the model). ctx is the model throughout. */
#ifndef INFERTRACE_PROFILE_TABLES_H
#define INFERTRACE_PROFILE_TABLES_H

#include <jansson.h>

#include "json_fields.h"

/* Sets o[key] to v (taking it). 0, or -ENOMEM where v is NULL. */
int profile__set(json_t *o, const char *key, json_t *v);
/* Strings kept in model.names (ctx: the model). */
extern const struct jf_names profile_model_names;

/* profile_sched.c: the split every section shows (struct model_split),
 * sched and offcpu */
extern const struct jf_table profile_split_table;
extern const struct jf_table profile_sched_table;  /* struct model_sched_figures */
extern const struct jf_table profile_offcpu_table; /* struct model_offcpu_figures */
/* profile_network.c: network (struct model_network), a cycle's (struct
 * model_net_cycle), a crash (struct model_crash) */
extern const struct jf_table profile_network_table;
extern const struct jf_table profile_net_cycle_table;
extern const struct jf_table profile_crash_table;
/* profile_cuda.c: a cycle's cuda (struct model_cuda_totals); gpu.cuda
 * into (from) the gpu object, when the concern ran */
struct model;
extern const struct jf_table profile_cuda_totals_table;
int profile_cuda__write(const struct model *m, json_t *gpu);
int profile_cuda__read(struct model *m, json_t *gpu);
/* profile_samples.c: struct model_samples */
extern const struct jf_table profile_samples_table;
/* profile_tail.c; and tail_cycles as profile.json writes it (NULL when no
 * tail was judged) */
struct model;
int profile_tail__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_tail__read(void *base, const char *key, json_t *o, void *ctx);
json_t *profile_tail__json(const struct model *m);
/* profile_probes.c */
int profile_probes__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_probes__read(void *base, const char *key, json_t *o, void *ctx);
int profile_overhead__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_overhead__read(void *base, const char *key, json_t *o, void *ctx);
/* profile_system.c */
int profile_system__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_system__read(void *base, const char *key, json_t *o, void *ctx);
/* profile_self.c: over the model */
extern const struct jf_table profile_self_table;
/* profile_llama.c: a cycle's (struct model_llama_cycle) and the section */
extern const struct jf_table profile_llama_cycle_table;
int profile_llama__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_llama__read(void *base, const char *key, json_t *o, void *ctx);
/* profile_requests.c: requests[]; llama.requests and llama.context_slope
 * into (from) the llama object */
int profile_requests__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_requests__read(void *base, const char *key, json_t *o, void *ctx);
int profile_requests__summary_write(const struct model *m, json_t *llama);
int profile_requests__summary_read(struct model *m, json_t *llama);

/* profile_gpu.c: cycles[i].gpu's source and devices (merged into the side
 * sampler's gpu object; ctx: the model), phases[NAME].gpu (NULL: none) and
 * gpu.activity (NULL: no activity) */
int profile_gpu__cycle_write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_gpu__cycle_read(void *base, const char *key, json_t *o, void *ctx);
json_t *profile_gpu__phase_json(const struct model *m, int phase);
/* phases[NAME].gpu back into the run's figures of phase id `phase`. */
int profile_gpu__phase_read(struct model *m, int phase, json_t *gpu);
json_t *profile_gpu__activity_json(const struct model *m);
int profile_gpu__activity_read(struct model *m, json_t *activity);

/* profile_evidence.c: a finding's or a recommendation's evidence as
 * o[key]; reading sets present where o has key (ctx: the model) */
struct model_evidence;
int profile_evidence__write(const struct model_evidence *e, const char *key, json_t *o, const void *ctx);
int profile_evidence__read(struct model_evidence *e, const char *key, json_t *o, void *ctx);

#endif
