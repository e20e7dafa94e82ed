// SPDX-License-Identifier: BSD-2-Clause
/* Text into report.html and the SVGs: escaped, numbers never `nan`. */
#ifndef INFERTRACE_HTML_TEXT_H
#define INFERTRACE_HTML_TEXT_H

#include <stdio.h>

/* Writes s with the XML/HTML special characters escaped, invalid UTF-8 and
 * control characters as \xHH text (lib/text.h); NULL writes nothing. */
void html_text__escape(FILE *out, const char *s);
/* An HTML table cell with v in fmt, or a dash: never `nan`. */
void html_text__num_cell(FILE *f, double v, const char *fmt);

#endif
