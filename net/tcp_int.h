/* net/tcp_int.h — what the parts of lfe_tcp share (internal: only
 * net/tcp*.c and the TCP unit tests include it).
 *
 *   tcp.c        setup, connection lifetime, pool buffers, timers firing,
 *                the per-connection API
 *   tcp_input.c  segment arrival (RFC 9293 §3.10.7), ACK processing,
 *                reassembly, listening and SYN cookies
 *   tcp_output.c segments out, SACK blocks, retransmission, the flush,
 *                the send API
 *   tcp_table.c  connection slots, the 4-tuple hash, per-source counts
 *   tcp_timer.c  the two-level hashed timer wheel
 *   tcp_buf.c    the per-core send/receive buffer pools
 *   tcp_cookie.c keyed numbers (ISN, SYN cookies, timestamp offsets)
 *   tcp_admit.c  SYN admission while cookies are out (buckets, validated sources)
 *
 * Thread rules as tcp.h: one struct lfe_tcp per lcore, nothing shared.
 */
#ifndef LFE_NET_TCP_INT_H
#define LFE_NET_TCP_INT_H

#include "net/tcp.h"
#include "net/tcp_buf.h"
#include "net/tcp_cookie.h"
#include "common/share.h"

enum {
	ST_FREE, ST_SYN_SENT, ST_SYN_RCVD, ST_ESTABLISHED, ST_FIN_WAIT_1, ST_FIN_WAIT_2,
	ST_CLOSE_WAIT, ST_CLOSING, ST_LAST_ACK, ST_TIME_WAIT,
};

enum {
	F_APP = 1u << 0,        /* on_close is owed to the app */
	F_ACTIVE = 1u << 1,     /* opened by lfe_tcp_connect */
	F_FIN_Q = 1u << 2,      /* our FIN is queued after snd_end */
	F_ACK_NOW = 1u << 3,
	F_ACK_DELAYED = 1u << 4,
	F_FIN_NOTIFY = 1u << 5, /* peer FIN seen, app not told yet (bytes held) */
	F_OOO_FIN = 1u << 6,    /* peer FIN seen beyond a gap, at ooo_fin */
	F_ABORT = 1u << 7,      /* RST + on_close at the next flush */
	F_RTT = 1u << 8,        /* an RTT sample is running */
	F_DELIVER = 1u << 9,    /* inside on_data: no recursive delivery */
	F_SRC = 1u << 10,       /* counted in the per-source table */
	F_TS = 1u << 11,        /* timestamps negotiated (SYN_SENT: offered) */
	F_SACK = 1u << 12,      /* SACK-permitted negotiated (SYN_SENT: offered) */
	F_WS = 1u << 13,        /* window scaling negotiated (SYN_SENT: offered) */
	F_RSTARVE = 1u << 14,   /* bytes came that needed a receive buffer and the pool was empty */
	F_SSTARVE = 1u << 15,   /* the app asked for send room and the pool was empty */
};

#define OOO_MAX 4
#define WHEEL_BITS 12
#define WHEEL_SIZE (1u << WHEEL_BITS)      /* level 1: ticks of 1.024 ms */
#define WHEEL2_BITS 8
#define WHEEL2_SIZE (1u << WHEEL2_BITS)    /* level 2: revolutions of level 1 (4.2 s) */
#define TICK_SHIFT 10
#define NIL UINT32_MAX
#define MAX_WIN 65535u          /* the window field, unscaled */

struct lnk {
	uint32_t prev, next;
};

/* SYN admission (tcp_admit.c): token buckets (tokens × 10^6) and the
 * validated-source table, (addr << 32 | until in 2^20 µs units). */
struct lfe_tcp_bucket {
	uint64_t tok, cap, last, rate;
};
struct lfe_tcp_admit {
	struct lfe_tcp_bucket any, known;
	uint64_t *vsrc;
	uint32_t vmask;
	uint64_t vkey, vmul;
};

