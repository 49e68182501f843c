/* net/tcp_output.c — what lfe_tcp sends: segments built from a
 * connection (with its timestamps and SACK blocks), control segments,
 * the send loop (window, cwnd, the peer's SACKs), fast retransmit and
 * the RTO, the flush that runs the connections waiting to send, and the
 * app's send API. The contract is tcp.h; the choices a peer can see are
 * listed in tcp.c.
 */
#include "net/tcp_int.h"

#include <errno.h>
#include <string.h>

#define CHAL_MAX 10

/* ---- emission ---- */

/* ---- SACK blocks we send (RFC 2018 §4) ----
 *
 * ooo[] stays in sequence order (reassembly wants it); ooo_rank keeps,
 * in 2 bits per range, the order the blocks go out in. */

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

void lfe_tcp_send_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	struct lfe_tcp_seg s;
	seg_of(t, c, &s, c->snd_nxt, LFE_TCP_ACK);
	conn_emit(t, c, &s);
}

void lfe_tcp_send_rst(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	struct lfe_tcp_seg s;
	seg_of(t, c, &s, c->snd_max, LFE_TCP_RST | LFE_TCP_ACK);
	s.win = 0;
	emit(t, &s);
}

void lfe_tcp_send_syn(struct lfe_tcp *t, struct lfe_tcp_conn *c)
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
void lfe_tcp_reply_rst(struct lfe_tcp *t, const struct lfe_tcp_seg *in)
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

void lfe_tcp_challenge_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	if (now - c->chal_at >= 1000000) {
		c->chal_at = now;
		c->chal_n = 0;
	}
	if (c->chal_n >= CHAL_MAX)
		return;
	c->chal_n++;
	t->st.challenge_acks++;
	lfe_tcp_send_ack(t, c);
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

static bool can_send_data(const struct lfe_tcp_conn *c)
{
	switch (c->state) {
	case ST_ESTABLISHED: case ST_CLOSE_WAIT: case ST_FIN_WAIT_1: case ST_CLOSING: case ST_LAST_ACK:
		return true;
	default:
		return false;
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
		lfe_tcp_send_ack(t, c);
	/* Peer window closed with nothing in flight: the RTO timer doubles as
	 * the persist timer and sends a one-byte probe. */
	if (unsent && c->snd_wnd == 0 && c->snd_una == c->snd_max && !c->rto_at)
		c->rto_at = now + c->rto;
	/* rto_at is filed by the caller's tmr_update, which follows every
	 * output (lfe_tcp_flush; on_rto through lfe_tcp_due). */
}

/* Fast retransmit: with SACK every hole below the highest SACKed byte (at
 * most cwnd's worth), else the segment at snd_una. */
void lfe_tcp_fast_rexmit(struct lfe_tcp *t, struct lfe_tcp_conn *c)
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

void lfe_tcp_on_rto(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	c->rto_at = 0;
	if (c->state == ST_SYN_RCVD || c->state == ST_SYN_SENT) {
		if (++c->retries > t->cfg.max_retries) {
			t->st.rto_timeouts++;
			if (c->state == ST_SYN_SENT) {
				lfe_tcp_conn_close(t, c, -ETIMEDOUT);
			} else {
				t->st.conns_reset++;
				lfe_tcp_send_rst(t, c);
				lfe_tcp_conn_close(t, c, -ETIMEDOUT);
			}
			return;
		}
		c->rto = min32(c->rto * 2, t->cfg.rto_max_us);
		t->st.retransmits++;
		lfe_tcp_send_syn(t, c);
		c->rto_at = now + c->rto;
		return;
	}
	if (!can_send_data(c))
		return;
	if (c->snd_una == c->snd_max && (!has_unsent(c) || c->snd_wnd))
		return;
	t->st.rto_timeouts++;
	if (++c->retries > t->cfg.max_retries) {
		lfe_tcp_conn_reset(t, c, -ETIMEDOUT);
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

/* ---- flush ---- */

/* The app may queue bytes: its side is open, no FIN or abort queued. */
static bool app_can_send(const struct lfe_tcp_conn *c)
{
	return (c->state == ST_ESTABLISHED || c->state == ST_CLOSE_WAIT) &&
	       !(c->flags & (F_FIN_Q | F_ABORT));
}

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
			lfe_tcp_conn_reset(t, c, -ECONNABORTED);
			continue;
		}
		output(t, c, now);
		sbuf_done(t, c);
		tmr_update(t, c);
	}
}

/* ---- per connection ---- */

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
			lfe_tcp_wait_buf(t, t->sw, c, F_SSTARVE, &t->st.sndbuf_pool_empty);
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

void lfe_tcp_conn_push(struct lfe_tcp_conn *c)
{
	if (c->state == ST_FREE)
		return;
	c->t->push = true;
	pend(c->t, c);
}

