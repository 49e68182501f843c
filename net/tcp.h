/* net/tcp.h — a per-core user-space TCP (RFC 9293) for ldapfe.
 *
 * Works on parsed segment fields, not packets: the caller parses Ethernet/
 * IPv4/TCP headers (checksums already verified) into struct lfe_tcp_seg and
 * builds packets from the segments this module emits through ops->tx. So the
 * whole state machine runs in a unit test with a capturing tx hook and a
 * scripted clock, and the load generator reuses it for the client side.
 *
 * One struct lfe_tcp per lcore; nothing is shared, nothing locks. All memory
 * (connection table, send/receive buffer pools, timers) is reserved by
 * lfe_tcp_new() (anonymous mappings backed on first touch, so a table for a
 * million connections costs what is used); the input/timer/send paths
 * never allocate. A connection borrows a send ring from a per-core pool
 * while it has bytes queued or unacknowledged and a receive buffer while
 * it holds bytes the app has not consumed (or out-of-order data): an idle
 * connection holds only its control block (lfe_tcp_mem tells the figure).
 *
 * Time is passed in as microseconds from any monotonic origin (the dataplane
 * converts rdtsc); the module never reads a clock.
 *
 * What it does: passive (and active) open with MSS option, and RFC 7323
 * timestamps (PAWS, RTT from TSecr) and window scaling and RFC 2018 SACK,
 * each used only when the peer's SYN offers it (SYN cookies carry them in
 * the timestamp's low bits, as Linux does); in-order byte
 * stream delivery across any segmentation (out-of-order segments within the
 * window are held, bounded, and reported in SACK blocks); cumulative ACKs piggybacked on data, delayed
 * ACK otherwise; send buffer kept until acknowledged, retransmission with
 * RTO (RFC 6298, exponential backoff, retry limit then RST); fast
 * retransmit on 3 duplicate ACKs; the peer's window respected (zero-window
 * probes); FIN/RST in every state incl. simultaneous close; TIME_WAIT
 * bounded; idle timeout and keepalive; SYN cookies when the half-open budget
 * is exhausted; RFC 5961 challenge ACKs against blind RST/SYN; bounded
 * connection table and per-connection buffers; a per-source connection cap;
 * eviction of connections the app marks evictable when the table is full;
 * one app deadline per connection (first request, bind, partial PDU).
 */
#ifndef LFE_NET_TCP_H
#define LFE_NET_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ctr.h"

enum {
	LFE_TCP_FIN = 0x01, LFE_TCP_SYN = 0x02, LFE_TCP_RST = 0x04,
	LFE_TCP_PSH = 0x08, LFE_TCP_ACK = 0x10, LFE_TCP_URG = 0x20,
};

/* Option flags of struct lfe_tcp_seg.opts. */
enum {
	LFE_TCP_OPT_TS = 0x01,        /* timestamps option (tsval, tsecr) */
	LFE_TCP_OPT_SACK_PERM = 0x02, /* SACK-permitted (SYN only) */
};

/* One segment, host byte order. On input, `payload` points at the data in
 * the received frame (valid only during the call). On output (ops->tx) it
 * points into the connection's send buffer, valid only during the call:
 * copy it into the packet. */
struct lfe_tcp_seg {
	uint32_t laddr, raddr;   /* IPv4: local (ours) and remote address */
	uint16_t lport, rport;
	uint32_t seq, ack;
	uint16_t win;            /* raw window field (unscaled) */
	uint8_t flags;
	/* options: on input as parsed, on output what to put in the header */
	uint16_t mss;            /* 0 = absent */
	int8_t wscale;           /* -1 = absent */
	uint8_t opts;            /* LFE_TCP_OPT_* present */
	uint8_t n_sack;          /* SACK blocks in sack[] (0..4) */
	uint32_t tsval, tsecr;   /* RFC 7323 timestamps, when LFE_TCP_OPT_TS */
	/* RFC 2018 blocks, the first n_sack set: on input as received; on
	 * output the out-of-order ranges we hold, the latest segment's first
	 * (lfe_net_build_tcp writes as many as fit the 40 option bytes). */
	struct { uint32_t start, end; } sack[4];
	const uint8_t *payload;
	uint16_t len;
};

struct lfe_tcp;
struct lfe_tcp_conn;

/* A connection handle that survives slot reuse: idx + generation. */
struct lfe_tcp_handle {
	uint32_t idx;
	uint32_t gen;
};

