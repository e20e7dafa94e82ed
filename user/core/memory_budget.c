// SPDX-License-Identifier: BSD-2-Clause
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "memory_budget.h"
#include "recording.h"

uint64_t memory_budget__rss_bytes(void)
{
	char buf[128];
	unsigned long long size, resident;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

void memory_budget__tick(struct recording *rec)
{
	uint64_t budget = (uint64_t)rec->opts.max_memory_mb << 20, rss = memory_budget__rss_bytes();

	if (!rss || !budget)
		return;
	if (rss > rec->budget.peak_rss)
		rec->budget.peak_rss = rss;
	if (!rec->budget.full && rss >= budget) {
		rec->budget.full = true;
		rec->budget.times_reached++;
		if (!rec->budget.first_reached_ns)
			rec->budget.first_reached_ns = recording__now_ns();
		if (rec->budget.times_reached == 1)
			fprintf(stderr,
				"infertrace: warning: the tracer's memory reached --max-memory %u MB (RSS %.0f MB): "
				"from now on new labelled stacks, side-data rows and process maps are counted "
				"in profile.json's lost, not kept; stacks and totals go on (raise --max-memory, or "
				"for runs of days use --checkpoint SECONDS --rotate N)\n",
				rec->opts.max_memory_mb, rss / 1048576.0);
	} else if (rec->budget.full && rss < budget / 10 * 9) {
		rec->budget.full = false; /* a rotated period freed what it held */
	}
}

json_t *memory_budget__json(const struct recording *rec)
{
	uint64_t at = rec->budget.first_reached_ns;

	return json_pack("{s:i, s:o, s:I, s:f}", "max_mb", (json_int_t)rec->opts.max_memory_mb, "reached_at_s",
			 at ? json_real(at > rec->start_ns ? (at - rec->start_ns) / 1e9 : 0.0) : json_null(),
			 "times_reached", (json_int_t)rec->budget.times_reached, "recording_peak_rss_mb",
			 rec->budget.peak_rss / 1048576.0);
}
