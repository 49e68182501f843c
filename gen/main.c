/* gen/main.c — ldapfe-gen, an LDAP simple-bind load generator on DPDK.
 *
 *   ldapfe-gen [EAL args] -- --port DEV --src-ip A/len --dst-ip B [options]
 *
 * Each generator lcore (--lcores, one by default) drives its own share of
 * the connections on its own queue pair: the client side of
 * net/tcp.c (lfe_tcp_connect), frames from net/net.c, bind
 * requests pre-encoded at start (gen/pdu.h), users drawn by gen/dist.h.
 * Each connection owns a fixed slice of the (source address, source port)
 * space, so the lcore that owns a received segment follows from its
 * destination; a segment that arrives on another lcore's queue (RSS or
 * af_packet fanout hashing differently) is handed over through a ring.
 * Each connection has at most one bind outstanding; N connections give the
 * concurrency. The hold workload opens N connections at --syn-rate, keeps
 * them, and binds on the --bind-frac of them at --rate. A SYN flood
 * (--workload synflood alone, or --flood-ips beside any workload, on the
 * same lcores) sends bare SYNs (options as Linux offers them) from every
 * tuple of the flood's addresses × --sport-range in turn, at --flood-rate
 * or as fast as the port takes them, never completes a handshake, and
 * counts the SYN-ACKs (cookies, once the server's half-open budget is
 * spent) and RSTs that come back. Every response is checked against what was asked (message
 * id, operation, result code 0 or 49 as the chosen user/password implies)
 * and mismatches are counted by kind. Latency is rdtsc from the moment the
 * bind is queued on the connection to the moment its response is decoded.
 *
 * Exit status: 0 when the run completed without a mismatch, 1 when it
 * completed with errors, 2 when it could not run (no link, no ARP answer, no
 * SYN-ACK, bad options).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_launch.h>
#include <rte_memory.h>
#include <rte_ring.h>

#include "dpdk/mbuf_csum.h"
#include "dpdk/port.h"
#include "dpdk/txbuf.h"
#include "dpdk/arp.h"
#include "net/net.h"
#include "net/tcp.h"
#include "dpdk/unmapguard.h"
#include "gen/dist.h"
#include "gen/hist.h"
#include "gen/opts.h"
#include "gen/tlsc.h"
#include "gen/tuples.h"
#include "gen/pdu.h"
#include "gen/rxcsum.h"
#include "ldap/client.h"

#define BURST 32u
/* Everything one poll emits leaves in one tx burst (flushed early only if
 * this fills). */
#define TXBUF 512u
#define HANDOFF_RING 4096u
/* hold: handshakes in flight per lcore at most. A server that falls behind
 * would otherwise fill its half-open table and answer with SYN cookies, and
 * the last ACK of a cookie handshake, if lost, leaves an idle connection
 * open on this side only (nothing is ever sent on it to tell). */
#define HOLD_HALF_OPEN 512u
#define NB_DESC 1024u
#define POOL_SIZE 16383u
#define LINK_WAIT_MS 10000u
#define DRAIN_MS 3000u
#define CLOSE_MS 2000u
#define MIX_MAX_BINDS 8u
/* The flood: SYNs per poll at most, one rx burst's worth (the SYN-ACKs come
 * back at the rate the SYNs leave). */
#define FLOOD_BATCH BURST
#define FLOOD_RX_BURSTS 8u

/* The signal handler can reach nothing else. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

enum cstate { CS_IDLE, CS_CONNECTING, CS_READY, CS_WAIT, CS_CLOSING };
enum bkind { BK_OK, BK_WRONG, BK_UNKNOWN };

enum err_kind {
	E_MSGID, E_OP, E_RC, E_DECODE, E_NOTICE, E_RESET, E_CLOSED, E_CONNECT, E_SEND, E_TLS, E_MAX
};
static const char *const err_names[E_MAX] = {
	"msgid", "op", "result_code", "decode", "notice_of_disconnection", "reset", "closed",
	"connect", "send_space", "tls",
};

struct gconn {
	struct lfe_tcp_conn *tc;
	uint32_t idx;
	uint32_t t_cur;           /* its tuple in use (gen/tuples.h) */
	uint8_t st, kind;
	int32_t msgid;
	uint32_t left;            /* binds still to make on this connection (mix) */
	uint32_t answered;        /* responses on this connection */
	uint64_t t_req;           /* tsc when the outstanding bind was queued */
	uint64_t t_syn;           /* tsc when the connection was opened */
	bool opened;              /* reached ESTABLISHED */
	bool in_ready;            /* queued in g->ready (at most once) */
	struct lfe_tlsc_conn *tls;   /* --tls: from on_open to on_close */
	bool binder;              /* hold: this connection binds */
};

struct counters {
	uint64_t binds_sent, binds_ok, binds_invalid, sessions, conns_opened;
	uint64_t err[E_MAX];
	uint64_t rc_unexpected[3];     /* by kind asked: ok, wrong, unknown */
	struct lfe_txbuf_stats tx;     /* frames sent; dropped: refused by the port or not built */
	uint64_t rx_frames, rx_drops;
	struct lfe_gen_rxcsum_ct rxc;  /* received checksums: checked, by the port, bad */
	uint64_t busy_cycles;          /* polls that received or sent something */
	uint64_t busy_turns;           /* and how many such polls */
	uint64_t handed_off, handoff_drops;   /* segments passed to their owner lcore */
	/* the flood: SYNs the port took, SYNs it refused (ring full), answers back */
	uint64_t flood_syns, flood_tx_drops, flood_synacks, flood_rsts;
	/* The lcore thread's CPU time in the measured window and the times it
	 * was preempted. A poll loop's CPU time is the whole window less what
	 * other threads ran on its CPU; busy_cycles are wall-clock and count
	 * such time too when it falls in a busy poll (the server's crypto
	 * thread in tls-bench shares the generator's CPU). */
	uint64_t cpu_ns, preempted;
};
#define N_COUNTERS (sizeof(struct counters) / sizeof(uint64_t))
_Static_assert(sizeof(struct counters) % sizeof(uint64_t) == 0, "counters are all uint64_t");

/* A FIFO of connection indices (each connection is in it at most once). */
struct idxq {
	uint32_t *v;
	uint32_t cap, head, n;
};

static void q_push(struct idxq *q, uint32_t i)
{
	if (q->n == q->cap)   /* cannot happen: each conn is queued at most once */
		return;
	uint32_t at = q->head + q->n;   /* head < cap and n < cap: no division to wrap */
	q->v[at >= q->cap ? at - q->cap : at] = i;
	q->n++;
}

static bool q_pop(struct idxq *q, uint32_t *i)
{
	if (!q->n)
		return false;
	*i = q->v[q->head];
	q->head = q->head + 1u == q->cap ? 0 : q->head + 1u;
	q->n--;
	return true;
}

enum phase { PH_CONNECT = 0, PH_MEASURE = 1, PH_STOP = 2 };

