/* gen/main.c — ldapfe-gen, an LDAP simple-bind load generator on DPDK.
 *
 *   ldapfe-gen [EAL args] -- --port DEV --src-ip A/len --dst-ip B [options]
 *
 * One lcore drives every connection: the client side of dataplane/tcp.c
 * (lfe_tcp_connect), frames from dataplane/net.c, PDUs from ldap/client.c.
 * Each connection has at most one bind outstanding; N connections give the
 * concurrency. Every response is checked against what was asked (message
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include "dataplane/net.h"
#include "dataplane/tcp.h"
#include "gen/hist.h"
#include "gen/opts.h"
#include "ldap/client.h"

#define BURST 32u
#define TXBUF 64u
#define NB_DESC 1024u
#define POOL_SIZE 16383u
#define PDU_MAX 512u
#define LINK_WAIT_MS 10000u
#define DRAIN_MS 1000u
#define CLOSE_MS 2000u
#define MIX_MAX_BINDS 8u

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
	E_MSGID, E_OP, E_RC, E_DECODE, E_NOTICE, E_RESET, E_CLOSED, E_CONNECT, E_SEND, E_MAX
};
static const char *const err_names[E_MAX] = {
	"msgid", "op", "result_code", "decode", "notice_of_disconnection", "reset", "closed",
	"connect", "send_space",
};

struct gconn {
	struct lfe_tcp_conn *tc;
	uint32_t idx;
	uint16_t port_lo, port_n, port_cur;
	uint8_t st, kind;
	int32_t msgid;
	uint32_t left;            /* binds still to make on this connection (mix) */
	uint32_t answered;        /* responses on this connection */
	uint64_t t_req;           /* tsc when the outstanding bind was queued */
	uint64_t t_syn;           /* tsc when the connection was opened */
	bool opened;              /* reached ESTABLISHED */
	bool in_ready;            /* queued in g->ready (at most once) */
};

struct counters {
	uint64_t binds_sent, binds_ok, binds_invalid, sessions, conns_opened;
	uint64_t err[E_MAX];
	uint64_t rc_unexpected[3];     /* by kind asked: ok, wrong, unknown */
	uint64_t tx_frames, rx_frames, tx_drops, rx_drops;
};

/* A FIFO of connection indices (each connection is in it at most once). */
struct idxq {
	uint32_t *v;
	uint32_t cap, head, n;
};

static void q_push(struct idxq *q, uint32_t i)
{
	if (q->n == q->cap)   /* cannot happen: each conn is queued at most once */
		return;
	q->v[(q->head + q->n) % q->cap] = i;
	q->n++;
}

static bool q_pop(struct idxq *q, uint32_t *i)
{
	if (!q->n)
		return false;
	*i = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return true;
}

struct gen {
	struct lfe_gen_opts o;
	uint16_t port_id;
	struct rte_mempool *pool;
	uint8_t mac[LFE_ETH_ALEN];
	uint8_t peer_mac[LFE_ETH_ALEN];
	bool have_peer;
	uint32_t next_hop;
	uint16_t ip_id;
	struct rte_mbuf *tx[TXBUF];
	uint16_t ntx;

	struct lfe_tcp *tcp;
	struct gconn *c;
	struct idxq ready, reconnect;
	bool measuring;           /* binds are issued only between start and end */
	bool stopping;            /* no new binds or connections */
	uint64_t rng;

	uint64_t hz, us_mult, now_tsc, now_us;
	double tokens, tok_per_tsc, tok_cap;
	uint64_t tok_last;

	struct counters ct;
	struct lfe_hist lat, lat_sec;
	struct lfe_hist lat_conn;     /* SYN to ESTABLISHED */
	uint64_t ever_opened;
};

static uint64_t rnd(struct gen *g)
{
	/* xorshift64*: fast, seedable, plenty for picking users. */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1Dull;
}

static void tx_flush(struct gen *g)
{
	if (!g->ntx)
		return;
	uint16_t n = rte_eth_tx_burst(g->port_id, 0, g->tx, g->ntx);
	g->ct.tx_frames += n;
	if (n < g->ntx) {
		g->ct.tx_drops += (uint64_t)(g->ntx - n);
		rte_pktmbuf_free_bulk(&g->tx[n], (unsigned)(g->ntx - n));
	}
	g->ntx = 0;
}

