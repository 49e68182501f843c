/* dataplane/worker.h — one worker per lcore: its TCP stack, sessions,
 * store reader, queues and counters, and the poll loop (worker.c).
 *
 * Thread rules: struct lfe_worker is touched only by its own lcore, except
 * `pub` (a periodic copy of its counters, relaxed atomics) which telemetry
 * and the stats printer read, and the rings, which are DPDK MP/MC-safe.
 */
#ifndef LFE_DATAPLANE_WORKER_H
#define LFE_DATAPLANE_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "backend/auth.h"
#include "backend/credcache.h"
#include "backend/store.h"
#include "backend/throttle.h"
#include "ldap/dnpool.h"
#include "dataplane/config.h"
#include "dataplane/daemon.h"
#include "dataplane/wstats.h"
#include "dpdk/txbuf.h"
#include "net/impair.h"
#include "ldap/session.h"
#include "net/neigh.h"
#include "net/net.h"
#include "tls/stream.h"
#include "net/tcp.h"

#define LFE_BURST        32u
/* From this many connections on a core, an rx burst prefetches its TCP
 * lookups before handling them (tcp.h): below it the table stays in cache
 * and the passes cost more than they save (bench_tcp hold: a loss at a
 * thousand connections, a quarter less at a million; docs/BENCHMARKS.md). */
#define LFE_PREFETCH_MIN_CONNS 4096u
#define LFE_TXBUF        64u     /* frames gathered per port before a tx burst */
#define LFE_RENEW_US     2000u   /* store read txn renewed at least this often */
#define LFE_PUBLISH_US   1000u   /* counters copied to `pub` this often */
#define LFE_SHUTDOWN_US  450000u /* graceful close budget after SIGINT/SIGTERM */
#define LFE_PDU_SMALL    4096u   /* split requests up to this size never wait for a buffer */
#define LFE_PDU_LARGE_MAX 255u   /* buffers for larger PDUs per core */
/* DN pool per core: this many bytes per connection slot (every slot bound
 * with a DN of up to 127 bytes fits), plus a 2 KiB chunk per slow bind the
 * verifier may hold (verify_queue). Address space; pages in use are memory. */
#define LFE_DN_POOL_PER_CONN 128u

_Static_assert(LFE_TXBUF >= 2 * LFE_BURST, "a tx buffer holds a burst and its duplicates");
_Static_assert(LFE_TXBUF <= LFE_TXBUF_IMPAIR_CAP, "tx buffers pass the impairment stage (--impair)");


/* struct lfe_wstats, the counters, and their tables: dataplane/wstats.h. */

/* Bind latency histograms, one per path: buckets by upper bound (ns, a
 * 1-2-5 log ladder from 1 µs to 1 s; the last bucket is +Inf), not
 * cumulative; count and sum as Prometheus wants them. Every verified bind
 * lands in one: cache (a verified-credential cache hit) or inline (the store
 * lookup and fast-scheme check), both on the core (glue.c: from the start of
 * the loop turn that handles the request to its verdict, so the frames
 * handled before it in that turn count too; one TSC read a bind)
 * or offload (submit to verdict delivered back
 * on the core, verifier.c, at the loop clock's µs resolution). */
#define LFE_LAT_BUCKETS 19u
enum { LFE_LAT_INLINE, LFE_LAT_OFFLOAD, LFE_LAT_CACHE, LFE_LAT_PATHS };
static inline uint32_t lfe_lat_bound_ns(unsigned i)
{
	static const uint32_t b[LFE_LAT_BUCKETS] = {
		1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000,
		1000000, 2000000, 5000000, 10000000, 20000000, 50000000,
		100000000, 200000000, 500000000, 1000000000,
	};
	return b[i];
}
struct lfe_lat_hist {
	uint64_t bucket[LFE_LAT_BUCKETS + 1];
	uint64_t count, sum_ns;
};
#define LFE_LAT_HIST_N (sizeof(struct lfe_lat_hist) / sizeof(uint64_t))

static inline void lfe_lat_hist_add(struct lfe_lat_hist *h, uint64_t ns)
{
	unsigned i = 0;
	while (i < LFE_LAT_BUCKETS && ns > lfe_lat_bound_ns(i))
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum_ns += ns;
}

/* A session slot in the per-core pool: this header, then the session at
 * LFE_SLOT_HDR so it is aligned for any object. */
