// SPDX-License-Identifier: BSD-2-Clause
/* Tables that map a struct to a JSON object and back. One table per
 * section names each field's key, its kind (which says how it is written
 * and read) and when it is written, so profile.json's writer and loader
 * are one description and cannot drift.
 *
 * A table is written with a struct type named JF_T in scope:
 *
 *	#define JF_T struct side_mam
 *	JF_TABLE(mam_table, JF("min", JF_REAL, min), JF("avg", JF_REAL, avg), JF("max", JF_REAL, max));
 *	#undef JF_T
 *
 * Reading is forgiving, as a profile may be older, newer or edited by
 * hand: a missing or mistyped value reads as NAN (numbers that are
 * doubles), 0, false or "" and never fails. */
#ifndef INFERTRACE_JSON_FIELDS_H
#define INFERTRACE_JSON_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum jf_kind {
	JF_REAL,   /* double; NAN and infinities as null */
	JF_U64,    /* uint64_t */
	JF_U32,    /* uint32_t */
	JF_I64,    /* int64_t */
	JF_INT,    /* int */
	JF_BOOL,   /* bool */
	JF_CHARS,  /* char[N]: a string */
	JF_STR,    /* char *, owned (strdup) */
	JF_NAME,   /* int32_t: a string in a table of names (names), -1 none */
	JF_OBJ,    /* a struct (sub); with no key, its keys go into this object */
	JF_VEC,    /* an array: SIDE_VEC-like { T *v; size_t n, cap; } of sub */
	JF_ARRAY,  /* an array: a fixed T member[N] of sub, its count in a size_t (count) */
	JF_MAP,    /* an object of elements of sub keyed by their JF_KEY member */
	JF_KEY,    /* in a JF_MAP element: the char[N] member holding its key */
	JF_FN,     /* written and read by functions of the containing struct */
};

#define JF_OMIT 1u  /* left out when empty: NAN, 0, false, "", no element, an object of nothing */
#define JF_NULL 2u  /* empty written as null: a string "" (or a NULL JF_STR), a number 0 (JF_NEG: below 0) */
#define JF_ZERO 4u  /* a JF_REAL missing (or not a number) reads as 0, not NAN */
#define JF_KEEP 8u  /* missing: the value is left as it was (a default set before) */
#define JF_NEG 16u  /* a JF_I64 below 0 is none: left out with JF_OMIT, read as -1 when missing */

struct jf_table;

/* Where JF_NAME fields keep their strings (ctx: what the caller passed). */
struct jf_names {
	const char *(*name)(const void *ctx, int32_t i); /* NULL: none */
	int32_t (*intern)(void *ctx, const char *s);     /* -1 on ENOMEM */
};

struct jf_field {
	/* NULL: for JF_OBJ, its fields are this object's; in the element
	 * table of a JF_VEC or JF_MAP, the element is this one value */
	const char *key;
	enum jf_kind kind;
	unsigned flags;
	size_t off, size;            /* the member (JF_CHARS: its buffer) */
	size_t when;                 /* 1 + the offset of a bool: written only when it is true
				      * (and set when the key is read); 0: always */
	size_t count;                /* JF_ARRAY: the offset of its size_t count */
	const struct jf_table *sub;  /* JF_OBJ, JF_VEC, JF_MAP */
	const struct jf_names *names; /* JF_NAME */
	/* JF_FN: adds key (or keys) to o / reads them from o; base is the
	 * struct the table describes, ctx what the caller passed along (the
	 * model, whose phase names a cycle's table needs) */
	int (*write)(const void *base, const char *key, json_t *o, const void *ctx);
	int (*read)(void *base, const char *key, json_t *o, void *ctx); /* 0 or -errno: reading stops */
};

struct jf_table {
	const struct jf_field *f;
	size_t n;
	size_t size;                 /* sizeof the struct: the elements of JF_VEC and JF_MAP */
};

#define JF(key_, kind_, member, ...)                                                                    \
	{ .key = (key_), .kind = (kind_), .off = offsetof(JF_T, member),                                \
	  .size = sizeof(((JF_T *)0)->member), __VA_ARGS__ }
#define JF_WHEN(member) .when = offsetof(JF_T, member) + 1
/* A fixed array member with its count member. */
#define JF_ARR(key_, member, n_member, t, ...)                                                         \
	JF(key_, JF_ARRAY, member, .count = offsetof(JF_T, n_member), .sub = &(t), __VA_ARGS__)
/* An object whose fields are the same struct's (a group of its members). */
#define JF_GROUP(key_, t, ...) { .key = (key_), .kind = JF_OBJ, .off = 0, .sub = &(t), __VA_ARGS__ }
#define JF_FNS(key_, w, r) { .key = (key_), .kind = JF_FN, .write = (w), .read = (r) }
#define JF_TABLE(name, ...)                                                                             \
	static const struct jf_field name##__f[] = { __VA_ARGS__ };                                      \
	static const struct jf_table name = { name##__f, sizeof(name##__f) / sizeof(name##__f[0]), sizeof(JF_T) }
/* A table other files name (declared `extern const struct jf_table name;`). */
#define JF_TABLE_PUBLIC(name, ...)                                                                      \
	static const struct jf_field name##__f[] = { __VA_ARGS__ };                                      \
	const struct jf_table name = { name##__f, sizeof(name##__f) / sizeof(name##__f[0]), sizeof(JF_T) }

/* Adds the table's keys to o (ctx: handed to JF_FN fields). 0 or -ENOMEM. */
int jf_write(const struct jf_table *t, const void *base, json_t *o, const void *ctx);
/* A new object of the table's keys; NULL on ENOMEM. */
json_t *jf_object(const struct jf_table *t, const void *base, const void *ctx);
/* base emptied (zeroes, NAN for JF_REAL), then read from o (NULL: nothing
 * there). base must own nothing. 0 or -ENOMEM (base then holds what was
 * read, to be freed as usual). */
int jf_read(const struct jf_table *t, void *base, json_t *o, void *ctx);
/* Reads o into base as it is: what o lacks keeps the value base has, except
 * that a field written always reads as empty (NAN, 0, ...) when missing.
 * For tables over a larger struct (the model) initialised by its owner. */
int jf_read_into(const struct jf_table *t, void *base, json_t *o, void *ctx);
/* Whether the table (with the objects it merges) writes key. */
bool jf_claims(const struct jf_table *t, const char *key);

#endif
