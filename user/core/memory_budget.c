// SPDX-License-Identifier: BSD-2-Clause
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

void memory_budget__figures(const struct recording *rec, int *max_mb, double *reached_at_s, uint64_t *times_reached,
			    double *peak_rss_mb)
{
	uint64_t at = rec->budget.first_reached_ns;

	*max_mb = (int)rec->opts.max_memory_mb;
	*reached_at_s = at ? (at > rec->start_ns ? (at - rec->start_ns) / 1e9 : 0.0) : NAN;
	*times_reached = rec->budget.times_reached;
	*peak_rss_mb = rec->budget.peak_rss / 1048576.0;
}
