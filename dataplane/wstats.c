/* dataplane/wstats.c — the counter tables; see wstats.h. */
#include <stdio.h>

#include "ldap/dnpool.h"
#include "net/tcp.h"
#include "tls/stream.h"
#include "dataplane/wstats.h"

#define C LFE_CTR_COUNTER
#define G LFE_CTR_GAUGE
/* A counter the worker counts in struct lfe_wstats itself. */
#define OWN(n, k, h) { .name = #n, .help = h, .off = offsetof(struct lfe_wstats, n), .kind = k }
/* A counter copied from field f of the module's struct S at publish. */
#define SRC(n, S, f, k, h) { .name = #n, .help = h, .off = offsetof(struct lfe_wstats, n), \
			     .src = offsetof(S, f), .src_size = sizeof(((S *)0)->f), .kind = k }
#define GROUP(m, S, rws, ...) { .module = m, .source = #S, .source_size = sizeof(S), .rows = rws, \
				.n = sizeof(rws) / sizeof(rws[0]), __VA_ARGS__ }

static const struct lfe_ctr worker_rows[] = {
	OWN(rx_pkts, C, "Frames received."),
	OWN(tx_pkts, C, "Frames sent."),
	OWN(rx_bytes, C, "Bytes received (frames)."),
	OWN(tx_bytes, C, "Bytes sent (frames)."),
	OWN(conns_active, G, "LDAP connections open now."),
	OWN(conns_opened, C, "LDAP connections opened."),
	OWN(conns_refused, C, "Connections refused: no session slot, or TLS could not start."),
	OWN(binds_ok, C, "Binds answered success (cache hits included)."),
	OWN(binds_failed, C, "Binds answered invalidCredentials after a verification."),
	OWN(binds_offloaded, C, "Binds verified on the verifier threads (slow schemes)."),
	OWN(binds_busy, C, "Binds answered busy."),
	OWN(binds_throttled, C, "Binds answered 49 unverified by the brute-force throttle."),
	OWN(throttled_src, C, "Throttled binds held by the source address key."),
	OWN(throttled_dn, C, "Throttled binds held by the (source, DN) key."),
	OWN(throttled_dn_global, C, "Throttled binds held by the DN key over all sources."),
	OWN(throttle_penalties, C, "Throttle penalties started."),
	OWN(bind_cache_hits, C, "Binds answered from the verified-credential cache."),
	OWN(bind_cache_misses, C, "Binds that went the full path past the credential cache."),
	OWN(bind_cache_invalidated, C, "Credential cache entries evicted: their re-check failed."),
	OWN(bind_cache_peeked, C, "Binds whose cache key the bind peek had made."),
	OWN(searches, C, "Search requests."),
	OWN(search_unindexed, C, "Searches run without an index."),
	OWN(search_yielded, C, "Search parts that yielded (slice, work or send room spent)."),
	OWN(search_limited, C, "Searches stopped at a limit."),
	OWN(verify_dropped_closed, C, "Verifications dropped: their connection closed first."),
	OWN(verify_busy_source, C, "Binds refused busy: the source's verifier share was full."),
	OWN(verify_busy_conn, C, "Binds refused busy: the connection's verifier share was full."),
	OWN(arp_replies, C, "ARP replies sent."),
	OWN(arp_requests, C, "ARP requests sent."),
	OWN(icmp_replies, C, "ICMP echo replies sent."),
	OWN(neigh_held, C, "Frames held for an unresolved neighbour."),
	OWN(neigh_released, C, "Held frames sent when the neighbour answered."),
	OWN(steered_out, C, "Frames steered to another core."),
	OWN(steered_in, C, "Frames received from another core's steering."),
	OWN(conns_first_request_expired, C, "Connections closed: no first request in time."),
	OWN(conns_bind_expired, C, "Connections closed: bind not answered in time."),
	OWN(conns_pdu_expired, C, "Connections closed: a started request not complete in time."),
	OWN(arp_ignored, C, "ARP frames not learned from."),
	OWN(pdu_no_buffer, C, "Split requests that found no reassembly buffer."),
	OWN(tls_started, C, "Connections that started TLS (LDAPS, StartTLS)."),
	OWN(tls_failed, C, "Connections closed by a TLS failure."),
	OWN(pdu_small_held, G, "Split-request reassembly buffers held now."),
	OWN(pdu_small_peak, G, "Most split-request reassembly buffers held at once."),
	OWN(busy_cycles, C, "TSC cycles of loop turns that did work."),
	OWN(total_cycles, C, "TSC cycles of the worker loop."),
};
const struct lfe_ctr_group lfe_ctr_worker = {
	.module = "worker", .rows = worker_rows, .n = sizeof(worker_rows) / sizeof(worker_rows[0]),
};

