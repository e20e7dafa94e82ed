// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/limits.h>

#include "jit.h"
#include "perfmap.h"
#include "recording.h"
#include "syms.h"
#include "procfs.h"

static const char *mode(const struct recording *rec)
{
	return rec->opts.jit_maps ? rec->opts.jit_maps : "on";
}

int jit__prepare(struct recording *rec)
{
	if (!strcmp(mode(rec), "off")) {
		syms_cache__jit_enable(rec->syms, false);
		return 0;
	}
	if (rec->opts.command && !strcmp(mode(rec), "on")) {
		int err = perfmap__set_env();

		if (err)
			fprintf(stderr, "infertrace: warning: cannot set NODE_OPTIONS: %s\n",
				strerror(-err));
	}
	return 0;
}

/* The live processes only: a process that exited writes no more lines, and
 * refreshing every process ever seen, each found by a walk of the set, made
 * a run with many short-lived processes cost more at every tick (a soak of
 * 3,000 processes: 5% of a CPU rising to 20%). */
void jit__refresh(struct recording *rec)
{
	for (size_t i = 0; i < rec->procs.n; i++)
		if (!rec->procs.procs[i].exited)
			syms_cache__jit_refresh(rec->syms, rec->procs.procs[i].pid);
}

/* Whether pid has anonymous executable memory: generated code. */
static bool runs_jit(pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	struct procfs_map m;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (procfs__maps_line(line, &m))
			continue;
		found = m.perm[2] == 'x' && !m.path_len;
	}
	fclose(f);
	return found;
}

void jit__hint_pids(struct recording *rec)
{
	char exe[64], target[PATH_MAX];
	ssize_t len;

	if (!strcmp(mode(rec), "off"))
		return;
	for (int i = 0; i < rec->opts.npids; i++) {
		pid_t pid = rec->opts.pids[i];
		const char *base;

		syms_cache__jit_refresh(rec->syms, pid);
		if (syms_cache__jit_has(rec->syms, pid))
			continue;
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		len = readlink(exe, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		if (!strncmp(base, "node", 4))
			fprintf(stderr, "infertrace: PID %d runs node without a perf map: its JavaScript frames stay "
				"unnamed; start it with NODE_OPTIONS='%s' to name them\n", (int)pid,
				PERFMAP_NODE_SWITCHES);
		else if (!strncmp(base, "python", 6))
			continue; /* Python frames come from the interpreter's own frames */
		else if (runs_jit(pid))
			fprintf(stderr, "infertrace: PID %d runs generated code without a perf map: its JIT frames "
				"stay unnamed unless its runtime writes /tmp/perf-%d.map (node --perf-basic-prof, "
				"python3.12 -X perf, the JVM with perf-map-agent)\n", (int)pid, (int)pid);
	}
}
