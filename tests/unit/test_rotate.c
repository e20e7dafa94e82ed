// SPDX-License-Identifier: BSD-2-Clause
/* --rotate's slice of a cumulative model: a recording of known cycles and
 * stack counts, snapshotted at period boundaries, gives each cycle to exactly
 * one period and each sample to exactly one period's stacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"
#include "rotate.h"

#define MS 1000000ull
#define NCYCLES 10

/* The recording at time `now`, with the cycles that ended before `forgot`
 * forgotten (as the probes concern does after a period): cycle i runs [100 i, 100 i + 90) ms from
 * t0 = 1 s, open while now is inside it; stack "main;work" holds one sample
 * per 10 ms elapsed, "main;idle" one per 50 ms. */
static void snapshot(struct model *m, uint64_t now, uint64_t forgot)
{
	const uint64_t t0 = 1000 * MS;

	model__init(m);
	m->run.start_ns = t0;
	for (int i = 0; i < NCYCLES; i++) {
		uint64_t s = t0 + i * 100 * MS, e = s + 90 * MS;
		struct model_cycle *c;

		if (s >= now)
			break;
		if (e < forgot)
			continue;
		c = model__add_cycle(m, 100, (uint32_t)i, s, e < now ? e : now);
		assert_non_null(c);
		c->open_at_end = e >= now;
	}
	assert_int_equal(folded__add(&m->oncpu, "main;work", (now - t0) / (10 * MS)), 0);
	assert_int_equal(folded__add(&m->oncpu, "main;idle", (now - t0) / (50 * MS)), 0);
	m->have_oncpu = true;
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
}

static void test_periods_partition(void **state)
{
	const uint64_t t0 = 1000 * MS, bounds[] = { t0 + 250 * MS, t0 + 520 * MS, t0 + 950 * MS };
	struct rotation r = { .period_s = 1, .from_ns = t0 };
	bool seen[NCYCLES] = { false };
	uint64_t samples = 0;
	int ncycles = 0;

	(void)state;
	for (size_t p = 0; p < 3; p++) {
		bool final = p == 2;
		struct model m;

		snapshot(&m, bounds[p], r.from_ns);
		assert_int_equal(rotation__slice(&r, &m, r.from_ns, bounds[p], final), 0);
		assert_int_equal(m.run.start_ns, r.from_ns);
		for (size_t i = 0; i < m.ncycles; i++) {
			assert_false(seen[m.cycles[i].bpf_cycle]);
			seen[m.cycles[i].bpf_cycle] = true;
			assert_true(final || m.cycles[i].end_ns < bounds[p]);
			ncycles++;
		}
		for (size_t i = 0; i < m.oncpu.n; i++)
			samples += m.oncpu.entries[i].count;
		if (p == 1) { /* 52 work and 10 idle samples by 520 ms, less 25 and 5 before */
			assert_int_equal(m.oncpu.n, 2);
			assert_string_equal(m.oncpu.entries[0].stack, "main;idle");
			assert_int_equal(m.oncpu.entries[0].count, 5);
			assert_int_equal(m.oncpu.entries[1].count, 27);
		}
		rotation__commit(&r);
		r.from_ns = bounds[p];
		model__free(&m);
	}
	/* cycle 9 was still open at 950 ms: the last period took it */
	assert_int_equal(ncycles, NCYCLES);
	assert_int_equal(samples, 95 + 19);
	rotation__free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_periods_partition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
