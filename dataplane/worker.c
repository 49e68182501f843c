/* dataplane/worker.c — one poll-mode worker per lcore, run to completion.
 *
 * Each iteration: renew the store read transaction if it is older than
 * LFE_RENEW_US; rx burst from this worker's queue on every port → parse
 * (net.c) every frame of the burst, prefetch their connections' lookups
 * (with many connections) → ARP / ICMP echo answered in place / TCP
 * segments into the per-core stack → LDAP sessions (glue.c) write responses into the
 * connections' send buffers; verifier completions delivered; TCP timers;
 * lfe_tcp_flush so replies of the whole burst leave together; tx bursts.
 * Except a TLS handshake flight made on this core (tens of µs to ms of
 * work each): TCP emits it as its segment is done (lfe_tcp_conn_push) and
 * it goes to the port before the next frame is handled, so one client's
 * round trip does not grow by the handshakes of the rest of its burst.
 * No locks, no syscalls and no heap on this path: frames come from the
 * mbuf pool of the worker's socket, sessions from a preallocated pool, PDU
 * reassembly buffers from the session slot (≤ LFE_PDU_SMALL) or a bounded
 * per-core rte_mempool (larger PDUs).
 *
 * Flow affinity — one TCP connection must stay on one core:
 *  - af_packet with qpairs=N: the kernel's PACKET_FANOUT spreads flows over
 *    the N sockets by flow hash, so a flow always arrives on the same queue,
 *    and worker i owns queue i on every port.
 *  - ports with RSS: port.c enables RSS on the IPv4 TCP 4-tuple with a
 *    symmetric key (0x6d5a repeated), so both directions hash alike.
 *  - a port with fewer queues than workers: software steering. Only worker 0
 *    polls queue 0; it hashes each TCP frame's 4-tuple with the symmetric
 *    lfe_net_flow_hash and passes frames owned by worker k to k's steer ring
 *    (ARP, ICMP and anything else stays on worker 0). Workers other than 0
 *    cannot touch the port's only tx queue, so their frames go to the port's
 *    MP/SC tx ring, which worker 0 drains into the tx queue.
 *
 * Busy accounting: an iteration that received, delivered or sent anything
 * counts its cycles (rdtsc) as busy; total counts every cycle between
 * iteration starts, so busy/total is the core's real load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "dpdk/arp.h"
#include "dpdk/mbuf_csum.h"
#include "net/tcp_buf.h"
#include "dpdk/unmapguard.h"
#include "tls/tlsoff.h"
#include "tls/tlsrec.h"
#include "dataplane/verifier.h"
#include "ldap/dn.h"
#include "dataplane/worker.h"
#include "dataplane/worker_ctl.h"

static inline uint64_t tsc_to_us(const struct lfe_worker *w, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * w->us_mult) >> 32);
}

static inline uint16_t my_queue(const struct lfe_port *p, const struct lfe_worker *w)
{
	return p->steer ? 0 : (uint16_t)w->idx;
}

static inline bool in_subnet(const struct lfe_port *p, uint32_t a)
{
	return ((a ^ p->addr) & p->mask) == 0;
}

/* Send what the worker gathered for port pi (dpdk/txbuf.h: to the port,
 * or to worker 0's ring under steering, through the impairment stage). */
static void flush_port(struct lfe_worker *w, uint32_t pi)
{
	struct lfe_txbuf_stats ts = { 0 };

	lfe_txbuf_flush(&w->tx[pi], w->now_us, &ts);
	w->st.tx_pkts += ts.frames;
	w->st.tx_bytes += ts.bytes;
	w->st.steered_out += ts.ringed;
	w->st.drops[LFE_DROP_TX_FULL] += ts.dropped;
}

static inline void tx_push(struct lfe_worker *w, uint32_t pi, struct rte_mbuf *m)
{
	struct lfe_txbuf *b = &w->tx[pi];
	if (b->n == b->cap)
		flush_port(w, pi);
	b->m[b->n++] = m;
}

static void send_arp(struct lfe_worker *w, uint32_t pi, uint16_t op, const uint8_t eth_dst[6],
		     const uint8_t tha[6], uint32_t tpa)
{
	struct lfe_port *p = &w->d->port[pi];
	struct lfe_arp_pkt a = { .op = op, .spa = p->addr, .tpa = tpa };
	struct rte_mbuf *m;

	memcpy(a.sha, p->mac, LFE_ETH_ALEN);
	memcpy(a.tha, tha, LFE_ETH_ALEN);
	int rc = lfe_dpdk_arp_frame(w->mbufs, &a, eth_dst, &m);
	if (rc == -ENOMEM)
		w->st.drops[LFE_DROP_NO_MBUF]++;
	if (rc == 0)
		tx_push(w, pi, m);
}

static const uint8_t bcast[LFE_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zero_mac[LFE_ETH_ALEN];

static int port_of_addr(const struct lfe_daemon *d, uint32_t laddr)
{
	for (uint32_t i = 0; i < d->n_ports; i++)
		if (d->port[i].addr == laddr)
			return (int)i;
	return -1;
}

/* The frame of seg to mac, or NULL (counted). Every TCP frame we send is
 * built here (data, retransmits, RSTs, SYN-ACKs with cookies, TLS
 * records): with the port's transmit offload it leaves with the
 * pseudo-header sum and these flags, also through the steering tx ring
 * (the mbuf carries them). */
static inline __attribute__((always_inline)) struct rte_mbuf *
build_seg(struct lfe_worker *w, const struct lfe_port *p, const uint8_t *mac, const struct lfe_tcp_seg *seg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->mbufs);
	if (m == NULL) {
		w->st.drops[LFE_DROP_NO_MBUF]++;
		return NULL;
	}
	ssize_t n = (p->tx_csum ? lfe_net_build_tcp_offload : lfe_net_build_tcp)(
		rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_tailroom(m), mac, p->mac, seg, w->ip_id++);
	if (n < 0) {
		rte_pktmbuf_free(m);
		w->st.drops[LFE_DROP_NO_MBUF]++;
		return NULL;
	}
	if (p->tx_csum) {
		m->ol_flags = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
		m->l2_len = LFE_ETH_HLEN;
		m->l3_len = LFE_IPV4_HLEN;
	}
	m->data_len = (uint16_t)n;
	m->pkt_len = (uint32_t)n;
	return m;
}