#define T struct lfe_tcp_stats
static const struct lfe_ctr tcp_rows[] = {
	SRC(tcp_retransmits, T, retransmits, C, "TCP segments retransmitted."),
	SRC(tcp_resets, T, conns_reset, C, "TCP connections reset."),
	SRC(tcp_syncookies, T, syncookies_sent, C, "SYN cookies sent."),
	SRC(tcp_drop_paws, T, drop_paws, C, "TCP segments dropped by PAWS (RFC 7323)."),
	SRC(tcp_sack_rexmits, T, sack_rexmits, C, "Holes retransmitted from SACK information."),
	SRC(tcp_syn_budget_dropped, T, drop_syn_budget, C, "SYNs dropped while cookies were out."),
	SRC(tcp_pushes, T, pushes, C, "Inline flights sent before the burst's end."),
	SRC(tcp_sndbuf_pool_empty, T, sndbuf_pool_empty, C, "Waits on an empty send buffer pool."),
	SRC(tcp_rcvbuf_pool_empty, T, rcvbuf_pool_empty, C, "Bytes that found no receive buffer (zero window)."),
	SRC(tcp_buf_stall_closed, T, buf_stall_closed, C, "Connections reset for holding a buffer without progress."),
	SRC(conns_src_capped, T, drop_src_cap, C, "SYNs over the source's fair share of connections."),
	SRC(conns_evicted, T, evicted, C, "Evictable connections reset for a new SYN."),
	SRC(conns_idle_closed, T, idle_closed, C, "Connections closed idle."),
	SRC(conns_table_full, T, drop_table_full, C, "SYNs dropped: the connection table was full."),
};
#undef T
const struct lfe_ctr_group lfe_ctr_tcp = GROUP("tcp", struct lfe_tcp_stats, tcp_rows);

#define T struct lfe_tcp_mem
static const struct lfe_ctr tcp_mem_rows[] = {
	SRC(tcp_sndbufs_used, T, sndbufs_used, G, "TCP send buffers held now."),
	SRC(tcp_rcvbufs_used, T, rcvbufs_used, G, "TCP receive buffers held now."),
};
#undef T
const struct lfe_ctr_group lfe_ctr_tcp_mem = GROUP("tcp_mem", struct lfe_tcp_mem, tcp_mem_rows);

#define T struct lfe_stream_stats
static const struct lfe_ctr tls_rows[] = {
	SRC(tls_handshakes, T, handshakes, C, "TLS handshakes completed, full or resumed."),
	SRC(tls_resumed, T, resumed, C, "TLS handshakes resumed (ticket or PSK)."),
	SRC(tls_handshake_failed, T, handshake_failed, C, "TLS handshakes failed (alert or garbage)."),
	SRC(tls_offloaded, T, offloaded, C, "TLS handshake steps run on a crypto thread."),
	SRC(tls_busy, T, busy, C, "TLS handshakes refused: the offload queue was full."),
	SRC(tls_handover, T, handover, C, "TLS 1.3 connections handed to ldapfe's record layer."),
	SRC(tls_handshake_expired, T, handshake_expired, C, "Connections closed: TLS handshake past its deadline."),
	SRC(tls_record_expired, T, record_expired, C, "Connections closed: a TLS record past its deadline."),
	SRC(tls_record_pool_empty, T, record_pool_empty, C, "Connections reset: a TLS record found no pool buffer."),
};
#undef T
const struct lfe_ctr_group lfe_ctr_tls = GROUP("tls", struct lfe_stream_stats, tls_rows);

#define T struct lfe_tlsoff_wstats
static const struct lfe_ctr tlsoff_rows[] = {
	SRC(tls_cancelled, T, cancelled, C, "TLS offload jobs cancelled: their connection closed."),
	SRC(tls_queue_depth, T, queue_depth, G, "TLS offload jobs outstanding now."),
};
#undef T
const struct lfe_ctr_group lfe_ctr_tlsoff = GROUP("tlsoff", struct lfe_tlsoff_wstats, tlsoff_rows);

#define T struct lfe_dnpool_stats
static const struct lfe_ctr dnpool_rows[] = {
	SRC(dn_pool_bytes, T, bytes, G, "Bytes of DN pool chunks held now."),
	SRC(dn_pool_dry, T, dry, C, "Binds refused busy for want of a DN pool chunk."),
};
#undef T
const struct lfe_ctr_group lfe_ctr_dnpool = GROUP("dnpool", struct lfe_dnpool_stats, dnpool_rows);

