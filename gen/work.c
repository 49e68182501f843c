/* gen/work.c — ldapfe-gen's poll loop (gen.h): frames in, through TCP
 * (net/tcp.h, the client side) and TLS (gen/tlsc.h) to the workloads —
 * connections opened and closed, binds issued and their answers checked,
 * the SYN flood — and frames out through the lcore's tx buffer
 * (dpdk/txbuf.h). The hot path, kept in one file so that it inlines.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpdk/arp.h"
#include "dpdk/mbuf_csum.h"
#include "dpdk/unmapguard.h"
#include "gen/gen.h"
#include "ldap/client.h"

static uint64_t rnd(struct gen *g)
{
	/* xorshift64*: fast, seedable, plenty for picking users. */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1Dull;
}

/* Prefetch the line at p for writing (x86's PREFETCHW: gcc emits it for
 * __builtin_prefetch(p, 1) only with -mprfchw). */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const volatile char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

static void tx_flush(struct gen *g)
{
	if (g->txb.n)
		lfe_txbuf_flush(&g->txb, 0, &g->ct.tx);
}

static void tx_queue(struct gen *g, struct rte_mbuf *m)
{
	lfe_txbuf_push(&g->txb, m, 0, &g->ct.tx);
}

/* A received mbuf done with: kept for gen_tx when it is a plain one of our
 * pool (one segment, direct, ours alone) and there is room, else freed. */
static void rx_done(struct gen *g, struct rte_mbuf *m)
{
	if (g->nspare < BURST && m->pool == g->pool && m->nb_segs == 1 && RTE_MBUF_DIRECT(m) &&
	    rte_mbuf_refcnt_read(m) == 1) {
		rte_pktmbuf_reset(m);
		g->spare[g->nspare++] = m;
	} else {
		rte_pktmbuf_free(m);
	}
}

static int gen_tx(void *ctx, const struct lfe_tcp_seg *seg)
{
	struct gen *g = ctx;

	if (!g->have_peer) {
		g->ct.tx.dropped++;
		return -ENOBUFS;
	}
	struct rte_mbuf *m = g->nspare ? g->spare[--g->nspare] : rte_pktmbuf_alloc(g->pool);
	if (!m) {
		g->ct.tx.dropped++;
		return -ENOBUFS;
	}
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	/* With the port's transmit offload (as the daemon's worker does): the
	 * pseudo-header sum and these flags; the port completes both sums. */
	ssize_t n = (g->port_tx_csum ? lfe_net_build_tcp_offload : lfe_net_build_tcp)(
		p, rte_pktmbuf_tailroom(m), g->peer_mac, g->mac, seg, g->ip_id++);
	if (n < 0) {
		rte_pktmbuf_free(m);
		g->ct.tx.dropped++;
		return -ENOBUFS;
	}
	if (g->port_tx_csum) {
		m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
		m->l2_len = LFE_ETH_HLEN;
		m->l3_len = LFE_IPV4_HLEN;
	}
	m->data_len = m->pkt_len = (uint32_t)n;
	tx_queue(g, m);
	return 0;
}

static struct gconn *conn_of(struct lfe_tcp_conn *tc)
{
	return lfe_tcp_conn_app(tc);
}

/* ---- TLS (--tls): records through gen/tlsc.c, bytes through TCP ---- */

/* Move the connection's pending ciphertext into the TCP send ring. False
 * if some had to stay (the ring is full: with one request outstanding it
 * never is). */
static bool tls_flush(struct gconn *c)
{
	size_t pend;
	uint8_t *p;

	while ((pend = lfe_tlsc_out_pending(c->tls)) > 0) {
		size_t room = lfe_tcp_send_space(c->tc, &p);
		if (room == 0)
			return false;
		lfe_tcp_send_commit(c->tc, lfe_tlsc_out(c->tls, p, room < pend ? room : pend));
	}
	return true;
}

/* The one place where request bytes are handed to a connection: in clear,
 * or as a TLS record. 0, or -ENOBUFS when the send buffer did not take all
 * (one request outstanding never fills it). */
static int conn_send(struct gen *g, struct gconn *c, const uint8_t *pdu, size_t len)
{
	(void)g;
	if (!c->tls)
		return lfe_tcp_send(c->tc, pdu, len) == len ? 0 : -ENOBUFS;
	return lfe_tlsc_write(c->tls, pdu, len) == 0 && tls_flush(c) ? 0 : -ENOBUFS;
}

