/* net/tcp_input.c — a segment arrives: admission and the connection
 * lookup, LISTEN (SYNs, SYN cookies), SYN-SENT, then the steps of RFC
 * 9293 §3.10.7.4 for a synchronized connection (input_seg); ACK
 * processing (RTT, congestion window, the peer's SACK blocks), in-order
 * delivery and out-of-order reassembly, FIN. The contract is tcp.h; the
 * choices a peer can see are listed in tcp.c.
 */
#include "net/tcp_int.h"

#include <errno.h>
#include <string.h>

#define FW2_DEFAULT_US 60000000u
#define COOKIE_SHIFT 26         /* cookie clock: 2^26 us ≈ 67 s per count */
#define TS_OPT_LEN 12u          /* NOP NOP TS: what timestamps take of each segment */
#define PAWS_IDLE_US (24ull * 86400 * 1000000)   /* RFC 7323 §5.5 */

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

/* ---- receive path ---- */

/* The receive buffer, taken from the pool if none is held; NULL when the
 * pool is empty (the connection then waits with a zero window). */
static uint8_t *rbuf_get(struct lfe_tcp *t, struct lfe_tcp_conn *c)
{
	if (c->rbuf == NIL) {
		uint32_t i = lfe_tcp_pool_get(&t->rpool);
		if (i == NIL) {
			lfe_tcp_wait_buf(t, t->rw, c, F_RSTARVE, &t->st.rcvbuf_pool_empty);
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
		lfe_tcp_enter_time_wait(t, c, now);
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

/* ACK field of a segment in a synchronized state. False: drop the rest. */
static bool recv_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s,
		     uint32_t len, uint64_t now)
{
	uint32_t ack = s->ack;
	if (seq_gt(ack, c->snd_max) || seq_lt(ack, c->snd_una - c->max_snd_wnd)) {
		t->st.drop_bad_ack++;
		lfe_tcp_challenge_ack(t, c, now);
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
			lfe_tcp_fast_rexmit(t, c);
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
			lfe_tcp_enter_time_wait(t, c, now);
			return true;
		case ST_LAST_ACK:
			lfe_tcp_conn_close(t, c, 0);
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
		lfe_tcp_reply_rst(t, s);
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
	struct lfe_tcp_conn *c = lfe_tcp_conn_alloc(t);
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
	lfe_tcp_send_syn(t, c);
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
			lfe_tcp_reply_rst(t, s);
		return NULL;
	}
	if (src_over(t, s->raddr)) {
		lfe_tcp_reply_rst(t, s);
		return NULL;
	}
	struct lfe_tcp_conn *c = lfe_tcp_conn_alloc(t);
	if (!c) {
		t->st.drop_table_full++;
		lfe_tcp_reply_rst(t, s);
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
	if (!lfe_tcp_conn_open(t, c, now))
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
				lfe_tcp_reply_rst(t, s);
			t->st.drop_bad_ack++;
			return;
		}
		ack_ok = true;
	}
	if (s->flags & LFE_TCP_RST) {
		if (ack_ok) {
			t->st.conns_reset++;
			lfe_tcp_conn_close(t, c, -ECONNREFUSED);
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
		lfe_tcp_send_syn(t, c);
		return;
	}
	c->snd_una = s->ack;
	c->flags |= F_ACK_NOW;
	pend(t, c);
	if (!lfe_tcp_conn_open(t, c, now))
		return;
	tmr_update(t, c);
}

/* ---- SEGMENT ARRIVES (RFC 9293 §3.10.7) ---- */

/* What the steps keep of a segment: len bytes at p from seq, then a FIN
 * if fin. */
struct seg_cut {
	uint32_t seq, len;
	const uint8_t *p;
	bool fin;
};

/* The connection of s's tuple, or NULL. */
static struct lfe_tcp_conn *conn_find(struct lfe_tcp *t, const struct lfe_tcp_seg *s)
{
	uint8_t fl = s->flags;
	struct lfe_tcp_conn *c = lfe_tcp_lookup(t, s->laddr, s->lport, s->raddr, s->rport);
	if (c && c->state == ST_TIME_WAIT && (fl & LFE_TCP_SYN) && !(fl & (LFE_TCP_ACK | LFE_TCP_RST)) &&
	    (seq_gt(s->seq, c->rcv_nxt) ||
	     ((c->flags & F_TS) && (s->opts & LFE_TCP_OPT_TS) && seq_gt(s->tsval, c->ts_recent)))) {
		/* A new incarnation of the tuple: its SYN is above everything of
		 * the old one (sequence, or timestamp: RFC 6191), so TIME_WAIT
		 * has done its job. */
		lfe_tcp_conn_free(t, c);
		c = NULL;
	}
	return c;
}

/* §3.10.7.1-2, CLOSED and LISTEN: no connection. A SYN to a listening
 * port opens one (or gets a cookie); a bare ACK may be a cookie coming
 * back. Returns the connection the cookie made (the segment goes on: it
 * may carry the first request), else NULL (done). */
static struct lfe_tcp_conn *input_listen(struct lfe_tcp *t, const struct lfe_tcp_seg *s, uint64_t now)
{
	uint8_t fl = s->flags;
	if (!listening(t, s->laddr, s->lport) || t->shutting) {
		t->st.drop_no_conn++;
		lfe_tcp_reply_rst(t, s);
		return NULL;
	}
	if (fl & LFE_TCP_RST) {
		t->st.drop_no_conn++;
		return NULL;
	}
	if (fl & LFE_TCP_SYN) {
		if (fl & (LFE_TCP_ACK | LFE_TCP_FIN)) {
			t->st.drop_no_conn++;
			lfe_tcp_reply_rst(t, s);
			return NULL;
		}
		listen_syn(t, s, now);
		return NULL;
	}
	if (!(fl & LFE_TCP_ACK)) {
		t->st.drop_no_conn++;
		return NULL;
	}
	return listen_cookie(t, s, now);
}

/* RST bit (RFC 5961 §3.2): one at rcv_nxt resets; one elsewhere in the
 * window gets a challenge ACK; the rest is dropped. */
static void seg_rst(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s, uint32_t wnd,
		    uint64_t now)
{
	if (s->seq == c->rcv_nxt) {
		t->st.conns_reset++;
		lfe_tcp_conn_close(t, c, -ECONNRESET);
	} else if (seq_in(s->seq, c->rcv_nxt, c->rcv_nxt + max32(wnd, 1))) {
		lfe_tcp_challenge_ack(t, c, now);
	} else {
		t->st.drop_bad_seq++;
	}
}

/* SYN bit (RFC 5961 §4.2): a challenge ACK, unless it is the peer's SYN
 * again in SYN_RCVD (our SYN,ACK was lost). */
static void seg_syn(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s, uint64_t now)
{
	if (c->state == ST_SYN_RCVD && s->seq == c->irs && !(s->flags & LFE_TCP_ACK))
		lfe_tcp_send_syn(t, c);   /* our SYN,ACK was lost */
	else
		lfe_tcp_challenge_ack(t, c, now);
}

/* Check sequence number: PAWS (RFC 7323 §5.3), then §3.10.7.4's window
 * test. A segment outside is acknowledged and dropped (a zero window
 * still takes its ACK); what lies before rcv_nxt or past the window is
 * cut off. False: the segment goes no further. */
static bool seg_check_seq(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s,
			  uint32_t wnd, struct seg_cut *cut, uint64_t now)
{
	bool has_ts = (c->flags & F_TS) && (s->opts & LFE_TCP_OPT_TS);
	if (has_ts && seq_lt(s->tsval, c->ts_recent) && now - c->last_act < PAWS_IDLE_US) {
		/* RFC 7323 §5.3 R1: an old duplicate (or a wrapped sequence
		 * space) — acknowledge, drop. */
		t->st.drop_paws++;
		c->flags |= F_ACK_NOW;
		pend(t, c);
		return false;
	}

	uint32_t seq = s->seq, len = s->len;
	const uint8_t *p = s->payload;
	bool fin = s->flags & LFE_TCP_FIN;
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
		if (!(seq == c->rcv_nxt && !wnd && (s->flags & LFE_TCP_ACK)))
			return false;
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
	cut->seq = seq;
	cut->len = len;
	cut->p = p;
	cut->fin = fin;
	return true;
}

/* ACK field: in SYN_RCVD the handshake's last ACK (ESTABLISHED, the app
 * told), else recv_ack. len: the data the window kept. False: the
 * segment goes no further. */
static bool seg_ack(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct lfe_tcp_seg *s, uint32_t len,
		    uint64_t now)
{
	if (!(s->flags & LFE_TCP_ACK))
		return false;
	if (c->state == ST_SYN_RCVD) {
		if (!seq_gt(s->ack, c->snd_una) || seq_gt(s->ack, c->snd_max)) {
			t->st.drop_bad_ack++;
			lfe_tcp_reply_rst(t, s);
			return false;
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
		if (!lfe_tcp_conn_open(t, c, now))
			return false;
	} else if (!recv_ack(t, c, s, len, now)) {
		return false;
	}
	return !(c->flags & F_ABORT);
}

/* Segment text, then FIN (§3.10.7.4's seventh and eighth steps); in
 * TIME_WAIT only a FIN again, acknowledged, restarting the wait. */
static void seg_text(struct lfe_tcp *t, struct lfe_tcp_conn *c, const struct seg_cut *cut, uint64_t now)
{
	if (c->state == ST_TIME_WAIT) {
		if (cut->fin) {
			c->flags |= F_ACK_NOW;
			pend(t, c);
			c->state_at = now + t->cfg.time_wait_us;
		}
		tmr_update(t, c);
		return;
	}
	recv_data(t, c, cut->seq, cut->p, cut->len, cut->fin, now);
	/* A connection waiting for lfe_tcp_flush (an answer or an ACK to
	 * send: every request) gets its timer there, once, after its output;
	 * the flush comes in the same worker turn, and a deadline set here is
	 * at least a tick ahead, so none is missed meanwhile. */
	if (c->state != ST_FREE && !l_linked(t->pl, c->idx))
		tmr_update(t, c);
}

/* One segment: find its connection (or LISTEN's answer), then the steps
 * of §3.10.7.4 for a synchronized state. RST and SYN are judged before
 * the window test, on their own terms (RFC 5961); URG is not used by
 * LDAP and ignored (the urgent pointer is not even parsed). */
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
	struct lfe_tcp_conn *c = conn_find(t, s);
	if (!c && !(c = input_listen(t, s, now)))
		return;
	if (c->flags & F_ABORT)
		return;
	if (c->state == ST_SYN_SENT) {
		input_syn_sent(t, c, s, now);
		return;
	}
	uint32_t wnd = rwnd(t, c);
	if (fl & LFE_TCP_RST) {
		seg_rst(t, c, s, wnd, now);
		return;
	}
	if (fl & LFE_TCP_SYN) {
		seg_syn(t, c, s, now);
		return;
	}
	struct seg_cut cut;
	if (!seg_check_seq(t, c, s, wnd, &cut, now) || !seg_ack(t, c, s, cut.len, now))
		return;
	seg_text(t, c, &cut, now);
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

