// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's samples ↔ the model's (outputs/profile_samples.c): the
 * writer and reader of the profile table's `samples` entry (base: the
 * model). */
#ifndef INFERTRACE_PROFILE_SAMPLES_H
#define INFERTRACE_PROFILE_SAMPLES_H

#include <jansson.h>

int profile_samples__write(const void *base, const char *key, json_t *o, const void *ctx);
int profile_samples__read(void *base, const char *key, json_t *o, void *ctx);

#endif
