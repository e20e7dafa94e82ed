// SPDX-License-Identifier: BSD-2-Clause
/* Reading numbers out of JSON documents: profile.json's loader, at the
 * edge where JSON is read; the rest of the code reads the model's structs. */
#ifndef INFERTRACE_JSON_NUM_H
#define INFERTRACE_JSON_NUM_H

#include <math.h>
#include <jansson.h>

/* The number member KEY of object o; NAN when it is missing, null or not a
 * number (so that "not measured" never reads as 0). */
static inline double json_num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

#endif