struct lfe_tcp_conn {
	/* Everything one in-sequence segment touches comes first. */
	uint32_t laddr, raddr;
	uint16_t lport, rport;
	uint8_t state, n_ooo;
	uint8_t retries, dupacks;
	uint16_t flags;
	uint16_t smss;            /* min(our mss, peer mss) */
	uint32_t rcv_nxt;
	uint32_t held;            /* in-order bytes received, not consumed */
	uint32_t snd_una, snd_nxt, snd_max;
	uint32_t snd_end;         /* seq after the last queued byte */
	uint32_t snd_wnd, snd_wl1, snd_wl2, max_snd_wnd;
	uint32_t cwnd, ssthresh;
	uint32_t iss, irs;
	uint32_t last_ack_sent;
	uint32_t rto, srtt, rttvar, rtt_seq;
	uint32_t sbuf, rbuf;      /* pool buffers held, LFE_TCP_BUF_NONE = none */
	uint64_t rtt_ts;
	uint64_t rto_at, delack_at, state_at, last_act;
	uint64_t app_at;          /* app deadline, 0 = none */
	uint64_t buf_at;          /* last progress while holding a pool buffer */
	uint64_t wheel_tick;
	uint64_t chal_at;
	uint32_t chal_n;
	uint32_t ooo_fin;
	struct { uint32_t seq, end; } ooo[OOO_MAX];
	uint8_t snd_ws, rcv_ws;   /* window shifts: the peer's, ours (0 without F_WS) */
	uint8_t n_sacked;
	bool sreserved;           /* sbuf taken for room the app was told of, nothing written yet */
	bool src_ho;              /* F_SRC: counted as half-open, not as established */
	/* 2 bits per ooo[] range: its place among the SACK blocks we send
	 * (0: the range the latest out-of-order segment fell in; RFC 2018 §4). */
	uint8_t ooo_rank;
	uint32_t ts_recent;       /* RFC 7323 TS.Recent */
	uint32_t ts_off;          /* our timestamp clock's offset for this tuple */
	struct { uint32_t seq, end; } sacked[OOO_MAX];   /* peer's SACK scoreboard */
	uint32_t idx, gen;
	struct lfe_tcp *t;
	void *app;
};

/* Lists of connections are arrays of links indexed like conns, with their
 * heads after the last slot (index max_conns and up). A slot's links are
 * set up when the slot is first used, so untouched slots cost no page. */
struct lfe_tcp {
	struct lfe_tcp_cfg cfg;
	struct lfe_tcp_ops ops;
	void *ctx;
	struct lfe_tcp_conn *conns;
	uint64_t *htab;            /* (tag << 32 | idx + 1), 0 = empty */
	uint32_t hmask;
	uint32_t *free_stack;      /* released slots; slots >= fresh were never used */
	uint32_t n_free, fresh;
	struct lfe_tcp_pool spool, rpool;
	uint32_t smask;
	struct lnk *tl;            /* wheel: conns, WHEEL_SIZE + WHEEL2_SIZE heads, a scratch head */
	struct lnk *pl;            /* pending flush: conns, then the head */
	struct lnk *wl;            /* TIME_WAIT FIFO: conns, then the head */
	struct lnk *el;            /* evictable, oldest first: conns, then the head */
	struct lnk *sw, *rw;       /* waiting for a send / receive buffer, oldest first */
	/* Per-source counts: established-or-later (n) and half-open (ho)
	 * passive connections; both 0 = empty. n_src, n_src_ho: entries with
	 * n > 0, with ho > 0 (the sources that share each resource). */
	struct srcent { uint32_t addr, n, ho; } *src;
	uint32_t srcmask;
	uint32_t n_src, n_src_ho;
	uint32_t n_tw;             /* connections in TIME_WAIT */
	struct lfe_share conn_share, ho_share;   /* share.h: established, half-open */
	size_t table_bytes;        /* mapped for the table (mem accounting) */
	uint64_t tick_done;
	uint32_t n_armed;          /* connections in the wheel */
	uint64_t tick_cur;
	uint64_t hk0, hk1;         /* connection hash key */
	uint64_t sk[2];            /* ISN / cookie / timestamp-offset key */
	uint64_t now;              /* time of the current entry point (TSval) */
	uint8_t our_ws;            /* the window shift we offer */
	uint64_t cookie_until;     /* cookie ACKs are honoured until then */
	struct lfe_tcp_admit adm;
	bool shutting;
	bool push;                  /* lfe_tcp_conn_push: flush at the end of this input */
	struct lfe_tcp_stats st;
};

