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
#include "record.h"
#include "stacks.h"
#include "syms.h"
#include "target.h"
#include "tracer.h"

struct recording {
	struct record_opts opts;
	struct tracer tracer;
	struct syms_cache *syms;
	struct ksyms *ksyms;
	struct launched cmd;
	bool launched;
	struct process_table procs;
	double start_wall_s;
	uint64_t start_ns, end_ns;
	const char *stop_reason;
	uint64_t events_seen;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
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
	rec->events_seen++;
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
		break;
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
		err = tracer__add_target(&rec->tracer, rec->cmd.pid, IT_TARGET_ROOT);
		if (!process_table__add(&rec->procs, rec->cmd.pid, getpid(), true, now_ns()))
			err = -ENOMEM;
		return err;
	}
	for (int i = 0; i < o->npids; i++) {
		err = tracer__add_target(&rec->tracer, o->pids[i], IT_TARGET_ROOT);
		if (err)
			return err;
		if (!process_table__add(&rec->procs, o->pids[i], 0, true, now_ns()))
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
	if (rec->opts.duration_s > 0 && now_ns() - rec->start_ns >= rec->opts.duration_s * 1e9) {
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
					p->exit_ns = now_ns();
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
			p->exit_ns = now_ns();
		}
	}
	if (!process_table__roots_alive(&rec->procs)) {
		rec->stop_reason = "target exited";
		return true;
	}
	return false;
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
		if (now_ns() - last_refresh > 100000000ull) {
			process_table__refresh_cpu(&rec->procs);
			last_refresh = now_ns();
		}
	}
	rec->end_ns = now_ns();
	/* events that were in flight when the target ended */
	tracer__poll(&rec->tracer, 0);
	return 0;
}

static json_t *samples_json(struct recording *rec, const struct stack_report *sr,
			    const char *const *phase_names, const __u64 *stats)
{
	json_t *s = json_object(), *per = json_array(), *by_phase = json_object();
	double cpu_s = process_table__cpu_seconds(&rec->procs);

	if (rec->launched && rec->cmd.exited && rec->cmd.cpu_s > cpu_s)
		cpu_s = rec->cmd.cpu_s; /* rusage also counts children it reaped */
	json_object_set_new(s, "total", json_integer(sr->total));
	json_object_set_new(s, "event", json_string("cpu-clock"));
	json_object_set_new(s, "requested_hz", json_integer(rec->opts.frequency));
	json_object_set_new(s, "target_cpu_seconds", json_real(cpu_s));
	json_object_set_new(s, "achieved_hz", cpu_s > 0 ? json_real(sr->total / cpu_s) : json_null());
	json_object_set_new(s, "sampling_cpus", json_integer(rec->tracer.nsampling_cpus));
	json_object_set_new(s, "call_graph", json_string(rec->opts.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp"));
	for (size_t i = 0; i < sr->nprocs; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "pid", json_integer(sr->procs[i].tgid));
		json_object_set_new(o, "comm", json_string(sr->procs[i].comm));
		json_object_set_new(o, "samples", json_integer(sr->procs[i].samples));
		json_array_append_new(per, o);
	}
	json_object_set_new(s, "per_process", per);
	for (int i = 1; i < IT_MAX_PHASES; i++) {
		if (!phase_names[i])
			continue;
		json_t *o = json_object();

		json_object_set_new(o, "samples", json_integer(sr->phase_samples[i]));
		json_object_set_new(o, "percent", json_real(sr->total ? 100.0 * sr->phase_samples[i] / sr->total : 0));
		json_object_set_new(by_phase, phase_names[i], o);
	}
	json_object_set_new(s, "by_phase", by_phase);
	json_object_set_new(s, "stack_quality", stacks__quality_json(sr));
	json_object_set_new(s, "stack_collisions",
			    json_integer(stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]));
	return s;
}

static json_t *lost_json(const __u64 *stats)
{
	json_t *l = json_object();

	json_object_set_new(l, "samples", json_integer(stats[IT_STAT_LOST_SAMPLES]));
	json_object_set_new(l, "events", json_integer(stats[IT_STAT_RINGBUF_LOST] +
						     stats[IT_STAT_LOST_EVENTS] +
						     stats[IT_STAT_THREADS_FULL]));
	json_object_set_new(l, "stack_collisions",
			    json_integer(stats[IT_STAT_USTACK_COLLISION] + stats[IT_STAT_KSTACK_COLLISION]));
	json_object_set_new(l, "children_not_followed", json_integer(stats[IT_STAT_TARGETS_FULL]));
	return l;
}