/* What a worker lcore publishes for the main lcore's per-second line and
 * phase decisions: written with relaxed atomic stores by the owner only. */
struct pub {
	uint64_t binds, sessions, errors, established, opened, connect_errs;
	uint64_t syns, synacks;
};

struct genrun;

/* One generator lcore: its queue pair, its connections, its TCP stack and
 * its counters. Only its own lcore touches it (apart from `pub`). */
struct gen {
	struct lfe_gen_opts o;    /* copies of shared, read-only settings */
	struct genrun *run;
	uint64_t cpu0_ns, ivcsw0; /* the thread's CPU time and preemptions at the start */
	uint16_t port_id, q;      /* our queue pair */
	uint32_t lc;              /* index among the generator lcores */
	uint64_t guard_turn;      /* lfe_unmap_guard_turn's counter (slot lc) */
	struct rte_mempool *pool;
	uint8_t mac[LFE_ETH_ALEN];
	uint8_t peer_mac[LFE_ETH_ALEN];
	bool have_peer;
	bool rx_all_queues;       /* ARP phase: the answer may land on any queue */
	bool port_rx_csum;        /* the port gives receive checksum verdicts */
	bool port_tx_csum;        /* the port finishes transmit checksums */
	struct lfe_gen_rxcsum rxs;   /* which frames are checked in software */
	uint32_t next_hop;
	uint16_t ip_id;
	struct lfe_txbuf txb;     /* our queue's (dpdk/txbuf.h), slots in tx */
	struct rte_mbuf *tx[TXBUF];
	/* Received mbufs done with, reset, for the next frames sent (a
	 * persistent bind receives one and sends one): no mempool round trip. */
	struct rte_mbuf *spare[BURST];
	uint16_t nspare;

	struct lfe_tcp *tcp;
	struct lfe_tlsc *tlsc;    /* NULL: cleartext (the run's: --tls takes one lcore) */
	struct gconn *c;          /* the run's array; ours are c_lo .. c_hi-1 */
	uint32_t c_lo, c_hi;
	struct idxq ready, reconnect;
	/* A TLS handshake step ran in this segment's callbacks (tens of µs):
	 * its flight, and the first bind when it finished, leave before the
	 * next frame is handled (tcp_in). */
	bool flight;
	bool measuring;           /* binds are issued only between start and end */
	bool unpaced;             /* --rate max, binds only (next_bind sends at once) */
	bool stopping;            /* no new binds or connections */
	uint64_t rng;
	bool shares;              /* wrong or unknown shares asked */
	const struct lfe_gen_dist *dist;
	const struct lfe_gen_bindtab *bt;

	uint64_t hz, us_mult, now_tsc, now_us;
	uint64_t busy_t0;         /* start of the last turn when it was busy, else 0 */
	double tokens, tok_per_tsc, tok_cap;
	uint64_t tok_last;
	double syn_tokens, syn_per_tsc, syn_cap;
	uint64_t syn_last;

	uint32_t n_live;          /* connections with a TCB (connecting or open) */
	uint32_t n_est;           /* established now */
	uint32_t n_wait;          /* binds outstanding */
	uint32_t est_peak;
	uint32_t close_cur;       /* paced close: next connection to close */
	uint64_t flood_next;      /* flood: next tuple number (gen/tuples.h) */
	double flood_tokens, flood_per_tsc, flood_cap;
	uint64_t flood_last;
	uint64_t next_pub;

	struct counters ct;
	/* Bind latency: each answer is added to lat_sec only (one histogram
	 * per bind); the per-second line (lcore 0) reads lat_sec, then folds
	 * it into lat. The window's whole is lat + lat_sec (totals_of). */
	struct lfe_hist lat, lat_sec;
	struct lfe_hist lat_conn;     /* SYN to ESTABLISHED */
	uint64_t ever_opened;
	struct pub pub;
};

/* What every lcore shares: set up before the workers start, read-only
 * after, except `phase` (main writes) and the handoff rings. */
struct genrun {
	struct lfe_gen_opts o;
	struct lfe_tlsc *tlsc;    /* --tls/--starttls: one lcore only (opts.c) */
	uint32_t nl;
	struct gen *lc[LFE_GEN_MAX_LCORES];
	struct rte_ring *handoff[LFE_GEN_MAX_LCORES];
	uint32_t per_lcore;       /* connections per lcore (the last may have fewer) */
	struct lfe_gen_tuples tup;   /* each connection's (address, port) tuples */
	struct lfe_gen_tuples ftup;  /* the flood's tuples (when o.flood_lo) */
	int phase;                /* enum phase, atomic */
	struct lfe_gen_dist dist;
	struct lfe_gen_bindtab *bt;
	struct gconn *c;
};

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
static void end_session(struct gen *g, struct gconn *c)
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
			end_session(g, c);
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

static const struct lfe_tcp_ops gen_tcp_ops = {
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

/* Token bucket: refill from the clock, capped. */
static void refill(double *tokens, uint64_t *last, double per_tsc, double cap, uint64_t now)
{
	*tokens += (double)(now - *last) * per_tsc;
	*last = now;
	if (*tokens > cap)
		*tokens = cap;
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

static void clock_tick(struct gen *g)
{
	g->now_tsc = rte_rdtsc();
	g->now_us = (uint64_t)(((unsigned __int128)g->now_tsc * g->us_mult) >> 32);
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
 * profilers (callgrind --toggle-collect=poll_once). */
__attribute__((noinline)) static void poll_once(struct gen *g)
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
	 * TSC read costs ~22 ns on the benchmark VM, and a busy turn at full
	 * speed carries only a few binds. */
	if (n || g->ct.tx.frames + g->ct.tx.dropped != tx0) {
		g->busy_t0 = t0;
		g->ct.busy_turns++;
	}
}

static uint64_t errors_total(const struct counters *c)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < E_MAX; k++)
		n += c->err[k];
	return n;
}

static uint64_t binds_of(const struct counters *c)
{
	return c->binds_ok + c->binds_invalid + c->err[E_RC];
}

/* Make what the main lcore may read visible (relaxed: figures only). */
static void publish(struct gen *g)
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

static void poll_pub(struct gen *g)
{
	poll_once(g);
	if (g->now_tsc >= g->next_pub) {
		publish(g);
		g->next_pub = g->now_tsc + g->hz / 100u;
	}
}

