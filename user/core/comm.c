// SPDX-License-Identifier: BSD-2-Clause
#include <stddef.h>

#include "comm.h"
#include "text.h"

void comm__sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		int n = text__utf8_len(p, 4);

		if (!n || *p < 0x20 || *p == 0x7f) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}
