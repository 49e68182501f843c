/* dataplane/wstats.h — the worker's counters: its own, and its view of
 * the modules' counter tables (DPDK-free: lfe_dpcore, unit-tested in
 * tests/dataplane/test_wstats).
 *
 * A worker counts into its struct lfe_wstats (w->st.x++, nothing else on
 * the hot path). Each module that keeps counters exports its own table
 * (common/ctr.h: a row per counter, offset in the module's struct):
 * backend/auth.h (lfe_auth_ctrs, counted in place: w->st.auth is the
 * struct the worker's struct lfe_auth counts into), net/net.h (the drop
 * reasons, counted in place: w->st.drops), net/tcp.h (lfe_tcp_ctrs,
 * lfe_tcp_mem_ctrs), tls/stream.h, tls/tlsoff.h, ldap/dnpool.h (copied in
 * when the worker publishes, every LFE_PUBLISH_US, off the per-packet
 * path). The worker's own counters are a table of this file
 * (lfe_worker_ctrs, over struct lfe_wstats).
 *
 * wstats.c composes them: a group per table says where the module's copy
 * lives in struct lfe_wstats (its first and last field), and its rows are
 * the module's rows with their offsets in struct lfe_wstats. The
 * composition is checked when the program loads (a table whose count or
 * end rows differ from its slot, or rows outside their struct, abort with
 * the table's name) and by test_wstats (every field of struct lfe_wstats
 * one row, in order). `ldapfectl stats`, /metrics, rte_telemetry's
 * /ldapfe/stats and `ldapfe --counters` are all generated from
 * lfe_wstats_groups (and /metrics from lfe_wstats_families too): a counter
 * added to its module's table and given its slot here shows in all.
 *
 * Thread rules: the tables and groups are constant once main runs. A
 * struct lfe_wstats is written by its worker only; other threads read the
 * published copy (worker.h).
 */
#ifndef LFE_DATAPLANE_WSTATS_H
#define LFE_DATAPLANE_WSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/auth.h"
#include "common/ctr.h"
#include "net/net.h"

/* Counters, all uint64_t so they can be published as an array. The order
 * is lfe_wstats_groups' (row after row): the worker's own counters, then
 * each module's copy, drops last. */
struct lfe_wstats {
	/* ---- worker: counted by the worker itself (lfe_worker_ctrs) */
	uint64_t rx_pkts, tx_pkts, rx_bytes, tx_bytes;
	uint64_t conns_active, conns_opened, conns_refused;
	uint64_t searches, search_unindexed;
	uint64_t search_yielded;   /* search parts that yielded (slice, work or send room spent) */
	uint64_t search_limited, verify_dropped_closed, verify_busy_source, verify_busy_conn;
	uint64_t arp_replies, arp_requests, icmp_replies;
	/* frames held for an unresolved neighbour (neigh.h), and those that
	 * left when it answered (the rest: drop_no_arp) */
	uint64_t neigh_held, neigh_released;
	uint64_t steered_out, steered_in;
	/* glue deadlines of fair connection resources */
	uint64_t conns_first_request_expired, conns_bind_expired, conns_pdu_expired;
	uint64_t arp_ignored, pdu_no_buffer;
	/* TLS: connections that started it (LDAPS, StartTLS), and those closed
	 * by a TLS failure (garbage, a bad or oversized record, a fatal alert,
	 * a failed handshake) */
	uint64_t tls_started, tls_failed;
	/* split-request reassembly buffers (LFE_PDU_SMALL): held now (gauge),
	 * and the most ever held at once (what is resident of them) */
	uint64_t pdu_small_held, pdu_small_peak;
	uint64_t busy_cycles, total_cycles;
	/* ---- auth: the bind policy's struct lfe_auth_stats (backend/auth.h),
	 * counted in place: w->st.auth is what the worker's struct lfe_auth
	 * counts into; the named fields are the same list. */
	union {
		struct lfe_auth_stats auth;
		struct {
			LFE_AUTH_COUNTERS(LFE_AUTH_FIELD)
		};
	};
	/* ---- tcp: lfe_tcp_ctrs' rows of struct lfe_tcp_stats, copied at publish */
	uint64_t tcp_retransmits, tcp_resets, tcp_syncookies;
	uint64_t tcp_drop_paws, tcp_sack_rexmits;   /* RFC 7323 PAWS drops, SACK-driven resends */
	uint64_t tcp_syn_budget_dropped;   /* SYNs dropped while cookies were out (tcp.h syn_rate) */
	uint64_t tcp_pushes;   /* inline handshake flights sent before the burst's end (lfe_tcp_conn_push) */
	/* per-core TCP buffer pools: waits on a dry pool (send room, receive
	 * buffer → zero window), resets for holding a buffer without progress */
	uint64_t tcp_sndbuf_pool_empty, tcp_rcvbuf_pool_empty, tcp_buf_stall_closed;
	uint64_t conns_src_capped, conns_evicted, conns_idle_closed, conns_table_full;
	/* ---- tcp_mem: lfe_tcp_mem_ctrs (struct lfe_tcp_mem), buffers held now (gauges) */
	uint64_t tcp_sndbufs_used, tcp_rcvbufs_used;
	/* ---- tls: lfe_stream_ctrs (struct lfe_stream_stats) */
	uint64_t tls_handshakes, tls_resumed, tls_handshake_failed, tls_offloaded, tls_busy;
	/* TLS 1.3 connections handed over to ldapfe's record layer (tlsrec.h) */
	uint64_t tls_handover;
	/* TLS deadlines and the per-core pool of unfinished records
	 * (stream.h): handshakes past handshake_timeout_ms, records past
	 * pdu_timeout_ms, records that found no pool buffer */
	uint64_t tls_handshake_expired, tls_record_expired, tls_record_pool_empty;
	/* ---- tlsoff: lfe_tlsoff_ctrs (struct lfe_tlsoff_stats, this worker's offload queue) */
	uint64_t tls_cancelled, tls_queue_depth;
	/* ---- dnpool: lfe_dnpool_ctrs (struct lfe_dnpool_stats), the sessions'
	 * DN pool (ldap/dnpool.h): bytes of chunks held now (a gauge: bound
	 * identities and binds in flight), binds refused busy for want of a chunk */
	uint64_t dn_pool_bytes, dn_pool_dry;
	/* ---- drops: frames dropped, by reason (net.h's struct lfe_net_drops,
	 * counted in place: w->st.drops[reason]++) */
	uint64_t drops[LFE_DROP_MAX];
};
#define LFE_WSTATS_N (sizeof(struct lfe_wstats) / sizeof(uint64_t))