#define LFE_SLOT_HDR 128u
struct lfe_slot {
	struct lfe_session *s;
	struct lfe_worker *w;   /* its worker: the backend ops get the slot */
	struct lfe_stream st;   /* the connection's byte stream (stream.h) */
	bool got_data;          /* the first request has started */
	bool pending;           /* a bind verdict was outstanding at the last run */
	bool search_more;       /* a search spent its slice: goes on at search_at */
	uint64_t search_at;
	uint64_t opened_us;     /* connect time: first request and bind deadlines */
	uint64_t pdu_since;     /* a partial PDU is held since (0 = none) */
	struct lfe_auth_conn auth;   /* the keys of the bind at the verifier (auth.h) */
};
_Static_assert(sizeof(struct lfe_slot) <= LFE_SLOT_HDR, "the slot header fits before the session");

/* From this many credential-cache entries (16 MiB) a probe is taken to
 * miss the CPU's caches, and binds are peeked (w->bind_peek). */
#define LFE_BIND_PEEK_MIN_ENTRIES (1u << 19)

struct lfe_worker {
	struct lfe_daemon *d;
	unsigned idx, lcore;
	uint64_t guard_turn;            /* lfe_unmap_guard_turn's counter */
	int socket;
	struct lfe_tcp *tcp;
	struct lfe_store_reader *rd;
	struct lfe_throttle *thr;       /* NULL: [throttle] enabled = false */
	struct lfe_credcache *cc;       /* NULL: [store] bind_cache = 0 */
	/* The bind policy (backend/auth.h) on rd, thr and cc, counting into
	 * st.auth; its offload is the verifier (glue.c's hooks). */
	struct lfe_auth auth;
	/* The bind peek (lfe_glue_bind_peek): with a cache too large for the
	 * CPU's caches, the key of the next frame's bind is made, and its
	 * buckets prefetched, while the frame before it is handled; be_bind
	 * takes it when its DN and password are those very octets. Two
	 * slots (the frame in hand, the next), cleared once their frame is
	 * handled: a key is never used beyond the burst whose octets it was
	 * made from. */
	bool bind_peek;                 /* capacity >= LFE_BIND_PEEK_MIN_ENTRIES */
	struct lfe_bind_peek {
		const uint8_t *dn, *pw;     /* NULL: empty */
		size_t dn_len, pw_len;
		struct lfe_credcache_key k;
	} peek[2];
	struct lfe_session_cfg scfg;
	struct lfe_dnpool *dns;         /* the sessions' DNs (scfg.dns): bound identities
	                                 * and binds in flight, LFE_DN_POOL_PER_CONN a slot */
	struct rte_mempool *mbufs;      /* of this worker's socket */
	uint8_t *pdu_small;             /* PDU reassembly ≤ LFE_PDU_SMALL: one buffer per session
	                                 * slot, lazily mapped, handed out last-freed first */
	size_t pdu_small_len;
	uint32_t *pdu_small_free;       /* freed buffer indexes (a stack), lazily mapped */
	uint32_t pdu_small_nfree, pdu_small_fresh;   /* buffers >= fresh were never used */
	struct rte_mempool *pdu_pool;   /* larger PDUs, max_pdu each, bounded (NULL if max_pdu is small) */
	struct rte_ring *arp_ring;      /* neighbours other workers learned from ARP */
	struct rte_ring *steer_ring;    /* steering rx core → this worker */

	uint8_t *slot_mem;
	size_t slot_size;
	size_t tcp_per_conn;            /* lfe_tcp_mem's per_conn (constant; for status) */
	uint32_t *slot_free;
	uint32_t n_free, n_slots;

	struct lfe_arp_cache arp;
	struct lfe_neigh neigh;         /* frames waiting for a neighbour's MAC */
	uint16_t ip_id;

	struct lfe_txbuf tx[LFE_CFG_MAX_PORTS];   /* per port (dpdk/txbuf.h), slots in tx_m */
	struct rte_mbuf *tx_m[LFE_CFG_MAX_PORTS][LFE_TXBUF];
	struct lfe_impair *imp_rx[LFE_CFG_MAX_PORTS], *imp_tx[LFE_CFG_MAX_PORTS];

	uint64_t now_us, last_renew_us, last_publish_us;
	uint64_t turn_tsc;              /* TSC at the start of this loop turn */
	uint64_t us_mult;               /* tsc → µs: (tsc * us_mult) >> 32 */

	/* Responses of one session call, before the stream queues them
	 * (glue.c, stream.h): a search streams through it entry by entry,
	 * and one entry (less a TLS record's overhead) is bounded by it. */
	uint8_t out[16384];
	/* The TLS streams' per-core context: offload queues, counters and the
	 * buffer records are decrypted into (stream.h). */
	struct lfe_stream_core sc;

