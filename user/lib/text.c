// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int text__utf8_len(const unsigned char *s, size_t n)
{
	unsigned int cp;
	size_t len;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return (int)len;
}

/* How many bytes at s[i] form one unit, and whether it is written as \xHH. */
static int unit(const unsigned char *s, size_t i, size_t n, unsigned flags, bool *esc)
{
	int len = text__utf8_len(s + i, n - i);

	*esc = !len || ((flags & TEXT_BACKSLASH) && s[i] == '\\' && i + 1 < n && s[i + 1] == 'x');
	if (!*esc && (flags & TEXT_CONTROLS))
		*esc = (s[i] < 0x20 && !((s[i] == '\n' || s[i] == '\t') && (flags & TEXT_KEEP_NEWLINE))) || s[i] == 0x7f ||
		       (len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0); /* C1: U+0080-U+009F */
	return *esc ? 1 : len;
}

bool text__needs_escape(const char *in, size_t n, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)in;
	bool esc;

	for (size_t i = 0; i < n; i += unit(s, i, n, flags, &esc))
		if ((void)unit(s, i, n, flags, &esc), esc)
			return true;
	return false;
}

size_t text__escape(const char *in, size_t n, unsigned flags, char *out, size_t cap)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t need = 0, o = 0;
	bool esc, full = !cap;

	for (size_t i = 0; i < n;) {
		int len = unit(s, i, n, flags, &esc);
		size_t w = esc ? 4 : (size_t)len;

		if (!full && o + w < cap) {
			if (esc)
				snprintf(out + o, 5, "\\x%02X", s[i]);
			else
				memcpy(out + o, s + i, len);
			o += w;
		} else {
			full = true;
		}
		need += w;
		i += len;
	}
	if (cap)
		out[o] = 0;
	return need;
}

char *text__escaped(const char *in, unsigned flags)
{
	size_t n = strlen(in), need = text__escape(in, n, flags, NULL, 0);
	char *out = malloc(need + 1);

	if (out)
		text__escape(in, n, flags, out, need + 1);
	return out;
}

const char *text__term(const char *s, char *buf, size_t len)
{
	text__escape(s ? s : "", s ? strlen(s) : 0, TEXT_CONTROLS, buf, len);
	return buf;
}

const char *text__leaf_frames(const char *stack, size_t keep)
{
	size_t len = strlen(stack);
	const char *p;

	if (len <= keep)
		return stack;
	p = stack + len - keep;
	if (p[-1] == ';')
		return p; /* a frame starts right there */
	for (; *p && *p != ';'; p++)
		;
	if (*p)
		return p + 1;
	p = strrchr(stack, ';');
	return p ? p + 1 : stack;
}

const char *text__figure(char *buf, size_t len, double v, int width, int prec)
{
	if (isfinite(v))
		snprintf(buf, len, "%*.*f", width, prec, v);
	else
		snprintf(buf, len, "%*s", width, "-");
	return buf;
}
