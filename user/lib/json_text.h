// SPDX-License-Identifier: BSD-2-Clause
/* A JSON string of any bytes: jansson refuses invalid UTF-8 (json_string
 * returns NULL and the key silently disappears), so such text is escaped
 * by the rule of lib/text.h first; valid text is kept as it is. */
#ifndef INFERTRACE_JSON_TEXT_H
#define INFERTRACE_JSON_TEXT_H

#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "text.h"

static inline json_t *json_text(const char *s)
{
	char *e;
	json_t *j;

	if (!s)
		return json_null();
	if (!text__needs_escape(s, strlen(s), TEXT_BACKSLASH))
		return json_string(s);
	e = text__escaped(s, TEXT_BACKSLASH);
	j = e ? json_string(e) : NULL;
	free(e);
	return j;
}

#endif
