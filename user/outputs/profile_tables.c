// SPDX-License-Identifier: BSD-2-Clause
/* What every section table of profile.json shares (profile_tables.h):
 * setting a key, and the model's table of names. Its own file, below the
 * sections and the profile table that walks them. */
#include <errno.h>
#include <jansson.h>

#include "model.h"
#include "profile_tables.h"

int profile__set(json_t *o, const char *key, json_t *v)
{
	return v && !json_object_set_new(o, key, v) ? 0 : -ENOMEM;
}

/* Strings kept in model.names (ctx: the model). */
static const char *model_name(const void *ctx, int32_t i)
{
	const struct model *m = ctx;

	return i >= 0 && (size_t)i < m->nnames ? m->names[i] : NULL;
}

static int32_t model_intern(void *ctx, const char *s)
{
	return model__intern(ctx, s);
}

const struct jf_names profile_model_names = { model_name, model_intern };
