// SPDX-License-Identifier: BSD-2-Clause
/* The BPF side's lifecycle: open the skeleton, configure, load, attach the
 * sampling and process-tracking programs, poll the ring buffer, read the
 * statistics, tear down. Later concerns (probes, sched, side data) attach
 * their own programs of the same skeleton through tracer->skel. */
#ifndef INFERTRACE_TRACER_H
#define INFERTRACE_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <sys/types.h>

#include "infertrace.h"
#include "options.h"

struct infertrace_bpf;
struct bpf_link;
struct bpf_program;
struct ring_buffer;
struct uprobe_link;

typedef int (*tracer_event_fn)(void *ctx, void *data, size_t size);

struct tracer {
	struct infertrace_bpf *skel;
	struct bpf_link **perf_links;
	int *perf_fds;
	int ncpus;
	int nsampling_cpus;
	struct ring_buffer *rb;
	tracer_event_fn on_event;
	void *event_ctx;
	struct bpf_link **links;  /* attached by the concerns, destroyed here */
	size_t nlinks, caplinks;
	struct uprobe_link *file_links; /* uprobes and USDT: see tracer__keep_file_link */
	size_t nfile_links, capfile_links;
};

/* Checks kernel features (the caller has checked privileges with
 * tracer__have_privileges), mounts tracefs when missing, opens
 * the skeleton and sizes maps from opts. Prints a one-line error on failure. */
int tracer__open(struct tracer *t, const struct record_opts *opts);
int tracer__load(struct tracer *t);
int tracer__add_target(struct tracer *t, pid_t tgid, __u32 flags);
/* Attaches process tracking and the per-CPU cpu-clock sampling. */
int tracer__attach(struct tracer *t, unsigned int frequency);
/* Another program on a cpu-clock event of freq Hz on every online CPU (its
 * links kept by the tracer): the CPUs attached, or -errno with a message. */
int tracer__attach_cpu_clock(struct tracer *t, struct bpf_program *prog, unsigned int freq);
/* Takes ownership of a link a concern attached: it is destroyed with the
 * tracer. 0, or -ENOMEM with the link destroyed. */
int tracer__keep_link(struct tracer *t, struct bpf_link *link);
/* The same for a probe placed in a file (uprobe, uretprobe, USDT), which
 * every process mapping the file hits: detached before the recording
 * returns, never left to tracer__detach_in_background, so that the next
 * run of the program pays no frozen probe and its return addresses are its
 * own (a uretprobe replaces them with the kernel's trampoline). */
int tracer__keep_file_link(struct tracer *t, struct bpf_link *link);
/* The same for a probe placed by uprobe_link__attach (uprobe_links.h). */
int tracer__keep_uprobe_link(struct tracer *t, struct uprobe_link *link);
/* Attaches a loaded program where its section says (tracepoint, raw
 * tracepoint) and keeps the link. 0, or -errno with nothing kept; silent,
 * so that the caller says whether a failure is fatal. */
int tracer__attach_program(struct tracer *t, struct bpf_program *p);
/* Attaches every program of progs whose autoload is on (the rest were left
 * out at configure, e.g. a tracepoint this kernel lacks), in order: programs
 * on the same tracepoint run in attach order. 0, or -errno after a one-line
 * message naming the program. */
int tracer__attach_loaded(struct tracer *t, struct bpf_program *const *progs, size_t n);
/* Every BPF program stops counting (the recording's end). */
void tracer__freeze(struct tracer *t);
int tracer__set_event_handler(struct tracer *t, tracer_event_fn fn, void *ctx);
/* Consumes ring-buffer records for up to timeout_ms. <0 on error. */
int tracer__poll(struct tracer *t, int timeout_ms);
/* Sums the per-CPU statistics counters. */
void tracer__stats(struct tracer *t, __u64 out[IT_STAT_MAX]);
/* Detaching takes the kernel about 20 ms per tracepoint link on this VM, one
 * link after another whatever the threads (each unregistration waits for a
 * grace period under a global mutex): 0.3 s or more that a user would wait
 * for after the outputs are written. This freezes the programs (they return
 * at once and stop no target) and forks a grandchild that holds copies of
 * every descriptor, waits for this process to end, then closes them; this
 * process's own closes in tracer__destroy then release nothing. Call it
 * once the outputs are written; a failed fork leaves the detaching here. */
void tracer__detach_in_background(struct tracer *t);
void tracer__destroy(struct tracer *t);

/* Runtime feature checks, shared with other attachers. */
bool tracer__have_btf(void);
/* root, CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON */
bool tracer__have_privileges(void);
int tracer__ensure_tracefs(void);
/* Whether this kernel has the tracepoint CATEGORY:NAME (tracefs, or debugfs). */
bool tracer__have_tracepoint(const char *category, const char *name);

#endif
