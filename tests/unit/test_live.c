// SPDX-License-Identifier: BSD-2-Clause
/* The live outputs without BPF: --metrics address parsing, the exposition of
 * a model whose figures are known by construction (only ended cycles counted,
 * the histogram cumulative, label values escaped), the server's message rate
 * limit, top's lines (phases, functions, Python functions, threads), and
 * its lines from /proc while the programs load. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"
#include "model.h"
#include "proc_view.h"
#include "top.h"

#define MS 1000000ull

static void parse_ok(const char *s, int family, const char *host, int port)
{
	struct sockaddr_storage sa;
	socklen_t len;
	char err[256], buf[64];

	assert_int_equal(metrics__parse_addr(s, &sa, &len, err, sizeof(err)), 0);
	assert_int_equal(sa.ss_family, family);
	if (family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&sa;

		inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
		assert_int_equal(ntohs(a->sin_port), port);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&sa;

		inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
		assert_int_equal(ntohs(a->sin6_port), port);
	}
	assert_string_equal(buf, host);
}

static void test_parse_addr(void **state)
{
	static const char *const bad[] = { "", ":", "x", "9100x", "-1", "65536", "1.2.3:80", "localhost:",
					   "[::1]9100", "[::1", "::1:80", "host.example:80", " 80" };
	struct sockaddr_storage sa;
	socklen_t len;
	char err[256];

	(void)state;
	parse_ok("9464", AF_INET, "127.0.0.1", 9464);
	parse_ok(":9464", AF_INET, "127.0.0.1", 9464);
	parse_ok("localhost:0", AF_INET, "127.0.0.1", 0);
	parse_ok("0.0.0.0:65535", AF_INET, "0.0.0.0", 65535);
	parse_ok("[::1]:9100", AF_INET6, "::1", 9100);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(metrics__parse_addr(bad[i], &sa, &len, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "expected [ADDR:]PORT"));
	}
}

/* pid 42, command `/opt/my "exp"\`: cycles of 10, 20, 30 ms ended, one open;
 * phase infer 5 ms per ended cycle; 3 tokens per cycle. */
static void fixture(struct model *m)
{
	char *argv[] = { "/opt/my \"exp\"\\", NULL };

	model__init(m);
	assert_int_equal(model__set_command(m, argv), 0);
	m->run.pids = calloc(1, sizeof(pid_t));
	m->run.pids[0] = 42;
	m->run.npids = 1;
	m->run.duration_s = 1.5;
	assert_int_equal(model__set_phase_name(m, 1, "infer"), 0);
	assert_int_equal(model__set_count_name(m, 1, "tokens"), 0);
	for (int i = 0; i < 4; i++) {
		uint64_t start = 1000 * MS + i * 100 * MS;
		struct model_cycle *c = model__add_cycle(m, 42, i, start, start + (i + 1) * 10 * MS);

		assert_non_null(c);
		c->open_at_end = i == 3;
		c->phases[1] = (struct model_cycle_phase){ .present = true, .ms = 5, .calls = 1 };
		c->has_count[1] = true;
		c->counts[1] = 3;
		c->tokens_per_second = 100 + i;
	}
	assert_int_equal(model__add_lost(m, "samples", 0), 0);
	assert_int_equal(model__add_lost(m, "events", 7), 0);
	assert_int_equal(folded__add(&m->oncpu, "exp;main;infer", 6), 0);
	assert_int_equal(folded__add(&m->oncpu, "exp;main;db_write", 4), 0);
	folded__merge(&m->oncpu);
}

static double value(const char *text, const char *series)
{
	const char *p = strstr(text, series);

	assert_non_null(p);
	return strtod(p + strlen(series), NULL);
}

#define LABELS "command=\"my \\\"exp\\\"\\\\\",pid=\"42\""

