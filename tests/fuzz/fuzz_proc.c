// SPDX-License-Identifier: BSD-2-Clause
/* The /proc readers (user/lib/procfs.c) over any bytes: /proc/PID/stat and
 * status carry a name the target chose, maps its file names. */
#include "fuzz_common.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size, ".proc");
	char small[64], *s = fuzz_string(data, size);
	unsigned long long ticks, busy;
	struct procfs_map m;
	uid_t uid, euid;

	if (!s)
		return 0;
	/* a short buffer: truncated, still terminated */
	if (procfs__read(path, small, sizeof(small)) < 0 || strlen(small) >= sizeof(small))
		abort();
	(void)procfs__stat_state(s);
	(void)procfs__stat_ticks(s, &ticks);
	(void)procfs__stat_starttime(s, &ticks);
	if (!procfs__stat_comm(s, small, sizeof(small)) && strlen(small) >= sizeof(small))
		abort();
	(void)procfs__cpu_ticks(s, &ticks, &busy);
	(void)procfs__status_tgid(s);
	(void)procfs__status_nspid(s, 1, &uid, &euid);
	(void)procfs__meminfo_kb(s, "MemTotal");
	(void)procfs__meminfo_kb(s, "");
	for (char *line = s, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (!procfs__maps_line(line, &m) &&
		    (m.path < line || m.path + m.path_len > line + strlen(line) || strlen(m.perm) < 3))
			abort();
	}
	free(s);
	return 0;
}
