// SPDX-License-Identifier: BSD-2-Clause
/* The figures of `infertrace tune`: the per-cycle metric of a run with its
 * warm-up left out, each setting's median and 95% interval (the two-level
 * bootstrap of bootstrap.h, over its runs and their cycles), the change
 * against the baseline, the verdicts, the choice, and the evidence that
 * moved. Pure functions of loaded models and arrays, unit-tested on inputs
 * whose figures are known. */
#ifndef INFERTRACE_TUNE_STATS_H
#define INFERTRACE_TUNE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "tune_options.h"

#define TUNE_BOOT_REPS 2000
#define TUNE_BOOT_SEED 0x5eed7e57c0ffee11ull
#define TUNE_LEVEL_PCT 95.0
/* the rule, as printed and written into settings.json */
#define TUNE_WARMUP_RULE "the first cycle of each run, and one more per 10 cycles it has (n/10, at least 1 when it has 2 or more)"

struct model;
struct model_cycle;

enum tune_metric_kind {
	TUNE_M_TOKENS_PER_S = 0,
	TUNE_M_CYCLE_MS,
	TUNE_M_J_PER_TOKEN,
	TUNE_M_PHASE_MS,
};

struct tune_metric {
	enum tune_metric_kind kind;
	char name[80];   /* tokens_per_s, cycle_ms, joules_per_token, phase:NAME */
	char phase[72];  /* TUNE_M_PHASE_MS: the phase */
	const char *unit;
	bool higher_is_better;
};

/* METRIC as --metric takes it (also "tokens/s" and "cycle_time"). 0, or
 * -EINVAL with the reason in err. */
int tune_metric__parse(const char *s, struct tune_metric *m, char *err, size_t errlen);
/* The default for a run: tokens/s where its cycles have tokens, else cycle time. */
void tune_metric__default(const struct model *m, struct tune_metric *out);
/* One cycle's value; false when it has none (no tokens, no energy, the
 * phase did not run in it). */
bool tune_metric__cycle(const struct model *m, const struct tune_metric *mt, const struct model_cycle *c, double *x);
/* The cycle's value x without the time it waited behind other processes
 * (its own time): the metric's time less that wait, the larger of the main
 * thread's (runq_wait_others_ms) and the time's share that all its threads
 * spent so (all_threads); x itself where nothing was measured or the
 * metric is no time (joules per token). */
double tune_metric__own(const struct tune_metric *mt, const struct model_cycle *c, int phase, double x);

/* Cycles left out at the start of a run of n complete cycles (the rule). */
size_t tune__warmup(size_t n);

/* The cycles a run's figures come from: its complete cycles (not open at
 * the end, not abandoned), less warmup (-1: the rule) at the start, at
 * most cap (0: all) after it. Their indexes in m->cycles go to idx (a
 * new array); returns how many, or (size_t)-1 out of memory. *left_out
 * receives the warm-up used. */
size_t tune__measured(const struct model *m, int warmup, unsigned int cap, size_t **idx, size_t *left_out);

/* What the scheduler, the GPU and the clocks did over the measured cycles
 * of a setting's runs. NAN where nothing measured it. */
struct tune_evidence {
	size_t runs, cycles;
	double runq_share_pct;      /* run-queue wait over on-CPU + wait, all threads */
	double oncpu_ms_per_cycle;  /* on-CPU time of all threads per cycle */
	double cpus_busy;           /* on-CPU over wall: threads running on average */
	double gpu_busy_pct;        /* mean GPU utilisation of the runs */
	size_t throttled_runs;      /* runs whose clock dropped while hot */
	double max_temp_c;
	double runq_others_ms_per_cycle; /* the main thread's wait behind other processes */
	/* sums */
	double on_ms, runq_ms, wall_ms, gpu_sum, others_ms;
	size_t split_cycles, gpu_runs, others_cycles;
};

void tune_evidence__init(struct tune_evidence *e);
/* Adds a run: the cycles idx[0..n) of m. */
void tune_evidence__add_run(struct tune_evidence *e, const struct model *m, const size_t *idx, size_t n);
/* The figures from the sums. */
void tune_evidence__finish(struct tune_evidence *e);

enum tune_verdict {
	TUNE_V_NONE = 0,    /* no cycle measured */
	TUNE_V_BASELINE,
	TUNE_V_BETTER,      /* the intervals do not overlap, this one better */
	TUNE_V_WORSE,
	TUNE_V_SAME,        /* the intervals overlap: no significant difference */
	TUNE_V_NO_INTERVAL, /* too few cycles here or in the baseline */
	TUNE_V_WITHHELD,    /* the values differ, their own times (without the wait
			     * behind other processes) do not: the machine's doing */
};
const char *tune_verdict__name(enum tune_verdict v);

