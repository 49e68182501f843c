/* net/tcp.c — the per-core user-space TCP; see tcp.h for the contract.
 *
 * Layout (tcp_int.h): one array of connection control blocks and an
 * open-addressing hash of the 4-tuple (tcp_table.c), a two-level timer
 * wheel (tcp_timer.c), and two per-core pools of send rings and receive
 * buffers (tcp_buf.c) that a connection borrows from only while bytes are
 * in flight or held: an idle connection costs its control block and its
 * table links (lfe_tcp_mem). Everything is mapped lazily and set up on
 * first use, so lfe_tcp_new is O(1) in max_conns. This file is the state
 * machine.
 *
 * Timers: each connection keeps absolute deadlines and sits at most once
 * in the wheel, at its earliest one; a deadline that moves later does not
 * move the entry (it fires early and re-files: lfe_tcp_due). So the
 * per-segment cost of timers is a compare.
 *
 * Choices a peer can see:
 * - Timestamps, window scaling and SACK (RFC 7323, RFC 2018) are used when
 *   the peer's SYN offers them, each on its own. Timestamps matter most to
 *   clients: Linux reuses a TIME_WAIT port (tcp_tw_reuse) only when the
 *   connection had them, so without them a connection-per-bind client
 *   runs out of ports. Our clock ticks 1.024 ms plus a keyed per-tuple
 *   offset; PAWS drops a segment whose TSval is below TS.Recent (modulo
 *   2^32), unless the connection sat idle 24 days; RTT samples come from
 *   TSecr when no µs sample of our own is running (so retransmissions
 *   still measure). SACK blocks from the peer mark ranges the fast
 *   retransmit and the go-back-N after an RTO skip (a scoreboard of
 *   OOO_MAX ranges; dropped on the second RTO in a row, in case the peer
 *   reneged). While we hold out-of-order data, every ACK we send carries
 *   SACK blocks for it (RFC 2018 §4: the range of the latest segment
 *   first, then the others most recently touched first; 3 beside
 *   timestamps, 4 without; no D-SACK), and data segments shrink by the
 *   option's bytes: a lost segment of the peer's (a TLS Finished, say)
 *   is then marked lost by its RACK at once, not after an RTO. Our
 *   window shift is the least that covers rcvbuf.
 * - SYN cookies keep the options: the cookie SYN,ACK's TSval carries the
 *   peer's window shift and SACK-permitted in its low 6 bits (Linux's
 *   layout, tcp_cookie.c); a peer without timestamps gets MSS only.
 * - Received bytes the app has not consumed yet are acknowledged and held;
 *   the advertised window shrinks by them (the right edge never moves left).
 * - Except when the receive pool is dry: then the bytes the app did not
 *   take are not acknowledged (the peer resends them) and the connection
 *   advertises a zero window, which does move the right edge left (RFC
 *   9293 allows it; Linux does the same under memory pressure), until a
 *   buffer is back and a window update goes out.
 * - The server closes actively, so TIME_WAIT piles up on our side: it lasts
 *   time_wait_us (default 2 s, not 2 MSL), a new SYN above the old rcv_nxt
 *   reuses the tuple at once, and when the table is full the oldest
 *   TIME_WAIT slot is recycled first.
 * - An exactly matching RST is honoured in TIME_WAIT too (frees the slot);
 *   RFC 1337 ignores it, but we are the side short of slots.
 * - RFC 5961: RST must hit rcv_nxt exactly (in window → challenge ACK), a
 *   SYN in a synchronized state gets a challenge ACK, ACKs outside
 *   [snd_una - max window, snd_max] get one too; at most CHAL_MAX challenge
 *   ACKs per connection per second (per connection, so the limit is no
 *   global side channel).
 * - Congestion control is Reno-like (RFC 5681 slow start/avoidance, IW10,
 *   fast retransmit on 3 dup ACKs, cwnd = 1 MSS after an RTO, go-back-N).
 * - Idle timeout resets the connection (RST): it frees the slot at once.
 *   No keepalive probes: an idle timeout bounds dead peers instead.
 * - Per-source shares (share.h): below share_pressure_pct of the table no
 *   per-source bound applies; above it a source may hold its fair share
 *   of established connections (max_conns / sources, at least
 *   max_conns_per_source), and a SYN beyond that is answered with RST,
 *   not dropped: a real client learns at once instead of retrying its SYN
 *   for minutes, and the RST is no bigger than the SYN. Only completed
 *   handshakes count, so spoofed SYNs cannot use up an address's share.
 *   Half-open connections have their own share of max_half_open; a SYN
 *   past the budget or its source's share gets a SYN cookie, never a RST.
 *   Counted in a small hash of source → counts (at most max_conns live
 *   entries, table twice that).
 * - SYN admission: once the half-open budget is spent (cookies are out),
 *   a SYN needs a token from a per-second budget before the lookup, the
 *   source count or the cookie hash; sources that completed a handshake
 *   lately have a budget of their own (tcp_admit.c). A flood at line rate
 *   then costs the core a parse and a drop per SYN, and the connections it
 *   holds and the clients it knows keep their share.
 * - Table full: TIME_WAIT slots are recycled first, then an evictable
 *   connection (idle, unbound: the app's mark) is reset, of the heaviest
 *   source among the EVICT_SCAN idle longest; only then is a SYN dropped.
 * - App deadlines ride the same wheel entry as the other timers.
 */
#include "net/tcp_int.h"
#include "net/tcp_cookie.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHAL_MAX 10
#define FW2_DEFAULT_US 60000000u
#define COOKIE_SHIFT 26         /* cookie clock: 2^26 us ≈ 67 s per count */
#define MAX_WIN 65535u
#define TS_OPT_LEN 12u          /* NOP NOP TS: what timestamps take of each segment */
#define PAWS_IDLE_US (24ull * 86400 * 1000000)   /* RFC 7323 §5.5 */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Established connections (not half-open, not TIME_WAIT) of a source:
 * under pressure at most its fair share (share.h). Only completed
 * handshakes count, so a spoofed source cannot fill another's share; the
 * source lookup runs only under pressure. */
static bool src_over(struct lfe_tcp *t, uint32_t raddr)
{
	uint32_t used = (uint32_t)(t->st.conns_active - t->st.half_open) - t->n_tw;
	if (used < t->conn_share.pressure ||
	    lfe_share_admit(&t->conn_share, used, lfe_tcp_src_count(t, raddr), t->n_src))
		return false;
	t->st.drop_src_cap++;
	return true;
}

/* A half-open slot for a SYN from raddr: the budget has room and, under
 * pressure, the source is within its share of it. Otherwise the SYN is
 * answered with a cookie, whoever sent it: a flood spoofing an address
 * never makes that address's own SYNs fail. */
static bool half_open_admit(struct lfe_tcp *t, uint32_t raddr)
{
	uint32_t used = (uint32_t)t->st.half_open;
	if (used >= t->cfg.max_half_open)
		return false;
	return used < t->ho_share.pressure ||
	       lfe_share_admit(&t->ho_share, used, lfe_tcp_src_half_open(t, raddr), t->n_src_ho);
}

/* ---- timers (the wheel is tcp_timer.c) ---- */

static inline void tmr_arm(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t deadline)
{
	lfe_tcp_wheel_arm(t, c, deadline);
}

static bool idle_applies(const struct lfe_tcp_conn *c)
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

static void pend(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (!l_linked(t->pl, c->idx))
		l_add_tail(t->pl, t->cfg.max_conns, c->idx);
}

/* ---- pool buffers (tcp_buf.c) ----
 *
 * A connection holds a send buffer from the app's first write until
 * everything queued is acknowledged, and a receive buffer while it holds
 * bytes the app has not consumed or out-of-order data. When a pool is
 * empty: a segment that needs a receive buffer is dropped unacknowledged
 * and the connection advertises a zero window until one comes back (the
 * peer's persist timer probes; lfe_tcp_flush sends a window update); an
 * app asking for send room gets none and on_writable when a buffer comes
 * back. Either way it waits in a FIFO (rw, sw), counted in
 * rcvbuf_pool_empty / sndbuf_pool_empty. */

static void wait_on(struct lfe_tcp *t, struct lnk *L, struct lfe_tcp_conn *c, uint16_t flag,
		    uint64_t *count)
{
	if (!(c->flags & flag))
		(*count)++;
	c->flags |= flag;
	if (!l_linked(L, c->idx))
		l_add_tail(L, t->cfg.max_conns, c->idx);
}

/* The receive buffer, taken from the pool if none is held; NULL when the
 * pool is empty (the connection then waits with a zero window). */
static uint8_t *rbuf_get(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->rbuf == NIL) {
		uint32_t i = lfe_tcp_pool_get(&t->rpool);
		if (i == NIL) {
			wait_on(t, t->rw, c, F_RSTARVE, &t->st.rcvbuf_pool_empty);
			return NULL;
		}
		c->rbuf = i;
		c->buf_at = t->now;
		if (c->flags & F_RSTARVE) {   /* got one before its wake */
			c->flags &= (uint16_t)~F_RSTARVE;
			l_del(t->rw, c->idx);
		}
	}
	return lfe_tcp_pool_ptr(&t->rpool, c->rbuf);
}

static inline uint8_t *rbuf(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return lfe_tcp_pool_ptr(&t->rpool, c->rbuf);
}

/* Give the receive buffer back once it holds nothing. */
static void rbuf_done(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->rbuf != NIL && !c->held && !c->n_ooo) {
		lfe_tcp_pool_put(&t->rpool, c->rbuf);
		c->rbuf = NIL;
	}
}

