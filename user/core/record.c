// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace record`: parse → set up → attach → run → collect → write. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memory_budget.h"
#include "atomic_file.h"
#include "model.h"
#include "exit_codes.h"
#include "comm.h"
#include "outdir.h"
#include "spool.h"
#include "config_file.h"
#include "system_facts.h"
#include "outputs.h"
#include "processes.h"
#include "profile.h"
#include "progress.h"
#include "concerns.h"
#include "rules.h"
#include "rotate.h"
#include "probes.h"
#include "record.h"
#include "recording.h"
#include "stacks.h"
#include "jit.h"
#include "syms.h"
#include "target.h"
#include "unwind.h"
#include "tracer.h"
#include "stop_signals.h"
#include "watchdog.h"
#include "infertrace.skel.h"


/* The model's stages carry the order of the results (spans, then every
 * concern's figures, then derived figures, findings and the writers). This
 * list orders only attaching: programs on the same tracepoint run in attach
 * order, and crash_on_exec must follow sched_on_exec (crash.c). */
static const struct concern *const concerns[] = {
	&python_concern,   /* first: code names must be known before any stack is folded */
	&probes_concern,
	&sampling_concern,
	&sched_concern,
	&memory_concern,
	&crash_concern,
	&side_concern,
	&network_concern,
	&cuda_concern,
	&gpu_concern, /* configure: before the command is forked (its environment) */
	&overhead_concern,
	&llama_concern,
	&jsphase_concern, /* after probes (spans) and sched (collect) */
	&self_cost_concern, /* attaches after the others: its BPF run-time stats leave out start-up */
	&live_concern, /* last: its attach takes the terminal once all others attached */
};
#define for_each_concern(c) \
	for (size_t _i = 0; _i < sizeof(concerns) / sizeof(concerns[0]) && ((c) = concerns[_i]); _i++)

#define KSYMS_LOADER_NICE 10

/* Kernel symbols name kernel frames only at the end, but reading
 * /proc/kallsyms takes 0.1-0.2 s (the kernel formats 120,000 lines): a
 * low-priority thread reads it during start-up, beside the BPF programs'
 * loading, instead of after the target (the outputs' wait) or while it
 * runs (the experiment's CPU). */
struct ksyms_loader {
	pthread_t thread;
	bool started;
	struct ksyms *ksyms;
	int err;
};

static void *ksyms_loader_run(void *arg)
{
	struct ksyms_loader *l = arg;
	id_t tid = (id_t)syscall(SYS_gettid);
	int nice_now;

	/* lower than the loading thread, never higher: a tracer run with
	 * `nice -n 19` keeps its loader at 19 */
	errno = 0;
	nice_now = getpriority(PRIO_PROCESS, tid);
	if (errno || nice_now < KSYMS_LOADER_NICE)
		setpriority(PRIO_PROCESS, tid, KSYMS_LOADER_NICE);
	l->ksyms = ksyms__load();
	l->err = l->ksyms ? 0 : errno;
	return NULL;
}

static void ksyms_loader__start(struct ksyms_loader *l)
{
	l->started = !pthread_create(&l->thread, NULL, ksyms_loader_run, l);
}

