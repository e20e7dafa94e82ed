// SPDX-License-Identifier: BSD-2-Clause
/* Bottleneck rules: read a derived model and add its findings
 * (`bottlenecks` and `recommendations`: the seeds' rules, thresholds
 * configurable with --threshold NAME=VALUE). Pure: unit-tested on models. */
#ifndef INFERTRACE_RULES_H
#define INFERTRACE_RULES_H


/* The rules' thresholds: name (as --threshold and config.thresholds name
 * it), default. */
#define RULE_THRESHOLDS(X)                                                                          \
	X(inference_pct, 60)      /* llm_inference phase share of the cycle */                      \
	X(database_pct, 15)       /* database phase share */                                         \
	X(mode_pct, 10)           /* mode phase share */                                             \
	X(memory_pct, 80)         /* peak RSS share of RAM */                                        \
	X(runq_pct, 20)           /* run-queue wait share of on-CPU + wait */                        \
	X(offcpu_pct, 50)         /* a phase blocked this share of its time */                       \
	X(gpu_util_pct, 70)       /* GPU utilisation below this while inference dominates */         \
	X(gpu_sync_pct, 30)       /* host waits on the GPU this share of the cycle (or window) */    \
	X(gpu_busy_pct, 80)       /* GPU timeline: kernels busy this share of the window */          \
	X(launch_idle_pct, 30)    /* GPU timeline: idle while the launching thread runs host code */ \
	X(transfer_pct, 30)       /* GPU timeline: copies take this share of the window */           \
	X(leak_mb_per_cycle, 1)   /* RSS growth per cycle */                                         \
	X(spin_pct, 10)           /* on-CPU samples spinning in barriers */                          \
	X(power_mw, 1000)         /* power alert: peak total power above this (the seeds') */        \
	X(power_capped_pct, 5)    /* power-capped share of the cycles' time */

#define RULE_THRESHOLD_MEMBER(name, def) double name;
struct rule_thresholds {
	RULE_THRESHOLDS(RULE_THRESHOLD_MEMBER)
};
#undef RULE_THRESHOLD_MEMBER

void rule_thresholds__defaults(struct rule_thresholds *t);
/* Sets one threshold by name (inference_pct, database_pct, ...). 0 or -EINVAL. */
int rule_thresholds__set(struct rule_thresholds *t, const char *name, double value);
struct model;
/* Evaluates the rules on a model at MODEL_DERIVED (or later: the findings
 * are replaced) and moves it to MODEL_ANALYSED. 0, or -EINVAL for a model
 * that is not derived yet. */
int rules__evaluate(struct model *m, const struct rule_thresholds *t);

#endif
