// SPDX-License-Identifier: BSD-2-Clause
/* report.html's requests section (model.requests, docs/servers.md). */
#ifndef INFERTRACE_REQUESTS_HTML_H
#define INFERTRACE_REQUESTS_HTML_H

#include <stdio.h>

#include "model.h"

/* Requests shown one per row in report.html, at most (by start). */
#define REQUESTS_HTML_ROWS 500

/* The requests' distributions, one row per request with what stands out
 * about it, and the context fit; nothing without llama.cpp batches. */
void requests_html__write(FILE *f, const struct model *m);

#endif