/* A connection whose entry is still queued (it closed and reopened while
 * waiting) keeps that entry: issue() checks the state when it pops. */
static void ready_push(struct gen *g, struct gconn *c)
{
	if (!c->in_ready) {
		c->in_ready = true;
		q_push(&g->ready, c->idx - g->c_lo);
	}
}

static void send_bind(struct gen *g, struct gconn *c);

/* c may bind again. Unpaced (--rate max, cleartext, measuring) the bind
 * goes at once, from inside the TCP callback (on_open, on_data: the send
 * ring takes it there as the daemon's answers do), carrying the ACK of
 * what just came: the same turn and the same clock as issue() would send
 * it, without the ready queue's push and pop or a delayed-ACK timer filed
 * for nothing. Paced, over TLS, or before the start: queued for issue(). */
static void next_bind(struct gen *g, struct gconn *c)
{
	if (g->unpaced && g->measuring && !g->stopping && !c->tls)
		send_bind(g, c);
	else
		ready_push(g, c);
}

static void leave_wait(struct gen *g, struct gconn *c)
{
	if (c->st == CS_WAIT) {
		c->st = CS_READY;
		g->n_wait--;
	}
}

static int gen_on_open(void *ctx, struct lfe_tcp_conn *tc)
{
	struct gen *g = ctx;
	struct gconn *c = conn_of(tc);

	if (!c)
		return -EINVAL;
	c->st = CS_READY;
	c->opened = true;
	c->answered = 0;
	if (g->tlsc) {
		/* Binds wait for the handshake (gen_on_data pushes it ready). */
		c->tls = lfe_tlsc_conn_new(g->tlsc, c->idx);
		if (!c->tls || !tls_flush(c))
			return -ENOMEM;
		g->flight = true;   /* the ClientHello */
	}
	if (g->measuring || g->o.wl == LFE_WL_HOLD)
		lfe_hist_add(&g->lat_conn, g->now_tsc - c->t_syn);
	g->ct.conns_opened++;
	g->ever_opened++;
	if (++g->n_est > g->est_peak)
		g->est_peak = g->n_est;
	if (g->o.wl == LFE_WL_MIX)
		c->left = 1u + (uint32_t)(rnd(g) % MIX_MAX_BINDS);
	else if (g->o.wl == LFE_WL_SESSION)
		c->left = 1u;
	else if (g->o.wl == LFE_WL_HOLD)
		c->left = c->binder ? UINT32_MAX : 0;
	else
		c->left = g->o.binds_per_conn ? g->o.binds_per_conn : UINT32_MAX;
	if (c->left && !c->tls)
		next_bind(g, c);
	return 0;
}

/* Unbind and FIN in the same flush, so the server closes passively and the
 * TIME_WAIT stays on our side, where it is bounded and recycled. */
void gen_end_session(struct gen *g, struct gconn *c)
{
	uint8_t pdu[16];
	int32_t id = c->msgid == INT32_MAX ? 1 : c->msgid + 1;
	ssize_t n = lfe_gen_unbind_pdu(pdu, sizeof(pdu), id);

	c->msgid = id;
	if (c->tls && !lfe_tlsc_up(c->tls))
		n = 0;   /* mid-handshake: there is nothing to unbind */
	if (n > 0 && conn_send(g, c, pdu, (size_t)n) < 0)
		g->ct.err[E_SEND]++;
	if (c->tls) {
		lfe_tlsc_shutdown(c->tls);   /* close_notify, then FIN */
		tls_flush(c);
	}
	c->st = CS_CLOSING;
	lfe_tcp_close(c->tc);
}

/* The resultCode the outstanding bind of c must get. */
static int32_t want_code(const struct gconn *c)
{
	return c->kind == BK_OK ? LFE_RC_SUCCESS : LFE_RC_INVALID_CREDENTIALS;
}

/* c's outstanding bind was answered (rightly or not): the latency, then
 * the next bind or the end of the session. Inline into take_responses:
 * once a bind. */
static inline __attribute__((always_inline)) void bind_done(struct gen *g, struct gconn *c)
{
	uint64_t dt = g->now_tsc - c->t_req;

	lfe_hist_add(&g->lat_sec, dt);
	leave_wait(g, c);
	c->answered++;
	if (c->left != UINT32_MAX)
		c->left--;
	if (g->stopping || c->left == 0) {
		if (g->o.wl != LFE_WL_HOLD || g->stopping)
			gen_end_session(g, c);
	} else {
		next_bind(g, c);
	}
}

