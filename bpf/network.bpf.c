// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Network concern: the TCP traffic of the followed processes. Bytes that
 * sendmsg/recvmsg returned, per (process, cycle) and per socket, from
 * sock:sock_send_length / sock:sock_recv_length (6.3+), else from the
 * socket system calls (raw_syscalls, no kprobes); smoothed RTT of
 * a tracked socket from tcp:tcp_probe, retransmits from
 * tcp:tcp_retransmit_skb, its close from sock:inet_sock_set_state. User
 * space (user/network.c) chooses the programs at run time. Tracepoint
 * records are declared as CO-RE flavors of the kernel's trace_event_raw_*. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"

#define IT_AF_INET 2
#define IT_AF_INET6 10
#define IT_IPPROTO_TCP 6
#define IT_MSG_PEEK 2
#define IT_TCP_CLOSE 7

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* struct sock * */
	__type(value, struct it_conn);
} net_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct it_net_key);
	__type(value, struct it_net_total);
} net_cycles SEC(".maps");

struct trace_event_raw_sock_msg_length___it {
	void *sk;
	__u16 family;
	__u16 protocol;
	int ret;
	int flags;
} __attribute__((preserve_access_index));

struct trace_event_raw_tcp_probe___it {
	__u32 srtt;
	const void *skaddr;
} __attribute__((preserve_access_index));

/* tcp:tcp_retransmit_skb's record: its own type since 6.x, before that
 * the shared tcp_event_sk_skb class; skaddr in both */
struct trace_event_raw_tcp_retransmit_skb___it {
	const void *skaddr;
} __attribute__((preserve_access_index));

struct trace_event_raw_tcp_event_sk_skb___it {
	const void *skaddr;
} __attribute__((preserve_access_index));

struct trace_event_raw_inet_sock_set_state___it {
	const void *skaddr;
	int newstate;
	__u16 protocol;
} __attribute__((preserve_access_index));

static __always_inline struct it_net_total *net_total(__u32 tgid, __u32 cycle)
{
	struct it_net_key k = { .tgid = tgid, .cycle = cycle };
	struct it_net_total zero = {}, *t = bpf_map_lookup_elem(&net_cycles, &k);

	if (t)
		return t;
	bpf_map_update_elem(&net_cycles, &k, &zero, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&net_cycles, &k);
	if (!t)
		stat_inc(IT_STAT_NET_LOST);
	return t;
}

static __always_inline void net_emit(__u32 type, __u64 skp, const struct it_conn *c, __u32 cycle)
{
	struct it_net_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return;
	}
	event_header(&e->hdr, type, c->tgid, (__u32)id, bpf_ktime_get_ns());
	e->sk = skp;
	e->cycle = cycle;
	e->pad = 0;
	__builtin_memcpy(&e->conn, c, sizeof(*c));
	bpf_ringbuf_submit(e, lazy_wakeup());
}

/* The tracked socket of a target, created at its first send or receive. */
static __always_inline struct it_conn *net_conn(struct sock *sk, __u32 tgid, __u16 family)
{
	__u64 key = (__u64)sk;
	struct it_conn *c = bpf_map_lookup_elem(&net_socks, &key), n = {};

	if (c)
		return c;
	n.tgid = tgid;
	n.family = family;
	n.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	n.dport = __builtin_bswap16(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == IT_AF_INET) {
		BPF_CORE_READ_INTO(&n.saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO(&n.daddr, sk, __sk_common.skc_daddr);
	} else {
		BPF_CORE_READ_INTO(&n.saddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&n.daddr, sk, __sk_common.skc_v6_daddr);
	}
	n.first_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&net_socks, &key, &n, BPF_NOEXIST) && !bpf_map_lookup_elem(&net_socks, &key)) {
		stat_inc(IT_STAT_NET_SOCKS_FULL);
		return NULL;
	}
	net_emit(IT_EV_NET_CONN, key, &n, current_cycle(tgid));
	return bpf_map_lookup_elem(&net_socks, &key);
}