/* The next hop is not resolved, or its entry is aging (rare, so out of
 * line): ask again before it expires; with no MAC yet, the frame is built
 * and held until the answer sets it (neigh.h). */
static __attribute__((noinline)) int tx_unresolved(struct lfe_worker *w, uint32_t pi, uint32_t nh,
						   const uint8_t *mac, bool refresh,
						   const struct lfe_tcp_seg *seg)
{
	const struct lfe_port *p = &w->d->port[pi];
	struct rte_mbuf *m;
	if (refresh) {
		w->st.arp_requests++;
		send_arp(w, pi, 1, mac, zero_mac, nh);
	}
	if (mac != NULL) {
		if ((m = build_seg(w, p, mac, seg)) == NULL)
			return -ENOBUFS;
		tx_push(w, pi, m);
		return 0;
	}
	if (nh == 0) {
		w->st.drops[LFE_DROP_NO_ARP]++;
		return -ENOBUFS;
	}
	if ((m = build_seg(w, p, zero_mac, seg)) == NULL)
		return -ENOBUFS;
	bool ask;
	if (lfe_neigh_hold(&w->neigh, nh, (uint16_t)pi, m, w->now_us, &ask) < 0) {
		rte_pktmbuf_free(m);
		w->st.drops[LFE_DROP_NO_ARP]++;
		return -ENOBUFS;   /* TCP retransmits it */
	}
	w->st.neigh_held++;
	if (ask) {
		w->st.arp_requests++;
		send_arp(w, pi, 1, bcast, zero_mac, nh);
	}
	return 0;
}

int lfe_worker_tx_seg(void *ctx, const struct lfe_tcp_seg *seg)
{
	struct lfe_worker *w = ctx;
	int pi = port_of_addr(w->d, seg->laddr);

	if (pi < 0) {
		w->st.drops[LFE_DROP_NOT_OURS]++;
		return -ENOBUFS;
	}
	const struct lfe_port *p = &w->d->port[pi];
	uint32_t nh = in_subnet(p, seg->raddr) ? seg->raddr : p->gateway;
	bool refresh = false;
	const uint8_t *mac = lfe_arp_cache_use(&w->arp, nh, w->now_us, &refresh);
	if (unlikely(mac == NULL || refresh))
		return tx_unresolved(w, (uint32_t)pi, nh, mac, refresh, seg);
	struct rte_mbuf *m = build_seg(w, p, mac, seg);
	if (m == NULL)
		return -ENOBUFS;
	tx_push(w, (uint32_t)pi, m);
	return 0;
}

/* lfe_neigh_tick's callbacks: a neighbour to ask again, a frame whose
 * neighbour never answered. */
static void neigh_ask(void *ctx, uint16_t pi, uint32_t ip)
{
	struct lfe_worker *w = ctx;
	w->st.arp_requests++;
	send_arp(w, pi, 1, bcast, zero_mac, ip);
}

static void neigh_drop(void *ctx, void *frame)
{
	struct lfe_worker *w = ctx;
	w->st.drops[LFE_DROP_NO_ARP]++;
	rte_pktmbuf_free(frame);
}

static void neigh_free(void *ctx, void *frame)
{
	(void)ctx;
	rte_pktmbuf_free(frame);
}

/* ip's MAC is known: the frames held for it leave, addressed. */
static void neigh_release(struct lfe_worker *w, uint32_t ip, const uint8_t mac[LFE_ETH_ALEN])
{
	void *f[LFE_NEIGH_QLEN];
	uint16_t pi;
	unsigned k = w->neigh.n_pending ? lfe_neigh_resolved(&w->neigh, ip, f, &pi) : 0;
	for (unsigned i = 0; i < k; i++) {
		struct rte_mbuf *m = f[i];
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), mac, LFE_ETH_ALEN);
		tx_push(w, pi, m);
	}
	w->st.neigh_released += k;
}

/* A neighbour as passed between workers on their arp rings. */
struct arp_msg {
	uint32_t ip;
	uint8_t mac[LFE_ETH_ALEN];
	uint8_t pad[6];
};
_Static_assert(sizeof(struct arp_msg) == 16, "ring elements are a multiple of 4 bytes");

/* Learn from ARP only (lfe_arp_learnable). The ARP frame reaches one
 * queue, but every worker sends to that neighbour: pass it on. */
static void learn_arp(struct lfe_worker *w, const struct lfe_port *p, const struct lfe_arp_pkt *a)
{
	if (!lfe_arp_learnable(a, p->addr, p->mask)) {
		w->st.arp_ignored++;
		return;
	}
	lfe_arp_cache_put(&w->arp, a->spa, a->sha, w->now_us);
	neigh_release(w, a->spa, a->sha);
	struct arp_msg m = { .ip = a->spa };
	memcpy(m.mac, a->sha, LFE_ETH_ALEN);
	for (uint32_t k = 0; k < w->d->n_workers; k++)
		if (k != w->idx && w->d->w[k] && w->d->w[k]->arp_ring)
			rte_ring_mp_enqueue_elem(w->d->w[k]->arp_ring, &m, sizeof(m));
}

static unsigned arp_in(struct lfe_worker *w)
{
	struct arp_msg m[8];
	unsigned n = rte_ring_sc_dequeue_burst_elem(w->arp_ring, m, sizeof(m[0]), 8, NULL);
	for (unsigned i = 0; i < n; i++) {
		lfe_arp_cache_put(&w->arp, m[i].ip, m[i].mac, w->now_us);
		neigh_release(w, m[i].ip, m[i].mac);
	}
	return n;
}

/* Draining (`ldapfectl drain`): a new connection is refused with RST|ACK,
 * the way a closed port answers, so the client fails at once and cleanly. */
static void refuse_syn(struct lfe_worker *w, const struct lfe_tcp_seg *syn)
{
	struct lfe_tcp_seg r = {
		.laddr = syn->laddr, .raddr = syn->raddr, .lport = syn->lport, .rport = syn->rport,
		.seq = 0, .ack = syn->seq + 1u, .flags = LFE_TCP_RST | LFE_TCP_ACK, .wscale = -1,
	};
	w->st.conns_refused++;
	lfe_worker_tx_seg(w, &r);
}

/* A SYN flood's frame, shed before the parse: an IPv4 TCP segment with
 * SYN alone while the stack has no SYN budget for its source (tcp.h). A
 * frame this lets through is parsed and checked in full. */
