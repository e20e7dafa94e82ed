// SPDX-License-Identifier: BSD-2-Clause
/* The signals that end a recording: every terminating signal that can be
 * caught and is not a fault. Each stops the recording and writes the outputs,
 * as Ctrl-C does, so no `kill -USR1` or `kill -QUIT` leaves the launched
 * command running without a tracer and without outputs. SIGPIPE is ignored
 * instead (a closed `| head` must not end the run); faults (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) are not caught, since a handler
 * that returns would run into the fault again. */
#ifndef INFERTRACE_STOP_SIGNALS_H
#define INFERTRACE_STOP_SIGNALS_H

#include <signal.h>
#include <stddef.h>

/* Gives every stop signal the disposition handler (a function, or SIG_IGN
 * for a helper process that must outlive a signal to the tracer's group). */
static inline void stop_signals__set(void (*handler)(int))
{
	static const int sigs[] = {
		SIGINT,	 SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,   SIGVTALRM,
		SIGPROF, SIGIO,	  SIGPWR,  SIGXCPU, SIGXFSZ, SIGSTKFLT,
	};
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
}

#endif
