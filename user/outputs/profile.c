// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "profile.h"

int profile__write(json_t *profile, const char *dir)
{
	struct atomic_file *af = atomic_file__open(dir, "profile.json");
	json_t *src;
	size_t i;

	if (!af)
		return -errno;
	/* figures from root-only counters (RAPL) stay readable by the owner only */
	json_array_foreach(json_object_get(json_object_get(profile, "energy"), "sources"), i, src)
		if (json_is_true(json_object_get(src, "root_only")) && atomic_file__private(af)) {
			atomic_file__abort(af);
			return -EIO;
		}
	if (json_dumpf(profile, atomic_file__stream(af), JSON_INDENT(2) | JSON_REAL_PRECISION(10))) {
		int err = atomic_file__error(af);

		atomic_file__abort(af);
		return err;
	}
	fputc('\n', atomic_file__stream(af));
	return atomic_file__commit(af);
}

json_t *profile__load(const char *dir_or_file)
{
	char path[4096];
	struct stat st;
	json_error_t jerr;
	json_t *p;

	if (stat(dir_or_file, &st)) {
		fprintf(stderr, "infertrace: cannot read '%s': %s; give a record output directory "
			"or its profile.json\n", dir_or_file, strerror(errno));
		return NULL;
	}
	if (S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "%s/profile.json", dir_or_file);
	else
		snprintf(path, sizeof(path), "%s", dir_or_file);
	p = json_load_file(path, 0, &jerr);
	if (!p) {
		fprintf(stderr, "infertrace: %s: line %d: %s; is it a profile.json written by "
			"'infertrace record'?\n", path, jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(p) || !json_object_get(p, "schema_version")) {
		fprintf(stderr, "infertrace: %s is not an infertrace profile (no schema_version)\n", path);
		json_decref(p);
		return NULL;
	}
	if (!json_is_string(json_object_get(p, "schema_version"))) {
		fprintf(stderr, "infertrace: %s: schema_version must be a string such as \"%s\", not a %s; "
			"is it a profile.json written by 'infertrace record'?\n", path, PROFILE_SCHEMA_VERSION,
			json_is_number(json_object_get(p, "schema_version")) ? "number" : "non-string value");
		json_decref(p);
		return NULL;
	}
	return p;
}

const char *profile__iso_time(double epoch_s, char *buf, size_t len)
{
	time_t t = (time_t)epoch_s;
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)((epoch_s - (double)t) * 1000));
	return buf;
}
