// SPDX-License-Identifier: BSD-2-Clause
/* A tiny process that outlives the tracer: if the tracer dies without saying
 * goodbye (SIGKILL, a crash), it sends SIGCONT to every target, so a target
 * the kernel side stopped for lazy probe placement (bpf/tracer.bpf.c) is never
 * left in state T. */
#ifndef INFERTRACE_WATCHDOG_H
#define INFERTRACE_WATCHDOG_H

#include <sys/types.h>

struct watchdog {
	pid_t pid;
	int fd; /* write end of the pipe the watchdog waits on */
};

/* Forks the watchdog. targets_fd: the BPF map of traced tgids (read when the
 * tracer is gone); pgid: a launched command's process group, or 0. Call it
 * after loading and before attaching, so it inherits no BPF link. 0 or -errno. */
int watchdog__start(struct watchdog *w, int targets_fd, pid_t pgid);
/* Clean goodbye: the watchdog exits without signalling anyone. */
void watchdog__stop(struct watchdog *w);

#endif
