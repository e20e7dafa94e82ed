// SPDX-License-Identifier: BSD-2-Clause
/* The followed processes' TCP traffic in the model: profile.json's
 * `network` (connections, totals, retransmits) and each cycle's bytes
 * (cycles[i].network). Filled by the network concern (collect); written
 * and loaded by outputs/profile_network.c. A part of model.h: include
 * model.h. */
#ifndef INFERTRACE_MODEL_NETWORK_H
#define INFERTRACE_MODEL_NETWORK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vec.h"

/* Smoothed round-trip time samples of a connection, µs. */
struct model_net_rtt {
	uint64_t samples;
	bool has_values;           /* samples > 0: the figures below */
	uint64_t last, min, max;
	double avg;
};

struct model_net_conn {
	pid_t pid;
	char local[64], remote[64]; /* address:port ([v6]:port) */
	uint64_t sent_bytes, recv_bytes, sends, recvs, retransmits;
	struct model_net_rtt srtt_us;
	double first_s;            /* seconds after the recording started */
	bool closed;
	double closed_s;           /* when closed */
};

struct model_net_retransmit {
	double t_s;                /* seconds after the recording started */
	pid_t pid;
	int local_port, remote_port;
};

/* The bytes and calls of one cycle. */
struct model_net_cycle {
	bool present;
	uint64_t sent_bytes, recv_bytes, sends, recvs, retransmits;
};

struct model_network {
	bool present;              /* the concern ran */
	char source[32];           /* how bytes are counted; "": no source (null) */
	char rtt_source[32], retransmit_source[32]; /* the tracepoint or "none" */
	VEC_OF(struct model_net_conn) connections; /* closed ones first */
	struct {
		uint64_t connections, sent_bytes, recv_bytes, retransmits;
	} totals;
	VEC_OF(struct model_net_retransmit) retransmit_events;
	uint64_t closed_connections_not_kept;
};

#endif