/* Any response but the byte-exact expected answer (take_responses checks
 * that first): decoded in full and judged. */
static void check_resp(struct gen *g, struct gconn *c, const uint8_t *pdu, size_t len)
{
	struct lfe_ldap_resp r;
	int rc = lfe_ldap_decode_resp(pdu, len, &r);

	if (rc == 0 && lfe_ldap_resp_is_notice(&r)) {
		g->ct.err[E_NOTICE]++;
		return;
	}
	if (c->st != CS_WAIT) {
		/* Nothing asked: whatever this is, it is unsolicited. */
		g->ct.err[rc == 0 ? E_MSGID : E_DECODE]++;
		return;
	}
	if (rc == -EPROTONOSUPPORT) {
		g->ct.err[E_OP]++;
	} else if (rc < 0) {
		g->ct.err[E_DECODE]++;
	} else if (r.msgid != c->msgid) {
		g->ct.err[E_MSGID]++;
	} else if (r.op != LFE_OP_BIND_RESP) {
		g->ct.err[E_OP]++;
	} else {
		int32_t want = want_code(c);
		if (r.code != want) {
			g->ct.err[E_RC]++;
			g->ct.rc_unexpected[c->kind]++;
		} else if (want == LFE_RC_SUCCESS) {
			g->ct.binds_ok++;
		} else {
			g->ct.binds_invalid++;
		}
	}
	bind_done(g, c);
}

/* Check every whole response in (data, len); returns the bytes used. The
 * expected answer is recognised by its bytes (gen/pdu.h: what decoding it
 * would conclude, without decoding); anything else is framed and decoded.
 * Inlined into its two callers (cleartext: once a bind). */
static inline __attribute__((always_inline)) size_t take_responses(struct gen *g, struct gconn *c,
								    const uint8_t *data, size_t len)
{
	struct lfe_tcp_conn *tc = c->tc;
	size_t used = 0;

	while (used < len) {
		size_t pl;
		if (c->st == CS_WAIT &&
		    (pl = lfe_gen_bind_resp_match(data + used, len - used, c->msgid, want_code(c))) > 0) {
			if (c->kind == BK_OK)
				g->ct.binds_ok++;
			else
				g->ct.binds_invalid++;
			bind_done(g, c);
			used += pl;
			continue;
		}
		int rc = lfe_ldap_frame(data + used, len - used, 65536, &pl);
		if (rc == -EAGAIN)
			break;
		if (rc < 0) {
			/* Unframeable: the stream is lost, as a server would judge. */
			g->ct.err[E_DECODE]++;
			leave_wait(g, c);
			lfe_tcp_abort(tc);
			return len;
		}
		check_resp(g, c, data + used, pl);
		used += pl;
	}
	return used;
}

struct tls_plain_arg {
	struct gen *g;
	struct gconn *c;
};

static size_t tls_plain(void *arg, const uint8_t *p, size_t n)
{
	struct tls_plain_arg *a = arg;
	return take_responses(a->g, a->c, p, n);
}

/* Ciphertext in: the handshake, or records holding responses. */
static size_t tls_on_data(struct gen *g, struct gconn *c, const uint8_t *data, size_t len)
{
	struct tls_plain_arg a = { g, c };

	if (lfe_tlsc_failed(c->tls))
		return len;   /* closing after a failure, counted once */
	if (!lfe_tlsc_up(c->tls))
		g->flight = true;
	int rc = lfe_tlsc_input(c->tls, data, len, tls_plain, &a);

	tls_flush(c);   /* handshake messages, alerts */
	if (rc < 0) {
		/* Counted once here; gen_on_close does not count it again. */
		g->ct.err[E_TLS]++;
		if (c->st == CS_WAIT)
			c->st = CS_READY;
		lfe_tcp_close(c->tc);
	} else if (rc == LFE_TLSC_UP && c->st == CS_READY) {
		ready_push(g, c);
	}
	return len;
}

static size_t gen_on_data(void *ctx, struct lfe_tcp_conn *tc, const uint8_t *data, size_t len)
{
	struct gen *g = ctx;
	struct gconn *c = conn_of(tc);

	if (!c)
		return len;
	if (c->tls)
		return tls_on_data(g, c, data, len);
	return take_responses(g, c, data, len);
}

