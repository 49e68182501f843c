/* gen/setup.c — ldapfe-gen's port (dpdk/port.h: found or hot-plugged,
 * checksum offloads where it has them, one queue pair per lcore) and each
 * generator lcore's state (gen.h).
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
#include <rte_errno.h>

#include "dpdk/port.h"
#include "gen/gen.h"

int gen_port_setup(struct genrun *r, struct gen *g)
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

/* Set up lcore j's state: its connections c_lo..c_hi-1, queues, TCP. */
int gen_init(struct genrun *r, struct gen *g, const struct gen *g0, uint32_t j)
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

void gen_free(struct gen *g)
{
	if (!g)
		return;
	lfe_tcp_free(g->tcp);
	rte_pktmbuf_free_bulk(g->spare, g->nspare);
	free(g->ready.v);
	free(g->reconnect.v);
	free(g);
}