static bool syn_shed(struct lfe_worker *w, const uint8_t *f, uint32_t len)
{
	if (len < LFE_ETH_HLEN + LFE_IPV4_HLEN + LFE_TCP_HLEN || f[12] != 0x08 || f[13] != 0x00)
		return false;
	const uint8_t *ip = f + LFE_ETH_HLEN;
	if (ip[0] != 0x45 || ip[9] != LFE_IPPROTO_TCP ||
	    (ip[LFE_IPV4_HLEN + 13] & (LFE_TCP_SYN | LFE_TCP_ACK | LFE_TCP_RST | LFE_TCP_FIN)) != LFE_TCP_SYN)
		return false;
	uint32_t sa = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 | ip[15];
	return lfe_tcp_syn_shed(w->tcp, sa, w->now_us);
}

/* The port's receive checksum verdicts (net.h), where it was asked for them. */
static inline unsigned rx_csum(const struct lfe_port *p, const struct rte_mbuf *m)
{
	return p->rx_csum ? lfe_mbuf_rx_csum(m) : 0;
}

/* Parse one frame into *pkt: its kind, or -1 when it is dropped (counted). */
static int parse_frame(struct lfe_worker *w, const struct lfe_port *p, struct rte_mbuf *m,
		       struct lfe_net_pkt *pkt)
{
	w->st.rx_pkts++;
	w->st.rx_bytes += m->pkt_len;
	if (m->nb_segs != 1) {
		w->st.drops[LFE_DROP_MULTISEG]++;
		return -1;
	}
	if (syn_shed(w, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len))
		return -1;   /* counted by the stack (tcp_syn_budget_dropped) */
	int kind = lfe_net_parse_rx(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, rx_csum(p, m), pkt);
	if (kind < 0) {
		w->st.drops[pkt->drop]++;
		return -1;
	}
	return kind;
}

/* Handle one parsed frame; returns true when the mbuf was consumed (sent back). */
static bool handle_frame(struct lfe_worker *w, uint32_t pi, struct rte_mbuf *m, int kind,
			 const struct lfe_net_pkt *pk)
{
	struct lfe_port *p = &w->d->port[pi];
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);

	if (kind < 0)
		return false;
	if (kind == LFE_NET_ARP) {
		learn_arp(w, p, &pk->arp);
		if (pk->arp.op != 1 || pk->arp.tpa != p->addr || lfe_dpdk_arp_answer(m, &pk->arp, p->mac) < 0)
			return false;
		w->st.arp_replies++;
		tx_push(w, pi, m);
		return true;
	}
	if (pk->daddr != p->addr) {
		w->st.drops[LFE_DROP_NOT_OURS]++;
		return false;
	}
	if (kind == LFE_NET_ICMP_ECHO) {
		size_t n = lfe_net_icmp_echo_reply(data, pk, p->mac);
		m->data_len = (uint16_t)n;
		m->pkt_len = (uint32_t)n;
		w->st.icmp_replies++;
		tx_push(w, pi, m);
		return true;
	}
	if ((pk->seg.flags & (LFE_TCP_SYN | LFE_TCP_ACK | LFE_TCP_RST)) == LFE_TCP_SYN &&
	    atomic_load_explicit(&w->d->draining, memory_order_relaxed)) {
		refuse_syn(w, &pk->seg);
		return false;
	}
	lfe_tcp_input(w->tcp, &pk->seg, w->now_us);
	return false;
}

static unsigned process_frames(struct lfe_worker *w, uint32_t pi, struct rte_mbuf **pk, uint32_t n)
{
	void *imp_out[2 * LFE_BURST + LFE_IMPAIR_MAX_HOLD];
	struct rte_mbuf *dead[2 * LFE_BURST + LFE_IMPAIR_MAX_HOLD];
	uint32_t nd = 0;

	if (w->imp_rx[pi]) {
		n = lfe_impair_apply(w->imp_rx[pi], (void *const *)pk, n, imp_out,
				     (uint32_t)(sizeof(imp_out) / sizeof(imp_out[0])), w->now_us);
		pk = (struct rte_mbuf **)imp_out;
	}
	/* In chunks of a burst: parse every frame, then (among many
	 * connections, where each lookup misses) prefetch the TCP lookups of
	 * the chunk in two passes (tcp.h), then handle each frame. */
	const struct lfe_tcp_stats *ts = lfe_tcp_stats(w->tcp);
	const bool pf = ts->conns_active >= LFE_PREFETCH_MIN_CONNS;
	uint64_t pushes = ts->pushes;
	for (uint32_t base = 0; base < n; base += LFE_BURST) {
		struct lfe_net_pkt pkt[LFE_BURST];
		int kind[LFE_BURST];
		uint32_t m = n - base < LFE_BURST ? n - base : LFE_BURST;
		for (uint32_t i = 0; i < m; i++) {
			if (base + i + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pk[base + i + 1], void *));
			kind[i] = parse_frame(w, &w->d->port[pi], pk[base + i], &pkt[i]);
			if (pf && kind[i] == LFE_NET_TCP)
				lfe_tcp_prefetch_hash(w->tcp, &pkt[i].seg);
		}
		if (pf)
			for (uint32_t i = 0; i < m; i++)
				if (kind[i] == LFE_NET_TCP)
					lfe_tcp_prefetch_conn(w->tcp, &pkt[i].seg);
		/* The bind peek: frame i + 1's key made and its buckets fetched
		 * while frame i is handled; a slot emptied once its frame is. */
		if (w->bind_peek && kind[0] == LFE_NET_TCP)
			lfe_glue_bind_peek(w, &pkt[0].seg, 0);
		for (uint32_t i = 0; i < m; i++) {
			if (w->bind_peek && i + 1 < m && kind[i + 1] == LFE_NET_TCP)
				lfe_glue_bind_peek(w, &pkt[i + 1].seg, i + 1);
			if (!handle_frame(w, pi, pk[base + i], kind[i], &pkt[i]))
				dead[nd++] = pk[base + i];
			w->peek[i & 1].pw = NULL;
			if (ts->pushes != pushes) {
				/* A handshake flight made inline (tcp.h,
				 * lfe_tcp_conn_push): to the wire now, not
				 * after the burst's other handshakes. */
				pushes = ts->pushes;
				for (uint32_t q = 0; q < w->d->n_ports; q++)
					flush_port(w, q);
			}
		}
	}
	if (nd)
		rte_pktmbuf_free_bulk(dead, nd);
	return n;
}