static void test_render(void **state)
{
	struct model m;
	char *t;

	(void)state;
	fixture(&m);
	t = metrics__render(&m);
	assert_non_null(t);
	assert_non_null(strstr(t, "# TYPE infertrace_cycles_total counter\n"));
	assert_true(value(t, "infertrace_cycles_total{" LABELS "} ") == 3);
	assert_true(value(t, "infertrace_cycle_duration_seconds_bucket{" LABELS ",le=\"0.01\"} ") == 1);
	assert_true(value(t, "infertrace_cycle_duration_seconds_bucket{" LABELS ",le=\"0.025\"} ") == 2);
	assert_true(value(t, "infertrace_cycle_duration_seconds_bucket{" LABELS ",le=\"0.05\"} ") == 3);
	assert_true(value(t, "infertrace_cycle_duration_seconds_bucket{" LABELS ",le=\"+Inf\"} ") == 3);
	assert_true(fabs(value(t, "infertrace_cycle_duration_seconds_sum{" LABELS "} ") - 0.06) < 1e-12);
	assert_true(fabs(value(t, "infertrace_last_cycle_duration_seconds{" LABELS "} ") - 0.03) < 1e-12);
	assert_true(fabs(value(t, "infertrace_phase_seconds_total{" LABELS ",phase=\"infer\"} ") - 0.015) < 1e-12);
	assert_true(value(t, "infertrace_tokens_total{" LABELS "} ") == 9);
	assert_true(value(t, "infertrace_tokens_per_second{" LABELS "} ") == 102);
	assert_true(value(t, "infertrace_lost_total{" LABELS ",kind=\"events\"} ") == 7);
	/* no side data, no GPU: no gauge rather than NaN */
	assert_null(strstr(t, "temperature"));
	assert_null(strstr(t, "NaN"));
	free(t);
	model__free(&m);
}

static void test_top_lines(void **state)
{
	struct model m;
	struct folded prev = { 0 };
	char lines[40][256];
	int n;
	bool found_infer = false, found_db = false;

	(void)state;
	fixture(&m);
	/* the previous refresh saw 5 samples in infer: the interval has 1 + 4 */
	assert_int_equal(folded__add(&prev, "infer", 5), 0);
	n = top__format(&m, &prev, NULL, lines, 40, 60);
	assert_true(n > 6);
	assert_non_null(strstr(lines[1], "cycles 3  last 30.0 ms  p50 20.0 ms  p95 29.0 ms"));
	for (int i = 0; i < n; i++) {
		assert_true(strlen(lines[i]) <= 60);
		found_infer |= !strcmp(lines[i], "       1   20.0%  infer");
		found_db |= !strcmp(lines[i], "       4   80.0%  db_write");
	}
	assert_true(found_infer);
	assert_true(found_db);
	folded__free(&prev);
	model__free(&m);
}

static void sample_thread(struct proc_sample *s, pid_t pid, pid_t tid, const char *comm, unsigned long long ticks)
{
	assert_int_equal(VEC_RESERVE(s->threads.v, s->threads.cap, s->threads.n, 4), 0);
	s->threads.v[s->threads.n] = (struct proc_thread){ .pid = pid, .tid = tid, .ticks = ticks };
	snprintf(s->threads.v[s->threads.n++].comm, 16, "%s", comm);
}

static void sample_target(struct proc_sample *s, pid_t pid, const char *comm, long rss_kb, unsigned long long ticks,
			  bool gone)
{
	assert_int_equal(VEC_RESERVE(s->targets.v, s->targets.cap, s->targets.n, 4), 0);
	s->targets.v[s->targets.n] = (struct proc_target){ .pid = pid, .rss_kb = rss_kb, .ticks = ticks, .gone = gone };
	snprintf(s->targets.v[s->targets.n++].comm, 16, "%s", comm);
}

static bool has_line(char lines[][256], int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(lines[i], want))
			return true;
	return false;
}

/* Before the programs are attached: figures read from /proc, each share
 * over two reads, none before the second. */
