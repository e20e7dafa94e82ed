// SPDX-License-Identifier: BSD-2-Clause
/* Bottleneck rules: read a derived model and add its findings
 * (`bottlenecks` and `recommendations`: the seeds' rules, thresholds
 * configurable with --threshold NAME=VALUE). Pure: unit-tested on models. */
#ifndef INFERTRACE_RULES_H
#define INFERTRACE_RULES_H


struct rule_thresholds {
	double inference_pct;       /* llm_inference phase share of the cycle (60) */
	double database_pct;        /* database phase share (15) */
	double mode_pct;            /* mode phase share (10) */
	double memory_pct;          /* peak RSS share of RAM (80) */
	double runq_pct;            /* run-queue wait share of on-CPU + wait (20) */
	double offcpu_pct;          /* a phase blocked this share of its time (50) */
	double gpu_util_pct;        /* GPU utilisation below this while inference dominates (70) */
	double gpu_sync_pct;        /* host waits on the GPU this share of the cycle (30) */
	double leak_mb_per_cycle;   /* RSS growth per cycle (1) */
	double spin_pct;            /* on-CPU samples spinning in barriers (10) */
	double power_mw;            /* power alert: peak total power above this (1000, the seeds') */
	double power_capped_pct;    /* power-capped share of the cycles' time (5) */
};

void rule_thresholds__defaults(struct rule_thresholds *t);
/* Sets one threshold by name (inference_pct, database_pct, ...). 0 or -EINVAL. */
int rule_thresholds__set(struct rule_thresholds *t, const char *name, double value);
struct model;
/* Evaluates the rules on a model at MODEL_DERIVED (or later: the findings
 * are replaced) and moves it to MODEL_ANALYSED. 0, or -EINVAL for a model
 * that is not derived yet. */
int rules__evaluate(struct model *m, const struct rule_thresholds *t);

#endif