static void tx_queue(struct gen *g, struct rte_mbuf *m)
{
	g->tx[g->ntx++] = m;
	if (g->ntx == TXBUF)
		tx_flush(g);
}

static int gen_tx(void *ctx, const struct lfe_tcp_seg *seg)
{
	struct gen *g = ctx;

	if (!g->have_peer) {
		g->ct.tx_drops++;
		return -ENOBUFS;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(g->pool);
	if (!m) {
		g->ct.tx_drops++;
		return -ENOBUFS;
	}
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	ssize_t n = lfe_net_build_tcp(p, rte_pktmbuf_tailroom(m), g->peer_mac, g->mac, seg, g->ip_id++);
	if (n < 0) {
		rte_pktmbuf_free(m);
		g->ct.tx_drops++;
		return -ENOBUFS;
	}
	m->data_len = m->pkt_len = (uint32_t)n;
	tx_queue(g, m);
	return 0;
}

static struct gconn *conn_of(struct lfe_tcp_conn *tc)
{
	return lfe_tcp_conn_app(tc);
}

/* A connection whose entry is still queued (it closed and reopened while
 * waiting) keeps that entry: issue() checks the state when it pops. */
static void ready_push(struct gen *g, struct gconn *c)
{
	if (!c->in_ready) {
		c->in_ready = true;
		q_push(&g->ready, c->idx);
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
	if (g->measuring)
		lfe_hist_add(&g->lat_conn, g->now_tsc - c->t_syn);
	g->ct.conns_opened++;
	g->ever_opened++;
	if (g->o.wl == LFE_WL_MIX)
		c->left = 1u + (uint32_t)(rnd(g) % MIX_MAX_BINDS);
	else if (g->o.wl == LFE_WL_SESSION)
		c->left = 1u;
	else
		c->left = g->o.binds_per_conn ? g->o.binds_per_conn : UINT32_MAX;
	ready_push(g, c);
	return 0;
}

/* Unbind and FIN in the same flush, so the server closes passively and the
 * TIME_WAIT stays on our side, where it is bounded and recycled. */
static void end_session(struct gen *g, struct gconn *c)
{
	uint8_t pdu[16];
	int32_t id = c->msgid == INT32_MAX ? 1 : c->msgid + 1;
	ssize_t n = lfe_ldap_enc_unbind_req(pdu, sizeof(pdu), id);

	c->msgid = id;
	if (n > 0 && lfe_tcp_send(c->tc, pdu, (size_t)n) != (size_t)n)
		g->ct.err[E_SEND]++;
	c->st = CS_CLOSING;
	lfe_tcp_close(c->tc);
}

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
	lfe_hist_add(&g->lat, g->now_tsc - c->t_req);
	lfe_hist_add(&g->lat_sec, g->now_tsc - c->t_req);
	if (rc == -EPROTONOSUPPORT) {
		g->ct.err[E_OP]++;
	} else if (rc < 0) {
		g->ct.err[E_DECODE]++;
	} else if (r.msgid != c->msgid) {
		g->ct.err[E_MSGID]++;
	} else if (r.op != LFE_OP_BIND_RESP) {
		g->ct.err[E_OP]++;
	} else {
		int32_t want = c->kind == BK_OK ? LFE_RC_SUCCESS : LFE_RC_INVALID_CREDENTIALS;
		if (r.code != want) {
			g->ct.err[E_RC]++;
			g->ct.rc_unexpected[c->kind]++;
		} else if (want == LFE_RC_SUCCESS) {
			g->ct.binds_ok++;
		} else {
			g->ct.binds_invalid++;
		}
	}
	c->st = CS_READY;
	c->answered++;
	if (c->left != UINT32_MAX)
		c->left--;
	if (g->stopping || c->left == 0)
		end_session(g, c);
	else
		ready_push(g, c);
}

static size_t gen_on_data(void *ctx, struct lfe_tcp_conn *tc, const uint8_t *data, size_t len)
{
	struct gen *g = ctx;
	struct gconn *c = conn_of(tc);
	size_t used = 0;

	if (!c)
		return len;
	while (used < len) {
		size_t pl;
		int rc = lfe_ldap_frame(data + used, len - used, 65536, &pl);
		if (rc == -EAGAIN)
			break;
		if (rc < 0) {
			/* Unframeable: the stream is lost, as a server would judge. */
			g->ct.err[E_DECODE]++;
			if (c->st == CS_WAIT)
				c->st = CS_READY;
			lfe_tcp_abort(tc);
			return len;
		}
		check_resp(g, c, data + used, pl);
		used += pl;
	}
	return used;
}

static void gen_on_close(void *ctx, struct lfe_tcp_conn *tc, int reason)
{
	struct gen *g = ctx;
	struct gconn *c = conn_of(tc);

	if (!c)
		return;
	if (c->st == CS_CLOSING && reason == 0) {
		/* A session is a connection that bound at least once; persistent
		 * connections closed at the end are not sessions. */
		if (c->answered && (!g->stopping || g->o.wl != LFE_WL_PERSISTENT))
			g->ct.sessions++;
	} else if (!c->opened) {
		g->ct.err[E_CONNECT]++;
	} else if (!(g->stopping && c->st == CS_READY)) {
		g->ct.err[reason ? E_RESET : E_CLOSED]++;
	}
	c->tc = NULL;
	c->st = CS_IDLE;
	c->opened = false;
	if (!g->stopping)
		q_push(&g->reconnect, c->idx);
}

static const struct lfe_tcp_ops gen_tcp_ops = {
	.tx = gen_tx,
	.on_open = gen_on_open,
	.on_data = gen_on_data,
	.on_close = gen_on_close,
};

static void do_connect(struct gen *g, struct gconn *c)
{
	int err = 0;

	for (uint32_t tries = 0; tries < c->port_n; tries++) {
		uint16_t sport = (uint16_t)(c->port_lo + c->port_cur);
		c->port_cur = (uint16_t)((c->port_cur + 1u) % c->port_n);
		struct lfe_tcp_conn *tc = lfe_tcp_connect(g->tcp, g->o.src_ip, sport, g->o.dst_ip,
							  g->o.dport, g->now_us, &err);
		if (tc) {
			c->tc = tc;
			c->st = CS_CONNECTING;
			c->t_syn = g->now_tsc;
			lfe_tcp_conn_set_app(tc, c);
			return;
		}
		if (err != -EADDRINUSE)
			break;
	}
	g->ct.err[E_CONNECT]++;
	q_push(&g->reconnect, c->idx);
}

static void send_bind(struct gen *g, struct gconn *c)
{
	char dn[LFE_GEN_FMT_MAX + 16], pw[LFE_GEN_FMT_MAX + 16];
	uint8_t pdu[PDU_MAX];
	uint32_t pick = (uint32_t)(rnd(g) % 100u);
	uint32_t u = g->o.user_base + (uint32_t)(rnd(g) % g->o.users);
	int pl;

	if (pick < g->o.wrong_pct)
		c->kind = BK_WRONG;
	else if (pick < g->o.wrong_pct + g->o.unknown_pct)
		c->kind = BK_UNKNOWN;
	else
		c->kind = BK_OK;
	/* Unknown users are numbered just past the population, so the same
	 * format yields a well-formed DN that the store does not hold. */
	uint32_t du = c->kind == BK_UNKNOWN ? u + g->o.users : u;
	int dl = snprintf(dn, sizeof(dn), g->o.user_fmt, du);
	pl = snprintf(pw, sizeof(pw), g->o.pw_fmt, u);
	if (c->kind == BK_WRONG && pl >= 0 && (size_t)pl + 1 < sizeof(pw)) {
		pw[pl++] = '!';
		pw[pl] = '\0';
	}
	c->msgid = c->msgid >= INT32_MAX - 1 ? 1 : c->msgid + 1;
	ssize_t n = dl < 0 || pl < 0 ? -EINVAL :
		    lfe_ldap_enc_bind_req(pdu, sizeof(pdu), c->msgid, dn, (size_t)dl, pw, (size_t)pl);
	if (n < 0 || lfe_tcp_send(c->tc, pdu, (size_t)n) != (size_t)n) {
		/* One outstanding request never fills a send buffer: treat as broken. */
		g->ct.err[E_SEND]++;
		lfe_tcp_abort(c->tc);
		return;
	}
	c->st = CS_WAIT;
	c->t_req = g->now_tsc;
	g->ct.binds_sent++;
}

static void issue(struct gen *g)
{
	uint32_t i;

	while (g->reconnect.n && !g->stopping) {
		q_pop(&g->reconnect, &i);
		do_connect(g, &g->c[i]);
		if (g->c[i].st == CS_IDLE)
			break;      /* every port busy: try again next turn */
	}
	if (g->stopping || !g->measuring)
		return;
	if (g->o.rate > 0) {
		g->tokens += (double)(g->now_tsc - g->tok_last) * g->tok_per_tsc;
		g->tok_last = g->now_tsc;
		if (g->tokens > g->tok_cap)
			g->tokens = g->tok_cap;
	}
	while (g->ready.n) {
		if (g->o.rate > 0) {
			if (g->tokens < 1.0)
				break;
			g->tokens -= 1.0;
		}
		q_pop(&g->ready, &i);
		struct gconn *c = &g->c[i];
		c->in_ready = false;
		if (c->st == CS_READY && c->tc)
			send_bind(g, c);
	}
}

static void handle_arp(struct gen *g, const struct lfe_net_pkt *pkt)
{
	const struct lfe_arp_pkt *a = &pkt->arp;

	if (a->spa == g->next_hop) {
		memcpy(g->peer_mac, a->sha, LFE_ETH_ALEN);
		g->have_peer = true;
	}
	if (a->op != 1 || a->tpa != g->o.src_ip)
		return;
	struct rte_mbuf *m = rte_pktmbuf_alloc(g->pool);
	if (!m)
		return;
	struct lfe_arp_pkt r = { .op = 2, .spa = g->o.src_ip, .tpa = a->spa };
	memcpy(r.sha, g->mac, LFE_ETH_ALEN);
	memcpy(r.tha, a->sha, LFE_ETH_ALEN);
	ssize_t n = lfe_net_build_arp(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), a->sha,
				      g->mac, &r);
	if (n < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	m->data_len = m->pkt_len = (uint32_t)n;
	tx_queue(g, m);
}

static void send_arp_request(struct gen *g)
{
	static const uint8_t bcast[LFE_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct rte_mbuf *m = rte_pktmbuf_alloc(g->pool);
	if (!m)
		return;
	struct lfe_arp_pkt r = { .op = 1, .spa = g->o.src_ip, .tpa = g->next_hop };
	memcpy(r.sha, g->mac, LFE_ETH_ALEN);
	ssize_t n = lfe_net_build_arp(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), bcast,
				      g->mac, &r);
	if (n < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	m->data_len = m->pkt_len = (uint32_t)n;
	tx_queue(g, m);
}

static void clock_tick(struct gen *g)
{
	g->now_tsc = rte_rdtsc();
	g->now_us = (uint64_t)(((unsigned __int128)g->now_tsc * g->us_mult) >> 32);
}

/* One turn of the loop: receive, feed TCP, issue, flush. */
static void poll_once(struct gen *g)
{
	struct rte_mbuf *rx[BURST];

	clock_tick(g);
	uint16_t n = rte_eth_rx_burst(g->port_id, 0, rx, BURST);
	g->ct.rx_frames += n;
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = rx[k];
		struct lfe_net_pkt pkt;
		if (m->nb_segs != 1) {
			g->ct.rx_drops++;
			continue;
		}
		int kind = lfe_net_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, &pkt);
		if (kind == LFE_NET_TCP && pkt.daddr == g->o.src_ip)
			lfe_tcp_input(g->tcp, &pkt.seg, g->now_us);
		else if (kind == LFE_NET_ARP)
			handle_arp(g, &pkt);
		else
			g->ct.rx_drops++;
	}
	if (n)
		rte_pktmbuf_free_bulk(rx, n);
	issue(g);
	lfe_tcp_flush(g->tcp, g->now_us);
	lfe_tcp_timers(g->tcp, g->now_us);
	tx_flush(g);
}