static int port_setup(struct genrun *r, struct gen *g)
{
	struct lfe_dpdk_port p;
	char err[200];
	int rc;

	rc = lfe_dpdk_port_find(g->o.port, &p, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ldapfe-gen: --port: %s\n", err);
		return rc;
	}
	g->port_id = p.port_id;
	if (p.max_rxq < r->nl || p.max_txq < r->nl) {
		fprintf(stderr, "ldapfe-gen: --lcores %u needs %u queue pairs, port %s (%s) has %u rx / %u tx "
				"(af_packet: qpairs=%u in the vdev string; memif: the server must offer as many)\n",
			r->nl, r->nl, p.name, p.driver, p.max_rxq, p.max_txq, r->nl);
		return -EINVAL;
	}
	g->pool = rte_pktmbuf_pool_create("gen_mbuf", POOL_SIZE * r->nl, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!g->pool) {
		fprintf(stderr, "ldapfe-gen: mbuf pool: %s\n", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	/* Checksum offload where the port has it: receive verdicts (no
	 * software sum, gen/rxcsum.h) and transmit sums finished by the port.
	 * No RSS: each lcore hands what is not its own to its owner. */
	const struct lfe_dpdk_port_conf conf = { .n_queues = (uint16_t)r->nl, .csum = true, .pool = g->pool };
	rc = lfe_dpdk_port_start(&p, &conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ldapfe-gen: port %s (%s): %s\n", p.name, p.driver, err);
		return rc;
	}
	g->port_rx_csum = p.rx_csum;
	g->port_tx_csum = p.tx_csum;
	memcpy(g->mac, p.mac, LFE_ETH_ALEN);
	printf("ldapfe-gen: port %s (%s) mac " RTE_ETHER_ADDR_PRT_FMT ", %u queue pair%s, checksums: rx %s, tx %s\n",
	       p.name, p.driver, RTE_ETHER_ADDR_BYTES((const struct rte_ether_addr *)g->mac), r->nl,
	       r->nl > 1 ? "s" : "",
	       g->port_rx_csum ? "port" : g->o.rx_csum_all ? "software (all)" : "software (a sample of ~1 in 8)",
	       g->port_tx_csum ? "port" : "software");
	return 0;
}

static double us_of(const struct gen *g, uint64_t cyc)
{
	return (double)cyc * 1e6 / (double)g->hz;
}

static uint64_t pub_sum(const struct genrun *r, size_t off)
{
	uint64_t n = 0;
	for (uint32_t j = 0; j < r->nl; j++)
		n += __atomic_load_n((const uint64_t *)((const char *)&r->lc[j]->pub + off), __ATOMIC_RELAXED);
	return n;
}
#define PUB_SUM(r, field) pub_sum(r, offsetof(struct pub, field))

/* The per-second line. With one lcore its own counters; with several the
 * sums the lcores published (at most 10 ms old) and lcore 0's percentiles. */
static void report_second(struct gen *g, double t, uint64_t *prev_binds, uint64_t *prev_sess, double dt)
{
	if (g->o.wl == LFE_WL_SYNFLOOD) {
		/* The same two slots carry SYNs sent and SYN-ACKs back. */
		if (dt < 1e-3)
			dt = 1e-3;
		publish(g);
		uint64_t syns = PUB_SUM(g->run, syns), acks = PUB_SUM(g->run, synacks);
		printf("ldapfe-gen: t=%.0fs syn/s=%.0f synack/s=%.0f\n", t, (double)(syns - *prev_binds) / dt,
		       (double)(acks - *prev_sess) / dt);
		*prev_binds = syns;
		*prev_sess = acks;
		return;
	}

	struct genrun *r = g->run;
	const struct lfe_tcp_stats *ts = lfe_tcp_stats(g->tcp);
	uint64_t binds, sess, errs, est;

	if (dt < 1e-3)
		dt = 1e-3;   /* a second caught up right after another */
	publish(g);
	binds = PUB_SUM(r, binds);
	sess = PUB_SUM(r, sessions);
	errs = PUB_SUM(r, errors);
	est = PUB_SUM(r, established);
	printf("ldapfe-gen: t=%.0fs binds/s=%.0f sessions/s=%.0f errors=%" PRIu64 " retrans=%" PRIu64
	       " p50=%.1fus p99=%.1fus tcbs=%" PRIu64,
	       t, (double)(binds - *prev_binds) / dt, (double)(sess - *prev_sess) / dt, errs,
	       ts->retransmits, us_of(g, lfe_hist_quantile(&g->lat_sec, 0.5)),
	       us_of(g, lfe_hist_quantile(&g->lat_sec, 0.99)), ts->conns_active);
	if (g->o.wl == LFE_WL_HOLD)
		printf(" established=%" PRIu64, est);
	putchar('\n');
	*prev_binds = binds;
	*prev_sess = sess;
	lfe_hist_merge(&g->lat, &g->lat_sec);
	lfe_hist_reset(&g->lat_sec);
}

static const char *wl_name(enum lfe_gen_workload w)
{
	return w == LFE_WL_SESSION ? "session" : w == LFE_WL_MIX ? "mix" : w == LFE_WL_HOLD ? "hold" :
	       w == LFE_WL_SYNFLOOD ? "synflood" : "persistent";
}

/* This process's resident memory in KiB (/proc/self/status), 0 if unknown. */
static uint64_t rss_kib(void)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Totals over the lcores, for the final report. */
struct totals {
	struct counters ct;
	struct lfe_tcp_stats ts;
	struct lfe_hist lat, lat_conn;
	uint64_t est, est_peak, rss_kib;
	double open_s;            /* hold: time to establish them */
	uint32_t binders;
};

static void sum_u64(uint64_t *dst, const void *src, size_t n)
{
	uint64_t v[64];
	while (n) {
		size_t k = n < 64 ? n : 64;
		memcpy(v, src, k * sizeof(uint64_t));
		for (size_t i = 0; i < k; i++)
			dst[i] += v[i];
		dst += k;
		src = (const uint64_t *)src + k;
		n -= k;
	}
}

static void totals_of(const struct genrun *r, struct totals *T)
{
	uint64_t ct[N_COUNTERS] = { 0 }, ts[sizeof(struct lfe_tcp_stats) / sizeof(uint64_t)] = { 0 };

	_Static_assert(sizeof(struct lfe_tcp_stats) % sizeof(uint64_t) == 0, "tcp stats are uint64_t");
	lfe_hist_reset(&T->lat);
	lfe_hist_reset(&T->lat_conn);
	for (uint32_t j = 0; j < r->nl; j++) {
		const struct gen *g = r->lc[j];
		sum_u64(ct, &g->ct, N_COUNTERS);
		sum_u64(ts, lfe_tcp_stats(g->tcp), sizeof(ts) / sizeof(ts[0]));
		lfe_hist_merge(&T->lat, &g->lat);
		lfe_hist_merge(&T->lat, &g->lat_sec);   /* since the last per-second line */
		lfe_hist_merge(&T->lat_conn, &g->lat_conn);
		T->est += g->n_est;
		T->est_peak += g->est_peak;
	}
	memcpy(&T->ct, ct, sizeof(T->ct));
	memcpy(&T->ts, ts, sizeof(T->ts));
	T->rss_kib = rss_kib();
}

static void report_final(const struct genrun *r, const struct totals *T, double secs, FILE *f, bool json)
{
	const struct gen *g = r->lc[0];
	const struct counters *c = &T->ct;
	const struct lfe_tcp_stats *ts = &T->ts;
	uint64_t binds = binds_of(c);
	double p50 = us_of(g, lfe_hist_quantile(&T->lat, 0.5));
	double p99 = us_of(g, lfe_hist_quantile(&T->lat, 0.99));
	double p999 = us_of(g, lfe_hist_quantile(&T->lat, 0.999));
	double mx = us_of(g, T->lat.max);
	double mean = T->lat.count ? us_of(g, T->lat.sum) / (double)T->lat.count : 0;
	double busy_per_bind = binds ? us_of(g, c->busy_cycles) / (double)binds : 0;
	/* The lcores' share of their CPUs (1: nothing else ran there). */
	double cpu_share = secs > 0 ? (double)c->cpu_ns / 1e9 / secs / r->nl : 0;

	if (!json) {
		fprintf(f, "ldapfe-gen: done: %s, %u conns, %.3f s: binds %" PRIu64 " (ok %" PRIu64
			   ", invalid %" PRIu64 "), sessions %" PRIu64 ", binds/s %.0f, sessions/s %.0f\n",
			wl_name(g->o.wl), g->o.conns, secs, binds, c->binds_ok, c->binds_invalid,
			c->sessions, (double)binds / secs, (double)c->sessions / secs);
		fprintf(f, "ldapfe-gen: latency us: p50 %.1f p99 %.1f p99.9 %.1f max %.1f mean %.1f\n",
			p50, p99, p999, mx, mean);
		if (T->lat_conn.count)
			fprintf(f, "ldapfe-gen: connect us: p50 %.1f p99 %.1f max %.1f (%" PRIu64 ")\n",
				us_of(g, lfe_hist_quantile(&T->lat_conn, 0.5)),
				us_of(g, lfe_hist_quantile(&T->lat_conn, 0.99)), us_of(g, T->lat_conn.max),
				T->lat_conn.count);
		if (g->o.wl == LFE_WL_HOLD)
			fprintf(f, "ldapfe-gen: hold: established %" PRIu64 " of %u (peak %" PRIu64 ") in %.3f s, "
				   "%u binding; generator RSS %" PRIu64 " KiB (%.0f B per connection)\n",
				T->est, g->o.conns, T->est_peak, T->open_s, T->binders, T->rss_kib,
				T->est_peak ? 1024.0 * (double)T->rss_kib / (double)T->est_peak : 0);
		if (g->o.flood_lo)
			fprintf(f, "ldapfe-gen: synflood: SYNs sent %" PRIu64 " (%.0f/s; %" PRIu64 " more refused by "
				   "a full tx ring), SYN-ACKs back %" PRIu64 " (%.0f/s), RSTs back %" PRIu64 "\n",
				c->flood_syns, (double)c->flood_syns / secs, c->flood_tx_drops, c->flood_synacks,
				(double)c->flood_synacks / secs, c->flood_rsts);
		fprintf(f, "ldapfe-gen: errors %" PRIu64 ":", errors_total(c));
		for (unsigned k = 0; k < E_MAX; k++)
			fprintf(f, " %s=%" PRIu64, err_names[k], c->err[k]);
		fprintf(f, "\nldapfe-gen: tcp: opened %" PRIu64 " retransmits %" PRIu64 " rto_timeouts %" PRIu64
			   " resets %" PRIu64 " dup_acks %" PRIu64 " ooo %" PRIu64 " dup_segs %" PRIu64
			   " challenge_acks %" PRIu64 " drops: no_conn %" PRIu64 " bad_seq %" PRIu64
			   " bad_ack %" PRIu64 " window %" PRIu64 "\n",
			c->conns_opened, ts->retransmits, ts->rto_timeouts, ts->conns_reset, ts->dup_acks,
			ts->ooo_segs, ts->dup_segs, ts->challenge_acks, ts->drop_no_conn, ts->drop_bad_seq,
			ts->drop_bad_ack, ts->drop_window);
		fprintf(f, "ldapfe-gen: frames tx %" PRIu64 " rx %" PRIu64 " tx_drops %" PRIu64
			   " rx_drops %" PRIu64 "; rx checksums (--rx-csum %s): checked %" PRIu64
			   " by the port %" PRIu64 " bad %" PRIu64 "\n",
			c->tx.frames, c->rx_frames, c->tx.dropped, c->rx_drops, g->o.rx_csum_all ? "all" : "sample",
			c->rxc.checked, c->rxc.port_good, c->rxc.bad);
		fprintf(f, "ldapfe-gen: busy %.3f s (%.1f %% of %u lcore%s), %.3f us per bind; on CPU"
			   " %.1f %% of the time (preempted %" PRIu64 " times)\n",
			us_of(g, c->busy_cycles) / 1e6, 100.0 * us_of(g, c->busy_cycles) / 1e6 / secs / r->nl,
			r->nl, r->nl > 1 ? "s" : "", busy_per_bind, 100.0 * cpu_share, c->preempted);
		if (r->nl > 1) {
			for (uint32_t j = 0; j < r->nl; j++) {
				const struct gen *x = r->lc[j];
				fprintf(f, "ldapfe-gen: lcore %u (queue %u): binds %" PRIu64 " busy %.3f s handed off %"
					   PRIu64 " (drops %" PRIu64 ")\n", j, x->q, binds_of(&x->ct),
					us_of(g, x->ct.busy_cycles) / 1e6, x->ct.handed_off, x->ct.handoff_drops);
			}
		}
		if (g->tlsc)
			lfe_tlsc_report(g->tlsc, f, false);
		return;
	}
	fprintf(f, "{\n  \"workload\": \"%s\", \"conns\": %u, \"rate\": %.0f, \"duration_s\": %.6f,"
		   " \"tsc_hz\": %" PRIu64 ",\n", wl_name(g->o.wl), g->o.conns, g->o.rate, secs, g->hz);
	fprintf(f, "  \"binds\": %" PRIu64 ", \"binds_sent\": %" PRIu64 ", \"binds_ok\": %" PRIu64
		   ", \"binds_invalid\": %" PRIu64 ", \"sessions\": %" PRIu64 ",\n",
		binds, c->binds_sent, c->binds_ok, c->binds_invalid, c->sessions);
	fprintf(f, "  \"binds_per_s\": %.1f, \"sessions_per_s\": %.1f,\n", (double)binds / secs,
		(double)c->sessions / secs);
	fprintf(f, "  \"gen_busy_cycles\": %" PRIu64 ", \"gen_busy_turns\": %" PRIu64
		   ", \"gen_busy_us_per_bind\": %.4f, \"lcores\": %u, \"dist\": \"%s\", \"zipf_s\": %.3f,\n",
		c->busy_cycles, c->busy_turns, busy_per_bind, r->nl,
		g->o.dist == LFE_DIST_ZIPF ? "zipf" : "uniform", g->o.zipf_s);
	fprintf(f, "  \"gen_cpu_ns\": %" PRIu64 ", \"gen_cpu_share\": %.4f, \"gen_preempted\": %" PRIu64
		   ",\n", c->cpu_ns, cpu_share, c->preempted);
	fprintf(f, "  \"per_lcore\": [");
	for (uint32_t j = 0; j < r->nl; j++)
		fprintf(f, "%s{\"binds\": %" PRIu64 ", \"busy_cycles\": %" PRIu64 ", \"handed_off\": %" PRIu64
			   ", \"handoff_drops\": %" PRIu64 "}", j ? ", " : "", binds_of(&r->lc[j]->ct),
			r->lc[j]->ct.busy_cycles, r->lc[j]->ct.handed_off, r->lc[j]->ct.handoff_drops);
	fprintf(f, "],\n");
	if (g->o.wl == LFE_WL_HOLD)
		fprintf(f, "  \"hold\": {\"target\": %u, \"established\": %" PRIu64 ", \"established_peak\": %"
			   PRIu64 ", \"open_s\": %.3f, \"binders\": %u},\n",
			g->o.conns, T->est, T->est_peak, T->open_s, T->binders);
	if (g->o.flood_lo)
		fprintf(f, "  \"synflood\": {\"syns\": %" PRIu64 ", \"syns_per_s\": %.1f, \"tx_refused\": %" PRIu64
			   ", \"synacks\": %" PRIu64 ", \"synacks_per_s\": %.1f, \"rsts\": %" PRIu64
			   ", \"reply\": \"%s\"},\n",
			c->flood_syns, (double)c->flood_syns / secs, c->flood_tx_drops, c->flood_synacks,
			(double)c->flood_synacks / secs, c->flood_rsts, g->o.flood_rst ? "rst" : "none");
	fprintf(f, "  \"gen_rss_kib\": %" PRIu64 ",\n", T->rss_kib);
	fprintf(f, "  \"latency_us\": {\"p50\": %.2f, \"p99\": %.2f, \"p999\": %.2f, \"max\": %.2f, "
		   "\"mean\": %.2f, \"count\": %" PRIu64 "},\n", p50, p99, p999, mx, mean, T->lat.count);
	fprintf(f, "  \"connect_us\": {\"p50\": %.2f, \"p99\": %.2f, \"max\": %.2f, \"count\": %" PRIu64 "},\n",
		us_of(g, lfe_hist_quantile(&T->lat_conn, 0.5)), us_of(g, lfe_hist_quantile(&T->lat_conn, 0.99)),
		us_of(g, T->lat_conn.max), T->lat_conn.count);
	fprintf(f, "  \"errors\": {\"total\": %" PRIu64, errors_total(c));
	for (unsigned k = 0; k < E_MAX; k++)
		fprintf(f, ", \"%s\": %" PRIu64, err_names[k], c->err[k]);
	fprintf(f, ", \"rc_unexpected_for_ok\": %" PRIu64 ", \"rc_unexpected_for_wrong\": %" PRIu64
		   ", \"rc_unexpected_for_unknown\": %" PRIu64 "},\n",
		c->rc_unexpected[BK_OK], c->rc_unexpected[BK_WRONG], c->rc_unexpected[BK_UNKNOWN]);
	fprintf(f, "  \"tcp\": {\"opened\": %" PRIu64 ", \"retransmits\": %" PRIu64
		   ", \"rto_timeouts\": %" PRIu64 ", \"resets\": %" PRIu64 "},\n",
		c->conns_opened, ts->retransmits, ts->rto_timeouts, ts->conns_reset);
	lfe_tlsc_report(g->tlsc, f, true);
	fprintf(f, "  \"frames\": {\"tx\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		   ", \"rx_drops\": %" PRIu64 "},\n",
		c->tx.frames, c->rx_frames, c->tx.dropped, c->rx_drops);
	fprintf(f, "  \"rx_csum\": {\"mode\": \"%s\", \"checked\": %" PRIu64 ", \"port_good\": %" PRIu64
		   ", \"bad\": %" PRIu64 "}\n}\n",
		g->o.rx_csum_all ? "all" : "sample", c->rxc.checked, c->rxc.port_good, c->rxc.bad);
}

/* Poll until cond(g) holds or ms pass; true if it held. */
static bool poll_until(struct gen *g, bool (*cond)(const struct gen *), uint64_t ms)
{
	uint64_t end = rte_rdtsc() + g->hz / 1000u * ms;
	while (!cond(g)) {
		if (rte_rdtsc() > end)
			return false;
		poll_pub(g);
	}
	return true;
}

static bool no_outstanding(const struct gen *g)
{
	return g->n_wait == 0 && g->n_live == g->n_est;
}

static bool all_closed(const struct gen *g)
{
	return g->n_live == 0;
}

/* Answers to binds already sent still count (and are still checked); then
 * every connection closes, at --syn-rate when paced (a million FINs at once
 * would only be dropped and retransmitted), while this side keeps polling:
 * the peer must never see it vanish mid-stream. */
static bool finish(struct gen *g, bool *drained)
{
	g->stopping = true;
	*drained = poll_until(g, no_outstanding, DRAIN_MS);
	uint64_t close_ms = CLOSE_MS + (g->o.syn_rate > 0 ? (uint64_t)(1000.0 * (g->c_hi - g->c_lo) / g->o.syn_rate) : 0);
	uint64_t end = rte_rdtsc() + g->hz / 1000u * close_ms;
	double toks = 0;
	uint64_t last = rte_rdtsc();
	for (uint32_t i = g->c_lo; i < g->c_hi;) {
		if (rte_rdtsc() > end)
			break;
		if (g->o.syn_rate > 0) {
			refill(&toks, &last, g->syn_per_tsc, g->syn_cap, rte_rdtsc());
			if (toks < 1.0) {
				poll_pub(g);
				continue;
			}
			toks -= 1.0;
		}
		struct gconn *c = &g->c[i++];
		if (c->tc && c->st == CS_READY)
			end_session(g, c);
	}
	return poll_until(g, all_closed, end > rte_rdtsc() ? (end - rte_rdtsc()) * 1000u / g->hz + 1 : 1);
}

static int phase_of(const struct genrun *r)
{
	return __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE);
}

/* This thread's CPU time (ns) and involuntary context switches so far. */
static void thread_cpu(uint64_t *ns, uint64_t *ivcsw)
{
	struct timespec ts;
	struct rusage ru;

	*ns = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0
		      ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
	*ivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* The end of the measured window for this lcore's CPU figures. */
static void stop_measuring_cpu(struct gen *g)
{
	uint64_t ns, iv;

	thread_cpu(&ns, &iv);
	g->ct.cpu_ns = ns - g->cpu0_ns;
	g->ct.preempted = iv - g->ivcsw0;
}

static void start_measuring(struct gen *g)
{
	/* Measure from here: every counter starts at zero. */
	memset(&g->ct, 0, sizeof(g->ct));
	g->busy_t0 = 0;
	g->ct.conns_opened = g->ever_opened;
	lfe_hist_reset(&g->lat);
	lfe_hist_reset(&g->lat_sec);
	if (g->o.wl != LFE_WL_HOLD)
		lfe_hist_reset(&g->lat_conn);
	clock_tick(g);
	g->tok_last = g->now_tsc;
	g->tokens = 0;
	thread_cpu(&g->cpu0_ns, &g->ivcsw0);
	g->measuring = true;
}

/* A worker lcore: connect, wait for the start, measure, finish. */
static int worker_main(void *arg)
{
	struct gen *g = arg;
	struct genrun *r = g->run;
	bool drained;

	(void)lfe_unmap_guard_enter(g->lc, &g->guard_turn);
	clock_tick(g);
	g->syn_last = g->now_tsc;
	while (phase_of(r) == PH_CONNECT)
		poll_pub(g);
	start_measuring(g);
	while (phase_of(r) == PH_MEASURE)
		poll_pub(g);
	stop_measuring_cpu(g);
	/* Unanswered binds and unclosed connections are counted by the main
	 * lcore from n_wait and n_live once this returns. */
	finish(g, &drained);
	publish(g);
	lfe_unmap_guard_leave(g->lc);
	return 0;
}

static uint64_t opened_all(const struct genrun *r)
{
	return PUB_SUM(r, opened);
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

static void announce(struct gen *g)
{
	announce_range(g, g->o.src_lo, g->o.src_hi);
	if (g->o.flood_lo != g->o.src_lo)
		announce_range(g, g->o.flood_lo, g->o.flood_hi);
}

static int run(struct genrun *r)
{
	struct gen *g = r->lc[0];
	char a[16];
	uint64_t t0;

	if (lfe_dpdk_port_wait_link(g->port_id, LINK_WAIT_MS, &g_stop) < 0) {
		fprintf(stderr, "ldapfe-gen: error: link of %s still down after %u ms "
				"(is the peer running?%s)\n", g->o.port, LINK_WAIT_MS,
			r->nl > 1 ? " a memif server must offer as many queues as --lcores" : "");
		return 2;
	}

	lfe_net_fmt_ipv4(g->next_hop, a);
	t0 = rte_rdtsc();
	uint64_t last_req = 0;
	g->rx_all_queues = true;
	while (!g->have_peer) {
		clock_tick(g);
		if (g->now_tsc - t0 > g->hz / 1000u * g->o.arp_timeout_ms || g_stop) {
			fprintf(stderr, "ldapfe-gen: error: no ARP answer from %s within %u ms\n", a,
				g->o.arp_timeout_ms);
			return 2;
		}
		if (g->now_tsc - last_req > g->hz / 5u) {
			send_arp(g, 1, bcast, zero_mac, g->o.src_ip, g->next_hop);
			last_req = g->now_tsc;
		}
		poll_once(g);
	}
	g->rx_all_queues = false;
	printf("ldapfe-gen: %s is at " RTE_ETHER_ADDR_PRT_FMT "\n", a,
	       RTE_ETHER_ADDR_BYTES((const struct rte_ether_addr *)g->peer_mac));
	announce(g);

	/* Every lcore connects its own share (paced by --syn-rate when set). */
	for (uint32_t j = 1; j < r->nl; j++) {
		memcpy(r->lc[j]->peer_mac, g->peer_mac, LFE_ETH_ALEN);
		r->lc[j]->have_peer = true;
	}
	unsigned lcore_id, j = 1;
	RTE_LCORE_FOREACH_WORKER(lcore_id) {
		if (j == r->nl)
			break;
		if (rte_eal_remote_launch(worker_main, r->lc[j], lcore_id) != 0) {
			fprintf(stderr, "ldapfe-gen: cannot launch lcore %u\n", lcore_id);
			return 2;
		}
		j++;
	}
	clock_tick(g);
	g->syn_last = g->now_tsc;
	t0 = g->now_tsc;
	int status = 0;
	if (g->o.wl == LFE_WL_HOLD) {
		/* Hold: wait until all are open, or no progress for the connect timeout. */
		uint64_t last_n = 0, last_t = t0, target = g->o.conns, next_sec = t0 + g->hz;
		for (;;) {
			poll_pub(g);
			uint64_t n = PUB_SUM(r, established);
			if (n >= target || g_stop)
				break;
			if (n != last_n) {
				last_n = n;
				last_t = g->now_tsc;
			}
			if (g->now_tsc - last_t > g->hz / 1000u * g->o.connect_timeout_ms)
				break;
			if (g->now_tsc >= next_sec && !g->o.quiet) {
				printf("ldapfe-gen: opening: t=%.0fs established=%" PRIu64 " of %" PRIu64 "\n",
				       (double)(g->now_tsc - t0) / (double)g->hz, n, target);
				next_sec += g->hz;
			}
		}
		if (last_n == 0 && PUB_SUM(r, established) == 0)
			status = 2;
	} else if (g->o.wl != LFE_WL_SYNFLOOD) {
		uint64_t end = t0 + g->hz / 1000u * g->o.connect_timeout_ms;
		while (opened_all(r) == 0 && PUB_SUM(r, connect_errs) < g->o.conns && g->now_tsc < end && !g_stop)
			poll_pub(g);
		if (opened_all(r) == 0)
			status = 2;
	}
	double open_s = (double)(rte_rdtsc() - t0) / (double)g->hz;
	if (status == 2) {
		lfe_net_fmt_ipv4(g->o.dst_ip, a);
		fprintf(stderr, "ldapfe-gen: error: no connection to %s:%u within %u ms (%s)\n", a,
			g->o.dport, g->o.connect_timeout_ms,
			PUB_SUM(r, connect_errs) ? "refused or reset" : "no SYN-ACK");
		__atomic_store_n(&r->phase, PH_STOP, __ATOMIC_RELEASE);
		rte_eal_mp_wait_lcore();
		return 2;
	}
	if (g->o.wl == LFE_WL_HOLD)
		printf("ldapfe-gen: hold: %" PRIu64 " of %u connections established in %.3f s\n",
		       PUB_SUM(r, established), g->o.conns, open_s);

	start_measuring(g);
	uint64_t start = g->now_tsc, next_sec = start + g->hz;
	__atomic_store_n(&r->phase, PH_MEASURE, __ATOMIC_RELEASE);
	uint64_t end = start + (uint64_t)(g->o.duration_s * (double)g->hz);
	uint64_t prev_binds = 0, prev_sess = 0, prev_tsc = start;
	while (!g_stop && g->now_tsc < end) {
		poll_pub(g);
		if (g->now_tsc >= next_sec) {
			if (!g->o.quiet)
				/* Labelled by the second it closes (t=1s, 2s, ...) even
				 * when this lcore was descheduled past several: the
				 * rates are over the time that really passed. */
				report_second(g, (double)(next_sec - start) / (double)g->hz, &prev_binds,
					      &prev_sess, (double)(g->now_tsc - prev_tsc) / (double)g->hz);
			prev_tsc = g->now_tsc;
			next_sec += g->hz;
		}
	}
	stop_measuring_cpu(g);
	double secs = (double)(g->now_tsc - start) / (double)g->hz;
	static struct totals T;   /* histograms: not on the stack */
	memset(&T, 0, sizeof(T));
	/* Established connections and memory at the end of the measured
	 * time, before closing (the workers published at most 10 ms ago). */
	publish(g);
	uint64_t est_end = PUB_SUM(r, established), rss = rss_kib();
	__atomic_store_n(&r->phase, PH_STOP, __ATOMIC_RELEASE);
	bool drained, closed = finish(g, &drained);
	publish(g);
	rte_eal_mp_wait_lcore();
	uint32_t unanswered = 0, open_left = 0;
	for (uint32_t k = 0; k < r->nl; k++) {
		unanswered += r->lc[k]->n_wait;
		open_left += r->lc[k]->n_live;
	}
	/* A bind answered while connections closed still counts as answered. */
	drained = unanswered == 0;
	closed = closed && open_left == 0;
	totals_of(r, &T);
	T.est = est_end;
	T.rss_kib = rss;
	T.open_s = open_s;
	for (uint32_t i = 0; i < g->o.conns; i++)
		T.binders += r->c[i].binder;
	report_final(r, &T, secs, stdout, false);
	if (!drained)
		printf("ldapfe-gen: warning: %u binds still unanswered %u ms after the end\n", unanswered, DRAIN_MS);
	if (!closed)
		printf("ldapfe-gen: warning: %u connections still open after the end\n", open_left);
	if (T.ct.rxc.bad)
		printf("ldapfe-gen: warning: %" PRIu64 " frames with bad checksums received and dropped\n",
		       T.ct.rxc.bad);
	if (g->o.json[0]) {
		FILE *f = fopen(g->o.json, "w");
		if (!f) {
			fprintf(stderr, "ldapfe-gen: --json %s: %s\n", g->o.json, strerror(errno));
			return 2;
		}
		report_final(r, &T, secs, f, true);
		fclose(f);
	}
	return errors_total(&T.ct) || !drained ? 1 : 0;
}

/* Set up lcore j's state: its connections c_lo..c_hi-1, queues, TCP. */
static int gen_init(struct genrun *r, struct gen *g, const struct gen *g0, uint32_t j)
{
	int rc;

	g->o = r->o;
	g->run = r;
	g->lc = j;
	g->q = (uint16_t)j;
	if (g != g0)
		g->port_id = g0->port_id;
	lfe_txbuf_init(&g->txb, g->tx, TXBUF, g->port_id, g->q);
	/* A flood fills the ring: what it refused goes first next poll
	 * (flood() waits until it has), so the workload's frames are delayed
	 * by the flood, not lost to it. */
	g->txb.keep = g->o.flood_lo ? TXBUF / 2 : 0;
	if (g != g0) {
		g->pool = g0->pool;
		memcpy(g->mac, g0->mac, LFE_ETH_ALEN);
		g->port_rx_csum = g0->port_rx_csum;
		g->port_tx_csum = g0->port_tx_csum;
	}
	lfe_gen_rxcsum_init(&g->rxs, g->o.rx_csum_all, g->o.seed ^ (0xd1b54a32d192ed03ull * (j + 1u)));
	g->hz = rte_get_tsc_hz();
	g->us_mult = (uint64_t)(((unsigned __int128)1000000u << 32) / g->hz);
	g->rng = (g->o.seed ? g->o.seed : 0x9e3779b97f4a7c15ull) + j * 0x632be59bd9b4e019ull;
	g->next_hop = g->o.gateway ? g->o.gateway : g->o.dst_ip;
	g->flood_next = j;
	if (g->o.flood_rate > 0) {
		double rate = g->o.flood_rate / r->nl;
		g->flood_per_tsc = rate / (double)g->hz;
		g->flood_cap = fmax(1.0, rate / 100.0);   /* bursts of at most 10 ms */
	}
	g->shares = g->o.wrong_pct + g->o.unknown_pct > 0;
	g->unpaced = !(g->o.rate > 0) && g->o.wl != LFE_WL_SYNFLOOD;
	g->dist = &r->dist;
	g->bt = r->bt;
	g->tlsc = r->tlsc;
	g->c = r->c;
	g->c_lo = j * r->per_lcore;
	g->c_hi = g->c_lo + r->per_lcore < g->o.conns ? g->c_lo + r->per_lcore : g->o.conns;
	uint32_t n = g->c_hi - g->c_lo;
	if (g->o.rate > 0) {
		double rate = g->o.rate / r->nl;
		g->tok_per_tsc = rate / (double)g->hz;
		/* 50 ms of tokens: the generator shares cores with the kernel and
		 * the server in small setups and is sometimes descheduled; the
		 * offered load catches up instead of silently dropping. */
		g->tok_cap = fmax(1.0, rate / 20.0);
	}
	if (g->o.syn_rate > 0) {
		double rate = g->o.syn_rate / r->nl;
		g->syn_per_tsc = rate / (double)g->hz;
		g->syn_cap = fmax(1.0, rate / 100.0);   /* bursts of at most 10 ms */
	}
	g->ready.v = calloc(n, sizeof(uint32_t));
	g->reconnect.v = calloc(n, sizeof(uint32_t));
	if (!g->ready.v || !g->reconnect.v)
		return -ENOMEM;
	g->ready.cap = g->reconnect.cap = n;
	for (uint32_t i = 0; i < n; i++)
		q_push(&g->reconnect, i);   /* issue() opens them, paced */

	struct lfe_tcp_cfg tc;
	lfe_tcp_cfg_default(&tc);
	/* Closed sessions wait in TIME_WAIT on this side; the table recycles the
	 * oldest when full, so size it for the live connections plus a window.
	 * A small one: its TIME_WAITs last ~1 ms at a million sessions/s, while
	 * a connection's tuple comes back only after its `per` others (796 with
	 * the default ports at 64 connections: ~40 ms at 1.2M sessions/s), and
	 * the table stays in the core's cache (with a window of 16,384 the hash
	 * probes of connect and close missed it: ~10 % of the generator's time
	 * a session in a perf profile). */
	tc.max_conns = n + 1024u;
	tc.max_half_open = n < tc.max_conns ? n : tc.max_conns;
	if (g->o.wl == LFE_WL_HOLD) {
		/* One small request at a time: held connections need little room. */
		tc.sndbuf = 1024;
		tc.rcvbuf = r->tlsc ? 16384 : 1024;   /* TLS: the server's first flight */
	}
	tc.time_wait_us = 200000;
	tc.rto_init_us = 200000;
	tc.delack_us = 1000;
	tc.idle_timeout_us = 0;
	tc.buf_pool = tc.max_conns;   /* any connection may have a request in flight (lazily backed) */
	tc.secret = rte_rdtsc() ^ g->o.seed ^ ((uint64_t)j << 56);
	tc.n_listen = 0;
	g->tcp = lfe_tcp_new(&tc, &gen_tcp_ops, g, &rc);
	if (!g->tcp) {
		fprintf(stderr, "ldapfe-gen: TCP stack (lcore %u): %s\n", j, strerror(-rc));
		return rc;
	}
	return 0;
}

static void gen_free(struct gen *g)
{
	if (!g)
		return;
	lfe_tcp_free(g->tcp);
	rte_pktmbuf_free_bulk(g->spare, g->nspare);
	free(g->ready.v);
	free(g->reconnect.v);
	free(g);
}

int main(int argc, char **argv)
{
	static struct genrun run_state;
	struct genrun *r = &run_state;
	char err[256];
	int status = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* --help / --version (alone, or after "--") answer without EAL. */
	for (int i = argc == 2 ? 1 : 0, seen = argc == 2; i < argc; i++) {
		if (!seen) {
			seen = strcmp(argv[i], "--") == 0;
			continue;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("ldapfe-gen " LFE_VERSION "\n");
			return 0;
		}
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(lfe_gen_usage, stdout);
			fputs("\nEAL's own options come before \"--\" (ldapfe-gen --no-huge --help lists them).\n",
			      stdout);
			return 0;
		}
	}
	int rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		fprintf(stderr, "ldapfe-gen: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argc -= rc;
	argv += rc;
	argv[0] = (char *)"ldapfe-gen";
	lfe_gen_opts_defaults(&r->o);
	if (lfe_gen_opts_parse(argc, argv, &r->o, err, sizeof(err)) < 0) {
		bool help = strcmp(err, "help") == 0;
		if (!help)
			fprintf(stderr, "ldapfe-gen: %s\n", err);
		fputs(lfe_gen_usage, help ? stdout : stderr);
		rte_eal_cleanup();
		return help ? 0 : 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	r->nl = r->o.lcores;
	if (r->nl > rte_lcore_count()) {
		fprintf(stderr, "ldapfe-gen: --lcores %u but EAL gave %u lcore%s (-l)\n", r->nl,
			rte_lcore_count(), rte_lcore_count() > 1 ? "s" : "");
		goto out;
	}
	if (lfe_gen_dist_init(&r->dist, r->o.dist, r->o.users, r->o.zipf_s) < 0) {
		fprintf(stderr, "ldapfe-gen: --dist: bad parameters\n");
		goto out;
	}
	r->bt = lfe_gen_bindtab_new(r->o.user_fmt, r->o.pw_fmt, &rc);
	if (!r->bt) {
		fprintf(stderr, "ldapfe-gen: bind templates: %s\n", strerror(-rc));
		goto out;
	}

	/* The (address, port) tuples spread over the connections
	 * (gen/tuples.h); lcore j owns connections
	 * [j * per_lcore, (j + 1) * per_lcore). */
	if (lfe_gen_tuples_init(&r->tup, r->o.src_lo ? r->o.src_lo : r->o.src_ip,
				r->o.src_lo ? r->o.src_hi - r->o.src_lo + 1u : 1u, r->o.sport_lo, r->o.sport_hi,
				r->o.conns) < 0) {
		fprintf(stderr, "ldapfe-gen: fewer (address, port) pairs than connections\n");
		goto out;
	}
	if (r->o.flood_lo && lfe_gen_tuples_init(&r->ftup, r->o.flood_lo, r->o.flood_hi - r->o.flood_lo + 1u,
						 r->o.sport_lo, r->o.sport_hi, 1) < 0) {
		fprintf(stderr, "ldapfe-gen: --flood-ips: no tuples\n");
		goto out;
	}
	r->per_lcore = (r->o.conns + r->nl - 1u) / r->nl;
	r->c = calloc(r->o.conns, sizeof(*r->c));
	if (!r->c) {
		fprintf(stderr, "ldapfe-gen: out of memory for %u connections\n", r->o.conns);
		goto out;
	}
	uint64_t pick = r->o.seed ? r->o.seed : 1;
	for (uint32_t i = 0; i < r->o.conns; i++) {
		r->c[i].idx = i;
		/* hold: which connections bind, fixed by the seed */
		pick = pick * 6364136223846793005ull + 1442695040888963407ull;
		r->c[i].binder = (double)(pick >> 11) * 0x1.0p-53 < r->o.bind_frac;
	}
	for (uint32_t j = 0; j < r->nl; j++) {
		r->lc[j] = calloc(1, sizeof(struct gen));
		if (!r->lc[j]) {
			fprintf(stderr, "ldapfe-gen: out of memory\n");
			goto out;
		}
	}
	if (r->o.tls) {
		char ip[16];
		lfe_net_fmt_ipv4(r->o.dst_ip, ip);
		struct lfe_tlsc_cfg tcfg = {
			.version = r->o.tls_version, .ca_file = r->o.tls_ca, .verify_ip = ip,
			.resume = (enum lfe_tlsc_resume)r->o.tls_resume, .slots = r->o.conns,
			.starttls = r->o.starttls,
			.records = r->o.tls_records_openssl ? LFE_TLSC_RECORDS_OPENSSL : LFE_TLSC_RECORDS_LDAPFE,
		};
		r->tlsc = lfe_tlsc_new(&tcfg, err, sizeof(err));
		if (!r->tlsc) {
			fprintf(stderr, "ldapfe-gen: %s\n", err);
			goto out;
		}
	}
	r->lc[0]->o = r->o;
	if (port_setup(r, r->lc[0]) < 0)
		goto out;
	for (uint32_t j = 0; j < r->nl; j++) {
		if (gen_init(r, r->lc[j], r->lc[0], j) < 0)
			goto stop;
		if (r->nl > 1) {
			char name[32];
			snprintf(name, sizeof(name), "gen_handoff%u", j);
			r->handoff[j] = rte_ring_create(name, HANDOFF_RING, (int)rte_socket_id(), RING_F_SC_DEQ);
			if (!r->handoff[j]) {
				fprintf(stderr, "ldapfe-gen: handoff ring: %s\n", rte_strerror(rte_errno));
				goto stop;
			}
		}
	}
	/* The main lcore polls from here to run's end: a memif peer that goes
	 * meanwhile has its regions unmapped only between turns (unmapguard.h). */
	lfe_unmap_guard_set_filter(rte_thread_is_intr);
	(void)lfe_unmap_guard_enter(0, &r->lc[0]->guard_turn);
	status = run(r);
	lfe_unmap_guard_leave(0);
stop:
	lfe_dpdk_port_close(r->lc[0]->port_id);
out:
	for (uint32_t j = 0; j < r->nl && j < LFE_GEN_MAX_LCORES; j++) {
		gen_free(r->lc[j]);
		rte_ring_free(r->handoff[j]);
	}
	lfe_gen_bindtab_free(r->bt);
	for (uint32_t i = 0; r->c && r->tlsc && i < r->o.conns; i++)
		lfe_tlsc_conn_free(r->c[i].tls);   /* lfe_tcp_free made no callbacks */
	lfe_tlsc_free(r->tlsc);
	free(r->c);
	rte_eal_cleanup();
	return status;
}
