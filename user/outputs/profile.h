// SPDX-License-Identifier: BSD-2-Clause
/* profile.json: the versioned contract of a recording (docs/profile-json.md,
 * docs/profile.schema.json). Built as a jansson tree; written atomically. */
#ifndef INFERTRACE_PROFILE_H
#define INFERTRACE_PROFILE_H

#include <jansson.h>

#define PROFILE_SCHEMA_VERSION "1.0"

/* system.power as profile.json writes it. */
struct power_mode;
json_t *profile__power_mode_json(const struct power_mode *p);
/* Writes DIR/profile.json atomically. 0 or -errno. */
int profile__write(json_t *profile, const char *dir);
/* Reads DIR/profile.json (or a path to a .json file). NULL with a message. */
json_t *profile__load(const char *dir_or_file);
/* ISO 8601 UTC time of a wall-clock second count, into buf. */
const char *profile__iso_time(double epoch_s, char *buf, size_t len);

#endif
