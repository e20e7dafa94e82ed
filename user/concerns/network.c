// SPDX-License-Identifier: BSD-2-Clause
/* Network concern: the followed processes' TCP traffic (bpf/network.bpf.c).
 * Chooses the byte source at run time (sock:sock_{send,recv}_length, else
 * raw_syscalls around the socket read/write calls), attaches tcp:tcp_probe (smoothed RTT),
 * tcp:tcp_retransmit_skb and sock:inet_sock_set_state where present, and
 * fills the model's network {connections, totals} and each cycle's
 * bytes.
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
#include "map_dump.h"
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

/* A connection as profile.json shows it, added to the model's and counted
 * in its totals. 0 or -ENOMEM. */
static int add_conn(const struct recording *rec, struct model_network *net, const struct it_conn *c, bool closed,
		    uint64_t close_ns)
{
	struct model_net_conn *o;

	if (VEC_RESERVE(net->connections.v, net->connections.cap, net->connections.n, 16))
		return -ENOMEM;
	o = &net->connections.v[net->connections.n++];
	memset(o, 0, sizeof(*o));
	o->pid = c->tgid;
	addr_str(c, c->saddr, c->sport, o->local, sizeof(o->local));
	addr_str(c, c->daddr, c->dport, o->remote, sizeof(o->remote));
	o->sent_bytes = c->sent;
	o->recv_bytes = c->recv;
	o->sends = c->sends;
	o->recvs = c->recvs;
	o->retransmits = c->retransmits;
	o->srtt_us.samples = c->srtt_samples;
	if (c->srtt_samples) {
		o->srtt_us.has_values = true;
		o->srtt_us.last = c->srtt_us_last;
		o->srtt_us.min = c->srtt_us_min;
		o->srtt_us.avg = (double)c->srtt_us_sum / c->srtt_samples;
		o->srtt_us.max = c->srtt_us_max;
	}
	o->first_s = c->first_ns > rec->start_ns ? (c->first_ns - rec->start_ns) / 1e9 : 0;
	o->closed = closed;
	if (closed)
		o->closed_s = close_ns > rec->start_ns ? (close_ns - rec->start_ns) / 1e9 : 0;
	net->totals.connections++;
	net->totals.sent_bytes += c->sent;
	net->totals.recv_bytes += c->recv;
	net->totals.retransmits += c->retransmits;
	return 0;
}

static int network_collect(struct recording *rec, struct model *m)
{
	struct infertrace_bpf *s = rec->tracer.skel;
	int socks_fd = bpf_map__fd(s->maps.net_socks), cyc_fd = bpf_map__fd(s->maps.net_cycles);
	const struct net_state *ns = rec->network;
	struct model_network *net = &m->network;
	struct map_dump d = { 0 };
	size_t i;
	int err = 0;

	if (!ns)
		return 0;
	net->present = true;
	net->connections.n = net->retransmit_events.n = 0;
	memset(&net->totals, 0, sizeof(net->totals));
	for (i = 0; i < ns->nclosed && !err; i++)
		err = add_conn(rec, net, &ns->closed[i].c, true, ns->closed[i].close_ns);
	if (!err)
		err = map_dump__read(&d, socks_fd, sizeof(__u64), sizeof(struct it_conn), 0);
	for (i = 0; i < d.n && !err; i++)
		err = add_conn(rec, net, map_dump__value(&d, i), false, 0);
	map_dump__free(&d);
	for (i = 0; ns->source && i < m->ncycles; i++) {
		struct model_cycle *c = &m->cycles[i];
		struct it_net_key k = { .tgid = c->pid, .cycle = c->bpf_cycle };
		struct it_net_total t = {};

		bpf_map_lookup_elem(cyc_fd, &k, &t);
		c->network = (struct model_net_cycle){ .present = true, .sent_bytes = t.sent, .recv_bytes = t.recv,
						       .sends = t.sends, .recvs = t.recvs, .retransmits = t.retransmits };
	}
	snprintf(net->source, sizeof(net->source), "%s", ns->source ? ns->source : "");
	snprintf(net->rtt_source, sizeof(net->rtt_source), "%s", ns->have_rtt ? "tcp:tcp_probe" : "none");
	snprintf(net->retransmit_source, sizeof(net->retransmit_source), "%s",
		 ns->have_retrans ? "tcp:tcp_retransmit_skb" : "none");
	for (i = 0; i < ns->nretrans && !err; i++) {
		if (VEC_RESERVE(net->retransmit_events.v, net->retransmit_events.cap, net->retransmit_events.n, 16)) {
			err = -ENOMEM;
			break;
		}
		net->retransmit_events.v[net->retransmit_events.n++] = (struct model_net_retransmit){
			.t_s = ns->retrans[i].ts_ns > rec->start_ns ? (ns->retrans[i].ts_ns - rec->start_ns) / 1e9 : 0.0,
			.pid = (pid_t)ns->retrans[i].tgid, .local_port = ns->retrans[i].sport,
			.remote_port = ns->retrans[i].dport };
	}
	net->closed_connections_not_kept = ns->closed_dropped;
	return err;
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
