// SPDX-License-Identifier: BSD-2-Clause
/* Crash concern: OOM kills, fatal signals and abnormal exits of the followed
 * processes (bpf/crash.bpf.c sends them), and processes matching --comm
 * that started meanwhile. Fills the model's `crashes` section. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "comm.h"
#include "concerns.h"
#include "infertrace.skel.h"
#include "syms.h"
#include "vec.h"

struct crash {
	struct it_crash_event ev;
	bool oom;                 /* the OOM killer chose it */
	struct it_crash_event sig; /* the fatal signal generated for it, if seen */
	bool have_sig;
};

#define MAX_PENDING 64

struct crash_state {
	struct crash *v;
	size_t n, cap;
	struct it_crash_event pending[MAX_PENDING]; /* OOM marks and fatal signals not yet followed by an exit */
	size_t npending;
};

/* The programs of bpf/crash.bpf.c, each loaded where its tracepoint exists. */
struct crash_prog {
	const char *category, *event;
};

static const struct crash_prog progs[] = {
	{ "sched", "sched_process_exec" },
	{ "sched", "sched_process_exit" },
	{ "oom", "mark_victim" },
	{ "signal", "signal_generate" },
};
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static void crash_programs(struct infertrace_bpf *s, struct bpf_program *out[NPROGS])
{
	struct bpf_program *const t[NPROGS] = {
		s->progs.crash_on_exec, s->progs.crash_on_exit, s->progs.crash_on_oom_victim, s->progs.crash_on_signal,
	};

	memcpy(out, t, sizeof(t));
}

static int crash_configure(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	struct bpf_program *p[NPROGS];

	rec->crash = calloc(1, sizeof(*rec->crash));
	if (!rec->crash)
		return -ENOMEM;
	crash_programs(s, p);
	for (size_t i = 0; i < NPROGS; i++) {
		if (!tracer__have_tracepoint(progs[i].category, progs[i].event)) {
			fprintf(stderr, "infertrace: note: this kernel lacks %s:%s; the rest of the crash "
				"tracing works\n", progs[i].category, progs[i].event);
			bpf_program__set_autoload(p[i], false);
		}
	}
	if (rec->opts.comm) {
		if (strlen(rec->opts.comm) >= IT_COMM_LEN)
			fprintf(stderr, "infertrace: note: --comm '%s' is longer than the kernel keeps "
				"(%d characters); matching its first %d\n", rec->opts.comm,
				IT_COMM_LEN - 1, IT_COMM_LEN - 1);
		strncpy((char *)s->rodata->cfg_comm, rec->opts.comm, IT_COMM_LEN - 1);
	}
	return 0;
}

/* After the sched concern's: crash_on_exec must run after sched_on_exec on
 * the same tracepoint (programs run in attach order), so that a process it
 * starts following for --comm is not taken for one already followed. */
static int crash_attach(struct recording *rec)
{
	struct bpf_program *p[NPROGS];

	crash_programs(rec->tracer.skel, p);
	return tracer__attach_loaded(&rec->tracer, p, NPROGS);
}

static void remember(struct crash_state *crashes, const struct it_crash_event *e)
{
	if (crashes->npending == MAX_PENDING) {
		memmove(crashes->pending, crashes->pending + 1, sizeof(crashes->pending) - sizeof(crashes->pending[0]));
		crashes->npending--;
	}
	crashes->pending[crashes->npending++] = *e;
}

static void on_crash(struct crash_state *crashes, const struct it_crash_event *e)
{
	struct crash *c;

	if (VEC_RESERVE(crashes->v, crashes->cap, crashes->n, 16))
		return;
	c = &crashes->v[crashes->n++];
	memset(c, 0, sizeof(*c));
	c->ev = *e;
	for (size_t i = 0; i < crashes->npending; i++) {
		const struct it_crash_event *p = &crashes->pending[i];

		if (p->hdr.tgid != e->hdr.tgid)
			continue;
		if (p->hdr.type == IT_EV_OOM)
			c->oom = true;
		else if (p->signal == e->signal) {
			c->sig = *p;
			c->have_sig = true;
		}
	}
}

static void crash_on_event(struct recording *rec, const void *data, size_t size)
{
	struct crash_state *crashes = rec->crash;

	const struct it_crash_event *e = data;
	struct traced_proc *p;

	if (size < sizeof(*e))
		return;
	switch (e->hdr.type) {
	case IT_EV_CRASH:
		on_crash(crashes, e);
		return;
	case IT_EV_OOM:
	case IT_EV_FATAL_SIGNAL:
		remember(crashes, e);
		return;
	case IT_EV_COMM:
		p = process_table__add(&rec->procs, e->hdr.tgid, e->sender_pid, false, e->hdr.ts_ns);
		if (p) {
			memcpy(p->comm, e->comm, IT_COMM_LEN);
			p->comm[IT_COMM_LEN - 1] = 0;
			comm__sanitize(p->comm);
		}
		syms_cache__capture(rec->syms, e->hdr.tgid);
		return;
	}
}

static const char *cause_of(const struct crash *c)
{
	if (c->oom)
		return "oom_kill";
	if (c->ev.signal)
		return "signal";
	return "exit_status";
}

/* A target is a process the recording was asked for (the launched command,
 * a -p PID); a helper is any process a target ran (a shim's readlink). */
