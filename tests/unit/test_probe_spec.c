// SPDX-License-Identifier: BSD-2-Clause
/* Probe spec parsing and library-name matching (user/probes/probe_spec.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "probe_spec.h"

static void parse_ok(const char *text, struct probe_spec *s)
{
	char err[256] = "";

	assert_int_equal(probe_spec__parse(text, s, err, sizeof(err)), 0);
	assert_string_equal(s->text, text);
}

static void parse_bad(const char *text, const char *needle)
{
	struct probe_spec s;
	char err[256] = "";

	assert_int_equal(probe_spec__parse(text, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, needle));
	assert_null(strchr(err, '\n')); /* one line */
	assert_null(s.symbol);
}

static void test_symbol_only(void **st)
{
	struct probe_spec s;

	(void)st;
	parse_ok("run_cycle", &s);
	assert_int_equal(s.kind, SPEC_FUNCTION);
	assert_null(s.object);
	assert_string_equal(s.symbol, "run_cycle");
	assert_false(probe_spec__object_is_path(&s));
	probe_spec__free(&s);
}

static void test_library_and_path(void **st)
{
	struct probe_spec s;

	(void)st;
	parse_ok("libllama:llama_decode", &s);
	assert_string_equal(s.object, "libllama");
	assert_string_equal(s.symbol, "llama_decode");
	assert_false(probe_spec__object_is_path(&s));
	probe_spec__free(&s);
	parse_ok("/opt/x/libfoo.so.1:foo_run", &s);
	assert_string_equal(s.object, "/opt/x/libfoo.so.1");
	assert_string_equal(s.symbol, "foo_run");
	assert_true(probe_spec__object_is_path(&s));
	probe_spec__free(&s);
}

static void test_cxx_symbols(void **st)
{
	struct probe_spec s;

	(void)st;
	parse_ok("ns::Klass::method", &s);
	assert_null(s.object);
	assert_string_equal(s.symbol, "ns::Klass::method");
	probe_spec__free(&s);
	parse_ok("libllama:llama_context::decode", &s);
	assert_string_equal(s.object, "libllama");
	assert_string_equal(s.symbol, "llama_context::decode");
	probe_spec__free(&s);
	parse_ok("./libx.so:a::b::c", &s);
	assert_string_equal(s.object, "./libx.so");
	assert_string_equal(s.symbol, "a::b::c");
	probe_spec__free(&s);
}

static void test_usdt_forms(void **st)
{
	struct probe_spec s;

	(void)st;
	parse_ok("usdt:libpython3.11:python:function__entry", &s);
	assert_int_equal(s.kind, SPEC_USDT);
	assert_string_equal(s.object, "libpython3.11");
	assert_string_equal(s.provider, "python");
	assert_string_equal(s.symbol, "function__entry");
	assert_null(s.usdt_end);
	probe_spec__free(&s);
	parse_ok("usdt:/usr/bin/app:app:db_begin:db_end", &s);
	assert_string_equal(s.object, "/usr/bin/app");
	assert_string_equal(s.provider, "app");
	assert_string_equal(s.symbol, "db_begin");
	assert_string_equal(s.usdt_end, "db_end");
	assert_true(probe_spec__object_is_path(&s));
	probe_spec__free(&s);
}

static void test_errors(void **st)
{
	(void)st;
	parse_bad("", "empty");
	parse_bad("lib:", "bad probe spec");
	parse_bad(":sym", "bad probe spec");
	parse_bad("a:b:c", "bad probe spec");
	parse_bad("lib:has space", "bad probe spec");
	parse_bad("lib:a=b", "bad probe spec");
	parse_bad("usdt:obj", "bad USDT spec");
	parse_bad("usdt:obj:prov", "bad USDT spec");
	parse_bad("usdt:a:b:c:d:e", "bad USDT spec");
}

static void test_name_matching(void **st)
{
	(void)st;
	assert_true(probe_spec__name_matches("libllama", "/usr/lib/libllama.so"));
	assert_true(probe_spec__name_matches("libllama", "/usr/lib/libllama.so.1"));
	assert_true(probe_spec__name_matches("libllama", "/x/libllama.v0.5.0.so"));
	assert_true(probe_spec__name_matches("libggml-cpu", "/x/libggml-cpu-haswell.so"));
	assert_true(probe_spec__name_matches("libsqlite3", "/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6"));
	assert_true(probe_spec__name_matches("libsqlite3.so.0", "/lib/libsqlite3.so.0"));
	assert_true(probe_spec__name_matches("exp_shared", "/build/exp_shared"));
	/* a prefix of another name is not a match */
	assert_false(probe_spec__name_matches("libllama", "/usr/lib/libllamafile.so"));
	assert_false(probe_spec__name_matches("libsql", "/lib/libsqlite3.so.0"));
	/* only the basename is compared */
	assert_false(probe_spec__name_matches("libllama", "/libllama/libother.so"));
}

static void test_symbol_lookup_errors(void **st)
{
	uint64_t off;

	(void)st;
	assert_int_equal(elf_symbol_offset("/nonexistent/lib.so", "f", &off), -ENOENT);
	assert_int_equal(elf_has_usdt("/nonexistent/lib.so", "p", "n"), -ENOENT);
	/* not an ELF file */
	assert_true(elf_symbol_offset("/etc/hostname", "f", &off) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbol_only),
		cmocka_unit_test(test_library_and_path),
		cmocka_unit_test(test_cxx_symbols),
		cmocka_unit_test(test_usdt_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_name_matching),
		cmocka_unit_test(test_symbol_lookup_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
