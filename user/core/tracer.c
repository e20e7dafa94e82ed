// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <sys/wait.h>
#include <signal.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "infertrace.skel.h"
#include "tracer.h"
#include "uprobe_links.h"
#include "vec.h"

static bool verbose;

#define LARGE_HASH_MAP 8192 /* entries */
#define LARGE_HASH_MAP_BYTES (1u << 20) /* of keys and values: llama_params' 4 MiB */
#define DETACH_THREADS 32

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (!verbose)
		return 0; /* errors are reported by us in one line; -v shows libbpf's */
	return vfprintf(stderr, fmt, args);
}

bool tracer__have_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

int tracer__ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 ||
	    stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return 0;
}

bool tracer__have_privileges(void)
{
	/* CAP_BPF + CAP_PERFMON are enough on 5.8+; CAP_SYS_ADMIN otherwise. Each
	 * set is two 32-bit words: capability c is bit c % 32 of word c / 32. */
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	if (data[0].effective & (1u << CAP_SYS_ADMIN))
		return true;
	return (data[1].effective & (1u << (CAP_BPF - 32))) && (data[1].effective & (1u << (CAP_PERFMON - 32)));
}

int tracer__open(struct tracer *t, const struct record_opts *opts)
{
	int err;

	memset(t, 0, sizeof(*t));
	verbose = opts->verbose;
	libbpf_set_print(libbpf_print);
	/* privileges: checked once, by the caller, before anything is set up */
	if (!tracer__have_btf()) {
		fprintf(stderr, "infertrace: this kernel has no BTF (/sys/kernel/btf/vmlinux missing); "
			"use a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return -ENOTSUP;
	}
	err = tracer__ensure_tracefs();
	if (err) {
		fprintf(stderr, "infertrace: tracefs is not mounted and mounting it failed (%s); "
			"run: mount -t tracefs nodev /sys/kernel/tracing\n", strerror(-err));
		return err;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		fprintf(stderr, "infertrace: cannot count CPUs: %s\n", strerror(-t->ncpus));
		return t->ncpus;
	}
	t->skel = infertrace_bpf__open();
	if (!t->skel) {
		err = -errno;
		fprintf(stderr, "infertrace: cannot open the BPF object: %s\n", strerror(errno));
		return err;
	}
	t->skel->rodata->cfg_follow_children = !opts->no_follow_children;
	/* probes in files detach in parallel as uprobe-multi links (uprobe_links.h) */
	uprobe_links__prefer_multi(t->skel->progs.it_uprobe);
	uprobe_links__prefer_multi(t->skel->progs.it_uretprobe);
	uprobe_links__prefer_multi(t->skel->progs.cuda_uprobe);
	uprobe_links__prefer_multi(t->skel->progs.cuda_uretprobe);
	bpf_map__set_max_entries(t->skel->maps.stackmap, opts->stack_map_entries);
	bpf_map__set_max_entries(t->skel->maps.stack_counts, opts->stack_map_entries * 2);
	bpf_map__set_max_entries(t->skel->maps.label_counts, opts->stack_map_entries * 4);
	return 0;
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* Large hash maps are created without preallocation where the kernel allows
 * it in every program type (6.1: hash maps allocate from the BPF memory
 * allocator, safe in NMI and tracepoint context): preallocating 65,536
 * elements took 40 ms per map, a third of a short command's start-up, and
 * llama_params' 4,096 elements of 1 KiB 20-80 ms. The programs insert each
 * key once (BPF_NOEXIST) and update in place, so the run-time allocation
 * happens once per key. */
static void no_prealloc_for_large_hash_maps(struct bpf_object *obj)
{
	struct bpf_map *map;

	if (!kernel_at_least(6, 1))
		return;
	bpf_object__for_each_map(map, obj) {
		uint64_t bytes = (uint64_t)bpf_map__max_entries(map) *
				 (bpf_map__key_size(map) + bpf_map__value_size(map));

		if (bpf_map__type(map) == BPF_MAP_TYPE_HASH &&
		    (bpf_map__max_entries(map) >= LARGE_HASH_MAP || bytes >= LARGE_HASH_MAP_BYTES))
			bpf_map__set_map_flags(map, bpf_map__map_flags(map) | BPF_F_NO_PREALLOC);
	}
}

int tracer__load(struct tracer *t)
{
	int err;

	no_prealloc_for_large_hash_maps(t->skel->obj);
	err = infertrace_bpf__load(t->skel);

	if (err) {
		fprintf(stderr, "infertrace: loading BPF programs failed: %s; rerun with -v for the "
			"verifier log\n", strerror(-err));
		return err;
	}
	return 0;
}

int tracer__add_target(struct tracer *t, pid_t tgid, __u32 flags)
{
	struct it_target v = { .flags = flags };
	__u32 key = tgid;

	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.targets), &key, &v, BPF_ANY))
		return -errno;
	/* after the update: a program that reads the new generation sees it */
	__atomic_fetch_add(&t->skel->bss->targets_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int open_cpu_clock(int cpu, unsigned int freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		/* a fixed period is exact for the hrtimer-driven cpu-clock;
		 * frequency mode would only approximate it */
		.sample_period = 1000000000ull / freq,
	};

	return syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* prog on a cpu-clock event of freq Hz on every online CPU: links[cpu] and
 * fds[cpu] (-1 where offline); returns the CPUs attached or -errno. */
static int attach_cpu_clock(struct tracer *t, struct bpf_program *prog, unsigned int freq, struct bpf_link **links,
			    int *fds)
{
	int cpu, fd, n = 0;

	for (cpu = 0; cpu < t->ncpus; cpu++) {
		fds[cpu] = -1;
		fd = open_cpu_clock(cpu, freq);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* possible but offline CPU */
			fprintf(stderr, "infertrace: perf_event_open(cpu-clock) failed on CPU %d: %s; "
				"the kernel needs CONFIG_PERF_EVENTS (check /proc/sys/kernel/perf_event_paranoid)\n",
				cpu, strerror(errno));
			return -errno;
		}
		fds[cpu] = fd;
		links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!links[cpu]) {
			fprintf(stderr, "infertrace: attaching %s on CPU %d failed: %s\n", bpf_program__name(prog),
				cpu, strerror(errno));
			return -errno;
		}
		n++;
	}
	return n;
}