/* The send ring, taken from the pool if none is held; NULL when empty.
 * Room the app was told of stays its own until it writes: the stream
 * checks room before it lets a bind go to the verifier and writes the
 * verdict later, so a ring taken for a room query is kept (sreserved)
 * until the app commits bytes, or until buf_stall_us passes unused. */
static uint8_t *sbuf_get(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->sbuf == NIL) {
		uint32_t i = lfe_tcp_pool_get(&t->spool);
		if (i == NIL) {
			wait_on(t, t->sw, c, F_SSTARVE, &t->st.sndbuf_pool_empty);
			return NULL;
		}
		c->sbuf = i;
		c->sreserved = true;
		c->buf_at = t->now;
		/* The stall bound covers an unused ring too: the flush files it
		 * (tmr_update) with the timers of the write that follows. */
		pend(t, c);
	}
	return lfe_tcp_pool_ptr(&t->spool, c->sbuf);
}

static inline uint8_t *sbuf(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	return lfe_tcp_pool_ptr(&t->spool, c->sbuf);
}

/* Give the send ring back once everything queued is acknowledged. */
static void sbuf_done(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->sbuf != NIL && !c->sreserved && seq_le(c->snd_end, c->snd_una)) {
		lfe_tcp_pool_put(&t->spool, c->sbuf);
		c->sbuf = NIL;
	}
}

/* Connection gone or in TIME_WAIT: whatever it held goes back. */
static void bufs_release(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	c->held = 0;
	c->n_ooo = 0;
	rbuf_done(t, c);
	c->sreserved = false;
	sbuf_done(t, c);
	if (c->sbuf != NIL) {
		lfe_tcp_pool_put(&t->spool, c->sbuf);
		c->sbuf = NIL;
	}
	c->flags &= (uint16_t)~(F_RSTARVE | F_SSTARVE);
	l_del(t->rw, c->idx);
	l_del(t->sw, c->idx);
}

/* ---- emission ---- */

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

/* ---- SACK blocks we send (RFC 2018 §4) ----
 *
 * ooo[] stays in sequence order (reassembly wants it); ooo_rank keeps,
 * in 2 bits per range, the order the blocks go out in. */

static inline uint32_t rank_of(uint8_t ranks, uint32_t i)
{
	return (ranks >> (2 * i)) & 3u;
}

/* The ranks of n ranges (n <= OOO_MAX) whose old ranks are old[] (distinct
 * but for first's): first (n: none) becomes 0, the others keep their
 * order behind it, packed from 0 (or 1). */
static uint8_t ranks_pack(const uint8_t *old, uint32_t n, uint32_t first)
{
	uint8_t r = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (i == first)
			continue;
		uint32_t k = first < n;
		for (uint32_t j = 0; j < n; j++)
			if (j != first && old[j] < old[i])
				k++;
		r |= (uint8_t)(k << (2 * i));
	}
	return r;
}

/* How many blocks an ACK of c carries: as many ranges as are held, up to
 * what fits the 40 option bytes beside the timestamps (3) or alone (4). */
static inline uint32_t sack_n(const struct lfe_tcp_conn *c)
{
	if (!(c->flags & F_SACK))
		return 0;
	return min32(c->n_ooo, (c->flags & F_TS) ? 3 : 4);
}

/* The payload a data segment may carry beside the SACK option. */
static inline uint32_t data_mss(const struct lfe_tcp_conn *c)
{
	uint32_t n = sack_n(c);
	return n ? c->smss - (4 + 8 * n) : c->smss;
}

static __attribute__((noinline)) void sack_fill(const struct lfe_tcp_conn *c, struct lfe_tcp_seg *s)
{
	uint32_t n = sack_n(c);
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t i = 0; i < c->n_ooo; i++)
			if (rank_of(c->ooo_rank, i) == r) {
				s->sack[r].start = c->ooo[i].seq;
				s->sack[r].end = c->ooo[i].end;
			}
	s->n_sack = (uint8_t)n;
}

HOT void seg_of(const struct lfe_tcp *t, const struct lfe_tcp_conn *c, struct lfe_tcp_seg *s, uint32_t seq,
		uint8_t flags)
{
	/* Field by field: an initializer would zero sack[] too (read up to
	 * n_sack), every segment out. */
	s->laddr = c->laddr;
	s->raddr = c->raddr;
	s->lport = c->lport;
	s->rport = c->rport;
	s->seq = seq;
	s->ack = (flags & LFE_TCP_ACK) ? c->rcv_nxt : 0;
	s->win = (flags & LFE_TCP_SYN) ? (uint16_t)min32(rwnd(t, c), MAX_WIN) : (uint16_t)(rwnd(t, c) >> c->rcv_ws);
	s->flags = flags;
	s->mss = 0;
	s->wscale = -1;
	s->n_sack = 0;
	s->payload = NULL;
	s->len = 0;
	if (c->flags & F_TS) {
		s->opts = LFE_TCP_OPT_TS;
		s->tsval = ts_now(t, c);
		s->tsecr = c->ts_recent;
	} else {
		s->opts = 0;
		s->tsval = s->tsecr = 0;
	}
	/* Out-of-order data held: the one branch the common segment pays. */
	if (__builtin_expect(c->n_ooo != 0, 0) &&
	    (flags & (LFE_TCP_ACK | LFE_TCP_SYN | LFE_TCP_RST)) == LFE_TCP_ACK)
		sack_fill(c, s);
}

HOT void conn_emit(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s)
{
	if (s->flags & LFE_TCP_ACK) {
		c->last_ack_sent = s->ack;
		c->flags &= (uint16_t)~(F_ACK_NOW | F_ACK_DELAYED);
		c->delack_at = 0;
	}
	emit(t, s);
}

static void send_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	struct lfe_tcp_seg s;
	seg_of(t, c, &s, c->snd_nxt, LFE_TCP_ACK);
	conn_emit(t, c, &s);
}

static void send_rst(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	struct lfe_tcp_seg s;
	seg_of(t, c, &s, c->snd_max, LFE_TCP_RST | LFE_TCP_ACK);
	s.win = 0;
	emit(t, &s);
}

static void send_syn(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	struct lfe_tcp_seg s;
	bool ack = c->state == ST_SYN_RCVD;
	seg_of(t, c, &s, c->iss, (uint8_t)(LFE_TCP_SYN | (ack ? LFE_TCP_ACK : 0)));
	s.mss = t->cfg.mss;
	if (c->flags & F_SACK)
		s.opts |= LFE_TCP_OPT_SACK_PERM;
	if (c->flags & F_WS)
		s.wscale = (int8_t)t->our_ws;
	emit(t, &s);
}

/* RFC 9293 reset for a segment that matches no connection. */
static void reply_rst(struct lfe_tcp *t, const struct lfe_tcp_seg *in)
{
	if (in->flags & LFE_TCP_RST)
		return;
	struct lfe_tcp_seg s = {
		.laddr = in->laddr, .raddr = in->raddr, .lport = in->lport, .rport = in->rport,
		.wscale = -1,
	};
	if (in->flags & LFE_TCP_ACK) {
		s.seq = in->ack;
		s.flags = LFE_TCP_RST;
	} else {
		s.ack = in->seq + in->len + !!(in->flags & LFE_TCP_SYN) + !!(in->flags & LFE_TCP_FIN);
		s.flags = LFE_TCP_RST | LFE_TCP_ACK;
	}
	emit(t, &s);
}

static void challenge_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	if (now - c->chal_at >= 1000000) {
		c->chal_at = now;
		c->chal_n = 0;
	}
	if (c->chal_n >= CHAL_MAX)
		return;
	c->chal_n++;
	t->st.challenge_acks++;
	send_ack(t, c);
}

/* Ring offset of a data sequence number: data starts at iss + 1. */
static inline uint32_t spos(const struct lfe_tcp *t, const struct lfe_tcp_conn *c, uint32_t seq)
{
	return (seq - c->iss - 1) & t->smask;
}

/* One data/FIN segment from the ring; n never crosses the ring's end. */
HOT void xmit(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint32_t seq, uint32_t n, bool fin)
{
	struct lfe_tcp_seg s;
	uint8_t fl = LFE_TCP_ACK;
	if (n)
		fl |= LFE_TCP_PSH;
	if (fin)
		fl |= LFE_TCP_FIN;
	seg_of(t, c, &s, seq, fl);
	if (n) {
		s.payload = sbuf(t, c) + spos(t, c, seq);
		s.len = (uint16_t)n;
	}
	if (seq_lt(seq, c->snd_max))
		t->st.retransmits++;
	conn_emit(t, c, &s);
}

static inline bool has_unsent(const struct lfe_tcp_conn *c)
{
	return seq_lt(c->snd_nxt, c->snd_end) || ((c->flags & F_FIN_Q) && seq_le(c->snd_nxt, c->snd_end));
}

static bool can_send_data(const struct lfe_tcp_conn *c)
{
	switch (c->state) {
	case ST_ESTABLISHED: case ST_CLOSE_WAIT: case ST_FIN_WAIT_1: case ST_CLOSING: case ST_LAST_ACK:
		return true;
	default:
		return false;
	}
}

/* ---- SACK scoreboard (RFC 2018): ranges above snd_una the peer holds ---- */

static void sack_prune(struct lfe_tcp_conn *c)
{
	uint8_t n = 0;
	for (uint8_t i = 0; i < c->n_sacked; i++) {
		if (seq_le(c->sacked[i].end, c->snd_una))
			continue;
		if (seq_lt(c->sacked[i].seq, c->snd_una))
			c->sacked[i].seq = c->snd_una;
		c->sacked[n++] = c->sacked[i];
	}
	c->n_sacked = n;
}

/* Merge one block; blocks outside (snd_una, snd_max] (old or D-SACK, or
 * forged) are ignored, and so is a new block when the board is full. */
