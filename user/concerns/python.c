// SPDX-License-Identifier: BSD-2-Clause
/* Python frames concern: finds CPython in each followed process (at attach,
 * exec and each new executable mapping, e.g. libpython), gives BPF its
 * offsets (`py_procs`), follows forks (a child keeps its parent's
 * addresses) and keeps the names of the code objects BPF reports. The
 * stacks themselves are folded by stacks.c through python.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "python.h"
#include "syms.h"


struct py_state {
	int procs_fd;
	/* pids already found, or warned about: not looked at again until exec */
	pid_t done[4096];
	size_t ndone;
};

static struct py_state py_state = { .procs_fd = -1 };

static bool py_done(pid_t pid)
{
	for (size_t i = 0; i < py_state.ndone; i++)
		if (py_state.done[i] == pid)
			return true;
	return false;
}

static void py_forget(pid_t pid)
{
	for (size_t i = 0; i < py_state.ndone; i++)
		if (py_state.done[i] == pid) {
			py_state.done[i] = py_state.done[--py_state.ndone];
			return;
		}
}

static void py_mark(pid_t pid)
{
	if (py_state.ndone < sizeof(py_state.done) / sizeof(py_state.done[0]))
		py_state.done[py_state.ndone++] = pid;
}

static void py_look(struct recording *rec, pid_t pid)
{
	struct it_py_proc pp;
	char what[512];
	__u32 key = pid;

	if (py_state.procs_fd < 0 || py_done(pid))
		return;
	switch (python__detect(pid, rec->syms, &pp, what, sizeof(what))) {
	case PY_DETECT_OK:
		if (bpf_map_update_elem(py_state.procs_fd, &key, &pp, BPF_ANY))
			fprintf(stderr, "infertrace: warning: Python %s in pid %d: %s; its stacks stay native\n",
				what, pid, strerror(errno));
		py_mark(pid);
		break;
	case PY_DETECT_UNSUPPORTED:
		fprintf(stderr,
			"infertrace: warning: Python %s in pid %d is not supported (CPython 3.10 to 3.13); its stacks stay native\n",
			what, pid);
		py_mark(pid);
		break;
	default:
		break;
	}
}

static int python_attach(struct recording *rec)
{
	py_state.procs_fd = bpf_map__fd(rec->tracer.skel->maps.py_procs);
	python__set_stacks_fd(bpf_map__fd(rec->tracer.skel->maps.py_stacks));
	for (int i = 0; i < rec->opts.npids; i++)
		py_look(rec, rec->opts.pids[i]);
	return 0;
}

static int python_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_event_header *h = data;
	const struct it_proc_event *pe = data;
	struct it_py_proc pp;
	__u32 parent, child;

	switch (h->type) {
	case IT_EV_PY_CODE:
		if (size >= sizeof(struct it_py_code_event))
			python__add_code(data);
		return 1;
	case IT_EV_FORK:
		parent = pe->parent_tgid;
		child = h->tgid;
		if (py_state.procs_fd >= 0 && bpf_map_lookup_elem(py_state.procs_fd, &parent, &pp) == 0 &&
		    bpf_map_update_elem(py_state.procs_fd, &child, &pp, BPF_ANY) == 0)
			py_mark(h->tgid);
		return 0;
	case IT_EV_EXEC:
		child = h->tgid;
		if (py_state.procs_fd >= 0)
			bpf_map_delete_elem(py_state.procs_fd, &child);
		py_forget(h->tgid);
		py_look(rec, h->tgid);
		return 0;
	case IT_EV_MMAP:
		py_look(rec, h->tgid);
		return 0;
	default:
		return 0;
	}
}

static void python_cleanup(struct recording *rec)
{
	(void)rec;
	python__reset();
	py_state.procs_fd = -1;
	py_state.ndone = 0;
}

const struct concern python_concern = {
	.name = "python",
	.attach = python_attach,
	.on_event = python_on_event,
	.cleanup = python_cleanup,
};
