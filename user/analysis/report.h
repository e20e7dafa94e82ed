// SPDX-License-Identifier: BSD-2-Clause
#ifndef INFERTRACE_REPORT_H
#define INFERTRACE_REPORT_H

/* `infertrace report DIR|profile.json`: text summary. */
int cmd_report(int argc, char **argv);
/* `infertrace diff BASE NEW`: speedup/regression table; exit 1 on regression. */
int cmd_diff(int argc, char **argv);

struct model;
/* Prints diff's table for two loaded models; the number of regressions
 * (a time grown by more than threshold_pct, or a figure on one side only). */
int diff__compare(const struct model *base, const struct model *new_m, double threshold_pct);

#endif
