// SPDX-License-Identifier: BSD-2-Clause
/* A small GGUF header reader (format: ggml's docs/gguf.md): magic, version
 * 2 or 3, tensor and key-value counts, the key-value pairs (values skipped
 * unless wanted), then the tensor infos, whose shapes give the parameter
 * count. Every length is checked against the file's size before it is
 * used, so a corrupt file is refused instead of read past. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gguf.h"
#include "safe_open.h"

enum {
	T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STRING, T_ARRAY, T_U64, T_I64, T_F64,
	T_NTYPES
};
static const int type_size[T_NTYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

#define MAX_STRING (1u << 20)
#define MAX_DIMS 4 /* GGML_MAX_DIMS */

struct rd {
	FILE *f;
	uint64_t size;
	const char *what;
};

static int get(struct rd *r, void *p, size_t n)
{
	if (fread(p, 1, n, r->f) != n) {
		r->what = "truncated";
		return -EINVAL;
	}
	return 0;
}

static int skip(struct rd *r, uint64_t n)
{
	off_t at = ftello(r->f);

	if (at < 0 || n > r->size || (uint64_t)at + n > r->size || fseeko(r->f, (off_t)n, SEEK_CUR)) {
		r->what = "a length past the end of the file";
		return -EINVAL;
	}
	return 0;
}

/* A string into buf (truncated to bufsz - 1), or skipped when buf is NULL. */
static int string(struct rd *r, char *buf, size_t bufsz)
{
	uint64_t n;
	int err = get(r, &n, sizeof(n));

	if (err)
		return err;
	if (n > MAX_STRING) {
		r->what = "a string longer than 1 MiB";
		return -EINVAL;
	}
	if (!buf)
		return skip(r, n);
	size_t keep = n < bufsz - 1 ? n : bufsz - 1;

	if ((err = get(r, buf, keep)))
		return err;
	buf[keep] = 0;
	return skip(r, n - keep);
}

static int skip_value(struct rd *r, uint32_t type, int depth)
{
	uint32_t et;
	uint64_t n;
	int err;

	if (type >= T_NTYPES) {
		r->what = "an unknown value type";
		return -EINVAL;
	}
	if (type == T_STRING)
		return string(r, NULL, 0);
	if (type != T_ARRAY)
		return skip(r, type_size[type]);
	if (depth > 2) {
		r->what = "arrays nested too deep";
		return -EINVAL;
	}
	if ((err = get(r, &et, sizeof(et))) || (err = get(r, &n, sizeof(n))))
		return err;
	if (n > r->size) {
		r->what = "an array longer than the file";
		return -EINVAL;
	}
	if (et < T_NTYPES && type_size[et])
		return n > r->size / type_size[et] ? (r->what = "an array longer than the file", -EINVAL)
						   : skip(r, n * type_size[et]);
	for (uint64_t i = 0; i < n; i++)
		if ((err = skip_value(r, et, depth + 1)))
			return err;
	return 0;
}

/* An integer value of any integer type; other types are skipped. */
static int int_value(struct rd *r, uint32_t type, int64_t *v, bool *got)
{
	union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; uint64_t u64;
		int64_t i64; } x = {};
	int err;

	*got = false;
	if (type >= T_NTYPES || !type_size[type] || type == T_F32 || type == T_F64 || type == T_BOOL)
		return skip_value(r, type, 0);
	if ((err = get(r, &x, type_size[type])))
		return err;
	switch (type) {
	case T_U8: *v = x.u8; break;
	case T_I8: *v = x.i8; break; // NOLINT(bugprone-signed-char-misuse): GGUF's i8 is signed
	case T_U16: *v = x.u16; break;
	case T_I16: *v = x.i16; break;
	case T_U32: *v = x.u32; break;
	case T_I32: *v = x.i32; break;
	case T_U64: *v = (int64_t)x.u64; break;
	default: *v = x.i64; break;
	}
	*got = true;
	return 0;
}

/* ARCH.suffix when the architecture is known by then (it is the first key
 * in files llama.cpp writes); otherwise any *.suffix key. */
static bool arch_key(const char *key, const char *arch, const char *suffix)
{
	size_t a = strlen(arch), k = strlen(key), s = strlen(suffix);

	if (*arch)
		return k == a + 1 + s && !strncmp(key, arch, a) && key[a] == '.' && !strcmp(key + a + 1, suffix);
	return k > s + 1 && key[k - s - 1] == '.' && !strcmp(key + k - s, suffix) && !memchr(key, '.', k - s - 1);
}

static int read_kvs(struct rd *r, struct gguf_facts *f, uint64_t n_kv)
{
	char key[256];
	uint32_t type;
	int64_t v;
	bool got;
	int err;

	for (uint64_t i = 0; i < n_kv; i++) {
		if ((err = string(r, key, sizeof(key))) || (err = get(r, &type, sizeof(type))))
			return err;
		if (!strcmp(key, "general.architecture") && type == T_STRING) {
			err = string(r, f->arch, sizeof(f->arch));
		} else if (!strcmp(key, "general.file_type")) {
			err = int_value(r, type, &v, &got);
			if (got && v >= 0) {
				f->has_file_type = true;
				f->file_type = (uint32_t)v;
			}
		} else if (arch_key(key, f->arch, "block_count")) {
			err = int_value(r, type, &v, &got);
			if (got)
				f->n_layer = v;
		} else if (arch_key(key, f->arch, "embedding_length")) {
			err = int_value(r, type, &v, &got);
			if (got)
				f->n_embd = v;
		} else if (arch_key(key, f->arch, "context_length")) {
			err = int_value(r, type, &v, &got);
			if (got)
				f->n_ctx_train = v;
		} else {
			err = skip_value(r, type, 0);
		}
		if (err)
			return err;
	}
	return 0;
}