/* The worker's own counters: a table over struct lfe_wstats itself. */
extern const struct lfe_ctr_table lfe_worker_ctrs;

/* A module's table as the worker sees it: where the module's copy lives
 * in struct lfe_wstats, and the table's rows as fields of struct
 * lfe_wstats (rows[i].off there, size 8; name, help, kind, label the
 * module row's). Constant; rows filled when the program loads. */
struct lfe_ctr_group {
	const struct lfe_ctr_table *table;   /* the module's (module, flags, family) */
	const struct lfe_ctr *rows;          /* n rows: fields of struct lfe_wstats */
	size_t n;                            /* the slot's fields (= table->n, checked) */
	uint16_t base;                       /* the slot: offset of its first field */
	uint8_t pulled;                      /* copied at publish (lfe_wstats_pull); else
					      * counted in place, table->rows[i].off from base */
};

extern const struct lfe_ctr_group lfe_wstats_worker, lfe_wstats_auth, lfe_wstats_tcp, lfe_wstats_tcp_mem,
	lfe_wstats_tls, lfe_wstats_tlsoff, lfe_wstats_dnpool, lfe_wstats_drops;
/* Every group, in struct lfe_wstats order; NULL-terminated: every field
 * is one row of one group. */
extern const struct lfe_ctr_group *const lfe_wstats_groups[];
/* Labelled families over fields already in lfe_wstats_groups, for /metrics
 * (ldapfe_binds_total{result}); NULL-terminated. */
extern const struct lfe_ctr_group *const lfe_wstats_families[];

/* The value of a group's row c in s. */
static inline uint64_t lfe_ctr_get(const struct lfe_wstats *s, const struct lfe_ctr *c)
{
	return *(const uint64_t *)(const void *)((const char *)s + c->off);
}

/* Copy a pulled group's counters from src, the module's struct, into
 * their slot of st (publish: a load and a store per row). */
static inline void lfe_wstats_pull(struct lfe_wstats *st, const struct lfe_ctr_group *g, const void *src)
{
	uint64_t *d = (uint64_t *)(void *)((char *)st + g->base);
	const struct lfe_ctr *r = g->table->rows;
	for (size_t i = 0; i < g->n; i++)
		d[i] = lfe_ctr_value(src, &r[i]);
}

/* The Prometheus metric (family) of row c of g: "ldapfe_NAME_total",
 * "ldapfe_NAME" (gauge) or the table's family. Returns buf. */
const char *lfe_ctr_prom_name(const struct lfe_ctr_group *g, const struct lfe_ctr *c, char *buf, size_t n);

/* `ldapfe --counters`: a line per counter,
 *   NAME KIND MODULE METRIC HELP
 * KIND counter|gauge, METRIC the Prometheus series less core
 * (ldapfe_NAME_total, or family{label="value"}), SPARSE rows with KIND
 * suffixed ",sparse" (telemetry leaves them out while 0); then a line per
 * row of lfe_wstats_families, KIND suffixed ",alias" (a counter above,
 * in /metrics once more under that family). */
void lfe_ctr_print_table(FILE *f);

#endif