static void gen_on_close(void *ctx, struct lfe_tcp_conn *tc, int reason)
{
	struct gen *g = ctx;
	struct gconn *c = conn_of(tc);

	if (!c)
		return;
	if (c->st == CS_CLOSING && reason == 0) {
		/* A session is a connection that bound at least once; persistent
		 * and held connections closed at the end are not sessions. */
		if (c->answered && (!g->stopping || (g->o.wl != LFE_WL_PERSISTENT && g->o.wl != LFE_WL_HOLD)))
			g->ct.sessions++;
	} else if (!c->opened) {
		g->ct.err[E_CONNECT]++;
	} else if (c->tls && lfe_tlsc_failed(c->tls)) {
		/* counted in tls_on_data */
	} else if (c->tls && !lfe_tlsc_up(c->tls) && c->st != CS_CLOSING) {
		lfe_tlsc_peer_gone(c->tls);   /* the server left mid-handshake */
		g->ct.err[E_TLS]++;
	} else if (!(g->stopping && c->st == CS_READY)) {
		g->ct.err[reason ? E_RESET : E_CLOSED]++;
	}
	lfe_tlsc_conn_free(c->tls);
	c->tls = NULL;
	leave_wait(g, c);
	if (c->opened)
		g->n_est--;
	g->n_live--;
	c->tc = NULL;
	c->st = CS_IDLE;
	c->opened = false;
	if (!g->stopping)
		q_push(&g->reconnect, c->idx - g->c_lo);
}

const struct lfe_tcp_ops gen_tcp_ops = {
	.tx = gen_tx,
	.on_open = gen_on_open,
	.on_data = gen_on_data,
	.on_close = gen_on_close,
};

/* The lcore that owns a segment addressed to (ip, port), or -1. */
static int owner_of(const struct genrun *r, uint32_t ip, uint16_t port)
{
	int64_t ci = lfe_gen_tuple_conn(&r->tup, ip, port);
	return ci < 0 ? -1 : (int)((uint64_t)ci / r->per_lcore);
}

static void do_connect(struct gen *g, struct gconn *c)
{
	int err = 0;
	uint32_t per = g->run->tup.per;

	for (uint32_t tries = 0; tries < per; tries++) {
		uint32_t ip;
		uint16_t sport;
		lfe_gen_tuple(&g->run->tup, c->idx, c->t_cur, &ip, &sport);
		c->t_cur = c->t_cur + 1u == per ? 0 : c->t_cur + 1u;
		struct lfe_tcp_conn *tc = lfe_tcp_connect(g->tcp, ip, sport, g->o.dst_ip, g->o.dport,
							  g->now_us, &err);
		if (tc) {
			c->tc = tc;
			c->st = CS_CONNECTING;
			c->t_syn = g->now_tsc;
			g->n_live++;
			lfe_tcp_conn_set_app(tc, c);
			return;
		}
		if (err != -EADDRINUSE)
			break;
	}
	g->ct.err[E_CONNECT]++;
	q_push(&g->reconnect, c->idx - g->c_lo);
}

static uint64_t rnd_cb(void *g)
{
	return rnd(g);
}

/* c's next bind request (message id c->msgid, DN number du, password
 * number u) into its send ring: in clear built in place when the ring's
 * contiguous room takes it (no copy), else built aside and queued (TLS:
 * through the record layer). 0, or -ENOBUFS when the ring did not take it. */
static inline __attribute__((always_inline)) int queue_bind(struct gen *g, struct gconn *c, uint32_t du,
								 uint32_t u)
{
	uint8_t pdu[LFE_GEN_PDU_MAX];
	bool wrong = c->kind == BK_WRONG;

	if (!c->tls) {
		uint8_t *p;
		size_t room = lfe_tcp_send_space(c->tc, &p);
		ssize_t n = room ? lfe_gen_bind_pdu(g->bt, p, room, c->msgid, du, u, wrong) : -ENOSPC;
		if (n > 0) {
			lfe_tcp_send_commit(c->tc, (size_t)n);
			return 0;
		}
	}
	ssize_t n = lfe_gen_bind_pdu(g->bt, pdu, sizeof(pdu), c->msgid, du, u, wrong);
	return n < 0 ? -ENOBUFS : conn_send(g, c, pdu, (size_t)n);
}

