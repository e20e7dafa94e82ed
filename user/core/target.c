// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "target.h"
#include "procfs.h"

int run_as__resolve(const char *user, struct run_as *as)
{
	struct passwd *pw;
	char *end;
	unsigned long uid;

	memset(as, 0, sizeof(*as));
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		errno = 0;
		uid = strtoul(user, &end, 10);
		if (!*user || *end || errno || uid > (uid_t)-2)
			return -ENOENT;
		pw = getpwuid((uid_t)uid);
		if (!pw) {
			/* a uid with no passwd entry: its own group, no home */
			as->set = true;
			as->uid = as->gid = (uid_t)uid;
			snprintf(as->name, sizeof(as->name), "%lu", uid);
			return 0;
		}
	}
	as->set = true;
	as->in_passwd = true;
	as->uid = pw->pw_uid;
	as->gid = pw->pw_gid;
	snprintf(as->name, sizeof(as->name), "%s", pw->pw_name);
	snprintf(as->home, sizeof(as->home), "%s", pw->pw_dir ? pw->pw_dir : "");
	return 0;
}

/* In the child: the command's identity, groups first (setuid drops the
 * right to change them). 0 or errno. */
static int drop_to(const struct run_as *as)
{
	if (as->in_passwd ? initgroups(as->name, as->gid) : setgroups(0, NULL))
		return errno;
	if (setgid(as->gid) || setuid(as->uid))
		return errno;
	if (as->home[0])
		setenv("HOME", as->home, 1);
	setenv("USER", as->name, 1);
	setenv("LOGNAME", as->name, 1);
	return 0;
}

int launched__fork(struct launched *l, char **argv, int out_fd, const struct run_as *as, char *const *env)
{
	int gate[2], errp[2];
	pid_t pid;

	memset(l, 0, sizeof(*l));
	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(gate[0]);
		close(gate[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(gate[0]); close(gate[1]); close(errp[0]); close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		int e;

		/* Its own session and process group: a stop reaches everything it
		 * starts and nothing else in the tracer's job. A session, not only a
		 * group: the group is orphaned from the start, so the tracer's death
		 * (while a member is stopped for probe placement) never makes the
		 * kernel send it SIGHUP. The terminal stays the tracer's: Ctrl-C
		 * stops the recording, which then ends the command's group. */
		setsid();
		if (out_fd >= 0) {
			int null = open("/dev/null", O_RDONLY);

			if (null >= 0 && null != STDIN_FILENO) {
				dup2(null, STDIN_FILENO);
				close(null);
			}
			dup2(out_fd, STDOUT_FILENO);
			dup2(out_fd, STDERR_FILENO);
		}
		close(gate[1]);
		close(errp[0]);
		/* wait for the tracer; EOF without a byte means it gave up */
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* ignored signals survive exec: the tracer ignores SIGPIPE, the command must not */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		e = as && as->set ? drop_to(as) : 0;
		for (size_t i = 0; !e && env && env[i]; i++)
			if (putenv(env[i]))
				e = errno;
		if (!e) {
			execvp(argv[0], argv);
			e = errno;
		}
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(errp[1]);
	l->pid = pid;
	l->gate_fd = gate[1];
	l->error_fd = errp[0];
	return 0;
}

int launched__release(struct launched *l, const char *name)
{
	int e = 0;
	ssize_t n;


	if (write(l->gate_fd, "g", 1) != 1)
		return -errno;
	close(l->gate_fd);
	l->gate_fd = -1;
	/* the error pipe closes on a successful exec (O_CLOEXEC) */
	do {
		n = read(l->error_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->error_fd);
	l->error_fd = -1;
	if (n == sizeof(e)) {
		fprintf(stderr, "infertrace: cannot start '%s': %s; check the command name and PATH\n",
			name, strerror(e));
		waitpid(l->pid, &l->status, 0);
		l->exited = true;
		return -e;
	}
	return 0;
}

void launched__stop(struct launched *l, double grace_s)
{
	struct timespec ts = { 0, 20 * 1000000L };
	int waited_ms = 0;

	if (l->pid <= 0)
		return;
	/* the whole group: a shell-wrapped experiment's children too. SIGCONT
	 * first, so a stopped member acts on SIGTERM */
	kill(-l->pid, SIGTERM);
	kill(-l->pid, SIGCONT);
	while (!l->exited && waited_ms < grace_s * 1000) {
		launched__poll(l);
		if (l->exited)
			break;
		nanosleep(&ts, NULL);
		waited_ms += 20;
	}
	if (!l->exited) {
		kill(-l->pid, SIGKILL);
		waitpid(l->pid, &l->status, 0);
		l->exited = true;
	}
	/* members that outlived the leader (or ignore SIGTERM) */
	for (waited_ms = 0; kill(-l->pid, 0) == 0 && waited_ms < grace_s * 1000; waited_ms += 20)
		nanosleep(&ts, NULL);
	kill(-l->pid, SIGKILL);
}

void launched__abort(struct launched *l)
{
	if (l->pid <= 0 || l->exited)
		return;
	if (l->gate_fd >= 0) {
		close(l->gate_fd); /* child sees EOF and exits 127 */
		l->gate_fd = -1;
	} else {
		kill(l->pid, SIGKILL);
	}
	if (l->error_fd >= 0) {
		close(l->error_fd);
		l->error_fd = -1;
	}
	waitpid(l->pid, &l->status, 0);
	l->exited = true;
}

bool launched__poll(struct launched *l)
{
	struct rusage ru;
	pid_t r;

	if (l->exited)
		return true;
	r = wait4(l->pid, &l->status, WNOHANG, &ru);
	if (r == l->pid) {
		l->exited = true;
		l->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			   ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	return l->exited;
}

int target__check_pid(pid_t pid)
{
	if (kill(pid, 0) == 0 || errno == EPERM)
		return 0;
	fprintf(stderr, "infertrace: no process with PID %d; check the PID with 'ps -p %d'\n", pid, pid);
	return -ESRCH;
}

/* The state letter of /proc/PID/stat, or 0. The comm field may hold spaces
 * and ')' (any bytes but NUL): the fields resume after the last ')'. */
static char proc_state(pid_t pid)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return procfs__read(path, buf, sizeof(buf)) < 0 ? 0 : procfs__stat_state(buf);
}

bool target__alive(pid_t pid)
{
	char state = proc_state(pid);

	/* a zombie has exited: it only waits for its parent to reap it */
	return state && state != 'Z' && state != 'X';
}

pid_t target__tgid(pid_t tid)
{
	char path[64], buf[8192];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return procfs__read(path, buf, sizeof(buf)) < 0 ? -1 : procfs__status_tgid(buf);
}

void target__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	comm__sanitize(buf);
}

double target__cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procfs__read(path, buf, sizeof(buf)) < 0 || procfs__stat_ticks(buf, &ticks))
		return -1;
	return (double)ticks / sysconf(_SC_CLK_TCK);
}

int target__root_prefix(pid_t pid, char *buf, size_t len)
{
	char path[64];
	struct stat self, other;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	if (stat("/proc/self/ns/mnt", &self) || stat(path, &other))
		return -errno;
	if (self.st_ino == other.st_ino && self.st_dev == other.st_dev)
		return 0;
	/* the kernel resolves paths under this link in the target's root */
	snprintf(buf, len, "/proc/%d/root", pid);
	return 1;
}