static int read_tensors(struct rd *r, struct gguf_facts *f)
{
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		uint32_t nd, type;
		uint64_t dims[MAX_DIMS], n = 1, off;
		int err;

		if ((err = string(r, NULL, 0)) || (err = get(r, &nd, sizeof(nd))))
			return err;
		if (nd > MAX_DIMS) {
			r->what = "a tensor with more than 4 dimensions";
			return -EINVAL;
		}
		if ((err = get(r, dims, nd * sizeof(dims[0]))) || (err = get(r, &type, sizeof(type))) ||
		    (err = get(r, &off, sizeof(off))))
			return err;
		for (uint32_t d = 0; d < nd; d++) {
			if (dims[d] && n > UINT64_MAX / dims[d]) {
				r->what = "a tensor shape that overflows";
				return -EINVAL;
			}
			n *= dims[d];
		}
		f->n_params += n;
	}
	return 0;
}

int gguf__read(const char *path, struct gguf_facts *f, char *err, size_t errlen)
{
	struct rd r = { .what = "not a GGUF file" };
	uint64_t n_kv;
	char magic[4];
	struct stat st;
	int e;

	memset(f, 0, sizeof(*f));
	f->n_layer = f->n_embd = f->n_ctx_train = -1;
	r.f = safe_fopen_regular(path);
	if (!r.f) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e ? e : -EINVAL;
	}
	if (fstat(fileno(r.f), &st)) {
		e = -errno;
		goto fail_errno;
	}
	r.size = f->size_bytes = (uint64_t)st.st_size;
	e = get(&r, magic, 4);
	if (!e && memcmp(magic, "GGUF", 4))
		e = -EINVAL, r.what = "not a GGUF file";
	if (!e)
		e = get(&r, &f->version, sizeof(f->version));
	if (!e && (f->version < 2 || f->version > 3))
		e = -EINVAL, r.what = "an unsupported GGUF version";
	if (!e)
		e = get(&r, &f->n_tensors, sizeof(f->n_tensors));
	if (!e)
		e = get(&r, &n_kv, sizeof(n_kv));
	/* every tensor info and key-value pair takes more than 8 bytes */
	if (!e && (f->n_tensors > r.size / 8 || n_kv > r.size / 8))
		e = -EINVAL, r.what = "counts larger than the file";
	if (!e)
		e = read_kvs(&r, f, n_kv);
	if (!e)
		e = read_tensors(&r, f);
	fclose(r.f);
	if (e)
		snprintf(err, errlen, "%s: %s", path, r.what);
	return e;
fail_errno:
	snprintf(err, errlen, "%s: %s", path, strerror(-e));
	fclose(r.f);
	return e;
}

static const struct { uint32_t id; const char *name; double bits; } ftypes[] = {
	{ 0, "F32", 32 }, { 1, "F16", 16 }, { 2, "Q4_0", 4.5 }, { 3, "Q4_1", 5 }, { 7, "Q8_0", 8.5 },
	{ 8, "Q5_0", 5.5 }, { 9, "Q5_1", 6 }, { 10, "Q2_K", 2.96 }, { 11, "Q3_K_S", 3.5 }, { 12, "Q3_K_M", 3.91 },
	{ 13, "Q3_K_L", 4.27 }, { 14, "Q4_K_S", 4.58 }, { 15, "Q4_K_M", 4.89 }, { 16, "Q5_K_S", 5.54 },
	{ 17, "Q5_K_M", 5.7 }, { 18, "Q6_K", 6.56 }, { 19, "IQ2_XXS", 2.06 }, { 20, "IQ2_XS", 2.31 },
	{ 21, "Q2_K_S", 2.79 }, { 22, "IQ3_XS", 3.3 }, { 23, "IQ3_XXS", 3.06 }, { 24, "IQ1_S", 1.56 },
	{ 25, "IQ4_NL", 4.5 }, { 26, "IQ3_S", 3.44 }, { 27, "IQ3_M", 3.66 }, { 28, "IQ2_S", 2.5 },
	{ 29, "IQ2_M", 2.7 }, { 30, "IQ4_XS", 4.25 }, { 31, "IQ1_M", 1.75 }, { 32, "BF16", 16 },
	{ 36, "TQ1_0", 1.69 }, { 37, "TQ2_0", 2.06 },
};

const char *gguf__file_type_name(uint32_t t)
{
	for (size_t i = 0; i < sizeof(ftypes) / sizeof(ftypes[0]); i++)
		if (ftypes[i].id == t)
			return ftypes[i].name;
	return NULL;
}

double gguf__file_type_bits(uint32_t t)
{
	for (size_t i = 0; i < sizeof(ftypes) / sizeof(ftypes[0]); i++)
		if (ftypes[i].id == t)
			return ftypes[i].bits;
	return 0;
}
