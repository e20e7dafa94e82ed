// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>
#include <unistd.h>

#include "messages.h"
#include "probes.h"
#include "progress.h"
#include "recording.h"

#define REFRESH_NS 1000000000ull

static bool enabled;
static uint64_t start_ns, last_ns;

void progress__start(bool quiet)
{
	enabled = !quiet && isatty(STDERR_FILENO);
	start_ns = recording__now_ns();
	last_ns = 0;
}

int progress__format(char *buf, size_t len, double elapsed_s, uint64_t cycles, uint64_t samples,
		     uint64_t lost)
{
	unsigned long s = elapsed_s > 0 ? (unsigned long)elapsed_s : 0;

	return snprintf(buf, len, "%s: %02lu:%02lu:%02lu  cycles %llu  samples %llu  lost %llu",
			messages__prog(), s / 3600, s / 60 % 60, s % 60, (unsigned long long)cycles,
			(unsigned long long)samples, (unsigned long long)lost);
}

void progress__tick(struct recording *rec)
{
	uint64_t now = recording__now_ns();
	__u64 st[IT_STAT_MAX];
	char line[256];

	if (!enabled || (last_ns && now - last_ns < REFRESH_NS))
		return;
	last_ns = now;
	tracer__stats(&rec->tracer, st);
	/* "lost" as profile.json's lost.samples + lost.events */
	progress__format(line, sizeof(line), (now - start_ns) / 1e9, probes__cycles_seen(rec),
			 st[IT_STAT_SAMPLES_TARGET],
			 st[IT_STAT_LOST_SAMPLES] + st[IT_STAT_USTACK_LOST] + st[IT_STAT_RINGBUF_LOST] +
			 st[IT_STAT_LOST_EVENTS] + st[IT_STAT_THREADS_FULL]);
	messages__status(line);
}

void progress__end(void)
{
	if (enabled)
		messages__status(NULL);
	enabled = false;
}