struct lfe_tcp_ops {
	/* Emit one segment (build and queue a packet). Returns 0, or -ENOBUFS if
	 * no packet could be had (the segment counts as lost; timers recover). */
	int (*tx)(void *ctx, const struct lfe_tcp_seg *seg);
	/* A connection reached ESTABLISHED (passive or active). Return 0 to
	 * accept, negative to reset it. The app may attach state with
	 * lfe_tcp_conn_set_app(). */
	int (*on_open)(void *ctx, struct lfe_tcp_conn *c);
	/* In-order bytes arrived. Return how many were consumed (0..len). The
	 * rest stay in the receive buffer: they are acknowledged (so the peer
	 * does not retransmit them) and the advertised window shrinks by their
	 * size; the app is offered them again on the next input or
	 * lfe_tcp_conn_kick(). */
	size_t (*on_data)(void *ctx, struct lfe_tcp_conn *c, const uint8_t *data, size_t len);
	/* Send space was freed by an ACK (the app may have waited for it). May be NULL. */
	void (*on_writable)(void *ctx, struct lfe_tcp_conn *c);
	/* The peer sent FIN (no more data will arrive). May be NULL: the stack
	 * then closes its side once the send buffer is empty. */
	void (*on_peer_fin)(void *ctx, struct lfe_tcp_conn *c);
	/* The connection is gone (closed, reset, timed out). Called exactly once
	 * per on_open; the app frees its state here. */
	void (*on_close)(void *ctx, struct lfe_tcp_conn *c, int reason /* negative errno or 0 */);
	/* The deadline set with lfe_tcp_conn_set_deadline() passed (it is
	 * cleared before the call). Return 0 to keep the connection (the app may
	 * set a new deadline here), negative to have it reset: counted in
	 * deadline_closed, on_close follows with -ETIME. May be NULL: an expired
	 * deadline then always resets. */
	int (*on_deadline)(void *ctx, struct lfe_tcp_conn *c);
};

struct lfe_tcp_cfg {
	uint32_t max_conns;         /* connection table size (established + closing) */
	uint32_t max_half_open;     /* SYN_RCVD budget; beyond it SYN cookies */
	uint32_t sndbuf;            /* send ring bytes (power of 2), one per busy connection */
	uint32_t rcvbuf;            /* receive buffer bytes (held + out of order) / window */
	/* Send rings and receive buffers in the per-core pools (each); 0 =
	 * lfe_tcp_buf_pool_default(max_conns); more than max_conns is cut to
	 * it. A pool that runs dry costs throughput, never data: a segment
	 * that needs a receive buffer is dropped unacknowledged and the
	 * connection advertises a zero window until one is free; an app asking
	 * for send room gets 0 and on_writable once a buffer is back (counted
	 * in sndbuf_pool_empty / rcvbuf_pool_empty). */
	uint32_t buf_pool;
	/* A connection holding a pool buffer that sees neither an ACK of new
	 * data nor the app consuming bytes for this long is reset (counted in
	 * buf_stall_closed): a peer cannot pin buffers with a zero window or a
	 * hole it never fills. 0 = never. */
	uint64_t buf_stall_us;
	uint16_t mss;               /* our MSS (e.g. 1460) */
	/* Every µs interval is 64-bit (a day of µs does not fit 32 bits);
	 * lfe_tcp_new refuses rto_max_us > 2^30 and the others > 2^40. */
	uint64_t rto_min_us, rto_max_us, rto_init_us;
	uint32_t max_retries;       /* retransmissions before RST */
	uint64_t delack_us;         /* delayed ACK */
	uint64_t idle_timeout_us;   /* 0 = none */
	uint64_t time_wait_us;
	/* Per-source shares (share.h): while fewer than share_pressure_pct
	 * percent of the table's connections are established (or of
	 * max_half_open are half-open), no per-source bound applies; above
	 * it a source may hold max_conns / sources established connections
	 * (never fewer than max_conns_per_source; ESTABLISHED through
	 * LAST_ACK) — a SYN beyond is answered with RST and counted in
	 * drop_src_cap — and max_half_open / sources half-open ones — a SYN
	 * beyond gets a SYN cookie. Half-open connections never count as
	 * established. share_pressure_pct 0..100 (default 75; 100: no shares). */
	uint32_t max_conns_per_source;
	uint32_t share_pressure_pct;
	/* SYN admission while SYN cookies may be out (half-open connections at
	 * the pressure level of max_half_open, share_pressure_pct; or spent, as
	 * under a SYN flood): a SYN is answered only with a token, else dropped
	 * before any lookup or cookie work and counted in drop_syn_budget.
	 * syn_rate: SYNs per second from any source (a 1/64 s burst);
	 * syn_rate_validated: from sources that completed a handshake with
	 * this stack in the last LFE_TCP_VALIDATED_TTL_S, which draw on their
	 * own bucket first and then on syn_rate's. A rate of 0: no limit.
	 * validated_sources: entries of the validated-source table (rounded up
	 * to a power of two, 8 bytes each; a newer source takes the slot of an
	 * older one; 0 = no table, every source unknown). */
	uint32_t syn_rate, syn_rate_validated, validated_sources;
	uint64_t secret;            /* SYN cookie / ISN key (random per run) */
	/* listening: (laddr, lport) pairs; laddr 0 = any */
	uint32_t n_listen;
	struct { uint32_t addr; uint16_t port; } listen[8];
};