static void sack_add(struct lfe_tcp_conn *c, uint32_t b, uint32_t e)
{
	if (!seq_lt(b, e) || seq_le(b, c->snd_una) || seq_gt(e, c->snd_max))
		return;
	for (uint8_t i = 0; i < c->n_sacked;) {
		if (seq_le(b, c->sacked[i].end) && seq_le(c->sacked[i].seq, e)) {
			if (seq_lt(c->sacked[i].seq, b))
				b = c->sacked[i].seq;
			if (seq_gt(c->sacked[i].end, e))
				e = c->sacked[i].end;
			c->sacked[i] = c->sacked[--c->n_sacked];
			continue;
		}
		i++;
	}
	if (c->n_sacked < OOO_MAX) {
		c->sacked[c->n_sacked].seq = b;
		c->sacked[c->n_sacked].end = e;
		c->n_sacked++;
	}
}

/* If seq lies in a SACKed range: that range's end; else seq. */
static uint32_t sack_skip(const struct lfe_tcp_conn *c, uint32_t seq)
{
	for (bool moved = true; moved;) {
		moved = false;
		for (uint8_t i = 0; i < c->n_sacked; i++)
			if (seq_le(c->sacked[i].seq, seq) && seq_lt(seq, c->sacked[i].end)) {
				seq = c->sacked[i].end;
				moved = true;
			}
	}
	return seq;
}

/* The first SACKed byte above seq, or snd_max. */
static uint32_t sack_next(const struct lfe_tcp_conn *c, uint32_t seq)
{
	uint32_t n = c->snd_max;
	for (uint8_t i = 0; i < c->n_sacked; i++)
		if (seq_gt(c->sacked[i].seq, seq) && seq_lt(c->sacked[i].seq, n))
			n = c->sacked[i].seq;
	return n;
}

/* Send what window and cwnd allow from snd_nxt, FIN last; a pure ACK if
 * one is owed now and nothing carried it. The caller files the timers
 * (tmr_update) after it. */
HOT void output(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	bool sent = false;
	uint32_t unsent = 0;
	if (can_send_data(c)) {
		uint32_t mss = __builtin_expect(c->n_ooo != 0, 0) ? data_mss(c) : c->smss;
		for (;;) {
			unsent = seq_lt(c->snd_nxt, c->snd_end) ? c->snd_end - c->snd_nxt : 0;
			bool fin_due = (c->flags & F_FIN_Q) && seq_le(c->snd_nxt, c->snd_end);
			if (!unsent && !fin_due)
				break;
			if (c->n_sacked && seq_lt(c->snd_nxt, c->snd_max)) {
				/* Resending after an RTO: what the peer SACKed stays. */
				uint32_t skip = sack_skip(c, c->snd_nxt);
				if (skip != c->snd_nxt) {
					c->snd_nxt = skip;
					continue;
				}
				unsent = min32(unsent, sack_next(c, c->snd_nxt) - c->snd_nxt);
			}
			uint32_t wnd = min32(c->snd_wnd, c->cwnd);
			uint32_t flight = c->snd_nxt - c->snd_una;
			uint32_t n = wnd > flight ? wnd - flight : 0;
			n = min32(min32(n, unsent), mss);
			n = min32(n, t->smask + 1 - spos(t, c, c->snd_nxt));
			if (!n && unsent)
				break;
			bool fin = fin_due && c->snd_nxt + n == c->snd_end;
			xmit(t, c, c->snd_nxt, n, fin);
			if (n && !(c->flags & F_RTT) && seq_ge(c->snd_nxt, c->snd_max)) {
				c->flags |= F_RTT;
				c->rtt_seq = c->snd_nxt + n;
				c->rtt_ts = now;
			}
			c->snd_nxt += n + fin;
			if (seq_gt(c->snd_nxt, c->snd_max))
				c->snd_max = c->snd_nxt;
			if (!c->rto_at)
				c->rto_at = now + c->rto;
			sent = true;
		}
	}
	if (!sent && (c->flags & F_ACK_NOW))
		send_ack(t, c);
	/* Peer window closed with nothing in flight: the RTO timer doubles as
	 * the persist timer and sends a one-byte probe. */
	if (unsent && c->snd_wnd == 0 && c->snd_una == c->snd_max && !c->rto_at)
		c->rto_at = now + c->rto;
	/* rto_at is filed by the caller's tmr_update, which follows every
	 * output (lfe_tcp_flush; on_rto through lfe_tcp_due). */
}

/* ---- connection lifetime ---- */

static void conn_free(struct lfe_tcp *t, struct lfe_tcp_conn *c);
static void conn_reset(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason);

/* The connection to evict for a slot: among the EVICT_SCAN evictable
 * connections idle longest (idle, unbound: the app's mark), the one of
 * the source holding the most; the list head if none. */
#define EVICT_SCAN 64
static uint32_t evict_pick(struct lfe_tcp *t)
{
	uint32_t head = t->cfg.max_conns, best = head, best_n = 0;
	uint32_t i = t->el[head].next;
	for (uint32_t k = 0; k < EVICT_SCAN && i != head; k++, i = t->el[i].next) {
		uint32_t n = lfe_tcp_src_count(t, t->conns[i].raddr);
		if (best == head || n > best_n) {
			best = i;
			best_n = n;
		}
	}
	return best;
}

static struct lfe_tcp_conn *conn_alloc(struct lfe_tcp *t)
{
	if (!t->n_free && t->fresh == t->cfg.max_conns) {
		uint32_t head = t->cfg.max_conns;
		uint32_t oldest = t->wl[head].next;
		if (oldest != head) {
			conn_free(t, &t->conns[oldest]);
		} else if ((oldest = evict_pick(t)) != head) {
			t->st.evicted++;
			conn_reset(t, &t->conns[oldest], -ENOSPC);
		} else {
			return NULL;
		}
	}
	struct lfe_tcp_conn *c = lfe_tcp_slot_take(t);
	c->rto = t->cfg.rto_init_us;
	t->st.conns_active++;
	return c;
}

static void conn_free(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->state == ST_SYN_RCVD && !(c->flags & F_ACTIVE))
		t->st.half_open--;
	lfe_tcp_hash_remove(t, c);
	lfe_tcp_wheel_del(t, c);
	bufs_release(t, c);
	l_del(t->pl, c->idx);
	if (l_linked(t->wl, c->idx)) {
		l_del(t->wl, c->idx);
		t->n_tw--;
	}
	l_del(t->el, c->idx);
	lfe_tcp_src_dec(t, c);
	c->state = ST_FREE;
	c->flags = 0;
	c->app = NULL;
	c->gen++;
	lfe_tcp_slot_put(t, c);
	t->st.conns_active--;
}

/* The app is told once; the handle dies with it. */
static void detach(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason)
{
	if (!(c->flags & F_APP))
		return;
	c->flags &= (uint16_t)~F_APP;
	c->gen++;
	t->st.conns_closed++;
	t->ops.on_close(t->ctx, c, reason);
	c->app = NULL;
}

static void conn_close(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason)
{
	detach(t, c, reason);
	conn_free(t, c);
}

static void conn_reset(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason)
{
	send_rst(t, c);
	t->st.conns_reset++;
	conn_close(t, c, reason);
}

static void enter_time_wait(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	c->state = ST_TIME_WAIT;
	c->rto_at = 0;
	c->flags &= (uint16_t)~(F_ACK_DELAYED | F_RTT);
	c->state_at = now + t->cfg.time_wait_us;
	if (!l_linked(t->wl, c->idx)) {
		l_add_tail(t->wl, t->cfg.max_conns, c->idx);
		t->n_tw++;
	}
	l_del(t->el, c->idx);
	c->app_at = 0;
	bufs_release(t, c);      /* all was acknowledged; the app is told below */
	lfe_tcp_src_dec(t, c);   /* a recyclable slot holds nothing of the source's share */
	tmr_arm(t, c, c->state_at);
	detach(t, c, 0);
}

/* ESTABLISHED reached: tell the app. False if the connection is gone. */
static bool conn_open(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	c->state = ST_ESTABLISHED;
	c->last_act = now;
	c->rto_at = 0;
	c->retries = 0;
	c->cwnd = min32(10u * c->smss, max32(2u * c->smss, 14600));
	c->ssthresh = UINT32_MAX;
	t->st.conns_opened++;
	bool active = c->flags & F_ACTIVE;
	c->flags |= F_APP;
	if (t->ops.on_open(t->ctx, c) < 0) {
		/* A passive peer the app refused never had app state; an active
		 * one did (the caller holds it since connect) and is told. */
		if (!active)
			c->flags &= (uint16_t)~F_APP;
		conn_reset(t, c, -ECONNREFUSED);
		return false;
	}
	return true;
}

/* ---- receive path ---- */

static void notify_fin(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	c->flags &= (uint16_t)~F_FIN_NOTIFY;
	if (!(c->flags & F_APP))
		return;
	if (t->ops.on_peer_fin)
		t->ops.on_peer_fin(t->ctx, c);
	else
		lfe_tcp_close(c);
}

/* Offer held bytes to the app once; compact what it took. */
static void deliver_held(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (!c->held || !(c->flags & F_APP) || (c->flags & (F_DELIVER | F_ABORT)))
		return;
	uint8_t *b = rbuf(t, c);
	c->flags |= F_DELIVER;
	size_t k = t->ops.on_data(t->ctx, c, b, c->held);
	c->flags &= (uint16_t)~F_DELIVER;
	if (c->state == ST_FREE || !k)
		return;
	if (k > c->held)
		k = c->held;
	uint32_t extent = c->held;
	uint32_t base = c->rcv_nxt - c->held;
	for (uint32_t i = 0; i < c->n_ooo; i++)
		extent = max32(extent, c->ooo[i].end - base);
	memmove(b, b + k, extent - k);
	c->held -= (uint32_t)k;
	c->buf_at = t->now;
	rbuf_done(t, c);
}