/* A bind as a random user of the population (by --dist), right, wrong or
 * unknown by the shares asked: a pre-encoded request (gen/pdu.h), its
 * message id and digits patched in; nothing is formatted here. */
static void send_bind(struct gen *g, struct gconn *c)
{
	uint32_t pick = g->shares ? (uint32_t)(rnd(g) % 100u) : 100u;
	const struct lfe_gen_dist *d = g->dist;
	uint32_t rank = d->kind == LFE_DIST_UNIFORM ? lfe_gen_dist_rank_uniform(d, rnd(g))
						     : lfe_gen_dist_rank(d, rnd_cb, g);
	uint32_t u = g->o.user_base + lfe_gen_dist_user(d, rank);

	if (pick < g->o.wrong_pct)
		c->kind = BK_WRONG;
	else if (pick < g->o.wrong_pct + g->o.unknown_pct)
		c->kind = BK_UNKNOWN;
	else
		c->kind = BK_OK;
	/* Unknown users are numbered just past the population, so the same
	 * format yields a well-formed DN that the store does not hold. */
	uint32_t du = c->kind == BK_UNKNOWN ? u + g->o.users : u;
	c->msgid = c->msgid >= INT32_MAX - 1 ? 1 : c->msgid + 1;
	if (queue_bind(g, c, du, u) < 0) {
		/* One outstanding request never fills a send buffer: treat as broken. */
		g->ct.err[E_SEND]++;
		lfe_tcp_abort(c->tc);
		return;
	}
	c->st = CS_WAIT;
	g->n_wait++;
	c->t_req = g->now_tsc;
	g->ct.binds_sent++;
}

/* The flood: up to FLOOD_BATCH SYNs from the next tuples (each lcore
 * takes every nl-th), paced by --flood-rate when given, in a tx burst of
 * their own after the poll's other frames, and only once all of those
 * went out (the workload's frames wait for ring room, never the flood). Sequence numbers
 * are random; the options are those a Linux client offers, so the server's
 * cookies carry them. No state is kept: nothing here answers later. */
static void flood(struct gen *g)
{
	struct rte_mbuf *m[FLOOD_BATCH];
	uint32_t n = FLOOD_BATCH, built = 0;

	if (g->txb.n)
		return;   /* the workload's frames the ring refused go first */

	if (g->o.flood_rate > 0) {
		refill(&g->flood_tokens, &g->flood_last, g->flood_per_tsc, g->flood_cap, g->now_tsc);
		n = g->flood_tokens < FLOOD_BATCH ? (uint32_t)g->flood_tokens : FLOOD_BATCH;
		g->flood_tokens -= n;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct lfe_tcp_seg s = {
			.raddr = g->o.dst_ip, .rport = g->o.dport, .seq = (uint32_t)rnd(g),
			.win = 64240, .flags = LFE_TCP_SYN, .mss = 1460, .wscale = 7,
			.opts = LFE_TCP_OPT_TS | LFE_TCP_OPT_SACK_PERM, .tsval = (uint32_t)(g->now_us / 1000u),
		};
		lfe_gen_tuple_at(&g->run->ftup, g->flood_next, &s.laddr, &s.lport);
		g->flood_next += g->run->nl;
		if (!(m[built] = rte_pktmbuf_alloc(g->pool)))
			break;
		ssize_t len = lfe_net_build_tcp(rte_pktmbuf_mtod(m[built], uint8_t *),
						rte_pktmbuf_tailroom(m[built]), g->peer_mac, g->mac, &s, g->ip_id++);
		if (len < 0) {
			rte_pktmbuf_free(m[built]);
			break;
		}
		m[built]->data_len = m[built]->pkt_len = (uint32_t)len;
		built++;
	}
	uint16_t sent = built ? rte_eth_tx_burst(g->port_id, g->q, m, (uint16_t)built) : 0;
	g->ct.flood_syns += sent;
	g->ct.flood_tx_drops += built - sent;
	if (sent < built)
		rte_pktmbuf_free_bulk(&m[sent], built - sent);
}

/* The flood: what came back for one of its tuples. A SYN-ACK is counted and,
 * with --flood-reply rst, answered with the RST a host that never sent
 * the SYN would send (RFC 9293 3.10.7.1: seq = its ack). */
