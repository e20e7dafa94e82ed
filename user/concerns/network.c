// SPDX-License-Identifier: BSD-2-Clause
/* Network concern: the followed processes' TCP traffic (bpf/network.bpf.c).
 * Chooses the byte source at run time (sock:sock_{send,recv}_length, else
 * raw_syscalls around the socket read/write calls), attaches tcp:tcp_probe (smoothed RTT),
 * tcp:tcp_retransmit_skb and sock:inet_sock_set_state where present, and
 * writes `network` {connections, totals} and cycles[i].network.
 * INFERTRACE_NET_SOURCE=syscalls forces the fallback (to test it where the
 * tracepoints exist). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "concerns.h"
#include "infertrace.skel.h"
#include "sched.h"
#include "vec.h"

#define MAX_CLOSED 4096
#define MAX_RETRANSMITS 512

struct closed_conn {
	uint64_t sk;
	uint64_t close_ns;
	struct it_conn c;
};

struct net_state {
	const char *source;        /* "sock_tracepoints", "syscalls" or NULL (none) */
	bool have_rtt, have_retrans, have_close;
	struct closed_conn *closed;
	size_t nclosed, capclosed;
	uint64_t closed_dropped;
	uint64_t connections_seen;
	struct { uint64_t ts_ns; uint32_t tgid, cycle; uint16_t sport, dport; } retrans[MAX_RETRANSMITS];
	size_t nretrans;
};


static int network_configure(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	const char *force = getenv("INFERTRACE_NET_SOURCE");
	bool tps = tracer__have_tracepoint("sock", "sock_send_length") &&
		   tracer__have_tracepoint("sock", "sock_recv_length");

	rec->network = calloc(1, sizeof(*rec->network));
	if (!rec->network)
		return -ENOMEM;
	if (force && !strcmp(force, "syscalls"))
		tps = false;
	if (tps) {
		rec->network->source = "sock_tracepoints";
		bpf_program__set_autoload(s->progs.net_sys_enter, false);
		bpf_program__set_autoload(s->progs.net_sys_exit, false);
	} else {
		/* this architecture's numbers of the calls that move socket data */
		const long snd[IT_NET_DATA_CALLS] = { __NR_write, __NR_writev, __NR_sendto, __NR_sendmsg };
		const long rcv[IT_NET_DATA_CALLS] = { __NR_read, __NR_readv, __NR_recvfrom, __NR_recvmsg };

		rec->network->source = "syscalls";
		for (int i = 0; i < IT_NET_DATA_CALLS; i++) {
			s->rodata->cfg_nr_send[i] = snd[i];
			s->rodata->cfg_nr_recv[i] = rcv[i];
		}
		bpf_program__set_autoload(s->progs.net_sock_send_length, false);
		bpf_program__set_autoload(s->progs.net_sock_recv_length, false);
		if (!tracer__have_tracepoint("raw_syscalls", "sys_enter")) {
			bpf_program__set_autoload(s->progs.net_sys_enter, false);
			bpf_program__set_autoload(s->progs.net_sys_exit, false);
		}
	}
	rec->network->have_rtt = tracer__have_tracepoint("tcp", "tcp_probe");
	rec->network->have_retrans = tracer__have_tracepoint("tcp", "tcp_retransmit_skb");
	rec->network->have_close = tracer__have_tracepoint("sock", "inet_sock_set_state");
	if (!rec->network->have_rtt)
		bpf_program__set_autoload(s->progs.net_tcp_probe, false);
	if (!rec->network->have_retrans)
		bpf_program__set_autoload(s->progs.net_tcp_retransmit_skb, false);
	if (!rec->network->have_close)
		bpf_program__set_autoload(s->progs.net_inet_sock_set_state, false);
	return 0;
}

static bool attach_one(struct recording *rec, struct bpf_program *p)
{
	int err = tracer__attach_program(&rec->tracer, p);

	if (err) {
		fprintf(stderr, "infertrace: warning: attaching %s failed: %s\n", bpf_program__name(p),
			strerror(-err));
		return false;
	}
	return true;
}

