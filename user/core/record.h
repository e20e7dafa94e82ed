// SPDX-License-Identifier: BSD-2-Clause
#ifndef INFERTRACE_RECORD_H
#define INFERTRACE_RECORD_H

int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
