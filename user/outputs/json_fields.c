// SPDX-License-Identifier: BSD-2-Clause
/* The table walker of json_fields.h: one writer and one reader for every
 * table. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_fields.h"
#include "json_text.h"
#include "vec.h"

/* The layout of every JF_VEC and JF_MAP member. */
struct jf_vec {
	void *v;
	size_t n, cap;
};

/* a member of a struct by its offset (through void *: any member type) */
#define AT(base, off) ((void *)((char *)(base) + (off)))
#define CAT(base, off) ((const void *)((const char *)(base) + (off)))

static bool gate(const struct jf_field *f, const void *base)
{
	return !f->when || *(const bool *)CAT(base, f->when - 1);
}

/* The element's one value, when its table describes a bare value. */
static const struct jf_field *bare(const struct jf_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->f[i].key && t->f[i].kind != JF_OBJ && t->f[i].kind != JF_KEY && t->f[i].kind != JF_FN)
			return &t->f[i];
	return NULL;
}

static bool empty(const struct jf_table *t, const void *base);
/* A JF_ARRAY's count (the field's base is p - off). */
static size_t *array_count(const struct jf_field *f, const void *p)
{
	return (size_t *)AT((char *)p - f->off, f->count);
}


static bool value_empty(const struct jf_field *f, const void *p)
{
	switch (f->kind) {
	case JF_REAL:
		return !isfinite(*(const double *)p);
	case JF_U64:
		return !*(const uint64_t *)p;
	case JF_U32:
		return !*(const uint32_t *)p;
	case JF_I64:
		return f->flags & JF_NEG ? *(const int64_t *)p < 0 : !*(const int64_t *)p;
	case JF_INT:
		return !*(const int *)p;
	case JF_BOOL:
		return !*(const bool *)p;
	case JF_CHARS:
		return !*(const char *)p;
	case JF_STR:
		return !*(char *const *)p || !**(char *const *)p;
	case JF_NAME:
		return *(const int32_t *)p < 0;
	case JF_OBJ:
		return empty(f->sub, p);
	case JF_VEC:
	case JF_MAP:
		return !((const struct jf_vec *)p)->n;
	case JF_ARRAY:
		return !*array_count(f, p);
	default:
		return false;
	}
}


/* Every field empty (or not written): an object of nothing. */
static bool empty(const struct jf_table *t, const void *base)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jf_field *f = &t->f[i];

		if (f->kind == JF_KEY || f->kind == JF_FN || !gate(f, base))
			continue;
		if (!value_empty(f, CAT(base, f->off)))
			return false;
	}
	return true;
}

static json_t *string_value(const char *s, unsigned flags)
{
	if (s && *s)
		return json_string(s); /* NULL (left out) when not UTF-8 */
	return flags & JF_NULL ? json_null() : json_string("");
}

static json_t *element_json(const struct jf_table *t, const void *e, const void *ctx);

/* The value of a field; NULL: left out (or ENOMEM, *err set). */
static json_t *value_json(const struct jf_field *f, const void *p, int *err, const void *ctx)
{
	json_t *o = NULL;

	if ((f->flags & JF_OMIT) && value_empty(f, p))
		return NULL;
	if ((f->flags & JF_NULL) && f->kind != JF_CHARS && f->kind != JF_STR && value_empty(f, p))
		return json_null();
	switch (f->kind) {
	case JF_REAL: {
		double v = *(const double *)p;

		return isfinite(v) ? json_real(v) : json_null();
	}
	case JF_U64:
		return json_integer((json_int_t) * (const uint64_t *)p);
	case JF_U32:
		return json_integer(*(const uint32_t *)p);
	case JF_I64:
		return json_integer((json_int_t) * (const int64_t *)p);
	case JF_INT:
		return json_integer(*(const int *)p);
	case JF_BOOL:
		return json_boolean(*(const bool *)p);
	case JF_CHARS:
		return string_value(p, f->flags);
	case JF_STR:
		return string_value(*(char *const *)p, f->flags);
	case JF_NAME: {
		const char *n = *(const int32_t *)p >= 0 ? f->names->name(ctx, *(const int32_t *)p) : NULL;

		return n ? json_text(n) : json_null();
	}
	case JF_OBJ:
		o = json_object();
		if (!o || jf_write(f->sub, p, o, ctx))
			goto nomem;
		return o;
	case JF_VEC: {
		const struct jf_vec *v = p;

		if (!(o = json_array()))
			goto nomem;
		for (size_t i = 0; i < v->n; i++) {
			json_t *e = element_json(f->sub, CAT(v->v, i * f->sub->size), ctx);

			if (!e || json_array_append_new(o, e))
				goto nomem;
		}
		return o;
	}
	case JF_ARRAY: {
		size_t n = *array_count(f, p);

		if (!(o = json_array()))
			goto nomem;
		for (size_t i = 0; i < n && i < f->size / f->sub->size; i++) {
			json_t *e = element_json(f->sub, CAT(p, i * f->sub->size), ctx);

			if (!e || json_array_append_new(o, e))
				goto nomem;
		}
		return o;
	}
	case JF_MAP: {
		const struct jf_vec *v = p;
		const struct jf_field *key = NULL;

		for (size_t i = 0; i < f->sub->n; i++)
			if (f->sub->f[i].kind == JF_KEY)
				key = &f->sub->f[i];
		if (!key || !(o = json_object()))
			goto nomem;
		for (size_t i = 0; i < v->n; i++) {
			const char *e = CAT(v->v, i * f->sub->size);
			json_t *x = element_json(f->sub, e, ctx);

			if (!x || json_object_set_new(o, (const char *)CAT(e, key->off), x))
				json_decref(x); /* a key that is not UTF-8 is left out */
		}
		return o;
	}
	default:
		return NULL;
	}
nomem:
	json_decref(o);
	*err = -ENOMEM;
	return NULL;
}

