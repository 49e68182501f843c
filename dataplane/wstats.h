/* dataplane/wstats.h — the worker's counters and the tables that describe
 * them (DPDK-free: lfe_dpcore, unit-tested in tests/dataplane/test_wstats).
 *
 * A worker counts into its struct lfe_wstats (w->st.x++, nothing else on
 * the hot path); modules that keep their own statistics (the TCP stack,
 * the TLS streams, the TLS offload queues, the DN pool) are copied into it
 * when the worker publishes (worker.c, every LFE_PUBLISH_US, off the
 * per-packet path). Each module's counters are one table (struct
 * lfe_ctr_group: a row per counter — name, kind, help, offset in struct
 * lfe_wstats and, for a module's copy, offset in the module's struct), as
 * DPDK's xstats name tables or Seastar's metric groups. `ldapfectl stats`,
 * /metrics, rte_telemetry's /ldapfe/stats and `ldapfe --counters` are all
 * generated from lfe_wstats_groups: a counter added to the struct and to
 * its group's table shows in all of them.
 *
 * Names: NAME is the `ldapfectl stats` and telemetry key; Prometheus has
 * ldapfe_NAME_total (counter) or ldapfe_NAME (gauge), per core, unless the
 * group is one labelled family (drops: ldapfe_drops_total{reason=LABEL}).
 *
 * Thread rules: the tables are constant. A struct lfe_wstats is written by
 * its worker only; other threads read the published copy (worker.h).
 */
#ifndef LFE_DATAPLANE_WSTATS_H
#define LFE_DATAPLANE_WSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/auth.h"
#include "net/net.h"

/* Counters, all uint64_t so they can be published as an array. The order
 * is the tables' (lfe_wstats_groups, row after row): the worker's own
 * counters, then each module's copy, drops last. */
struct lfe_wstats {
	/* ---- worker: counted by the worker itself (lfe_ctr_worker) */
	uint64_t rx_pkts, tx_pkts, rx_bytes, tx_bytes;
	uint64_t conns_active, conns_opened, conns_refused;
	/* The bind policy's counters (backend/auth.h, LFE_AUTH_COUNTERS), in
	 * its order: w->st.auth is what the worker's struct lfe_auth counts
	 * into. binds_ok, binds_failed, binds_offloaded, binds_busy; the
	 * brute-force throttle: binds answered 49 unverified (binds_throttled,
	 * not in binds_failed), by the key kind that held them (a bind held by
	 * two kinds counts in both), and penalties started; the
	 * verified-credential cache (backend/credcache.h): binds answered from
	 * it (also counted in binds_ok), binds that went the full path, entries
	 * evicted because their re-check failed (the entry changed), binds
	 * whose key the bind peek had made (w->bind_peek). */
	union {
		struct lfe_auth_stats auth;
		struct {
			LFE_AUTH_COUNTERS(LFE_AUTH_FIELD)
		};
	};
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
	/* ---- tcp: struct lfe_tcp_stats (lfe_ctr_tcp) */
	uint64_t tcp_retransmits, tcp_resets, tcp_syncookies;
	uint64_t tcp_drop_paws, tcp_sack_rexmits;   /* RFC 7323 PAWS drops, SACK-driven resends */
	uint64_t tcp_syn_budget_dropped;   /* SYNs dropped while cookies were out (tcp.h syn_rate) */
	uint64_t tcp_pushes;   /* inline handshake flights sent before the burst's end (lfe_tcp_conn_push) */
	/* per-core TCP buffer pools: waits on a dry pool (send room, receive
	 * buffer → zero window), resets for holding a buffer without progress */
	uint64_t tcp_sndbuf_pool_empty, tcp_rcvbuf_pool_empty, tcp_buf_stall_closed;
	uint64_t conns_src_capped, conns_evicted, conns_idle_closed, conns_table_full;
	/* ---- tcp_mem: struct lfe_tcp_mem, buffers held now (gauges) */
	uint64_t tcp_sndbufs_used, tcp_rcvbufs_used;
	/* ---- tls: struct lfe_stream_stats */
	uint64_t tls_handshakes, tls_resumed, tls_handshake_failed, tls_offloaded, tls_busy;
	/* TLS 1.3 connections handed over to ldapfe's record layer (tlsrec.h) */
	uint64_t tls_handover;
	/* TLS deadlines and the per-core pool of unfinished records
	 * (stream.h): handshakes past handshake_timeout_ms, records past
	 * pdu_timeout_ms, records that found no pool buffer */
	uint64_t tls_handshake_expired, tls_record_expired, tls_record_pool_empty;
	/* ---- tlsoff: struct lfe_tlsoff_wstats (the offload queue of this worker) */
	uint64_t tls_cancelled, tls_queue_depth;
	/* ---- dnpool: struct lfe_dnpool_stats, the sessions' DN pool
	 * (ldap/dnpool.h): bytes of chunks held now (a gauge: bound identities
	 * and binds in flight), binds refused busy for want of a chunk */
	uint64_t dn_pool_bytes, dn_pool_dry;
	/* ---- drops: frames dropped, by reason (net.h's enum lfe_drop) */
	uint64_t drops[LFE_DROP_MAX];
};
#define LFE_WSTATS_N (sizeof(struct lfe_wstats) / sizeof(uint64_t))