static int write_outputs(struct recording *rec)
{
	const char *phase_names[IT_MAX_PHASES] = {};
	struct stack_report sr;
	__u64 stats[IT_STAT_MAX];
	json_t *profile, *cmd, *pids;
	char when[64];
	int err;

	tracer__stats(&rec->tracer, stats);
	err = stacks__collect(&rec->tracer, rec->syms, rec->ksyms, phase_names, &sr);
	if (err) {
		fprintf(stderr, "infertrace: reading the stack counts failed: %s\n", strerror(-err));
		goto out;
	}
	err = folded__write(&sr.all, rec->opts.output_dir, "stacks.folded");
	for (int i = 1; i < IT_MAX_PHASES && !err; i++) {
		char name[128];

		if (!phase_names[i])
			continue;
		snprintf(name, sizeof(name), "stacks.%s.folded", phase_names[i]);
		err = folded__write(&sr.by_phase[i], rec->opts.output_dir, name);
	}
	if (err) {
		fprintf(stderr, "infertrace: writing folded stacks to '%s' failed: %s\n",
			rec->opts.output_dir, strerror(-err));
		goto out;
	}

	profile = profile__new();
	cmd = json_array();
	for (char **a = rec->opts.command; a && *a; a++)
		json_array_append_new(cmd, json_string(*a));
	json_object_set_new(profile, "command", rec->opts.command ? cmd : (json_decref(cmd), json_null()));
	pids = json_array();
	for (size_t i = 0; i < rec->procs.n; i++)
		if (rec->procs.procs[i].root)
			json_array_append_new(pids, json_integer(rec->procs.procs[i].pid));
	json_object_set_new(profile, "pids", pids);
	json_object_set_new(profile, "processes", process_table__json(&rec->procs));
	json_object_set_new(profile, "started_at", json_string(profile__iso_time(rec->start_wall_s, when, sizeof(when))));
	json_object_set_new(profile, "duration_s", json_real((rec->end_ns - rec->start_ns) / 1e9));
	json_object_set_new(profile, "stop_reason", json_string(rec->stop_reason ? rec->stop_reason : "unknown"));
	json_object_set_new(profile, "samples", samples_json(rec, &sr, phase_names, stats));
	json_object_set_new(profile, "lost", lost_json(stats));
	err = profile__write(profile, rec->opts.output_dir);
	json_decref(profile);
	if (err) {
		fprintf(stderr, "infertrace: writing profile.json to '%s' failed: %s\n",
			rec->opts.output_dir, strerror(-err));
		goto out;
	}
	fprintf(stderr, "infertrace: %llu samples (%s); outputs in %s/\n",
		(unsigned long long)sr.total, rec->stop_reason ? rec->stop_reason : "", rec->opts.output_dir);
	if (stats[IT_STAT_LOST_SAMPLES] || stats[IT_STAT_RINGBUF_LOST])
		fprintf(stderr, "infertrace: warning: %llu samples and %llu events lost; numbers are incomplete\n",
			(unsigned long long)stats[IT_STAT_LOST_SAMPLES],
			(unsigned long long)stats[IT_STAT_RINGBUF_LOST]);
out:
	stack_report__free(&sr);
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct recording rec = {};
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	err = record_opts__parse(&rec.opts, argc, argv);
	if (err)
		return 2;
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
	rec.ksyms = ksyms__load();
	if (!rec.ksyms)
		fprintf(stderr, "infertrace: warning: kernel symbols unavailable (%s); kernel frames "
			"will show as [unknown]\n", strerror(errno));

	err = tracer__open(&rec.tracer, &rec.opts);
	if (err)
		goto cleanup;
	err = tracer__load(&rec.tracer);
	if (err)
		goto cleanup;
	err = tracer__set_event_handler(&rec.tracer, on_event, &rec);
	if (err)
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = setup_targets(&rec);
	if (err)
		goto cleanup;
	err = tracer__attach(&rec.tracer, rec.opts.frequency);
	if (err)
		goto cleanup;

	rec.start_ns = now_ns();
	rec.start_wall_s = wall_s();
	if (rec.launched) {
		err = launched__release(&rec.cmd, rec.opts.command[0]);
		if (err)
			goto cleanup;
	}
	err = run(&rec);
	if (!err)
		err = write_outputs(&rec);

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
	tracer__destroy(&rec.tracer);
	ksyms__free(rec.ksyms);
	syms_cache__free(rec.syms);
	process_table__free(&rec.procs);
	record_opts__free(&rec.opts);
	return err ? 1 : 0;
}
