// SPDX-License-Identifier: BSD-2-Clause
/* `infertrace record`: parse → set up → attach → run → collect → write. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "options.h"
#include "processes.h"
#include "profile.h"
#include "concerns.h"
#include "record.h"
#include "recording.h"
#include "stacks.h"
#include "syms.h"
#include "target.h"
#include "tracer.h"


static const struct concern *const concerns[] = {
	&python_concern,   /* first: code names must be known before any stack is folded */
	&probes_concern,   /* names phases, builds `cycles` */
	&sampling_concern,
	&sched_concern,
	&memory_concern,
	&crash_concern,
	&side_concern,     /* after the cycles are written: side data averaged into each */
	&network_concern,
	&cuda_concern,     /* after side: adds gpu.cuda */
	&overhead_concern, /* after probes: reads `phases`, `probes`, `cycles` */
	&rules_concern,    /* after every concern that fills a section */
	&outputs_concern,  /* last: writes from what the others put in profile.json */
};
#define for_each_concern(c) \
	for (size_t _i = 0; _i < sizeof(concerns) / sizeof(concerns[0]) && ((c) = concerns[_i]); _i++)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

uint64_t recording__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Creates the output directory and proves it writable before anything runs. */
static int prepare_output_dir(const char *dir)
{
	struct atomic_file *probe;
	char *copy = strdup(dir), *p;

	for (p = copy + 1; p && *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(copy, 0755);
			*p = '/';
		}
	}
	free(copy);
	if (mkdir(dir, 0755) && errno != EEXIST)
		goto fail;
	probe = atomic_file__open(dir, "write-check");
	if (!probe)
		goto fail;
	atomic_file__abort(probe);
	return 0;
fail:
	fprintf(stderr, "infertrace: cannot write output directory '%s': %s; choose another with -o DIR\n",
		dir, strerror(errno));
	return -errno;
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
		if (p && !p->comm[0])
			memcpy(p->comm, pe->comm, IT_COMM_LEN);
		/* until its own capture, the child maps what its parent mapped */
		syms_cache__inherit(rec->syms, pe->parent_tgid, h->tgid);
		syms_cache__capture(rec->syms, h->tgid);
		break;
	case IT_EV_EXEC:
		p = process_table__find(&rec->procs, h->tgid);
		if (p)
			memcpy(p->comm, pe->comm, IT_COMM_LEN);
		syms_cache__capture(rec->syms, h->tgid);
		break;
	case IT_EV_MMAP:
		syms_cache__capture(rec->syms, h->tgid);
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
	/* every record is offered to the concerns; one that owns it stops the search */
	const struct concern *c;

	for_each_concern(c)
		if (c->on_event && c->on_event(rec, data, size))
			break;
	return 0;
}

