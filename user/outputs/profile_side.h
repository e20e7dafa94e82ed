// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's side data (thermal, gpu, disk, host, energy and each
 * cycle's side keys): one table per section drives both the writer and
 * the loader (outputs/profile_side.c). */
#ifndef INFERTRACE_PROFILE_SIDE_H
#define INFERTRACE_PROFILE_SIDE_H

#include <stdbool.h>
#include <jansson.h>

#include "side_summary.h"

struct model;
struct model_cycle;

/* Adds thermal, gpu (with the CUDA concern's `cuda`), disk, host (when
 * sampled) and energy (when a sampler ran) to profile p. 0 or -ENOMEM. */
int profile_side__write(const struct model *m, json_t *p);
/* Their inverse, into a model just initialised. 0 or -ENOMEM. */
int profile_side__load(struct model *m, json_t *p);
/* The top-level `energy` object. */
json_t *profile_side__energy_json(const struct model *m);
/* A cycle's side keys (side_samples .. throttled_ms, kernel_power, energy)
 * added to its object o, and read back. 0 or -ENOMEM. */
int profile_side__cycle_write(const struct model_cycle *c, json_t *o);
int profile_side__cycle_load(struct model_cycle *c, json_t *o);
/* Whether key is one of a cycle's side keys. */
bool profile_side__cycle_key(const char *key);

/* Pieces in their profile.json shape: throttling (or power-cap) episodes,
 * the run's summary as {thermal, gpu, disk, host}, one window's side keys,
 * NVML throttle reasons by name. */
json_t *profile_side__episodes_json(const struct throttle_episode *v, size_t n, bool power_cap);
json_t *profile_side__summary_json(const struct side_summary *s);
json_t *profile_side__window_json(const struct side_window *w);
json_t *profile_side__reasons_json(uint64_t reasons);

#endif