static inline bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline bool seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
static inline bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
static inline bool seq_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }
static inline bool seq_in(uint32_t x, uint32_t lo, uint32_t hi) { return seq_le(lo, x) && seq_lt(x, hi); }
static inline uint32_t min32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }

static inline void l_init(struct lnk *L, uint32_t i) { L[i].prev = L[i].next = i; }
static inline bool l_linked(const struct lnk *L, uint32_t i) { return L[i].next != i; }
static inline void l_del(struct lnk *L, uint32_t i)
{
	uint32_t p = L[i].prev, n = L[i].next;
	L[p].next = n;
	L[n].prev = p;
	L[i].prev = L[i].next = i;
}
static inline void l_add_tail(struct lnk *L, uint32_t head, uint32_t i)
{
	uint32_t p = L[head].prev;
	L[i].prev = p;
	L[i].next = head;
	L[p].next = i;
	L[head].prev = i;
}

/* ---- tcp_table.c ---- */

/* Map the table for cfg.max_conns (conns, hash, free stack, lists, source
 * counts), lazily; set up the list heads. 0 or -ENOMEM. */
int lfe_tcp_table_init(struct lfe_tcp *t);
void lfe_tcp_table_fini(struct lfe_tcp *t);
/* Bytes of table per connection slot (control block, hash, lists, ...). */
size_t lfe_tcp_table_per_conn(const struct lfe_tcp *t);

/* The table hash runs once per segment, so it is one keyed 64x64→128
 * multiply-fold rather than SipHash; the key keeps collisions unplannable. */
static inline uint64_t lfe_tcp_tuple_hash(const struct lfe_tcp *t, uint32_t laddr, uint16_t lport,
					  uint32_t raddr, uint16_t rport)
{
	uint64_t a = ((uint64_t)raddr << 32 | laddr) ^ t->hk0;
	uint64_t b = ((uint64_t)rport << 16 | lport) ^ t->hk1;
	__uint128_t m = (__uint128_t)a * b;
	return (uint64_t)m ^ (uint64_t)(m >> 64);
}

/* The connection of a 4-tuple, or NULL. Inline: lfe_tcp_input runs it for
 * every segment. */
static inline struct lfe_tcp_conn *lfe_tcp_lookup(const struct lfe_tcp *t, uint32_t laddr,
						   uint16_t lport, uint32_t raddr, uint16_t rport)
{
	uint32_t tag = (uint32_t)(lfe_tcp_tuple_hash(t, laddr, lport, raddr, rport) >> 32);
	for (uint32_t i = tag & t->hmask;; i = (i + 1) & t->hmask) {
		uint64_t e = t->htab[i];
		if (!e)
			return NULL;
		if ((uint32_t)(e >> 32) == tag) {
			struct lfe_tcp_conn *c = &t->conns[(uint32_t)e - 1];
			if (c->laddr == laddr && c->raddr == raddr && c->lport == lport && c->rport == rport)
				return c;
		}
	}
}

void lfe_tcp_hash_insert(struct lfe_tcp *t, struct lfe_tcp_conn *c);
void lfe_tcp_hash_remove(struct lfe_tcp *t, struct lfe_tcp_conn *c);
/* A free slot (zeroed but for idx and gen; its links unlinked), or NULL. */
struct lfe_tcp_conn *lfe_tcp_slot_take(struct lfe_tcp *t);
void lfe_tcp_slot_put(struct lfe_tcp *t, struct lfe_tcp_conn *c);
/* Per-source counts. A passive connection is counted as half-open from
 * its SYN (its slot) until the handshake completes (promote), then as
 * established until TIME_WAIT or its end: a half-open connection never
 * counts against the source's established connections. */
uint32_t lfe_tcp_src_count(const struct lfe_tcp *t, uint32_t addr);
uint32_t lfe_tcp_src_half_open(const struct lfe_tcp *t, uint32_t addr);
void lfe_tcp_src_inc(struct lfe_tcp *t, struct lfe_tcp_conn *c, bool half_open);
void lfe_tcp_src_promote(struct lfe_tcp *t, struct lfe_tcp_conn *c);   /* half-open → established */
void lfe_tcp_src_dec(struct lfe_tcp *t, struct lfe_tcp_conn *c);   /* no-op without F_SRC */

