// SPDX-License-Identifier: BSD-2-Clause
/* The processes traced: a launched command (started stopped behind a gate,
 * released once the probes are attached) or running PIDs. */
#ifndef INFERTRACE_TARGET_H
#define INFERTRACE_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

struct launched {
	pid_t pid;
	int gate_fd;   /* write end: closing it releases the child */
	int error_fd;  /* read end: the child writes errno here if exec fails */
	bool exited;
	int status;    /* wait status once exited */
	double cpu_s;  /* user+sys CPU time of the command and its waited-for children */
};

/* Who the launched command runs as (--user; under sudo the invoking user). */
struct run_as {
	bool set;       /* false: as the tracer (root) */
	bool in_passwd; /* a passwd entry: its groups (initgroups) and home */
	uid_t uid;
	gid_t gid;
	char name[64];
	char home[256];
};

/* Fills *as from a user name or a numeric uid; -ENOENT when there is none. */
int run_as__resolve(const char *user, struct run_as *as);

/* Forks the command, stopped before exec until launched__release. The
 * child's stdin/stdout/stderr are ours, or with out_fd >= 0 stdout and
 * stderr go to out_fd and stdin reads /dev/null. With as->set it drops to
 * that user (its groups, uid, gid; HOME, USER, LOGNAME) before exec. env:
 * NULL, or NULL-terminated "NAME=VALUE" strings added to the command's
 * environment (replacing a NAME it has). 0 or -errno. */
int launched__fork(struct launched *l, char **argv, int out_fd, const struct run_as *as, char *const *env);
/* Releases the child into exec. Returns 0, or -errno (with a message
 * printed) when the command could not be started (not found, not executable). */
int launched__release(struct launched *l, const char *name);
/* Kills a child that was never released. */
void launched__abort(struct launched *l);
/* Ends the command's whole process group (it leads one, in its own session): SIGTERM, then
 * SIGKILL after grace_s for the leader and for members that outlive it. */
void launched__stop(struct launched *l, double grace_s);
/* Non-blocking reap of the launched child. true once it has exited. */
bool launched__poll(struct launched *l);

/* Checks that pid exists and can be traced. 0, or -errno with a message. */
int target__check_pid(pid_t pid);
bool target__alive(pid_t pid);
/* The process (thread group) a thread id belongs to; -1 when gone. */
pid_t target__tgid(pid_t tid);
/* Reads /proc/PID/comm into buf, made valid UTF-8 (empty string when gone). */
void target__comm(pid_t pid, char *buf, size_t len);
/* For a target in another mount namespace (a container), the prefix that
 * makes its paths reach its files from ours ("/proc/PID/root"): 1 then, 0
 * and "" when it shares our mount namespace, -errno when gone. */
int target__root_prefix(pid_t pid, char *buf, size_t len);
/* CPU time (utime+stime) of a live process, all threads, in seconds; <0 if gone. */
double target__cpu_seconds(pid_t pid);

#endif