/* The TLS offload engine's figures for one worker (tlsoff.h reports them
 * through functions; publish gathers them here for lfe_ctr_tlsoff). */
struct lfe_tlsoff_wstats {
	uint64_t cancelled, queue_depth;
};

enum lfe_ctr_kind { LFE_CTR_COUNTER, LFE_CTR_GAUGE };

/* One counter. */
struct lfe_ctr {
	const char *name;   /* [a-z][a-z0-9_]*: stats/telemetry key (and Prometheus) */
	const char *help;   /* one line, for HELP and `ldapfe --counters` */
	const char *label;  /* labelled groups: the label's value; else NULL */
	uint16_t off;       /* byte offset in struct lfe_wstats */
	uint16_t src;       /* byte offset in the group's source struct */
	uint8_t src_size;   /* 8 or 4 (uint64_t/uint32_t there); 0: no source */
	uint8_t kind;       /* enum lfe_ctr_kind */
};

#define LFE_CTR_SPARSE 1u   /* telemetry leaves out the rows that are 0 */

/* One module's counters. */
struct lfe_ctr_group {
	const char *module;         /* "worker", "tcp", ... */
	const char *source;         /* the struct its rows are copied from, or NULL */
	size_t source_size;         /* sizeof that struct (0: none) */
	const struct lfe_ctr *rows;
	size_t n;
	unsigned flags;             /* LFE_CTR_SPARSE */
	/* A labelled family: Prometheus family{core,LABEL="row.label"} with
	 * this kind and help, instead of a metric per row. NULL: none. */
	const char *family, *family_label, *family_help;
};

extern const struct lfe_ctr_group lfe_ctr_worker, lfe_ctr_tcp, lfe_ctr_tcp_mem, lfe_ctr_tls,
	lfe_ctr_tlsoff, lfe_ctr_dnpool, lfe_ctr_drops;
/* Every group, in struct lfe_wstats order; NULL-terminated. */
extern const struct lfe_ctr_group *const lfe_wstats_groups[];

static inline uint64_t lfe_ctr_get(const struct lfe_wstats *s, const struct lfe_ctr *c)
{
	return *(const uint64_t *)(const void *)((const char *)s + c->off);
}

/* Copy a group's rows from its source struct src into st (publish). */
static inline void lfe_ctr_pull(struct lfe_wstats *st, const struct lfe_ctr_group *g, const void *src)
{
	for (size_t i = 0; i < g->n; i++) {
		const struct lfe_ctr *c = &g->rows[i];
		const char *p = (const char *)src + c->src;
		uint64_t *d = (uint64_t *)(void *)((char *)st + c->off);
		*d = c->src_size == 4 ? *(const uint32_t *)(const void *)p : *(const uint64_t *)(const void *)p;
	}
}

/* The Prometheus metric (family) of row c of g: "ldapfe_NAME_total",
 * "ldapfe_NAME" (gauge) or g->family. Returns buf. */
const char *lfe_ctr_prom_name(const struct lfe_ctr_group *g, const struct lfe_ctr *c, char *buf, size_t n);

/* `ldapfe --counters`: a line per counter,
 *   NAME KIND MODULE METRIC HELP
 * KIND counter|gauge, METRIC the Prometheus series less core
 * (ldapfe_NAME_total, or family{label="value"}), SPARSE rows with KIND
 * suffixed ",sparse" (telemetry leaves them out while 0). */
void lfe_ctr_print_table(FILE *f);

#endif
