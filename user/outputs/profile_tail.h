// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's tail_cycles ↔ the model's tail (outputs/profile_tail.c):
 * the writer and reader of the profile table's `tail_cycles` entry (base:
 * the model). */
#ifndef INFERTRACE_PROFILE_TAIL_H
#define INFERTRACE_PROFILE_TAIL_H

#include <jansson.h>

struct model;

int profile_tail__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_tail__read(void *base, const char *key, json_t *o, void *ctx);
/* tail_cycles as profile.json writes it; NULL when no tail was judged. */
json_t *profile_tail__json(const struct model *m);

#endif
