// SPDX-License-Identifier: BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "processes.h"
#include "target.h"
#include "vec.h"

struct traced_proc *process_table__find(struct process_table *pt, pid_t pid)
{
	/* newest first: a reused pid names its latest process */
	for (size_t i = pt->n; i-- > 0;)
		if (pt->procs[i].pid == pid)
			return &pt->procs[i];
	return NULL;
}

struct traced_proc *process_table__add(struct process_table *pt, pid_t pid, pid_t parent, bool root,
				       uint64_t now_ns)
{
	struct traced_proc *p = process_table__find(pt, pid);

	if (p && !p->exited)
		return p;
	if (VEC_RESERVE(pt->procs, pt->cap, pt->n, 16))
		return NULL;
	p = &pt->procs[pt->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->parent = parent;
	p->root = root;
	p->start_ns = now_ns;
	target__comm(pid, p->comm, sizeof(p->comm));
	p->cpu_first = target__cpu_seconds(pid);
	p->cpu_last = p->cpu_first;
	return p;
}

void process_table__refresh_cpu(struct process_table *pt)
{
	for (size_t i = 0; i < pt->n; i++) {
		struct traced_proc *p = &pt->procs[i];
		double c;

		if (p->exited)
			continue;
		c = target__cpu_seconds(p->pid);
		if (c < 0)
			continue;
		if (p->cpu_first < 0)
			p->cpu_first = c;
		p->cpu_last = c;
	}
}

size_t process_table__roots_alive(struct process_table *pt)
{
	size_t n = 0;

	for (size_t i = 0; i < pt->n; i++)
		if (pt->procs[i].root && !pt->procs[i].exited)
			n++;
	return n;
}

double process_table__cpu_seconds(const struct process_table *pt)
{
	double s = 0;

	for (size_t i = 0; i < pt->n; i++)
		if (pt->procs[i].cpu_first >= 0)
			s += pt->procs[i].cpu_last - pt->procs[i].cpu_first;
	return s;
}

void process_table__free(struct process_table *pt)
{
	free(pt->procs);
	memset(pt, 0, sizeof(*pt));
}
