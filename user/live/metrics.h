// SPDX-License-Identifier: BSD-2-Clause
/* `--metrics [ADDR:]PORT`: the recording so far in the Prometheus text
 * exposition format (version 0.0.4), served at /metrics by libmicrohttpd on
 * its own thread.
 *
 * The HTTP thread never reads the model: the recording's thread renders a
 * snapshot into text (metrics__render) and hands it over under a lock
 * (metrics_server__publish). A scrape that finds the text older than
 * METRICS_MAX_AGE_NS asks for a fresh one and waits (at most
 * METRICS_WAIT_NS) for the recording's thread to publish it, so nothing is
 * built while nobody scrapes, and at most once a second while somebody does.
 *
 * Any local user can connect, so no client may hold the server: a
 * connection has METRICS_REQUEST_NS to send its request, at most
 * METRICS_PENDING_MAX connections wait for theirs (a new one closes the
 * oldest), every response closes its connection, and the server's messages
 * on the tracer's stderr are at most one line per METRICS_LOG_EVERY_NS with
 * a count of those held back. */
#ifndef INFERTRACE_METRICS_H
#define INFERTRACE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define METRICS_MAX_AGE_NS 1000000000ull
#define METRICS_WAIT_NS 2000000000ull
#define METRICS_REQUEST_NS 2000000000ull  /* from connect to the full request */
#define METRICS_PENDING_MAX 16            /* connections still sending their request */
#define METRICS_CONNECTIONS 64            /* all connections (libmicrohttpd's limit) */
#define METRICS_PER_IP 32                 /* connections from one address */
#define METRICS_IDLE_S 5u                 /* no byte either way: closed */
#define METRICS_LOG_EVERY_NS 10000000000ull

struct model;
struct metrics_server;

/* At most one message per every_ns (zero-initialise the rest). */
struct metrics_ratelimit {
	uint64_t every_ns, last_ns;
	unsigned long held;
	bool printed;
};

/* A message at now_ns: -1 to hold it back (counted), else print it, with
 * the returned number of messages held back since the last one printed. */
long metrics__ratelimit(struct metrics_ratelimit *r, uint64_t now_ns);

/* "[ADDR:]PORT": ADDR a numeric IPv4 address, [IPv6] in brackets, or
 * "localhost"; no ADDR is 127.0.0.1. PORT 0..65535 (0: the kernel picks).
 * 0, or -EINVAL with a one-line reason in err. */
int metrics__parse_addr(const char *s, struct sockaddr_storage *sa, socklen_t *len, char *err, size_t errlen);

/* The exposition text of a snapshot (MODEL_ANALYSED), malloc'd, NUL-ended;
 * NULL on ENOMEM. Counters count ended cycles only, so they never go back. */
char *metrics__render(const struct model *m);

/* Binds and listens (before the target starts: a bad address or a port in
 * use is an error then), then serves from libmicrohttpd's own thread.
 * 0 or -errno, with a one-line message printed. */
int metrics_server__start(struct metrics_server **out, const char *addr);
/* The URL it serves, e.g. "http://127.0.0.1:9464/metrics". */
const char *metrics_server__url(const struct metrics_server *s);
/* A scrape waits for fresh text (or none was ever published). */
bool metrics_server__wanted(struct metrics_server *s, uint64_t now_ns);
/* Replaces the text served (takes text). */
void metrics_server__publish(struct metrics_server *s, char *text, uint64_t now_ns);
/* Stops the thread and closes the socket; NULL is fine. */
void metrics_server__stop(struct metrics_server *s);

#endif
