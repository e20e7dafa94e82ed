// SPDX-License-Identifier: BSD-2-Clause
/* settings.json, what `infertrace tune` leaves for the experiment: the
 * chosen values under the runner's own names, the platform they were
 * measured on (from the runs' `system` and `gpu`), the metric and its
 * interval, the evidence, the run directories behind it
 * (docs/settings.schema.json, docs/tune.md). Settings tuned on one machine
 * are not evidence for another: a --target-platform that is not the
 * measured one is refused unless forced. */
#ifndef INFERTRACE_SETTINGS_JSON_H
#define INFERTRACE_SETTINGS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#define SETTINGS_SCHEMA_VERSION "1.0"

struct tune_result;

/* The platform object from a run's `system` and `gpu` sections (either
 * may be NULL): cpu_model, machine_model, arch, cpus, mem_total_mb,
 * kernel, hostname, gpus (names), power. */
json_t *settings__platform(const json_t *system, const json_t *gpu);
/* Whether NAME names the platform: each word of NAME (split at '_', '-',
 * '.', ' ') is found, case aside, in its CPU model, machine model, GPU
 * names, architecture, power mode name or host name. described receives
 * the platform in a few words, for the message. */
bool settings__platform_is(const json_t *platform, const char *name, char *described, size_t len);
/* The document (a new reference). */
json_t *settings__json(const struct tune_result *t, const json_t *platform, bool platform_ok);
/* Writes DIR/settings.json atomically. 0 or -errno. */
int settings__write(const json_t *doc, const char *dir);

#endif