/* Owner of a frame under software steering: TCP by 4-tuple, else worker 0. */
static unsigned steer_owner(const struct lfe_worker *w, const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = m->data_len;

	if (len < LFE_ETH_HLEN + LFE_IPV4_HLEN || f[12] != 0x08 || f[13] != 0x00)
		return 0;
	const uint8_t *ip = f + LFE_ETH_HLEN;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4u;
	if (ip[9] != LFE_IPPROTO_TCP || ihl < LFE_IPV4_HLEN || len < LFE_ETH_HLEN + ihl + 4u)
		return 0;
	const uint8_t *t = ip + ihl;
	uint32_t sa = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 | ip[15];
	uint32_t da = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 | (uint32_t)ip[18] << 8 | ip[19];
	uint16_t sp = (uint16_t)(t[0] << 8 | t[1]), dp = (uint16_t)(t[2] << 8 | t[3]);
	return lfe_net_flow_hash(sa, sp, da, dp) % w->d->n_workers;
}

static unsigned rx_port(struct lfe_worker *w, uint32_t pi)
{
	struct lfe_port *p = &w->d->port[pi];
	struct rte_mbuf *pk[LFE_BURST];

	if (p->steer && w->idx != 0)
		return 0;
	uint16_t n = rte_eth_rx_burst(p->port_id, my_queue(p, w), pk, LFE_BURST);
	if (n == 0 && w->imp_rx[pi] == NULL)
		return 0;
	if (p->steer) {
		uint16_t keep = 0;
		for (uint16_t i = 0; i < n; i++) {
			unsigned o = steer_owner(w, pk[i]);
			if (o == 0) {
				pk[keep++] = pk[i];
			} else if (rte_ring_mp_enqueue(w->d->w[o]->steer_ring, pk[i]) == 0) {
				w->st.steered_out++;
			} else {
				w->st.drops[LFE_DROP_STEER_FULL]++;
				rte_pktmbuf_free(pk[i]);
			}
		}
		n = keep;
	}
	process_frames(w, pi, pk, n);
	return n;
}

static unsigned steer_in(struct lfe_worker *w)
{
	struct rte_mbuf *pk[LFE_BURST];
	unsigned n = rte_ring_sc_dequeue_burst(w->steer_ring, (void **)pk, LFE_BURST, NULL);

	/* Frames of one burst may come from different ports: group by port. */
	for (unsigned i = 0; i < n;) {
		unsigned j = i + 1;
		while (j < n && pk[j]->port == pk[i]->port)
			j++;
		int pi = -1;
		for (uint32_t k = 0; k < w->d->n_ports; k++)
			if (w->d->port[k].port_id == pk[i]->port)
				pi = (int)k;
		if (pi < 0)
			rte_pktmbuf_free_bulk(pk + i, j - i);
		else
			process_frames(w, (uint32_t)pi, pk + i, j - i);
		i = j;
	}
	w->st.steered_in += n;
	return n;
}

/* Worker 0 of a steered port sends what the other workers queued. */
static unsigned drain_tx_ring(struct lfe_worker *w, uint32_t pi)
{
	struct lfe_port *p = &w->d->port[pi];
	struct rte_mbuf *pk[LFE_TXBUF];
	unsigned n = rte_ring_sc_dequeue_burst(p->tx_ring, (void **)pk, LFE_TXBUF, NULL);

	if (n == 0)
		return 0;
	uint16_t sent = rte_eth_tx_burst(p->port_id, 0, pk, (uint16_t)n);
	if (sent < n) {
		w->st.drops[LFE_DROP_TX_FULL] += n - sent;
		rte_pktmbuf_free_bulk(pk + sent, n - sent);
	}
	return n;
}

