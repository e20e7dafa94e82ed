// SPDX-License-Identifier: BSD-2-Clause
/* profile.json's network (struct model_network), a cycle's network (struct
 * model_net_cycle) and crashes (struct model_crash): the tables that write
 * and load them. */
#include "json_fields.h"
#include "model.h"
#include "profile_tables.h"

/* ---- network ---- */

#define JF_T struct model_net_rtt
JF_TABLE(rtt_values_table, JF("last", JF_U64, last), JF("min", JF_U64, min), JF("avg", JF_REAL, avg),
	 JF("max", JF_U64, max));
JF_TABLE(rtt_table, JF("samples", JF_U64, samples), JF_GROUP(NULL, rtt_values_table, JF_WHEN(has_values)));
#undef JF_T

#define JF_T struct model_net_conn
JF_TABLE(conn_table, JF("pid", JF_INT, pid), JF("local", JF_CHARS, local), JF("remote", JF_CHARS, remote),
	 JF("sent_bytes", JF_U64, sent_bytes), JF("recv_bytes", JF_U64, recv_bytes), JF("sends", JF_U64, sends),
	 JF("recvs", JF_U64, recvs), JF("retransmits", JF_U64, retransmits),
	 JF("srtt_us", JF_OBJ, srtt_us, .sub = &rtt_table), JF("first_s", JF_REAL, first_s),
	 JF("closed", JF_BOOL, closed), JF("closed_s", JF_REAL, closed_s, JF_WHEN(closed)));
#undef JF_T

#define JF_T struct model_net_retransmit
JF_TABLE(retransmit_table, JF("t_s", JF_REAL, t_s), JF("pid", JF_INT, pid), JF("local_port", JF_INT, local_port),
	 JF("remote_port", JF_INT, remote_port));
#undef JF_T

#define JF_T struct model_network
JF_TABLE(net_totals_table, JF("connections", JF_U64, totals.connections),
	 JF("sent_bytes", JF_U64, totals.sent_bytes), JF("recv_bytes", JF_U64, totals.recv_bytes),
	 JF("retransmits", JF_U64, totals.retransmits));
JF_TABLE(network_fields_table, JF("source", JF_CHARS, source, .flags = JF_NULL),
	 JF("rtt_source", JF_CHARS, rtt_source), JF("retransmit_source", JF_CHARS, retransmit_source),
	 JF("connections", JF_VEC, connections, .sub = &conn_table), JF_GROUP("totals", net_totals_table),
	 JF("retransmit_events", JF_VEC, retransmit_events, .sub = &retransmit_table),
	 JF("closed_connections_not_kept", JF_U64, closed_connections_not_kept, .flags = JF_OMIT));
JF_TABLE_PUBLIC(profile_network_table, JF_GROUP(NULL, network_fields_table, JF_WHEN(present)));
#undef JF_T

#define JF_T struct model_net_cycle
JF_TABLE_PUBLIC(profile_net_cycle_table, JF("sent_bytes", JF_U64, sent_bytes), JF("recv_bytes", JF_U64, recv_bytes),
		JF("sends", JF_U64, sends), JF("recvs", JF_U64, recvs), JF("retransmits", JF_U64, retransmits));
#undef JF_T

/* ---- crashes (ctx: the model, whose names hold a crash's phase) ---- */

#define JF_T struct model_crash
JF_TABLE_PUBLIC(profile_crash_table, JF("pid", JF_INT, pid), JF("comm", JF_CHARS, comm), JF("role", JF_CHARS, role),
		JF("time_ns", JF_U64, time_ns), JF("time_s", JF_REAL, time_s),
		JF("cycle", JF_I64, cycle, .flags = JF_NEG | JF_NULL),
		JF("phase", JF_NAME, phase, .names = &profile_model_names), JF("cause", JF_CHARS, cause),
		JF("signal", JF_I64, signal, .flags = JF_NULL),
		JF("signal_name", JF_CHARS, signal_name, JF_WHEN(has_signal)),
		JF("core_dumped", JF_BOOL, core_dumped, JF_WHEN(has_signal)),
		JF("exit_code", JF_INT, exit_code, JF_WHEN(has_exit_code)),
		JF("sender_pid", JF_INT, sender_pid, JF_WHEN(has_sender)),
		JF("si_code", JF_INT, si_code, JF_WHEN(has_sender)), JF("rss_mb", JF_REAL, rss_mb));
#undef JF_T