/* ---- tcp_timer.c ---- */

/* File c at tick (> tick_cur), moving it if it is filed already. */
void lfe_tcp_wheel_file(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t tick);

/* File c at deadline (absolute µs) unless it is filed earlier already:
 * an entry fires early rather than late, and the state machine re-files
 * what is not due yet. O(1); inline, as most calls find it filed earlier. */
static inline void lfe_tcp_wheel_arm(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t deadline)
{
	uint64_t tick = (deadline + (1u << TICK_SHIFT) - 1) >> TICK_SHIFT;
	if (tick <= t->tick_cur)
		tick = t->tick_cur + 1;
	if (l_linked(t->tl, c->idx) && c->wheel_tick <= tick)
		return;
	lfe_tcp_wheel_file(t, c, tick);
}
void lfe_tcp_wheel_del(struct lfe_tcp *t, struct lfe_tcp_conn *c);
/* Fire what is due up to now: calls lfe_tcp_due() (tcp.c) for each. */
void lfe_tcp_wheel_run(struct lfe_tcp *t, uint64_t now);
/* tcp.c: run a connection's due timers and re-file it. */
void lfe_tcp_due(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now);

/* ---- tcp_admit.c ---- */

/* Buckets full, the validated table (cfg.validated_sources rounded up to a
 * power of two) allocated and keyed. 0 or -ENOMEM. */
int lfe_tcp_admit_init(struct lfe_tcp *t, uint64_t key0, uint64_t key1);
void lfe_tcp_admit_fini(struct lfe_tcp *t);
/* A bare SYN from addr: may it go on? Always while half-open connections
 * are below the pressure level of their budget (ho_share: no cookie is
 * sent below it); past it only with a token (the validated bucket
 * first when addr is validated, then the shared one), else it is counted
 * in drop_syn_budget. O(1), one table read. */
bool lfe_tcp_admit_syn(struct lfe_tcp *t, uint32_t addr, uint64_t now);
/* addr completed a handshake (passive open) at now. */
void lfe_tcp_admit_validated(struct lfe_tcp *t, uint32_t addr, uint64_t now);

/* ---- shared by tcp.c, tcp_input.c, tcp_output.c ----
 *
 * Inline here, as every segment in or out runs them. */

/* Timers (the wheel is tcp_timer.c). */

static inline void tmr_arm(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t deadline)
{
	lfe_tcp_wheel_arm(t, c, deadline);
}

static inline bool idle_applies(const struct lfe_tcp_conn *c)
{
	return c->state >= ST_ESTABLISHED && c->state <= ST_LAST_ACK;
}

/* A connection that holds a pool buffer must make progress (the peer
 * acknowledges, the app consumes) every buf_stall_us, or it is reset:
 * no client pins the pool by never reading (zero window) or never
 * filling a hole. */
static inline bool stall_applies(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return t->cfg.buf_stall_us && (c->sbuf != NIL || c->rbuf != NIL);
}

/* Inline, as what a segment out runs (seg_of, emit, xmit, output): each
 * runs once or more a segment, and a call costs ~10 instructions of the
 * ~300 a segment out takes. */
#define HOT static inline __attribute__((always_inline))

HOT uint64_t next_deadline(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	uint64_t d = UINT64_MAX;
	if (c->rto_at && c->rto_at < d)
		d = c->rto_at;
	if ((c->flags & F_ACK_DELAYED) && c->delack_at && c->delack_at < d)
		d = c->delack_at;
	if (c->state_at && c->state_at < d)
		d = c->state_at;
	if (c->app_at && c->app_at < d)
		d = c->app_at;
	if (t->cfg.idle_timeout_us && idle_applies(c) && c->last_act + t->cfg.idle_timeout_us < d)
		d = c->last_act + t->cfg.idle_timeout_us;
	if (stall_applies(t, c) && c->buf_at + t->cfg.buf_stall_us < d)
		d = c->buf_at + t->cfg.buf_stall_us;
	return d;
}

HOT void tmr_update(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	uint64_t d = next_deadline(t, c);
	if (d != UINT64_MAX)
		tmr_arm(t, c, d);
}

