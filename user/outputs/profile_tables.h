// SPDX-License-Identifier: BSD-2-Clause
/* The section tables of profile.json, one file per part (profile_*.c),
 * walked by the profile table of profile_json.c for the writer and the
 * loader alike. A writer or reader here has json_fields' JF_FN form; base
 * is the model. */
#ifndef INFERTRACE_PROFILE_TABLES_H
#define INFERTRACE_PROFILE_TABLES_H

#include <jansson.h>

#include "json_fields.h"

/* Sets o[key] to v (taking it). 0, or -ENOMEM where v is NULL. */
int profile__set(json_t *o, const char *key, json_t *v);
/* Strings kept in model.names (ctx: the model). */
extern const struct jf_names profile_model_names;

/* profile_samples.c */
int profile_samples__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_samples__read(void *base, const char *key, json_t *o, void *ctx);
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

#endif