static int port_setup(struct gen *g)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t l = strcspn(g->o.port, ",");
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	int rc;

	if (l == 0 || l >= sizeof(name)) {
		fprintf(stderr, "ldapfe-gen: --port: bad device name in \"%s\"\n", g->o.port);
		return -EINVAL;
	}
	memcpy(name, g->o.port, l);
	name[l] = '\0';
	if (rte_eth_dev_get_port_by_name(name, &g->port_id) != 0) {
		rc = rte_dev_probe(g->o.port);
		if (rc < 0 || rte_eth_dev_get_port_by_name(name, &g->port_id) != 0) {
			fprintf(stderr, "ldapfe-gen: --port: cannot probe \"%s\": %s\n", g->o.port,
				rc < 0 ? strerror(-rc) : "no ethdev of that name");
			return -ENODEV;
		}
	}
	rc = rte_eth_dev_info_get(g->port_id, &info);
	if (rc < 0)
		return rc;
	g->pool = rte_pktmbuf_pool_create("gen_mbuf", POOL_SIZE, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!g->pool) {
		fprintf(stderr, "ldapfe-gen: mbuf pool: %s\n", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	memset(&conf, 0, sizeof(conf));
	uint16_t nrx = NB_DESC, ntx = NB_DESC;
	if ((rc = rte_eth_dev_configure(g->port_id, 1, 1, &conf)) < 0 ||
	    (rc = rte_eth_dev_adjust_nb_rx_tx_desc(g->port_id, &nrx, &ntx)) < 0 ||
	    (rc = rte_eth_rx_queue_setup(g->port_id, 0, nrx, (unsigned)rte_eth_dev_socket_id(g->port_id),
					 NULL, g->pool)) < 0 ||
	    (rc = rte_eth_tx_queue_setup(g->port_id, 0, ntx, (unsigned)rte_eth_dev_socket_id(g->port_id),
					 NULL)) < 0 ||
	    (rc = rte_eth_dev_start(g->port_id)) < 0) {
		fprintf(stderr, "ldapfe-gen: port %s (%s): setup: %s\n", name, info.driver_name,
			strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(g->port_id, &mac);
	memcpy(g->mac, mac.addr_bytes, LFE_ETH_ALEN);
	printf("ldapfe-gen: port %s (%s) mac " RTE_ETHER_ADDR_PRT_FMT "\n", name, info.driver_name,
	       RTE_ETHER_ADDR_BYTES(&mac));
	return 0;
}

static double us_of(const struct gen *g, uint64_t cyc)
{
	return (double)cyc * 1e6 / (double)g->hz;
}

static uint64_t errors_total(const struct counters *c)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < E_MAX; k++)
		n += c->err[k];
	return n;
}

static void report_second(struct gen *g, double t, const struct counters *prev, double dt)
{
	const struct counters *c = &g->ct;
	const struct lfe_tcp_stats *ts = lfe_tcp_stats(g->tcp);
	uint64_t binds = c->binds_ok + c->binds_invalid + c->err[E_RC];
	uint64_t pbinds = prev->binds_ok + prev->binds_invalid + prev->err[E_RC];

	printf("ldapfe-gen: t=%.0fs binds/s=%.0f sessions/s=%.0f errors=%" PRIu64 " retrans=%" PRIu64
	       " p50=%.1fus p99=%.1fus tcbs=%" PRIu64 "\n",
	       t, (double)(binds - pbinds) / dt, (double)(c->sessions - prev->sessions) / dt,
	       errors_total(c), ts->retransmits, us_of(g, lfe_hist_quantile(&g->lat_sec, 0.5)),
	       us_of(g, lfe_hist_quantile(&g->lat_sec, 0.99)), ts->conns_active);
	lfe_hist_reset(&g->lat_sec);
}

static const char *wl_name(enum lfe_gen_workload w)
{
	return w == LFE_WL_SESSION ? "session" : w == LFE_WL_MIX ? "mix" : "persistent";
}

static void report_final(struct gen *g, double secs, FILE *f, bool json)
{
	const struct counters *c = &g->ct;
	const struct lfe_tcp_stats *ts = lfe_tcp_stats(g->tcp);
	uint64_t binds = c->binds_ok + c->binds_invalid + c->err[E_RC];
	double p50 = us_of(g, lfe_hist_quantile(&g->lat, 0.5));
	double p99 = us_of(g, lfe_hist_quantile(&g->lat, 0.99));
	double p999 = us_of(g, lfe_hist_quantile(&g->lat, 0.999));
	double mx = us_of(g, g->lat.max);
	double mean = g->lat.count ? us_of(g, g->lat.sum) / (double)g->lat.count : 0;

	if (!json) {
		fprintf(f, "ldapfe-gen: done: %s, %u conns, %.3f s: binds %" PRIu64 " (ok %" PRIu64
			   ", invalid %" PRIu64 "), sessions %" PRIu64 ", binds/s %.0f, sessions/s %.0f\n",
			wl_name(g->o.wl), g->o.conns, secs, binds, c->binds_ok, c->binds_invalid,
			c->sessions, (double)binds / secs, (double)c->sessions / secs);
		fprintf(f, "ldapfe-gen: latency us: p50 %.1f p99 %.1f p99.9 %.1f max %.1f mean %.1f\n",
			p50, p99, p999, mx, mean);
		if (g->lat_conn.count)
			fprintf(f, "ldapfe-gen: connect us: p50 %.1f p99 %.1f max %.1f (%" PRIu64 ")\n",
				us_of(g, lfe_hist_quantile(&g->lat_conn, 0.5)),
				us_of(g, lfe_hist_quantile(&g->lat_conn, 0.99)), us_of(g, g->lat_conn.max),
				g->lat_conn.count);
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
			   " rx_drops %" PRIu64 "\n", c->tx_frames, c->rx_frames, c->tx_drops, c->rx_drops);
		return;
	}
	fprintf(f, "{\n  \"workload\": \"%s\", \"conns\": %u, \"rate\": %.0f, \"duration_s\": %.6f,"
		   " \"tsc_hz\": %" PRIu64 ",\n", wl_name(g->o.wl), g->o.conns, g->o.rate, secs, g->hz);
	fprintf(f, "  \"binds\": %" PRIu64 ", \"binds_sent\": %" PRIu64 ", \"binds_ok\": %" PRIu64
		   ", \"binds_invalid\": %" PRIu64 ", \"sessions\": %" PRIu64 ",\n",
		binds, c->binds_sent, c->binds_ok, c->binds_invalid, c->sessions);
	fprintf(f, "  \"binds_per_s\": %.1f, \"sessions_per_s\": %.1f,\n", (double)binds / secs,
		(double)c->sessions / secs);
	fprintf(f, "  \"latency_us\": {\"p50\": %.2f, \"p99\": %.2f, \"p999\": %.2f, \"max\": %.2f, "
		   "\"mean\": %.2f, \"count\": %" PRIu64 "},\n", p50, p99, p999, mx, mean, g->lat.count);
	fprintf(f, "  \"connect_us\": {\"p50\": %.2f, \"p99\": %.2f, \"max\": %.2f, \"count\": %" PRIu64 "},\n",
		us_of(g, lfe_hist_quantile(&g->lat_conn, 0.5)), us_of(g, lfe_hist_quantile(&g->lat_conn, 0.99)),
		us_of(g, g->lat_conn.max), g->lat_conn.count);
	fprintf(f, "  \"errors\": {\"total\": %" PRIu64, errors_total(c));
	for (unsigned k = 0; k < E_MAX; k++)
		fprintf(f, ", \"%s\": %" PRIu64, err_names[k], c->err[k]);
	fprintf(f, ", \"rc_unexpected_for_ok\": %" PRIu64 ", \"rc_unexpected_for_wrong\": %" PRIu64
		   ", \"rc_unexpected_for_unknown\": %" PRIu64 "},\n",
		c->rc_unexpected[BK_OK], c->rc_unexpected[BK_WRONG], c->rc_unexpected[BK_UNKNOWN]);
	fprintf(f, "  \"tcp\": {\"opened\": %" PRIu64 ", \"retransmits\": %" PRIu64
		   ", \"rto_timeouts\": %" PRIu64 ", \"resets\": %" PRIu64 "},\n",
		c->conns_opened, ts->retransmits, ts->rto_timeouts, ts->conns_reset);
	fprintf(f, "  \"frames\": {\"tx\": %" PRIu64 ", \"rx\": %" PRIu64 ", \"tx_drops\": %" PRIu64
		   ", \"rx_drops\": %" PRIu64 "}\n}\n",
		c->tx_frames, c->rx_frames, c->tx_drops, c->rx_drops);
}