/* Queue c for the next lfe_tcp_flush (once). */
static inline void pend(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (!l_linked(t->pl, c->idx))
		l_add_tail(t->pl, t->cfg.max_conns, c->idx);
}

static inline uint8_t *rbuf(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return lfe_tcp_pool_ptr(&t->rpool, c->rbuf);
}

/* Give the receive buffer back once it holds nothing. */
static inline void rbuf_done(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->rbuf != NIL && !c->held && !c->n_ooo) {
		lfe_tcp_pool_put(&t->rpool, c->rbuf);
		c->rbuf = NIL;
	}
}

static inline uint8_t *sbuf(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return lfe_tcp_pool_ptr(&t->spool, c->sbuf);
}

/* Give the send ring back once everything queued is acknowledged. */
static inline void sbuf_done(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->sbuf != NIL && !c->sreserved && seq_le(c->snd_end, c->snd_una)) {
		lfe_tcp_pool_put(&t->spool, c->sbuf);
		c->sbuf = NIL;
	}
}

static inline uint32_t rwnd(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	if ((c->flags & F_RSTARVE) && c->rbuf == NIL && !lfe_tcp_pool_avail(&t->rpool))
		return 0;
	return min32(t->cfg.rcvbuf - c->held, MAX_WIN << c->rcv_ws);
}

static inline uint32_t ts_now(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return lfe_tcp_ts_clock(t->now, c->ts_off);
}

/* The peer's window in bytes: never scaled in a SYN (RFC 7323 §2.2). */
static inline uint32_t peer_win(const struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s)
{
	return (s->flags & LFE_TCP_SYN) ? s->win : (uint32_t)s->win << c->snd_ws;
}

HOT void emit(struct lfe_tcp *t, const struct lfe_tcp_seg *s)
{
	t->st.segs_out++;
	t->st.bytes_out += s->len;
	t->ops.tx(t->ctx, s);
}

static inline uint32_t rank_of(uint8_t ranks, uint32_t i)
{
	return (ranks >> (2 * i)) & 3u;
}

static inline bool has_unsent(const struct lfe_tcp_conn *c)
{
	return seq_lt(c->snd_nxt, c->snd_end) || ((c->flags & F_FIN_Q) && seq_le(c->snd_nxt, c->snd_end));
}


/* tcp.c: the pool is empty; c waits for a buffer in FIFO L (rw, sw)
 * with flag set (F_RSTARVE, F_SSTARVE), counted once in *count. Taking
 * a buffer (rbuf_get in tcp_input.c, sbuf_get in tcp_output.c, beside
 * their one caller each, inline) is on every segment's path. */
void lfe_tcp_wait_buf(struct lfe_tcp *t, struct lnk *L, struct lfe_tcp_conn *c, uint16_t flag,
		      uint64_t *count);

/* tcp.c: connection lifetime. A slot (recycling TIME_WAIT or evicting
 * when full), or NULL; free (no app call); close (the app told, then
 * free); reset (RST, then close); TIME_WAIT; ESTABLISHED reached (the
 * app's on_open: false if it refused and the connection is gone). */
struct lfe_tcp_conn *lfe_tcp_conn_alloc(struct lfe_tcp *t);
void lfe_tcp_conn_free(struct lfe_tcp *t, struct lfe_tcp_conn *c);
void lfe_tcp_conn_close(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason);
void lfe_tcp_conn_reset(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason);
void lfe_tcp_enter_time_wait(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now);
bool lfe_tcp_conn_open(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now);

/* tcp_output.c: control segments, fast retransmit, the RTO. */
void lfe_tcp_send_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c);
void lfe_tcp_send_rst(struct lfe_tcp *t, struct lfe_tcp_conn *c);
void lfe_tcp_send_syn(struct lfe_tcp *t, struct lfe_tcp_conn *c);
/* RFC 9293 reset for a segment that matches no connection. */
void lfe_tcp_reply_rst(struct lfe_tcp *t, const struct lfe_tcp_seg *in);
/* RFC 5961 challenge ACK, at most CHAL_MAX a second per connection. */
void lfe_tcp_challenge_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now);
void lfe_tcp_fast_rexmit(struct lfe_tcp *t, struct lfe_tcp_conn *c);
void lfe_tcp_on_rto(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now);

#endif
