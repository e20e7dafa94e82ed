// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "json_text.h"
#include "profile.h"
#include "procfs.h"
#include "sysfs_readers.h"

static long mem_total_kb(void)
{
	char buf[16384];

	return procfs__read("/proc/meminfo", buf, sizeof(buf)) < 0 ? -1 : procfs__meminfo_kb(buf, "MemTotal");
}

/* The CPU's model name (/proc/cpuinfo's "model name", x86 and some arm64
 * kernels), into buf; false when the kernel gives none. */
static bool cpu_model(char *buf, size_t len)
{
	char path[4096], text[8192], *line, *save = NULL;

	if (sysfs_path(path, sizeof(path), "/proc/cpuinfo") || procfs__read(path, text, sizeof(text)) < 0)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " \t") + 1;
		snprintf(buf, len, "%s", colon);
		return *buf != 0;
	}
	return false;
}

/* The board's model from the device tree (a Jetson names itself there:
 * "NVIDIA Jetson AGX Orin Developer Kit"); false where there is none. */
static bool machine_model(char *buf, size_t len)
{
	char path[4096];

	if (sysfs_path(path, sizeof(path), "/proc/device-tree/model") || sysfs_read_str(path, buf, len))
		return false;
	/* the property ends with a NUL; read as a string already */
	return *buf != 0;
}

json_t *profile__system_json(void)
{
	char model[256];
	json_t *s = json_object();
	struct utsname u;
	char host[256] = "";
	long kb = mem_total_kb();

	if (uname(&u) == 0) {
		json_object_set_new(s, "kernel", json_string(u.release));
		json_object_set_new(s, "arch", json_string(u.machine));
	}
	json_object_set_new(s, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	/* the platform a tuned setting holds for (tune's settings.json) */
	if (cpu_model(model, sizeof(model)))
		json_object_set_new(s, "cpu_model", json_text(model));
	if (machine_model(model, sizeof(model)))
		json_object_set_new(s, "machine_model", json_text(model));
	json_object_set_new(s, "mem_total_mb", kb > 0 ? json_real(kb / 1024.0) : json_null());
	gethostname(host, sizeof(host) - 1);
	json_object_set_new(s, "hostname", json_string(host));
	return s;
}

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