static int attach_sampling(struct tracer *t, unsigned int freq)
{
	int n;

	t->perf_links = calloc(t->ncpus, sizeof(*t->perf_links));
	t->perf_fds = calloc(t->ncpus, sizeof(*t->perf_fds));
	if (!t->perf_links || !t->perf_fds)
		return -ENOMEM;
	n = attach_cpu_clock(t, t->skel->progs.on_cpu_sample, freq, t->perf_links, t->perf_fds);
	if (n < 0)
		return n;
	t->nsampling_cpus = n;
	return 0;
}

int tracer__attach_cpu_clock(struct tracer *t, struct bpf_program *prog, unsigned int freq)
{
	struct bpf_link **links = calloc(t->ncpus, sizeof(*links));
	int *fds = calloc(t->ncpus, sizeof(*fds)), n = -ENOMEM;

	if (links && fds)
		n = attach_cpu_clock(t, prog, freq, links, fds);
	for (int cpu = 0; links && fds && cpu < t->ncpus; cpu++) {
		/* the link closes its event */
		if (links[cpu] && tracer__keep_link(t, links[cpu]) && n >= 0)
			n = -ENOMEM;
		else if (!links[cpu] && fds[cpu] >= 0)
			close(fds[cpu]);
	}
	free(links);
	free(fds);
	return n;
}

int tracer__attach(struct tracer *t, unsigned int frequency)
{
	struct infertrace_bpf *s = t->skel;
	struct bpf_program *const lifecycle[] = {
		s->progs.on_fork, s->progs.on_exec, s->progs.on_exit, s->progs.on_mmap_enter, s->progs.on_mmap_exit,
	};
	int err = tracer__attach_loaded(t, lifecycle, sizeof(lifecycle) / sizeof(lifecycle[0]));

	return err ? err : attach_sampling(t, frequency);
}

