/* net/tcp.c — the per-core user-space TCP; see tcp.h for the contract.
 *
 * Layout (tcp_int.h): one array of connection control blocks and an
 * open-addressing hash of the 4-tuple (tcp_table.c), a two-level timer
 * wheel (tcp_timer.c), and two per-core pools of send rings and receive
 * buffers (tcp_buf.c) that a connection borrows from only while bytes are
 * in flight or held: an idle connection costs its control block and its
 * table links (lfe_tcp_mem). Everything is mapped lazily and set up on
 * first use, so lfe_tcp_new is O(1) in max_conns. The state machine is
 * three files: this one (setup, pool buffers, connection lifetime,
 * timers firing, the per-connection API), tcp_input.c (a segment
 * arrives) and tcp_output.c (segments out, retransmission, the flush,
 * the send API); what they share is in tcp_int.h.
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

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
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

void lfe_tcp_wait_buf(struct lfe_tcp *t, struct lnk *L, struct lfe_tcp_conn *c, uint16_t flag,
		      uint64_t *count)
{
	if (!(c->flags & flag))
		(*count)++;
	c->flags |= flag;
	if (!l_linked(L, c->idx))
		l_add_tail(L, t->cfg.max_conns, c->idx);
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

/* ---- connection lifetime ---- */

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

struct lfe_tcp_conn *lfe_tcp_conn_alloc(struct lfe_tcp *t)
{
	if (!t->n_free && t->fresh == t->cfg.max_conns) {
		uint32_t head = t->cfg.max_conns;
		uint32_t oldest = t->wl[head].next;
		if (oldest != head) {
			lfe_tcp_conn_free(t, &t->conns[oldest]);
		} else if ((oldest = evict_pick(t)) != head) {
			t->st.evicted++;
			lfe_tcp_conn_reset(t, &t->conns[oldest], -ENOSPC);
		} else {
			return NULL;
		}
	}
	struct lfe_tcp_conn *c = lfe_tcp_slot_take(t);
	c->rto = t->cfg.rto_init_us;
	t->st.conns_active++;
	return c;
}

void lfe_tcp_conn_free(struct lfe_tcp *t, struct lfe_tcp_conn *c)
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

void lfe_tcp_conn_close(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason)
{
	detach(t, c, reason);
	lfe_tcp_conn_free(t, c);
}

void lfe_tcp_conn_reset(struct lfe_tcp *t, struct lfe_tcp_conn *c, int reason)
{
	lfe_tcp_send_rst(t, c);
	t->st.conns_reset++;
	lfe_tcp_conn_close(t, c, reason);
}

void lfe_tcp_enter_time_wait(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
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
bool lfe_tcp_conn_open(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
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
		lfe_tcp_conn_reset(t, c, -ECONNREFUSED);
		return false;
	}
	return true;
}

/* ---- timers ---- */

static void fire(struct lfe_tcp *t, struct lfe_tcp_conn *c, uint64_t now)
{
	if (c->state_at && c->state_at <= now) {
		c->state_at = 0;
		if (c->state == ST_TIME_WAIT) {
			lfe_tcp_conn_free(t, c);
			return;
		}
		if (c->state == ST_FIN_WAIT_2) {
			lfe_tcp_conn_reset(t, c, -ETIMEDOUT);
			return;
		}
	}
	if (t->cfg.idle_timeout_us && idle_applies(c) && c->last_act + t->cfg.idle_timeout_us <= now) {
		t->st.idle_closed++;
		lfe_tcp_conn_reset(t, c, -ETIMEDOUT);
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
		lfe_tcp_conn_reset(t, c, -ETIMEDOUT);
		return;
	}
	if (c->app_at && c->app_at <= now) {
		c->app_at = 0;
		if ((c->flags & F_APP) && (!t->ops.on_deadline || t->ops.on_deadline(t->ctx, c) < 0)) {
			t->st.deadline_closed++;
			lfe_tcp_conn_reset(t, c, -ETIME);
			return;
		}
		if (c->state == ST_FREE)
			return;
	}
	if (c->rto_at && c->rto_at <= now) {
		lfe_tcp_on_rto(t, c, now);
		if (c->state == ST_FREE)
			return;
	}
	if ((c->flags & F_ACK_DELAYED) && c->delack_at <= now)
		lfe_tcp_send_ack(t, c);
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
	struct lfe_tcp_conn *c = lfe_tcp_conn_alloc(t);
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
	lfe_tcp_send_syn(t, c);
	c->rto_at = now + c->rto;
	tmr_arm(t, c, c->rto_at);
	return c;
fail:
	if (err)
		*err = e;
	return NULL;
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
				lfe_tcp_send_rst(t, c);
				lfe_tcp_conn_free(t, c);
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


/* The exported counters (tcp.h, common/ctr.h). */
#define C LFE_CTR_C
#define G LFE_CTR_G
#define T struct lfe_tcp_stats
static const struct lfe_ctr tcp_rows[] = {
	LFE_CTR_ROW(T, retransmits, "tcp_retransmits", C, "TCP segments retransmitted."),
	LFE_CTR_ROW(T, conns_reset, "tcp_resets", C, "TCP connections reset."),
	LFE_CTR_ROW(T, syncookies_sent, "tcp_syncookies", C, "SYN cookies sent."),
	LFE_CTR_ROW(T, drop_paws, "tcp_drop_paws", C, "TCP segments dropped by PAWS (RFC 7323)."),
	LFE_CTR_ROW(T, sack_rexmits, "tcp_sack_rexmits", C, "Holes retransmitted from SACK information."),
	LFE_CTR_ROW(T, drop_syn_budget, "tcp_syn_budget_dropped", C, "SYNs dropped while cookies were out."),
	LFE_CTR_ROW(T, pushes, "tcp_pushes", C, "Inline flights sent before the burst's end."),
	LFE_CTR_ROW(T, sndbuf_pool_empty, "tcp_sndbuf_pool_empty", C, "Waits on an empty send buffer pool."),
	LFE_CTR_ROW(T, rcvbuf_pool_empty, "tcp_rcvbuf_pool_empty", C, "Bytes that found no receive buffer (zero window)."),
	LFE_CTR_ROW(T, buf_stall_closed, "tcp_buf_stall_closed", C, "Connections reset for holding a buffer without progress."),
	LFE_CTR_ROW(T, drop_src_cap, "conns_src_capped", C, "SYNs over the source's fair share of connections."),
	LFE_CTR_ROW(T, evicted, "conns_evicted", C, "Evictable connections reset for a new SYN."),
	LFE_CTR_ROW(T, idle_closed, "conns_idle_closed", C, "Connections closed idle."),
	LFE_CTR_ROW(T, drop_table_full, "conns_table_full", C, "SYNs dropped: the connection table was full."),
};
#undef T
const struct lfe_ctr_table lfe_tcp_ctrs = LFE_CTR_TABLE("tcp", struct lfe_tcp_stats, tcp_rows);

#define T struct lfe_tcp_mem
static const struct lfe_ctr tcp_mem_rows[] = {
	LFE_CTR_ROW(T, sndbufs_used, "tcp_sndbufs_used", G, "TCP send buffers held now."),
	LFE_CTR_ROW(T, rcvbufs_used, "tcp_rcvbufs_used", G, "TCP receive buffers held now."),
};
#undef T
const struct lfe_ctr_table lfe_tcp_mem_ctrs = LFE_CTR_TABLE("tcp_mem", struct lfe_tcp_mem, tcp_mem_rows);
