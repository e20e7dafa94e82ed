// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>

#include "screen_lines.h"
#include "text.h"

void screen__line(char lines[][SCREEN_LINE_MAX], int *n, int nlines, int width, const char *fmt, ...)
{
	char raw[SCREEN_LINE_MAX];
	va_list ap;

	if (*n >= nlines)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	text__term(raw, lines[*n], SCREEN_LINE_MAX);
	if (width >= 0 && width < SCREEN_LINE_MAX)
		lines[*n][width] = 0;
	(*n)++;
}