/* net.h's drop reasons; the labels are lfe_net_drop_names (test_wstats). */
#define DROP(r, lab, h) { .name = "drop_" lab, .label = lab, .help = h, \
			  .off = offsetof(struct lfe_wstats, drops[r]), .kind = C }
static const struct lfe_ctr drop_rows[] = {
	DROP(LFE_DROP_NONE, "none", "No reason (never counted)."),
	DROP(LFE_DROP_SHORT, "short", "Truncated header."),
	DROP(LFE_DROP_ETHERTYPE, "ethertype", "Not IPv4 or ARP."),
	DROP(LFE_DROP_ARP, "arp", "ARP not Ethernet/IPv4."),
	DROP(LFE_DROP_IP_VERSION, "ip_version", "Not IP version 4, or IHL < 5."),
	DROP(LFE_DROP_IP_LEN, "ip_len", "IP total length inconsistent with the frame."),
	DROP(LFE_DROP_IP_CSUM, "ip_csum", "Bad IP header checksum."),
	DROP(LFE_DROP_IP_FRAG, "ip_frag", "IP fragments."),
	DROP(LFE_DROP_IP_OPTIONS, "ip_options", "IPv4 options."),
	DROP(LFE_DROP_IP_ADDR, "ip_addr", "Broadcast, multicast or zero source."),
	DROP(LFE_DROP_PROTO, "proto", "Not ICMP or TCP."),
	DROP(LFE_DROP_ICMP, "icmp", "ICMP other than echo request, or malformed."),
	DROP(LFE_DROP_ICMP_CSUM, "icmp_csum", "Bad ICMP checksum."),
	DROP(LFE_DROP_TCP_HDR, "tcp_hdr", "TCP data offset or options malformed."),
	DROP(LFE_DROP_TCP_CSUM, "tcp_csum", "Bad TCP checksum."),
	DROP(LFE_DROP_NOT_OURS, "not_ours", "Addressed to another host."),
	DROP(LFE_DROP_NO_ARP, "no_arp", "Not sent: no MAC known for the next hop."),
	DROP(LFE_DROP_NO_MBUF, "no_mbuf", "Not sent: the mbuf pool was empty."),
	DROP(LFE_DROP_TX_FULL, "tx_full", "Not sent: the tx queue did not take it."),
	DROP(LFE_DROP_STEER_FULL, "steer_full", "Software steering ring full."),
	DROP(LFE_DROP_MULTISEG, "multiseg", "Received in several mbuf segments."),
};
_Static_assert(sizeof(drop_rows) / sizeof(drop_rows[0]) == LFE_DROP_MAX, "a row per drop reason");
const struct lfe_ctr_group lfe_ctr_drops = {
	.module = "drops", .rows = drop_rows, .n = LFE_DROP_MAX, .flags = LFE_CTR_SPARSE,
	.family = "ldapfe_drops_total", .family_label = "reason", .family_help = "Frames dropped, by reason.",
};

const struct lfe_ctr_group *const lfe_wstats_groups[] = {
	&lfe_ctr_worker, &lfe_ctr_tcp, &lfe_ctr_tcp_mem, &lfe_ctr_tls, &lfe_ctr_tlsoff, &lfe_ctr_dnpool,
	&lfe_ctr_drops, NULL,
};

const char *lfe_ctr_prom_name(const struct lfe_ctr_group *g, const struct lfe_ctr *c, char *buf, size_t n)
{
	if (g->family)
		snprintf(buf, n, "%s", g->family);
	else
		snprintf(buf, n, "ldapfe_%s%s", c->name, c->kind == LFE_CTR_GAUGE ? "" : "_total");
	return buf;
}

void lfe_ctr_print_table(FILE *f)
{
	for (size_t k = 0; lfe_wstats_groups[k]; k++) {
		const struct lfe_ctr_group *g = lfe_wstats_groups[k];
		for (size_t i = 0; i < g->n; i++) {
			const struct lfe_ctr *c = &g->rows[i];
			char m[96];
			lfe_ctr_prom_name(g, c, m, sizeof(m));
			fprintf(f, "%s %s%s %s %s", c->name, c->kind == LFE_CTR_GAUGE ? "gauge" : "counter",
				g->flags & LFE_CTR_SPARSE ? ",sparse" : "", g->module, m);
			if (g->family)
				fprintf(f, "{%s=\"%s\"}", g->family_label, c->label);
			fprintf(f, " %s\n", c->help);
		}
	}
}