static __always_inline int net_account(struct sock *sk, __u16 family, __u16 protocol, int ret, bool send)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct it_net_total *t;
	struct it_conn *c;

	if (ret <= 0 || protocol != IT_IPPROTO_TCP || (family != IT_AF_INET && family != IT_AF_INET6) ||
	    !target_of(tgid))
		return 0;
	c = net_conn(sk, tgid, family);
	t = net_total(tgid, current_cycle(tgid));
	if (send) {
		if (c) {
			__sync_fetch_and_add(&c->sent, ret);
			__sync_fetch_and_add(&c->sends, 1);
			c->last_ns = bpf_ktime_get_ns();
		}
		if (t) {
			__sync_fetch_and_add(&t->sent, ret);
			__sync_fetch_and_add(&t->sends, 1);
		}
	} else {
		if (c) {
			__sync_fetch_and_add(&c->recv, ret);
			__sync_fetch_and_add(&c->recvs, 1);
			c->last_ns = bpf_ktime_get_ns();
		}
		if (t) {
			__sync_fetch_and_add(&t->recv, ret);
			__sync_fetch_and_add(&t->recvs, 1);
		}
	}
	return 0;
}

static __always_inline int on_msg_length(void *ctx, bool send)
{
	struct trace_event_raw_sock_msg_length___it *r = ctx;

	/* MSG_PEEK reads leave the data queued: counted when really read */
	if (BPF_CORE_READ(r, flags) & IT_MSG_PEEK)
		return 0;
	return net_account(BPF_CORE_READ(r, sk), BPF_CORE_READ(r, family), BPF_CORE_READ(r, protocol),
			   BPF_CORE_READ(r, ret), send);
}

SEC("tp/sock/sock_send_length")
int net_sock_send_length(void *ctx)
{
	return on_msg_length(ctx, true);
}

SEC("tp/sock/sock_recv_length")
int net_sock_recv_length(void *ctx)
{
	return on_msg_length(ctx, false);
}

/* Fallback for kernels without the sock tracepoints: raw_syscalls around
 * read/write/readv/writev/sendto/recvfrom/sendmsg/recvmsg (numbers set by
 * user space for its architecture) on a TCP socket. Misses sendfile,
 * splice and io_uring, which the tracepoints also miss. */
const volatile __s64 cfg_nr_send[IT_NET_DATA_CALLS] = { -1, -1, -1, -1 };
const volatile __s64 cfg_nr_recv[IT_NET_DATA_CALLS] = { -1, -1, -1, -1 };
#define NET_NOT_DATA_CALL 2 /* net_call.send: neither a send (1) nor a receive (0) */

struct net_call {
	__u32 fd;
	__u32 send;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct net_call);
} net_calls SEC(".maps");

struct trace_event_raw_sys_enter___it {
	long id;
	unsigned long args[6];
} __attribute__((preserve_access_index));

struct trace_event_raw_sys_exit___it {
	long id;
	long ret;
} __attribute__((preserve_access_index));

#define IT_S_IFMT 00170000
#define IT_S_IFSOCK 0140000

SEC("tp/raw_syscalls/sys_enter")
int net_sys_enter(void *ctx)
{
	struct trace_event_raw_sys_enter___it *r = ctx;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, send = NET_NOT_DATA_CALL;
	long nr = BPF_CORE_READ(r, id);
	struct net_call c;

	for (int i = 0; i < IT_NET_DATA_CALLS; i++) {
		if (nr == cfg_nr_send[i])
			send = 1;
		if (nr == cfg_nr_recv[i])
			send = 0;
	}
	if (send == NET_NOT_DATA_CALL || !target_of(id >> 32))
		return 0;
	c.fd = BPF_CORE_READ(r, args[0]);
	c.send = send;
	bpf_map_update_elem(&net_calls, &tid, &c, BPF_ANY);
	return 0;
}

