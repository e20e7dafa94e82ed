// SPDX-License-Identifier: BSD-2-Clause
#ifndef INFERTRACE_REPORT_H
#define INFERTRACE_REPORT_H

/* `infertrace report DIR|profile.json`: text summary. */
int cmd_report(int argc, char **argv);
/* `infertrace diff BASE NEW`: speedup/regression table; exit 1 on regression. */
int cmd_diff(int argc, char **argv);

#endif
