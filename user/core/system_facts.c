// SPDX-License-Identifier: BSD-2-Clause
/* The machine a recording runs on (profile.json's system): kernel,
 * architecture, CPUs online, memory and host name. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "procfs.h"
#include "system_facts.h"

static long mem_total_kb(void)
{
	char buf[16384];

	return procfs__read("/proc/meminfo", buf, sizeof(buf)) < 0 ? -1 : procfs__meminfo_kb(buf, "MemTotal");
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
}