static void fin_received(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	c->rcv_nxt++;
	c->flags |= F_ACK_NOW;
	c->flags &= (uint16_t)~F_OOO_FIN;
	switch (c->state) {
	case ST_ESTABLISHED:
		c->state = ST_CLOSE_WAIT;
		break;
	case ST_FIN_WAIT_1:
		c->state = ST_CLOSING;
		break;
	case ST_FIN_WAIT_2:
		enter_time_wait(t, c, now);
		return;
	default:
		return;
	}
	if (c->held)
		c->flags |= F_FIN_NOTIFY;
	else
		notify_fin(t, c);
}

/* Hold [s, e): merged with the ranges it touches, the result ranked
 * first among the SACK blocks. False (nothing changed) when that would
 * take a fifth range. */
static bool ooo_add(struct lfe_tcp_conn *c, uint32_t s, uint32_t e)
{
	struct { uint32_t seq, end; } tmp[OOO_MAX + 1];
	uint8_t rank[OOO_MAX + 1];
	uint32_t k = 0, at = 0;
	bool placed = false;
	for (uint32_t i = 0; i < c->n_ooo; i++) {
		if (seq_lt(c->ooo[i].end, s)) {
			rank[k] = (uint8_t)rank_of(c->ooo_rank, i);
			tmp[k].seq = c->ooo[i].seq;
			tmp[k++].end = c->ooo[i].end;
		} else if (seq_lt(e, c->ooo[i].seq)) {
			if (!placed) {
				at = k;
				tmp[k].seq = s;
				tmp[k++].end = e;
				placed = true;
			}
			rank[k] = (uint8_t)rank_of(c->ooo_rank, i);
			tmp[k].seq = c->ooo[i].seq;
			tmp[k++].end = c->ooo[i].end;
		} else {
			if (seq_lt(c->ooo[i].seq, s))
				s = c->ooo[i].seq;
			if (seq_gt(c->ooo[i].end, e))
				e = c->ooo[i].end;
		}
	}
	if (!placed) {
		at = k;
		tmp[k].seq = s;
		tmp[k++].end = e;
	}
	if (k > OOO_MAX)
		return false;
	for (uint32_t i = 0; i < k; i++) {
		c->ooo[i].seq = tmp[i].seq;
		c->ooo[i].end = tmp[i].end;
	}
	c->n_ooo = (uint8_t)k;
	c->ooo_rank = ranks_pack(rank, k, at);
	return true;
}

/* Pull held out-of-order ranges that now touch rcv_nxt. True if any did. */
static bool ooo_absorb(struct lfe_tcp_conn *c)
{
	uint32_t i = 0;
	bool any = false;
	while (i < c->n_ooo && seq_le(c->ooo[i].seq, c->rcv_nxt)) {
		if (seq_gt(c->ooo[i].end, c->rcv_nxt)) {
			c->held += c->ooo[i].end - c->rcv_nxt;
			c->rcv_nxt = c->ooo[i].end;
		}
		i++;
		any = true;
	}
	if (i) {
		uint8_t rank[OOO_MAX];
		for (uint32_t j = i; j < c->n_ooo; j++)
			rank[j - i] = (uint8_t)rank_of(c->ooo_rank, j);
		memmove(c->ooo, c->ooo + i, (c->n_ooo - i) * sizeof(c->ooo[0]));
		c->n_ooo = (uint8_t)(c->n_ooo - i);
		c->ooo_rank = ranks_pack(rank, c->n_ooo, c->n_ooo);
	}
	return any;
}

static bool can_recv_data(const struct lfe_tcp_conn *c)
{
	return c->state == ST_ESTABLISHED || c->state == ST_FIN_WAIT_1 || c->state == ST_FIN_WAIT_2;
}

/* Data and FIN of an acceptable segment, already trimmed to the window. */
static void recv_data(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint32_t seq,
		      const uint8_t *p, uint32_t len, bool fin, uint64_t now)
{
	if (!can_recv_data(c))
		return;
	if (len) {
		c->last_act = now;
		if (seq == c->rcv_nxt && !c->held && !c->n_ooo && (c->flags & F_APP) &&
		    !(c->flags & F_DELIVER)) {
			/* Fast path: a whole request in one segment, handed over
			 * straight from the frame, nothing copied. */
			c->rcv_nxt += len;
			c->flags |= F_DELIVER;
			size_t k = t->ops.on_data(t->ctx, c, p, len);
			c->flags &= (uint16_t)~F_DELIVER;
			if (c->state == ST_FREE)
				return;
			if (k == len && (c->flags & F_RSTARVE)) {
				/* The bytes a dry pool once turned away came again and
				 * were taken from the frame: no buffer is owed, or a
				 * later wake would reserve one nothing will ever use. */
				c->flags &= (uint16_t)~F_RSTARVE;
				l_del(t->rw, c->idx);
			}
			if (k < len) {
				uint8_t *b = rbuf_get(t, c);
				if (b) {
					memcpy(b, p + k, len - k);
					c->held = len - (uint32_t)k;
				} else {
					/* Pool empty: take back what the app left; the
					 * peer resends it when the window reopens. */
					c->rcv_nxt -= len - (uint32_t)k;
					fin = false;
					c->flags |= F_ACK_NOW;
				}
			}
			rbuf_done(t, c);   /* one reserved at a wake, if all was taken */
		} else if (!rbuf_get(t, c)) {
			/* Pool empty: dropped unacknowledged, the window closes. */
			fin = false;
			c->flags |= F_ACK_NOW;
		} else {
			uint32_t base = c->rcv_nxt - c->held;
			memcpy(rbuf(t, c) + (seq - base), p, len);
			if (seq == c->rcv_nxt) {
				c->rcv_nxt += len;
				c->held += len;
				if (ooo_absorb(c))
					c->flags |= F_ACK_NOW;
			} else {
				t->st.ooo_segs++;
				if (!ooo_add(c, seq, seq + len))
					t->st.drop_window++;
				c->flags |= F_ACK_NOW;
			}
			deliver_held(t, c);
			if (c->state == ST_FREE)
				return;
			rbuf_done(t, c);
		}
		if (c->rcv_nxt - c->last_ack_sent >= 2u * c->smss)
			c->flags |= F_ACK_NOW;
	}
	if (fin) {
		if (seq + len == c->rcv_nxt) {
			fin_received(t, c, now);
		} else {
			c->flags |= F_OOO_FIN | F_ACK_NOW;
			c->ooo_fin = seq + len;
		}
	} else if ((c->flags & F_OOO_FIN) && c->rcv_nxt == c->ooo_fin) {
		fin_received(t, c, now);
	}
	if (c->state == ST_FREE)
		return;
	if (c->flags & F_ACK_NOW) {
		pend(t, c);
	} else if (len && !(c->flags & F_ACK_DELAYED)) {
		c->flags |= F_ACK_DELAYED;
		c->delack_at = now + t->cfg.delack_us;
		/* A reply queued in this burst carries the ACK; the flush it
		 * waits for files the timers after it (tmr_update). */
		if (!has_unsent(c))
			tmr_arm(t, c, c->delack_at);
		pend(t, c);
	}
}

static void rtt_sample(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t r64)
{
	uint32_t r = r64 > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)r64;
	if (!r)
		r = 1;
	if (!c->srtt) {
		c->srtt = r;
		c->rttvar = r / 2;
	} else {
		uint32_t d = c->srtt > r ? c->srtt - r : r - c->srtt;
		c->rttvar = (3 * (c->rttvar / 4)) + d / 4;
		c->srtt = c->srtt - c->srtt / 8 + r / 8;
	}
	uint64_t rto = (uint64_t)c->srtt + max32(1000, 4 * c->rttvar);
	c->rto = (uint32_t)(rto < t->cfg.rto_min_us ? t->cfg.rto_min_us :
			    rto > t->cfg.rto_max_us ? t->cfg.rto_max_us : rto);
}

/* Fast retransmit: with SACK every hole below the highest SACKed byte (at
 * most cwnd's worth), else the segment at snd_una. */
static void fast_rexmit(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	uint32_t top = c->snd_una;
	for (uint8_t i = 0; i < c->n_sacked; i++)
		if (seq_gt(c->sacked[i].end, top))
			top = c->sacked[i].end;
	uint32_t seq = c->snd_una, budget = c->cwnd;
	do {
		uint32_t n = seq_lt(seq, c->snd_end) ? c->snd_end - seq : 0;
		uint32_t hole = sack_next(c, seq) - seq;
		n = min32(min32(min32(n, hole), data_mss(c)), t->smask + 1 - spos(t, c, seq));
		bool fin = (c->flags & F_FIN_Q) && seq + n == c->snd_end;
		xmit(t, c, seq, n, fin);
		if (seq != c->snd_una)
			t->st.sack_rexmits++;
		seq = sack_skip(c, seq + n + fin);
		budget = budget > n ? budget - n : 0;
	} while (seq_lt(seq, top) && budget);
}