	struct lfe_wstats st;
	struct lfe_wstats pub;          /* read by other threads */
	struct lfe_lat_hist bind_lat[LFE_LAT_PATHS];       /* LFE_LAT_INLINE, _OFFLOAD, _CACHE */
	struct lfe_lat_hist bind_lat_pub[LFE_LAT_PATHS];   /* published with pub */
	/* Events (log.h): rate-limited here, formatted into the ring, written
	 * out by the control thread: no syscall on this core. */
	struct lfe_log_src log;
	struct lfe_log_ring log_ring __rte_cache_aligned;
} __rte_cache_aligned;


/* ---- worker.c ---- */
struct lfe_worker *lfe_worker_new(struct lfe_daemon *d, unsigned idx, unsigned lcore,
				  char *err, size_t errlen);
/* Finish open sessions (wiping secrets), free the TCP stack and the store
 * reader; with dpdk_mem also the worker's rings, pools and memory. At exit
 * dpdk_mem is false: freeing a large rte_mempool takes hundreds of ms and
 * rte_eal_cleanup() releases all of it anyway. NULL is a no-op. */
void lfe_worker_free(struct lfe_worker *w, bool dpdk_mem);
int lfe_worker_main(void *arg);   /* rte_eal_remote_launch entry */
/* Sum the published counters of every worker (and the per-lcore copies). */
void lfe_stats_sum(const struct lfe_daemon *d, struct lfe_wstats *sum);
void lfe_stats_read(const struct lfe_worker *w, struct lfe_wstats *out);
void lfe_lat_read(const struct lfe_worker *w, unsigned path, struct lfe_lat_hist *out);

/* TSC cycles to ns with the worker's calibration (us_mult). */
static inline uint64_t lfe_worker_tsc_ns(const struct lfe_worker *w, uint64_t cycles)
{
	return (uint64_t)(((unsigned __int128)cycles * w->us_mult * 1000u) >> 32);
}

/* The throttle parameters of a [throttle] section (worker start and reload). */
static inline struct lfe_throttle_params lfe_worker_throttle_params(const struct lfe_cfg_throttle *t)
{
	return (struct lfe_throttle_params){
		.failures = { [LFE_THR_SRC] = t->src_failures, [LFE_THR_PAIR] = t->dn_failures,
			      [LFE_THR_DN] = t->dn_global_failures },
		.window_ms = t->window_ms, .penalty_ms = t->penalty_ms,
	};
}

/* tx hook of the worker's TCP stack (glue.c hands it to lfe_tcp_new):
 * builds the frame for seg and queues it on the connection's port. */
int lfe_worker_tx_seg(void *ctx, const struct lfe_tcp_seg *seg);

/* ---- the worker's callbacks, in glue.c: one worker's TCP stack wired to
 * its LDAP sessions and the sessions to the store and the bind policy.
 * Part of this module (declared here, so worker.c and glue.c include one
 * header); run on the worker's lcore only. ---- */

/* True when port is one of [ldap] ldaps_ports (connections speak TLS from
 * their first byte). */
bool lfe_glue_is_ldaps(const struct lfe_config *cf, uint16_t port);

extern const struct lfe_tcp_ops lfe_glue_tcp_ops;
extern const struct lfe_backend_ops lfe_glue_backend_ops;

/* The worker's bind policy (w->auth, backend/auth.h) on its reader,
 * throttle and cache, with the verifier as its offload: call once they
 * are made, before the worker's loop. */
void lfe_glue_auth_init(struct lfe_worker *w);

/* A verdict came back from a verifier thread (the worker's verifier poll
 * hook, see verifier.h): the offload latency and the policy's verdict are
 * recorded, and it is answered only if r->h still names a live connection
 * whose session waits for r->token. */
struct lfe_verify_result;
void lfe_glue_bind_done(void *worker, const struct lfe_verify_result *r);

/* A handshake step came back from a crypto thread (the worker's tlsoff
 * poll hook, see tlsoff.h): its bytes go out, the session runs over the
 * records that came with it, and TCP offers what waited meanwhile. */
struct lfe_tlsoff_job;
void lfe_glue_handshake_done(void *worker, struct lfe_tlsoff_job *job);

/* The bind peek (worker.h, w->bind_peek): when seg's payload starts with a
 * whole simple BindRequest, make its credential-cache key and prefetch its
 * buckets into w->peek[slot & 1]; else empty that slot. The worker calls it for a
 * frame while it handles the frame before, and empties the slot after. */
void lfe_glue_bind_peek(struct lfe_worker *w, const struct lfe_tcp_seg *seg, unsigned slot);

#endif