static void test_proc_view(void **state)
{
	static const pid_t pids[] = { 42, 77 };
	struct proc_sample a = { .ns = 1000000000ull, .ncpus = 2, .have_cpu = true, .cpu_busy = 100, .cpu_total = 400,
				 .load1 = 1.5, .mem_total_kb = 2048000, .mem_avail_kb = 1024000 };
	struct proc_sample b = a;
	struct proc_view v;
	char lines[32][256];
	int n;

	(void)state;
	proc_view__init(&v, pids, 2, NULL);
	v.clk_tck = 100;
	a.self = (struct proc_target){ .pid = 7, .rss_kb = 40960, .ticks = 20 };
	sample_target(&a, 42, "python3", 20480, 150, false);
	sample_target(&a, 77, "", -1, 0, true);
	sample_thread(&a, 42, 42, "python3", 100);
	sample_thread(&a, 42, 43, "worker", 50);
	proc_view__push(&v, &a);
	n = proc_view__format(&v, 1.25, lines, 32, 200);
	assert_string_equal(lines[0], "00:00:01  loading and verifying the BPF programs (1.2 s); until they run, "
		"figures read from /proc");
	assert_string_equal(lines[1], "machine: 2 CPUs  load average 1.50  memory available 1000 MB of 2000 MB");
	assert_string_equal(lines[2], "tracer (PID 7):  RSS 40.0 MB  CPU time 0.20 s");
	assert_true(has_line(lines, n, "PID 42 python3:  RSS 20.0 MB  CPU time 1.50 s"));
	assert_true(has_line(lines, n, "PID 77: not readable (exited?)"));
	/* one read: times so far, no share yet; the most CPU time first */
	assert_true(has_line(lines, n, "      42       -       1.00  python3"));
	assert_true(has_line(lines, n, "      43       -       0.50  worker"));

	/* 0.5 s later: 50 of 100 ticks busy; worker 40 ticks (80% of a CPU) */
	b.ns = 1500000000ull; /* a was handed over: zeroed */
	b.cpu_busy = 150;
	b.cpu_total = 500;
	b.targets.v = NULL, b.targets.n = b.targets.cap = 0;
	b.threads.v = NULL, b.threads.n = b.threads.cap = 0;
	b.self = (struct proc_target){ .pid = 7, .rss_kb = 40960, .ticks = 69 }; /* verifying: 98% */
	sample_target(&b, 42, "python3", 20480, 195, false);
	sample_thread(&b, 42, 42, "python3", 105);
	sample_thread(&b, 42, 43, "worker", 90);
	proc_view__push(&v, &b);
	n = proc_view__format(&v, 1.75, lines, 32, 200);
	assert_true(has_line(lines, n, "machine: 2 CPUs  busy 50.0% (last 0.50 s)  load average 1.50  memory available "
				"1000 MB of 2000 MB"));
	assert_true(has_line(lines, n, "tracer (PID 7):  RSS 40.0 MB  CPU 98.0% (last 0.50 s)  CPU time 0.69 s"));
	assert_true(has_line(lines, n, "PID 42 python3:  RSS 20.0 MB  CPU 90.0% (last 0.50 s)  CPU time 1.95 s"));
	for (int i = 0; i < n; i++)
		if (strstr(lines[i], "worker")) {
			/* the busiest of the interval first */
			assert_string_equal(lines[i], "      43   80.0%       0.90  worker");
			assert_string_equal(lines[i + 1], "      42   10.0%       1.05  python3");
		}
	/* cut at the width, and no more lines than asked */
	n = proc_view__format(&v, 1.75, lines, 2, 20);
	assert_int_equal(n, 2);
	assert_int_equal(strlen(lines[0]), 20);
	proc_view__free(&v);

	/* a launched command is held: no targets, said so */
	proc_view__init(&v, NULL, 0, "python3");
	n = proc_view__format(&v, 0.2, lines, 32, 200);
	assert_int_equal(n, 2);
	assert_string_equal(lines[1], "command: python3, held at its start until the programs are attached");
	proc_view__free(&v);
}

/* One message per 10 s; those in between are counted and the count is
 * handed to the next one printed. */
static void test_ratelimit(void **state)
{
	const uint64_t S = 1000000000ull;
	struct metrics_ratelimit r = { .every_ns = 10 * S };

	(void)state;

	assert_int_equal(metrics__ratelimit(&r, 100 * S), 0); /* the first: printed */
	for (int i = 1; i <= 279; i++) /* 280 in 4 s, as a flood of refusals */
		assert_int_equal(metrics__ratelimit(&r, 100 * S + i * (4 * S / 280)), -1);
	assert_int_equal(r.held, 279);
	assert_int_equal(metrics__ratelimit(&r, 110 * S - 1), -1);  /* not yet 10 s */
	assert_int_equal(metrics__ratelimit(&r, 110 * S), 280);     /* 10 s on: the count */
	assert_int_equal(r.held, 0);
	assert_int_equal(metrics__ratelimit(&r, 125 * S), 0);      /* quiet since: nothing held */
	assert_int_equal(metrics__ratelimit(&r, 126 * S), -1);
	assert_int_equal(r.held, 1);
}

/* A name the target chose (a perf-map or ELF symbol) carries no escape
 * sequence to the terminal: its control bytes and invalid UTF-8 are \xHH. */
static void test_top_escapes_names(void **state)
{
	struct model m;
	char lines[40][256];
	bool found = false;
	int n;

	(void)state;
	fixture(&m);
	assert_int_equal(folded__add(&m.oncpu, "main;evil\x1b[31m\xff\xfe", 50), 0);
	n = top__format(&m, NULL, NULL, lines, 40, 200);
	for (int i = 0; i < n; i++) {
		assert_null(strchr(lines[i], 0x1b));
		assert_null(strchr(lines[i], (char)0xff));
		found |= strstr(lines[i], "evil\\x1B[31m\\xFF\\xFE") != NULL;
	}
	assert_true(found);
	model__free(&m);
}