static void flood_input(struct gen *g, const struct lfe_tcp_seg *s)
{
	if (s->flags & LFE_TCP_RST) {
		g->ct.flood_rsts++;
	} else if ((s->flags & (LFE_TCP_SYN | LFE_TCP_ACK)) == (LFE_TCP_SYN | LFE_TCP_ACK)) {
		g->ct.flood_synacks++;
		if (g->o.flood_rst) {
			struct lfe_tcp_seg r = {
				.laddr = s->laddr, .raddr = s->raddr, .lport = s->lport, .rport = s->rport,
				.seq = s->ack, .flags = LFE_TCP_RST, .wscale = -1,
			};
			gen_tx(g, &r);
		}
	}
}

static void issue(struct gen *g)
{
	uint32_t i;

	if (!g->have_peer)
		return;     /* ARP first: a SYN now would only be dropped */
	if (g->o.wl == LFE_WL_SYNFLOOD)
		return;    /* the flood leaves from poll_once */
	if (g->o.syn_rate > 0)
		refill(&g->syn_tokens, &g->syn_last, g->syn_per_tsc, g->syn_cap, g->now_tsc);
	while (g->reconnect.n && !g->stopping) {
		if (g->o.wl == LFE_WL_HOLD && g->n_live - g->n_est >= HOLD_HALF_OPEN)
			break;
		if (g->o.syn_rate > 0) {
			if (g->syn_tokens < 1.0)
				break;
			g->syn_tokens -= 1.0;
		}
		q_pop(&g->reconnect, &i);
		struct gconn *c = &g->c[g->c_lo + i];
		do_connect(g, c);
		if (c->st == CS_IDLE)
			break;      /* every port busy: try again next turn */
	}
	if (g->stopping || !g->measuring)
		return;
	if (g->o.rate > 0)
		refill(&g->tokens, &g->tok_last, g->tok_per_tsc, g->tok_cap, g->now_tsc);
	while (g->ready.n) {
		if (g->o.rate > 0) {
			if (g->tokens < 1.0)
				break;
			g->tokens -= 1.0;
		}
		q_pop(&g->ready, &i);
		struct gconn *c = &g->c[g->c_lo + i];
		c->in_ready = false;
		if (c->st == CS_READY && c->tc && (!c->tls || lfe_tlsc_up(c->tls)))
			send_bind(g, c);
	}
}

static bool is_flood_ip(const struct gen *g, uint32_t ip)
{
	return g->o.flood_lo && ip >= g->o.flood_lo && ip <= g->o.flood_hi;
}

static bool is_our_ip(const struct gen *g, uint32_t ip)
{
	return ip == g->o.src_ip || (g->o.src_lo && ip >= g->o.src_lo && ip <= g->o.src_hi) ||
	       is_flood_ip(g, ip);
}

/* An ARP frame from `spa` asking `tpa` (op 1) or answering (op 2). */
static void send_arp(struct gen *g, uint16_t op, const uint8_t eth_dst[LFE_ETH_ALEN],
		     const uint8_t tha[LFE_ETH_ALEN], uint32_t spa, uint32_t tpa)
{
	struct lfe_arp_pkt a = { .op = op, .spa = spa, .tpa = tpa };
	struct rte_mbuf *m;

	memcpy(a.sha, g->mac, LFE_ETH_ALEN);
	memcpy(a.tha, tha, LFE_ETH_ALEN);
	if (lfe_dpdk_arp_frame(g->pool, &a, eth_dst, &m) == 0)
		tx_queue(g, m);
}