/* One setting's values, by run (the bootstrap's groups), and its figures. */
struct tune_row {
	double *x;
	double *own;   /* beside x: each value without its wait behind other processes */
	size_t n, cap, capown;
	size_t *run_end;
	size_t nruns, capruns;
	double median, lo, hi;                  /* NAN: none */
	double own_median, own_lo, own_hi;      /* the same of own */
	double change_pct, change_lo, change_hi; /* against the baseline's median, NAN: none */
	enum tune_verdict verdict;
};

/* Adds a run's values and their own values (NULL: the same; a run with
 * none adds no group). 0 or -ENOMEM. */
int tune_row__add_run(struct tune_row *r, const double *x, const double *own, size_t n);
void tune_row__free(struct tune_row *r);
/* The median and its interval. */
void tune_row__figures(struct tune_row *r);
/* Whether a's and b's runs differ beyond their run-to-run spread: each
 * run's median, the two settings' runs pooled about their means, a
 * two-sided t-test at the 1% level. The cycles of one run are alike, so
 * with few runs the bootstrap's intervals alone take drift between runs
 * for a difference. One run each: true (no spread to test against). */
bool tune_rows__runs_differ(const struct tune_row *a, const struct tune_row *b);
/* Whether a's and b's own values (without the wait behind other processes)
 * differ as their values do: intervals clear of each other, the runs
 * differing (tune_rows__runs_differ), the medians in the same order. A
 * difference of the values that their own values do not hold is the wait
 * behind other processes: its verdict is withheld. */
bool tune_rows__own_differ(const struct tune_row *a, const struct tune_row *b, bool higher_is_better);
/* Whether two rows' intervals overlap; false when either has none. */
bool tune_row__overlap(const struct tune_row *a, const struct tune_row *b);
/* Each row's change against rows[base] and its verdict (figures first). */
void tune_rows__compare(struct tune_row *rows, size_t n, size_t base, bool higher_is_better);
/* The row with the best median, or -1 when none has one. */
int tune_rows__best(const struct tune_row *rows, size_t n, bool higher_is_better);
/* The choice: the best row when its interval lies clear of the
 * baseline's, its runs differ and its own values do too (*significant),
 * else the baseline. */
size_t tune_rows__choose(const struct tune_row *rows, size_t n, size_t base, bool higher_is_better,
			 bool *significant);

/* One setting: its values, its runs, its figures. */
struct tune_setting {
	int value[TUNE_MAX_PARAMS];  /* the index of each parameter's value */
	char *label;                 /* "threads=2 ctx=512" */
	char *dir;                   /* its directory in the tune's output */
	char **runs;                 /* run directories counted (NULL-terminated) */
	size_t nruns;
	char **left;                 /* runs not counted: "DIR (interrupted)" */
	size_t nleft;
	size_t warmup_lo, warmup_hi; /* cycles left out per run, least and most */
	struct tune_row row;
	struct tune_evidence ev;
};

/* A whole tune, as the table and settings.json state it. */
struct tune_result {
	const struct tune_opts *opts;
	char **command;                   /* as run, with {NAME} (--from may rewrite it) */
	char as[TUNE_MAX_PARAMS][64];     /* each parameter under the runner's own name */
	const char *runner;               /* "llama.cpp" when --from knew it */
	struct tune_metric metric;
	bool have_metric;
	struct tune_setting *settings;
	size_t nsettings, capsettings;
	size_t base, chosen;
	int best;                         /* -1: none measured */
	int versus;                       /* the evidence's other side: the best, or when that is the
					   * baseline the next best; -1: none */
	bool significant;                 /* chosen != base, clear of its interval */
	size_t runs_planned, runs_done;
	bool complete;
	char stop_reason[96];             /* why it is not complete */
	json_t *system, *gpu;             /* the first run's `system` and `gpu` */
	char started_at[40];
};

/* The setting with these value indexes, added (with its label) if new;
 * -1 out of memory. */
int tune_result__setting(struct tune_result *t, const int *value);
/* Figures of every setting, their comparison with the baseline, the best
 * and the choice. one_at_a_time: the choice is `chosen` as the stages
 * left it, kept only when clear of the baseline's interval. */
void tune_result__conclude(struct tune_result *t, bool one_at_a_time);
void tune_result__free(struct tune_result *t);

#endif
