// SPDX-License-Identifier: BSD-2-Clause
/* Text into report.html and the SVGs (html_text.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_text.h"
#include "text.h"

void html_text__escape(FILE *out, const char *s)
{
	char *clean = NULL;

	/* XML takes neither invalid UTF-8 nor control characters: as \xHH text,
	 * the rule of every output (lib/text.h) */
	if (s && text__needs_escape(s, strlen(s), TEXT_CONTROLS))
		s = clean = text__escaped(s, TEXT_CONTROLS);
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
	}
	free(clean);
}

void html_text__num_cell(FILE *f, double v, const char *fmt)
{
	fprintf(f, "<td>");
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fprintf(f, "-");
	fprintf(f, "</td>");
}
