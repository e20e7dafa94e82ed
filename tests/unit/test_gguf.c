// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: the GGUF header reader on files written by the test, whose
 * facts are known by construction, and on corrupt ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gguf.h"

struct buf {
	unsigned char d[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void str(struct buf *b, const char *s)
{
	u64(b, strlen(s));
	put(b, s, strlen(s));
}

static void kv_u32(struct buf *b, const char *k, uint32_t v)
{
	str(b, k);
	u32(b, 4);
	u32(b, v);
}

static void tensor(struct buf *b, const char *name, uint64_t d0, uint64_t d1)
{
	str(b, name);
	u32(b, 2);
	u64(b, d0);
	u64(b, d1);
	u32(b, 0);
	u64(b, 0);
}

/* arch llama, Q4_K_M, 3 layers, embd 64, ctx 2048, a string array to skip,
 * tensors 64x100 and 64x64: 10496 parameters */
static void model(struct buf *b)
{
	b->n = 0;
	put(b, "GGUF", 4);
	u32(b, 3);
	u64(b, 2);
	u64(b, 7);
	str(b, "general.architecture");
	u32(b, 8);
	str(b, "llama");
	kv_u32(b, "general.file_type", 15);
	str(b, "tokenizer.ggml.tokens");
	u32(b, 9);
	u32(b, 8);
	u64(b, 2);
	str(b, "<s>");
	str(b, "</s>");
	kv_u32(b, "llama.block_count", 3);
	kv_u32(b, "llama.embedding_length", 64);
	kv_u32(b, "llama.context_length", 2048);
	str(b, "general.name");
	u32(b, 8);
	str(b, "test");
	tensor(b, "token_embd.weight", 64, 100);
	tensor(b, "output.weight", 64, 64);
}

static char *write_tmp(const struct buf *b, size_t n)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/test_gguf_XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->d, n), (ssize_t)n);
	close(fd);
	return path;
}

static void test_facts(void **state)
{
	struct buf b;
	struct gguf_facts f;
	char err[256], *path;

	(void)state;
	model(&b);
	path = write_tmp(&b, b.n);
	assert_int_equal(gguf__read(path, &f, err, sizeof(err)), 0);
	assert_string_equal(f.arch, "llama");
	assert_true(f.has_file_type);
	assert_int_equal(f.file_type, 15);
	assert_string_equal(gguf__file_type_name(f.file_type), "Q4_K_M");
	assert_int_equal(f.n_layer, 3);
	assert_int_equal(f.n_embd, 64);
	assert_int_equal(f.n_ctx_train, 2048);
	assert_int_equal(f.n_tensors, 2);
	assert_int_equal(f.n_params, 64 * 100 + 64 * 64);
	assert_int_equal(f.size_bytes, b.n);
	unlink(path);
}

static void test_corrupt(void **state)
{
	struct buf b;
	struct gguf_facts f;
	char err[256], *path;

	(void)state;
	/* every truncation is refused, never read past */
	model(&b);
	for (size_t n = 0; n < b.n; n += 7) {
		path = write_tmp(&b, n);
		assert_int_equal(gguf__read(path, &f, err, sizeof(err)), -22);
		unlink(path);
	}
	/* a string length far past the end */
	model(&b);
	memset(b.d + 24, 0xff, 8);
	path = write_tmp(&b, b.n);
	assert_int_equal(gguf__read(path, &f, err, sizeof(err)), -22);
	unlink(path);
	/* not GGUF */
	memcpy(b.d, "GGML", 4);
	path = write_tmp(&b, b.n);
	assert_int_equal(gguf__read(path, &f, err, sizeof(err)), -22);
	assert_non_null(strstr(err, "not a GGUF file"));
	unlink(path);
	assert_true(gguf__read("/nonexistent.gguf", &f, err, sizeof(err)) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts),
		cmocka_unit_test(test_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