/* ACK field of a segment in a synchronized state. False: drop the rest. */
static bool recv_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s,
		     uint32_t len, uint64_t now)
{
	uint32_t ack = s->ack;
	if (seq_gt(ack, c->snd_max) || seq_lt(ack, c->snd_una - c->max_snd_wnd)) {
		t->st.drop_bad_ack++;
		challenge_ack(t, c, now);
		return false;
	}
	bool writable = false;
	if (seq_gt(ack, c->snd_una)) {
		uint32_t acked = ack - c->snd_una;
		if ((c->flags & F_RTT) && seq_ge(ack, c->rtt_seq)) {
			c->flags &= (uint16_t)~F_RTT;
			rtt_sample(t, c, now - c->rtt_ts);
		} else if ((c->flags & F_TS) && (s->opts & LFE_TCP_OPT_TS) && s->tsecr) {
			/* RFC 7323 §4: the echoed clock measures even across a
			 * retransmission (no timed segment runs then). */
			uint32_t d = ts_now(t, c) - s->tsecr;
			if (d < (1u << 20))
				rtt_sample(t, c, (uint64_t)d << 10);
		}
		if (c->cwnd < c->ssthresh)
			c->cwnd += min32(acked, c->smss);
		else
			c->cwnd += max32(1, (uint32_t)((uint64_t)c->smss * c->smss / c->cwnd));
		c->cwnd = min32(c->cwnd, t->smask + 1);
		c->snd_una = ack;
		if (seq_lt(c->snd_nxt, ack))
			c->snd_nxt = ack;
		c->retries = 0;
		c->dupacks = 0;
		c->last_act = now;
		c->buf_at = now;
		sack_prune(c);
		c->rto_at = c->snd_una == c->snd_max ? 0 : now + c->rto;
		sbuf_done(t, c);
		writable = true;
	}
	if ((c->flags & F_SACK) && s->n_sack) {
		for (uint8_t i = 0; i < s->n_sack && i < 4; i++)
			sack_add(c, s->sack[i].start, s->sack[i].end);
	}
	if (!writable && ack == c->snd_una && !len && !(s->flags & (LFE_TCP_FIN | LFE_TCP_SYN)) &&
	    peer_win(c, s) == c->snd_wnd && c->snd_una != c->snd_max) {
		t->st.dup_acks++;
		if (++c->dupacks == 3) {
			uint32_t flight = c->snd_max - c->snd_una;
			c->ssthresh = max32(flight / 2, 2u * c->smss);
			c->cwnd = c->ssthresh + 3u * c->smss;
			fast_rexmit(t, c);
			c->rto_at = now + c->rto;
		}
	}
	if (seq_lt(c->snd_wl1, s->seq) || (c->snd_wl1 == s->seq && seq_le(c->snd_wl2, ack))) {
		if (!c->snd_wnd && s->win)
			pend(t, c);
		if (!s->win)
			c->retries = 0;   /* the peer is alive, just full: keep probing */
		c->snd_wnd = peer_win(c, s);
		c->snd_wl1 = s->seq;
		c->snd_wl2 = ack;
		c->max_snd_wnd = max32(c->max_snd_wnd, c->snd_wnd);
	}
	bool fin_acked = (c->flags & F_FIN_Q) && c->snd_una == c->snd_end + 1;
	if (fin_acked) {
		switch (c->state) {
		case ST_FIN_WAIT_1:
			c->state = ST_FIN_WAIT_2;
			c->state_at = now + (t->cfg.idle_timeout_us ? t->cfg.idle_timeout_us : FW2_DEFAULT_US);
			break;
		case ST_CLOSING:
			enter_time_wait(t, c, now);
			return true;
		case ST_LAST_ACK:
			conn_close(t, c, 0);
			return false;
		default:
			break;
		}
	}
	if (writable) {
		if (has_unsent(c))
			pend(t, c);
		if ((c->flags & F_APP) && t->ops.on_writable && !(c->flags & F_FIN_Q))
			t->ops.on_writable(t->ctx, c);
	}
	return c->state != ST_FREE;
}

/* Take the options of the peer's SYN (or, active, of its SYN,ACK: we
 * offered them all): each is on only when the peer sent it. */
static void syn_opts(const struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s)
{
	c->flags &= (uint16_t)~(F_TS | F_SACK | F_WS);
	c->snd_ws = c->rcv_ws = 0;
	if (s->opts & LFE_TCP_OPT_TS) {
		c->flags |= F_TS;
		c->ts_recent = s->tsval;
	}
	if (s->opts & LFE_TCP_OPT_SACK_PERM)
		c->flags |= F_SACK;
	if (s->wscale >= 0) {
		c->flags |= F_WS;
		c->snd_ws = (uint8_t)(s->wscale > 14 ? 14 : s->wscale);
		c->rcv_ws = t->our_ws;
	}
	uint32_t peer = s->mss ? s->mss : 536;
	uint32_t mss = max32(64, min32(t->cfg.mss, peer));
	/* The MSS excludes options (RFC 6691): timestamps ride every segment. */
	if (c->flags & F_TS)
		mss = max32(64, mss - TS_OPT_LEN);
	c->smss = (uint16_t)mss;
}

/* h: the tuple's secret (lfe_tcp_tuple_secret), which the ISN comes from too. */
static void init_passive(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s,
			 uint64_t h)
{
	c->laddr = s->laddr;
	c->raddr = s->raddr;
	c->lport = s->lport;
	c->rport = s->rport;
	c->ts_off = lfe_tcp_ts_offset(h);
	syn_opts(t, c, s);
	lfe_tcp_hash_insert(t, c);
}

static bool listening(const struct lfe_tcp *t, uint32_t laddr, uint16_t lport)
{
	for (uint32_t i = 0; i < t->cfg.n_listen; i++)
		if (t->cfg.listen[i].port == lport && (!t->cfg.listen[i].addr || t->cfg.listen[i].addr == laddr))
			return true;
	return false;
}

static void listen_syn(struct lfe_tcp *t, const struct lfe_tcp_seg *s, uint64_t now)
{
	if (src_over(t, s->raddr)) {
		reply_rst(t, s);
		return;
	}
	if (!half_open_admit(t, s->raddr)) {
		struct lfe_tcp_seg r = {
			.laddr = s->laddr, .raddr = s->raddr, .lport = s->lport, .rport = s->rport,
			.seq = lfe_tcp_cookie_make(t->sk, s, t->cfg.mss, now), .ack = s->seq + 1,
			.win = (uint16_t)min32(t->cfg.rcvbuf, MAX_WIN),
			.flags = LFE_TCP_SYN | LFE_TCP_ACK, .wscale = -1,
		};
		r.mss = t->cfg.mss;
		/* Options live only in the timestamp: without it, MSS alone. */
		if (s->opts & LFE_TCP_OPT_TS) {
			bool sack = s->opts & LFE_TCP_OPT_SACK_PERM;
			r.opts = (uint8_t)(LFE_TCP_OPT_TS | (sack ? LFE_TCP_OPT_SACK_PERM : 0));
			uint32_t off = lfe_tcp_ts_offset(lfe_tcp_tuple_secret(t->sk, s));
			r.tsval = lfe_tcp_cookie_ts(lfe_tcp_ts_clock(now, off),
						    s->wscale, sack);
			r.tsecr = s->tsval;
			if (s->wscale >= 0)
				r.wscale = (int8_t)t->our_ws;
		}
		t->st.syncookies_sent++;
		t->cookie_until = now + (2ull << COOKIE_SHIFT);
		emit(t, &r);
		return;
	}
	struct lfe_tcp_conn *c = conn_alloc(t);
	if (!c) {
		t->st.drop_table_full++;
		return;
	}
	uint64_t h = lfe_tcp_tuple_secret(t->sk, s);
	init_passive(t, c, s, h);
	lfe_tcp_src_inc(t, c, true);
	c->state = ST_SYN_RCVD;
	t->st.half_open++;
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->last_ack_sent = c->rcv_nxt;
	c->iss = lfe_tcp_isn(h, now);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->snd_end = c->iss + 1;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = c->iss;
	c->snd_wnd = s->win;
	c->max_snd_wnd = s->win;
	c->last_act = now;
	send_syn(t, c);
	c->rto_at = now + c->rto;
	tmr_arm(t, c, c->rto_at);
}

/* A bare ACK for no connection on a listening port: a SYN cookie coming
 * back? Returns the new ESTABLISHED connection or NULL. */
static struct lfe_tcp_conn *listen_cookie(struct lfe_tcp *t, const struct lfe_tcp_seg *s, uint64_t now)
{
	bool cookies = now < t->cookie_until;
	uint32_t mss = cookies ? lfe_tcp_cookie_check(t->sk, s, now) : 0;
	if (!mss) {
		/* While cookies are out, a segment that fails the check may be a
		 * later one of a handshake whose first ACK was lost: dropping it
		 * lets the peer retransmit from the cookie's seq; a RST would kill
		 * the connection (and would feed a flood). */
		t->st.drop_no_conn++;
		if (!cookies)
			reply_rst(t, s);
		return NULL;
	}
	if (src_over(t, s->raddr)) {
		reply_rst(t, s);
		return NULL;
	}
	struct lfe_tcp_conn *c = conn_alloc(t);
	if (!c) {
		t->st.drop_table_full++;
		reply_rst(t, s);
		return NULL;
	}
	t->st.syncookies_ok++;
	lfe_tcp_admit_validated(t, s->raddr, now);
	struct lfe_tcp_seg syn = *s;
	syn.mss = (uint16_t)mss;
	syn.opts = 0;
	syn.wscale = -1;
	if (s->opts & LFE_TCP_OPT_TS) {
		bool sack;
		lfe_tcp_cookie_ts_decode(s->tsecr, &syn.wscale, &sack);
		syn.opts = (uint8_t)(LFE_TCP_OPT_TS | (sack ? LFE_TCP_OPT_SACK_PERM : 0));
	}
	init_passive(t, c, &syn, lfe_tcp_tuple_secret(t->sk, &syn));
	lfe_tcp_src_inc(t, c, false);
	c->irs = s->seq - 1;
	c->rcv_nxt = s->seq;
	c->last_ack_sent = s->seq;
	c->iss = s->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = c->snd_end = s->ack;
	c->snd_wnd = peer_win(c, s);
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	if (!conn_open(t, c, now))
		return NULL;
	return c;
}