static struct ksyms *ksyms_loader__join(struct ksyms_loader *l)
{
	if (l->started) {
		pthread_join(l->thread, NULL);
		l->started = false;
		errno = l->err;
		return l->ksyms;
	}
	return ksyms__load();
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* The stop reason for a signal: its name (SIGUSR1, SIGRTMIN+3). */
static const char *signal_reason(int sig)
{
	static char buf[32];
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, sizeof(buf), "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

uint64_t recording__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int recording__add_child_env(struct recording *rec, char *name_value)
{
	size_t n = 0;

	while (n < RECORDING_CHILD_ENV_MAX && rec->child_env[n])
		n++;
	if (n == RECORDING_CHILD_ENV_MAX)
		return -ENOSPC;
	rec->child_env[n] = name_value;
	return 0;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A process's maps are captured at its fork, exec and mmaps, to name its
 * frames when the outputs are written. While --max-memory is reached, only
 * the targets themselves and processes already captured are (their exec and
 * mmaps): a stream of new processes no longer grows the tracer. */
static bool hold_maps(struct recording *rec, pid_t pid)
{
	const struct traced_proc *p = process_table__find(&rec->procs, pid);

	if (recording__may_hold(rec) || syms_cache__has(rec->syms, pid) || (p && p->root))
		return true;
	model__add_lost(&rec->model, "map_captures_not_kept", 1);
	return false;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recording *rec = ctx;
	const struct it_event_header *h = data;
	const struct it_proc_event *pe = data;
	struct traced_proc *p;

	if (size < sizeof(*h))
		return 0;
	switch (h->type) {
	case IT_EV_FORK:
		p = process_table__add(&rec->procs, h->tgid, pe->parent_tgid, false, h->ts_ns);
		if (p && !p->comm[0]) {
			memcpy(p->comm, pe->comm, IT_COMM_LEN);
			comm__sanitize(p->comm);
		}
		/* until its own capture, the child maps what its parent mapped */
		if (hold_maps(rec, h->tgid)) {
			syms_cache__inherit(rec->syms, pe->parent_tgid, h->tgid);
			syms_cache__capture(rec->syms, h->tgid);
		}
		break;
	case IT_EV_EXEC:
		p = process_table__find(&rec->procs, h->tgid);
		if (p) {
			memcpy(p->comm, pe->comm, IT_COMM_LEN);
			comm__sanitize(p->comm);
		}
		if (hold_maps(rec, h->tgid))
			syms_cache__capture_at(rec->syms, h->tgid, h->ts_ns);
		break;
	case IT_EV_MMAP:
		if (hold_maps(rec, h->tgid))
			syms_cache__capture_at(rec->syms, h->tgid, h->ts_ns);
		break; /* the probes concern also places pending probes */
	case IT_EV_EXIT:
		p = process_table__find(&rec->procs, h->tgid);
		if (p && !p->exited) {
			double c = target__cpu_seconds(h->tgid); /* still a zombie: readable */

			if (c >= 0)
				p->cpu_last = c;
			p->exited = true;
			p->exit_ns = h->ts_ns;
			p->exit_status = pe->exit_code;
		}
		break;
	default:
		break;
	}
	/* every record goes to every concern that listens (concerns.h) */
	const struct concern *c;

	for_each_concern(c)
		if (c->on_event)
			c->on_event(rec, data, size);
	/* BPF stopped the process until every concern has seen its new code
	 * (pending probes placed, an interpreter found): continue it */
	if ((h->type == IT_EV_MMAP || h->type == IT_EV_EXEC) && size >= sizeof(*pe) && pe->stopped) {
		uint64_t now = recording__now_ns(), held = now > h->ts_ns ? now - h->ts_ns : 0;

		rec->target_stops++;
		kill(h->tgid, SIGCONT);
		rec->target_stopped_ns += held;
		if (held > rec->target_stop_max_ns)
			rec->target_stop_max_ns = held;
	}
	return 0;
}

static int setup_targets(struct recording *rec)
{
	struct record_opts *o = &rec->opts;
	int err;

	err = jit__prepare(rec);
	if (err)
		return err;
	if (o->command) {
		int out_fd = -1;

		if (o->top) {
			/* the view owns the terminal: the command's output goes to a file */
			char path[4096];

			int dfd = atomic_dir__open(o->output_dir, NULL, 0);

			snprintf(path, sizeof(path), "%s/command.log", o->output_dir);
			/* an earlier run's was removed with the output set: a file
			 * there now was planted, and is refused */
			out_fd = dfd < 0 ? dfd : openat(dfd, "command.log", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
							O_NOFOLLOW, atomic_file__mode());
			err = out_fd < 0 ? (dfd < 0 ? dfd : -errno) : 0;
			if (dfd >= 0)
				close(dfd);
			if (out_fd < 0) {
				fprintf(stderr, "infertrace: cannot write %s: %s\n", path, strerror(-err));
				return err;
			}
			atomic_file__chown_invoker(out_fd);
		}
		err = launched__fork(&rec->cmd, o->command, out_fd, &o->run_as, rec->child_env);
		if (out_fd >= 0)
			close(out_fd);
		if (err) {
			fprintf(stderr, "infertrace: cannot fork: %s\n", strerror(-err));
			return err;
		}
		rec->launched = true;
		err = tracer__add_target(&rec->tracer, rec->cmd.pid, IT_TARGET_ROOT | IT_TARGET_AWAIT_EXEC);
		if (!process_table__add(&rec->procs, rec->cmd.pid, getpid(), true, recording__now_ns()))
			err = -ENOMEM;
		return err;
	}
	for (int i = 0; i < o->npids; i++) {
		err = tracer__add_target(&rec->tracer, o->pids[i], IT_TARGET_ROOT);
		if (err)
			return err;
		if (!process_table__add(&rec->procs, o->pids[i], 0, true, recording__now_ns()))
			return -ENOMEM;
		err = syms_cache__capture(rec->syms, o->pids[i]);
		if (err)
			fprintf(stderr, "infertrace: warning: cannot read the mappings of PID %d: %s\n",
				o->pids[i], strerror(-err));
	}
	jit__hint_pids(rec);
	return 0;
}

static bool should_stop(struct recording *rec)
{
	if (rec->stop_request) {
		rec->stop_reason = rec->stop_request;
		return true;
	}
	if (stop_signal) {
		rec->stop_reason = signal_reason(stop_signal);
		return true;
	}
	if (rec->opts.duration_s > 0 && recording__now_ns() - rec->start_ns >= rec->opts.duration_s * 1e9) {
		rec->stop_reason = "duration";
		return true;
	}
	if (rec->launched) {
		if (launched__poll(&rec->cmd)) {
			struct traced_proc *p = process_table__find(&rec->procs, rec->cmd.pid);

			if (p) {
				p->exited = true;
				p->exit_status = rec->cmd.status;
				if (!p->exit_ns)
					p->exit_ns = recording__now_ns();
			}
			rec->stop_reason = "target exited";
			return true;
		}
		return false;
	}
	for (size_t i = 0; i < rec->procs.n; i++) {
		struct traced_proc *p = &rec->procs.procs[i];

		if (p->root && !p->exited && !target__alive(p->pid)) {
			p->exited = true;
			p->exit_ns = recording__now_ns();
		}
	}
	if (!process_table__roots_alive(&rec->procs)) {
		rec->stop_reason = "target exited";
		return true;
	}
	return false;
}

/* One line once everything is attached: from here on, nothing is missed. */
static void announce(const struct recording *rec)
{
	if (rec->opts.quiet)
		return;
	if (rec->launched)
		fprintf(stderr, "infertrace: recording '%s' (PID %d) at %u Hz; Ctrl-C to stop\n",
			rec->opts.command[0], rec->cmd.pid, rec->opts.frequency);
	else
		fprintf(stderr, "infertrace: recording %d process(es) from PID %d at %u Hz; Ctrl-C to stop\n",
			rec->opts.npids, rec->opts.pids[0], rec->opts.frequency);
}

static int write_period(struct recording *rec, bool final, bool done);

/* --checkpoint: the outputs so far, so that a tracer killed (SIGKILL, a
 * crash, a full disk) leaves its last checkpoint whole. A failed write is
 * reported and the recording goes on. */
static void checkpoint(struct recording *rec)
{
	struct model m;
	char reason[128];
	int err;

	if (rec->rotation) {
		err = write_period(rec, false, false);
		if (err)
			fprintf(stderr, "infertrace: warning: checkpoint failed: %s\n", strerror(-err));
		return;
	}
	if (!rec->ksyms)
		rec->ksyms = ksyms__load(); /* kernel frames named in checkpoints too */
	err = recording__build(rec, &m, false);
	if (!err) {
		snprintf(reason, sizeof(reason), "checkpoint: recording still running; covers started_at + 0 .. %.3f s",
			 m.run.duration_s);
		free(m.run.stop_reason);
		m.run.stop_reason = strdup(reason);
		err = outputs__write_checkpoint(&m, rec->opts.output_dir);
		model__free(&m);
	}
	if (err)
		fprintf(stderr, "infertrace: warning: checkpoint failed: %s\n", strerror(-err));
}

static int run(struct recording *rec)
{
	uint64_t last_refresh = 0, last_checkpoint = recording__now_ns(), rotate_retry = 0;
	int err;

	progress__start(rec->opts.quiet);
	while (!should_stop(rec)) {
		err = tracer__poll(&rec->tracer, 100);
		if (err < 0) {
			progress__end();
			fprintf(stderr, "infertrace: reading the ring buffer failed: %s\n", strerror(-err));
			return err;
		}
		if (recording__now_ns() - last_refresh > 100000000ull) {
			const struct concern *c;

			process_table__refresh_cpu(&rec->procs);
			memory_budget__tick(rec);
			jit__refresh(rec);
			for_each_concern(c)
				if (c->tick)
					c->tick(rec);
			last_refresh = recording__now_ns();
			progress__tick(rec);
		}
		/* with --rotate, each checkpoint closes a period (below) */
		if (rec->opts.checkpoint_s > 0 && !rec->rotation &&
		    recording__now_ns() - last_checkpoint >= rec->opts.checkpoint_s * 1e9) {
			checkpoint(rec);
			last_checkpoint = recording__now_ns();
		}
		if (rec->rotation && recording__now_ns() - rec->rotation->from_ns >= rec->opts.rotate_s * 1e9 &&
		    recording__now_ns() >= rotate_retry) {
			/* a failed period (full disk) is reported and tried again a
			 * period later, holding both periods' cycles */
			err = write_period(rec, false, true);
			if (err) {
				fprintf(stderr, "infertrace: warning: writing period %04u failed: %s\n",
					rec->rotation->period, strerror(-err));
				rotate_retry = recording__now_ns() + (uint64_t)(rec->opts.rotate_s * 1e9);
			}
			last_checkpoint = recording__now_ns();
		}
	}
	progress__end();
	rec->end_ns = recording__now_ns();
	/* freeze the kernel side: what is collected next matches this moment */
	tracer__freeze(&rec->tracer);
	process_table__refresh_cpu(&rec->procs);
	/* a BPF program that read the flag just before the freeze ends within
	 * microseconds: after this pause its event (a stopped target to
	 * continue, above all) is in the ring buffer for the last read */
	nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000000L }, NULL);
	/* events that were in flight when the target ended */
	tracer__poll(&rec->tracer, 0);
	/* the last perf-map lines, before anything is symbolized */
	jit__refresh(rec);
	return 0;
}

/* Run facts the model holds from the start: the command, targets, clocks,
 * configuration, system, and the names of phases and counts. */
static int model_start(struct recording *rec)
{
	struct model *m = &rec->model;
	int err = model__set_command(m, rec->opts.command);

	m->run.start_ns = rec->start_ns;
	m->run.start_wall_s = rec->start_wall_s;
	m->run.config = record_opts__json(&rec->opts);
	err = err ? err : config_file__asked(m->run.config, m);
	system_facts__read(&m->run.system);
	m->run.output_dir = strdup(rec->opts.output_dir);
	for (int i = 1; i < IT_MAX_PHASES && !err; i++) {
		err = model__set_phase_name(m, i, rec->phase_names[i]);
		if (!err)
			err = model__set_count_name(m, i, rec->count_names[i]);
	}
	return err;
}

static int model_processes(const struct recording *rec, struct model *m)
{
	m->run.npids = 0;
	free(m->run.pids);
	m->run.pids = calloc(rec->procs.n + 1, sizeof(pid_t));
	if (!m->run.pids)
		return -ENOMEM;
	for (size_t i = 0; i < rec->procs.n; i++) {
		const struct traced_proc *p = &rec->procs.procs[i];
		struct model_process *mp = model__add_process(m, p->pid);

		if (!mp)
			return -ENOMEM;
		mp->ppid = p->parent;
		memcpy(mp->comm, p->comm, IT_COMM_LEN);
		mp->root = p->root;
		mp->exited = p->exited;
		mp->exit_status = p->exit_status;
		mp->start_ns = p->start_ns;
		mp->exit_ns = p->exit_ns;
		mp->cpu_s = p->cpu_first >= 0 ? p->cpu_last - p->cpu_first : NAN;
		if (p->root)
			m->run.pids[m->run.npids++] = p->pid;
	}
	return 0;
}

/* This process's CPU seconds (all threads), as self_cost counts them. */
static double process_cpu_s(void)
{
	struct rusage r;

	if (getrusage(RUSAGE_SELF, &r))
		return 0.0;
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

/* recording__build, with --rotate's slice to the period [from, now) between
 * collecting and deriving when r is given. */
static int build_model(struct recording *rec, struct model *out, bool final, struct rotation *r)
{
	const struct concern *c;
	uint64_t now = final ? rec->end_ns : recording__now_ns();
	int err;

	rec->build_cpu_s = process_cpu_s();
	err = model__copy(out, &rec->model);

	if (err)
		return err;
	err = spool__load_trace(rec->spool, out);
	if (err) {
		model__free(out);
		return err;
	}
	out->run.end_ns = now;
	out->run.duration_s = (now - rec->start_ns) / 1e9;
	out->run.stop_reason = strdup(final ? (rec->stop_reason ? rec->stop_reason : "unknown") : "snapshot");
	out->snapshot = !final;
	err = model_processes(rec, out);
	for_each_concern(c)
		if (!err && c->spans)
			err = c->spans(rec, out);
	for_each_concern(c)
		if (!err && c->collect)
			err = c->collect(rec, out);
	if (!err)
		err = model__advance(out, MODEL_COLLECTED, "record");
	if (!err && r)
		err = rotation__slice(r, out, r->from_ns, now, final);
	if (!err)
		err = model__derive(out);
	if (!err)
		err = rules__evaluate(out, &rec->opts.thresholds);
	if (err)
		model__free(out);
	return err;
}

int recording__build(struct recording *rec, struct model *out, bool final)
{
	return build_model(rec, out, final, NULL);
}

/* A period directory name taken by another user (a shared output directory)
 * is passed over: the period gets the next free number, and one taken name
 * loses no period. */
static void skip_taken(struct rotation *r, const char *out)
{
	char why[200];

	for (int i = 0; i < 1000 && rotation__taken(out, r->period, why, sizeof(why)); i++) {
		fprintf(stderr, "infertrace: warning: in %s, %s: period %u is written as %04u\n", out, why,
			r->period, r->period + 1);
		r->period++;
	}
}

/* --rotate: writes the period being recorded into OUT/NNNN. A finished
 * period is written into OUT/.NNNN.tmp and renamed, so that its directory
 * appears whole; one that checkpoints already created is written in place
 * (each file atomically, as always). */

/* The requests still open at a period's end began at or after this: the
 * batches before it were written with their requests. */
static uint64_t requests_kept_from(const struct model *m)
{
	uint64_t from = m->run.end_ns;

	for (size_t i = 0; i < m->requests.list.n; i++)
		if (m->requests.list.v[i].ended == MODEL_REQUEST_OPEN && m->requests.list.v[i].start_ns < from)
			from = m->requests.list.v[i].start_ns;
	return from;
}

static int write_period(struct recording *rec, bool final, bool done)
{
	struct rotation *r = rec->rotation;
	const char *out = rec->opts.output_dir;
	char dir[4096], tmp[4096], reason[256];
	int err, retries = 0;
	struct stat st;
	struct model m;
	bool in_place;

	if (!rec->ksyms)
		rec->ksyms = ksyms__load(); /* kernel frames named in every period */
	tracer__poll(&rec->tracer, 0); /* edges already in the ring buffer belong here */
	err = build_model(rec, &m, final, r);
	if (err)
		return err;
	skip_taken(r, out);
again:
	snprintf(reason, sizeof(reason), "%s%speriod %04u of %g s (--checkpoint, --rotate): recording start + %.3f .. %.3f s%s",
		 final ? m.run.stop_reason : "", final ? "; " : "", r->period, rec->opts.rotate_s,
		 (r->from_ns - rec->start_ns) / 1e9, (m.run.end_ns - rec->start_ns) / 1e9,
		 done ? "" : " (checkpoint: period still running)");
	free(m.run.stop_reason);
	m.run.stop_reason = strdup(reason);
	rotation__dir(out, r->period, dir, sizeof(dir));
	in_place = !done || !stat(dir, &st);
	snprintf(tmp, sizeof(tmp), "%s/.%04u.tmp", out, r->period);
	if (in_place)
		err = rotation__mkdir(out, r->period);
	else
		err = rotation__mkdir_path(tmp);
	if (!err)
		err = done ? outputs__write_all(&m, in_place ? dir : tmp) : outputs__write_checkpoint(&m, dir);
	if (!err && !in_place && rename(tmp, dir)) {
		err = -errno;
		/* planted since skip_taken looked: the next number */
		if ((err == -EEXIST || err == -ENOTEMPTY) && retries++ < 3) {
			rotation__remove_path(tmp);
			r->period++;
			skip_taken(r, out);
			goto again;
		}
	}
	if (err && !in_place)
		rotation__remove_path(tmp);
	if (!err && done) {
		/* the period is out: the next is measured from here, and the
		 * cycles it held need not be kept */
		rotation__commit(r);
		probes__forget_before(rec, m.run.end_ns);
		model_requests__forget_before(&rec->model.requests, requests_kept_from(&m));
		r->from_ns = m.run.end_ns;
		if (r->keep && r->period >= r->keep)
			rotation__remove(out, r->period - r->keep);
		r->period++;
	}
	model__free(&m);
	return err;
}

static int write_outputs(struct recording *rec)
{
	const struct concern *c;
	struct model m;
	int err;

	for_each_concern(c)
		if (c->stop)
			c->stop(rec);
	if (rec->rotation) {
		err = write_period(rec, true, true);
		if (err)
			fprintf(stderr, "infertrace: writing the last period failed: %s\n", strerror(-err));
		else
			fprintf(stderr, "infertrace: recording ended (%s); %u period(s) in %s/\n",
				rec->stop_reason ? rec->stop_reason : "?", rec->rotation->period, rec->opts.output_dir);
		return err;
	}
	err = recording__build(rec, &m, true);
	if (err) {
		fprintf(stderr, "infertrace: building the recording's model failed: %s\n", strerror(-err));
		return err;
	}
	model__warn_preset_probes(&m);
	err = outputs__write_all(&m, rec->opts.output_dir);
	if (!err)
		fprintf(stderr, "infertrace: recording ended (%s); outputs in %s/\n",
			rec->stop_reason ? rec->stop_reason : "?", rec->opts.output_dir);
	model__free(&m);
	return err;
}

/* A concern's set-up error: a bad option value, a target that lacks what was
 * asked (symbol, library), or anything else. */
static enum it_exit setup_exit(int err)
{
	switch (-err) {
	case EINVAL:
	case E2BIG:
		return IT_EXIT_USAGE;
	case ENOENT:
	case ESRCH:
	case ENOEXEC:
		return IT_EXIT_TARGET;
	case EPERM:
	case EACCES:
		return IT_EXIT_PRIVILEGE;
	default:
		return IT_EXIT_RUNTIME;
	}
}

static int record_main(int argc, char **argv, bool top);

int cmd_record(int argc, char **argv)
{
	return record_main(argc, argv, false);
}

/* `infertrace top`: a recording shown live (user/live/top.c) */
int cmd_top(int argc, char **argv)
{
	return record_main(argc, argv, true);
}

static int record_main(int argc, char **argv, bool top)
{
	struct recording rec = {};
	struct watchdog wd = { .pid = -1, .fd = -1 };
	const struct concern *c;
	enum it_exit status = IT_EXIT_RUNTIME; /* the class of the step that failed */
	struct ksyms_loader kl = {};
	struct output_dir od = { .fd = -1 };
	const char *phase_names[MAX_NAMED_PROBES];
	int err;

	/* from the start: a signal during set-up ends the run cleanly too */
	stop_signals__set(on_signal);
	model__init(&rec.model);
	/* a closed stdout/stderr pipe (`| head`) must not lose the outputs */
	signal(SIGPIPE, SIG_IGN);
	err = record_opts__parse(&rec.opts, argc, argv);
	if (err) {
		model__free(&rec.model);
		record_opts__free(&rec.opts);
		return IT_EXIT_USAGE;
	}
	if (top) {
		rec.opts.top = true;
		rec.opts.quiet = true; /* the view replaces the progress line */
	}
	/* the one privilege check */
	status = IT_EXIT_PRIVILEGE;
	if (!tracer__have_privileges()) {
		fprintf(stderr, "infertrace: needs root (or CAP_BPF and CAP_PERFMON); run it with sudo\n");
		err = -EPERM;
		goto cleanup;
	}
	status = IT_EXIT_TARGET;
	for (int i = 0; i < rec.opts.npids; i++) {
		pid_t tgid;

		err = target__check_pid(rec.opts.pids[i]);
		if (err)
			goto cleanup;
		/* a thread id: its whole process is what can be traced */
		tgid = target__tgid(rec.opts.pids[i]);
		if (tgid > 0 && tgid != rec.opts.pids[i]) {
			char comm[32];

			target__comm(tgid, comm, sizeof(comm));
			fprintf(stderr, "infertrace: PID %d is a thread of process %d (%s); recording the whole process\n",
				rec.opts.pids[i], tgid, comm);
			rec.opts.pids[i] = tgid;
		}
	}
	status = IT_EXIT_OUTPUT;
	atomic_file__share(rec.opts.share_outputs);
	for (int i = 0; i < rec.opts.nphases; i++)
		phase_names[i] = rec.opts.phases[i].name;
	err = output_dir__prepare(&od, rec.opts.output_dir, phase_names, (size_t)rec.opts.nphases);
	if (err)
		goto cleanup;
	err = spool__open(&rec.spool, od.fd);
	if (err) {
		fprintf(stderr, "infertrace: cannot create %s/%s: %s\n", rec.opts.output_dir, SPOOL_NAME, strerror(-err));
		goto cleanup;
	}
	if (rec.opts.rotate_s > 0) {
		rec.rotation = calloc(1, sizeof(*rec.rotation));
		if (!rec.rotation) {
			err = -ENOMEM;
			goto cleanup;
		}
		rec.rotation->period_s = rec.opts.rotate_s;
		rec.rotation->keep = rec.opts.rotate_keep;
		rotation__remove_stale(rec.opts.output_dir);
	}
	status = IT_EXIT_RUNTIME;
	rec.syms = syms_cache__new();
	if (!rec.syms) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (rec.opts.call_graph == CALL_GRAPH_DWARF) {
		rec.unwinder = unwinder__new(rec.syms);
		if (!rec.unwinder) {
			err = -ENOMEM;
			goto cleanup;
		}
	}

	/* kernel symbols are read beside the BPF programs' loading: start-up
	 * time, while a launched command is still held, not the experiment's */
	ksyms_loader__start(&kl);
	err = tracer__open(&rec.tracer, &rec.opts);
	if (err)
		goto cleanup;
	for_each_concern(c) {
		err = c->configure ? c->configure(&rec) : 0;
		if (err) {
			status = setup_exit(err);
			goto cleanup;
		}
	}
	err = tracer__load(&rec.tracer);
	if (err)
		goto cleanup;
	err = tracer__set_event_handler(&rec.tracer, on_event, &rec);
	if (err)
		goto cleanup;

	status = IT_EXIT_TARGET;
	err = setup_targets(&rec);
	if (err)
		goto cleanup;
	/* before attaching: it must hold no BPF link, only the targets map */
	err = watchdog__start(&wd, bpf_map__fd(rec.tracer.skel->maps.targets), rec.launched ? rec.cmd.pid : 0);
	if (err) {
		fprintf(stderr, "infertrace: cannot start the watchdog process: %s\n", strerror(-err));
		goto cleanup;
	}
	status = IT_EXIT_RUNTIME;
	err = tracer__attach(&rec.tracer, rec.opts.frequency);
	if (err)
		goto cleanup;
	for_each_concern(c) {
		err = c->attach ? c->attach(&rec) : 0;
		if (err) {
			status = setup_exit(err);
			goto cleanup;
		}
	}

	/* `top` names kernel frames in its live view: the symbols the loader
	 * read beside the programs' verification, done by now (reading them
	 * again here held the command's start by 0.1-0.4 s), taken before the
	 * command runs: its first stops for new code wait for the run loop */
	if (rec.opts.top && !rec.ksyms)
		rec.ksyms = ksyms_loader__join(&kl);
	rec.start_ns = recording__now_ns();
	rec.start_wall_s = wall_s();
	if (rec.rotation)
		rec.rotation->from_ns = rec.start_ns;
	err = model_start(&rec);
	if (err)
		goto cleanup;
	memory_budget__tick(&rec); /* before the first cycle can begin */
	if (rec.launched) {
		status = IT_EXIT_TARGET;
		err = launched__release(&rec.cmd, rec.opts.command[0]);
		if (err)
			goto cleanup;
	}
	announce(&rec);
	status = IT_EXIT_RUNTIME;
	err = run(&rec);
	if (!err) {
		status = IT_EXIT_OUTPUT;
		/* kernel symbols are only needed to name frames: read them now
		 * (`top` took them at the start, for its live frames) */
		if (!rec.ksyms)
			rec.ksyms = ksyms_loader__join(&kl);
		if (!rec.ksyms)
			fprintf(stderr, "infertrace: warning: kernel symbols unavailable (%s); kernel frames "
				"will show as [unknown]\n", strerror(errno));
		err = write_outputs(&rec);
		if (!err && rec.late_exit) {
			status = rec.late_exit;
			err = -EAGAIN; /* any: the status is what counts */
		}
	}

cleanup:
	if (rec.launched && !rec.cmd.exited) {
		if (rec.cmd.gate_fd >= 0) {
			launched__abort(&rec.cmd);
		} else {
			/* the recording ended before the command: end its whole group */
			launched__stop(&rec.cmd, 5.0);
		}
	}
	/* the outputs are written (or cannot be): nobody waits for the detach,
	 * of the concerns' links either */
	tracer__detach_in_background(&rec.tracer);
	for_each_concern(c)
		if (c->cleanup)
			c->cleanup(&rec);
	tracer__destroy(&rec.tracer);
	/* after the links are gone: no stop can follow the goodbye */
	watchdog__stop(&wd);
	if (kl.started)
		ksyms__free(ksyms_loader__join(&kl));
	ksyms__free(rec.ksyms);
	unwinder__free(rec.unwinder);
	syms_cache__free(rec.syms);
	process_table__free(&rec.procs);
	model__free(&rec.model);
	if (rec.rotation)
		rotation__free(rec.rotation);
	free(rec.rotation);
	record_opts__free(&rec.opts);
	/* the outputs are written from it, or cannot be */
	spool__close(rec.spool, true);
	output_dir__release(&od);
	return err ? status : IT_EXIT_OK;
}
