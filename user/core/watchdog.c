// SPDX-License-Identifier: BSD-2-Clause
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stop_signals.h"
#include "watchdog.h"

static void continue_all(int targets_fd, pid_t pgid)
{
	uint32_t key, next;
	uint32_t *prev = NULL;

	if (pgid > 0)
		kill(-pgid, SIGCONT);
	while (!bpf_map_get_next_key(targets_fd, prev, &next)) {
		if (next > 0)
			kill((pid_t)next, SIGCONT);
		key = next;
		prev = &key;
	}
}

static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	/* both are above stderr; failures (empty ranges) are harmless */
	if (lo > 3)
		close_range(3, lo - 1, 0);
	if (hi > lo + 1)
		close_range(lo + 1, hi - 1, 0);
	close_range(hi + 1, ~0U, 0);
}

static void __attribute__((noreturn)) watchdog_main(int rfd, int targets_fd, pid_t pgid)
{
	struct timespec ts = { 0, 50 * 1000000L };
	ssize_t n;
	char c;

	/* the tracer's signals are not ours: Ctrl-C, SIGTERM to the tracer's group */
	stop_signals__set(SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	close_others(rfd, targets_fd);
	/* nor its output pipes: a reader of them sees EOF when the tracer ends */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	do {
		n = read(rfd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n == 1 && c == 'q')
		_exit(0);
	/* The tracer is gone. Its BPF links may close just after the pipe, so a
	 * stop can still land: keep releasing for a second. */
	for (int i = 0; i < 20; i++) {
		continue_all(targets_fd, pgid);
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

int watchdog__start(struct watchdog *w, int targets_fd, pid_t pgid)
{
	int p[2];
	pid_t pid;

	w->pid = -1;
	w->fd = -1;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[1]);
		watchdog_main(p[0], targets_fd, pgid);
	}
	close(p[0]);
	w->pid = pid;
	w->fd = p[1];
	return 0;
}

void watchdog__stop(struct watchdog *w)
{
	if (w->pid <= 0)
		return;
	if (write(w->fd, "q", 1) != 1)
		kill(w->pid, SIGKILL);
	close(w->fd);
	waitpid(w->pid, NULL, 0);
	w->pid = -1;
	w->fd = -1;
}
