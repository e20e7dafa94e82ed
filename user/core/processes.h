// SPDX-License-Identifier: BSD-2-Clause
/* The processes a recording follows: the roots, the children they forked,
 * their names, exit status and CPU time. */
#ifndef INFERTRACE_PROCESSES_H
#define INFERTRACE_PROCESSES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include <linux/types.h>

#include "infertrace.h"

struct traced_proc {
	pid_t pid;
	pid_t parent;
	bool root;
	bool exited;
	char comm[IT_COMM_LEN];
	uint64_t start_ns;  /* CLOCK_MONOTONIC, when first seen */
	uint64_t exit_ns;
	int exit_status;    /* wait(2)-style status */
	double cpu_first;   /* CPU seconds when first read, -1 unknown */
	double cpu_last;    /* latest reading while alive */
};

struct process_table {
	struct traced_proc *procs;
	size_t n, cap;
};

struct traced_proc *process_table__find(struct process_table *pt, pid_t pid);
/* Adds pid (or returns the existing entry). NULL on ENOMEM. */
struct traced_proc *process_table__add(struct process_table *pt, pid_t pid, pid_t parent, bool root,
				       uint64_t now_ns);
/* Reads the CPU time of every live process. */
void process_table__refresh_cpu(struct process_table *pt);
/* Number of root processes still alive. */
size_t process_table__roots_alive(struct process_table *pt);
/* CPU seconds used during the recording, summed over all processes. */
double process_table__cpu_seconds(const struct process_table *pt);
void process_table__free(struct process_table *pt);

#endif
