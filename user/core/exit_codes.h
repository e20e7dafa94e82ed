// SPDX-License-Identifier: BSD-2-Clause
/* Exit statuses of every infertrace command, one per class of failure, so
 * that a script can tell a typo from a missing privilege from a dead target.
 * The list also feeds `--help`, the man page and docs/commands.md. */
#ifndef INFERTRACE_EXIT_CODES_H
#define INFERTRACE_EXIT_CODES_H

/* X(NAME, VALUE, WHAT) */
#define IT_EXIT_CODES(X)                                                                       \
	X(IT_EXIT_OK, 0, "success")                                                            \
	X(IT_EXIT_REGRESSION, 1, "diff: a metric regressed beyond the threshold and its 95% interval excludes zero") \
	X(IT_EXIT_USAGE, 2, "usage: bad command line, option value or --config file")         \
	X(IT_EXIT_PRIVILEGE, 3, "privilege: not root and without CAP_BPF+CAP_PERFMON")        \
	X(IT_EXIT_TARGET, 4, "target: PID, command, probe symbol or input recording unusable") \
	X(IT_EXIT_RUNTIME, 5, "runtime: kernel, BPF load/attach or tracing failure")            \
	X(IT_EXIT_OUTPUT, 6, "output: the output directory or a file in it cannot be written") \
	X(IT_EXIT_UNMATCHED, 7, "record --strict: a probe, py: or js: spec never matched (outputs written)")

enum it_exit {
#define IT_EXIT_ENUM(name, value, what) name = value,
	IT_EXIT_CODES(IT_EXIT_ENUM)
#undef IT_EXIT_ENUM
};

#endif
