// SPDX-License-Identifier: BSD-2-Clause
/* JIT frame names in a recording (--jit-maps on|read|off): the runtimes'
 * perf-map switches passed to a launched command, every traced process's
 * perf map read at each tick and before symbolization, and a hint for -p
 * targets that run a JIT without a map. */
#ifndef INFERTRACE_JIT_H
#define INFERTRACE_JIT_H

struct recording;

/* Before the command is launched: sets the switches in the environment the
 * child inherits (mode on), or turns map reading off (mode off). 0 or -errno. */
int jit__prepare(struct recording *rec);
/* Reads the new lines of every traced process's map. */
void jit__refresh(struct recording *rec);
/* For -p targets: one line per process that runs a JIT but writes no map,
 * saying how to start it so that its frames get names. */
void jit__hint_pids(struct recording *rec);

#endif