static bool is_target(struct recording *rec, pid_t pid)
{
	struct traced_proc *p = process_table__find(&rec->procs, pid);

	return p && p->root;
}

/* What each death was, said apart: the targets' own fate one line each, the
 * helpers counted by crash (a signal) and non-zero exit. */
static void crash_summary(struct recording *rec)
{
	const struct crash_state *crashes = rec->crash;
	size_t helper_sig = 0, helper_exit = 0;
	char helpers[320] = "";

	for (size_t i = 0; i < crashes->n; i++) {
		const struct crash *c = &crashes->v[i];
		char comm[IT_COMM_LEN + 1], what[64];
		const char *abbrev = c->ev.signal ? sigabbrev_np(c->ev.signal) : NULL;

		memcpy(comm, c->ev.comm, IT_COMM_LEN);
		comm[IT_COMM_LEN] = 0;
		comm__sanitize(comm);
		if (c->oom)
			snprintf(what, sizeof(what), "was killed by the OOM killer");
		else if (c->ev.signal)
			snprintf(what, sizeof(what), "crashed: killed by SIG%s%s", abbrev ? abbrev : "?",
				 c->ev.exit_code & 0x80 ? " (core dumped)" : "");
		else
			snprintf(what, sizeof(what), "exited with status %d", (c->ev.exit_code >> 8) & 0xff);
		if (is_target(rec, c->ev.hdr.tgid)) {
			fprintf(stderr, "infertrace: the target %s (pid %d) %s\n", comm, c->ev.hdr.tgid, what);
			continue;
		}
		*(c->ev.signal || c->oom ? &helper_sig : &helper_exit) += 1;
		if (helper_sig + helper_exit <= 3)
			snprintf(helpers + strlen(helpers), sizeof(helpers) - strlen(helpers), "%s%s (pid %d) %s",
				 helper_sig + helper_exit > 1 ? "; " : "", comm, c->ev.hdr.tgid, what);
	}
	if (helper_sig + helper_exit)
		fprintf(stderr, "infertrace: helper processes the target ran: %zu crashed (a signal), %zu exited "
			"non-zero: %s%s (see crashes)\n", helper_sig, helper_exit, helpers,
			helper_sig + helper_exit > 3 ? "; ..." : "");
}

static int crash_collect(struct recording *rec, struct model *m)
{
	struct crash_state *crashes = rec->crash;

	m->crashes.n = 0;
	for (size_t i = 0; i < crashes->n; i++) {
		const struct crash *c = &crashes->v[i];
		const char *phase = c->ev.phase && c->ev.phase < IT_MAX_PHASES ? rec->phase_names[c->ev.phase] : NULL;
		const char *abbrev = c->ev.signal ? sigabbrev_np(c->ev.signal) : NULL;
		struct model_crash *o;

		if (VEC_RESERVE(m->crashes.v, m->crashes.cap, m->crashes.n, 8))
			return -ENOMEM;
		o = &m->crashes.v[m->crashes.n++];
		memset(o, 0, sizeof(*o));
		/* any bytes the process chose, made valid UTF-8 */
		memcpy(o->comm, c->ev.comm, IT_COMM_LEN);
		o->comm[IT_COMM_LEN] = 0;
		comm__sanitize(o->comm);
		o->pid = c->ev.hdr.tgid;
		snprintf(o->role, sizeof(o->role), "%s", is_target(rec, c->ev.hdr.tgid) ? "target" : "helper");
		o->time_ns = c->ev.hdr.ts_ns;
		o->time_s = c->ev.hdr.ts_ns > rec->start_ns ? (c->ev.hdr.ts_ns - rec->start_ns) / 1e9 : 0;
		o->cycle = c->ev.cycle == IT_CYCLE_NONE ? -1 : (int64_t)c->ev.cycle;
		o->phase = phase ? model__intern(m, phase) : -1;
		if (phase && o->phase < 0)
			return -ENOMEM;
		snprintf(o->cause, sizeof(o->cause), "%s", cause_of(c));
		if (c->ev.signal) {
			o->signal = c->ev.signal;
			o->has_signal = true;
			snprintf(o->signal_name, sizeof(o->signal_name), "SIG%s", abbrev ? abbrev : "?");
			o->core_dumped = c->ev.exit_code & 0x80;
		} else {
			o->has_exit_code = true;
			o->exit_code = (c->ev.exit_code >> 8) & 0xff;
		}
		if (c->have_sig) {
			o->has_sender = true;
			o->sender_pid = c->sig.sender_pid;
			o->si_code = c->sig.si_code;
		}
		o->rss_mb = c->ev.rss_bytes / (1024.0 * 1024.0);
	}
	if (crashes->n && !m->snapshot)
		crash_summary(rec);
	return 0;
}

static void crash_cleanup(struct recording *rec)
{
	struct crash_state *crashes = rec->crash;

	if (!crashes)
		return;
	(void)rec;
	free(crashes->v);
	free(crashes);
	rec->crash = NULL;
}

const struct concern crash_concern = {
	.name = "crash",
	.configure = crash_configure,
	.attach = crash_attach,
	.on_event = crash_on_event,
	.collect = crash_collect,
	.cleanup = crash_cleanup,
};
