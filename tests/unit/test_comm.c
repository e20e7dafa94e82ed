// SPDX-License-Identifier: BSD-2-Clause
/* Process names made valid UTF-8 (user/core/comm.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "comm.h"

static void check(const char *in, const char *want)
{
	char buf[64];

	strcpy(buf, in);
	comm__sanitize(buf);
	assert_string_equal(buf, want);
}

static void test_valid_unchanged(void **st)
{
	(void)st;
	check("python3", "python3");
	check("a) b (c", "a) b (c");
	check("caf\xc3\xa9", "caf\xc3\xa9");           /* é */
	check("\xe2\x82\xac", "\xe2\x82\xac");         /* € */
	check("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"); /* emoji */
	check("", "");
}

static void test_invalid_replaced(void **st)
{
	(void)st;
	check("\xff\xfe", "??");
	check("a\x80z", "a?z");
	check("caf\xc3", "caf?");          /* truncated by the kernel's 16 bytes */
	check("\xc0\xaf", "??");           /* overlong '/' */
	check("\xed\xa0\x80", "???");      /* a surrogate */
	check("\xf4\x90\x80\x80", "????"); /* beyond U+10FFFF */
	check("tab\there\x7f", "tab?here?");
	check("\xe2\x82z", "??z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_unchanged),
		cmocka_unit_test(test_invalid_replaced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