/* How long a source that completed a handshake counts as validated. */
#define LFE_TCP_VALIDATED_TTL_S 600u

/* Fill cfg with the defaults. */
void lfe_tcp_cfg_default(struct lfe_tcp_cfg *cfg);
/* The pool size buf_pool = 0 stands for: max_conns up to 4096, then one
 * buffer of each kind per 8 connections (at least 4096). */
uint32_t lfe_tcp_buf_pool_default(uint32_t max_conns);

struct lfe_tcp *lfe_tcp_new(const struct lfe_tcp_cfg *cfg, const struct lfe_tcp_ops *ops,
			    void *ctx, int *err);
void lfe_tcp_free(struct lfe_tcp *t);   /* NULL is a no-op; no callbacks */

/* Feed one received segment. */
void lfe_tcp_input(struct lfe_tcp *t, const struct lfe_tcp_seg *seg, uint64_t now_us);

/* Burst prefetch: among many connections each segment's lookup misses the
 * cache (hash slot, then the control block and its list links). For a
 * burst, call lfe_tcp_prefetch_hash on every segment, then
 * lfe_tcp_prefetch_conn on every segment, then lfe_tcp_input on each: the
 * misses of the burst overlap instead of queueing. Hints only: they read
 * the hash slot of the segment's tuple (its first probe) and change
 * nothing; a segment of no connection costs one hash. */
void lfe_tcp_prefetch_hash(const struct lfe_tcp *t, const struct lfe_tcp_seg *seg);

/* For a bare SYN from raddr, before its frame is parsed (the caller read
 * the address and the flags from the raw headers): true when SYN cookies
 * are out and no budget would answer it (cfg.syn_rate), the SYN then
 * counted in drop_syn_budget and to be dropped unparsed. Takes no token:
 * a SYN it lets through goes to lfe_tcp_input, which takes one. */
bool lfe_tcp_syn_shed(struct lfe_tcp *t, uint32_t raddr, uint64_t now_us);
void lfe_tcp_prefetch_conn(const struct lfe_tcp *t, const struct lfe_tcp_seg *seg);

/* Run due timers (retransmit, delayed ACK, keepalive, idle, TIME_WAIT).
 * Call once per poll iteration; cheap when nothing is due. */
void lfe_tcp_timers(struct lfe_tcp *t, uint64_t now_us);

/* Emit what is pending (data queued by lfe_tcp_send during the burst, ACKs).
 * Call once at the end of each rx burst so replies coalesce. */
void lfe_tcp_flush(struct lfe_tcp *t, uint64_t now_us);

/* Active open (load generator). Returns the connection or NULL with *err. */
struct lfe_tcp_conn *lfe_tcp_connect(struct lfe_tcp *t, uint32_t laddr, uint16_t lport,
				     uint32_t raddr, uint16_t rport, uint64_t now_us, int *err);

/* ---- per connection ---- */

/* Contiguous free space at the tail of the send buffer: returns its size and
 * sets *p. Write up to that many bytes, then commit how many were written.
 * Takes a send ring from the pool if the connection holds none; 0 when the
 * pool is empty, and on_writable follows when a ring is free. Room once
 * reported (here or by lfe_tcp_send_free) stays the app's until it writes:
 * the ring is kept until committed bytes are acknowledged, or, never
 * used, until buf_stall_us passes. */
size_t lfe_tcp_send_space(struct lfe_tcp_conn *c, uint8_t **p);
void lfe_tcp_send_commit(struct lfe_tcp_conn *c, size_t n);
/* All free bytes in the send buffer, contiguous or not: what lfe_tcp_send
 * would queue in full. Takes a ring as lfe_tcp_send_space does (0 if the
 * pool is empty, and then on_writable follows when one is free). */
size_t lfe_tcp_send_free(struct lfe_tcp_conn *c);
/* Copying convenience: returns bytes queued (may be < len). */
size_t lfe_tcp_send(struct lfe_tcp_conn *c, const void *data, size_t len);

/* Offer the unconsumed received bytes to on_data again (after the app
 * became able to take them, e.g. a pending bind completed). */
void lfe_tcp_conn_kick(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now_us);

/* Emit c's queued output at the end of the lfe_tcp_input running now
 * instead of at the burst's lfe_tcp_flush: for output that took long to
 * make (a TLS handshake flight made on this core: tens of µs to ms),
 * which should not wait while the rest of a burst is handled. That input
 * ends with a whole lfe_tcp_flush (what else is pending leaves too) and
 * counts it in stats.pushes: a caller that batches its tx hook's frames
 * sends them when it sees the count move across an input. Called
 * outside an input, the output leaves with the next flush or at the end
 * of the next input, whichever comes first. */
