// SPDX-License-Identifier: BSD-2-Clause
/* A CLOCK_MONOTONIC deadline for pthread_cond_timedwait on a condition
 * variable set to that clock (pthread_condattr_setclock): immune to
 * changes of the wall clock. */
#ifndef INFERTRACE_DEADLINE_H
#define INFERTRACE_DEADLINE_H

#include <stdint.h>
#include <time.h>

/* Now plus ns on CLOCK_MONOTONIC. */
static inline struct timespec deadline_in(uint64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (time_t)(ns / 1000000000ull);
	t.tv_nsec += (long)(ns % 1000000000ull);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

#endif