static json_t *element_json(const struct jf_table *t, const void *e, const void *ctx)
{
	const struct jf_field *b = bare(t);
	int err = 0;

	if (b) {
		json_t *v = value_json(b, CAT(e, b->off), &err, ctx);

		return v ? v : err ? NULL : json_null();
	}
	return jf_object(t, e, ctx);
}

int jf_write(const struct jf_table *t, const void *base, json_t *o, const void *ctx)
{
	int err = 0;

	for (size_t i = 0; i < t->n && !err; i++) {
		const struct jf_field *f = &t->f[i];
		json_t *v;

		if (f->kind == JF_KEY || !gate(f, base))
			continue;
		if (f->kind == JF_FN) {
			if (f->write)
				err = f->write(base, f->key, o, ctx);
			continue;
		}
		if (!f->key) {
			if (f->kind == JF_OBJ)
				err = jf_write(f->sub, CAT(base, f->off), o, ctx);
			continue;
		}
		v = value_json(f, CAT(base, f->off), &err, ctx);
		if (v)
			json_object_set_new(o, f->key, v);
	}
	return err;
}

json_t *jf_object(const struct jf_table *t, const void *base, const void *ctx)
{
	json_t *o = json_object();

	if (o && jf_write(t, base, o, ctx)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- reading ---- */

/* NAN in every JF_REAL (the struct is zeroed already). */
static void init_fields(const struct jf_table *t, void *base)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jf_field *f = &t->f[i];

		if (f->kind == JF_REAL)
			*(double *)AT(base, f->off) = f->flags & JF_ZERO ? 0 : NAN;
		else if (f->kind == JF_NAME)
			*(int32_t *)AT(base, f->off) = -1;
		else if (f->kind == JF_I64 && (f->flags & JF_NEG))
			*(int64_t *)AT(base, f->off) = -1;
		else if (f->kind == JF_OBJ)
			init_fields(f->sub, AT(base, f->off));
	}
}

static bool any_key(const struct jf_table *t, json_t *o)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jf_field *f = &t->f[i];

		if (f->key ? json_object_get(o, f->key) != NULL : f->kind == JF_OBJ && any_key(f->sub, o))
			return true;
	}
	return false;
}

static int read_fields(const struct jf_table *t, void *base, json_t *o, void *ctx);

static int read_value(const struct jf_field *f, void *p, json_t *v, void *ctx);

static int read_element(const struct jf_table *t, void *e, json_t *v, void *ctx)
{
	const struct jf_field *b = bare(t);

	memset(e, 0, t->size);
	init_fields(t, e);
	return b ? read_value(b, AT(e, b->off), v, ctx) : read_fields(t, e, v, ctx);
}