static void input_syn_sent(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s,
			   uint64_t now)
{
	bool ack_ok = false;
	if (s->flags & LFE_TCP_ACK) {
		if (seq_le(s->ack, c->iss) || seq_gt(s->ack, c->snd_max)) {
			if (!(s->flags & LFE_TCP_RST))
				reply_rst(t, s);
			t->st.drop_bad_ack++;
			return;
		}
		ack_ok = true;
	}
	if (s->flags & LFE_TCP_RST) {
		if (ack_ok) {
			t->st.conns_reset++;
			conn_close(t, c, -ECONNREFUSED);
		} else {
			t->st.drop_bad_seq++;
		}
		return;
	}
	if (!(s->flags & LFE_TCP_SYN))
		return;
	syn_opts(t, c, s);
	c->irs = s->seq;
	c->rcv_nxt = s->seq + 1;
	c->snd_wnd = s->win;
	c->max_snd_wnd = s->win;
	c->snd_wl1 = s->seq;
	c->snd_wl2 = s->ack;
	if (!ack_ok) {
		/* Simultaneous open: answer SYN,ACK and wait for the ACK. */
		c->state = ST_SYN_RCVD;
		send_syn(t, c);
		return;
	}
	c->snd_una = s->ack;
	c->flags |= F_ACK_NOW;
	pend(t, c);
	if (!conn_open(t, c, now))
		return;
	tmr_update(t, c);
}

static void input_seg(struct lfe_tcp *t, const struct lfe_tcp_seg *s, uint64_t now)
{
	t->now = now;
	t->st.segs_in++;
	t->st.bytes_in += s->len;
	if (s->len && !s->payload) {
		t->st.drop_bad_seq++;
		return;
	}
	uint8_t fl = s->flags;
	if ((fl & (LFE_TCP_SYN | LFE_TCP_ACK | LFE_TCP_RST | LFE_TCP_FIN)) == LFE_TCP_SYN &&
	    !lfe_tcp_admit_syn(t, s->raddr, now))
		return;   /* before the lookup: a flood costs no miss */
	struct lfe_tcp_conn *c = lfe_tcp_lookup(t, s->laddr, s->lport, s->raddr, s->rport);
	if (c && c->state == ST_TIME_WAIT && (fl & LFE_TCP_SYN) && !(fl & (LFE_TCP_ACK | LFE_TCP_RST)) &&
	    (seq_gt(s->seq, c->rcv_nxt) ||
	     ((c->flags & F_TS) && (s->opts & LFE_TCP_OPT_TS) && seq_gt(s->tsval, c->ts_recent)))) {
		/* A new incarnation of the tuple: its SYN is above everything of
		 * the old one (sequence, or timestamp: RFC 6191), so TIME_WAIT
		 * has done its job. */
		conn_free(t, c);
		c = NULL;
	}
	if (!c) {
		if (!listening(t, s->laddr, s->lport) || t->shutting) {
			t->st.drop_no_conn++;
			reply_rst(t, s);
			return;
		}
		if (fl & LFE_TCP_RST) {
			t->st.drop_no_conn++;
			return;
		}
		if (fl & LFE_TCP_SYN) {
			if (fl & (LFE_TCP_ACK | LFE_TCP_FIN)) {
				t->st.drop_no_conn++;
				reply_rst(t, s);
				return;
			}
			listen_syn(t, s, now);
			return;
		}
		if (!(fl & LFE_TCP_ACK)) {
			t->st.drop_no_conn++;
			return;
		}
		c = listen_cookie(t, s, now);
		if (!c)
			return;
		/* fall through: the cookie ACK may carry the first request */
	}
	if (c->flags & F_ABORT)
		return;
	if (c->state == ST_SYN_SENT) {
		input_syn_sent(t, c, s, now);
		return;
	}

	uint32_t wnd = rwnd(t, c);
	if (fl & LFE_TCP_RST) {
		if (s->seq == c->rcv_nxt) {
			t->st.conns_reset++;
			conn_close(t, c, -ECONNRESET);
		} else if (seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + max32(wnd, 1))) {
			challenge_ack(t, c, now);
		} else {
			t->st.drop_bad_seq++;
		}
		return;
	}
	if (fl & LFE_TCP_SYN) {
		if (c->state == ST_SYN_RCVD && s->seq == c->irs && !(fl & LFE_TCP_ACK))
			send_syn(t, c);   /* our SYN,ACK was lost */
		else
			challenge_ack(t, c, now);
		return;
	}

	bool has_ts = (c->flags & F_TS) && (s->opts & LFE_TCP_OPT_TS);
	if (has_ts && seq_lt(s->tsval, c->ts_recent) && now - c->last_act < PAWS_IDLE_US) {
		/* RFC 7323 §5.3 R1: an old duplicate (or a wrapped sequence
		 * space) — acknowledge, drop. */
		t->st.drop_paws++;
		c->flags |= F_ACK_NOW;
		pend(t, c);
		return;
	}

	uint32_t seq = s->seq, len = s->len;
	const uint8_t *p = s->payload;
	bool fin = fl & LFE_TCP_FIN;
	uint32_t seglen = len + fin;
	bool ok;
	if (!seglen)
		ok = wnd ? seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd) : seq == c->rcv_nxt;
	else
		ok = wnd && (seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
			     seq_in(seq + seglen - 1, c->rcv_nxt, c->rcv_nxt + wnd));
	if (!ok) {
		if (seq_le(seq + seglen, c->rcv_nxt))
			t->st.dup_segs++;
		else
			t->st.drop_window++;
		c->flags |= F_ACK_NOW;
		pend(t, c);
		if (c->state == ST_TIME_WAIT)
			c->state_at = now + t->cfg.time_wait_us;
		/* A zero window still takes ACKs: only the data goes. */
		if (!(seq == c->rcv_nxt && !wnd && (fl & LFE_TCP_ACK)))
			return;
		len = 0;
		fin = false;
	} else if (has_ts && seq_le(seq, c->last_ack_sent)) {
		c->ts_recent = s->tsval;   /* RFC 7323 §4.3 */
	}
	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t d = c->rcv_nxt - seq;
		if (d >= len) {
			if (len)
				t->st.dup_segs++;
			fin = fin && d == len;
			len = 0;
		} else {
			p += d;
			len -= d;
		}
		seq = c->rcv_nxt;
		c->flags |= F_ACK_NOW;
		pend(t, c);
	}
	if (seq_gt(seq + len, c->rcv_nxt + wnd)) {
		len = c->rcv_nxt + wnd - seq;
		fin = false;
	}

	if (!(fl & LFE_TCP_ACK))
		return;
	if (c->state == ST_SYN_RCVD) {
		if (!seq_gt(s->ack, c->snd_una) || seq_gt(s->ack, c->snd_max)) {
			t->st.drop_bad_ack++;
			reply_rst(t, s);
			return;
		}
		if (!(c->flags & F_ACTIVE)) {
			t->st.half_open--;
			lfe_tcp_src_promote(t, c);
			lfe_tcp_admit_validated(t, c->raddr, now);
		}
		c->snd_una = s->ack;
		c->snd_wnd = peer_win(c, s);
		c->max_snd_wnd = max32(c->max_snd_wnd, c->snd_wnd);
		c->snd_wl1 = s->seq;
		c->snd_wl2 = s->ack;
		if (!conn_open(t, c, now))
			return;
	} else if (!recv_ack(t, c, s, len, now)) {
		return;
	}
	if (c->flags & F_ABORT)
		return;
	if (c->state == ST_TIME_WAIT) {
		if (fin) {
			c->flags |= F_ACK_NOW;
			pend(t, c);
			c->state_at = now + t->cfg.time_wait_us;
		}
		tmr_update(t, c);
		return;
	}
	recv_data(t, c, seq, p, len, fin, now);
	/* A connection waiting for lfe_tcp_flush (an answer or an ACK to
	 * send: every request) gets its timer there, once, after its output;
	 * the flush comes in the same worker turn, and a deadline set here is
	 * at least a tick ahead, so none is missed meanwhile. */
	if (c->state != ST_FREE && !l_linked(t->pl, c->idx))
		tmr_update(t, c);
}

/* ---- timers ---- */

