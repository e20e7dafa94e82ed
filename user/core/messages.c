// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "messages.h"
#include "text.h"

#define PLAIN_PREFIX "infertrace: "

static char prog[64] = "infertrace";
static bool at_line_start = true;
static bool status_shown;

const char *messages__prog(void)
{
	return prog;
}

static void write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* stderr gone: nothing better to do with a message */
		p += w;
		n -= w;
	}
}

size_t messages__rewrite(const char *prefix, const char *in, size_t n, char *out, size_t cap,
			 bool *line_start)
{
	size_t plen = strlen(PLAIN_PREFIX), o = 0;

	for (size_t i = 0; i < n; i++) {
		if (*line_start && n - i >= plen && !memcmp(in + i, PLAIN_PREFIX, plen)) {
			int w = snprintf(o < cap ? out + o : NULL, o < cap ? cap - o : 0, "%s: ", prefix);

			o += w > 0 ? (size_t)w : 0;
			i += plen - 1;
			*line_start = false;
			continue;
		}
		if (o < cap)
			out[o] = in[i];
		o++;
		*line_start = in[i] == '\n';
	}
	return o;
}

/* Messages quote names from the target (symbols, paths, argv): escaped for
 * the terminal (text__escape), newlines kept. */
static void write_term(const char *s, size_t n)
{
	char stackbuf[4096], *out = stackbuf;
	size_t need;

	if (!text__needs_escape(s, n, TEXT_CONTROLS | TEXT_KEEP_NEWLINE)) {
		write_all(s, n);
		return;
	}
	need = text__escape(s, n, TEXT_CONTROLS | TEXT_KEEP_NEWLINE, NULL, 0);
	if (need >= sizeof(stackbuf) && !(out = malloc(need + 1))) {
		write_all(s, n);
		return;
	}
	text__escape(s, n, TEXT_CONTROLS | TEXT_KEEP_NEWLINE, out, need + 1);
	write_all(out, need);
	if (out != stackbuf)
		free(out);
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size)
{
	char stackbuf[4096], *out = stackbuf;
	bool start = at_line_start;
	size_t n;

	(void)cookie;
	if (status_shown) {
		write_all("\r\033[K", 4);
		status_shown = false;
	}
	n = messages__rewrite(prog, buf, size, out, sizeof(stackbuf), &at_line_start);
	if (n >= sizeof(stackbuf)) {
		/* longer than the stack buffer: again into one of the needed size */
		at_line_start = start;
		out = malloc(n + 1);
		if (!out) {
			write_term(buf, size);
			return size;
		}
		n = messages__rewrite(prog, buf, size, out, n + 1, &at_line_start);
	}
	write_term(out, n);
	if (out != stackbuf)
		free(out);
	return size;
}

void messages__init(const char *subcommand)
{
	static bool installed;
	cookie_io_functions_t io = { .write = filter_write };
	FILE *f;

	if (subcommand)
		snprintf(prog, sizeof(prog), "infertrace %s", subcommand);
	if (installed)
		return;
	fflush(stderr);
	f = fopencookie(NULL, "w", io);
	if (!f)
		return; /* messages keep their plain prefix */
	/* unbuffered, as stderr: a message is out before a crash or an exit */
	setvbuf(f, NULL, _IONBF, 0);
	stderr = f;
	installed = true;
}

void messages__status(const char *line)
{
	if (!line) {
		if (status_shown)
			write_all("\r\033[K", 4);
		status_shown = false;
		return;
	}
	write_all("\r", 1);
	write_all(line, strlen(line));
	write_all("\033[K", 3);
	status_shown = true;
}
