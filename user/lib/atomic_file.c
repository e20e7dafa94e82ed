// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"

struct atomic_file {
	FILE *f;
	char *tmp_path;
	char *path;
};

struct atomic_file *atomic_file__open(const char *dir, const char *name)
{
	struct atomic_file *af = calloc(1, sizeof(*af));
	int err;

	if (!af)
		return NULL;
	if (asprintf(&af->path, "%s/%s", dir, name) < 0 ||
	    asprintf(&af->tmp_path, "%s/.%s.tmp.%d", dir, name, getpid()) < 0) {
		af->path = af->tmp_path = NULL;
		err = ENOMEM;
		goto fail;
	}
	af->f = fopen(af->tmp_path, "w");
	if (!af->f) {
		err = errno;
		goto fail;
	}
	return af;
fail:
	free(af->path);
	free(af->tmp_path);
	free(af);
	errno = err;
	return NULL;
}

FILE *atomic_file__stream(struct atomic_file *af)
{
	return af->f;
}

static void atomic_file__free(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp_path);
	free(af);
}

int atomic_file__commit(struct atomic_file *af)
{
	int err = 0;

	if (ferror(af->f) || fflush(af->f) || fsync(fileno(af->f)))
		err = errno ? -errno : -EIO;
	if (fclose(af->f) && !err)
		err = -errno;
	if (!err && rename(af->tmp_path, af->path))
		err = -errno;
	if (err)
		unlink(af->tmp_path);
	atomic_file__free(af);
	return err;
}

void atomic_file__abort(struct atomic_file *af)
{
	if (!af)
		return;
	fclose(af->f);
	unlink(af->tmp_path);
	atomic_file__free(af);
}
