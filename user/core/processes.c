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

json_t *process_table__json(const struct process_table *pt)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < pt->n; i++) {
		const struct traced_proc *p = &pt->procs[i];
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "parent", json_integer(p->parent));
		json_object_set_new(o, "comm", json_string(p->comm));
		json_object_set_new(o, "root", json_boolean(p->root));
		json_object_set_new(o, "cpu_seconds",
				    p->cpu_first >= 0 ? json_real(p->cpu_last - p->cpu_first) : json_null());
		if (p->exited) {
			if (WIFSIGNALED(p->exit_status))
				json_object_set_new(o, "killed_by_signal", json_integer(WTERMSIG(p->exit_status)));
			else
				json_object_set_new(o, "exit_code", json_integer(WEXITSTATUS(p->exit_status)));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

void process_table__free(struct process_table *pt)
{
	free(pt->procs);
	memset(pt, 0, sizeof(*pt));
}