static void publish(struct lfe_worker *w)
{
	const uint64_t *src = (const uint64_t *)&w->st;
	uint64_t *dst = (uint64_t *)&w->pub;

	/* The modules' own statistics, by their tables (wstats.h). */
	lfe_wstats_pull(&w->st, &lfe_wstats_tcp, lfe_tcp_stats(w->tcp));
	struct lfe_tcp_mem tm;
	lfe_tcp_mem(w->tcp, &tm);
	lfe_wstats_pull(&w->st, &lfe_wstats_tcp_mem, &tm);
	lfe_wstats_pull(&w->st, &lfe_wstats_tls, &w->sc.st);
	struct lfe_tlsoff_stats to;
	lfe_tlsoff_stats(w->d->tlsoff, w->idx, &to);
	lfe_wstats_pull(&w->st, &lfe_wstats_tlsoff, &to);
	w->st.verify_dropped_closed = lfe_verifier_dropped_closed(w->d->verifier, w->idx);
	struct lfe_dnpool_stats ds;
	lfe_dnpool_stats(w->dns, &ds);
	lfe_wstats_pull(&w->st, &lfe_wstats_dnpool, &ds);
	for (size_t i = 0; i < LFE_WSTATS_N; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	src = (const uint64_t *)w->bind_lat;
	dst = (uint64_t *)w->bind_lat_pub;
	for (size_t i = 0; i < LFE_LAT_HIST_N * LFE_LAT_PATHS; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

void lfe_lat_read(const struct lfe_worker *w, unsigned path, struct lfe_lat_hist *out)
{
	const uint64_t *src = (const uint64_t *)&w->bind_lat_pub[path < LFE_LAT_PATHS ? path : 0];
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < LFE_LAT_HIST_N; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void lfe_stats_read(const struct lfe_worker *w, struct lfe_wstats *out)
{
	const uint64_t *src = (const uint64_t *)&w->pub;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < LFE_WSTATS_N; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void lfe_stats_sum(const struct lfe_daemon *d, struct lfe_wstats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint32_t k = 0; k < d->n_workers; k++) {
		struct lfe_wstats s;
		lfe_stats_read(d->w[k], &s);
		for (size_t i = 0; i < LFE_WSTATS_N; i++)
			((uint64_t *)sum)[i] += ((uint64_t *)&s)[i];
	}
}

_Static_assert(LFE_MAX_WORKERS <= LFE_UNMAP_GUARD_SLOTS, "a guard slot per worker");

int lfe_worker_main(void *arg)
{
	struct lfe_worker *w = arg;
	struct lfe_daemon *d = w->d;
	bool stopping = false;
	uint64_t deadline = 0, prev_tsc = rte_rdtsc(), idle = 0;

	w->now_us = tsc_to_us(w, prev_tsc);
	w->last_renew_us = w->now_us;
	(void)lfe_unmap_guard_enter(w->idx, &w->guard_turn);   /* idx < its slots */
	/* Gratuitous ARP so peers (and switches) learn our MAC at once. */
	for (uint32_t pi = 0; pi < d->n_ports; pi++) {
		if (w->idx == 0) {
			send_arp(w, pi, 1, bcast, zero_mac, d->port[pi].addr);
			send_arp(w, pi, 2, bcast, d->port[pi].mac, d->port[pi].addr);
		}
	}
	for (;;) {
		uint64_t t0 = rte_rdtsc();
		unsigned work = 0;

		/* Between turns the worker holds nothing of a port's: a PMD's
		 * control thread may unmap what this turn no longer enters. */
		lfe_unmap_guard_turn(w->idx, &w->guard_turn);
		w->turn_tsc = t0;

		w->now_us = tsc_to_us(w, t0);
		w->sc.now_us = w->now_us;
		if (w->now_us - w->last_renew_us >= LFE_RENEW_US) {
			lfe_store_reader_renew(w->rd);
			w->last_renew_us = w->now_us;
		}
		for (uint32_t pi = 0; pi < d->n_ports; pi++)
			work += rx_port(w, pi);
		if (w->steer_ring)
			work += steer_in(w);
		if (w->arp_ring && !rte_ring_empty(w->arp_ring))
			work += arp_in(w);
		work += lfe_verifier_poll(d->verifier, w->idx, lfe_glue_bind_done, w);
		work += lfe_tlsoff_poll(d->tlsoff, w->idx, lfe_glue_handshake_done, w);
		lfe_tcp_timers(w->tcp, w->now_us);
		lfe_tcp_flush(w->tcp, w->now_us);
		if (w->neigh.n_pending)
			lfe_neigh_tick(&w->neigh, w->now_us, neigh_ask, neigh_drop, w);
		for (uint32_t pi = 0; pi < d->n_ports; pi++) {
			work += w->tx[pi].n;
			flush_port(w, pi);
			if (d->port[pi].steer && w->idx == 0)
				work += drain_tx_ring(w, pi);
		}
		uint64_t t1 = rte_rdtsc();
		w->st.total_cycles += t1 - prev_tsc;
		if (work)
			w->st.busy_cycles += t1 - t0;
		prev_tsc = t1;
		if (w->now_us - w->last_publish_us >= LFE_PUBLISH_US) {
			w->last_publish_us = w->now_us;
			publish(w);
			lfe_worker_ctl_poll(d->wctl, w);   /* snapshots, reload barrier */
		}
		if (!stopping && atomic_load_explicit(&d->stop, memory_order_relaxed)) {
			stopping = true;
			deadline = w->now_us + LFE_SHUTDOWN_US;
			lfe_tcp_shutdown(w->tcp, w->now_us);
		}
		if (stopping && (w->st.conns_active == 0 || w->now_us >= deadline))
			break;
		if (work) {
			idle = 0;
		} else if (d->cfg.idle_sleep_us && ++idle > 256) {
			/* Opt-in: shared CPUs (tests, demos) trade latency for the
			 * core; a dedicated deployment leaves idle_sleep_us at 0. */
			rte_delay_us_sleep(d->cfg.idle_sleep_us);
		}
	}
	lfe_tcp_flush(w->tcp, w->now_us);
	for (uint32_t pi = 0; pi < d->n_ports; pi++)
		flush_port(w, pi);
	publish(w);
	lfe_unmap_guard_leave(w->idx);
	atomic_fetch_add(&d->workers_done, 1);
	return 0;
}

/* ---- construction (not on the fast path) ---- */

/* Split PDUs up to LFE_PDU_SMALL (every bind, the searches of login flows)
 * are gathered in a buffer of pdu_small, which has one per session slot:
 * a session holds at most one partial PDU, so partial PDUs of other
 * connections can never starve it. Buffers go back when the PDU is whole
 * (or the connection closes) and are handed out last-freed first, so the
 * pages backing them are those of the most split requests ever in flight
 * at once (pdu_small_peak), not of every slot that ever split one: a
 * client that splits one request on each of a million held connections
 * costs one buffer, not 4 GiB. Larger PDUs share LFE_PDU_LARGE_MAX pool
 * buffers, each held at most pdu_timeout_ms (glue.c). */
static void *pdu_get(void *ctx, size_t size)
{
	struct lfe_worker *w = ctx;
	void *p;
	if (size <= LFE_PDU_SMALL) {
		uint32_t i;
		if (w->pdu_small_nfree)
			i = w->pdu_small_free[--w->pdu_small_nfree];
		else if (w->pdu_small_fresh < w->pdu_small_len / LFE_PDU_SMALL)
			i = w->pdu_small_fresh++;
		else
			goto pool;   /* more than one per slot: not the sessions' use */
		if (++w->st.pdu_small_held > w->st.pdu_small_peak)
			w->st.pdu_small_peak = w->st.pdu_small_held;
		return w->pdu_small + (size_t)i * LFE_PDU_SMALL;
	}
pool:
	if (w->pdu_pool == NULL || size > w->pdu_pool->elt_size || rte_mempool_get(w->pdu_pool, &p) != 0) {
		w->st.pdu_no_buffer++;
		return NULL;
	}
	return p;
}

/* The sessions' spare hook: more than one search buffer per connection
 * only while fewer than share_pressure_pct of the per-slot buffers are in
 * use (common/share.h's pressure level), so parked paged searches never
 * take the buffer a split request of another connection needs. */
static bool pdu_spare(void *ctx)
{
	const struct lfe_worker *w = ctx;
	uint64_t slots = w->pdu_small_len / LFE_PDU_SMALL;
	return w->st.pdu_small_held * 100 < slots * w->d->cfg.share_pressure_pct;
}

static void pdu_put(void *ctx, void *buf)
{
	struct lfe_worker *w = ctx;
	const uint8_t *b = buf;
	if (buf == NULL)
		return;
	if (b >= w->pdu_small && b < w->pdu_small + w->pdu_small_len) {
		w->pdu_small_free[w->pdu_small_nfree++] = (uint32_t)((size_t)(b - w->pdu_small) / LFE_PDU_SMALL);
		w->st.pdu_small_held--;
		return;
	}
	rte_mempool_put(w->pdu_pool, buf);
}

static void *imp_clone(void *ctx, void *item)
{
	struct lfe_worker *w = ctx;
	return rte_pktmbuf_copy(item, w->mbufs, 0, UINT32_MAX);
}

static void imp_free(void *ctx, void *item)
{
	(void)ctx;
	rte_pktmbuf_free(item);
}

/* lfe_worker_new's steps. Each fills part of w (zeroed; d, idx, lcore and
 * socket set) from w->d and its config and returns 0, or -1 with a message
 * in err; lfe_worker_new then frees what was made (lfe_worker_free). */

/* Mbuf pool, neighbours, the TLS record pool, the log, the store reader. */
static int worker_base(struct lfe_worker *w, char *err, size_t errlen)
{
	struct lfe_daemon *d = w->d;
	unsigned idx = w->idx;

	w->us_mult = (uint64_t)(((unsigned __int128)1000000u << 32) / d->tsc_hz);
	w->mbufs = d->mbuf_pool[w->socket < 0 ? 0 : w->socket];
	if (w->mbufs == NULL) {
		/* No port on this socket: use any pool (cross-socket, logged by main). */
		for (unsigned s = 0; s < RTE_MAX_NUMA_NODES && w->mbufs == NULL; s++)
			w->mbufs = d->mbuf_pool[s];
	}
	lfe_arp_cache_init(&w->arp, 300u * 1000000u);
	lfe_neigh_init(&w->neigh);
	w->sc.off = d->tlsoff;   /* main.c makes it before the workers */
	w->sc.worker = idx;
	/* Unfinished TLS records: a quarter of the connections at once. */
	if (lfe_stream_core_pool(&w->sc, RTE_MIN(RTE_MAX(d->cfg.max_conns_per_core / 4u, 16u), 4096u)) < 0) {
		snprintf(err, errlen, "worker %u: no memory for the TLS record pool", idx);
		return -1;
	}
	lfe_log_src_init(&w->log, &d->log, &w->log_ring);
	w->ip_id = (uint16_t)rte_rand();

	w->rd = lfe_store_reader_new(d->store);
	if (w->rd == NULL) {
		snprintf(err, errlen, "worker %u: cannot open a store reader", idx);
		return -1;
	}
	return 0;
}

/* The failed-bind throttle and the bind cache, when configured. */
static int worker_bind_state(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_config *c = &w->d->cfg;
	unsigned idx = w->idx;
	int socket = w->socket, rc;

	if (c->throttle.enabled) {
		struct lfe_throttle_params tp = lfe_worker_throttle_params(&c->throttle);
		size_t tsz = lfe_throttle_mem_size(&tp);
		void *tmem = tsz ? rte_malloc_socket("lfe_throttle", tsz, RTE_CACHE_LINE_SIZE, socket) : NULL;
		w->thr = tmem ? lfe_throttle_init(tmem, tsz, &tp, &rc) : NULL;
		if (w->thr == NULL) {
			rte_free(tmem);
			snprintf(err, errlen, "worker %u: throttle (%zu bytes): %s", idx, tsz,
				 tmem ? strerror(-rc) : "out of memory");
			return -1;
		}
	}
	if (c->bind_cache) {
		/* Whole pages of its own: its keys and tags kept out of core
		 * dumps (and swap, where RLIMIT_MEMLOCK allows). */
		size_t csz = RTE_ALIGN_CEIL(lfe_credcache_mem_size(c->bind_cache), 4096u);
		void *cmem = csz ? rte_malloc_socket("lfe_credcache", csz, 4096u, socket) : NULL;
		if (cmem)
			(void)lfe_tlsrec_key_protect(cmem, csz);
		w->cc = cmem ? lfe_credcache_init(cmem, csz, c->bind_cache, NULL, &rc) : NULL;
		if (w->cc == NULL) {
			rte_free(cmem);
			snprintf(err, errlen, "worker %u: bind cache (%zu bytes): %s", idx, csz,
				 cmem ? strerror(-rc) : "out of memory");
			return -1;
		}
		w->bind_peek = lfe_credcache_capacity(w->cc) >= LFE_BIND_PEEK_MIN_ENTRIES;
	}
	lfe_glue_auth_init(w);
	return 0;
}

/* PDU buffers: the small ones per slot, the large ones pooled (pdu_get). */
static int worker_pdu_bufs(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_config *c = &w->d->cfg;
	char name[RTE_MEMZONE_NAMESIZE];
	unsigned idx = w->idx;

	/* Plain anonymous memory, not DPDK's: pages are backed on first touch
	 * (by the worker's lcore, so on its NUMA node) and only as far as the
	 * most split PDUs ever gathered at once (pdu_get). */
	w->pdu_small_len = (size_t)c->max_conns_per_core * LFE_PDU_SMALL;
	w->pdu_small = lfe_tcp_map(w->pdu_small_len);
	w->pdu_small_free = lfe_tcp_map((size_t)c->max_conns_per_core * sizeof(uint32_t));
	if (w->pdu_small == NULL || w->pdu_small_free == NULL) {
		snprintf(err, errlen, "worker %u: PDU buffers (%u x %u bytes): out of memory", idx,
			 c->max_conns_per_core, LFE_PDU_SMALL);
		return -1;   /* lfe_worker_free unmaps what was mapped */
	}
	if (c->max_pdu > LFE_PDU_SMALL) {
		uint32_t npdu = RTE_MIN(c->max_conns_per_core, LFE_PDU_LARGE_MAX);
		snprintf(name, sizeof(name), "lfe_pdu_%u", idx);
		w->pdu_pool = rte_mempool_create(name, npdu, c->max_pdu, 0, 0, NULL, NULL, NULL, NULL, w->socket,
						 RTE_MEMPOOL_F_SP_PUT | RTE_MEMPOOL_F_SC_GET);
		if (w->pdu_pool == NULL) {
			snprintf(err, errlen, "worker %u: PDU pool (%u x %u bytes): %s", idx, npdu, c->max_pdu,
				 rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/* The session slots and their free stack, and the DN pool. */
static int worker_slots(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_config *c = &w->d->cfg;
	unsigned idx = w->idx;

	w->n_slots = c->max_conns_per_core;
	w->slot_size = RTE_ALIGN_CEIL(LFE_SLOT_HDR + lfe_session_size(), RTE_CACHE_LINE_SIZE);
	/* Anonymous memory backed on first touch (as pdu_small): a table for a
	 * million connections costs the slots in use, not 2 GiB of hugepages.
	 * The free stack hands out low slots first, so the touched ones stay
	 * dense; a segment reaches a slot at random, so transparent huge pages
	 * when the kernel allows (as the TCP table, tcp_table.c). */
	w->slot_mem = lfe_tcp_map_huge(w->slot_size * w->n_slots);
	w->slot_free = rte_malloc_socket("lfe_slot_free", sizeof(uint32_t) * w->n_slots, 0, w->socket);
	if (w->slot_mem == NULL || w->slot_free == NULL) {
		snprintf(err, errlen, "worker %u: session pool (%u x %zu bytes): out of memory", idx,
			 w->n_slots, w->slot_size);
		return -1;
	}
	for (uint32_t i = 0; i < w->n_slots; i++)
		w->slot_free[i] = w->n_slots - 1 - i;
	w->n_free = w->n_slots;

	/* Every slot can be bound with a DN of up to 127 bytes, mixed classes
	 * included (a partly used page per class), and every slow bind the
	 * verifier can hold has a maximal DN's chunk. */
	w->dns = lfe_dnpool_new((size_t)w->n_slots * LFE_DN_POOL_PER_CONN +
				((size_t)c->verify_queue + 7u) * LFE_DNPOOL_CHUNK_MAX);
	if (w->dns == NULL) {
		snprintf(err, errlen, "worker %u: DN pool for %u connections: out of memory", idx, w->n_slots);
		return -1;
	}
	return 0;
}

/* The sessions' configuration: limits, backend, buffers, search policy. */
static int worker_session_cfg(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_daemon *d = w->d;
	const struct lfe_config *c = &d->cfg;

	w->scfg.dns = w->dns;
	w->scfg.max_pdu = c->max_pdu;
	w->scfg.allow_anonymous = c->allow_anonymous;
	w->scfg.be = &lfe_glue_backend_ops;
	w->scfg.be_ctx = NULL;   /* each connection's own: its slot (glue.c, stream.h) */
	w->scfg.alloc.get = pdu_get;
	w->scfg.alloc.put = pdu_put;
	w->scfg.alloc.spare = pdu_spare;
	w->scfg.alloc.ctx = w;
	w->scfg.naming_context = d->naming[0] ? d->naming : NULL;
	w->scfg.vendor_name = "ldapfe";
	w->scfg.vendor_version = "0.1.0";
	w->scfg.starttls = d->tls != NULL;
	w->scfg.require_tls = c->require_tls;
	/* Search policy; config.c validated every value at start. */
	w->scfg.search.access = c->search_access;
	w->scfg.search.max_scope = c->search_scope;
	size_t sfx_len;
	const char *sfx = lfe_store_suffix(d->store, &sfx_len);
	if (c->search_base[0]) {
		w->scfg.search.base = c->search_base;
		w->scfg.search.base_len = strlen(c->search_base);
		if (!lfe_dn_is_under(c->search_base, w->scfg.search.base_len, sfx, sfx_len)) {
			snprintf(err, errlen, "[ldap] search_base: not at or under the store's suffix %s", sfx);
			return -1;
		}
	} else {
		w->scfg.search.base = sfx;
		w->scfg.search.base_len = sfx_len;
	}
	const char *why = NULL;
	if (lfe_search_attrs_parse(&w->scfg.search, c->search_attrs, &why) < 0) {
		snprintf(err, errlen, "[ldap] search_attrs: %s", why);
		return -1;
	}
	return 0;
}

/* The neighbour ring (ARP answers other workers pass on), the verifier's
 * completion ring, the steering ring (workers but 0, when a port steers in
 * software). */
static int worker_rings(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_daemon *d = w->d;
	char name[RTE_MEMZONE_NAMESIZE];
	unsigned idx = w->idx;

	snprintf(name, sizeof(name), "lfe_arp_%u", idx);
	w->arp_ring = rte_ring_create_elem(name, sizeof(struct arp_msg), 256, w->socket, RING_F_SC_DEQ);
	if (w->arp_ring == NULL) {
		snprintf(err, errlen, "worker %u: neighbour ring: %s", idx, rte_strerror(rte_errno));
		return -1;
	}
	bool steer = false;
	for (uint32_t pi = 0; pi < d->n_ports; pi++)
		steer |= d->port[pi].steer;
	if (steer && idx != 0) {
		snprintf(name, sizeof(name), "lfe_steer_%u", idx);
		w->steer_ring = rte_ring_create(name, 4096, w->socket, RING_F_SC_DEQ);
		if (w->steer_ring == NULL) {
			snprintf(err, errlen, "worker %u: steering ring: %s", idx, rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/* The TCP stack: limits from the config, MSS from the smallest MTU, the
 * LDAP and LDAPS ports listening. */
static int worker_tcp(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_daemon *d = w->d;
	const struct lfe_config *c = &d->cfg;
	struct lfe_tcp_cfg tc;
	int rc;

	lfe_tcp_cfg_default(&tc);
	tc.max_conns = c->max_conns_per_core;
	/* A quarter of the table, at least 16, never more than the table
	 * (the config allows a table of 1). */
	tc.max_half_open = RTE_MIN(RTE_MAX(c->max_conns_per_core / 4u, 16u), c->max_conns_per_core);
	uint16_t mtu = 9000;
	for (uint32_t pi = 0; pi < d->n_ports; pi++)
		mtu = RTE_MIN(mtu, d->port[pi].mtu);
	tc.mss = (uint16_t)(mtu - LFE_IPV4_HLEN - LFE_TCP_HLEN);
	tc.idle_timeout_us = c->idle_timeout_ms * 1000u;   /* 64-bit: no wrap */
	tc.max_conns_per_source = c->max_conns_per_source;
	tc.share_pressure_pct = c->share_pressure_pct;
	tc.syn_rate = c->tcp_syn_rate;
	tc.syn_rate_validated = c->tcp_syn_rate_validated;
	tc.validated_sources = c->tcp_validated_sources;
	tc.buf_pool = c->tcp_buffer_pool;
	tc.buf_stall_us = c->tcp_buffer_stall_ms * 1000u;
	tc.secret = rte_rand();
	tc.n_listen = c->n_ldap_ports;
	for (uint32_t i = 0; i < c->n_ldap_ports; i++) {
		tc.listen[i].addr = 0;   /* frames not for our addresses never reach the stack */
		tc.listen[i].port = c->ldap_ports[i];
	}
	for (uint32_t i = 0; i < c->n_ldaps_ports; i++) {   /* config.c: ≤ 8 in all */
		tc.listen[tc.n_listen].addr = 0;
		tc.listen[tc.n_listen++].port = c->ldaps_ports[i];
	}
	w->tcp = lfe_tcp_new(&tc, &lfe_glue_tcp_ops, w, &rc);
	if (w->tcp == NULL) {
		snprintf(err, errlen, "worker %u: TCP stack: %s", w->idx, strerror(-rc));
		return -1;
	}
	struct lfe_tcp_mem tm;
	lfe_tcp_mem(w->tcp, &tm);
	w->tcp_per_conn = tm.per_conn;
	return 0;
}

/* --impair: a stage each way per port (test only). */
static int worker_impair(struct lfe_worker *w, char *err, size_t errlen)
{
	const struct lfe_daemon *d = w->d;
	unsigned idx = w->idx;

	if (!d->impair.on)
		return 0;
	struct lfe_impair_ops io = { .clone = imp_clone, .free = imp_free, .ctx = w };
	for (uint32_t pi = 0; pi < d->n_ports; pi++) {
		struct lfe_impair_cfg ic = {
			.seed = d->impair.seed * 1000003u + idx * 16u + pi * 2u,
			.drop_ppm = d->impair.drop_ppm, .dup_ppm = d->impair.dup_ppm,
			.reorder_ppm = d->impair.reorder_ppm, .max_hold = 16, .hold_us = 2000,
		};
		w->imp_rx[pi] = lfe_impair_new(&ic, &io);
		ic.seed++;
		w->imp_tx[pi] = lfe_impair_new(&ic, &io);
		if (w->imp_rx[pi] == NULL || w->imp_tx[pi] == NULL) {
			snprintf(err, errlen, "worker %u: impairment stage refused its settings", idx);
			return -1;
		}
	}
	return 0;
}

/* Its tx buffers: its own queue, or under steering (other than worker 0)
 * the port's ring, which worker 0 drains; after worker_impair (imp_tx). */
static void worker_txbufs(struct lfe_worker *w)
{
	const struct lfe_daemon *d = w->d;
	for (uint32_t pi = 0; pi < d->n_ports; pi++) {
		const struct lfe_port *p = &d->port[pi];
		lfe_txbuf_init(&w->tx[pi], w->tx_m[pi], LFE_TXBUF, p->port_id, my_queue(p, w));
		w->tx[pi].ring = p->steer && w->idx != 0 ? p->tx_ring : NULL;
		w->tx[pi].imp = w->imp_tx[pi];
	}
}

struct lfe_worker *lfe_worker_new(struct lfe_daemon *d, unsigned idx, unsigned lcore, char *err,
				  size_t errlen)
{
	int socket = (int)rte_lcore_to_socket_id(lcore);
	struct lfe_worker *w = rte_zmalloc_socket("lfe_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, socket);

	if (w == NULL) {
		snprintf(err, errlen, "worker %u: out of memory", idx);
		return NULL;
	}
	w->d = d;
	w->idx = idx;
	w->lcore = lcore;
	w->socket = socket;
	if (worker_base(w, err, errlen) < 0 || worker_bind_state(w, err, errlen) < 0 ||
	    worker_pdu_bufs(w, err, errlen) < 0 || worker_slots(w, err, errlen) < 0 ||
	    worker_session_cfg(w, err, errlen) < 0 || worker_rings(w, err, errlen) < 0 ||
	    worker_tcp(w, err, errlen) < 0 || worker_impair(w, err, errlen) < 0) {
		lfe_worker_free(w, true);
		return NULL;
	}
	worker_txbufs(w);
	publish(w);
	return w;
}

void lfe_worker_free(struct lfe_worker *w, bool dpdk_mem)
{
	if (w == NULL)
		return;
	for (uint32_t pi = 0; pi < LFE_CFG_MAX_PORTS; pi++) {
		lfe_txbuf_discard(&w->tx[pi]);
		lfe_impair_free(w->imp_rx[pi]);
		lfe_impair_free(w->imp_tx[pi]);
	}
	/* lfe_tcp_free makes no callbacks: finish the sessions ourselves so
	 * reassembly buffers go back and secrets are wiped. */
	if (w->slot_mem) {
		/* Only slots on pages ever touched can hold a session: reading
		 * the untouched rest of a table for a million connections would
		 * fault it all in. mincore says which pages are backed. */
		size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = w->slot_size * w->n_slots;
		unsigned char *vec = malloc((len + pg - 1) / pg);
		if (vec && mincore(w->slot_mem, len, vec) != 0) {
			free(vec);
			vec = NULL;
		}
		for (uint32_t i = 0; i < w->n_slots; i++) {
			struct lfe_slot *sl = (struct lfe_slot *)(w->slot_mem + (size_t)i * w->slot_size);
			if (vec && !(vec[((size_t)i * w->slot_size) / pg] & 1))
				continue;
			if (sl->s) {   /* on_close clears it, so set means still open */
				lfe_stream_fini(&sl->st);
				lfe_session_fini(sl->s);
			}
		}
		free(vec);
	}
	lfe_stream_core_pool_free(&w->sc);
	lfe_tcp_free(w->tcp);
	lfe_dnpool_free(w->dns);   /* after the sessions gave their DNs back */
	w->dns = NULL;
	lfe_store_reader_free(w->rd);
	lfe_tcp_unmap(w->pdu_small, w->pdu_small_len);
	lfe_tcp_unmap(w->pdu_small_free, w->pdu_small_len / LFE_PDU_SMALL * sizeof(uint32_t));
	w->pdu_small = NULL;
	w->pdu_small_free = NULL;
	lfe_tcp_unmap(w->slot_mem, w->slot_size * w->n_slots);
	w->slot_mem = NULL;
	if (!dpdk_mem)
		return;
	lfe_neigh_flush(&w->neigh, neigh_free, NULL);
	if (w->steer_ring) {
		struct rte_mbuf *m;
		while (rte_ring_dequeue(w->steer_ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(w->steer_ring);
	}
	rte_free(w->slot_free);
	rte_free(w->thr);   /* laid out in rte_malloc memory by lfe_throttle_init */
	rte_free(w->cc);    /* the same, by lfe_credcache_init */
	rte_mempool_free(w->pdu_pool);
	rte_ring_free(w->arp_ring);
	rte_free(w);
}