SEC("tp/raw_syscalls/sys_exit")
int net_sys_exit(void *ctx)
{
	struct trace_event_raw_sys_exit___it *r = ctx;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct net_call *c = bpf_map_lookup_elem(&net_calls, &tid);
	struct task_struct *task;
	struct file **fds, *f = NULL;
	struct socket *sock;
	struct sock *sk;
	long ret;
	__u32 fd, send;

	if (!c)
		return 0;
	fd = c->fd;
	send = c->send;
	bpf_map_delete_elem(&net_calls, &tid);
	ret = BPF_CORE_READ(r, ret);
	if (ret <= 0)
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	fds = BPF_CORE_READ(task, files, fdt, fd);
	if (fd >= BPF_CORE_READ(task, files, fdt, max_fds) || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & IT_S_IFMT) != IT_S_IFSOCK)
		return 0;
	sock = BPF_CORE_READ(f, private_data);
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return 0;
	return net_account(sk, BPF_CORE_READ(sk, __sk_common.skc_family),
			   BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol), (int)ret, send);
}

SEC("tp/tcp/tcp_probe")
int net_tcp_probe(void *ctx)
{
	struct trace_event_raw_tcp_probe___it *r = ctx;
	__u64 key = (__u64)BPF_CORE_READ(r, skaddr);
	struct it_conn *c = bpf_map_lookup_elem(&net_socks, &key);
	__u32 srtt;

	if (!c)
		return 0;
	srtt = BPF_CORE_READ(r, srtt); /* microseconds (srtt_us >> 3) */
	if (!srtt)
		return 0;
	c->srtt_us_last = srtt;
	if (!c->srtt_us_min || srtt < c->srtt_us_min)
		c->srtt_us_min = srtt;
	if (srtt > c->srtt_us_max)
		c->srtt_us_max = srtt;
	__sync_fetch_and_add(&c->srtt_us_sum, srtt);
	__sync_fetch_and_add(&c->srtt_samples, 1);
	return 0;
}

SEC("tp/tcp/tcp_retransmit_skb")
int net_tcp_retransmit_skb(void *ctx)
{
	__u64 key;
	struct it_conn *c;
	struct it_net_total *t;
	__u32 cycle;

	if (bpf_core_type_exists(struct trace_event_raw_tcp_retransmit_skb___it))
		key = (__u64)BPF_CORE_READ((struct trace_event_raw_tcp_retransmit_skb___it *)ctx, skaddr);
	else
		key = (__u64)BPF_CORE_READ((struct trace_event_raw_tcp_event_sk_skb___it *)ctx, skaddr);
	c = bpf_map_lookup_elem(&net_socks, &key);
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->retransmits, 1);
	/* in softirq or a timer: the socket's process, not the current one */
	cycle = current_cycle(c->tgid);
	t = net_total(c->tgid, cycle);
	if (t)
		__sync_fetch_and_add(&t->retransmits, 1);
	net_emit(IT_EV_NET_RETRANSMIT, key, c, cycle);
	return 0;
}

SEC("tp/sock/inet_sock_set_state")
int net_inet_sock_set_state(void *ctx)
{
	struct trace_event_raw_inet_sock_set_state___it *r = ctx;
	__u64 key;
	struct it_conn *c;

	if (BPF_CORE_READ(r, newstate) != IT_TCP_CLOSE || BPF_CORE_READ(r, protocol) != IT_IPPROTO_TCP)
		return 0;
	key = (__u64)BPF_CORE_READ(r, skaddr);
	c = bpf_map_lookup_elem(&net_socks, &key);
	if (!c)
		return 0;
	/* the address may be reused by a new socket: hand the figures over */
	net_emit(IT_EV_NET_CLOSE, key, c, current_cycle(c->tgid));
	bpf_map_delete_elem(&net_socks, &key);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
