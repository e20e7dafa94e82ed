// SPDX-License-Identifier: BSD-2-Clause
/* The one escaping rule for text from a target (user/lib/text.c): valid
 * UTF-8 out, control bytes harmless on a terminal, the bytes recoverable. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "text.h"

/* The inverse of the rule: every \xHH back to its byte. */
static size_t unescape(const char *in, char *out)
{
	size_t o = 0;

	for (size_t i = 0; in[i];) {
		if (in[i] == '\\' && in[i + 1] == 'x' && in[i + 2] && in[i + 3]) {
			char hex[3] = { in[i + 2], in[i + 3], 0 };

			out[o++] = (char)strtoul(hex, NULL, 16);
			i += 4;
		} else {
			out[o++] = in[i++];
		}
	}
	out[o] = 0;
	return o;
}

static void test_rule(void **st)
{
	static const char *const cases[] = {
		"plain", "caf\xc3\xa9", "evil\x1b[31m", "\xff\xfe", "a\\xff", "C:\\path", "\xc2\x9b" "2J",
		"\xe2\x82", "tab\there", "\xed\xa0\x80",
	};
	char out[256], back[256];
	char *e;

	(void)st;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e = text__escaped(cases[i], TEXT_CONTROLS | TEXT_BACKSLASH);
		assert_non_null(e);
		for (const unsigned char *p = (const unsigned char *)e; *p; p++)
			assert_true(*p >= 0x20 && *p != 0x7f);
		for (size_t j = 0; e[j]; j += text__utf8_len((const unsigned char *)e + j, strlen(e + j)))
			assert_true(text__utf8_len((const unsigned char *)e + j, strlen(e + j)) > 0);
		unescape(e, back);
		assert_string_equal(back, cases[i]);
		free(e);
	}
	e = text__escaped("evil\x1b[31m\xff\xfe", TEXT_BACKSLASH);
	assert_string_equal(e, "evil\x1b[31m\\xFF\\xFE"); /* controls stay valid UTF-8 for JSON */
	free(e);
	e = text__escaped("a\\xb\\y", TEXT_BACKSLASH);
	assert_string_equal(e, "a\\x5Cxb\\y");
	free(e);
	assert_false(text__needs_escape("caf\xc3\xa9 \\n", 8, TEXT_CONTROLS));
	assert_true(text__needs_escape("\xff", 1, 0));
	/* a cut never splits an escape */
	assert_int_equal(text__escape("ab\xff", 3, 0, out, 5), 6);
	assert_string_equal(out, "ab");
	assert_string_equal(text__term("x\ny\x1b", out, sizeof(out)), "x\\x0Ay\\x1B");
	assert_int_equal(text__escape("x\ny\tz", 5, TEXT_CONTROLS | TEXT_KEEP_NEWLINE, out, sizeof(out)), 5);
}

/* Whole frames from the leaf, as many as fit; the leaf alone when longer. */
static void test_leaf_frames(void **st)
{
	const char *s = "main;run_cycle;forward;gemm<4, 3>(long, long)";

	(void)st;
	assert_string_equal(text__leaf_frames(s, 100), s);
	assert_string_equal(text__leaf_frames(s, 30), "forward;gemm<4, 3>(long, long)");
	assert_string_equal(text__leaf_frames(s, 29), "gemm<4, 3>(long, long)");
	assert_string_equal(text__leaf_frames(s, 5), "gemm<4, 3>(long, long)");
	assert_string_equal(text__leaf_frames("leaf_only_and_long", 4), "leaf_only_and_long");
}

/* A figure, or a dash as wide: never `nan` nor `inf`. */
static void test_figure(void **st)
{
	char b[16];

	(void)st;
	assert_string_equal(text__figure(b, sizeof(b), 1.25, 0, 1), "1.2");
	assert_string_equal(text__figure(b, sizeof(b), 42, 6, 2), " 42.00");
	assert_string_equal(text__figure(b, sizeof(b), NAN, 6, 2), "     -");
	assert_string_equal(text__figure(b, sizeof(b), INFINITY, 0, 2), "-");
	assert_string_equal(text__figure(b, 4, 12345.678, 0, 1), "123"); /* cut to the buffer */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_leaf_frames),
		cmocka_unit_test(test_figure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
