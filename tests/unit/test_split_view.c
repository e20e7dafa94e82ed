// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: the on-CPU / run-queue / blocked split per phase and per
 * cycle in the text report, report.html and `top`, on a model whose splits
 * are known by construction: 10 cycles of 9 ms, llm_inference 6 ms (5 on
 * the CPU, 1 in the run queue), database 3 ms blocked (2 asleep, 1 in I/O);
 * cycle 7 sleeps 30 ms more in database. Over the cycles: llm_inference
 * 50 / 10 / 0 ms, database 0 / 0 / 60 ms (sleep 50, io 10); each cycle's
 * main thread 5 / 1 / 3 ms (cycle 7's 5 / 1 / 33). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "folded.h"
#include "model.h"
#include "outputs.h"
#include "power_mode.h"
#include "rules.h"
#include "sched_logic.h"
#include "split_view.h"
#include "tail.h"
#include "top.h"
#include "test_helpers.h"

#define MS 1000000ull
#define INFER 1
#define DB 2
#define PID 100
#define NCYCLES 10

static void build(struct model *m)
{
	char *argv[] = { "exp", NULL };
	struct model_process *p;
	struct rule_thresholds t;

	model__init(m);
	assert_int_equal(model__set_command(m, argv), 0);
	m->run.start_ns = 1000 * MS;
	m->run.system = (struct model_system){ .present = true, .kernel = "6.1", .cpus = 2, .mem_total_mb = 1000.0,
					       .hostname = "test" };
	power_mode__init(&m->run.system.power);
	m->run.config = json_object();
	assert_int_equal(model__set_phase_name(m, INFER, "llm_inference"), 0);
	assert_int_equal(model__set_phase_name(m, DB, "database"), 0);
	p = model__add_process(m, PID);
	assert_non_null(p);
	p->root = true;
	strcpy(p->comm, "exp");
	m->run.pids = calloc(1, sizeof(pid_t));
	m->run.pids[m->run.npids++] = PID;
	m->cycles_source = "cycle";
	for (uint32_t i = 0; i < NCYCLES; i++) {
		double db_ms = i == 7 ? 33 : 3, sleep_ms = db_ms - 1;
		uint64_t s = 1000 * MS + i * 100 * MS;
		struct model_cycle *c = model__add_cycle(m, PID, i, s, s + (uint64_t)((6 + db_ms) * MS));
		struct model_cycle_phase *in, *db;

		assert_non_null(c);
		in = &c->phases[INFER];
		db = &c->phases[DB];
		*in = (struct model_cycle_phase){ .present = true, .ms = 6, .thread_ms = 6, .calls = 1 };
		in->split = (struct model_split){ .present = true, .oncpu_ms = 5, .runq_ms = 1 };
		*db = (struct model_cycle_phase){ .present = true, .ms = db_ms, .thread_ms = db_ms, .calls = 1 };
		db->split = (struct model_split){ .present = true, .offcpu_ms = db_ms };
		db->split.blocked_ms[BLOCKED_SLEEP] = sleep_ms;
		db->split.blocked_ms[BLOCKED_IO] = 1;
		/* one thread: the main thread's split is its phases' */
		c->split = (struct model_split){ .present = true, .oncpu_ms = 5, .runq_ms = 1, .offcpu_ms = db_ms,
						 .has_wall = true };
		c->split.blocked_ms[BLOCKED_SLEEP] = sleep_ms;
		c->split.blocked_ms[BLOCKED_IO] = 1;
		assert_int_equal(model__add_call_ms(m, INFER, 6), 0);
		assert_int_equal(model__add_call_ms(m, DB, db_ms), 0);
	}
	m->run.end_ns = 1000 * MS + NCYCLES * 100 * MS;
	m->run.duration_s = NCYCLES * 0.1;
	m->run.stop_reason = strdup("target exited");
	assert_int_equal(model__advance(m, MODEL_SPANS, "test"), 0);
	assert_int_equal(model__advance(m, MODEL_COLLECTED, "test"), 0);
	assert_int_equal(model__derive(m), 0);
	rule_thresholds__defaults(&t);
	assert_int_equal(rules__evaluate(m, &t), 0);
}

static void test_phase_sums(void **state)
{
	struct model m;
	struct model_split s;
	char buf[256];

	(void)state;
	build(&m);
	split_view__phase(&m, INFER, &s);
	assert_true(s.present);
	assert_float_equal(s.oncpu_ms, 50, 1e-9);
	assert_float_equal(s.runq_ms, 10, 1e-9);
	assert_float_equal(s.offcpu_ms, 0, 1e-9);
	assert_float_equal(split_view__percent(&s, s.oncpu_ms), 100.0 * 50 / 60, 1e-9);
	assert_string_equal(split_view__blocked(&s, buf, sizeof(buf)), "");
	split_view__phase(&m, DB, &s);
	assert_float_equal(s.offcpu_ms, 60, 1e-9);
	assert_string_equal(split_view__blocked(&s, buf, sizeof(buf)), "sleep 50.0, io 10.0");
	assert_true(split_view__any(&m));
	model__free(&m);
}

static char *text_of(const struct model *m, void (*fn)(FILE *, const struct model *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, m);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_text_report(void **state)
{
	struct model m;
	char *t;

	(void)state;
	build(&m);
	t = text_of(&m, split_view__print);
	assert_non_null(strstr(t, "Phase split over the cycles (ms summed over threads; % of the phase's thread time):\n"
				  "phase                  oncpu_ms    runq_ms blocked_ms  on/runq/blk %   blocked in (ms)\n"
				  "llm_inference             50.00      10.00       0.00  83/17/0         -\n"
				  "database                   0.00       0.00      60.00  0/0/100         sleep 50.0, io 10.0\n"));
	/* the median cycle: cycle 7's 30 ms more sleep is not in it */
	assert_non_null(strstr(t, "Cycle split (main thread), median of 10 cycles: on-CPU 5.00 ms, run queue 1.00, "
				  "blocked 3.00 (sleep 2.0, io 1.0)\n"));
	/* each cycle's own, cycle 7's 30 ms more sleep in its row */
	assert_non_null(strstr(t, "Split per cycle (main thread):\n"
				  "  cycle    wall_ms   oncpu_ms    runq_ms blocked_ms  blocked in (ms)\n"
				  "      0       9.00       5.00       1.00       3.00  sleep 2.0, io 1.0\n"));
	assert_non_null(strstr(t, "\n      7      39.00       5.00       1.00      33.00  sleep 32.0, io 1.0\n"
				  "      8       9.00       5.00       1.00       3.00  sleep 2.0, io 1.0\n"
				  "      9       9.00       5.00       1.00       3.00  sleep 2.0, io 1.0\n"));
	free(t);
	/* the tail cycle's own split */
	t = text_of(&m, tail__print);
	assert_non_null(strstr(t, "  cycle 7: 39.0 ms"));
	assert_non_null(strstr(t, "    split (main thread): on-CPU 5.00 ms, run queue 1.00, blocked 33.00 "
				  "(sleep 32.0, io 1.0)\n"));
	free(t);
	/* beyond 30 cycles with a split, one line says where to read them */
	for (uint32_t i = NCYCLES; i < 31; i++) {
		struct model_cycle *c = model__add_cycle(&m, PID, i, 3000 * MS + i * MS, 3000 * MS + i * MS + MS / 2);

		assert_non_null(c);
		c->split = (struct model_split){ .present = true, .oncpu_ms = 0.5 };
	}
	t = text_of(&m, split_view__print);
	assert_null(strstr(t, "Split per cycle"));
	assert_non_null(strstr(t, "Each cycle's split (31 cycles): report.html's per-cycle table, "
				  "profile.json's cycles[]\n"));
	free(t);
	model__free(&m);
}

static void test_html(void **state)
{
	char *dir = th_tmpdir_new("splitview"), path[512], *text;
	struct model m;

	(void)state;
	build(&m);
	assert_int_equal(outputs__write_all(&m, dir), 0);
	snprintf(path, sizeof(path), "%s/report.html", dir);
	text = th_read_file(path);
	assert_non_null(text);
	assert_non_null(strstr(text, "<h3>On-CPU, run queue, blocked per phase</h3>"));
	assert_non_null(strstr(text, "<tr><td>llm_inference</td><td>50.00</td><td>10.00</td><td>0.00</td>"
				     "<td>83.3</td><td>16.7</td><td>0.0</td><td>-</td></tr>"));
	assert_non_null(strstr(text, "<tr><td>database</td><td>0.00</td><td>0.00</td><td>60.00</td>"
				     "<td>0.0</td><td>0.0</td><td>100.0</td><td>sleep 50.0, io 10.0</td></tr>"));
	/* the per-cycle table starts open, with the main thread's split */
	assert_non_null(strstr(text, "<details open><summary>per cycle</summary>"));
	assert_non_null(strstr(text, "<th>on-CPU ms</th><th>run queue ms</th><th>blocked ms</th>"));
	assert_non_null(strstr(text, "<tr><td>7</td><td>100</td><td>39.000</td><td>0</td><td>-</td><td>-</td>"
				     "<td>5.00</td><td>1.00</td><td>33.00</td><td>sleep 32.0, io 1.0</td></tr>"));
	free(text);
	model__free(&m);
	th_rm_tree(dir);
	free(dir);
}

static void test_top(void **state)
{
	static char lines[40][256];
	struct model m;
	bool found_in = false, found_db = false, found_last = false;
	int n;

	(void)state;
	build(&m);
	n = top__format(&m, NULL, NULL, lines, 40, 200);
	assert_true(n > 4);
	for (int i = 0; i < n; i++) {
		found_in |= strstr(lines[i], "llm_inference") && strstr(lines[i], "   83.3%   16.7%    0.0%");
		found_db |= strstr(lines[i], "database") && strstr(lines[i], "    0.0%    0.0%  100.0%");
		/* the last cycle (9): 5 ms on the CPU, 1 in the run queue, 3 blocked */
		found_last |= !strcmp(lines[i], "last cycle: on-CPU 55.6%  run queue 11.1%  blocked 33.3%");
	}
	assert_true(found_in);
	assert_true(found_db);
	assert_true(found_last);
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_sums),
		cmocka_unit_test(test_text_report),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_top),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