static int read_value(const struct jf_field *f, void *p, json_t *v, void *ctx)
{
	switch (f->kind) {
	case JF_REAL:
		*(double *)p = json_is_number(v) ? json_number_value(v) : f->flags & JF_ZERO ? 0 : NAN;
		return 0;
	case JF_U64:
		/* a real out of uint64_t's range would make the cast undefined */
		*(uint64_t *)p = json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) :
				 json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 0x1p64 ?
				 (uint64_t)json_real_value(v) : 0;
		return 0;
	case JF_U32: {
		double d = json_is_number(v) ? json_number_value(v) : NAN;

		*(uint32_t *)p = d > 0 && d <= UINT32_MAX ? (uint32_t)d : 0;
		return 0;
	}
	case JF_I64:
		*(int64_t *)p = json_is_integer(v) ? (int64_t)json_integer_value(v) :
				json_is_real(v) && fabs(json_real_value(v)) < 0x1p63 ? (int64_t)json_real_value(v) :
				f->flags & JF_NEG ? -1 : 0;
		return 0;
	case JF_INT: {
		double d = json_is_number(v) ? json_number_value(v) : NAN;

		*(int *)p = d >= INT_MIN && d <= INT_MAX ? (int)d : 0;
		return 0;
	}
	case JF_BOOL:
		*(bool *)p = json_is_true(v);
		return 0;
	case JF_CHARS:
		snprintf(p, f->size, "%s", json_is_string(v) ? json_string_value(v) : "");
		return 0;
	case JF_STR:
		free(*(char **)p);
		*(char **)p = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
		return json_is_string(v) && !*(char **)p ? -ENOMEM : 0;
	case JF_NAME:
		*(int32_t *)p = json_is_string(v) ? f->names->intern(ctx, json_string_value(v)) : -1;
		return json_is_string(v) && *(int32_t *)p < 0 ? -ENOMEM : 0;
	case JF_OBJ:
		return read_fields(f->sub, p, v, ctx);
	case JF_VEC: {
		struct jf_vec *vec = p;
		json_t *x;
		size_t i;

		json_array_foreach(v, i, x) {
			int err;

			if (vec__reserve(&vec->v, &vec->cap, vec->n, f->sub->size, 8))
				return -ENOMEM;
			err = read_element(f->sub, AT(vec->v, vec->n++ * f->sub->size), x, ctx);
			if (err)
				return err;
		}
		return 0;
	}
	case JF_ARRAY: {
		size_t *n = array_count(f, p);
		json_t *x;
		size_t i;

		json_array_foreach(v, i, x) {
			int err;

			if (*n >= f->size / f->sub->size)
				break;
			err = read_element(f->sub, AT(p, (*n)++ * f->sub->size), x, ctx);
			if (err)
				return err;
		}
		return 0;
	}
	case JF_MAP: {
		struct jf_vec *vec = p;
		const struct jf_field *key = NULL;
		const char *k;
		json_t *x;

		for (size_t i = 0; i < f->sub->n; i++)
			if (f->sub->f[i].kind == JF_KEY)
				key = &f->sub->f[i];
		if (!key || !json_is_object(v))
			return 0;
		json_object_foreach(v, k, x) {
			char *e;
			int err;

			if (vec__reserve(&vec->v, &vec->cap, vec->n, f->sub->size, 8))
				return -ENOMEM;
			e = AT(vec->v, vec->n++ * f->sub->size);
			err = read_element(f->sub, e, x, ctx);
			snprintf((char *)AT(e, key->off), key->size, "%s", k);
			if (err)
				return err;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int read_fields(const struct jf_table *t, void *base, json_t *o, void *ctx)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jf_field *f = &t->f[i];
		json_t *v = f->key ? json_object_get(o, f->key) : o;
		int err;

		if (f->kind == JF_KEY || ((f->flags & JF_KEEP) && !v))
			continue;
		if (f->kind == JF_FN) {
			if (f->when && f->key && v) /* written only when..., so it was */
				*(bool *)AT(base, f->when - 1) = true;
			err = f->read ? f->read(base, f->key, o, ctx) : 0;
			if (err)
				return err;
			continue;
		}
		if (f->when) {
			if (f->key ? !v : !(f->kind == JF_OBJ && any_key(f->sub, o)))
				continue;
			*(bool *)AT(base, f->when - 1) = true;
		}
		err = read_value(f, AT(base, f->off), v, ctx);
		if (err)
			return err;
	}
	return 0;
}

int jf_read(const struct jf_table *t, void *base, json_t *o, void *ctx)
{
	memset(base, 0, t->size);
	init_fields(t, base);
	return read_fields(t, base, json_is_object(o) ? o : NULL, ctx);
}

int jf_read_into(const struct jf_table *t, void *base, json_t *o, void *ctx)
{
	return read_fields(t, base, json_is_object(o) ? o : NULL, ctx);
}

bool jf_claims(const struct jf_table *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jf_field *f = &t->f[i];

		if (f->key ? !strcmp(f->key, key) : f->kind == JF_OBJ && jf_claims(f->sub, key))
			return true;
	}
	return false;
}