int tracer__keep_link(struct tracer *t, struct bpf_link *link)
{
	if (VEC_RESERVE(t->links, t->caplinks, t->nlinks, 64)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	t->links[t->nlinks++] = link;
	return 0;
}

int tracer__keep_uprobe_link(struct tracer *t, struct uprobe_link *link)
{
	if (VEC_RESERVE(t->file_links, t->capfile_links, t->nfile_links, 16)) {
		uprobe_link__destroy(link);
		return -ENOMEM;
	}
	t->file_links[t->nfile_links++] = *link;
	return 0;
}

int tracer__keep_file_link(struct tracer *t, struct bpf_link *link)
{
	struct uprobe_link l = { .link = link, .fd = -1 };

	return tracer__keep_uprobe_link(t, &l);
}

int tracer__attach_program(struct tracer *t, struct bpf_program *p)
{
	struct bpf_link *l = bpf_program__attach(p);

	if (!l)
		return -errno;
	return tracer__keep_link(t, l);
}

int tracer__attach_loaded(struct tracer *t, struct bpf_program *const *progs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err;

		if (!bpf_program__autoload(progs[i]))
			continue;
		err = tracer__attach_program(t, progs[i]);
		if (err) {
			fprintf(stderr, "infertrace: attaching %s failed: %s\n", bpf_program__name(progs[i]),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

void tracer__freeze(struct tracer *t)
{
	t->skel->bss->recording_stopped = 1;
}

int tracer__set_event_handler(struct tracer *t, tracer_event_fn fn, void *ctx)
{
	t->on_event = fn;
	t->event_ctx = ctx;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), fn, ctx, NULL);
	return t->rb ? 0 : -errno;
}

int tracer__poll(struct tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	if (n == -EINTR)
		n = 0;
	/* records written without a wake-up (samples) are only seen by a consume */
	if (n >= 0) {
		int m = ring_buffer__consume(t->rb);

		n = m < 0 ? m : n + m;
	}
	return n;
}

void tracer__stats(struct tracer *t, __u64 out[IT_STAT_MAX])
{
	int fd = bpf_map__fd(t->skel->maps.stats);
	__u64 *vals = calloc(t->ncpus, sizeof(__u64));

	memset(out, 0, sizeof(__u64) * IT_STAT_MAX);
	if (!vals)
		return;
	for (__u32 k = 0; k < IT_STAT_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (int c = 0; c < t->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
}

struct detach_work {
	void *items;
	size_t n;
	size_t next; /* taken atomically */
	void (*destroy)(void *items, size_t i);
};

static void destroy_bpf_link(void *items, size_t i)
{
	bpf_link__destroy(((struct bpf_link **)items)[i]);
}

static void destroy_uprobe_link(void *items, size_t i)
{
	uprobe_link__destroy(&((struct uprobe_link *)items)[i]);
}

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n)
		w->destroy(w->items, i);
	return NULL;
}

/* Destroys links from several threads at once. Detaching a tracepoint or
 * uprobe program waits for an RCU grace period (40-70 ms each here, a whole
 * second for the default set one after the other); waits that overlap end
 * together. Falls back to this thread for what no thread could be made for. */
static void destroy_parallel(void *items, size_t n, void (*destroy)(void *items, size_t i))
{
	struct detach_work w = { .items = items, .n = n, .destroy = destroy };
	pthread_t th[DETACH_THREADS];
	size_t started = 0;

	while (started < DETACH_THREADS && started + 1 < n &&
	       !pthread_create(&th[started], NULL, detach_worker, &w))
		started++;
	detach_worker(&w);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static void destroy_links_parallel(struct bpf_link **links, size_t n)
{
	destroy_parallel(links, n, destroy_bpf_link);
}

/* Closes every descriptor above stderr but keep and the kernel's anonymous
 * ones (BPF links, programs, maps, perf events). Async-signal-safe calls
 * only: it runs in a child forked from a process with threads. */
static void keep_only_bpf_fds(int keep)
{
	char buf[4096], target[64];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dir < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (const void *)(buf + off);
			int fd = 0;
			ssize_t len;
			const char *p;

			off += d->reclen;
			for (p = d->name; *p >= '0' && *p <= '9'; p++)
				fd = fd * 10 + (*p - '0');
			if (*p || p == d->name || fd <= 2 || fd == keep || fd == dir)
				continue;
			len = readlinkat(dir, d->name, target, sizeof(target) - 1);
			if (len > 0 && len >= 11 && !memcmp(target, "anon_inode:", 11))
				continue;
			close(fd);
		}
	}
	close(dir);
}

void tracer__detach_in_background(struct tracer *t)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (!t->skel || (!t->nlinks && !t->nsampling_cpus))
		return;
	tracer__freeze(t); /* from here the programs return at once and stop no target */
	destroy_parallel(t->file_links, t->nfile_links, destroy_uprobe_link);
	t->nfile_links = 0;
	if (pipe2(pfd, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		int null;

		if (fork() != 0)
			_exit(0);
		/* the grandchild: its own session, none of the tracer's signals
		 * or output pipes (a reader of them sees EOF when the tracer ends) */
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(pfd[1]);
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		/* nor its directories and files: a disk unmounted at once after
		 * the run must not be busy */
		if (chdir("/")) {
			/* "/" is always there */
		}
		keep_only_bpf_fds(pfd[0]);
		while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
			;
		/* the tracer has ended: the last references are these */
		close_range(3, ~0U, 0);
		_exit(0);
	}
	close(pfd[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* pfd[1] stays open until this process ends: that is the grandchild's
	 * signal to close its copies */
}

void tracer__destroy(struct tracer *t)
{
	if (t->perf_links)
		destroy_links_parallel(t->perf_links, t->ncpus);
	if (t->perf_fds) {
		for (int i = 0; i < t->ncpus; i++)
			if (t->perf_fds[i] >= 0)
				close(t->perf_fds[i]);
	}
	destroy_parallel(t->file_links, t->nfile_links, destroy_uprobe_link);
	destroy_links_parallel(t->links, t->nlinks);
	free(t->file_links);
	free(t->links);
	free(t->perf_links);
	free(t->perf_fds);
	ring_buffer__free(t->rb);
	infertrace_bpf__destroy(t->skel);
	memset(t, 0, sizeof(*t));
}

bool tracer__have_tracepoint(const char *category, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events" };
	char path[256];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", roots[i], category, name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}