static void on_rto(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	c->rto_at = 0;
	if (c->state == ST_SYN_RCVD || c->state == ST_SYN_SENT) {
		if (++c->retries > t->cfg.max_retries) {
			t->st.rto_timeouts++;
			if (c->state == ST_SYN_SENT) {
				conn_close(t, c, -ETIMEDOUT);
			} else {
				t->st.conns_reset++;
				send_rst(t, c);
				conn_close(t, c, -ETIMEDOUT);
			}
			return;
		}
		c->rto = min32(c->rto * 2, t->cfg.rto_max_us);
		t->st.retransmits++;
		send_syn(t, c);
		c->rto_at = now + c->rto;
		return;
	}
	if (!can_send_data(c))
		return;
	if (c->snd_una == c->snd_max && (!has_unsent(c) || c->snd_wnd))
		return;
	t->st.rto_timeouts++;
	if (++c->retries > t->cfg.max_retries) {
		conn_reset(t, c, -ETIMEDOUT);
		return;
	}
	c->rto = min32(c->rto * 2, t->cfg.rto_max_us);
	if (c->snd_una != c->snd_max) {
		uint32_t flight = c->snd_max - c->snd_una;
		c->ssthresh = max32(flight / 2, 2u * c->smss);
		c->cwnd = c->smss;
		c->flags &= (uint16_t)~F_RTT;
	}
	c->dupacks = 0;
	if (c->retries >= 2)
		c->n_sacked = 0;   /* RFC 2018 §8: the peer may have reneged */
	c->snd_nxt = c->snd_una;
	c->rto_at = now + c->rto;
	if (!c->snd_wnd && seq_lt(c->snd_una, c->snd_end)) {
		/* Zero window: probe with one byte (RFC 9293 3.8.6.1); the
		 * peer's ACK of it, zero window or not, proves it alive. */
		xmit(t, c, c->snd_una, 1, false);
		c->snd_nxt = c->snd_una + 1;
		if (seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		return;
	}
	output(t, c, now);
}

static void fire(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	if (c->state_at && c->state_at <= now) {
		c->state_at = 0;
		if (c->state == ST_TIME_WAIT) {
			conn_free(t, c);
			return;
		}
		if (c->state == ST_FIN_WAIT_2) {
			conn_reset(t, c, -ETIMEDOUT);
			return;
		}
	}
	if (t->cfg.idle_timeout_us && idle_applies(c) && c->last_act + t->cfg.idle_timeout_us <= now) {
		t->st.idle_closed++;
		conn_reset(t, c, -ETIMEDOUT);
		return;
	}
	if (stall_applies(t, c) && c->buf_at + t->cfg.buf_stall_us <= now) {
		/* What was reserved and never used goes back: a ring for room
		 * never written, a receive buffer from a wake never filled. */
		if (c->sreserved && c->snd_una == c->snd_end) {
			c->sreserved = false;
			sbuf_done(t, c);
		}
		rbuf_done(t, c);
	}
	if (stall_applies(t, c) && c->buf_at + t->cfg.buf_stall_us <= now) {
		t->st.buf_stall_closed++;
		conn_reset(t, c, -ETIMEDOUT);
		return;
	}
	if (c->app_at && c->app_at <= now) {
		c->app_at = 0;
		if ((c->flags & F_APP) && (!t->ops.on_deadline || t->ops.on_deadline(t->ctx, c) < 0)) {
			t->st.deadline_closed++;
			conn_reset(t, c, -ETIME);
			return;
		}
		if (c->state == ST_FREE)
			return;
	}
	if (c->rto_at && c->rto_at <= now) {
		on_rto(t, c, now);
		if (c->state == ST_FREE)
			return;
	}
	if ((c->flags & F_ACK_DELAYED) && c->delack_at <= now)
		send_ack(t, c);
}

void lfe_tcp_due(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	fire(t, c, now);
	if (c->state != ST_FREE)
		tmr_update(t, c);
}

void lfe_tcp_timers(struct lfe_tcp *t, uint64_t now)
{
	t->now = now;
	lfe_tcp_wheel_run(t, now);
}

/* ---- flush ---- */

static bool app_can_send(const struct lfe_tcp_conn *c);

/* Buffers came back: connections that waited for one, oldest first, as
 * many as there are free buffers. A receive waiter gets a buffer of its
 * own and a window update: the bytes it dropped come again only at the
 * peer's retransmission timeout, and must not find the pool dry again
 * (each miss doubles the peer's timer). A send waiter's app gets
 * on_writable (and may take a ring). */
static void wake_waiters(struct lfe_tcp *t)
{
	uint32_t head = t->cfg.max_conns;
	while (l_linked(t->rw, head)) {
		uint32_t b = lfe_tcp_pool_get(&t->rpool);
		if (b == NIL)
			break;
		struct lfe_tcp_conn *c = &t->conns[t->rw[head].next];
		l_del(t->rw, c->idx);
		c->flags &= (uint16_t)~F_RSTARVE;
		c->flags |= F_ACK_NOW;
		c->rbuf = b;
		c->buf_at = t->now;
		pend(t, c);   /* the flush below re-arms its timer (stall bound) */
	}
	while (lfe_tcp_pool_avail(&t->spool) && l_linked(t->sw, head)) {
		struct lfe_tcp_conn *c = &t->conns[t->sw[head].next];
		l_del(t->sw, c->idx);
		c->flags &= (uint16_t)~F_SSTARVE;
		if ((c->flags & F_APP) && t->ops.on_writable && app_can_send(c))
			t->ops.on_writable(t->ctx, c);
	}
}

/* The app's callbacks for this segment (on_open, on_data, on_close) run
 * inside input_seg; a push they asked for is served once the segment is
 * wholly processed, so what leaves acknowledges all of it. */
void lfe_tcp_input(struct lfe_tcp *t, const struct lfe_tcp_seg *s, uint64_t now)
{
	input_seg(t, s, now);
	if (t->push) {
		t->st.pushes++;
		lfe_tcp_flush(t, now);
	}
}

void lfe_tcp_flush(struct lfe_tcp *t, uint64_t now)
{
	t->now = now;
	t->push = false;
	uint32_t head = t->cfg.max_conns;
	wake_waiters(t);
	while (l_linked(t->pl, head)) {
		uint32_t i = t->pl[head].next;
		l_del(t->pl, i);
		struct lfe_tcp_conn *c = &t->conns[i];
		if (c->state == ST_FREE)
			continue;
		if (c->flags & F_ABORT) {
			c->flags &= (uint16_t)~F_ABORT;
			conn_reset(t, c, -ECONNABORTED);
			continue;
		}
		output(t, c, now);
		sbuf_done(t, c);
		tmr_update(t, c);
	}
}

/* ---- setup ---- */

void lfe_tcp_cfg_default(struct lfe_tcp_cfg *cfg)
{
	*cfg = (struct lfe_tcp_cfg){
		.max_conns = 16384,
		.max_half_open = 4096,
		.sndbuf = 16384,
		.rcvbuf = 8192,
		.mss = 1460,
		.rto_min_us = 200000,
		.rto_max_us = 30000000,
		.rto_init_us = 1000000,
		.max_retries = 8,
		.delack_us = 40000,
		.idle_timeout_us = 300000000,
		.time_wait_us = 2000000,
		.buf_stall_us = 60000000,
		.syn_rate = 100000,
		.syn_rate_validated = 400000,
		.validated_sources = 16384,
		.share_pressure_pct = LFE_SHARE_PRESSURE_PCT,
	};
}

uint32_t lfe_tcp_buf_pool_default(uint32_t max_conns)
{
	if (max_conns <= 4096)
		return max_conns;
	return max32(4096, max_conns / 8);
}

struct lfe_tcp *lfe_tcp_new(const struct lfe_tcp_cfg *cfg, const struct lfe_tcp_ops *ops,
			    void *ctx, int *err)
{
	int e = -EINVAL;
	struct lfe_tcp *t = NULL;
	if (!cfg || !ops || !ops->tx || !ops->on_open || !ops->on_data || !ops->on_close)
		goto fail;
	if (!cfg->max_conns || cfg->max_conns > (1u << 24) || cfg->max_half_open > cfg->max_conns ||
	    cfg->sndbuf < 64 || cfg->sndbuf > (1u << 24) || (cfg->sndbuf & (cfg->sndbuf - 1)) ||
	    cfg->rcvbuf < 64 || cfg->rcvbuf > (1u << 24) || cfg->mss < 64 || cfg->mss > 9000 ||
	    !cfg->rto_min_us || cfg->rto_min_us > cfg->rto_init_us || cfg->rto_init_us > cfg->rto_max_us ||
	    cfg->rto_max_us > (1u << 30) || cfg->delack_us > (1ull << 40) ||
	    cfg->idle_timeout_us > (1ull << 40) || cfg->time_wait_us > (1ull << 40) ||
	    cfg->buf_stall_us > (1ull << 40) || cfg->n_listen > 8 || cfg->validated_sources > (1u << 24) ||
	    cfg->share_pressure_pct > 100)
		goto fail;
	e = -ENOMEM;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->cfg = *cfg;
	t->ops = *ops;
	t->ctx = ctx;
	t->smask = cfg->sndbuf - 1;
	uint32_t nbuf = cfg->buf_pool ? min32(cfg->buf_pool, cfg->max_conns) :
			lfe_tcp_buf_pool_default(cfg->max_conns);
	t->cfg.buf_pool = nbuf;
	if (lfe_tcp_table_init(t) < 0 || lfe_tcp_pool_init(&t->spool, nbuf, cfg->sndbuf) < 0 ||
	    lfe_tcp_pool_init(&t->rpool, nbuf, cfg->rcvbuf) < 0)
		goto fail;
	uint64_t s = cfg->secret;
	t->hk0 = splitmix(&s) | 1;
	t->hk1 = splitmix(&s) | 1;
	t->sk[0] = splitmix(&s);
	t->sk[1] = splitmix(&s);
	if (lfe_tcp_admit_init(t, splitmix(&s), splitmix(&s)) < 0)
		goto fail;
	t->conn_share = lfe_share_make(cfg->max_conns, cfg->share_pressure_pct, cfg->max_conns_per_source);
	t->ho_share = lfe_share_make(cfg->max_half_open, cfg->share_pressure_pct, 0);
	while (t->our_ws < 14 && (cfg->rcvbuf >> t->our_ws) > MAX_WIN)
		t->our_ws++;
	return t;
fail:
	lfe_tcp_free(t);
	if (err)
		*err = e;
	return NULL;
}

void lfe_tcp_free(struct lfe_tcp *t)
{
	if (!t)
		return;
	lfe_tcp_table_fini(t);
	lfe_tcp_admit_fini(t);
	lfe_tcp_pool_fini(&t->spool);
	lfe_tcp_pool_fini(&t->rpool);
	free(t);
}

struct lfe_tcp_conn *lfe_tcp_connect(struct lfe_tcp *t, uint32_t laddr, uint16_t lport,
				     uint32_t raddr, uint16_t rport, uint64_t now, int *err)
{
	t->now = now;
	int e;
	if (t->shutting) {
		e = -ESHUTDOWN;
		goto fail;
	}
	if (lfe_tcp_lookup(t, laddr, lport, raddr, rport)) {
		e = -EADDRINUSE;
		goto fail;
	}
	struct lfe_tcp_conn *c = conn_alloc(t);
	if (!c) {
		t->st.drop_table_full++;
		e = -ENOBUFS;
		goto fail;
	}
	struct lfe_tcp_seg s = {.laddr = laddr, .raddr = raddr, .lport = lport, .rport = rport};
	c->laddr = laddr;
	c->raddr = raddr;
	c->lport = lport;
	c->rport = rport;
	c->smss = (uint16_t)min32(t->cfg.mss, 536);
	uint64_t h = lfe_tcp_tuple_secret(t->sk, &s);
	c->ts_off = lfe_tcp_ts_offset(h);
	lfe_tcp_hash_insert(t, c);
	c->state = ST_SYN_SENT;
	c->flags = F_ACTIVE | F_APP | F_TS | F_SACK | F_WS;   /* offered; the SYN,ACK decides */
	c->iss = lfe_tcp_isn(h, now);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->snd_end = c->iss + 1;
	c->last_act = now;
	send_syn(t, c);
	c->rto_at = now + c->rto;
	tmr_arm(t, c, c->rto_at);
	return c;
fail:
	if (err)
		*err = e;
	return NULL;
}

/* ---- per connection ---- */

static bool app_can_send(const struct lfe_tcp_conn *c)
{
	return (c->state == ST_ESTABLISHED || c->state == ST_CLOSE_WAIT) &&
	       !(c->flags & (F_FIN_Q | F_ABORT));
}

/* Contiguous free bytes at the tail of the held send ring. */
static inline uint32_t ring_room(const struct lfe_tcp *t, const struct lfe_tcp_conn *c)
{
	uint32_t size = t->smask + 1;
	return min32(size - (c->snd_end - c->snd_una), size - spos(t, c, c->snd_end));
}

size_t lfe_tcp_send_space(struct lfe_tcp_conn *c, uint8_t **p)
{
	struct lfe_tcp *t = c->t;
	uint8_t *b = app_can_send(c) ? sbuf_get(t, c) : NULL;
	if (!b) {
		*p = NULL;
		return 0;
	}
	*p = b + spos(t, c, c->snd_end);
	return ring_room(t, c);
}

size_t lfe_tcp_send_free(struct lfe_tcp_conn *c)
{
	struct lfe_tcp *t = c->t;
	if (!app_can_send(c) || !sbuf_get(t, c))
		return 0;
	return (t->smask + 1) - (c->snd_end - c->snd_una);
}

/* n bytes (1..the room lfe_tcp_send_space just reported) were written. */
static void commit(struct lfe_tcp_conn *c, size_t n)
{
	c->snd_end += (uint32_t)n;
	c->sreserved = false;
	pend(c->t, c);
}

/* The room lfe_tcp_send_space reported is bounded again here, without
 * taking a ring: one that space reported is held (it stays the app's until
 * it writes); with none held nothing was reported, so nothing is queued. */
void lfe_tcp_send_commit(struct lfe_tcp_conn *c, size_t n)
{
	if (c->sbuf == NIL || !app_can_send(c))
		return;
	size_t room = ring_room(c->t, c);
	if (n > room)
		n = room;
	if (n)
		commit(c, n);
}

size_t lfe_tcp_send(struct lfe_tcp_conn *c, const void *data, size_t len)
{
	size_t done = 0;
	for (int i = 0; i < 2 && done < len; i++) {
		uint8_t *p;
		size_t room = lfe_tcp_send_space(c, &p);
		size_t n = len - done < room ? len - done : room;
		if (!n)
			break;
		memcpy(p, (const uint8_t *)data + done, n);
		commit(c, n);   /* n <= room: no second lfe_tcp_send_space */
		done += n;
	}
	return done;
}

void lfe_tcp_conn_kick(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	t->now = now;
	if (c->state == ST_FREE || (c->flags & F_ABORT))
		return;
	if (!c->held && !(c->flags & (F_FIN_NOTIFY | F_OOO_FIN))) {
		/* The kick after every ACK of a cleartext answer: nothing held
		 * to offer, no FIN waiting, so the window cannot move. */
		if (c->flags & F_ACK_NOW)
			pend(t, c);
		return;
	}
	uint32_t before = rwnd(t, c);
	deliver_held(t, c);
	if (c->state == ST_FREE)
		return;
	uint32_t after = rwnd(t, c);
	/* Tell the peer about reopened space only when it is worth a segment
	 * (RFC 1122 receiver-side silly window avoidance). */
	if (after > before && (before < c->smss || after - before >= min32(t->cfg.rcvbuf / 2, 2u * c->smss)))
		c->flags |= F_ACK_NOW;
	if ((c->flags & F_FIN_NOTIFY) && !c->held)
		notify_fin(t, c);
	if ((c->flags & F_OOO_FIN) && c->rcv_nxt == c->ooo_fin)
		fin_received(t, c, now);
	if (c->state != ST_FREE && (c->flags & F_ACK_NOW))
		pend(t, c);
}

void lfe_tcp_conn_push(struct lfe_tcp_conn *c)
{
	if (c->state == ST_FREE)
		return;
	c->t->push = true;
	pend(c->t, c);
}

void lfe_tcp_close(struct lfe_tcp_conn *c)
{
	switch (c->state) {
	case ST_ESTABLISHED:
		c->state = ST_FIN_WAIT_1;
		break;
	case ST_CLOSE_WAIT:
		c->state = ST_LAST_ACK;
		break;
	case ST_SYN_SENT:
		lfe_tcp_abort(c);
		return;
	default:
		return;
	}
	c->flags |= F_FIN_Q;
	pend(c->t, c);
}

void lfe_tcp_abort(struct lfe_tcp_conn *c)
{
	if (c->state == ST_FREE || c->state == ST_TIME_WAIT)
		return;
	c->flags |= F_ABORT;
	pend(c->t, c);
}

void lfe_tcp_conn_set_deadline(struct lfe_tcp_conn *c, uint64_t at)
{
	if (c->state == ST_FREE || c->app_at == at)
		return;
	c->app_at = at;
	if (at)
		tmr_arm(c->t, c, at);
}

void lfe_tcp_conn_set_evictable(struct lfe_tcp_conn *c, bool evictable)
{
	struct lfe_tcp *t = c->t;
	if (c->state == ST_FREE || c->state == ST_TIME_WAIT)
		return;
	l_del(t->el, c->idx);
	if (evictable)
		l_add_tail(t->el, t->cfg.max_conns, c->idx);
}

void lfe_tcp_conn_set_app(struct lfe_tcp_conn *c, void *app) { c->app = app; }
void *lfe_tcp_conn_app(const struct lfe_tcp_conn *c) { return c->app; }

struct lfe_tcp_handle lfe_tcp_conn_handle(const struct lfe_tcp_conn *c)
{
	return (struct lfe_tcp_handle){.idx = c->idx, .gen = c->gen};
}

struct lfe_tcp_conn *lfe_tcp_conn_get(struct lfe_tcp *t, struct lfe_tcp_handle h)
{
	if (h.idx >= t->fresh)
		return NULL;
	struct lfe_tcp_conn *c = &t->conns[h.idx];
	if (c->gen != h.gen || c->state == ST_FREE || !(c->flags & F_APP))
		return NULL;
	return c;
}

void lfe_tcp_conn_addrs(const struct lfe_tcp_conn *c, uint32_t *laddr, uint16_t *lport,
			uint32_t *raddr, uint16_t *rport)
{
	if (laddr) *laddr = c->laddr;
	if (lport) *lport = c->lport;
	if (raddr) *raddr = c->raddr;
	if (rport) *rport = c->rport;
}

void lfe_tcp_shutdown(struct lfe_tcp *t, uint64_t now)
{
	t->now = now;
	t->shutting = true;
	for (uint32_t i = 0; i < t->fresh; i++) {
		struct lfe_tcp_conn *c = &t->conns[i];
		switch (c->state) {
		case ST_SYN_RCVD:
			if (!(c->flags & F_ACTIVE)) {
				send_rst(t, c);
				conn_free(t, c);
				break;
			}
			/* fall through */
		case ST_SYN_SENT:
			lfe_tcp_abort(c);
			break;
		case ST_ESTABLISHED:
		case ST_CLOSE_WAIT:
			lfe_tcp_close(c);
			break;
		default:
			break;
		}
	}
	lfe_tcp_flush(t, now);
}

const struct lfe_tcp_stats *lfe_tcp_stats(const struct lfe_tcp *t)
{
	return &t->st;
}

void lfe_tcp_mem(const struct lfe_tcp *t, struct lfe_tcp_mem *m)
{
	*m = (struct lfe_tcp_mem){
		.conn_size = sizeof(struct lfe_tcp_conn),
		.per_conn = lfe_tcp_table_per_conn(t),
		.table_bytes = t->table_bytes,
		.bufs = t->cfg.buf_pool,
		.sndbuf_size = t->cfg.sndbuf,
		.rcvbuf_size = t->cfg.rcvbuf,
		.sndbufs_used = lfe_tcp_pool_used(&t->spool),
		.rcvbufs_used = lfe_tcp_pool_used(&t->rpool),
		.sndbufs_peak = t->spool.peak,
		.rcvbufs_peak = t->rpool.peak,
	};
}