/* PYTHON FUNCTIONS: each Python function's share of all on-CPU samples
 * with it anywhere on the stack, once per stack (recursion), most first:
 * gen 6 of 10 (60%), main 6 + recursion 2 counted once = 8 (80%); native
 * frames and a process named like a frame are not Python functions. */
static void test_top_python_inclusive(void **state)
{
	struct model m;
	char lines[40][256];
	int n, head = -1;

	(void)state;
	model__init(&m);
	assert_int_equal(folded__add(&m.oncpu, "python3;_start;main (a.py);gen (a.py);spin (a.py);clock_gettime", 4), 0);
	assert_int_equal(folded__add(&m.oncpu, "python3;_start;main (a.py);gen (a.py);PyFloat_FromDouble", 2), 0);
	assert_int_equal(folded__add(&m.oncpu, "python3;_start;main (a.py);f (a.py);main (a.py);memcpy", 2), 0);
	assert_int_equal(folded__add(&m.oncpu, "x (y.py);worker", 2), 0);
	n = top__format(&m, NULL, NULL, lines, 40, 120);
	for (int i = 0; i < n; i++)
		if (strstr(lines[i], "PYTHON FUNCTIONS"))
			head = i;
	assert_true(head >= 0);
	assert_non_null(strstr(lines[head], "run so far: 10"));
	assert_string_equal(lines[head + 2], "       8   80.0%  main (a.py)");
	assert_string_equal(lines[head + 3], "       6   60.0%  gen (a.py)");
	assert_string_equal(lines[head + 4], "       4   40.0%  spin (a.py)");
	assert_string_equal(lines[head + 5], "       2   20.0%  f (a.py)");
	assert_string_equal(lines[head + 6], "");
	model__free(&m);
}

/* THREADS: samples per thread over the labelled stacks (two stacks of
 * thread 43 summed, a stack without a thread left out), busiest first, by
 * the thread's own name, else its process's; one thread alone: no rows. */
static void test_top_threads(void **state)
{
	static const struct {
		pid_t tid;
		uint64_t samples;
	} stacks[] = { { 42, 2 }, { 43, 5 }, { 43, 1 }, { 44, 2 }, { 0, 9 } };
	static const char worker[IT_COMM_LEN] = "worker-a", exp[IT_COMM_LEN] = "exp";
	struct model m;
	struct model_process *p;
	char lines[40][256];
	int n, head = -1;

	(void)state;
	model__init(&m);
	p = model__add_process(&m, 42);
	assert_non_null(p);
	strcpy(p->comm, "exp");
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct model_frame f = { .name = model__intern(&m, "spin"), .mapping = -1 };
		struct model_lstack ls = { .pid = 42, .tid = stacks[i].tid, .comm = model__intern(&m, "exp"),
					   .samples = stacks[i].samples };

		assert_int_equal(model__add_lstack(&m, &ls, &f, 1), 0);
	}
	/* names as BPF reads them: IT_COMM_LEN bytes */
	assert_int_equal(model__name_thread(&m, 42, 43, worker), 0);
	assert_int_equal(model__name_thread(&m, 42, 42, exp), 0);
	n = top__format(&m, NULL, NULL, lines, 40, 120);
	for (int i = 0; i < n; i++)
		if (strstr(lines[i], "THREADS"))
			head = i;
	assert_true(head >= 0);
	assert_string_equal(lines[head], "THREADS (on-CPU samples, run so far: 10)");
	assert_string_equal(lines[head + 2], "       6   60.0%       43  worker-a");
	assert_string_equal(lines[head + 3], "       2   20.0%       42  exp");
	assert_string_equal(lines[head + 4], "       2   20.0%       44  exp");
	assert_string_equal(lines[head + 5], "");
	model__free(&m);
	/* one thread: no THREADS rows */
	fixture(&m);
	{
		struct model_frame f = { .name = model__intern(&m, "infer"), .mapping = -1 };
		struct model_lstack ls = { .pid = 42, .tid = 42, .comm = model__intern(&m, "exp"), .samples = 3 };

		assert_int_equal(model__add_lstack(&m, &ls, &f, 1), 0);
	}
	n = top__format(&m, NULL, NULL, lines, 40, 120);
	for (int i = 0; i < n; i++)
		assert_null(strstr(lines[i], "THREADS"));
	model__free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_addr),
		cmocka_unit_test(test_top_python_inclusive),
		cmocka_unit_test(test_top_threads),
		cmocka_unit_test(test_top_lines),
		cmocka_unit_test(test_top_escapes_names),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_proc_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