/* Poll until cond(g) holds or ms pass; true if it held. */
static bool poll_until(struct gen *g, bool (*cond)(const struct gen *), uint64_t ms)
{
	uint64_t end = rte_rdtsc() + g->hz / 1000u * ms;
	while (!cond(g)) {
		if (rte_rdtsc() > end)
			return false;
		poll_once(g);
	}
	return true;
}

static bool no_outstanding(const struct gen *g)
{
	for (uint32_t i = 0; i < g->o.conns; i++)
		if (g->c[i].st == CS_WAIT || g->c[i].st == CS_CONNECTING)
			return false;
	return true;
}

static bool all_closed(const struct gen *g)
{
	for (uint32_t i = 0; i < g->o.conns; i++)
		if (g->c[i].tc)
			return false;
	return true;
}

static bool any_opened(const struct gen *g)
{
	return g->ever_opened > 0 || g->ct.err[E_CONNECT] >= g->o.conns;
}

static int run(struct gen *g)
{
	char a[16];
	uint64_t t0;

	/* memif and real NICs need a moment before frames flow. */
	struct rte_eth_link link;
	t0 = rte_rdtsc();
	for (;;) {
		memset(&link, 0, sizeof(link));
		rte_eth_link_get_nowait(g->port_id, &link);
		if (link.link_status == RTE_ETH_LINK_UP)
			break;
		if (rte_rdtsc() - t0 > g->hz / 1000u * LINK_WAIT_MS || g_stop) {
			fprintf(stderr, "ldapfe-gen: error: link of %s still down after %u ms "
					"(is the peer running?)\n", g->o.port, LINK_WAIT_MS);
			return 2;
		}
		rte_delay_us_sleep(10000);
	}

	lfe_net_fmt_ipv4(g->next_hop, a);
	t0 = rte_rdtsc();
	uint64_t last_req = 0;
	while (!g->have_peer) {
		clock_tick(g);
		if (g->now_tsc - t0 > g->hz / 1000u * g->o.arp_timeout_ms || g_stop) {
			fprintf(stderr, "ldapfe-gen: error: no ARP answer from %s within %u ms\n", a,
				g->o.arp_timeout_ms);
			return 2;
		}
		if (g->now_tsc - last_req > g->hz / 5u) {
			send_arp_request(g);
			last_req = g->now_tsc;
		}
		poll_once(g);
	}
	printf("ldapfe-gen: %s is at " RTE_ETHER_ADDR_PRT_FMT "\n", a,
	       RTE_ETHER_ADDR_BYTES((const struct rte_ether_addr *)g->peer_mac));

	clock_tick(g);
	for (uint32_t i = 0; i < g->o.conns; i++)
		do_connect(g, &g->c[i]);
	if (!poll_until(g, any_opened, g->o.connect_timeout_ms) || g->ever_opened == 0) {
		lfe_net_fmt_ipv4(g->o.dst_ip, a);
		fprintf(stderr, "ldapfe-gen: error: no connection to %s:%u within %u ms (%s)\n", a,
			g->o.dport, g->o.connect_timeout_ms,
			g->ct.err[E_CONNECT] ? "refused or reset" : "no SYN-ACK");
		return 2;
	}

	/* Measure from here: every counter starts at zero. */
	memset(&g->ct, 0, sizeof(g->ct));
	g->ct.conns_opened = g->ever_opened;
	lfe_hist_reset(&g->lat);
	lfe_hist_reset(&g->lat_sec);
	lfe_hist_reset(&g->lat_conn);
	clock_tick(g);
	uint64_t start = g->now_tsc, next_sec = start + g->hz;
	uint64_t end = start + (uint64_t)(g->o.duration_s * (double)g->hz);
	struct counters prev = g->ct;
	uint64_t prev_tsc = start;
	g->tok_last = start;
	g->tokens = 0;
	g->measuring = true;
	while (!g_stop && g->now_tsc < end) {
		poll_once(g);
		if (g->now_tsc >= next_sec) {
			if (!g->o.quiet)
				report_second(g, (double)(g->now_tsc - start) / (double)g->hz, &prev,
					      (double)(g->now_tsc - prev_tsc) / (double)g->hz);
			prev = g->ct;
			prev_tsc = g->now_tsc;
			next_sec += g->hz;
		}
	}
	double secs = (double)(g->now_tsc - start) / (double)g->hz;
	/* Answers to binds already sent still count (and are still checked). */
	g->stopping = true;
	bool drained = poll_until(g, no_outstanding, DRAIN_MS);
	for (uint32_t i = 0; i < g->o.conns; i++)
		if (g->c[i].tc && g->c[i].st == CS_READY)
			end_session(g, &g->c[i]);
	/* Keep polling while the FINs are exchanged: the peer must never see
	 * this side vanish mid-stream. */
	bool closed = poll_until(g, all_closed, CLOSE_MS);
	report_final(g, secs, stdout, false);
	if (!drained)
		printf("ldapfe-gen: warning: binds still unanswered %u ms after the end\n", DRAIN_MS);
	if (!closed)
		printf("ldapfe-gen: warning: connections still open %u ms after the end\n", CLOSE_MS);
	if (g->o.json[0]) {
		FILE *f = fopen(g->o.json, "w");
		if (!f) {
			fprintf(stderr, "ldapfe-gen: --json %s: %s\n", g->o.json, strerror(errno));
			return 2;
		}
		report_final(g, secs, f, true);
		fclose(f);
	}
	return errors_total(&g->ct) || !drained ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct gen gen_state;   /* large (histograms): not on the stack */
	struct gen *g = &gen_state;
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
	lfe_gen_opts_defaults(&g->o);
	if (lfe_gen_opts_parse(argc, argv, &g->o, err, sizeof(err)) < 0) {
		bool help = strcmp(err, "help") == 0;
		if (!help)
			fprintf(stderr, "ldapfe-gen: %s\n", err);
		fputs(lfe_gen_usage, help ? stdout : stderr);
		rte_eal_cleanup();
		return help ? 0 : 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	g->hz = rte_get_tsc_hz();
	g->us_mult = (uint64_t)(((unsigned __int128)1000000u << 32) / g->hz);
	g->rng = g->o.seed ? g->o.seed : 0x9e3779b97f4a7c15ull;
	g->next_hop = g->o.gateway ? g->o.gateway : g->o.dst_ip;
	if (g->o.rate > 0) {
		g->tok_per_tsc = g->o.rate / (double)g->hz;
		/* 50 ms of tokens: the generator shares cores with the kernel and
		 * the server in small setups and is sometimes descheduled; the
		 * offered load catches up instead of silently dropping. */
		g->tok_cap = fmax(1.0, g->o.rate / 20.0);
	}

	uint32_t nports = (uint32_t)(g->o.sport_hi - g->o.sport_lo) + 1u;
	uint32_t per = nports / g->o.conns;
	g->c = calloc(g->o.conns, sizeof(*g->c));
	g->ready.v = calloc(g->o.conns, sizeof(uint32_t));
	g->reconnect.v = calloc(g->o.conns, sizeof(uint32_t));
	if (!g->c || !g->ready.v || !g->reconnect.v) {
		fprintf(stderr, "ldapfe-gen: out of memory for %u connections\n", g->o.conns);
		goto out;
	}
	g->ready.cap = g->reconnect.cap = g->o.conns;
	for (uint32_t i = 0; i < g->o.conns; i++) {
		g->c[i].idx = i;
		g->c[i].port_lo = (uint16_t)(g->o.sport_lo + i * per);
		g->c[i].port_n = (uint16_t)(per > 65535 ? 65535 : per);
	}

	struct lfe_tcp_cfg tc;
	lfe_tcp_cfg_default(&tc);
	/* Closed sessions wait in TIME_WAIT on this side; the table recycles the
	 * oldest when full, so size it for the live connections plus a window. */
	tc.max_conns = g->o.conns + 16384u;
	tc.max_half_open = g->o.conns < tc.max_conns ? g->o.conns : tc.max_conns;
	tc.time_wait_us = 200000;
	tc.rto_init_us = 200000;
	tc.delack_us = 1000;
	tc.idle_timeout_us = 0;
	tc.buf_pool = tc.max_conns;   /* any connection may have a request in flight (lazily backed) */
	tc.secret = rte_rdtsc() ^ g->o.seed;
	tc.n_listen = 0;
	g->tcp = lfe_tcp_new(&tc, &gen_tcp_ops, g, &rc);
	if (!g->tcp) {
		fprintf(stderr, "ldapfe-gen: TCP stack: %s\n", strerror(-rc));
		goto out;
	}
	if (port_setup(g) < 0)
		goto out;
	status = run(g);
	rte_eth_dev_stop(g->port_id);
	rte_eth_dev_close(g->port_id);
out:
	lfe_tcp_free(g->tcp);
	free(g->c);
	free(g->ready.v);
	free(g->reconnect.v);
	rte_eal_cleanup();
	return status;
}