static int network_attach(struct recording *rec)
{
	struct infertrace_bpf *s = rec->tracer.skel;

	if (!strcmp(rec->network->source, "syscalls")) {
		if (!bpf_program__autoload(s->progs.net_sys_enter) ||
		    !attach_one(rec, s->progs.net_sys_enter) || !attach_one(rec, s->progs.net_sys_exit)) {
			fprintf(stderr, "infertrace: warning: no TCP byte counts: this kernel lacks "
				"sock:sock_send_length and raw_syscalls\n");
			rec->network->source = NULL;
		}
	} else if (!attach_one(rec, s->progs.net_sock_send_length) || !attach_one(rec, s->progs.net_sock_recv_length)) {
		rec->network->source = NULL;
	}
	if (rec->network->have_rtt)
		rec->network->have_rtt = attach_one(rec, s->progs.net_tcp_probe);
	if (rec->network->have_retrans)
		rec->network->have_retrans = attach_one(rec, s->progs.net_tcp_retransmit_skb);
	if (rec->network->have_close)
		rec->network->have_close = attach_one(rec, s->progs.net_inet_sock_set_state);
	return 0;
}

static void network_on_event(struct recording *rec, const void *data, size_t size)
{
	const struct it_net_event *e = data;

	(void)rec;
	if (e->hdr.type < IT_EV_NET_CONN || e->hdr.type > IT_EV_NET_RETRANSMIT)
		return;
	if (!rec->network || size < sizeof(*e))
		return;
	switch (e->hdr.type) {
	case IT_EV_NET_CONN:
		rec->network->connections_seen++;
		break;
	case IT_EV_NET_CLOSE:
		if (rec->network->nclosed >= MAX_CLOSED) {
			rec->network->closed_dropped++;
			break;
		}
		if (VEC_RESERVE(rec->network->closed, rec->network->capclosed, rec->network->nclosed, 32)) {
			rec->network->closed_dropped++;
			break;
		}
		rec->network->closed[rec->network->nclosed++] = (struct closed_conn){ .sk = e->sk, .close_ns = e->hdr.ts_ns,
								    .c = e->conn };
		break;
	case IT_EV_NET_RETRANSMIT:
		if (rec->network->nretrans < MAX_RETRANSMITS) {
			rec->network->retrans[rec->network->nretrans].ts_ns = e->hdr.ts_ns;
			rec->network->retrans[rec->network->nretrans].tgid = e->conn.tgid;
			rec->network->retrans[rec->network->nretrans].cycle = e->cycle;
			rec->network->retrans[rec->network->nretrans].sport = e->conn.sport;
			rec->network->retrans[rec->network->nretrans++].dport = e->conn.dport;
		}
		break;
	}
}