static const uint8_t bcast[LFE_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zero_mac[LFE_ETH_ALEN];

/* ARP from the next hop tells its MAC; a request for one of our addresses
 * is answered in m. True when m is that answer (queued to send). */
static bool handle_arp(struct gen *g, struct rte_mbuf *m, const struct lfe_net_pkt *pkt)
{
	const struct lfe_arp_pkt *a = &pkt->arp;

	if (a->spa == g->next_hop) {
		memcpy(g->peer_mac, a->sha, LFE_ETH_ALEN);
		g->have_peer = true;
	}
	if (a->op != 1 || !is_our_ip(g, a->tpa) || lfe_dpdk_arp_answer(m, a, g->mac) < 0)
		return false;
	tx_queue(g, m);
	return true;
}

/* The lcore index owning a received frame, or -1 when it is no TCP segment
 * for one of our tuples (then it is handled here: ARP, or dropped). Reads
 * only the headers' fixed offsets: lfe_net_parse checks everything later. */
static int frame_owner(const struct genrun *r, const uint8_t *f, size_t len)
{
	if (len < 14 + 20 + 20 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4 || f[23] != 6)
		return -1;
	size_t ihl = (size_t)(f[14] & 0x0fu) * 4u;
	if (ihl < 20 || len < 14 + ihl + 4)
		return -1;
	uint32_t daddr = (uint32_t)f[30] << 24 | (uint32_t)f[31] << 16 | (uint32_t)f[32] << 8 | f[33];
	const uint8_t *th = f + 14 + ihl;
	return owner_of(r, daddr, (uint16_t)(th[2] << 8 | th[3]));
}

/* The port's receive checksum verdicts (net.h), where it was asked for them. */
static inline unsigned port_verdict(const struct gen *g, const struct rte_mbuf *m)
{
	return g->port_rx_csum ? lfe_mbuf_rx_csum(m) : 0;
}

/* One segment into TCP. Replies otherwise wait for the end of the turn,
 * leaving in one tx burst with the rest of its frames; but a turn of TLS
 * handshakes takes a burst's worth of them (32 frames, ~1 ms), and
 * holding every flight until then makes both sides take turns instead of
 * working at once: what a handshake step made (and the bind issue()
 * queues when it finished one) leaves as soon as it is made, as
 * independent clients' would. */
static void tcp_in(struct gen *g, const struct lfe_tcp_seg *seg)
{
	lfe_tcp_input(g->tcp, seg, g->now_us);
	if (g->flight) {
		g->flight = false;
		issue(g);
		lfe_tcp_flush(g->tcp, g->now_us);
		tx_flush(g);
	}
}

/* noinline: profilers count the turns that received something as its calls
 * (tests/bench/callgrind-gen.sh); called only with n > 0. */
__attribute__((noinline)) static void input_frames(struct gen *g, struct rte_mbuf **rx, uint16_t n,
						    bool handed)
{
	struct genrun *r = g->run;

	/* On a zero-copy memif port (memif's client) every frame lies in memory
	 * the server just wrote, and each mbuf kept (rx_done) carries a request
	 * back to it: the whole burst's lines are fetched for writing first, so
	 * that their trips between the cores overlap instead of each stalling
	 * the parse, and the build later finds them ours (a plain prefetch
	 * would share them with the server, and the first store would make a
	 * second trip). Three lines: a response, and the request built in the
	 * same mbuf. In copy mode the lines are already here; ~6 instructions
	 * a frame. */
	for (uint16_t k = 0; k < n; k++) {
		const uint8_t *f = rte_pktmbuf_mtod(rx[k], const uint8_t *);
		prefetch_w(f);
		prefetch_w(f + 64);
		prefetch_w(f + 128);
	}
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = rx[k];
		struct lfe_net_pkt pkt;
		if (m->nb_segs != 1) {
			g->ct.rx_drops++;
			rte_pktmbuf_free(m);
			continue;
		}
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		if (!handed && r->nl > 1) {
			int owner = frame_owner(r, f, m->data_len);
			if (owner >= 0 && (uint32_t)owner != g->lc) {
				if (rte_ring_mp_enqueue(r->handoff[owner], m) == 0) {
					g->ct.handed_off++;
				} else {
					g->ct.handoff_drops++;
					rte_pktmbuf_free(m);
				}
				continue;
			}
		}
		int kind = lfe_gen_rxcsum_parse(&g->rxs, &g->ct.rxc, f, m->data_len, port_verdict(g, m), &pkt);
		if (kind == LFE_NET_TCP && is_flood_ip(g, pkt.daddr))
			flood_input(g, &pkt.seg);
		else if (kind == LFE_NET_TCP && is_our_ip(g, pkt.daddr))
			tcp_in(g, &pkt.seg);
		else if (kind == LFE_NET_ARP && handle_arp(g, m, &pkt))
			continue;   /* m is the answer */
		else if (kind != LFE_NET_ARP)
			g->ct.rx_drops++;
		rx_done(g, m);
	}
}

/* One turn of the loop: receive (own queue, then what other lcores handed
 * over), feed TCP, issue, flush: one tx burst. noinline: a symbol for
 * profilers (callgrind --toggle-collect=gen_poll_once). */
