// SPDX-License-Identifier: BSD-2-Clause
/* Following the side sampler's own rows in tests, never a sleep: a loaded
 * machine may hold the sampler's thread back for tens of milliseconds. A
 * row reads its values in [its start, the next row's start), so the rows
 * begun after a change, up to the one before the last begun before the
 * next change, read that state (docs/testing.md). Include after cmocka.h,
 * sysfs_fixture.h and side_sampler.h. */
#ifndef INFERTRACE_TEST_SAMPLER_ROWS_H
#define INFERTRACE_TEST_SAMPLER_ROWS_H

#include "side_summary.h"

/* Waits until the sampler has taken MORE rows beyond those it had (a
 * loaded machine may hold its thread back for long: the test follows the
 * sampler's own rows, never a time fixed in advance). */
static inline void wait_rows(struct side_sampler *s, size_t more)
{
	size_t want = side_sampler__sample_count(s) + more;

	for (int i = 0; i < 20000 && side_sampler__sample_count(s) < want; i++)
		fx_sleep_ms(1);
	assert_true(side_sampler__sample_count(s) >= want);
}

/* Index of the first row that began at or after t (nrows if none). */
static inline size_t first_row_from(const struct side_series *sr, uint64_t t)
{
	size_t i = 0;

	while (i < sr->nrows && sr->ts[i] < t)
		i++;
	return i;
}

/* Rows in [from, to] by their start times. */
static inline long rows_in(const struct side_series *sr, uint64_t from, uint64_t to)
{
	long n = 0;

	for (size_t i = 0; i < sr->nrows; i++)
		n += sr->ts[i] >= from && sr->ts[i] <= to;
	return n;
}

#endif