static void addr_str(const struct it_conn *c, const uint8_t *addr, uint16_t port, char *out, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(c->family == AF_INET6 ? AF_INET6 : AF_INET, addr, a, sizeof(a));
	snprintf(out, len, c->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
}

static json_t *conn_json(const struct recording *rec, const struct it_conn *c, bool closed, uint64_t close_ns)
{
	json_t *o = json_object(), *rtt = json_object();
	char a[96];

	json_object_set_new(o, "pid", json_integer(c->tgid));
	addr_str(c, c->saddr, c->sport, a, sizeof(a));
	json_object_set_new(o, "local", json_string(a));
	addr_str(c, c->daddr, c->dport, a, sizeof(a));
	json_object_set_new(o, "remote", json_string(a));
	json_object_set_new(o, "sent_bytes", json_integer(c->sent));
	json_object_set_new(o, "recv_bytes", json_integer(c->recv));
	json_object_set_new(o, "sends", json_integer(c->sends));
	json_object_set_new(o, "recvs", json_integer(c->recvs));
	json_object_set_new(o, "retransmits", json_integer(c->retransmits));
	json_object_set_new(rtt, "samples", json_integer(c->srtt_samples));
	if (c->srtt_samples) {
		json_object_set_new(rtt, "last", json_integer(c->srtt_us_last));
		json_object_set_new(rtt, "min", json_integer(c->srtt_us_min));
		json_object_set_new(rtt, "avg", json_real((double)c->srtt_us_sum / c->srtt_samples));
		json_object_set_new(rtt, "max", json_integer(c->srtt_us_max));
	}
	json_object_set_new(o, "srtt_us", rtt);
	json_object_set_new(o, "first_s", json_real(c->first_ns > rec->start_ns ?
						    (c->first_ns - rec->start_ns) / 1e9 : 0));
	json_object_set_new(o, "closed", json_boolean(closed));
	if (closed)
		json_object_set_new(o, "closed_s", json_real(close_ns > rec->start_ns ?
							     (close_ns - rec->start_ns) / 1e9 : 0));
	return o;
}

static int network_collect(struct recording *rec, struct model *m)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	int socks_fd = bpf_map__fd(s->maps.net_socks), cyc_fd = bpf_map__fd(s->maps.net_cycles);
	json_t *o, *conns;
	uint64_t sent = 0, recv = 0, retrans = 0, key, next, *prev = NULL;
	struct it_conn v;
	size_t i, nconn = 0;

	if (!rec->network)
		return 0;
	o = json_object();
	conns = json_array();
	for (i = 0; i < rec->network->nclosed; i++, nconn++) {
		const struct it_conn *cc = &rec->network->closed[i].c;

		json_array_append_new(conns, conn_json(rec, cc, true, rec->network->closed[i].close_ns));
		sent += cc->sent;
		recv += cc->recv;
		retrans += cc->retransmits;
	}
	while (bpf_map_get_next_key(socks_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(socks_fd, &key, &v))
			continue;
		json_array_append_new(conns, conn_json(rec, &v, false, 0));
		sent += v.sent;
		recv += v.recv;
		retrans += v.retransmits;
		nconn++;
	}
	for (i = 0; rec->network->source && i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct it_net_key k = { .tgid = c->pid, .cycle = c->bpf_cycle };
		struct it_net_total t = {};

		bpf_map_lookup_elem(cyc_fd, &k, &t);
		model__cycle_detail(c, "network", json_pack("{s:I,s:I,s:I,s:I,s:I}",
			"sent_bytes", (json_int_t)t.sent, "recv_bytes", (json_int_t)t.recv,
			"sends", (json_int_t)t.sends, "recvs", (json_int_t)t.recvs,
			"retransmits", (json_int_t)t.retransmits));
	}
	json_object_set_new(o, "source", rec->network->source ? json_string(rec->network->source) : json_null());
	json_object_set_new(o, "rtt_source", json_string(rec->network->have_rtt ? "tcp:tcp_probe" : "none"));
	json_object_set_new(o, "retransmit_source", json_string(rec->network->have_retrans ? "tcp:tcp_retransmit_skb" : "none"));
	json_object_set_new(o, "connections", conns);
	json_object_set_new(o, "totals", json_pack("{s:I,s:I,s:I,s:I}", "connections", (json_int_t)nconn,
						  "sent_bytes", (json_int_t)sent, "recv_bytes", (json_int_t)recv,
						  "retransmits", (json_int_t)retrans));
	json_t *rt = json_array();

	for (i = 0; i < rec->network->nretrans; i++)
		json_array_append_new(rt, json_pack("{s:f,s:i,s:i,s:i}", "t_s",
			rec->network->retrans[i].ts_ns > rec->start_ns ? (rec->network->retrans[i].ts_ns - rec->start_ns) / 1e9 : 0.0,
			"pid", (int)rec->network->retrans[i].tgid, "local_port", rec->network->retrans[i].sport,
			"remote_port", rec->network->retrans[i].dport));
	json_object_set_new(o, "retransmit_events", rt);
	if (rec->network->closed_dropped)
		json_object_set_new(o, "closed_connections_not_kept", json_integer(rec->network->closed_dropped));
	model__set_section(m, MODEL_SEC_NETWORK, o);
	return 0;
}

static void network_cleanup(struct recording *rec)
{
	(void)rec;
	if (!rec->network)
		return;
	free(rec->network->closed);
	free(rec->network);
	rec->network = NULL;
}

const struct concern network_concern = {
	.name = "network",
	.configure = network_configure,
	.attach = network_attach,
	.on_event = network_on_event,
	.collect = network_collect,
	.cleanup = network_cleanup,
};