__attribute__((noinline)) void gen_poll_once(struct gen *g)
{
	struct rte_mbuf *rx[BURST];
	struct genrun *r = g->run;
	uint16_t n = 0;

	/* Between turns the lcore holds nothing of the port's (unmapguard.h). */
	lfe_unmap_guard_turn(g->lc, &g->guard_turn);
	clock_tick(g);
	uint64_t t0 = g->now_tsc, tx0 = g->ct.tx.frames + g->ct.tx.dropped;
	if (g->busy_t0) {
		/* The last turn was busy: it lasted until this one began (the
		 * loop's few instructions between turns with it). */
		g->ct.busy_cycles += t0 - g->busy_t0;
		g->busy_t0 = 0;
	}
	uint32_t q_lo = g->rx_all_queues ? 0 : g->q, q_end = g->rx_all_queues ? r->nl : g->q + 1u;
	/* With a flood, the server's answers to it come back as fast as the
	 * SYNs leave, in the same ring as the workload's responses: drain up to
	 * FLOOD_RX_BURSTS bursts a poll, or the ring overflows on the server's
	 * side and the workload's responses are lost with the flood's. */
	uint32_t rounds = g->o.flood_lo ? FLOOD_RX_BURSTS : 1u;
	for (uint32_t q = q_lo; q < q_end; q++) {
		for (uint32_t b = 0; b < rounds; b++) {
			uint16_t k = rte_eth_rx_burst(g->port_id, (uint16_t)q, rx, BURST);
			g->ct.rx_frames += k;
			if (k == 0)
				break;
			input_frames(g, rx, k, false);
			n = (uint16_t)(n + k);
			if (k < BURST)
				break;
		}
	}
	if (r->nl > 1) {
		unsigned k = rte_ring_sc_dequeue_burst(r->handoff[g->lc], (void **)rx, BURST, NULL);
		if (k)
			input_frames(g, rx, (uint16_t)k, true);
		n = (uint16_t)(n + k);
	}
	issue(g);
	lfe_tcp_flush(g->tcp, g->now_us);
	lfe_tcp_timers(g->tcp, g->now_us);
	tx_flush(g);
	if (g->o.flood_lo && g->measuring && !g->stopping && g->have_peer)
		flood(g);
	/* Busy: the turn received or sent something (what the daemon's worker
	 * counts as busy too), so busy cycles per bind compare across sides.
	 * Timed to the next turn's clock read, not a read of its own here: a
	 * TSC read costs tens of ns under a hypervisor, and a busy turn at
	 * full speed carries only a few binds. */
	if (n || g->ct.tx.frames + g->ct.tx.dropped != tx0) {
		g->busy_t0 = t0;
		g->ct.busy_turns++;
	}
}

/* Make what the main lcore may read visible (relaxed: figures only). */
void gen_publish(struct gen *g)
{
	__atomic_store_n(&g->pub.binds, binds_of(&g->ct), __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.sessions, g->ct.sessions, __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.errors, errors_total(&g->ct), __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.established, g->n_est, __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.opened, g->ever_opened, __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.connect_errs, g->ct.err[E_CONNECT], __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.syns, g->ct.flood_syns, __ATOMIC_RELAXED);
	__atomic_store_n(&g->pub.synacks, g->ct.flood_synacks, __ATOMIC_RELAXED);
}

void gen_poll_pub(struct gen *g)
{
	gen_poll_once(g);
	if (g->now_tsc >= g->next_pub) {
		gen_publish(g);
		g->next_pub = g->now_tsc + g->hz / 100u;
	}
}

/* Tell the server every source address of ours (an ARP request from each,
 * as a host's kernel would send): it learns them without asking back. */
static void announce_range(struct gen *g, uint32_t lo, uint32_t hi)
{
	for (uint32_t i = 0; lo && i <= hi - lo && i < 4096u; i++) {
		send_arp(g, 1, bcast, zero_mac, lo + i, g->next_hop);
		if (g->txb.n >= TXBUF / 2)
			tx_flush(g);
	}
	tx_flush(g);
}

void gen_announce(struct gen *g)
{
	announce_range(g, g->o.src_lo, g->o.src_hi);
	if (g->o.flood_lo != g->o.src_lo)
		announce_range(g, g->o.flood_lo, g->o.flood_hi);
}

/* Ask the next hop for its MAC, from our address spa. */
void gen_arp_request(struct gen *g, uint32_t spa)
{
	send_arp(g, 1, bcast, zero_mac, spa, g->next_hop);
}
