/* tests/dpdk/test_txbuf.c — dpdk/txbuf.c and dpdk/arp.c under a real EAL
 * (no huge pages, no device): a tx buffer sending to a small rte_ring
 * (the daemon's steering path) refuses what the ring cannot take — dropped
 * and counted, or kept first-out with `keep` (the generator's flood) — and
 * the ARP responder's reply, parsed back by net/, answers the request.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dpdk/arp.h"
#include "dpdk/txbuf.h"
#include "net/net.h"
#include "tests/check.h"

static struct rte_mempool *pool;

static struct rte_mbuf *frame(uint16_t len, uint8_t tag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return NULL;
	memset(rte_pktmbuf_mtod(m, uint8_t *), tag, len);
	m->data_len = len;
	m->pkt_len = len;
	return m;
}

static unsigned drain(struct rte_ring *r, uint8_t *tags)
{
	void *m = NULL;
	unsigned n = 0;
	while (rte_ring_dequeue(r, &m) == 0) {
		tags[n++] = *rte_pktmbuf_mtod((struct rte_mbuf *)m, uint8_t *);
		rte_pktmbuf_free(m);
	}
	return n;
}

/* cap 16 into a ring that holds 7: a full buffer flushes before the 17th
 * push; without keep the 9 refused are freed and counted. */
static void test_drop(void)
{
	struct rte_ring *r = rte_ring_create("t_drop", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_mbuf *slots[16];
	struct lfe_txbuf b;
	struct lfe_txbuf_stats st = { 0 };
	uint8_t tags[32];
	unsigned avail0 = rte_mempool_avail_count(pool);

	lfe_txbuf_init(&b, slots, 16, 0, 0);
	b.ring = r;
	for (uint8_t i = 0; i < 17; i++)
		lfe_txbuf_push(&b, frame(60, i), 0, &st);
	CHECK(b.n == 1);
	CHECK(st.frames == 7 && st.ringed == 7 && st.bytes == 7 * 60 && st.dropped == 9);
	CHECK(drain(r, tags) == 7);
	for (uint8_t i = 0; i < 7; i++)
		CHECK(tags[i] == i);
	lfe_txbuf_flush(&b, 0, &st);
	CHECK(b.n == 0 && st.frames == 8 && st.dropped == 9);
	CHECK(drain(r, tags) == 1 && tags[0] == 16);
	CHECK(rte_mempool_avail_count(pool) == avail0);   /* nothing leaked */
	rte_ring_free(r);
}

/* With keep 10 the 9 refused stay, first out at the next flush; over
 * keep they are dropped. */
static void test_keep(void)
{
	struct rte_ring *r = rte_ring_create("t_keep", 8, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_mbuf *slots[16];
	struct lfe_txbuf b;
	struct lfe_txbuf_stats st = { 0 };
	uint8_t tags[32];
	unsigned avail0 = rte_mempool_avail_count(pool);

	lfe_txbuf_init(&b, slots, 16, 0, 0);
	b.ring = r;
	b.keep = 10;
	for (uint8_t i = 0; i < 16; i++)
		lfe_txbuf_push(&b, frame(60, i), 0, &st);
	lfe_txbuf_flush(&b, 0, &st);
	CHECK(st.frames == 7 && st.dropped == 0 && b.n == 9);
	CHECK(drain(r, tags) == 7);
	lfe_txbuf_push(&b, frame(60, 100), 0, &st);
	lfe_txbuf_flush(&b, 0, &st);
	CHECK(st.frames == 14 && st.dropped == 0 && b.n == 3);
	CHECK(drain(r, tags) == 7);
	for (uint8_t i = 0; i < 7; i++)
		CHECK(tags[i] == 7 + i);   /* the kept ones first, in order */
	lfe_txbuf_flush(&b, 0, &st);
	CHECK(drain(r, tags) == 3 && tags[0] == 14 && tags[1] == 15 && tags[2] == 100);
	CHECK(b.n == 0 && st.frames == 17 && st.dropped == 0);
	/* More refused than keep: all of them dropped. */
	b.keep = 2;
	for (uint8_t i = 0; i < 16; i++)
		lfe_txbuf_push(&b, frame(60, i), 0, &st);
	lfe_txbuf_flush(&b, 0, &st);
	CHECK(b.n == 0 && st.frames == 24 && st.dropped == 9);
	CHECK(drain(r, tags) == 7);
	lfe_txbuf_discard(&b);
	CHECK(rte_mempool_avail_count(pool) == avail0);
	rte_ring_free(r);
}

static void test_arp(void)
{
	const uint8_t us[LFE_ETH_ALEN] = { 0x02, 0, 0, 0, 0, 1 }, them[LFE_ETH_ALEN] = { 0x02, 0, 0, 0, 0, 2 };
	const uint8_t bcast[LFE_ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, zero[LFE_ETH_ALEN] = { 0 };
	struct lfe_arp_pkt q = { .op = 1, .spa = 0x0a000002u, .tpa = 0x0a000001u };
	struct rte_mbuf *m = NULL;
	struct lfe_net_pkt pk;

	memcpy(q.sha, them, LFE_ETH_ALEN);
	memcpy(q.tha, zero, LFE_ETH_ALEN);
	CHECK(lfe_dpdk_arp_frame(pool, &q, bcast, &m) == 0 && m != NULL);
	if (m == NULL)
		return;
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	CHECK(memcmp(f, bcast, LFE_ETH_ALEN) == 0 && memcmp(f + 6, them, LFE_ETH_ALEN) == 0);
	CHECK(lfe_net_parse_rx(f, m->data_len, 0, &pk) == LFE_NET_ARP);
	CHECK(pk.arp.op == 1 && pk.arp.spa == q.spa && pk.arp.tpa == q.tpa);
	/* The responder answers in the same mbuf: to the asker, from us. */
	struct lfe_arp_pkt req = pk.arp;
	CHECK(lfe_dpdk_arp_answer(m, &req, us) == 0);
	CHECK(memcmp(f, them, LFE_ETH_ALEN) == 0 && memcmp(f + 6, us, LFE_ETH_ALEN) == 0);
	CHECK(lfe_net_parse_rx(f, m->data_len, 0, &pk) == LFE_NET_ARP);
	CHECK(pk.arp.op == 2 && pk.arp.spa == q.tpa && pk.arp.tpa == q.spa);
	CHECK(memcmp(pk.arp.sha, us, LFE_ETH_ALEN) == 0 && memcmp(pk.arp.tha, them, LFE_ETH_ALEN) == 0);
	rte_pktmbuf_free(m);
}

int main(void)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "--file-prefix=lfe-ttx%d", (int)getpid());
	char *eal[] = { "test_txbuf", "-l", "0", "--no-huge", "-m", "64", "--no-pci", "--no-shconf",
			"--no-telemetry", "--log-level=lib.eal:error", prefix, NULL };
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "SKIP: EAL init failed\n");
		return 77;
	}
	pool = rte_pktmbuf_pool_create("t_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "mbuf pool failed\n");
		return 1;
	}
	test_drop();
	test_keep();
	test_arp();
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return check_done();
}