static int setup_targets(struct recording *rec)
{
	struct record_opts *o = &rec->opts;
	int err;

	if (o->command) {
		err = launched__fork(&rec->cmd, o->command);
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
	return 0;
}

static bool should_stop(struct recording *rec)
{
	if (stop_signal) {
		rec->stop_reason = stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
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
	if (rec->launched)
		fprintf(stderr, "infertrace: recording '%s' (PID %d) at %u Hz; Ctrl-C to stop\n",
			rec->opts.command[0], rec->cmd.pid, rec->opts.frequency);
	else
		fprintf(stderr, "infertrace: recording %d process(es) from PID %d at %u Hz; Ctrl-C to stop\n",
			rec->opts.npids, rec->opts.pids[0], rec->opts.frequency);
}

static int run(struct recording *rec)
{
	uint64_t last_refresh = 0;
	int err;

	while (!should_stop(rec)) {
		err = tracer__poll(&rec->tracer, 100);
		if (err < 0) {
			fprintf(stderr, "infertrace: reading the ring buffer failed: %s\n", strerror(-err));
			return err;
		}
		if (recording__now_ns() - last_refresh > 100000000ull) {
			const struct concern *c;

			process_table__refresh_cpu(&rec->procs);
			for_each_concern(c)
				if (c->tick)
					c->tick(rec);
			last_refresh = recording__now_ns();
		}
	}
	rec->end_ns = recording__now_ns();
	/* freeze the kernel side: what is collected next matches this moment */
	tracer__freeze(&rec->tracer);
	process_table__refresh_cpu(&rec->procs);
	/* events that were in flight when the target ended */
	tracer__poll(&rec->tracer, 0);
	return 0;
}

static json_t *command_json(const struct recording *rec)
{
	json_t *cmd;

	if (!rec->opts.command)
		return json_null();
	cmd = json_array();
	for (char **a = rec->opts.command; *a; a++)
		json_array_append_new(cmd, json_string(*a));
	return cmd;
}

static int write_outputs(struct recording *rec)
{
	const struct concern *c;
	json_t *profile = profile__new(), *pids = json_array();
	char when[64];
	int err = 0;

	json_object_set_new(profile, "command", command_json(rec));
	for (size_t i = 0; i < rec->procs.n; i++)
		if (rec->procs.procs[i].root)
			json_array_append_new(pids, json_integer(rec->procs.procs[i].pid));
	json_object_set_new(profile, "pids", pids);
	json_object_set_new(profile, "processes", process_table__json(&rec->procs));
	json_object_set_new(profile, "started_at",
			    json_string(profile__iso_time(rec->start_wall_s, when, sizeof(when))));
	json_object_set_new(profile, "duration_s", json_real((rec->end_ns - rec->start_ns) / 1e9));
	json_object_set_new(profile, "stop_reason", json_string(rec->stop_reason ? rec->stop_reason : "unknown"));
	json_object_set_new(profile, "config", record_opts__json(&rec->opts));
	/* every concern writes what it can; one failure does not lose the rest */
	for_each_concern(c) {
		int e = c->write ? c->write(rec, profile) : 0;

		if (e && !err)
			err = e;
	}
	int e = profile__write(profile, rec->opts.output_dir);

	if (e) {
		fprintf(stderr, "infertrace: writing profile.json to '%s' failed: %s\n",
			rec->opts.output_dir, strerror(-e));
		err = e;
	} else {
		fprintf(stderr, "infertrace: recording ended (%s); outputs in %s/\n",
			rec->stop_reason ? rec->stop_reason : "?", rec->opts.output_dir);
	}
	json_decref(profile);
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct recording rec = {};
	struct sigaction sa = { .sa_handler = on_signal };
	const struct concern *c;
	int err;

	/* from the start: a signal during set-up ends the run cleanly too */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = record_opts__parse(&rec.opts, argc, argv);
	if (err)
		return 2;
	if (!tracer__have_privileges()) {
		fprintf(stderr, "infertrace: needs root (or CAP_BPF and CAP_PERFMON); run it with sudo\n");
		err = -EPERM;
		goto cleanup;
	}
	for (int i = 0; i < rec.opts.npids; i++) {
		err = target__check_pid(rec.opts.pids[i]);
		if (err)
			goto cleanup;
	}
	err = prepare_output_dir(rec.opts.output_dir);
	if (err)
		goto cleanup;
	rec.syms = syms_cache__new();
	if (!rec.syms) {
		err = -ENOMEM;
		goto cleanup;
	}

	err = tracer__open(&rec.tracer, &rec.opts);
	if (err)
		goto cleanup;
	for_each_concern(c) {
		err = c->configure ? c->configure(&rec) : 0;
		if (err)
			goto cleanup;
	}
	err = tracer__load(&rec.tracer);
	if (err)
		goto cleanup;
	err = tracer__set_event_handler(&rec.tracer, on_event, &rec);
	if (err)
		goto cleanup;

	err = setup_targets(&rec);
	if (err)
		goto cleanup;
	err = tracer__attach(&rec.tracer, rec.opts.frequency);
	if (err)
		goto cleanup;
	for_each_concern(c) {
		err = c->attach ? c->attach(&rec) : 0;
		if (err)
			goto cleanup;
	}

	rec.start_ns = recording__now_ns();
	rec.start_wall_s = wall_s();
	if (rec.launched) {
		err = launched__release(&rec.cmd, rec.opts.command[0]);
		if (err)
			goto cleanup;
	}
	announce(&rec);
	err = run(&rec);
	if (!err) {
		/* kernel symbols are only needed to name frames: read them now */
		rec.ksyms = ksyms__load();
		if (!rec.ksyms)
			fprintf(stderr, "infertrace: warning: kernel symbols unavailable (%s); kernel frames "
				"will show as [unknown]\n", strerror(errno));
		err = write_outputs(&rec);
	}

cleanup:
	if (rec.launched && !rec.cmd.exited) {
		if (rec.cmd.gate_fd >= 0) {
			launched__abort(&rec.cmd);
		} else {
			/* the recording ended before the command: end it as perf does */
			kill(rec.cmd.pid, SIGTERM);
			waitpid(rec.cmd.pid, NULL, 0);
		}
	}
	for_each_concern(c)
		if (c->cleanup)
			c->cleanup(&rec);
	tracer__destroy(&rec.tracer);
	ksyms__free(rec.ksyms);
	syms_cache__free(rec.syms);
	process_table__free(&rec.procs);
	record_opts__free(&rec.opts);
	return err ? 1 : 0;
}
