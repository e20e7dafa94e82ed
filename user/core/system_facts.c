// SPDX-License-Identifier: BSD-2-Clause
/* The machine a recording runs on (profile.json's system): kernel,
 * architecture, CPUs online, memory and host name. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "procfs.h"
#include "sysfs_readers.h"
#include "system_facts.h"

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

void system_facts__read(struct model_system *s)
{
	struct utsname u;
	long kb = mem_total_kb();

	s->present = true;
	s->kernel[0] = s->arch[0] = 0;
	if (uname(&u) == 0) {
		snprintf(s->kernel, sizeof(s->kernel), "%s", u.release);
		snprintf(s->arch, sizeof(s->arch), "%s", u.machine);
	}
	s->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	s->mem_total_mb = kb > 0 ? kb / 1024.0 : NAN;
	memset(s->hostname, 0, sizeof(s->hostname));
	gethostname(s->hostname, sizeof(s->hostname) - 1);
	if (!cpu_model(s->cpu_model, sizeof(s->cpu_model)))
		s->cpu_model[0] = 0;
	if (!machine_model(s->machine_model, sizeof(s->machine_model)))
		s->machine_model[0] = 0;
}
