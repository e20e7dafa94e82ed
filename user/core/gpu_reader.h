// SPDX-License-Identifier: BSD-2-Clause
/* The tracer's end of the GPU activity channel (include/gpu_channel.h): a
 * listening unix socket in a private directory, and a reader thread that
 * accepts one connection per process of the target (children too) and keeps
 * their records in memory until the gpu concern collects them.
 *
 * The records come from inside the target, so they are untrusted: a record
 * shorter than its header or its kind's layout, longer than
 * GPU_READER_RECORD_MAX, or a connection that does not open with a valid
 * HELLO, drops that connection and is counted; nothing else is affected. */
#ifndef INFERTRACE_GPU_READER_H
#define INFERTRACE_GPU_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <gpu_channel.h> /* include/: the wire format */

#define GPU_READER_RECORD_MAX 65536 /* bytes: a longer record is malformed */

struct gpu_reader;
struct model;
struct run_as;

/* Creates the directory (mkdtemp under /tmp, 0700) and the socket, handed
 * to `as`'s user when set (the target runs as that user; the tracer, root,
 * still reaches both), and starts the reader thread. 0 or -errno. */
int gpu_reader__open(struct gpu_reader **out, const struct run_as *as);
/* The socket's path (IT_GPU_CHANNEL_ENV's value). */
const char *gpu_reader__path(const struct gpu_reader *r);
/* Whether records may be kept (--max-memory not reached); those that
 * arrive while not are counted as dropped. */
void gpu_reader__set_hold(struct gpu_reader *r, bool may_hold);
/* The target ended: waits up to wait_ms for every connected process's BYE
 * (or its connection's end), then stops the reader thread. Idempotent. */
void gpu_reader__stop(struct gpu_reader *r, int wait_ms);
/* Stops the thread if still running, removes the socket and its directory. */
void gpu_reader__free(struct gpu_reader *r);

/* The records so far into m->gpu_activity's inputs (ops on CUPTI's clock,
 * launch and sync calls, calibration pairs, processes, notice, counters);
 * kernel names interned in m->names. Leaves the channel as it is. 0 or -ENOMEM. */
int gpu_reader__collect(struct gpu_reader *r, struct model *m);

struct gpu_reader_counts {
	uint64_t connections, bad_connections, records, dropped_budget, cupti_dropped, byes;
};
void gpu_reader__counts(struct gpu_reader *r, struct gpu_reader_counts *out);

#endif