void lfe_tcp_conn_push(struct lfe_tcp_conn *c);

void lfe_tcp_close(struct lfe_tcp_conn *c);  /* FIN after queued data */
void lfe_tcp_abort(struct lfe_tcp_conn *c);  /* RST now; on_close follows */

void lfe_tcp_conn_set_app(struct lfe_tcp_conn *c, void *app);
void *lfe_tcp_conn_app(const struct lfe_tcp_conn *c);
struct lfe_tcp_handle lfe_tcp_conn_handle(const struct lfe_tcp_conn *c);
/* The live connection for h, or NULL if it has closed (generation changed). */
struct lfe_tcp_conn *lfe_tcp_conn_get(struct lfe_tcp *t, struct lfe_tcp_handle h);
void lfe_tcp_conn_addrs(const struct lfe_tcp_conn *c, uint32_t *laddr, uint16_t *lport,
			uint32_t *raddr, uint16_t *rport);

/* Application deadline (absolute µs, same clock as now_us; 0 = none):
 * when it passes, ops->on_deadline decides (see there). Setting it is O(1)
 * (the timer wheel), so the app may call it on every event. */
void lfe_tcp_conn_set_deadline(struct lfe_tcp_conn *c, uint64_t at_us);

/* Mark a connection evictable (the app holds nothing for it that a reset
 * would lose: no partial request, no pending work, no bound identity) or
 * not. Marking it again makes it the newest. When a SYN finds the table
 * full and no TIME_WAIT slot to recycle, the evictable connection marked
 * longest ago is reset (on_close reason -ENOSPC, counted in evicted) and
 * its slot serves the SYN. O(1). */
void lfe_tcp_conn_set_evictable(struct lfe_tcp_conn *c, bool evictable);

/* Graceful shutdown: FIN every connection, refuse new SYNs. */
void lfe_tcp_shutdown(struct lfe_tcp *t, uint64_t now_us);

struct lfe_tcp_stats {
	uint64_t segs_in, segs_out, bytes_in, bytes_out;
	uint64_t conns_opened, conns_closed, conns_reset, conns_active, half_open;
	uint64_t retransmits, rto_timeouts, dup_acks, ooo_segs, dup_segs;
	uint64_t syncookies_sent, syncookies_ok, challenge_acks;
	uint64_t drop_no_conn, drop_table_full, drop_bad_seq, drop_bad_ack, drop_window;
	uint64_t idle_closed;
	uint64_t drop_src_cap;      /* SYNs (and cookie ACKs) over the source's fair share */
	uint64_t evicted;           /* evictable connections reset for a new SYN */
	uint64_t deadline_closed;   /* app deadlines that expired into a reset */
	uint64_t drop_paws;         /* segments with a timestamp older than TS.Recent */
	uint64_t sack_rexmits;      /* holes retransmitted from SACK information */
	uint64_t sndbuf_pool_empty; /* an app found no send ring in the pool (waits) */
	uint64_t rcvbuf_pool_empty; /* bytes found no receive buffer (zero window) */
	uint64_t buf_stall_closed;  /* reset for holding a buffer without progress */
	uint64_t drop_syn_budget;   /* SYNs dropped while cookies were out, no token */
	uint64_t pushes;            /* inputs that ended with a flush (lfe_tcp_conn_push) */
};
const struct lfe_tcp_stats *lfe_tcp_stats(const struct lfe_tcp *t);
/* The counters the daemon exports of them (common/ctr.h). */
extern const struct lfe_ctr_table lfe_tcp_ctrs;

/* Memory: the table is max_conns × per_conn bytes (control block, hash,
 * timer and list links, source counts), reserved at start and backed as
 * slots are first used; the pools bufs rings of sndbuf_size and bufs
 * buffers of rcvbuf_size, backed as they are first used (peak). */
struct lfe_tcp_mem {
	size_t conn_size;           /* sizeof the control block */
	size_t per_conn;            /* table bytes per connection slot (idle cost) */
	size_t table_bytes;
	uint32_t bufs;              /* pool size (of each kind) */
	uint32_t sndbuf_size, rcvbuf_size;
	uint32_t sndbufs_used, rcvbufs_used;   /* held now */
	uint32_t sndbufs_peak, rcvbufs_peak;   /* most held at once */
};
void lfe_tcp_mem(const struct lfe_tcp *t, struct lfe_tcp_mem *m);
/* The gauges the daemon exports of it: the buffers held now. */
extern const struct lfe_ctr_table lfe_tcp_mem_ctrs;

#endif
